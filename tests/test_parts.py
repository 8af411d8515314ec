"""Corpus parts, merged counts and data-parallel rounds: the pieces a cluster runs, on one machine."""

import functools
import gzip
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import w2v
from w2v.cluster import rounds
from w2v.cluster.rounds import (
    Ledger,
    Replica,
    Rows,
    combine,
    combine_rule,
    momentum_weights,
    replica_config,
    round_words,
)
from w2v.config import TrainConfig
from w2v.corpus.counting import CountTable, count_table
from w2v.corpus.parts import Part, even_bounds, groups_of, holds_words, split_sources
from w2v.corpus.vocab import Vocab
from w2v.engine.weights import Model

WORDS = st.sampled_from([b"a", b"bb", b"ccc", b"\xc3\xa9t\xc3\xa9", b"x" * 40])
SPACES = st.sampled_from([b" ", b"\n", b"\t", b"  ", b" \n"])
TEXT = st.lists(st.tuples(WORDS, SPACES), max_size=60).map(lambda pairs: b"".join(w + s for w, s in pairs))


def read_part(part: Part, piece: int) -> bytes:
    """All of ``part``, read ``piece`` bytes at a time."""
    with part.open_bytes() as stream:
        return b"".join(iter(lambda: stream.read(piece), b""))


@settings(max_examples=200, deadline=None)
@given(TEXT, st.booleans(), st.integers(1, 12), st.integers(1, 9), st.booleans())
def test_parts_hold_every_word_once_and_whole(tmp_path_factory, text, strip, parts, piece, lines):
    data = text.strip() if strip else text
    path = tmp_path_factory.mktemp("parts") / "corpus.txt"
    path.write_bytes(data)
    cut = split_sources([str(path)], parts, lines)
    read = [read_part(part, piece) for part in cut]
    assert b"".join(read) == data
    assert [word for chunk in read for word in chunk.split()] == data.split()
    assert [holds_words(part) for part in cut] == [bool(chunk.split()) for chunk in read]
    for at, chunk in enumerate(read):  # a part ends just after a cut, or at the file's end: no word is split
        ends = chunk[-1:] == b"\n" if lines else chunk[-1:].isspace()  # and with lines, no line either
        assert not chunk or ends or not any(read[at + 1 :])


def test_even_bounds_and_how_sources_are_cut(tmp_path):
    assert even_bounds(10, 3).tolist() == [0, 3, 6, 10]
    big, small, packed = tmp_path / "big.txt", tmp_path / "small.txt", tmp_path / "packed.txt.gz"
    big.write_bytes(b"word " * 3000)
    small.write_bytes(b"word " * 1000)
    packed.write_bytes(gzip.compress(b"word " * 1000))
    sources = [str(big), str(small), str(packed)]
    assert split_sources(sources, 1) == [Part(s) for s in sources]  # one part: every file whole
    cut = split_sources(sources, 5)
    assert [part.source for part in cut] == [str(big)] * 3 + [str(small), str(packed)]  # in corpus order
    assert cut[-1] == Part(str(packed))  # a compressed file is read from its start: one part
    assert read_part(cut[-1], 100) == b"word " * 1000
    assert holds_words(cut[-1])
    uneven = split_sources([str(big), str(small)], 2)  # no more parts than files, but one file is 3/4 of the bytes
    assert uneven == [Part(str(big), 0, 7500), Part(str(big), 7500, 15000), Part(str(small))]
    assert groups_of(uneven, 2) == [uneven[:1], uneven[1:]]  # 7,500 bytes and 12,500: a whole file by its size
    packed.write_bytes(gzip.compress(b" \n\t" * 1000))
    assert not holds_words(Part(str(packed)))


@pytest.mark.slow
def test_counts_of_parts_merge_to_the_whole_corpus(wiki6):
    whole = count_table([str(wiki6)])
    tables = [count_table([part]) for part in split_sources([str(wiki6)], 7)]
    in_order = functools.reduce(lambda a, b: a.merged(b, 10**7), tables)
    as_tree = tables
    while len(as_tree) > 1:  # pairwise, level by level, as the cluster merges them
        as_tree = [
            functools.reduce(lambda a, b: a.merged(b, 10**7), as_tree[i : i + 2]) for i in range(0, len(as_tree), 2)
        ]
    for merged in (in_order, as_tree[0]):
        assert merged.words == whole.words  # same words, in the same (first-sight) order
        np.testing.assert_array_equal(merged.counts, whole.counts)
        assert merged.tokens == whole.tokens and merged.min_reduce == 1


