"""ChunkCounter (compiled counting of raw bytes) against the Python path:
read_chunks, SentenceCutter, WordCounter and block_ids give the same ids, counts and words."""

import numpy as np
import pytest

from w2v.config import TrainConfig
from w2v.corpus.chunkcounter import FIRST_TABLE, ChunkCounter
from w2v.corpus.counting import WordCounter, block_ids
from w2v.corpus.idstream import encode_corpus
from w2v.corpus.sources import BLOCK_BYTES, MAX_WORD_BYTES, SentenceCutter, line_words, read_chunks
from w2v.errors import CorpusError

WHITESPACE = [b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"  ", b"\n\n", b" \n "]


def python_read(sources, prune_at, max_tokens, block_bytes, max_word):
    """The Python path: chunks split by line_words (words of at most ``max_word`` bytes), a
    cutter of ``max_tokens``, WordCounter, block_ids."""
    counter, cutter, out = WordCounter(prune_at), SentenceCutter(max_tokens), []
    for source in sources:
        for chunk in read_chunks(source, block_bytes, max_word):
            lines = [line_words(line, max_word) for line in chunk.split(b"\n")]
            block = cutter.block(lines, last_open=not chunk.endswith(b"\n"))
            out.append(block_ids(block, counter.add(block.tokens)))
        if cutter.run:
            out.append(block_ids(cutter.block([[]], last_open=False), counter.add([])))
    return counter, out


def random_corpus(rng, tokens: int, distinct: int) -> bytes:
    """Zipf-distributed words of random bytes (not whitespace; invalid UTF-8 too), between random whitespace."""
    alphabet = np.array([b for b in range(256) if b not in (9, 10, 11, 12, 13, 32)], dtype=np.uint8)
    words = [alphabet[rng.integers(0, len(alphabet), rng.integers(1, 12))].tobytes() for _ in range(distinct)]
    picks = np.minimum(rng.zipf(1.2, tokens), distinct) - 1
    gaps = rng.integers(0, len(WHITESPACE), tokens)
    return b"".join(words[p] + WHITESPACE[g] for p, g in zip(picks, gaps, strict=True))


def check_same(
    tmp_path,
    contents: list[bytes],
    prune_at=10_000_000,
    max_tokens=10_000,
    block_bytes=BLOCK_BYTES,
    max_word=MAX_WORD_BYTES,
):
    sources = []
    for i, content in enumerate(contents):
        path = tmp_path / f"part{i}.txt"
        path.write_bytes(content)
        sources.append(str(path))
    counter = ChunkCounter(prune_at, max_tokens, max_word)
    got = [ids.copy() for ids in counter.read(sources, block_bytes)]
    expected_counter, expected = python_read(sources, prune_at, max_tokens, block_bytes, max_word)
    assert all(ids.dtype == np.int32 for ids in got)
    np.testing.assert_array_equal(np.concatenate([*got, []]), np.concatenate([*expected, []]))
    live = counter.live_ids()
    np.testing.assert_array_equal(live, expected_counter.live_ids())
    words = list(counter.words_of(live))
    assert words == list(expected_counter.words_of(live))
    absent = b"\x00never seen"  # a random word is this one with odds of 1 in 250**11
    for either in (counter, expected_counter):  # each live word found under its id, the absent one not at all
        np.testing.assert_array_equal(either.find([*words, absent]), [*live.tolist(), -1])
    np.testing.assert_array_equal(counter.counts[: counter.issued], expected_counter.counts[: expected_counter.issued])
    assert (counter.issued, counter.held, counter.tokens, counter.min_reduce) == (
        expected_counter.issued,
        expected_counter.held,
        expected_counter.tokens,
        expected_counter.min_reduce,
    )
    return counter


@pytest.mark.parametrize("seed", range(4))
def test_same_ids_as_the_python_path_on_random_bytes(tmp_path, seed):
    rng = np.random.default_rng(seed)
    contents = [random_corpus(rng, int(rng.integers(0, 3000)), 400) for _ in range(3)]
    counter = check_same(
        tmp_path,
        contents,
        max_tokens=int(rng.integers(1, 60)),
        block_bytes=int(rng.integers(8, 400)),
        max_word=int(rng.integers(1, 14)),  # random words are 1 to 11 bytes: some are cut
    )
    assert counter.tokens > 1000


@pytest.mark.parametrize("prune_at", [1, 7, 50])
def test_same_pruning_as_the_python_path(tmp_path, prune_at):
    """word2vec.c's ReduceVocab after each chunk: the same words dropped, the same ids issued again."""
    rng = np.random.default_rng(prune_at)
    counter = check_same(tmp_path, [random_corpus(rng, 4000, 300)], prune_at=prune_at, block_bytes=200)
    assert counter.min_reduce > 1 and counter.issued > counter.held


