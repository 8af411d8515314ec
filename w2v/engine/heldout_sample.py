r"""Estimating a mean log-probability over N predictions from a sample of them.

Scoring every prediction of a held-out text exactly can cost more than training
on it: a loss without a tree needs a normaliser ``log Z(h)``, a sum over the
whole vocabulary, for each hidden vector. A ``Sampling`` scores a uniform sample
A of a of the N predictions, and computes the normaliser for a uniform
subsample B of b of those (two-phase sampling). Each log-probability splits as

    y = c + z,    c = the target's score (exact part),  z = -log Z(h)

and two control variates, known where the sample needs them, take out most of
the spread:

- ``u``, the unigram log-probability of the target, known for all N
  predictions (its population mean ``mu_u`` is counted once);
- ``r``, cheap stand-ins for ``z`` (``scoring.Expansions``: second-order
  expansions of normalisers in ``h``), known for every prediction of A.

The estimate of the mean of ``y`` over the N predictions is

    Y = mean_A(c) + mean_B(z) - beta_2 (mean_B(r) - mean_A(r)) - beta_1 (mean_A(u) - mu_u)

with ``beta_1`` the slope of ``y`` on ``u`` and ``beta_2`` those of ``z`` on the
columns of ``r``, all fitted on B by least squares, and variance (Cochran,
*Sampling Techniques*, 7.9 and 12.7)

    Var(Y) = (1/a - 1/N) S^2(y - beta_1 u) + (1/b - 1/a) S^2(z - beta_2 r).

With every prediction scored (a = N) and normalised (b = a) both corrections
and both variance terms vanish: the figure is exact. Hierarchical softmax has no
normaliser (z = r = 0, b = a).
"""

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


class Sampling(NamedTuple):
    """Which predictions to score: ``predictions`` of them drawn uniformly without
    replacement (None: all), and of those, ``normalised`` drawn the same way whose
    normaliser (a sum over the vocabulary) is computed (None: all); ``seed`` draws both."""

    predictions: int | None = None
    normalised: int | None = None
    seed: int = 1


EVERY_PREDICTION = Sampling()  # score them all, exactly


def drawn(chosen: np.ndarray | None, start: int, n: int) -> np.ndarray:
    """(n,) bool: which of the indices ``start .. start + n - 1`` are in the sorted
    ``chosen`` (all of them if None)."""
    if chosen is None:
        return np.ones(n, dtype=bool)
    mask = np.zeros(n, dtype=bool)
    lo, hi = np.searchsorted(chosen, [start, start + n])
    mask[chosen[lo:hi] - start] = True
    return mask


