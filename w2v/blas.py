"""How many threads numpy's BLAS library (matrix products) may use.

A BLAS library starts its own threads, one a core by default, and those that
wait for one another spin: on a busy machine a product split across them waits
on the slowest, and after it they spin on while the training threads work. The
held-out scoring between epochs does small products (a few hundred hidden
vectors against the output vectors): on a busy 2-core machine, negative
sampling's took 0.9 to 2.2 times an epoch's training with BLAS's default
threads and 0.07 to 0.33 with one (docs/estimators.md, measured by
``scripts/heldout_cost.py``). So a training run scores with ``SCORING_THREADS``.

``limited(threads)`` bounds BLAS's threads while a block runs, through
threadpoolctl where it is installed (``pip install 'w2v[threads]'``). Without it
nothing can change them once numpy is loaded: ``bound_before_numpy`` then sets
the libraries' variables, where the user has not set them, before numpy loads,
so that BLAS uses ``SCORING_THREADS`` throughout the process (``import w2v``
does, for the command line and the library alike).
"""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec

SCORING_THREADS = 1  # a training run's held-out scoring: at most one of the run's threads
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  # read as BLAS loads


def can_limit() -> bool:
    """Whether threadpoolctl, which bounds the threads of a loaded BLAS, is installed."""
    try:
        return find_spec("threadpoolctl") is not None
    except ValueError:  # a module of that name without a spec: taken as absent
        return False


@contextmanager
def limited(threads: int) -> Iterator[None]:
    """Run the block with BLAS using at most ``threads`` threads, where threadpoolctl
    is installed; without it, as the variables set before numpy loaded say
    (``bound_before_numpy``)."""
    if not can_limit():
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads, user_api="blas"):
        yield


def bound_before_numpy(threads: int = SCORING_THREADS) -> list[str]:
    """Without threadpoolctl, and before numpy is loaded, set each of
    ``THREAD_VARIABLES`` the user has not set to ``threads``; the variables set
    (none where numpy is loaded or threadpoolctl installed)."""
    if "numpy" in sys.modules or can_limit():
        return []
    unset = [name for name in THREAD_VARIABLES if name not in os.environ]
    for name in unset:
        os.environ[name] = str(threads)
    return unset