def test_lines_cuts_and_sources_ends(tmp_path):
    """Empty lines end nothing; a sentence is cut every max_tokens; a source's end ends a
    sentence, also where its last line has no newline; a file of whitespace has no words."""
    contents = [b"a b c\n\n\nd e f g h\n  \n", b"i j", b" \n\t", b"k l m n o p q r s t u v w x y z", b""]
    counter = check_same(tmp_path, contents, max_tokens=4, block_bytes=5)
    assert counter.tokens == 26


@pytest.mark.parametrize("max_word", [1, 7, 16, 40, 60])
def test_a_token_longer_than_a_chunk(tmp_path, max_word):
    """Runs longer than the chunk and than the longest word, inside a chunk and across chunks."""
    content = b"ab " + b"x" * 50 + b" cd\n" + b"z" * 20 + b"\n" + b"y" * 33
    counter = check_same(tmp_path, [content, b"w" * 70 + b" " + b"x" * 55], block_bytes=16, max_word=max_word)
    assert counter.tokens == len(content.split()) + 2
    assert sorted(counter.words_of(counter.live_ids()))[-1] == b"z" * min(20, max_word)


def test_the_table_grows_within_a_chunk(tmp_path):
    """More new words in one chunk than half the first table: the scan stops, the table
    doubles, the scan goes on from the word that did not fit."""
    distinct = FIRST_TABLE  # twice what the first table takes
    first, again = (b" ".join(b"%x" % i for i in range(0, distinct, step)) for step in (1, 3))
    content = first + b"\n" + again
    counter = check_same(tmp_path, [content])
    assert counter.issued == distinct and len(counter.table) >= 2 * distinct
    assert counter.counts[:6].tolist() == [2, 1, 1, 2, 1, 1]


def test_pruning_bounds_the_store_by_the_words_held(tmp_path):
    """Pruning moves the words kept to the front of the store: after 200,000 distinct words
    with prune_at 1,000, read in chunks of 4 KiB (at most 2,048 new words each), the store
    (hashes, starts, ids, bytes) has not grown past its first size; only the counts grow
    with the ids issued. The words held are still found under their ids."""
    path = tmp_path / "c.txt"
    path.write_bytes(b" ".join(b"the %x" % i for i in range(200_000)))  # "the": id 0, never pruned
    counter = ChunkCounter(prune_at=1000)
    for _ in counter.read([str(path)], block_bytes=4096):
        pass
    assert counter.issued == 200_001 and counter.held <= 1000 and counter.counts[0] == 200_000
    sizes = [len(counter.hashes), len(counter.starts), len(counter.ids), len(counter.arena)]
    assert sizes == [FIRST_TABLE, FIRST_TABLE + 1, FIRST_TABLE, 1 << 20]
    live = counter.live_ids()
    assert live[0] == 0 and counter.words_of(live)[0] == b"the"
    assert list(counter.words_of(live[-2:])) == [b"%x" % i for i in range(199_998, 200_000)]
    np.testing.assert_array_equal(counter.find([b"the", b"30d3f", b"0"]), [0, live[-1], -1])


def test_refuses_more_provisional_ids_than_int32_holds(monkeypatch):
    monkeypatch.setattr("w2v.corpus.provisional.MAX_PROVISIONAL_IDS", 10)
    counter = ChunkCounter(prune_at=2)
    counter.add_chunk(b"a b c ")
    with pytest.raises(CorpusError, match="more than 10 word ids"):
        counter.add_chunk(b"d e f g h i j k ")


def test_a_file_and_its_sentences_encode_alike(tmp_path):
    """encode_corpus on a path (ChunkCounter) and on the same sentences (WordCounter)."""
    lines = [" ".join(f"w{(i * j) % 17}" for j in range(i % 9)) for i in range(300)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n")
    config = TrainConfig(min_count=2, batch_words=100).resolved()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    from_file = encode_corpus(str(path), config, str(tmp_path / "a"))
    from_sentences = encode_corpus([line.split() for line in lines], config, str(tmp_path / "b"))
    assert from_file.vocab.words == from_sentences.vocab.words
    np.testing.assert_array_equal(from_file.vocab.counts, from_sentences.vocab.counts)
    assert (from_file.digest, from_file.corpus_words) == (from_sentences.digest, from_sentences.corpus_words)
    from_file.stream.close()
    from_sentences.stream.close()
