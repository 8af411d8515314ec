"""Tokenising, sentence cutting, sources (compressed, folders, stdin) and id streams."""

import bz2
import gzip
import lzma
import os
import subprocess
import sys

import numpy as np
import pytest
import zstandard
from reference import token_blocks

from w2v.corpus import (
    MAX_SENTENCE_TOKENS,
    SENTENCE_END,
    SentenceCutter,
    TokenBlock,
    expand_sources,
    read_chunks,
    sentence_blocks,
)
from w2v.counting import block_ids
from w2v.errors import CorpusError
from w2v.idstream import IdStreamWriter


def to_sentences(blocks) -> list[list[bytes]]:
    """Rebuild the sentences from token blocks (an end of -1 closes the sentence
    left open by the previous block)."""
    sentences, current = [], []
    for block in blocks:
        assert block.ends == sorted(block.ends)
        ends = set(block.ends)
        if -1 in ends:
            assert current, "an end before the block's first token must close a sentence"
            sentences.append(current)
            current = []
        for index, token in enumerate(block.tokens):
            current.append(token)
            if index in ends:
                sentences.append(current)
                current = []
    assert not current, "the last sentence was not ended"
    assert all(sentences), "empty sentence"
    return sentences


def sentences_of(path, block_bytes=1 << 20):
    return to_sentences(token_blocks([str(path)], block_bytes))


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_whitespace_and_newlines(tmp_path):
    path = write(tmp_path, "c.txt", b"  a\tb  c\r\nd\x0be\x0cf\n\n\n g \r\n\th")
    assert sentences_of(path) == [[b"a", b"b", b"c"], [b"d", b"e", b"f"], [b"g"], [b"h"]]


def test_empty_lines_and_empty_file(tmp_path):
    assert sentences_of(write(tmp_path, "e.txt", b"")) == []
    assert sentences_of(write(tmp_path, "n.txt", b"\n\n \t\n")) == []


def test_read_chunks_end_at_whitespace(tmp_path):
    data = b" ".join(b"word%d" % i for i in range(200)) + b"\nlast"
    path = write(tmp_path, "c.txt", data)
    chunks = list(read_chunks(str(path), 64))
    assert len(chunks) > 10
    assert b"".join(chunks) == data
    for chunk in chunks[:-1]:
        assert chunk[-1:] in (b" ", b"\n")
        assert len(chunk) <= 64 + 8


def test_token_longer_than_block_is_split_not_lost(tmp_path):
    """A run without whitespace longer than the block is split into tokens, no byte lost."""
    path = write(tmp_path, "c.txt", b"ab " + b"x" * 150 + b" cd\n")
    chunks = list(read_chunks(str(path), 64))
    assert b"".join(chunks).replace(b" ", b"") == b"ab" + b"x" * 150 + b"cd\n"
    sentences = sentences_of(path, 64)
    assert len(sentences) == 1
    assert b"".join(sentences[0]) == b"ab" + b"x" * 150 + b"cd"
    assert len(sentences[0]) >= 4


def test_token_longer_than_block_is_split_into_block_sized_tokens(tmp_path):
    path = write(tmp_path, "c.txt", b"ab " + b"x" * 150 + b" cd\n")
    tokens = [t for s in sentences_of(path, 64) for t in s]
    assert max(len(t) for t in tokens) <= 64


@pytest.mark.parametrize("block_bytes", [12, 64, 1000])  # >= the longest word
def test_small_blocks_give_the_same_tokens(tmp_path, block_bytes):
    rng = np.random.default_rng(0)
    words = [b"w%d" % i for i in range(50)] + [b"longerword", b"\xc3\xa9t\xc3\xa9", b"a"]
    lines = []
    for length in (300, 0, 1, 40, 2):  # one line much longer than the block
        lines.append(b" ".join(words[i] for i in rng.integers(0, len(words), length)))
    data = b"\n".join(lines) + b"\nend without newline"
    path = write(tmp_path, "c.txt", data)
    whole = sentences_of(path)
    assert [len(s) for s in whole] == [300, 1, 40, 2, 3]
    assert sentences_of(path, block_bytes) == whole


