"""What ``w2v train --heldout`` costs: scoring time against an epoch's training time.

    head -c 6000000 text8 > train.txt && tail -c 1000000 text8 > held.txt
    python scripts/heldout_cost.py train.txt held.txt                  # this checkout
    python scripts/heldout_cost.py train.txt held.txt --base /tmp/old  # and another, alternated

Each run trains ``train.txt`` with one model and loss (2 threads, the defaults
otherwise, ``--epochs`` epochs) and scores ``held.txt`` after each epoch at the
``heldout`` defaults; the run's report gives the training seconds and the
scoring seconds apart. The table gives, per combination and checkout, the
seconds an epoch, the seconds a scoring, their ratio and the last epoch's
standard error. The full softmax is left out: an epoch on a vocabulary of this
size takes half an hour, and its scoring costs what the other word-output
losses' does. Not a test and not run in CI.
"""

import argparse
import json
import statistics
from pathlib import Path

from ab_kernels import ROOT, run_python

COMBOS = {
    "skip-gram HS": {"hs": True},
    "skip-gram NS": {},
    "skip-gram HS + NS": {"hs": True, "negative": 5},
    "skip-gram NCE 5": {"nce": 5},
    "skip-gram sampled softmax 25": {"sampled_softmax": 25},
    "CBOW HS": {"model": "cbow", "hs": True},
    "CBOW NS": {"model": "cbow"},
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("heldout", type=Path)
    parser.add_argument("--base", type=Path, default=None, help="another checkout to measure, alternated")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each combination and checkout (medians)")
    args = parser.parse_args()
    sides = {"this": ROOT} if args.base is None else {"base": args.base, "this": ROOT}
    print("| combination | checkout | s an epoch | s a scoring | scoring / epoch | standard error (bits) |")
    print("|---|---|---|---|---|---|")
    for combo, settings in COMBOS.items():
        runs: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
            for side in order:
                runs[side].append(one_run(sides[side], args.corpus, args.heldout, settings, args.epochs))
        for side, figures in runs.items():
            epoch, scoring, error = (statistics.median(column) for column in zip(*figures, strict=True))
            print(f"| {combo} | {side} | {epoch:.3f} | {scoring:.3f} | {scoring / epoch:.2f} | {error:.4f} |")


if __name__ == "__main__":
    main()
