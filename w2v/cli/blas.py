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

Even on one thread, SciPy's OpenBLAS maps a 32 MB buffer as it loads and retries a
failed mapping forever (``ulimit -v 350000; w2v train small.txt`` still hung). w2v's
kernels make no BLAS call (their dot products are loops of their own), so the commands
that train or count (``NUMBA_WITHOUT_BLAS``) keep Numba from loading SciPy's BLAS at
all: Numba then finds no BLAS for ``np.dot`` in compiled code, which w2v never asks for.
"""

import sys

from w2v.blas import bound_unset

# The commands whose work is matrix products over the vocabulary (similarities,
# analogies, k-means, projections, scoring): they keep the BLAS library's threads.
BLAS_COMMANDS = frozenset(
    {"similar", "analogy", "eval", "classes", "plot", "score", "distance", "word-analogy", "compute-accuracy"}
)
# The commands whose only compiled code is w2v's kernels (training, counting): no SciPy
# is imported in them, so SciPy's BLAS modules can be marked missing for Numba.
NUMBA_WITHOUT_BLAS = frozenset({"train", "vocab", "phrases", "word2vec", "word2phrase"})
SCIPY_BLAS_MODULES = ("scipy.linalg.cython_blas", "scipy.linalg.cython_lapack")


def bound_blas_threads(args: list[str]) -> None:
    """Set each of ``blas.THREAD_VARIABLES`` that is not set to 1 for the command line ``args``
    (``sys.argv[1:]``: the command first), unless its command is one of
    ``BLAS_COMMANDS`` or numpy is loaded already (then the setting would come too late
    for it: ``w2v.cli`` imported by a program, not run). The setting stays in the
    environment, for the processes the command starts too. For the commands of
    ``NUMBA_WITHOUT_BLAS``, SciPy's BLAS modules are also marked missing, so that Numba
    does not load them."""
    if "numpy" in sys.modules or (args and args[0] in BLAS_COMMANDS):
        return
    bound_unset(1)
    if args and args[0] in NUMBA_WITHOUT_BLAS and "scipy" not in sys.modules:
        for module in SCIPY_BLAS_MODULES:  # ``import`` of a module mapped to None raises ImportError
            sys.modules.setdefault(module, None)  # type: ignore[arg-type]
