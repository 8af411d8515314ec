"""Figures summed up over runs: medians, means, w2v's words/s over a peer's per pair of
runs, and how a figure or a verdict is written in a table cell."""

import statistics

from .records import Run
from .systems import COMBOS


def fmt(value: float | None, spec: str) -> str:
    """A number for a table cell, or a dash."""
    return "–" if value is None else format(value, spec)


def check(ok: bool | None) -> str:
    """PASS, FAIL, or a dash when it cannot be told."""
    return "–" if ok is None else ("PASS" if ok else "FAIL")


def median_of(runs: list[Run], attr: str) -> float | None:
    """Median of a run attribute over the runs that have it."""
    values = [getattr(r, attr) for r in runs if getattr(r, attr) is not None]
    return statistics.median(values) if values else None


def mean_of(runs: list[Run], attr: str) -> float | None:
    """Mean of a run attribute over the runs that have it."""
    values = [getattr(r, attr) for r in runs if getattr(r, attr) is not None]
    return statistics.fmean(values) if values else None


def quality_of(combo: str):
    """How a combo's runs' quality figures are summed up: means over the rounds' seeds for the
    subword combos (issue 48's targets), medians (as speed and memory) for the others."""
    return mean_of if COMBOS[combo].subwords else median_of


def select(runs: list[Run], system: str, combo: str, threads: int) -> list[Run]:
    """The successful runs of one system, combo and thread count, in order."""
    return [r for r in runs if (r.system, r.combo, r.threads) == (system, combo, threads) and r.error is None]


def pair_ratios(runs: list[Run], peer: str, combo: str, threads: int, peer_threads: int | None = None) -> list[float]:
    """w2v words/s over the peer's, per repeat where both succeeded."""
    mine = {r.repeat: r.words_per_s for r in select(runs, "w2v", combo, threads)}
    theirs = {r.repeat: r.words_per_s for r in select(runs, peer, combo, peer_threads or threads)}
    return [mine[k] / theirs[k] for k in sorted(mine.keys() & theirs.keys())]
