"""The BLAS library's threads for a command: one, unless its work is numpy's matrix
products; set before numpy is first imported.

A BLAS library starts a thread per core as it loads, each with a 32 MB buffer mapped:
numpy's OpenBLAS as numpy loads, SciPy's when Numba loads its first kernel (Numba
imports ``scipy.linalg`` for its own BLAS calls where SciPy is installed). Under a
memory limit they took the room: ``ulimit -v 400000; w2v train small.txt`` hung at
100% CPU, SciPy's OpenBLAS retrying the failed mapping forever, deaf to SIGTERM (a
little above that limit, a thread that could not start ended in a segfault). The
library reads its thread count from the environment as it loads, so
``bound_blas_threads`` runs first in ``w2v.cli``, before the commands' imports load
numpy. Training's work is Numba's kernels, in threads of its own.
"""

import os
import sys

# The commands whose work is matrix products over the vocabulary (similarities,
# analogies, k-means, projections, scoring): they keep the BLAS library's threads.
BLAS_COMMANDS = frozenset(
    {"similar", "analogy", "eval", "classes", "plot", "score", "distance", "word-analogy", "compute-accuracy"}
)
# Each BLAS library's own thread count (OpenBLAS in numpy's and SciPy's wheels, MKL,
# BLIS, Apple's Accelerate); not OMP_NUM_THREADS, which bounds any OpenMP code.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def bound_blas_threads(args: list[str]) -> None:
    """Set each of ``THREAD_VARIABLES`` that is not set to 1 for the command line ``args``
    (``sys.argv[1:]``: the command first), unless its command is one of
    ``BLAS_COMMANDS`` or numpy is loaded already (then the setting would come too late
    for it: ``w2v.cli`` imported by a program, not run). The setting stays in the
    environment, for the processes the command starts too."""
    if "numpy" in sys.modules or (args and args[0] in BLAS_COMMANDS):
        return
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
