"""Quality as a cluster grows, simulated on one machine: the table of studies/simulate_cluster/README.md.

    S=studies/simulate_cluster/simulate_cluster.py WHOLE=studies/simulate_cluster/distributed-simulation-whole.json
    python $S --run       # skip-gram: the grid below (about 15 min on 2 cores)
    python $S --run --workers 2 --sync-words 50000,100000 --combine sum
    python $S --run --models cbow --sync-words 50000 --combine auto
    python $S --run --models skipgram,cbow --workers 2 --sync-words 50000,100000,200000 \
        --combine sum,momentum
    python $S --run --workers 4,16 --sync-words 5000 --combine sum,momentum,mixed
    python $S --run --models skipgram,cbow --workers 4,8,16 --sync-words 50000 \
        --combine momentum,auto
    python $S --run --models skipgram,cbow --workers 2 --sync-words 50000,100000,200000 \
        --combine mixed
    python $S --render    # the markdown table from the JSON
    python $S --run --text-bytes 1000000000 --workers 1,16 --sync-words 20000 \
        --combine mean,adaptive,momentum --results $WHOLE   # the whole text
    python $S --run --text-bytes 1000000000 --models cbow --workers 1,16 \
        --sync-words 20000 --combine mean,momentum --results $WHOLE
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 16 \
        --sync-words 5000,20000 --combine momentum,mixed --results $WHOLE
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 16 \
        --sync-words 50000 --combine momentum,auto --results $WHOLE
    python $S --run --workers 8 --sync-words 5000 --combine mixed
    python $S --run --models skipgram,cbow --workers 4 --sync-words 16666 --combine auto
    python $S --run --models skipgram,cbow --workers 8 --sync-words 7142 --combine auto
    python $S --run --models skipgram,cbow --workers 16 --sync-words 3333 --combine auto
    python $S --run --models skipgram,cbow --workers 16 --sync-words 1666,6666 \
        --combine auto --results stale.json    # and --workers 8 with 3571,14285, --workers 4 with 8333,33333
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 16 \
        --sync-words 3333 --combine auto --results $WHOLE
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 8 \
        --sync-words 7142 --combine auto --results $WHOLE  # and 4 at 16666
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 1,16 \
        --sync-words 3333 --combine auto --seed 2 --results seeds.json    # and --seed 3
    python $S --run --models cbow --workers 4,8,16 --sync-words 5000,20000 --combine mixed
    python $S --run --models skipgram,cbow --workers 16 --sync-words 50000 \
        --combine auto --exact syn1neg     # and --exact syn0, --exact syn0,syn1neg
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 16 \
        --sync-words 50000 --combine auto --exact syn1neg --results $WHOLE  # and syn0
    python $S --run --models skipgram,cbow --workers 1 --batch-words 5000
    python $S --run --text-bytes 1000000000 --models skipgram,cbow --workers 1 \
        --batch-words 5000 --results $WHOLE

A run of N workers is simulated by N replicas (``w2v.cluster.rounds.Replica``) in one process,
trained round by round in turn and combined by the same ``Ledger.record`` and
``rounds.combine`` that ``w2v train --cluster`` uses, each replica on its own contiguous
parts of the corpus (``parts.split_sources``, ``parts.groups_of``). Only the
replicas' order in time differs from a cluster, where they train at once: every
replica of a round starts from the same weights either way. ``--exact WEIGHTS`` does not
combine those weights but passes them from replica to replica in turn, as one process'
threads share them, to price the combining of the others; ``--batch-words`` sets the
batches (a replica in rounds shorter than that trains batches of exactly its round's
words, ``rounds.Replica``).

The training text is the first ``SIM_BYTES`` (``--text-bytes``) of the benchmark corpus'
training split (``scripts/quality.py`` splits it: its last 2 MB are the held-out text),
so that the grid fits in under an hour. Each run: skip-gram or CBOW with negative sampling, 2
threads, dim 100, window 5, sample 1e-4, ``EPOCHS`` epochs; scored by ``w2v score``
(held-out bits per word) and ``w2v eval`` (analogies, WordSim-353). The grid: N = 1
(the single-process run: rounds change nothing), and the N > 1 of ``WORKERS`` x ``SYNC_WORDS``
x ``COMBINE``. Results go to ``distributed-simulation.json`` beside this script, run by
run (those of the whole text in ``distributed-simulation-whole.json``); a run already there
is not redone. Not a test and not run in CI.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from w2v.cluster.rounds import Ledger, Replica, Rows, changes_nbytes
from w2v.config import COMBINE as RULES
from w2v.config import TrainConfig
from w2v.corpus.counting import CountTable, count_table
from w2v.corpus.parts import groups_of, split_sources
from w2v.corpus.vocab import Vocab
from w2v.engine.weights import Model
from w2v.errors import DivergedError
from w2v.vectorio.modelfile import TrainState
from w2v.vectors.wordvectors import Vectors
from w2v.words import decode_word

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the shared helpers: scripts/quality.py

from quality import SCORE_PAIRS, cut_at_space, split_corpus, study_parser, w2v_json  # noqa: E402

RESULTS = HERE / "distributed-simulation.json"
SIM_BYTES = 24_000_000
EPOCHS = 3
WORKERS = (1, 2, 4, 8, 16)
SYNC_WORDS = (20_000, 200_000)
COMBINE = tuple(rule for rule in RULES if rule != "auto")  # the named rules; ``auto`` picks one of them
MODELS = ("skipgram", "cbow")
SETTINGS = {"threads": 2, "dim": 100, "window": 5, "sample": 1e-4, "epochs": EPOCHS, "negative": 5}
BATCH_WORDS = TrainConfig().batch_words


def simulate(
    corpus: Path, config: TrainConfig, workers: int, vocab: Vocab, exact: tuple[str, ...] = ()
) -> tuple[dict, Ledger]:
    """Train ``workers`` replicas of ``config`` on ``corpus`` in rounds, in turn; the
    weights of record and the run's ledger. The weights named in ``exact`` are not
    combined: each replica starts its round from them as the one before it left them,
    as one process' threads share them, so that a run shows what combining the others
    costs."""
    model = Model.build(vocab, config)
    weights = {"syn0": model.syn0, "syn1": model.tables.syn1, "syn1neg": model.tables.syn1neg}
    groups = groups_of(split_sources([str(corpus)], workers), workers)
    replicas = [Replica(group, vocab, config, tuple(weights.values()), replicas=workers) for group in groups]
    combined = {name: matrix for name, matrix in weights.items() if name not in exact}
    ledger = Ledger(np.array([replica.size() for replica in replicas]), config, combined)
    for k, replica in enumerate(replicas):
        replica.place(ledger.placement(k))
    update = None
    while active := ledger.active():
        started = time.perf_counter()
        results = {}
        for k in active:
            replicas[k].take({name: Rows(None, weights[name]) for name in exact})
            results[k] = replicas[k].train_round(update, ledger.trained, len(active), ledger.sync_words)
            for name in exact:
                weights[name][:] = replicas[k].weights()[name]
                results[k].changes.pop(name, None)
            results[k].nbytes = changes_nbytes(results[k].changes)
        update = ledger.record(update, results, started)
    for replica in replicas:
        replica.close()
    return weights, ledger


def simulated_run(corpus: Path, settings: dict, workers: int, exact: tuple[str, ...] = ()) -> tuple[dict, Ledger]:
    """``simulate`` of ``workers`` replicas with ``settings`` (``w2v.train``'s keywords) on
    ``corpus``, counted and its vocabulary chosen as ``w2v train`` does."""
    config = TrainConfig(**settings).resolved()
    return simulate(corpus, config, workers, vocabulary(count_table([str(corpus)]), config), exact)


def vocabulary(table: CountTable, config: TrainConfig) -> Vocab:
    """The vocabulary ``config`` keeps of the counts in ``table``."""
    return Vocab.choose(table.words, table.counts, config.min_count, None)


def run_one(
    corpus: Path, heldout: Path, config: TrainConfig, workers: int, vocab: Vocab, work: Path, exact: tuple[str, ...]
) -> dict:
    """One simulated run (``simulate``), scored; its record."""
    started = time.perf_counter()
    try:
        weights, ledger = simulate(corpus, config, workers, vocab, exact)
    except DivergedError as err:
        return {"diverged": str(err)}
    seconds = time.perf_counter() - started
    losses = ledger.loss.copy()
    batches = int(ledger.sizes[:, 0].sum())
    state = TrainState(
        config=config,
        vocab=vocab,
        syn0=weights["syn0"],
        syn1=weights["syn1"],
        syn1neg=weights["syn1neg"],
        epoch_loss=losses,
        epoch_examples=ledger.examples.copy(),
        jobs_done=batches * config.epochs,
        batches=batches,
        stream_words=int(ledger.sizes[:, 1].sum()),
    )
    model_file, vectors_file = work / "model.npz", work / "vectors.bin"
    state.save(str(model_file))
    Vectors([decode_word(word) for word in vocab.words], weights["syn0"]).save(vectors_file)
    score = w2v_json("score", str(model_file), str(heldout), "--max-pairs", str(SCORE_PAIRS))
    evaluation = w2v_json("eval", "-v", str(vectors_file))
    rounds = ledger.log
    return {
        "seconds": seconds,
        "rounds": len(rounds),
        "bytes_per_round": float(np.mean([r.bytes_out + r.bytes_in for r in rounds])),
        "final_loss": ledger.epoch_loss(config.epochs - 1),
        "bits_per_word": score["bits_per_word"],
        "analogy": evaluation["analogies"][0]["accuracy"],
        "ws353": evaluation["similarity"][0]["spearman"],
    }


def grid(models: list[str], workers: list[int], syncs: list[int], combines: list[str]) -> list[tuple]:
    """(model, N, sync words, combine) of every run: N = 1 once per model (its rounds
    change nothing), then the grid of N > 1."""
    runs = [(model, 1, syncs[-1], "mean") for model in models if 1 in workers]
    runs += [(m, n, s, c) for m in models for n in workers if n > 1 for s in syncs for c in combines]
    return runs


def run_grid(args: argparse.Namespace) -> None:
    """Every run of the grid not yet in the results file."""
    paths = split_corpus(args.corpus, args.work)
    corpus = args.work / f"simulation-{args.text_bytes}.txt"
    if not corpus.exists():
        text = paths["train"].read_bytes()
        corpus.write_bytes(text[: cut_at_space(text, args.text_bytes)])
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    table = count_table([str(corpus)])
    for model, workers, sync, combine in grid(args.models, args.workers, args.sync_words, args.combine):
        key = f"{model}/N={workers}/sync={sync}/{combine}/seed={args.seed}"
        exact = tuple(args.exact) if workers > 1 else ()
        key += f"/exact={'+'.join(exact)}" if exact else ""
        key += f"/batch={args.batch_words}" if args.batch_words != BATCH_WORDS else ""
        if key in results:
            continue
        print(f"{key} ...", file=sys.stderr, flush=True)
        config = TrainConfig(
            model=model, seed=args.seed, sync_words=sync, combine=combine, batch_words=args.batch_words, **SETTINGS
        ).resolved()
        vocab = vocabulary(table, config)
        with tempfile.TemporaryDirectory(dir=args.work) as work:
            results[key] = run_one(corpus, paths["heldout"], config, workers, vocab, Path(work), exact)
        args.results.write_text(json.dumps(results, indent=1) + "\n")


def table_order(key: str) -> tuple:
    """Where the run ``key`` goes in the table: by model, N, sync words (none for N = 1),
    combining rule, then its other settings (``exact``, ``batch``; none first)."""
    model, workers, sync, combine, _seed, *others = key.split("/")
    rules = [*COMBINE, "auto"]
    workers_count = int(workers.removeprefix("N="))
    place = MODELS.index(model), workers_count, int(sync.removeprefix("sync=")) if workers_count > 1 else 0
    return *place, rules.index(combine), others


def render(results: dict) -> str:
    """The markdown table: a row per run, by model, N, sync words and combining."""
    lines = [
        "| model | N | sync words | combine | rounds | MiB a round | held-out bits/word | analogy % | WS-353 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, run in sorted(results.items(), key=lambda item: table_order(item[0])):
        model, workers, sync, combine, _seed, *others = key.split("/")
        workers, sync = workers.removeprefix("N="), int(sync.removeprefix("sync="))
        sync_cell, combine_cell = ("-", "-") if workers == "1" else (f"{sync:,}", combine)
        settings = dict(other.split("=") for other in others)
        if "exact" in settings:
            combine_cell += ", exact " + settings["exact"].replace("+", " and ")
        if "batch" in settings:
            sync_cell += f" (batches of {int(settings['batch']):,})"
        if "diverged" in run:
            lines.append(f"| {model} | {workers} | {sync_cell} | {combine_cell} | diverged | | | | |")
            continue
        lines.append(
            f"| {model} | {workers} | {sync_cell} | {combine_cell} | {run['rounds']} | "
            f"{run['bytes_per_round'] / 2**20:,.1f} | {run['bits_per_word']:.4f} | "
            f"{100 * run['analogy']:.1f} | {run['ws353']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    def numbers(text: str) -> list[int]:
        return [int(value) for value in text.split(",")]

    def weight_names(text: str) -> list[str]:
        names = text.split(",")
        if not set(names) <= {"syn0", "syn1", "syn1neg"}:
            raise argparse.ArgumentTypeError(f"not weights: {text} (syn0, syn1, syn1neg)")
        return names

    parser = study_parser(__doc__.split("\n\n")[0], RESULTS)
    parser.add_argument("--run", action="store_true", help="train and score the runs not yet done")
    parser.add_argument("--models", type=lambda t: t.split(","), default=["skipgram"], help=",".join(MODELS))
    parser.add_argument("--workers", type=numbers, default=list(WORKERS), help="simulated cluster sizes N")
    parser.add_argument("--sync-words", type=numbers, default=list(SYNC_WORDS))
    parser.add_argument("--combine", type=lambda t: t.split(","), default=list(COMBINE))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--batch-words", type=int, default=BATCH_WORDS,
        help="ids a batch, to the next sentence end (N > 1: at most a round's words, exactly)",
    )  # fmt: skip
    parser.add_argument(
        "--exact", type=weight_names, default=[],
        help="weights (syn0, syn1, syn1neg) passed from replica to replica in turn instead of combined",
    )  # fmt: skip
    parser.add_argument("--text-bytes", type=int, default=SIM_BYTES, help="bytes of training text")
    args = parser.parse_args()
    if args.run:
        args.work.mkdir(parents=True, exist_ok=True)
        run_grid(args)
    if args.render:
        print(render(json.loads(args.results.read_text())))


if __name__ == "__main__":
    main()
