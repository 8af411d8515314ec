"""A/B of the training speed of two checkouts of w2v, on alternated whole runs.

    git worktree add /tmp/w2v-base main      # the code to compare against
    python scripts/ab_kernels.py /tmp/w2v-base --dims 50,100,128,200,300 --rounds 5

Each round trains ``--epochs`` epochs of the corpus once with each checkout
(``python -m w2v train`` with that checkout first on ``PYTHONPATH``) for every case,
a combination of ``--combos`` (skip-gram or CBOW, negative sampling or
hierarchical softmax; all four by default) and ``--dims``, in an order that
alternates from case to case and round to round, and reads the training's
words/s from the summary line (the epochs alone: reading the corpus is not
counted). This machine's speed drifts over minutes, so a single timing says
little: the variant's speed over the base is taken per round, where both runs met
the machine in the same state, and each case is reported as the median and
quartiles of those ratios, in one table, with the median over all the cases.
A first run of each checkout and case on the sample corpus loads (or compiles)
its kernels, so compilation is never timed.

Two settings of one checkout compare the same way, with options for each side:

    python scripts/ab_kernels.py . --combos sg-ns --base-args="--negative 5" --variant-args="--nce 5"

Not a test and not run in CI; docs/performance.md says what it measured.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data/sample.txt.gz"
RATE = re.compile(r"\(([\d,]+) words/s\)")
COMBOS = {  # each combination's name, label and options, as scripts/bench.py names them
    "sg-ns": ("skip-gram NS", ["--model", "skipgram"]),
    "cbow-ns": ("CBOW NS", ["--model", "cbow"]),
    "sg-hs": ("skip-gram HS", ["--model", "skipgram", "--hs"]),
    "cbow-hs": ("CBOW HS", ["--model", "cbow", "--hs"]),
    "sg-nce": ("skip-gram NCE", ["--model", "skipgram", "--nce", "5"]),
    "sg-sampled": ("skip-gram sampled softmax", ["--model", "skipgram", "--sampled-softmax", "5"]),
}


class Case(NamedTuple):
    """One line of the table: a combination at a vector size."""

    combo: str  # a key of COMBOS
    dim: int

    @property
    def label(self) -> str:
        return f"{COMBOS[self.combo][0]}, dim {self.dim}"

    def options(self, args: argparse.Namespace) -> list[str]:
        """The ``w2v train`` options both checkouts run the case with."""
        options = [*COMBOS[self.combo][1], "--threads", str(args.threads), "--dim", str(self.dim), "--window"]
        return [*options, str(args.window), "--sample", str(args.sample), "--epochs", str(args.epochs)]


def names(text: str, known: dict | None = None) -> list[str]:
    """The comma-separated items of ``text``, each one of ``known`` if given."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in items if known is not None and item not in known]
    if unknown or not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(known or ['sizes'])}")
    return items


def sizes(text: str) -> list[int]:
    """The comma-separated vector sizes of ``text``."""
    try:
        dims = [int(item) for item in names(text)]
    except ValueError as error:
        raise argparse.ArgumentTypeError("expected a comma-separated list of vector sizes") from error
    if min(dims) < 1:
        raise argparse.ArgumentTypeError("vector sizes must be at least 1")
    return dims


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path, help="the checkout to compare against (a folder holding w2v/)")
    parser.add_argument("--variant", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument("--combos", type=lambda text: names(text, COMBOS), default=list(COMBOS),
                        help=f"combinations, comma-separated (default: {','.join(COMBOS)})")  # fmt: skip
    parser.add_argument("--dims", type=sizes, default=[100], help="vector sizes, comma-separated (default: 100)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base-args", type=shlex.split, default=[], help="more train options for the base only")
    parser.add_argument("--variant-args", type=shlex.split, default=[], help="and for the variant only")
    parser.add_argument("--json", type=Path, help="also write every run's words/s here")
    args = parser.parse_args(argv)
    for checkout in (args.base, args.variant):
        if not (checkout / "w2v/__init__.py").is_file():
            parser.error(f"not a checkout of w2v (no w2v/__init__.py): {checkout}")
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")
    if min(args.rounds, args.epochs, args.threads) < 1:
        parser.error("--rounds, --epochs and --threads must be at least 1")
    return args


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


def measure(args: argparse.Namespace, cases: list[Case]) -> np.ndarray:
    """The words/s of every run: (rounds, cases, 2), the base's then the variant's.
    Each checkout first runs each case once on the sample corpus, untimed."""
    checkouts = [args.base, args.variant]
    extra = [args.base_args, args.variant_args]
    rates = np.zeros((args.rounds, len(cases), 2))
    with tempfile.TemporaryDirectory(prefix="w2v-ab-") as workdir:
        output = Path(workdir) / "vectors.bin"
        for case in cases:  # loads or compiles the kernels outside the timings
            for checkout, more in zip(checkouts, extra, strict=True):
                words_per_second(checkout, SAMPLE, [*case.options(args), *more, "--epochs", "1"], output)
        for r in range(args.rounds):
            for c, case in enumerate(cases):
                for side in (0, 1) if (r + c) % 2 == 0 else (1, 0):
                    options = [*case.options(args), *extra[side]]
                    rates[r, c, side] = words_per_second(checkouts[side], args.corpus, options, output)
    return rates


def table(cases: list[Case], rates: np.ndarray) -> list[str]:
    """Markdown lines: each case's median words/s per side and the variant's speed
    over the base per round (median and quartiles), then the median over the cases."""
    ratios = rates[:, :, 1] / rates[:, :, 0]
    lines = ["| case | base kw/s | variant kw/s | variant over base, median (quartiles) |", "|---|---|---|---|"]
    for c, case in enumerate(cases):
        q1, median, q3 = np.percentile(ratios[:, c], [25, 50, 75])
        base, variant = np.median(rates[:, c, 0]) / 1e3, np.median(rates[:, c, 1]) / 1e3
        lines.append(f"| {case.label} | {base:,.0f} | {variant:,.0f} | {median:.3f} ({q1:.3f}, {q3:.3f}) |")
    medians = np.median(ratios, axis=0)
    lines.append(f"\nmedian over the {len(cases)} case(s): {np.median(medians):.3f}; lowest {medians.min():.3f}")
    return lines


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    for checkout in (args.base, args.variant):
        if (package := imported_from(checkout)) != (checkout / "w2v").resolve():
            sys.exit(f"{checkout}: Python imports w2v from {package}, not from the checkout")
    cases = [Case(combo, dim) for combo in args.combos for dim in args.dims]
    rates = measure(args, cases)
    if args.json is not None:
        record = {case.label: rates[:, c].tolist() for c, case in enumerate(cases)}
        args.json.write_text(json.dumps({"base": str(args.base), "variant": str(args.variant), "rates": record}))
    base, variant = shlex.join([str(args.base), *args.base_args]), shlex.join([str(args.variant), *args.variant_args])
    print(f"{args.rounds} rounds of {args.epochs} epoch(s) on {args.corpus.name}, {args.threads} thread(s), "
          f"window {args.window}, sample {args.sample:g}")  # fmt: skip
    print(f"base {base}\nvariant {variant}\n")
    print("\n".join(table(cases, rates)))


if __name__ == "__main__":
    main()