def test_space_before_newline_at_a_block_boundary(tmp_path):
    """A block that ends with the space just before a newline: the sentence end falls
    before the next block's first token."""
    path = write(tmp_path, "c.txt", b"aaa bbb \nccc ddd\n")
    for block_bytes in range(4, 20):  # >= the longest word
        assert sentences_of(path, block_bytes) == [[b"aaa", b"bbb"], [b"ccc", b"ddd"]], block_bytes


def test_sentence_cut_at_max_tokens(tmp_path):
    n = 2 * MAX_SENTENCE_TOKENS + 5000
    assert MAX_SENTENCE_TOKENS == 10_000
    words = [b"t%d" % i for i in range(n)]
    path = write(tmp_path, "c.txt", b" ".join(words) + b"\nx y\n")
    for block_bytes in (1 << 20, 4096):
        sentences = sentences_of(path, block_bytes)
        assert [len(s) for s in sentences] == [10_000, 10_000, 5000, 2]
        assert [t for s in sentences for t in s] == [*words, b"x", b"y"]


def test_sentence_exactly_max_tokens(tmp_path):
    words = [b"t%d" % i for i in range(MAX_SENTENCE_TOKENS)]
    path = write(tmp_path, "c.txt", b" ".join(words) + b"\nz\n")
    assert [len(s) for s in sentences_of(path, 5000)] == [10_000, 1]


def test_cut_across_several_sources(tmp_path):
    """Each source's end ends a sentence; the count of the cut restarts with each."""
    a = [b"a%d" % i for i in range(15_000)]
    b = [b"b%d" % i for i in range(12_000)]
    first = write(tmp_path, "1.txt", b" ".join(a))  # no final newline
    second = write(tmp_path, "2.txt", b" ".join(b) + b"\n")
    sentences = to_sentences(token_blocks([str(first), str(second)], 4096))
    assert [len(s) for s in sentences] == [10_000, 5000, 10_000, 2000]
    assert [t for s in sentences for t in s] == a + b


def test_sentence_cutter_small_max():
    cutter = SentenceCutter(max_tokens=3)
    first = cutter.block([[b"a", b"b", b"c", b"d", b"e", b"f", b"g"]], last_open=True)
    assert first.ends == [2, 5]
    second = cutter.block([[b"h", b"i"], [b"j"]], last_open=False)
    assert second.ends == [1, 2]
    assert to_sentences([first, second]) == [[b"a", b"b", b"c"], [b"d", b"e", b"f"], [b"g", b"h", b"i"], [b"j"]]


def test_sentence_blocks_from_python_sentences():
    long = [f"w{i}" for i in range(23_456)]
    blocks = list(sentence_blocks([["a", "b"], [], long, ["é", b"\xff"]], block_tokens=5000))
    sentences = to_sentences(blocks)
    assert [len(s) for s in sentences] == [2, 10_000, 10_000, 3456, 2]
    assert sentences[-1] == ["é".encode(), b"\xff"]
    assert [t for s in sentences[1:4] for t in s] == [w.encode() for w in long]
    with pytest.raises(CorpusError):
        list(sentence_blocks(["not a list of words"]))


def test_invalid_utf8_bytes_are_words(tmp_path):
    path = write(tmp_path, "c.txt", b"caf\xe9 \xff\xfe caf\xe9\n\xc3\x28 caf\xc3\xa9\n")
    assert sentences_of(path) == [[b"caf\xe9", b"\xff\xfe", b"caf\xe9"], [b"\xc3\x28", b"caf\xc3\xa9"]]


CONTENT = b"the quick brown fox\njumps over\tthe lazy dog\r\n\xff\xfe odd bytes\n" * 50


@pytest.mark.parametrize(
    "suffix,compress",
    [
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
        (".zst", lambda data: zstandard.ZstdCompressor().compress(data)),
    ],
)
def test_compressed_sources(tmp_path, suffix, compress):
    plain = write(tmp_path, "c.txt", CONTENT)
    packed = write(tmp_path, "c.txt" + suffix, compress(CONTENT))
    assert packed.read_bytes() != CONTENT
    assert sentences_of(packed, 100) == sentences_of(plain)
    assert len(sentences_of(plain)) == 150


