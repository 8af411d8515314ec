"""Nearest-neighbour search on a unit-normalised matrix, in blocks of rows (numpy BLAS).

``unit_rows`` makes the matrix (V, D). Each block of ``BLOCK_ROWS`` rows is multiplied
by the query vectors at once and its best ``n + len(exclude)`` rows kept with
``np.argpartition``, so a 3M-word vocabulary is searched without a (V,) copy of
anything but the scores of one block. The analogy rankings 3CosAdd and 3CosMul are
named here too (``analogy_method``).
"""

from collections.abc import Callable, Collection

import numpy as np

BLOCK_ROWS = 65536
FLOAT32_MAX = float(np.finfo(np.float32).max)
# analogy rankings by the names callers may give: "cosmul" (the command line's) and "mul" both mean 3CosMul
ANALOGY_METHODS = {"add": "add", "cosmul": "cosmul", "mul": "cosmul"}


def unit_rows(matrix: np.ndarray, block: int = BLOCK_ROWS) -> np.ndarray:
    """A float32 copy of ``matrix`` (V, D) with each row scaled to unit length (zero rows
    stay 0); norms are summed in float64, ``block`` rows at a time. A row whose norm
    overflows float32 (values near its largest) is divided in float64; one holding NaN
    or an infinite value has no direction, and comes out NaN, silently: the queries of
    the command line leave such rows out (``nonfinite_rows``)."""
    out = np.empty(matrix.shape, dtype=np.float32)
    for start in range(0, matrix.shape[0], block):
        rows = np.asarray(matrix[start : start + block], dtype=np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
            lengths = norms.astype(np.float32)  # infinite where the norm overflows float32
            lengths[lengths == 0] = 1
            np.divide(rows, lengths[:, None], out=out[start : start + block])
            long = np.flatnonzero(norms > FLOAT32_MAX)
            out[start + long] = rows[long] / norms[long, None]
    return out


def nonfinite_rows(matrix: np.ndarray, block: int = BLOCK_ROWS) -> np.ndarray:
    """The rows (ascending, int64) of ``matrix`` (V, D) that hold NaN or an infinite
    value, looked at ``block`` rows at a time (a (block, D) scratch of booleans)."""
    found = [
        start + np.flatnonzero(~np.isfinite(matrix[start : start + block]).all(axis=1))
        for start in range(0, matrix.shape[0], block)
    ]
    return np.concatenate([np.empty(0, dtype=np.int64), *found])


def analogy_method(method: str) -> str:
    """The canonical name of an analogy ranking: ``"add"`` (3CosAdd) or ``"cosmul"``
    (3CosMul, also called ``"mul"``); ValueError for any other name."""
    try:
        return ANALOGY_METHODS[method]
    except KeyError:
        raise ValueError(f"unknown analogy method {method!r}: add or cosmul") from None


def cosmul_of(positives: int) -> Callable[[np.ndarray], np.ndarray]:
    """The combination of gensim's ``most_similar_cosmul`` (3CosMul of Levy & Goldberg
    2014, generalised) for query columns whose first ``positives`` are positive and
    the rest negative: each row scores the product of its shifted cosines cos' =
    (1 + cos) / 2 to the positive columns over (that of the negative ones + 1e-6).
    With a, c positive and b negative it ranks the answers to a - b + c."""

    def combine(sims: np.ndarray) -> np.ndarray:
        shifted = (1 + sims) / 2
        return shifted[:, :positives].prod(axis=1) / (shifted[:, positives:].prod(axis=1) + 1e-6)

    return combine


def cosmul_scores(sim_a: np.ndarray, sim_b: np.ndarray, sim_c: np.ndarray) -> np.ndarray:
    """3CosMul for a - b + c from the three arrays of cosines."""
    return (1 + sim_a) / 2 * ((1 + sim_c) / 2) / ((1 + sim_b) / 2 + 1e-6)


def nearest(
    unit: np.ndarray,
    queries: np.ndarray,
    n: int,
    exclude: Collection[int] = (),
    restrict: int | None = None,
    combine: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[tuple[int, float]]:
    """The ``n`` best rows of ``unit`` as ``(row, score)``, best first, rows in
    ``exclude`` left out. ``queries`` is (D, k); a row's score is its dot product with
    the single query (k = 1) or ``combine`` of its k dot products. Ties go to the
    lower row. ``restrict``: search only the first ``restrict`` rows."""
    if n <= 0:
        return []
    limit = unit.shape[0] if restrict is None else min(restrict, unit.shape[0])
    keep = n + len(exclude)
    queries = np.asarray(queries, dtype=np.float32)
    rows_found, scores_found = [], []
    for start in range(0, limit, BLOCK_ROWS):
        sims = unit[start : min(start + BLOCK_ROWS, limit)] @ queries
        scores = combine(sims) if combine is not None else sims[:, 0]
        best = np.argpartition(-scores, keep - 1)[:keep] if len(scores) > keep else np.arange(len(scores))
        rows_found.append(best + start)
        scores_found.append(scores[best])
    if not rows_found:
        return []
    rows = np.concatenate(rows_found)
    scores = np.concatenate(scores_found)
    order = np.lexsort((rows, -scores))
    out = []
    for j in order:
        if int(rows[j]) not in exclude:
            out.append((int(rows[j]), float(scores[j])))
            if len(out) == n:
                break
    return out
