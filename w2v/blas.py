"""How many threads numpy's BLAS library (matrix products) may use.

A BLAS library starts its own threads, one a core by default, each with a buffer
mapped, and those that wait for one another spin: on a busy machine a product split
across them waits on the slowest, and after it they spin on while the training
threads work. The held-out scoring between epochs does small products (a few hundred
hidden vectors against the output vectors): on a busy 2-core machine, negative
sampling's took 0.9 to 2.2 times an epoch's training with BLAS's default threads and
0.07 to 0.33 with one (docs/estimators.md, measured by ``scripts/heldout_cost.py``).

Two ways to bound them:

- ``limited(threads)`` while a block runs, through threadpoolctl where it is installed
  (``pip install 'w2v[threads]'``): a training run scores with ``SCORING_THREADS``;
- ``bound_unset(threads)`` before numpy loads, through the variables each library
  reads as it loads (the command line does, ``w2v.cli.blas``; ``import w2v`` does
  not, leaving a program's own BLAS as it chose).
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec

SCORING_THREADS = 1  # a training run's held-out scoring: at most one of the run's threads
# Each BLAS library's own thread count (OpenBLAS in numpy's and SciPy's wheels, MKL,
# BLIS, Apple's Accelerate); not OMP_NUM_THREADS, which bounds any OpenMP code.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def can_limit() -> bool:
    """Whether threadpoolctl, which bounds the threads of a loaded BLAS, is installed."""
    try:
        return find_spec("threadpoolctl") is not None
    except ValueError:  # a module of that name without a spec: taken as absent
        return False


@contextmanager
def limited(threads: int) -> Iterator[None]:
    """Run the block with BLAS using at most ``threads`` threads, where threadpoolctl
    is installed; without it, as BLAS started (``bound_unset``, or its default)."""
    if not can_limit():
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads, user_api="blas"):
        yield


def bound_unset(threads: int) -> list[str]:
    """Set each of ``THREAD_VARIABLES`` the user has not set to ``threads``, for the
    BLAS libraries loaded after (and the processes started after); the variables set."""
    unset = [name for name in THREAD_VARIABLES if name not in os.environ]
    for name in unset:
        os.environ[name] = str(threads)
    return unset
