"""The study scripts behind docs/parity.md's streams table and docs/distributed.md: the
simulation of a cluster trains and combines like ``--cluster``, and each renders its
table from results as documented."""

import gzip
import importlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The first 400 KB of the sample corpus, as one plain file."""
    with gzip.open(ROOT / "data/sample.txt.gz", "rb") as stream:
        text = stream.read(400_000)
    path = tmp_path / "sample.txt"
    path.write_bytes(text[: text.rfind(b" ")])
    return path


def simulated(corpus: Path, workers: int, combine: str, exact: tuple[str, ...] = ()):
    """The weights and ledger of a simulated run of ``workers`` replicas on ``corpus``,
    the weights ``exact`` passed from replica to replica instead of combined."""
    import simulate_cluster

    from w2v.config import TrainConfig
    from w2v.corpus.counting import count_table
    from w2v.corpus.vocab import Vocab

    config = TrainConfig(threads=1, dim=16, epochs=1, seed=1, sync_words=5_000, combine=combine).resolved()
    table = count_table([str(corpus)])
    vocab = Vocab.choose(table.words, table.counts, config.min_count, None)
    return simulate_cluster.simulate(corpus, config, workers, vocab, exact)


def test_one_simulated_worker_trains_as_one_process(scripts, corpus: Path) -> None:
    """N = 1: the rounds change nothing, so the weights are a plain one-thread run's."""
    import w2v

    weights, ledger = simulated(corpus, 1, "sum")
    plain = w2v.train(str(corpus), threads=1, dim=16, epochs=1, seed=1)
    assert len(ledger.log) >= 3
    assert np.array_equal(weights["syn0"], plain.vectors)


def test_simulated_workers_each_train_their_share_and_are_combined(scripts, corpus: Path) -> None:
    """N = 2: every round holds both replicas' words; the combined weights differ from
    either rule's and are finite."""
    summed, ledger = simulated(corpus, 2, "sum")
    averaged, _ = simulated(corpus, 2, "mean")
    assert sum(entry.words for entry in ledger.log) == int(ledger.sizes[:, 1].sum())
    # rounds of 5,000 words: batches of exactly 5,000 words, cut out of the text's sentences of 10,000 tokens;
    # only a replica's last batch is shorter
    words = [entry.words for entry in ledger.log]
    assert max(words) == 2 * 5_000 and sum(entry < 2 * 5_000 for entry in words) <= 2
    assert all(entry.bytes_in > 0 for entry in ledger.log) and all(entry.bytes_out > 0 for entry in ledger.log[1:])
    assert np.isfinite(summed["syn0"]).all() and not np.array_equal(summed["syn0"], averaged["syn0"])


def test_weights_passed_on_exactly_are_not_combined(scripts, corpus: Path) -> None:
    """Every weight passed from replica to replica: no rows come back and the rule
    combines nothing, so ``sum`` and ``mean`` train the same weights. The output
    vectors alone: only the input vectors' rows come back, and the rule combines them."""
    every = ("syn0", "syn1", "syn1neg")
    summed, ledger = simulated(corpus, 2, "sum", every)
    averaged, _ = simulated(corpus, 2, "mean", every)
    assert len(ledger.log) >= 2 and all(entry.bytes_in == 0 for entry in ledger.log)
    assert all(np.array_equal(summed[name], averaged[name]) for name in every)
    _, combined = simulated(corpus, 2, "sum")
    inputs_summed, inputs_ledger = simulated(corpus, 2, "sum", ("syn1neg",))
    inputs_averaged, _ = simulated(corpus, 2, "mean", ("syn1neg",))
    received = [sum(entry.bytes_in for entry in run.log) for run in (inputs_ledger, combined)]
    assert 0 < received[0] < received[1]
    assert not np.array_equal(inputs_summed["syn0"], inputs_averaged["syn0"])
    assert np.isfinite(inputs_summed["syn1neg"]).all() and inputs_summed["syn1neg"].any()


