"""Counting words: provisional ids, counts and ReduceVocab pruning (WordCounter), and
encoding a corpus to vocabulary ids (idstream.encode_corpus)."""

import os

import numpy as np
import pytest

from w2v.config import TrainConfig
from w2v.corpus.counting import WordCounter
from w2v.corpus.idstream import encode_corpus
from w2v.corpus.vocab import Vocab
from w2v.errors import CorpusError


def live_counts(counter: WordCounter) -> dict[bytes, int]:
    return {counter.words[i]: int(counter.counts[i]) for i in counter.live_ids().tolist()}


def test_counter_counts_and_provisional_ids():
    counter = WordCounter()
    ids = counter.add([b"b", b"a", b"b", b"c"])
    assert [counter.words[i] for i in ids] == [b"b", b"a", b"b", b"c"]
    ids2 = counter.add([b"c", b"d"])
    assert [counter.words[i] for i in ids2] == [b"c", b"d"]
    assert ids2[0] == ids[3]
    assert live_counts(counter) == {b"a": 1, b"b": 2, b"c": 2, b"d": 1}
    assert counter.tokens == 6
    assert counter.add([]).tolist() == []


def test_counter_pruning_matches_reducevocab_by_hand():
    """prune_at=3. word2vec.c's ReduceVocab drops words with count <= min_reduce
    (starting at 1) and then increments min_reduce.

    add a a a b c  -> a3 b1 c1 (3 words, no pruning)
    add d b        -> a3 b2 c1 d1: 4 > 3, drop count <= 1 (c, d); min_reduce 2
    add e f c      -> a3 b2 e1 f1 c1 (c counts anew): drop count <= 2: b e f c; min_reduce 3
    add b b b b    -> a3 b4 (b counts anew)
    """
    counter = WordCounter(prune_at=3)
    counter.add(b"a a a b c".split())
    assert live_counts(counter) == {b"a": 3, b"b": 1, b"c": 1}
    assert counter.min_reduce == 1
    counter.add(b"d b".split())
    assert live_counts(counter) == {b"a": 3, b"b": 2}
    assert counter.min_reduce == 2
    counter.add(b"e f c".split())
    assert live_counts(counter) == {b"a": 3}
    assert counter.min_reduce == 3
    ids = counter.add(b"b b b b".split())
    assert live_counts(counter) == {b"a": 3, b"b": 4}
    assert counter.tokens == 14
    # a pruned word seen again has a new provisional id; the old one is gone
    assert len(counter.words) == 8
    assert counter.words[int(ids[0])] == b"b"
    assert sum(w is None for w in counter.words) == 6


def test_counter_pruning_word_by_word():
    """One token per add, as word2vec.c counts: prune whenever more than 2 words are held."""
    counter = WordCounter(prune_at=2)
    for token in b"x x y z x y y w".split():
        counter.add([token])
    # x x y -> {x2 y1}; z -> 3 words: drop <=1 (y, z), mr 2 -> {x2}; x -> {x3}; y y -> {x3 y2};
    # w -> 3 words: drop <=2 (y, w), mr 3 -> {x3}
    assert live_counts(counter) == {b"x": 3}
    assert counter.min_reduce == 3


def test_encode_corpus_vocabulary_and_ids(tmp_path):
    sentences = [["b", "a", "c", "a"], ["a", "rare", "b"], ["c", "a", "b"]]
    config = TrainConfig(min_count=2, batch_words=3, threads=1).resolved()
    encoded = encode_corpus(sentences, config, str(tmp_path))
    vocab, stream = encoded.vocab, encoded.stream
    try:
        assert encoded.corpus_words == 10
        assert vocab.words == [b"a", b"b", b"c"]
        assert vocab.counts.tolist() == [4, 3, 2]
        ids = np.concatenate([stream.batch(i) for i in range(len(stream))]).tolist()
        assert ids == [1, 0, 2, 0, -1, 0, 1, -1, 2, 0, 1, -1]  # the rare word is gone
        assert stream.words == 9
        assert stream.batch_words.sum() == 9
    finally:
        stream.close()


