"""A/B of the training speed of two checkouts of w2v, on alternated whole runs.

    git worktree add /tmp/w2v-base main      # the code to compare against
    python scripts/ab_kernels.py /tmp/w2v-base --model skipgram --hs --threads 2 --rounds 5

Each round trains ``--epochs`` epochs of the corpus once with each checkout
(``python -m w2v train`` with that checkout first on ``PYTHONPATH``), in an order
that alternates from round to round, and reads the training's words/s from the
summary line (the epochs alone: reading the corpus is not counted). This
machine's speed drifts over minutes, so a single timing says little: the
variant's speed over the base is taken per round, where both runs met the
machine in the same state, and reported as the median and quartiles of those
ratios. A first run of each checkout on the sample corpus loads (or compiles)
its kernels, so compilation is never timed.

Two settings of one checkout compare the same way, with options for each side:

    python scripts/ab_kernels.py . --base-args="--negative 5" --variant-args="--nce 5"

Not a test and not run in CI; docs/performance.md says what it measured.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data/sample.txt.gz"
RATE = re.compile(r"\(([\d,]+) words/s\)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path, help="the checkout to compare against (a folder holding w2v/)")
    parser.add_argument("--variant", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument("--model", choices=["skipgram", "cbow"], default="skipgram")
    parser.add_argument("--hs", action="store_true", help="hierarchical softmax (alone unless --negative)")
    parser.add_argument("--negative", type=int, default=None, help="noise words (default 5, or 0 with --hs)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base-args", type=shlex.split, default=[], help="more train options for the base only")
    parser.add_argument("--variant-args", type=shlex.split, default=[], help="and for the variant only")
    args = parser.parse_args(argv)
    for checkout in (args.base, args.variant):
        if not (checkout / "w2v/__init__.py").is_file():
            parser.error(f"not a checkout of w2v (no w2v/__init__.py): {checkout}")
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")
    if min(args.rounds, args.epochs, args.threads) < 1:
        parser.error("--rounds, --epochs and --threads must be at least 1")
    return args


def train_options(args: argparse.Namespace) -> list[str]:
    """The ``w2v train`` options both checkouts run with."""
    options = ["--model", args.model, "--threads", str(args.threads), "--dim", str(args.dim)]
    options += ["--window", str(args.window), "--sample", str(args.sample), "--epochs", str(args.epochs)]
    if args.hs:
        options.append("--hs")
    if args.negative is not None:
        options += ["--negative", str(args.negative)]
    return options


def run_python(checkout: Path, arguments: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run Python with ``checkout``'s w2v first on the path: from inside the checkout
    (Python puts the working directory before everything else, an installed w2v
    and ``PYTHONPATH`` included) and with the checkout on ``PYTHONPATH``, ``env``
    added to the environment."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(checkout.resolve())}
    command = [sys.executable, *arguments]
    return subprocess.run(command, env=env, cwd=checkout, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def imported_from(checkout: Path) -> Path:
    """The folder of the w2v package that ``run_python(checkout, ...)`` imports."""
    done = run_python(checkout, ["-c", "import w2v; print(w2v.__file__)"])
    if done.returncode != 0:
        sys.exit(f"{checkout}: import w2v failed: {done.stderr.strip()[-500:]}")
    return Path(done.stdout.strip()).resolve().parent


def words_per_second(checkout: Path, corpus: Path, options: list[str], output: Path) -> float:
    """Train ``corpus`` with ``checkout``'s w2v; its training words/s."""
    done = run_python(checkout, ["-m", "w2v", "train", str(corpus.resolve()), "-o", str(output.resolve()), *options])
    found = RATE.search(done.stderr)
    if done.returncode != 0 or found is None:
        sys.exit(f"{checkout}: w2v train failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return float(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    options = train_options(args)
    checkouts = [args.base, args.variant]
    sides = [[*options, *args.base_args], [*options, *args.variant_args]]
    rates = np.zeros((args.rounds, 2))
    for checkout in checkouts:
        if (package := imported_from(checkout)) != (checkout / "w2v").resolve():
            sys.exit(f"{checkout}: Python imports w2v from {package}, not from the checkout")
    with tempfile.TemporaryDirectory(prefix="w2v-ab-") as workdir:
        output = Path(workdir) / "vectors.bin"
        for checkout, side in zip(checkouts, sides, strict=True):  # loads or compiles the kernels outside the timings
            words_per_second(checkout, SAMPLE, [*side, "--epochs", "1"], output)
        for r in range(args.rounds):
            for i in (0, 1) if r % 2 == 0 else (1, 0):
                rates[r, i] = words_per_second(checkouts[i], args.corpus, sides[i], output)
    ratios = rates[:, 1] / rates[:, 0]
    q1, median, q3 = np.percentile(ratios, [25, 50, 75])
    print(f"{args.rounds} rounds of {args.epochs} epoch(s) on {args.corpus.name}: {' '.join(options)}")
    base, variant = shlex.join([str(args.base), *args.base_args]), shlex.join([str(args.variant), *args.variant_args])
    print(f"base {base}: {np.median(rates[:, 0]) / 1e3:,.0f} kw/s (median)")
    print(f"variant {variant}: {np.median(rates[:, 1]) / 1e3:,.0f} kw/s (median); "
          f"speed over base per round: median {median:.3f} (quartiles {q1:.3f}, {q3:.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