def test_the_simulation_grid_and_table(scripts) -> None:
    """N = 1 once per model, whatever the round sizes; rows by model, N, sync words, rule,
    then the other settings."""
    import simulate_cluster

    assert simulate_cluster.grid(["skipgram"], [1, 2], [20_000, 50_000], ["sum"]) == [
        ("skipgram", 1, 50_000, "mean"), ("skipgram", 2, 20_000, "sum"), ("skipgram", 2, 50_000, "sum"),
    ]  # fmt: skip
    assert simulate_cluster.grid(["cbow"], [4], [50_000], ["auto"]) == [("cbow", 4, 50_000, "auto")]
    run = {"rounds": 3, "bytes_per_round": 2**20, "bits_per_word": 10.5, "analogy": 0.071, "ws353": 0.45}
    results = {
        "cbow/N=1/sync=50000/mean/seed=1": run,
        "skipgram/N=4/sync=20000/sum/seed=1": {"diverged": "loss is nan"},
        "skipgram/N=2/sync=20000/mean/seed=1": run,
        "skipgram/N=2/sync=20000/sum/seed=1": run,
        "skipgram/N=2/sync=20000/sum/seed=1/exact=syn0+syn1neg": run,
        "skipgram/N=2/sync=20000/sum/seed=1/batch=5000": run,
    }
    rows = simulate_cluster.render(results).splitlines()[2:]
    assert [row.split(" | ")[:4] for row in rows] == [
        ["| skipgram", "2", "20,000", "sum"], ["| skipgram", "2", "20,000 (batches of 5,000)", "sum"],
        ["| skipgram", "2", "20,000", "sum, exact syn0 and syn1neg"], ["| skipgram", "2", "20,000", "mean"],
        ["| skipgram", "4", "20,000", "sum"], ["| cbow", "1", "-", "-"],
    ]  # fmt: skip
    assert rows[0].endswith("| 3 | 1.0 | 10.5000 | 7.1 | 0.450 |") and "diverged" in rows[4]


def run(analogy: float, ws: float, bits: float) -> dict:
    """A study's record of one run, as the tables read it."""
    return {"analogy": analogy, "ws353": ws, "score": {"bits_per_word": bits}}


# Each paired study: (combination, the two sides' keys, their labels in the table, the difference's label).
PAIRED_STUDIES = {
    "streams": ("CBOW NS", "streams 1", "streams 16", "1", "16", "16 − 1"),
    "ab_quality": ("CBOW HS", "base", "variant", "base", "variant", "variant − base"),
}


@pytest.mark.parametrize("study", list(PAIRED_STUDIES))
def test_a_paired_study_pairs_its_sides_by_seed(scripts, study) -> None:
    """Means ± sd per side; the difference row is over the seeds both sides have."""
    combo, first, second, first_label, second_label, difference = PAIRED_STUDIES[study]
    results = {
        f"{combo}/{first}/seed 1": run(0.30, 0.60, 10.0),
        f"{combo}/{second}/seed 1": run(0.31, 0.62, 9.9),
        f"{combo}/{first}/seed 2": run(0.32, 0.64, 10.2),
        f"{combo}/{second}/seed 2": run(0.35, 0.64, 10.0),
        f"{combo}/{second}/seed 3": run(0.50, 0.70, 9.0),
    }
    rows = importlib.import_module(study).render(results).splitlines()[2:]
    assert rows[0] == f"| {combo} | {first_label} | 2 | 31.00 ± 1.41 | 0.6200 ± 0.0283 | 10.1000 ± 0.1414 |"
    assert rows[1].startswith(f"| {combo} | {second_label} | 3 | 38.67 ± ")
    assert rows[2] == f"| {combo} | {difference} | 2 | +2.00 ± 1.41 | +0.0100 ± 0.0141 | -0.1500 ± 0.0707 |"


def test_the_cost_model_from_measured_figures(scripts) -> None:
    """Compute from one-thread words/s x 16 cores; transfers of 2 V d 4 bytes per copy,
    2 N copies through the client, 2 ceil(log2 N) through a tree, at 10 Gbit/s."""
    import cluster_bench

    results = {
        "skipgram/one process/seed 1": {"vocab": 100_000},
        "speed/skipgram/local:2/0": {"words_per_s": 500_000, "compute_share": 0.25},  # 1M words/s a thread
        "speed/skipgram/local:2, 500k a round/0": {"words_per_s": 9e9, "compute_share": 1.0},  # another way
    }
    rows = cluster_bench.cost_model(results, 1_600_000).splitlines()[2:]
    copy = 2 * 100_000 * 100 * 4 / cluster_bench.BANDWIDTH  # seconds: 0.064
    compute, star, tree = 0.1, 16 * copy, 6 * copy
    assert rows[0].startswith(f"| benchmark | 8 | {compute:.2f} | {star:.2f} | {compute / (compute + star):.0%} |")
    assert f"| {tree:.2f} | {compute / (compute + tree):.0%} |" in rows[0]
    assert rows[1].split(" | ")[5] == f"{10 * copy:.2f}"  # 32 machines: 5 levels