def test_merging_prunes_by_the_rule_of_one_machine():
    first = CountTable([b"a", b"b", b"c"], np.array([5, 1, 2]), 8, 1)
    later = CountTable([b"d", b"b", b"e"], np.array([1, 1, 3]), 5, 1)
    merged = first.merged(later, 10)
    assert merged.words == [b"a", b"b", b"c", b"d", b"e"] and merged.counts.tolist() == [5, 2, 2, 1, 3]
    pruned = first.merged(later, 3)  # 5 words > 3: drop counts <= 1, then <= 2
    assert pruned.words == [b"a", b"e"] and pruned.counts.tolist() == [5, 3] and pruned.min_reduce == 3
    assert pruned.tokens == 13


def test_combining_rows_by_each_rule():
    start = np.zeros((4, 8), dtype=np.float32)
    one = {"syn0": Rows(np.array([0, 1]), np.repeat(np.array([[2], [4]], dtype=np.float32), 8, axis=1))}
    two = {"syn0": Rows(np.array([1, 2]), np.repeat(np.array([[2], [6]], dtype=np.float32), 8, axis=1))}
    # adaptive, row 1: changes 4 and 2 along one direction, scaled by (16 + 4) / 36 = 5/9: 10/3
    expected = {"mean": [1, 3, 3, 0], "sum": [2, 6, 6, 0], "adaptive": [2, 10 / 3, 6, 0]}
    for how, column in expected.items():
        weights = {"syn0": start.copy()}
        update = combine(weights, [one, two], 2, how)
        np.testing.assert_allclose(weights["syn0"][:, 0], column, rtol=1e-6)
        assert update["syn0"].rows.tolist() == [0, 1, 2]  # the rows that moved, with their new values
        np.testing.assert_array_equal(update["syn0"].values, weights["syn0"][:3])


def test_block_momentum_applies_a_lone_change_in_full_over_the_rounds():
    weights = {"syn0": np.zeros((3, 4), dtype=np.float32)}
    momentum = {"syn0": np.zeros((3, 4), dtype=np.float32)}
    alone = {"syn0": Rows(np.array([1]), np.ones((1, 4), dtype=np.float32))}
    update = combine(weights, [alone], 4, "momentum", momentum)  # N = 4: g = 1/4, eta = 3/4
    np.testing.assert_allclose(weights["syn0"][1], 0.25 + 0.75 * 0.25)
    assert update["syn0"].rows.tolist() == [1]
    for _ in range(100):
        update = combine(weights, [], 4, "momentum", momentum)  # moved by its momentum alone
        assert update["syn0"].rows.tolist() == [1]
    np.testing.assert_allclose(weights["syn0"], [[0] * 4, [1] * 4, [0] * 4], atol=1e-6)  # sum's row, in the end


def test_block_momentum_settles_where_every_replica_pulls_a_row():
    """Four replicas that each take a row all the way to 1 (a frequent word's row, trained
    to where the round's text pulls it): their sum overshoots by N and diverges, block
    momentum lands on 1 in the second round and stays."""
    for how, row_after in (("sum", [4, -8, 28]), ("momentum", [1.75, 1, 1])):
        weights = {"syn0": np.zeros((1, 2), dtype=np.float32)}
        momentum = {"syn0": np.zeros((1, 2), dtype=np.float32)} if how == "momentum" else None
        pulled = {"syn0": Rows(np.array([0]), np.ones((1, 2), dtype=np.float32))}
        for expected in row_after:
            combine(weights, [pulled] * 4, 4, how, momentum)
            np.testing.assert_allclose(weights["syn0"][0], expected)


@pytest.mark.parametrize(
    ("replicas", "sync_words", "rule"),
    [(1, 10**7, "sum"), (2, 50_000, "sum"), (2, 100_000, "sum"), (2, 100_001, "momentum"), (3, 20_000, "mixed")],
)
def test_auto_adds_two_replicas_changes_only_in_short_rounds(replicas, sync_words, rule):
    assert combine_rule("auto", replicas, sync_words) == rule
    assert combine_rule("mean", replicas, sync_words) == "mean"  # a rule named is the rule applied