def test_encoding_leaves_no_file_in_the_work_folder(tmp_path):
    """The id files are nameless from the start: no exit (SIGKILL included) can leave
    them in $TMPDIR, neither the provisional ids while the vocabulary is chosen nor
    the id stream that training reads."""
    sentences = [["b", "a", "c", "a"], ["a", "rare", "b"], ["c", "a", "b"]] * 50
    config = TrainConfig(min_count=2, batch_words=30, threads=1).resolved()
    seen_while_choosing = []

    def choose(words, counts):
        seen_while_choosing.append(os.listdir(tmp_path))
        return Vocab.choose(words, counts, config.min_count, config.max_vocab)

    encoded = encode_corpus(sentences, config, str(tmp_path), choose)
    try:
        assert seen_while_choosing == [[]]
        assert os.listdir(tmp_path) == []
        ids = np.concatenate([encoded.stream.batch(i) for i in range(len(encoded.stream))])
        assert (ids >= 0).sum() == encoded.stream.words == 500 and (ids == -1).sum() == 150
    finally:
        encoded.stream.close()


def test_ties_keep_first_occurrence_order(tmp_path):
    words = [f"word{i:02d}" for i in range(40)]
    config = TrainConfig(min_count=1, threads=1).resolved()
    encoded = encode_corpus([words, words], config, str(tmp_path))
    encoded.stream.close()
    vocab = encoded.vocab
    assert vocab.words == [w.encode() for w in words]


def test_pruning_repeats_until_under_the_bound():
    """One ReduceVocab step may not be enough: it repeats, raising the floor each time."""
    counter = WordCounter(prune_at=1)
    counter.add([b"x"] * 3 + [b"y"] * 2 + [b"z", b"w"])
    assert list(counter.ids) == [b"x"]  # floor 1 drops z, w; floor 2 drops y
    assert counter.min_reduce == 3
    assert counter.counts[counter.ids[b"x"]] == 3


def reduce_vocab_reference(blocks: list[list[bytes]], prune_at: int):
    """word2vec.c's counting, one token at a time in plain Python, with its
    ReduceVocab run after each block: (provisional ids per block, live {word:
    count}, min_reduce, ids issued)."""
    ids: dict[bytes, int] = {}
    counts: dict[bytes, int] = {}
    issued, min_reduce, out = 0, 1, []
    for block in blocks:
        block_ids = []
        for word in block:
            if word not in ids:
                ids[word], counts[word], issued = issued, 0, issued + 1
            counts[word] += 1
            block_ids.append(ids[word])
        out.append(block_ids)
        while len(ids) > prune_at:
            for word in [w for w in ids if counts[w] <= min_reduce]:
                del ids[word], counts[word]
            min_reduce += 1
    return out, counts, min_reduce, issued


@pytest.mark.parametrize("prune_at", [1, 7, 50, 10_000])
def test_counter_matches_reducevocab_on_random_blocks(prune_at):
    rng = np.random.default_rng(prune_at)
    vocabulary = [b"w%d" % i for i in range(300)]
    lengths = rng.integers(0, 120, 40)
    blocks = [[vocabulary[i] for i in np.minimum(rng.zipf(1.3, n), 300) - 1] for n in lengths]
    expected_ids, expected_counts, min_reduce, issued = reduce_vocab_reference(blocks, prune_at)
    counter = WordCounter(prune_at)
    for block, expected in zip(blocks, expected_ids, strict=True):
        ids = counter.add(block)
        assert ids.dtype == np.int32 and ids.tolist() == expected
    assert live_counts(counter) == expected_counts
    assert list(counter.ids) == list(expected_counts)  # live ids ascending, as first seen
    assert counter.live_ids().tolist() == sorted(counter.ids.values())
    assert counter.min_reduce == min_reduce
    assert len(counter.words) == issued
    assert sum(word is not None for word in counter.words) == len(expected_counts)
    assert counter.tokens == sum(lengths)


def test_counter_grows_past_its_first_capacity():
    counter = WordCounter(prune_at=100_000)
    words = [b"%d" % i for i in range(70_000)]
    counter.add(words)
    ids = counter.add([*words[::-1], b"new"])
    assert len(counter.words) == 70_001 and len(counter.counts) >= 70_001
    assert ids[0] == 69_999 and ids[-1] == 70_000
    assert counter.counts[:70_000].tolist() == [2] * 70_000 and counter.counts[70_000] == 1


def test_counter_refuses_more_provisional_ids_than_int32_holds(monkeypatch):
    monkeypatch.setattr("w2v.corpus.provisional.MAX_PROVISIONAL_IDS", 4)
    counter = WordCounter(prune_at=2)
    counter.add(b"a b c".split())  # 3 ids, all pruned at once
    with pytest.raises(CorpusError, match="more than 4 word ids"):
        counter.add(b"d e".split())
