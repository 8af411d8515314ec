"""Training on a cluster against one process, on one machine: the tables of studies/cluster_bench/README.md.

    python studies/cluster_bench/cluster_bench.py --run        # quality: 3 seeds x 2 models x 6 ways (60 min, 2 cores)
    python studies/cluster_bench/cluster_bench.py --speed      # words/s: 1 epoch a way, in turn, 3 rounds (8 min alone)
    python studies/cluster_bench/cluster_bench.py --exchange   # the cores busy while the rounds exchange (2 min, alone)
    python studies/cluster_bench/cluster_bench.py --render     # the markdown tables from the JSON

On the benchmark corpus less its last 2 MB (``scripts/quality.py`` splits it), with
skip-gram and CBOW with negative sampling (dim 100, window 5, sample 1e-4), seven ways
of using the machine's 2 cores:

- ``one process``: ``--threads 2``;
- ``local:2``: ``--cluster local:2 --threads 1``, two worker processes of one thread;
- ``local:1``: ``--cluster local:1 --threads 2``, one worker of two threads: against
  ``one process``, the price of Dask and of the rounds themselves;
- ``local:2, 500k a round`` to ``local:2, 4M a round``: ``local:2`` with ``--sync-words``
  500000, 1000000, 2000000 and 4000000, ten to eighty times the default (``--combine
  auto`` is then ``momentum``): what longer rounds gain in speed and cost in quality.

``--run`` trains all but ``local:1`` for 5 epochs with each seed and scores them by ``w2v
eval`` and ``w2v score`` (held-out bits per word on the last 2 MB): quality does not
depend on what else the machine runs. ``--speed`` trains one epoch of each of the
seven, in turn, ``SPEED_ROUNDS`` times: run it alone. Words/s count training alone
(rounds included; not counting the corpus nor starting the workers), as ``w2v
train`` reports it; *with a free exchange* is words/s over the computing share, the
speed were the rounds' exchange to take no time. ``--exchange`` trains one epoch of
each ``local:2`` way and measures how many of the machine's cores are busy (Linux'
/proc/stat) while the rounds exchange rather than train. ``--render`` also prints
the cost model's table (``cost_model``) from the measured figures. Results go to
``distributed.json`` beside this script, run by run. Not a test and not run in CI.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the shared helpers: scripts/quality.py

from quality import SCORE_PAIRS, split_corpus, study_parser, w2v_json  # noqa: E402

RESULTS = HERE / "distributed.json"
SETTINGS = {"dim": 100, "window": 5, "sample": 1e-4, "epochs": 5, "negative": 5}
WAYS = {  # name: w2v.train settings; on a cluster, in rounds (skip-gram NS in blocks: studies/block_cluster)
    "one process": {"threads": 2},
    "local:2": {"cluster": "local:2", "threads": 1, "rounds": True},
    "local:1": {"cluster": "local:1", "threads": 2, "rounds": True},
    "local:2, 500k a round": {"cluster": "local:2", "threads": 1, "sync_words": 500_000, "rounds": True},
    "local:2, 1M a round": {"cluster": "local:2", "threads": 1, "sync_words": 1_000_000, "rounds": True},
    "local:2, 2M a round": {"cluster": "local:2", "threads": 1, "sync_words": 2_000_000, "rounds": True},
    "local:2, 4M a round": {"cluster": "local:2", "threads": 1, "sync_words": 4_000_000, "rounds": True},
}
MODELS = ("skipgram", "cbow")
QUALITY_WAYS = tuple(name for name in WAYS if name != "local:1")  # local:1 is timed only
SPEED_ROUNDS = 3
TOKENS = 10e9  # the cost model's corpus
MACHINES = (8, 32, 128)
BANDWIDTH = 10e9 / 8  # bytes/s: 10 Gbit/s
SIZES = {"benchmark": None, "V = 1M, d = 300": (1_000_000, 300)}  # None: the measured vocabulary and dim


def train_and_score(corpus: Path, heldout: Path, model: str, way: dict, seed: int, work: Path) -> dict:
    """One run: train, score and evaluate; its record."""
    import w2v

    model_file, vectors_file = work / "model.npz", work / "vectors.bin"
    vectors = w2v.train(str(corpus), model=model, seed=seed, save_model=str(model_file), **{**SETTINGS, **way})
    vectors.save(vectors_file)
    report = vectors.report
    score = w2v_json("score", str(model_file), str(heldout), "--max-pairs", str(SCORE_PAIRS))
    evaluation = w2v_json("eval", "-v", str(vectors_file))
    rounds = report.rounds
    return {
        "vocab": len(vectors),
        "train_words": report.train_words,
        "train_seconds": report.train_seconds,
        "words_per_s": report.words_per_second,
        "seconds": report.seconds,
        "rounds": len(rounds),
        "bytes_per_round": statistics.fmean([r["bytes_out"] + r["bytes_in"] for r in rounds]) if rounds else 0,
        "compute_share": sum(r["compute_seconds"] for r in rounds) / report.train_seconds if rounds else 1.0,
        "round_seconds": statistics.fmean([r["seconds"] for r in rounds]) if rounds else 0,
        "analogy": evaluation["analogies"][0]["accuracy"],
        "ws353": evaluation["similarity"][0]["spearman"],
        "bits_per_word": score["bits_per_word"],
    }


def run_all(args: argparse.Namespace) -> None:
    """The quality runs not yet in the results: 5 epochs, each seed, model and way of ``QUALITY_WAYS``."""
    paths = split_corpus(args.corpus, args.work)
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for seed in args.seeds:
        for model in MODELS:
            for name in QUALITY_WAYS:
                key = f"{model}/{name}/seed {seed}"
                if key in results:
                    continue
                print(f"{key} ...", file=sys.stderr, flush=True)
                results[key] = train_and_score(paths["train"], paths["heldout"], model, WAYS[name], seed, args.work)
                args.results.write_text(json.dumps(results, indent=1) + "\n")


def run_speed(args: argparse.Namespace) -> None:
    """One epoch of each way and model, in turn, ``SPEED_ROUNDS`` times (replacing earlier ones)."""
    import w2v

    paths = split_corpus(args.corpus, args.work)
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for turn in range(SPEED_ROUNDS):
        for model in MODELS:
            for name, way in WAYS.items():
                vectors = w2v.train(str(paths["train"]), model=model, seed=1, **{**SETTINGS, "epochs": 1, **way})
                report = vectors.report
                rounds = report.rounds
                results[f"speed/{model}/{name}/{turn}"] = {
                    "words_per_s": report.words_per_second,
                    "rounds": len(rounds),
                    "bytes_per_round": statistics.fmean([r["bytes_out"] + r["bytes_in"] for r in rounds])
                    if rounds
                    else 0,
                    "compute_share": sum(r["compute_seconds"] for r in rounds) / report.train_seconds
                    if rounds
                    else 1.0,
                }
                print(f"{model} {name}: {report.words_per_second:,.0f} words/s", file=sys.stderr, flush=True)
                args.results.write_text(json.dumps(results, indent=1) + "\n")


def busy_ticks() -> tuple[int, int]:
    """The machine's CPU time so far (Linux' /proc/stat, all cores, in ticks): busy, and in all."""
    with open("/proc/stat") as stat:
        ticks = [int(field) for field in stat.readline().split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)  # less idle and iowait


def exchange_run(corpus: Path, model: str, way: dict) -> dict:
    """One epoch of ``way``: between the ends of its first and last round, the cores
    busy on average (B), the share c of the time the slowest worker trained, and the
    cores the exchange keeps busy, (B - 2 c) / (1 - c), where both workers keep a
    core busy each while they train."""
    import w2v

    marks: list[tuple[float, int, int]] = []  # after each round: time, busy and all ticks

    def mark(*_progress) -> None:
        marks.append((time.perf_counter(), *busy_ticks()))

    vectors = w2v.train(str(corpus), model=model, seed=1, on_progress=mark, **{**SETTINGS, "epochs": 1, **way})
    (start, busy_start, all_start), (end, busy_end, all_end) = marks[0], marks[-1]
    busy = (os.cpu_count() or 1) * (busy_end - busy_start) / (all_end - all_start)
    computing = sum(r["compute_seconds"] for r in vectors.report.rounds[1:]) / (end - start)
    return {
        "cores_busy": busy,
        "compute_share": computing,
        "cores_exchanging": (busy - 2 * computing) / (1 - computing),
    }


def run_exchange(args: argparse.Namespace) -> None:
    """``exchange_run`` of each ``local:2`` way and model (replacing earlier ones)."""
    paths = split_corpus(args.corpus, args.work)
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for model in MODELS:
        for name, way in WAYS.items():
            if way.get("cluster") == "local:2":
                results[f"exchange/{model}/{name}"] = exchange_run(paths["train"], model, way)
                print(f"{model} {name}: {results[f'exchange/{model}/{name}']}", file=sys.stderr, flush=True)
                args.results.write_text(json.dumps(results, indent=1) + "\n")


def render_exchange(results: dict) -> str:
    """The cores busy while ``local:2``'s rounds exchange, per model and way (``run_exchange``)."""
    lines = ["| model | run | cores busy | computing | cores busy while exchanging |", "|---|---|---|---|---|"]
    for key, run in results.items():
        if key.startswith("exchange/"):
            _, model, name = key.split("/", 2)
            lines.append(f"| {model} | {name} | {run['cores_busy']:.2f} | {100 * run['compute_share']:.0f}% |"
                         f" {run['cores_exchanging']:.2f} |")  # fmt: skip
    return "\n".join(lines) if len(lines) > 2 else ""