def test_the_measured_table_prices_a_free_exchange(scripts) -> None:
    """With a free exchange: the median of words/s over the computing share, against one process'."""
    import cluster_bench

    results = {
        "speed/cbow/one process/0": {"words_per_s": 2e6, "bytes_per_round": 0, "compute_share": 1.0},
        "speed/cbow/local:2/0": {"words_per_s": 0.4e6, "bytes_per_round": 2**20, "compute_share": 0.25},
        "speed/cbow/local:2/1": {"words_per_s": 0.6e6, "bytes_per_round": 2**20, "compute_share": 0.5},
    }
    rows = {row.split(" | ")[1]: row for row in cluster_bench.render_measured(results).splitlines()[2:]}
    assert rows["local:2"].endswith("| 0.25x | 1 | 38% | 0.70x |")  # 0.5M words/s; (1.6M + 1.2M) / 2 computing
    assert rows["one process"].endswith("| 1.00x | 0 | 100% | 1.00x |")


def test_path_sharing_counts_the_node_rows_paths_share(scripts):
    import path_sharing

    from w2v.corpus.vocab import Vocab

    vocab = Vocab([b"a", b"b", b"c", b"d"], np.array([40, 30, 20, 10]))
    _codes, points, offsets = vocab.huffman()  # inner nodes: root, (b, (c, d)), (c, d)
    assert np.diff(offsets).tolist() == [1, 2, 3, 3]
    ids = np.array([2, 3, 2, 2, 0, 1, 0])  # the last word makes no group of 2
    visited, distinct = path_sharing.node_rows(ids, points, offsets, 2)
    assert (visited, distinct) == (3 + 3 + 3 + 3 + 1 + 2, 3 + 3 + 2)  # (c, d) and (c, c) share 3 nodes, (a, b) 1


def test_kernel_profile_attributes_samples_to_innermost_loops(scripts):
    import collections

    import profile_kernel

    instructions = [  # an outer loop 0x0-0x20 around an inner one 0x8-0x18
        (0x0, "mov", "%rax,%rbx"),
        (0x8, "vfmadd231ps", "%zmm1,%zmm2,%zmm3"),
        (0x10, "vmovups", "%zmm3,(%rdi)"),
        (0x18, "jne", "0x8"),
        (0x1A, "vaddss", "%xmm1,%xmm2,%xmm2"),
        (0x20, "jmp", "0x0"),
        (0x22, "ret", ""),
        (0x24, "jmp", "0x30"),  # a jump forward is no loop
    ]
    assert profile_kernel.loops(instructions) == [(0x0, 0x20), (0x8, 0x18)]
    assert profile_kernel.innermost(0x10, [(0x0, 0x20), (0x8, 0x18)]) == (0x8, 0x18)
    assert profile_kernel.innermost(0x1A, [(0x0, 0x20), (0x8, 0x18)]) == (0x0, 0x20)
    assert profile_kernel.innermost(0x22, [(0x0, 0x20)]) is None
    samples = collections.Counter({0x8: 5, 0x10: 1, 0x1A: 3, 0x22: 1})
    header, _rule, inner, outer, outside = profile_kernel.loop_table(instructions, samples, top=3)
    assert header.startswith("| loop (offsets) | share | instructions | fma | vector loads/stores |")
    assert inner == "| 8-18 | 60.0% | 3 | 1 | 1 | 0 | 0 | 0 | 0 |"
    assert outer.startswith("| 0-20 | 30.0% | 6 | 1 | 1 | 0 | 1 |")  # counts the inner loop's body too
    assert outside.startswith("| outside loops | 10.0% |")
