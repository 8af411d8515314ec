"""Word classes: spherical k-means on unit word vectors (word2vec.c's ``-classes``).

word2vec.c clusters with cosine similarity: each centroid is the mean of its
words' vectors scaled to unit length, and each word joins the centroid with the
largest dot product. Here the words are unit vectors too, so the clusters do not
depend on vector lengths. The dot products are one BLAS matrix product per
block of ``BLOCK_ROWS`` words, so that beside the vectors only one block's
(words, classes) similarities are held at a time.

Two initialisations: ``"kmeans++"`` (Arthur & Vassilvitskii 2007, with squared
Euclidean distance between unit vectors, ``2 - 2 cos``) and ``"word2vec"``
(word2vec.c's: word ``i`` starts in class ``i mod k``). Iterations stop early
once no word changes class. A class left empty takes the word farthest from
its own centroid. Classes are numbered in order of their first (most frequent)
word, so the numbering does not depend on the initialisation.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from w2v.errors import ConfigError, plural
from w2v.files import write_atomic
from w2v.vectors.search import unit_rows
from w2v.words import encode_word

BLOCK_ROWS = 8192  # words per matrix product
INITS = ("kmeans++", "word2vec")
# on_step(step name, done, total, unit, **fields): a progress callback, as ``progress.Steps`` takes
OnStep = Callable[..., None]


@dataclass
class Clustering:
    """``labels`` (V,) int32 class of each word, ``centroids`` (k, D) float32 unit rows,
    ``iterations`` run, and ``mean_similarity``: mean cosine of a word to its centroid."""

    labels: np.ndarray
    centroids: np.ndarray
    iterations: int
    mean_similarity: float


def assign(unit: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centroid (largest dot product; the first on ties, as word2vec.c) of each
    row, in blocks. Returns ``(labels int32, similarity float32)``."""
    labels = np.empty(len(unit), dtype=np.int32)
    best = np.empty(len(unit), dtype=np.float32)
    for start in range(0, len(unit), BLOCK_ROWS):
        sims = unit[start : start + BLOCK_ROWS] @ centroids.T
        top = np.argmax(sims, axis=1)
        labels[start : start + BLOCK_ROWS] = top
        best[start : start + BLOCK_ROWS] = sims[np.arange(len(top)), top]
    return labels, best


def centroids_of(unit: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length mean of each class's rows (float32 (k, D)) and the class sizes."""
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=k)
    sums = np.zeros((k, unit.shape[1]), dtype=np.float64)
    present = np.flatnonzero(sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)])[present]
    sums[present] = np.add.reduceat(unit[order].astype(np.float64), starts, axis=0)
    return unit_rows(sums), sizes


def kmeans_plus_plus(unit: np.ndarray, k: int, rng: np.random.Generator, on_step: OnStep | None = None) -> np.ndarray:
    """k-means++ seeding: indices of ``k`` rows, each next one drawn with probability
    proportional to its squared distance to the nearest one chosen. ``on_step``: see ``kmeans``."""
    if on_step is not None:
        on_step("k-means++ seeding", 0, k, "centroids")
    chosen = [int(rng.integers(len(unit)))]
    distance = np.maximum(2.0 - 2.0 * (unit @ unit[chosen[0]]).astype(np.float64), 0.0)
    for _ in range(1, k):
        if on_step is not None:
            on_step("k-means++ seeding", len(chosen), k, "centroids")
        total = distance.sum()
        if total <= 0:  # every row coincides with a chosen one: take the next unchosen rows
            rest = np.setdiff1d(np.arange(len(unit)), chosen)
            chosen.extend(rest[: k - len(chosen)].tolist())
            break
        pick = int(np.searchsorted(np.cumsum(distance), rng.random() * total, side="right"))
        pick = min(pick, len(unit) - 1)
        chosen.append(pick)
        distance = np.minimum(distance, np.maximum(2.0 - 2.0 * (unit @ unit[pick]).astype(np.float64), 0.0))
    if on_step is not None:
        on_step("k-means++ seeding", k, k, "centroids")
    return np.asarray(chosen, dtype=np.int64)