@pytest.mark.parametrize(("replicas", "words"), [(1, 10_000_000), (2, 50_000), (4, 16_666), (16, 3_333), (10**6, 1)])
def test_default_rounds_keep_what_a_replica_misses_at_50000_words(replicas, words):
    """By default a replica trains 50,000 / (N - 1) words a round, so that it misses
    about 50,000 of the others' words, and one replica, whose rounds change nothing,
    10,000,000; a --sync-words given is the round whatever N.
    The ledger rounds and chooses ``auto``'s rule by the words it resolves."""
    assert round_words(None, replicas) == words
    assert round_words(7_000, replicas) == 7_000
    weights = {"syn0": np.zeros((3, 2), dtype=np.float32)}
    ledger = Ledger(np.ones((replicas, 2), dtype=np.int64), TrainConfig().resolved(), weights)
    assert ledger.sync_words == words and ledger.rule == combine_rule("auto", replicas, words)
    long_rounds = Ledger(np.ones((2, 2), dtype=np.int64), TrainConfig(sync_words=200_000).resolved(), weights)
    assert long_rounds.sync_words == 200_000 and long_rounds.rule == "momentum"


def test_replicas_batches_are_no_longer_than_their_rounds():
    """A round ends at a batch boundary, so a replica's batches hold at most its
    round's words; one replica, whose rounds change nothing, keeps its batches."""
    config = TrainConfig().resolved()
    assert replica_config(config, 1) is config
    assert replica_config(config, 2).batch_words == 10_000  # rounds of 50,000 words
    assert replica_config(config, 16).batch_words == 3_333
    assert replica_config(TrainConfig(sync_words=5_000).resolved(), 2).batch_words == 5_000
    assert replica_config(TrainConfig(batch_words=500).resolved(), 16).batch_words == 500


def test_rounds_shorter_than_a_batch_are_batches_of_exactly_their_words(tmp_path):
    """Rounds shorter than --batch-words: a replica's batches hold exactly a round's
    words, cut out of the sentences; rounds of a batch or more, or one replica: batches
    of whole sentences, as in one process."""
    corpus = tmp_path / "lines.txt"
    rng = np.random.default_rng(1)
    corpus.write_text("".join(" ".join(f"w{i}" for i in rng.integers(0, 50, size=7)) + "\n" for _ in range(3_000)))
    table = count_table([str(corpus)])
    vocab = Vocab.choose(table.words, table.counts, 1, None)
    config = TrainConfig(min_count=1, batch_words=1_000).resolved()
    model = Model.build(vocab, config)
    weights = (model.syn0, model.tables.syn1, model.tables.syn1neg)

    def batch_words(sync_words: int, replicas: int) -> list[int]:
        settings = TrainConfig(min_count=1, batch_words=1_000, sync_words=sync_words).resolved()
        replica = Replica(split_sources([str(corpus)], 1), vocab, settings, weights, replicas=replicas)
        words = replica.stream.batch_words.tolist()
        replica.close()
        return words

    assert batch_words(500, 2) == [500] * 42  # 21,000 words, lines of 7 cut
    assert batch_words(600, 2) == [600] * 35
    whole = batch_words(2_000, 2)
    assert whole == batch_words(500, 1) and all(words % 7 == 0 for words in whole) and sum(whole) == 21_000


def test_combining_one_replica_gives_its_weights_bit_for_bit():
    rng = np.random.default_rng(1)
    start = rng.normal(size=(50, 8)).astype(np.float32) * np.float32(1e-6)
    moved = start + rng.normal(size=start.shape).astype(np.float32)
    for how in ("mean", "sum", "adaptive", "momentum", "mixed"):
        weights = {"syn0": start.copy(), "syn1neg": start.copy()}
        momentum = {name: np.zeros_like(start) for name in momentum_weights(how, weights)}
        reports = [{name: Rows.of(moved, np.arange(50)) for name in weights}]
        update = combine(weights, reports, 1, how, momentum or None)
        for name in weights:
            assert weights[name].tobytes() == moved.tobytes(), (how, name)
            assert update[name].rows is None  # every row moved: sent whole, without indices


