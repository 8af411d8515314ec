"""Peak memory of counting a corpus of many distinct words: ``w2v vocab --prune-at P``.

Writes corpora of N distinct words (each seen once, 8 bytes: 'w' and 7 base-36 digits, in
random order) with one of 100 frequent words after every 4 of them (they survive pruning,
so the vocabulary is not empty), runs ``w2v vocab CORPUS --prune-at P`` on each under
``/usr/bin/time -f %M`` (the peak resident set size, KiB), and prints the peaks and what
each distinct word costs: the slope between the corpora, and over a run on 1,000 words
(Python, numpy and Numba). ``--train`` runs ``w2v train --epochs 1 --dim 8 --threads 1``
instead, which also encodes the corpus.

    python scripts/counting_memory.py                       # N = 1M and 5M, --prune-at 100000
    python scripts/counting_memory.py --distinct 1e6 5e6 1e7 --prune-at 100000 [--train]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DIGITS = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
WORD = 9  # bytes a word takes in the corpus: 'w', 7 digits, a space or a newline


def write_corpus(path: Path, distinct: int, frequent: int = 100, every: int = 4, per_line: int = 20) -> int:
    """Write ``distinct`` words seen once and the frequent ones to ``path``; returns its tokens."""
    rng = np.random.default_rng(0)
    tokens = distinct + distinct // every
    rows = np.empty((tokens, WORD), dtype=np.uint8)
    rare = np.ones(tokens, dtype=bool)
    rare[every :: every + 1] = False
    numbers = np.empty(tokens, dtype=np.int64)
    numbers[rare] = rng.permutation(int(rare.sum()))  # distinct, give or take one
    numbers[~rare] = rng.integers(0, frequent, tokens - rare.sum())
    rows[:, 0] = np.where(rare, ord("w"), ord("f"))
    for column in range(WORD - 2, 0, -1):
        rows[:, column] = DIGITS[numbers % 36]
        numbers //= 36
    rows[:, -1] = ord(" ")
    rows[per_line - 1 :: per_line, -1] = ord("\n")
    rows[-1, -1] = ord("\n")
    rows.tofile(path)
    return tokens


def peak_kib(corpus: Path, prune_at: int, folder: str, train: bool) -> int:
    """The peak RSS (KiB) of ``w2v vocab CORPUS --prune-at PRUNE_AT`` (or of ``w2v train``)."""
    command = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "w2v", "train" if train else "vocab", str(corpus)]
    command += ["-o", os.path.join(folder, "out.txt"), "--prune-at", str(prune_at)]
    if train:
        command += ["--epochs", "1", "--dim", "8", "--threads", "1", "-q"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=folder)
    if done.returncode != 0:
        sys.exit(f"w2v vocab failed: {done.stderr}")
    return int(done.stderr.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--distinct", type=float, nargs="+", default=[1e6, 5e6], help="distinct words per corpus")
    parser.add_argument("--prune-at", type=int, default=100_000)
    parser.add_argument("--train", action="store_true", help="measure w2v train, not w2v vocab")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.distinct)
    with tempfile.TemporaryDirectory(prefix="w2v-counting-memory-") as folder:
        corpus = Path(folder) / "corpus.txt"
        write_corpus(corpus, 1000)
        base = peak_kib(corpus, args.prune_at, folder, args.train)
        command = "w2v train" if args.train else "w2v vocab"
        print(f"{command} --prune-at {args.prune_at:,}: a run on 1,000 distinct words peaks at {base / 1024:.0f} MiB")
        print("distinct words\tpeak MiB\tbytes/word over 1,000 words\tbytes/word over the previous row")
        previous = None
        for distinct in sizes:
            write_corpus(corpus, distinct)
            peak = peak_kib(corpus, args.prune_at, folder, args.train)
            over_base = (peak - base) * 1024 / distinct
            slope = "" if previous is None else f"{(peak - previous[1]) * 1024 / (distinct - previous[0]):.1f}"
            print(f"{distinct:,}\t{peak / 1024:.0f}\t{over_base:.1f}\t{slope}")
            previous = (distinct, peak)


if __name__ == "__main__":
    main()
