"""The one-off studies in studies/: each still runs as its report says, and renders its
tables from results as documented. A study's folder is not a package: each is loaded by
its path and only its documented functions are called."""

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

STUDIES = (
    "streams",
    "estimators",
    "equal_time",
    "simulate_cluster",
    "cluster_bench",
    "path_sharing",
    "cbow_parity",
    "block_cluster",
    "c_trace",
)


def study(name: str, script: str | None = None):
    """The module of ``studies/NAME/SCRIPT.py`` (SCRIPT: NAME unless given), loaded by its path."""
    script = script or name
    spec = importlib.util.spec_from_file_location(f"study_{script}", REPO / "studies" / name / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The first 400 KB of the sample corpus, as one plain file."""
    with gzip.open(REPO / "data/sample.txt.gz", "rb") as stream:
        text = stream.read(400_000)
    path = tmp_path / "sample.txt"
    path.write_bytes(text[: text.rfind(b" ")])
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", STUDIES)
def test_each_study_starts(name: str) -> None:
    """``python studies/NAME/NAME.py --help`` answers with its usage, from any folder."""
    done = subprocess.run([sys.executable, str(REPO / "studies" / name / f"{name}.py"), "--help"],
                          capture_output=True, text=True, timeout=120, cwd=REPO / "studies")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name}.py ")


def simulated(corpus: Path, workers: int, combine: str, exact: tuple[str, ...] = ()):
    """The weights and ledger of a simulated run of ``workers`` replicas on ``corpus``,
    the weights ``exact`` passed from replica to replica instead of combined."""
    settings = {"threads": 1, "dim": 16, "epochs": 1, "seed": 1, "sync_words": 5_000, "combine": combine}
    return study("simulate_cluster").simulated_run(corpus, settings, workers, exact)


def test_one_simulated_worker_trains_as_one_process(corpus: Path) -> None:
    """N = 1: the rounds change nothing, so the weights are a plain one-thread run's."""
    import w2v

    weights, ledger = simulated(corpus, 1, "sum")
    plain = w2v.train(str(corpus), threads=1, dim=16, epochs=1, seed=1)
    assert len(ledger.log) >= 3
    assert np.array_equal(weights["syn0"], plain.vectors)


def test_simulated_workers_each_train_their_share_and_are_combined(corpus: Path) -> None:
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


def test_weights_passed_on_exactly_are_not_combined(corpus: Path) -> None:
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


def test_the_simulation_grid_and_table() -> None:
    """N = 1 once per model, whatever the round sizes; rows by model, N, sync words, rule,
    then the other settings."""
    simulate_cluster = study("simulate_cluster")
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


def test_the_streams_table_pairs_its_settings_by_seed() -> None:
    """Means ± sd per setting; the difference row is over the seeds both settings have."""
    record = {"analogy": 0.30, "ws353": 0.60, "score": {"bits_per_word": 10.0}}
    results = {
        "CBOW NS/streams 1/seed 1": record,
        "CBOW NS/streams 16/seed 1": {"analogy": 0.31, "ws353": 0.62, "score": {"bits_per_word": 9.9}},
        "CBOW NS/streams 1/seed 2": {"analogy": 0.32, "ws353": 0.64, "score": {"bits_per_word": 10.2}},
        "CBOW NS/streams 16/seed 2": {"analogy": 0.35, "ws353": 0.64, "score": {"bits_per_word": 10.0}},
        "CBOW NS/streams 16/seed 3": {"analogy": 0.50, "ws353": 0.70, "score": {"bits_per_word": 9.0}},
    }
    rows = study("streams").render(results).splitlines()[2:]
    assert rows[0] == "| CBOW NS | 1 | 2 | 31.00 ± 1.41 | 0.6200 ± 0.0283 | 10.1000 ± 0.1414 |"
    assert rows[1].startswith("| CBOW NS | 16 | 3 | 38.67 ± ")
    assert rows[2] == "| CBOW NS | 16 − 1 | 2 | +2.00 ± 1.41 | +0.0100 ± 0.0141 | -0.1500 ± 0.0707 |"


def test_the_cbow_parity_table_pairs_w2v_with_word2vec_c_by_seed() -> None:
    """Analogy and WS-353 per system (word2vec.c's runs have no held-out score), then each
    w2v setting's difference from word2vec.c over the seeds both have."""
    results = {
        "CBOW HS/word2vec.c/seed 1": {"analogy": 0.28, "ws353": 0.64},
        "CBOW HS/word2vec.c/seed 2": {"analogy": 0.30, "ws353": 0.62},
        "CBOW HS/streams 1/seed 1": {"analogy": 0.27, "ws353": 0.63, "score": {"bits_per_word": 10.0}},
        "CBOW HS/streams 1/seed 2": {"analogy": 0.28, "ws353": 0.65, "score": {"bits_per_word": 10.1}},
        "CBOW HS/streams 2/seed 1": {"analogy": 0.29, "ws353": 0.60, "score": {"bits_per_word": 10.0}},
    }
    rows = study("cbow_parity").render(results).splitlines()
    assert rows[0] == "| combination | system | seeds | analogy % | WS-353 |"
    assert rows[2:] == [
        "| CBOW HS | word2vec.c | 2 | 29.00 ± 1.41 | 0.6300 ± 0.0141 |",
        "| CBOW HS | w2v --streams 1 | 2 | 27.50 ± 0.71 | 0.6400 ± 0.0141 |",
        "| CBOW HS | w2v --streams 2 | 1 | 29.00 ± 0.00 | 0.6000 ± 0.0000 |",
        "| CBOW HS | w2v --streams 1 − word2vec.c | 2 | -1.50 ± 0.71 | +0.0100 ± 0.0283 |",
    ]  # one seed of streams 2: no difference row


def write_book(folder: Path, name: str, head: str, body: str) -> None:
    """A Project Gutenberg file: ``head``, the licence's start marker, ``body``, its end marker."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = "*** {} OF THE PROJECT GUTENBERG EBOOK ***"
    (folder / name).write_text(f"{head}\n{marker.format('START')}\n{body}\n{marker.format('END')}\nlicence text\n")


@pytest.mark.slow
def test_the_books_corpus_is_english_books_by_author_without_licences(tmp_path: Path) -> None:
    """studies/cbow_parity/books.py: the books between their licence markers, English only,
    each book once (the first file of a title: files in path order), by author folder then
    title, as text8 (a-z, digits spelled, one line)."""
    source, long_text = tmp_path / "src", " word" * 600  # a book needs 2,000 characters
    write_book(source / "Zola", "b.txt", "Title: Beta\nLanguage: English", "Zed's 2nd book" + long_text)
    write_book(source / "Austen", "e.txt", "Title: Emma\nLanguage: English", "Emma, by Jane!" + long_text)
    write_book(source / "Austen", "z-copy.txt", "Title: Emma\nLanguage: English", "Emma again" + long_text)
    write_book(source / "Austen", "f.txt", "Title: Fr\nLanguage: French", "Le livre" + long_text)
    out = tmp_path / "books.txt"
    done = subprocess.run([sys.executable, str(REPO / "studies/cbow_parity/books.py"), str(source), str(out)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("emma by jane word word") and " zed s two nd book word " in text
    assert "licence" not in text and "livre" not in text and "again" not in text and "\n" not in text
    missing = subprocess.run([sys.executable, str(REPO / "studies/cbow_parity/books.py"), str(tmp_path / "no"),
                              str(tmp_path / "x.txt")], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert missing.returncode != 0 and len(missing.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.slow
def test_the_low16_draw_study_measures_both_draws(corpus: Path) -> None:
    """studies/cbow_parity/low16_draw.py: the low 16 bits' consecutive draws are
    correlated where the probability is small and not where it is large; both draws
    keep the same share of a text, each about the expected number of tokens."""
    module = study("cbow_parity", "low16_draw")
    assert module.lag_one_excess(0.04) == pytest.approx(1.125, abs=0.01)
    assert module.lag_one_excess(0.3) == pytest.approx(1.0, abs=0.01)
    ids, vocab = module.read_ids(corpus, 400_000)
    keep = vocab.keep_probabilities(module.SAMPLE)
    assert vocab.total == ids.shape[0]
    expected = float(keep[ids].sum())
    for low16 in (False, True):
        kept = module.subsample(ids, keep, low16, 20)
        assert abs(kept.shape[0] - expected) < 0.02 * expected
        assert set(kept.tolist()) <= set(ids.tolist())
    script = REPO / "studies/cbow_parity/low16_draw.py"
    command = [sys.executable, str(script), str(corpus), "--passes", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "high 24 bits" in done.stdout and "low 16 bits (word2vec.c)" in done.stdout


def test_the_cost_model_from_measured_figures() -> None:
    """Compute from one-thread words/s x 16 cores; transfers of 2 V d 4 bytes per copy,
    2 N copies through the client, 2 ceil(log2 N) through a tree, at 10 Gbit/s."""
    cluster_bench = study("cluster_bench")
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


def test_the_measured_table_prices_a_free_exchange() -> None:
    """With a free exchange: the median of words/s over the computing share, against one process'."""
    cluster_bench = study("cluster_bench")
    results = {
        "speed/cbow/one process/0": {"words_per_s": 2e6, "bytes_per_round": 0, "compute_share": 1.0},
        "speed/cbow/local:2/0": {"words_per_s": 0.4e6, "bytes_per_round": 2**20, "compute_share": 0.25},
        "speed/cbow/local:2/1": {"words_per_s": 0.6e6, "bytes_per_round": 2**20, "compute_share": 0.5},
    }
    rows = {row.split(" | ")[1]: row for row in cluster_bench.render_measured(results).splitlines()[2:]}
    assert rows["local:2"].endswith("| 0.25x | 1 | 38% | 0.70x |")  # 0.5M words/s; (1.6M + 1.2M) / 2 computing
    assert rows["one process"].endswith("| 1.00x | 0 | 100% | 1.00x |")


def test_path_sharing_counts_the_node_rows_paths_share() -> None:
    """Four words a, b, c, d whose paths run through inner nodes 0 (the root), 1 and 2:
    a [0], b [0, 1], c and d [0, 1, 2]."""
    points = np.array([0, 0, 1, 0, 1, 2, 0, 1, 2])
    offsets = np.array([0, 1, 3, 6, 9])
    ids = np.array([2, 3, 2, 2, 0, 1, 0])  # the last word makes no group of 2
    visited, distinct = study("path_sharing").node_rows(ids, points, offsets, 2)
    assert (visited, distinct) == (3 + 3 + 3 + 3 + 1 + 2, 3 + 3 + 2)  # (c, d) and (c, c) share 3 nodes, (a, b) 1


def run_equal_time(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(REPO / "studies/equal_time/equal_time.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.slow
def test_equal_time_sweeps_resumes_and_ends_the_report(corpus: Path, tmp_path: Path) -> None:
    """A run per epoch count, saved as it goes; a second --run finds nothing left to do, a
    third runs again the one marked failed; the section replaces its earlier self at the
    end of the report, under the report's own text."""
    raw, out = tmp_path / "sweep.json", tmp_path / "bench.md"
    out.write_text("# Equal time\n\nwhat was asked\n")
    common = ["--systems", "w2v", "--combos", "cbow-ns", "--epoch-counts", "2,1", "--dim", "16",
              "--corpus", str(corpus), "--json", str(raw), "--out", str(out),
              "--plot", str(tmp_path / "img/sweep.png"), "--workdir", str(tmp_path / "work")]  # fmt: skip
    for _ in range(2):
        done = run_equal_time("--run", *common, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    runs = json.loads(raw.read_text())["runs"]
    assert [(r["system"], r["combo"], r["epochs"]) for r in runs] == [("w2v", "cbow-ns", 1), ("w2v", "cbow-ns", 2)]
    assert runs[1]["words_per_s"] > 0 and runs[1]["analogy_pct"] is not None
    sweep = json.loads(raw.read_text())  # a failed run is run again, its record replaced
    sweep["runs"][0].update(error="ModuleNotFoundError", analogy_pct=None)
    raw.write_text(json.dumps(sweep))
    assert run_equal_time("--run", *common, cwd=tmp_path).returncode == 0
    runs = json.loads(raw.read_text())["runs"]
    assert [(r["epochs"], r["error"]) for r in runs] == [(2, None), (1, None)] and runs[1]["analogy_pct"] is not None
    report = out.read_text()
    assert report.startswith("# Equal time\n\nwhat was asked\n") and report.count("## Accuracy at equal time") == 1
    assert "| epochs | w2v |" in report and "| 2 | " in report
    assert run_equal_time("--render", *common[:-2], cwd=tmp_path).returncode == 0  # renders again in place
    assert out.read_text() == report


@pytest.mark.slow
def test_equal_time_refuses_runs_of_other_settings(corpus: Path, tmp_path: Path) -> None:
    raw = tmp_path / "sweep.json"
    raw.write_text(json.dumps({"settings": {"dim": 7}, "runs": [], "commands": []}))
    done = run_equal_time("--run", "--systems", "w2v", "--corpus", str(corpus), "--json", str(raw),
                          "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "r.md"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1 and done.stderr.strip().startswith(f"equal_time: {raw} holds runs with other settings")


def test_the_block_simulation_trains_every_pair_once_and_counts_its_traffic(corpus: Path, tmp_path: Path) -> None:
    """studies/block_cluster: every pair the machines make is trained once, in its block;
    the loss falls; each right partition is handed on after each of its trainings; the
    pair bytes sent are the frames of the blocks another machine owns."""
    from w2v.cluster.pairs import window_pairs
    from w2v.config import TrainConfig

    blocks = study("block_cluster")
    config = TrainConfig(model="skipgram", dim=16, epochs=2, seed=3, threads=1, sample=1e-3).resolved()
    data = blocks.load_corpus(corpus, config, tmp_path)
    spec = blocks.Spec(machines=3, sweeps=2, corrected=True, seed=3)
    _, tally = blocks.simulate(data, config, spec)
    keep = data.vocab.keep_probabilities(config.sample)
    seeds = [batch_seed_of(spec.seed, epoch, len(data.starts) - 1) for epoch in range(config.epochs)]
    made = [len(window_pairs(data.tokens, data.starts, s, keep, config.window)[0]) for s in seeds]
    assert tally.pairs.tolist() == made
    assert tally.loss[1] / tally.pairs[1] < tally.loss[0] / tally.pairs[0]
    trainings = config.epochs * spec.sweeps * spec.machines  # of each right partition: once by each machine a sweep
    assert tally.sent.right_bytes == trainings * len(data.vocab) * config.dim * 4
    assert 0 < tally.sent.pair_bytes < 2 * tally.sent.pairs
    assert tally.sent.pairs < sum(made) * (spec.machines - 1) / spec.machines * 1.1
    assert 0 < tally.sent.input_bytes < len(data.vocab) * config.dim * 4


def batch_seed_of(seed: int, epoch: int, batches: int) -> np.ndarray:
    """The seeds of an epoch's batches, as the batch kernel's runs seed them."""
    from w2v.engine.workers import batch_seed

    return np.array([batch_seed(seed, epoch * batches + b) for b in range(batches)], np.uint64)