def mean_of(runs: list[dict], field: str) -> float:
    return statistics.fmean(run[field] for run in runs)


def render_measured(results: dict) -> str:
    """Quality: means over seeds per model and way (5 epochs). Speed: the median of the
    one-epoch runs, and its ratio to one process'; with a free exchange, the median of
    words/s over the computing share, as a ratio to one process'."""
    lines = [
        "| model | run | seeds | analogy % | WS-353 | bits/word | words/s (1 epoch) | vs one process | MiB a round |"
        " computing | with a free exchange |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model in MODELS:
        fast = [run["words_per_s"] for key, run in results.items() if key.startswith(f"speed/{model}/one process/")]
        for name in WAYS:
            runs = [run for key, run in results.items() if key.startswith(f"{model}/{name}/")]
            speed = [run for key, run in results.items() if key.startswith(f"speed/{model}/{name}/")]
            quality = ["-"] * 3
            if runs:
                quality = [f"{100 * mean_of(runs, 'analogy'):.1f}", f"{mean_of(runs, 'ws353'):.3f}",
                           f"{mean_of(runs, 'bits_per_word'):.3f}"]  # fmt: skip
            pace = ["-"] * 5
            if speed and fast:
                words = statistics.median(run["words_per_s"] for run in speed)
                computing = statistics.median(run["words_per_s"] / run["compute_share"] for run in speed)
                pace = [f"{words / 1e3:,.0f}k", f"{words / statistics.median(fast):.2f}x",
                        f"{mean_of(speed, 'bytes_per_round') / 2**20:,.0f}",
                        f"{100 * mean_of(speed, 'compute_share'):.0f}%",
                        f"{computing / statistics.median(fast):.2f}x"]  # fmt: skip
            lines.append(f"| {model} | {name} | {len(runs)} | " + " | ".join(quality + pace) + " |")
    return "\n".join(lines)


def cost_model(results: dict, sync_words: int) -> str:
    """Time per round = compute + bytes moved / bandwidth, projected to ``MACHINES``
    machines for a ``TOKENS`` corpus.

    A worker trains ``sync_words`` words a round at the measured one-thread words/s
    of ``local:2`` times its cores (C = 16, a machine's); it sends the rows it moved and
    receives the rows anyone moved, about all 2 V d 4 bytes of syn0 and the output
    vectors once ``sync_words`` is large next to V. Through the client (a star), the
    client moves 2 N of those a round over one link; through a tree reduction, each
    link moves 2 log2(N) of them. Epochs: 5."""
    runs = [run for key, run in results.items() if key.startswith("speed/skipgram/local:2/")]
    vocab = next((run["vocab"] for key, run in results.items() if key.startswith("skipgram/")), 0)
    if not runs or not vocab:
        return ""
    per_core = statistics.median(run["words_per_s"] / run["compute_share"] for run in runs) / 2  # 2 one-thread workers
    lines = [
        "| sizes | machines | compute s a round | star: transfer s | star: efficiency | tree: transfer s |"
        " tree: efficiency | hours, tree |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, size in SIZES.items():
        words, dim = size or (vocab, SETTINGS["dim"])
        nbytes = 2 * words * dim * 4
        compute = sync_words / (per_core * 16)
        for machines in MACHINES:
            star = 2 * machines * nbytes / BANDWIDTH
            tree = 2 * (machines - 1).bit_length() * nbytes / BANDWIDTH  # ceil(log2 N) levels
            rounds = 5 * TOKENS / (sync_words * machines)
            hours = rounds * (compute + tree) / 3600
            lines.append(
                f"| {label} | {machines} | {compute:.2f} | {star:.2f} | {compute / (compute + star):.0%} |"
                f" {tree:.2f} | {compute / (compute + tree):.0%} | {hours:.1f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = study_parser(__doc__.split("\n\n")[0], RESULTS)
    parser.add_argument("--run", action="store_true", help="train and score the runs not yet done")
    parser.add_argument("--speed", action="store_true", help="time one epoch of each way (run alone)")
    parser.add_argument("--exchange", action="store_true", help="the cores busy while local:2 exchanges (alone)")
    parser.add_argument("--seeds", type=lambda t: [int(v) for v in t.split(",")], default=[1, 2, 3])
    parser.add_argument("--sync-words", type=int, default=1_000_000, help="the cost model's words a worker a round")
    args = parser.parse_args()
    if args.run or args.speed or args.exchange:
        args.work.mkdir(parents=True, exist_ok=True)
    if args.run:
        run_all(args)
    if args.speed:
        run_speed(args)
    if args.exchange:
        run_exchange(args)
    if args.render:
        results = json.loads(args.results.read_text())
        tables = (render_measured(results), render_exchange(results), cost_model(results, args.sync_words))
        print("\n\n".join(table for table in tables if table))


if __name__ == "__main__":
    main()
