"""Cold-cache compile times of two checkouts of w2v, on alternated runs.

    git worktree add /tmp/w2v-base main      # the code to compare against
    python scripts/compile_times.py /tmp/w2v-base --rounds 3

Each round runs, for each checkout in an order that alternates from round to
round, with an empty ``NUMBA_CACHE_DIR`` of its own: the README's quickstart
(``w2v train data/sample.txt.gz -o vectors.bin``), then, on the cache that left,
each ``--then`` command (by default ``--dim 300 --model cbow --hs`` on the same
sample). The compile times are those the summary lines give ("N s compiling the
kernels"; 0 where a run compiled nothing). Prints each run's figures and the
medians. Not a test and not run in CI; the compile-once issue's note gives its
figures.
"""

import argparse
import re
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np
from ab_kernels import SAMPLE, imported_from, run_python

COMPILING = re.compile(r"([\d.]+) s compiling the kernels")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path, help="the checkout to compare against (a folder holding w2v/)")
    parser.add_argument("--variant", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--then",
        action="append",
        type=shlex.split,
        help="train options of a run after the quickstart, on its cache (repeatable) "
        "[default: --dim 300 --model cbow --hs]",
    )
    args = parser.parse_args(argv)
    args.then = args.then or [["--dim", "300", "--model", "cbow", "--hs"]]
    for checkout in (args.base, args.variant):
        if not (checkout / "w2v/__init__.py").is_file():
            parser.error(f"not a checkout of w2v (no w2v/__init__.py): {checkout}")
    return args


def compile_seconds(checkout: Path, options: list[str], cache: Path, output: Path) -> float:
    """Train the sample with ``checkout``'s w2v and Numba's cache in ``cache``: the
    seconds its summary gives to compiling (0.0 when it names none)."""
    arguments = ["-m", "w2v", "train", str(SAMPLE), "-o", str(output), *options]
    done = run_python(checkout, arguments, {"NUMBA_CACHE_DIR": str(cache)})
    if done.returncode != 0:
        sys.exit(f"{checkout}: w2v train failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    found = COMPILING.search(done.stderr.strip().splitlines()[-1])
    return float(found.group(1)) if found else 0.0


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    checkouts = [args.base, args.variant]
    for checkout in checkouts:
        if (package := imported_from(checkout)) != (checkout / "w2v").resolve():
            sys.exit(f"{checkout}: Python imports w2v from {package}, not from the checkout")
    seconds = np.zeros((1 + len(args.then), args.rounds, 2))
    with tempfile.TemporaryDirectory(prefix="w2v-compile-") as workdir:
        output = Path(workdir) / "vectors.bin"
        for r in range(args.rounds):
            for i in (0, 1) if r % 2 == 0 else (1, 0):
                cache = Path(workdir) / f"cache-{r}-{i}"
                for k, options in enumerate([[], *args.then]):
                    seconds[k, r, i] = compile_seconds(checkouts[i], options, cache, output)
                print(f"round {r + 1}, {checkouts[i]}: " + ", ".join(f"{s:.1f} s" for s in seconds[:, r, i]))
    for k, options in enumerate([["(quickstart)"], *args.then]):
        base, variant = np.median(seconds[k], axis=0)
        print(f"{' '.join(options)}: compiling {base:.1f} s (base) -> {variant:.1f} s (variant), medians")


if __name__ == "__main__":
    main()