class Sample:
    """A ``Sampling``'s draw of ``total`` predictions met in order: which are scored
    and, of those, which normalised."""

    def __init__(self, total: int, sampling: Sampling):
        rng = np.random.default_rng(sampling.seed)
        self.size = total if sampling.predictions is None else min(sampling.predictions, total)
        self.chosen = None if self.size == total else np.sort(rng.choice(total, self.size, replace=False))
        self.normalised = self.size if sampling.normalised is None else min(sampling.normalised, self.size)
        inner = None if self.normalised == self.size else rng.choice(self.size, self.normalised, replace=False)
        self.inner = None if inner is None else np.sort(inner)
        self.seen = self.taken = 0

    def take(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(n,) bool: which of the next ``n`` predictions are scored; (k,) bool over
        the k scored: which are normalised."""
        kept = drawn(self.chosen, self.seen, n)
        self.seen += n
        scored = int(kept.sum())
        normalised = drawn(self.inner, self.taken, scored)
        self.taken += scored
        return kept, normalised


@dataclass
class Regression:
    """Sums over rows of a quantity ``x`` and ``k`` regressors ``w``, enough for their
    means, the least-squares slopes of ``x`` on ``w`` and the sample variance of the
    residual ``x - slopes . w``."""

    k: int
    count: int = 0
    sum_x: float = 0.0
    sum_xx: float = 0.0
    sum_w: np.ndarray = field(init=False)  # (k,)
    sum_ww: np.ndarray = field(init=False)  # (k, k)
    sum_xw: np.ndarray = field(init=False)  # (k,)

    def __post_init__(self) -> None:
        self.sum_w, self.sum_ww, self.sum_xw = np.zeros(self.k), np.zeros((self.k, self.k)), np.zeros(self.k)

    def add(self, x: np.ndarray, w: np.ndarray) -> None:
        """Rows ``x`` (n,) and ``w`` (n, k), float64."""
        self.count += len(x)
        self.sum_x += float(x.sum())
        self.sum_xx += float(x @ x)
        self.sum_w += w.sum(axis=0)
        self.sum_ww += w.T @ w
        self.sum_xw += x @ w

    def means(self) -> tuple[float, np.ndarray]:
        n = max(self.count, 1)
        return self.sum_x / n, self.sum_w / n

    def centred(self) -> tuple[float, np.ndarray, np.ndarray]:
        """Sums of squares and products about the means: (Sxx, Sww (k, k), Sxw (k,))."""
        mean_x, mean_w = self.means()
        n = self.count
        return (
            self.sum_xx - n * mean_x * mean_x,
            self.sum_ww - n * np.outer(mean_w, mean_w),
            self.sum_xw - n * mean_x * mean_w,
        )

    def slopes(self) -> np.ndarray:
        """(k,): the least-squares slopes of ``x`` on ``w`` (0 along regressors that do not vary)."""
        _, sww, sxw = self.centred()
        return np.linalg.pinv(sww, rcond=1e-10, hermitian=True) @ sxw if self.k else np.zeros(0)

    def residual_variance(self) -> float:
        """The sample variance of ``x - slopes . w`` (n - 1 - k degrees of freedom; 0.0 with none)."""
        if self.count < self.k + 2:
            return 0.0
        sxx, _, sxw = self.centred()
        return max(sxx - float(self.slopes() @ sxw), 0.0) / (self.count - 1 - self.k)


@dataclass
class TwoPhase:
    """The sums behind the estimate of one mean log-probability (module docstring):
    over A ``count`` and the sums of c, u and the k columns of r; over B the
    regressions of y on u and of z on r."""

    k: int  # control variates of z
    count: int = 0
    sum_c: float = 0.0
    sum_u: float = 0.0
    sum_r: np.ndarray = field(init=False)  # (k,)
    full: Regression = field(init=False)  # y on u, over B
    normaliser: Regression = field(init=False)  # z on r, over B

    def __post_init__(self) -> None:
        self.sum_r, self.full, self.normaliser = np.zeros(self.k), Regression(1), Regression(self.k)

    def add(self, exact: np.ndarray, unigram: np.ndarray, proxy: np.ndarray, normalised: np.ndarray, z: np.ndarray):
        """Rows of A: ``exact`` c and ``unigram`` u (B,) float64, ``proxy`` r (B, k); of
        those, the ``normalised`` (B,) bool, whose ``z`` is given (b,)."""
        self.count += len(exact)
        self.sum_c += float(exact.sum())
        self.sum_u += float(unigram.sum())
        self.sum_r += proxy.sum(axis=0)
        self.full.add(exact[normalised] + z, unigram[normalised, None])
        self.normaliser.add(z, proxy[normalised])

    def mean(self, unigram_mean: float) -> float:
        """The estimated mean of y over all predictions, whose mean u is ``unigram_mean``."""
        n = max(self.count, 1)
        mean_z, mean_r_b = self.normaliser.means()
        of_scored = self.sum_c / n + mean_z - float(self.normaliser.slopes() @ (mean_r_b - self.sum_r / n))
        return of_scored - float(self.full.slopes()[0]) * (self.sum_u / n - unigram_mean)

    def standard_error(self, population: int) -> float:
        """The standard error of ``mean`` (nats), from ``population`` predictions in all."""
        scored, normalised = max(self.count, 1), max(self.normaliser.count, 1)
        spread = (1 / scored - 1 / population) * self.full.residual_variance()
        spread += (1 / normalised - 1 / scored) * self.normaliser.residual_variance()
        return float(np.sqrt(max(spread, 0.0)))