def renumber(labels: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the classes in order of their first row; empty classes last."""
    k = len(centroids)
    _, first = np.unique(labels, return_index=True)
    used = labels[np.sort(first)]
    order = np.concatenate([used, np.setdiff1d(np.arange(k), used)])
    new = np.empty(k, dtype=np.int32)
    new[order] = np.arange(k, dtype=np.int32)
    return new[labels], centroids[order]


def kmeans(
    vectors: np.ndarray,
    k: int,
    iterations: int = 10,
    seed: int = 1,
    init: str = "kmeans++",
    on_step: OnStep | None = None,
) -> Clustering:
    """Cluster the rows of ``vectors`` (V, D) into ``k`` classes by cosine similarity.
    ``on_step(name, done, total, unit, **fields)`` follows the seeding (centroids
    chosen) and the iterations (with the words that ``changed`` class), as
    ``progress.Steps`` shows them.

    >>> import numpy as np
    >>> points = np.array([[1, 0.1], [1, -0.1], [-0.1, 1], [0.1, 1]], dtype=np.float32)
    >>> kmeans(points, 2).labels.tolist()
    [0, 0, 1, 1]
    """
    if init not in INITS:
        raise ConfigError(f"unknown k-means init {init!r}: use one of {', '.join(INITS)}")
    if k < 1:
        raise ConfigError(f"the number of classes must be at least 1, not {k}")
    if iterations < 1:
        raise ConfigError(f"k-means needs at least 1 iteration, not {iterations}")
    if seed < 0:
        raise ConfigError(f"the k-means seed must be 0 or more, not {seed}")
    if k > len(vectors):
        raise ConfigError(f"{k:,} classes for {plural(len(vectors), 'word')}: give at most one class per word")
    unit = unit_rows(vectors)
    if init == "word2vec":
        labels = (np.arange(len(unit)) % k).astype(np.int32)
        centroids, _ = centroids_of(unit, labels, k)
    else:
        centroids = unit[kmeans_plus_plus(unit, k, np.random.default_rng(seed), on_step)]
        labels = np.full(len(unit), -1, dtype=np.int32)
    done = 0
    if on_step is not None:
        on_step("k-means", 0, iterations, "iterations")
    for done in range(1, iterations + 1):
        new_labels, similarity = assign(unit, centroids)
        sizes = np.bincount(new_labels, minlength=k)
        empty = np.flatnonzero(sizes == 0)
        if len(empty):  # give each empty class the words worst served by their centroid
            worst = np.argsort(similarity, kind="stable")[: len(empty)]
            new_labels[worst] = empty
        changed = int(np.count_nonzero(new_labels != labels))
        labels = new_labels
        centroids, _ = centroids_of(unit, labels, k)
        if on_step is not None:
            on_step("k-means", done, iterations, "iterations", changed=f"{changed:,}")
        if not changed:
            break
    labels, centroids = renumber(labels, centroids)
    sims = np.einsum("ij,ij->i", unit, centroids[labels])
    return Clustering(labels, centroids, done, float(sims.mean()) if len(sims) else 0.0)


def write_classes(path: str, words: Sequence[str], labels: np.ndarray, order: str = "class") -> None:
    """Write ``word class`` lines: sorted by class (words of a class in vocabulary order,
    as the word2vec demo's ``sort -k 2 -n``), or in vocabulary order (``order="vocab"``,
    word2vec.c's own output). Written beside ``path`` and renamed."""
    rows = np.argsort(labels, kind="stable") if order == "class" else np.arange(len(words))
    write_atomic(path, b"".join(b"%s %d\n" % (encode_word(words[i]), labels[i]) for i in rows.tolist()))
