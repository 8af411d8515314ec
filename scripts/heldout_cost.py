"""What ``w2v train --heldout`` costs: scoring time against an epoch's training time.

    head -c 6000000 text8 > train.txt && tail -c 1000000 text8 > held.txt
    python scripts/heldout_cost.py train.txt held.txt                  # this checkout
    python scripts/heldout_cost.py train.txt held.txt --base /tmp/old  # and another, alternated
    python scripts/heldout_cost.py train.txt held.txt --combos sg-ns,cbow-ns --load 2 --rounds 3

Each run trains ``train.txt`` with one model and loss (2 threads, the defaults
otherwise, ``--epochs`` epochs) and scores ``held.txt`` after each epoch at the
``heldout`` defaults; the run's report gives the training seconds and the
scoring seconds apart. The table gives, per combination and checkout, the
seconds an epoch, the seconds a scoring, their ratio and the last epoch's
standard error. The full softmax is left out: an epoch on a vocabulary of this
size takes half an hour, and its scoring costs what the other word-output
losses' does.

``--load N`` keeps N more processes spinning on the CPU while it measures: a
busy machine, where BLAS threads that wait for one another spin (``w2v/blas.py``).
What BLAS may do depends on threadpoolctl, which the children find where the
Python running this script does: run it with one that has it and one that
lacks it to measure both ways of bounding BLAS. Not a test and not run in CI.
"""

import argparse
import json
import multiprocessing
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ab_kernels import ROOT, run_python

COMBOS = {  # each combination's name: its label and settings
    "sg-hs": ("skip-gram HS", {"hs": True, "negative": 0}),
    "sg-ns": ("skip-gram NS", {}),
    "sg-hs-ns": ("skip-gram HS + NS", {"hs": True, "negative": 5}),
    "sg-nce": ("skip-gram NCE 5", {"nce": 5}),
    "sg-ss": ("skip-gram sampled softmax 25", {"sampled_softmax": 25}),
    "cbow-hs": ("CBOW HS", {"model": "cbow", "hs": True, "negative": 0}),
    "cbow-ns": ("CBOW NS", {"model": "cbow"}),
}
CHILD = """
import json, sys, w2v
corpus, heldout, epochs, settings = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
report = w2v.train(corpus, heldout=heldout, epochs=epochs, threads=2, **settings).report
errors = getattr(report, "epoch_heldout_se", [0.0])
print(json.dumps([report.train_seconds / epochs, report.heldout_seconds / epochs, errors[-1]]))
"""


def one_run(checkout: Path, corpus: Path, heldout: Path, settings: dict, epochs: int) -> tuple[float, float, float]:
    """(training seconds an epoch, seconds a scoring, the last epoch's standard error;
    0.0 where the checkout gives none) of one run with ``checkout``'s w2v."""
    arguments = [str(corpus.resolve()), str(heldout.resolve()), str(epochs), json.dumps(settings)]
    done = run_python(checkout, ["-c", CHILD, *arguments])
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: run failed: {done.stderr.strip()[-500:]}")
    epoch, scoring, error = json.loads(done.stdout.splitlines()[-1])
    return epoch, scoring, error


def spin() -> None:
    """Keep a core busy until terminated."""
    while True:
        pass


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` processes spinning while the block runs."""
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(processes)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("heldout", type=Path)
    parser.add_argument("--base", type=Path, default=None, help="another checkout to measure, alternated")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each combination and checkout (medians)")
    parser.add_argument("--combos", type=lambda text: text.split(","), default=list(COMBOS),
                        help=f"combinations, comma-separated (default: {','.join(COMBOS)})")  # fmt: skip
    parser.add_argument("--load", type=int, default=0, help="processes kept spinning meanwhile (a busy machine)")
    args = parser.parse_args()
    unknown = sorted(set(args.combos) - set(COMBOS))
    if unknown:
        parser.error(f"unknown combinations: {', '.join(unknown)}")
    sides = {"this": ROOT} if args.base is None else {"base": args.base, "this": ROOT}
    print("| combination | checkout | s an epoch | s a scoring | scoring / epoch | standard error (bits) |")
    print("|---|---|---|---|---|---|")
    for combo in args.combos:
        label, settings = COMBOS[combo]
        runs: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
            for side in order:
                with busy(args.load):
                    runs[side].append(one_run(sides[side], args.corpus, args.heldout, settings, args.epochs))
        for side, figures in runs.items():
            epoch, scoring, error = (statistics.median(column) for column in zip(*figures, strict=True))
            print(f"| {label} | {side} | {epoch:.3f} | {scoring:.3f} | {scoring / epoch:.2f} | {error:.4f} |")


if __name__ == "__main__":
    main()