@pytest.mark.parametrize("how", ["mean", "sum", "adaptive", "momentum", "mixed"])
def test_combining_in_blocks_of_rows_changes_nothing(monkeypatch, how):
    """Three replicas' reports of random rows (some sent whole), combined twice: the
    weights, momentum and update are the same bytes whatever ``COMBINE_ROWS`` is."""
    rng = np.random.default_rng(2)
    start = rng.normal(size=(300, 8)).astype(np.float32)
    reports = []
    for k in range(3):
        moved = start + rng.normal(size=start.shape).astype(np.float32)
        rows = np.arange(300) if k == 2 else np.flatnonzero(rng.random(300) < 0.3)
        reports.append({name: Rows.of(moved, rows) for name in ("syn0", "syn1neg")})
    results = []
    for block in (1 << 16, 64, 7, 1):
        monkeypatch.setattr(rounds, "COMBINE_ROWS", block)
        weights = {"syn0": start.copy(), "syn1neg": start.copy()}
        momentum = {name: np.zeros_like(start) for name in momentum_weights(how, weights)}
        updates = [combine(weights, reports[:k], 4, how, momentum or None) for k in (3, 2)]
        results.append([m.tobytes() for m in (*weights.values(), *momentum.values())]
                       + [rows.values.tobytes() for update in updates for rows in update.values()])  # fmt: skip
    assert all(result == results[0] for result in results[1:])


def test_mixed_combines_input_vectors_as_adaptive_and_output_vectors_with_momentum():
    """Four replicas pull row 0 of both matrices to 1 and move row 1 in orthogonal
    directions: the input vectors (syn0) are combined as ``adaptive`` combines them
    (the agreed row averaged, the independent changes added), the output vectors
    (syn1neg) as ``momentum`` does, bit for bit, round after round."""
    start = np.zeros((2, 4), dtype=np.float32)
    reports = []
    for k in range(4):
        moved = start.copy()
        moved[0], moved[1, k] = 1, 0.5
        reports.append({"syn0": Rows.of(moved, np.arange(2)), "syn1neg": Rows.of(moved, np.arange(2))})
    mixed = {"syn0": start.copy(), "syn1neg": start.copy()}
    mixed_momentum = {"syn1neg": np.zeros_like(start)}
    alone = {"adaptive": {"syn0": start.copy()}, "momentum": {"syn1neg": start.copy()}}
    alone_momentum = {"syn1neg": np.zeros_like(start)}
    for _ in range(3):
        combine(mixed, reports, 4, "mixed", mixed_momentum)
        combine(alone["adaptive"], [{"syn0": r["syn0"]} for r in reports], 4, "adaptive")
        combine(alone["momentum"], [{"syn1neg": r["syn1neg"]} for r in reports], 4, "momentum", alone_momentum)
    assert mixed["syn0"].tobytes() == alone["adaptive"]["syn0"].tobytes()
    assert mixed["syn1neg"].tobytes() == alone["momentum"]["syn1neg"].tobytes()
    np.testing.assert_allclose(mixed["syn0"], [[1] * 4, [0.5] * 4])  # averaged, added
    with pytest.raises(ValueError, match="needs the rows' momentum"):
        combine(mixed, reports, 4, "mixed", {"syn0": np.zeros_like(start), "syn1neg": np.zeros_like(start)})


@pytest.mark.slow
@pytest.mark.parametrize("loss", [{}, {"hs": True}], ids=["ns", "hs"])
def test_one_replica_in_rounds_is_the_plain_run(wiki6, tmp_path, loss):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(wiki6.read_bytes()[:1_000_000])
    settings = {"threads": 1, "epochs": 2, "seed": 3, "dim": 20, **loss}
    plain = w2v.train(str(corpus), **settings)
    config = TrainConfig(**settings).resolved()
    table = count_table([str(corpus)])
    vocab = Vocab.choose(table.words, table.counts, config.min_count, None)
    model = Model.build(vocab, config)
    weights = {"syn0": model.syn0, "syn1": model.tables.syn1, "syn1neg": model.tables.syn1neg}
    replica = Replica(split_sources([str(corpus)], 1), vocab, config, tuple(weights.values()))
    ledger = Ledger(np.array([replica.size()]), config, weights)
    replica.place(ledger.placement(0))
    update = None
    while ledger.active():
        result = replica.train_round(update, ledger.trained, 1, 30_000)
        update = ledger.record(update, {0: result}, time.perf_counter())
    replica.close()
    assert len(ledger.log) > 5 and ledger.trained == 2 * replica.size()[1]
    assert weights["syn0"].tobytes() == plain.vectors.tobytes()
    assert [ledger.epoch_loss(epoch) for epoch in range(2)] == pytest.approx(plain.report.epoch_loss, rel=1e-12)
