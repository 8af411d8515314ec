"""The machine's roofs for w2v's training kernel, on a number of threads: what its cores
and its memory can do, to set a run's useful arithmetic against.

    python scripts/roofline.py --threads 2 --rows 71290 --dim 100

- **Compute roof**: numpy's ``sgemm`` (float32 matrix product) of two 4096 x 4096
  matrices on ``--threads`` OpenBLAS threads, best of 3: ``2 n^3 / seconds`` flop/s. It
  runs in a child process with ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` unset,
  which a setting meant for another processor would hold back.
- **Memory roof**: output-row updates a second. Each of ``--threads`` threads takes rows
  of a (``--rows``, ``--dim``) float32 matrix drawn as word2vec's noise words are, from
  ``P(r) ∝ (r + 1)^-0.75`` (Zipf's law for a vocabulary in frequency order, to the
  power 0.75), and for each row ``u`` computes ``f = u . x`` with an input ``x`` of its
  own and moves ``u += 1e-6 f x``: one read and one write of ``4 dim`` bytes, as the
  kernel's output units do. Also the bytes a second this moves (8 dim a row).

A run of the kernel does ``6 dim`` useful flops an output-row update (the dot product,
the input's gradient and the row's update), so its fractions of the two roofs are
``6 dim updates / seconds / compute roof`` and ``updates / seconds / memory roof``.
``scripts/bench.py`` measures both roofs in each round and prints those fractions; this
script prints the roofs as JSON.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

SGEMM_N = 4096
SGEMM_TRIES = 3
ROW_UPDATES = 4_000_000  # per thread and try
ROW_TRIES = 3
NOISE_EXPONENT = 0.75
UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")  # left out of the compute roof's environment


def sgemm_gflops(tries: int = SGEMM_TRIES, n: int = SGEMM_N) -> float:
    """The best of ``tries`` float32 products of two n x n matrices, in GFLOP/s
    (``2 n^3`` flops each), in this process with its OpenBLAS threads."""
    rng = np.random.default_rng(1)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    out = np.empty((n, n), dtype=np.float32)
    np.matmul(a, b, out=out)  # the first call sets OpenBLAS's threads and buffers up
    best = float("inf")
    for _ in range(tries):
        started = time.perf_counter()
        np.matmul(a, b, out=out)
        best = min(best, time.perf_counter() - started)
    return 2 * n**3 / best / 1e9


def compute_roof(threads: int) -> float:
    """``sgemm_gflops`` in a child process on ``threads`` OpenBLAS threads, with ``UNSET`` unset."""
    env = {key: value for key, value in os.environ.items() if key not in UNSET}
    env.update(OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    command = [sys.executable, __file__, "--sgemm-only"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout)


def noise_rows(rows: int, count: int, seed: int) -> np.ndarray:
    """``count`` row numbers (int32) below ``rows``, drawn from ``P(r) ∝ (r + 1)^-0.75``."""
    weights = np.arange(1, rows + 1, dtype=np.float64) ** -NOISE_EXPONENT
    cumulative = np.cumsum(weights / weights.sum())
    drawn = np.random.default_rng(seed).random(count)
    return np.minimum(np.searchsorted(cumulative, drawn), rows - 1).astype(np.int32)


def update_kernel():
    """The Numba kernel of the memory roof (compiled on first use; Numba is w2v's)."""
    from numba import njit

    @njit(nogil=True, fastmath={"reassoc", "contract"})
    def update_rows(matrix, drawn, x):
        """For each row ``u = matrix[r]``, r in ``drawn``: ``u += 1e-6 (u . x) x``."""
        for r in drawn:
            u = matrix[r]
            f = np.float32(0.0)
            for k in range(x.shape[0]):
                f += u[k] * x[k]
            step = np.float32(1e-6) * f
            for k in range(x.shape[0]):
                u[k] += step * x[k]

    return update_rows


def memory_roof(threads: int, rows: int, dim: int) -> dict:
    """Output-row updates a second (best of ``ROW_TRIES``) of ``threads`` threads on one
    (rows, dim) float32 matrix, and the GB/s they move (``8 dim`` bytes a row)."""
    update_rows = update_kernel()
    matrix = np.random.default_rng(2).random((rows, dim), dtype=np.float32) - np.float32(0.5)
    inputs = [np.full(dim, 0.01, dtype=np.float32) for _ in range(threads)]
    drawn = [noise_rows(rows, ROW_UPDATES, seed) for seed in range(threads)]
    update_rows(matrix, drawn[0][:10], inputs[0])  # compiled before timing
    best = float("inf")
    for _ in range(ROW_TRIES):
        workers = [threading.Thread(target=update_rows, args=(matrix, drawn[t], inputs[t])) for t in range(threads)]
        started = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        best = min(best, time.perf_counter() - started)
    updates_per_s = threads * ROW_UPDATES / best
    return {"row_updates_per_s": updates_per_s, "gb_per_s": updates_per_s * 8 * dim / 1e9}


def roofs(threads: int, rows: int, dim: int) -> dict:
    """Both roofs: ``sgemm_gflops`` and ``memory_roof``'s two figures, with the sizes."""
    return {"threads": threads, "rows": rows, "dim": dim, "sgemm_gflops": compute_roof(threads)} | memory_roof(
        threads, rows, dim
    )


def main(argv: list[str] | None = None) -> None:
    """Print the roofs as JSON (or, for ``compute_roof``'s child, the GFLOP/s alone)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rows", type=int, default=71_290, help="rows of the matrix (a run's vocabulary)")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--sgemm-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.sgemm_only:
        print(sgemm_gflops())
        return
    print(json.dumps(roofs(args.threads, args.rows, args.dim), indent=1))


if __name__ == "__main__":
    main()