def test_local_compressed_files_are_read_without_smart_open(tmp_path):
    """smart_open (0.15-0.2 s and 26 MB to import) is for URLs; the standard library reads local files."""
    packed = write(tmp_path, "c.txt.gz", gzip.compress(CONTENT))
    script = (
        "import sys\n"
        "from w2v.corpus import read_chunks\n"
        "assert b''.join(read_chunks(sys.argv[1])) == sys.stdin.buffer.read()\n"
        "assert 'smart_open' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(packed)], input=CONTENT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def test_folder_reads_files_in_sorted_order(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    (folder / "b.txt").write_bytes(b"b1 b2\n")
    (folder / "a.txt").write_bytes(b"a1 a2")  # no final newline: the file's end ends the sentence
    (folder / "sub" / "c.txt.gz").write_bytes(gzip.compress(b"c1\n"))
    (folder / ".skip.txt").write_bytes(b"hidden\n")
    (folder / ".hidden" / "d.txt").write_bytes(b"hidden\n")
    assert expand_sources([folder]) == [str(folder / "a.txt"), str(folder / "b.txt"), str(folder / "sub" / "c.txt.gz")]
    sentences = to_sentences(token_blocks(expand_sources([folder])))
    assert sentences == [[b"a1", b"a2"], [b"b1", b"b2"], [b"c1"]]


def test_stdin_reads_the_same_tokens(tmp_path):
    path = write(tmp_path, "c.txt", CONTENT)
    script = (
        "import sys\n"
        "from w2v.corpus import read_chunks\n"
        "for chunk in read_chunks('-', 64):\n"
        "    sys.stdout.buffer.write(chunk)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], input=CONTENT, capture_output=True, timeout=120, check=True)
    assert done.stdout == path.read_bytes()


def test_missing_sources(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        expand_sources([tmp_path / "missing.txt"])
    with pytest.raises(CorpusError, match=r"missing\.txt"):
        list(token_blocks([str(tmp_path / "missing.txt")]))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no files"):
        expand_sources([tmp_path / "empty"])
    with pytest.raises(CorpusError):
        expand_sources([])


def test_block_ids_inserts_sentence_ends():
    ids = np.array([5, 6, 7, 8], dtype=np.int32)
    got = block_ids(TokenBlock([b""] * 4, [-1, 1, 3]), ids)
    assert got.tolist() == [-1, 5, 6, -1, 7, 8, -1]
    assert block_ids(TokenBlock([b""] * 4, []), ids).tolist() == [5, 6, 7, 8]


def test_id_stream_batches_end_at_sentence_ends(tmp_path):
    rng = np.random.default_rng(1)
    pieces = []
    for length in rng.integers(1, 30, size=60):
        pieces.append(rng.integers(0, 100, size=length).astype(np.int32))
        pieces.append(np.array([SENTENCE_END], np.int32))
    ids = np.concatenate(pieces)
    writer = IdStreamWriter(str(tmp_path), batch_size=50)
    for start in range(0, len(ids), 37):  # written in blocks that split sentences
        writer.write(ids[start : start + 37])
    stream = writer.finish()
    try:
        batches = [stream.batch(i) for i in range(len(stream))]
        assert np.array_equal(np.concatenate(batches), ids)
        for batch, words in zip(batches, stream.batch_words, strict=True):
            assert batch[-1] == SENTENCE_END
            assert (batch >= 0).sum() == words
            # a batch ends at the first sentence end at or after its 50th id
            assert len(batch) >= 50 or batch is batches[-1]
            assert SENTENCE_END not in batch[49:-1]
        assert stream.words == (ids >= 0).sum()
        assert stream.batch_starts[0] == 0 and stream.batch_starts[-1] == len(ids)
        buffer = np.full(stream.longest, 7, dtype=np.int32)  # a worker reads every batch into one buffer
        assert stream.longest == max(len(b) for b in batches)
        for index, expected in enumerate(batches):
            batch = stream.batch(index, buffer)
            assert np.shares_memory(batch, buffer) and np.array_equal(batch, expected)
        os.ftruncate(stream.fileno(), 4 * (len(ids) - 1))  # the file cut short: an error, not stale ids
        with pytest.raises(CorpusError, match="cut short"):
            stream.batch(len(stream) - 1, buffer)
    finally:
        stream.close()
