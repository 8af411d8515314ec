"""The targets w2v is held to: words/s over each peer's, quality (and, for the subword
combos, peak memory) against a reference system, thread scaling and start-up; each PASS,
FAIL or a dash."""

import statistics
from typing import NamedTuple

from .records import Run
from .summary import check, mean_of, median_of, pair_ratios, select
from .systems import COMBOS

SCALING_TARGET, STARTUP_TARGET = 1.8, 2.0  # w2v's words/s with --threads over 1 thread; seconds of a warm start


class SpeedTarget(NamedTuple):
    """w2v's words/s over ``peer``'s (median of the per-pair ratios): at least ``ratio``, or
    strictly ``above`` it; ``name`` is the peer in the report's column head."""

    peer: str
    ratio: float
    above: bool
    name: str


class Goal(NamedTuple):
    """The targets of a kind of combo: speed over peers; analogy, rho and (where
    ``memory_slack`` is set) peak memory against the ``reference`` system, ``short`` in heads;
    quality as means over the rounds' seeds (``means``) or medians."""

    speeds: tuple[SpeedTarget, ...]
    reference: str
    short: str
    analogy_slack: float
    rho_slack: float
    memory_slack: float | None
    means: bool


GOALS = {  # by Combo.subwords; the subword ones are issue 48's
    False: Goal(
        speeds=(SpeedTarget("word2vec", 2.0, False, "word2vec.c"), SpeedTarget("gensim", 1.0, True, "gensim")),
        reference="word2vec",
        short="C",
        analogy_slack=1.0,
        rho_slack=0.02,
        memory_slack=None,
        means=False,
    ),
    True: Goal(
        speeds=(
            SpeedTarget("fasttext", 4.0, False, "fastText"),
            SpeedTarget("gensim-ft", 2.0, False, "gensim FastText"),
        ),
        reference="fasttext",
        short="fastText",
        analogy_slack=1.0,
        rho_slack=0.01,
        memory_slack=0.10,
        means=True,
    ),
}
PWORD2VEC_GOAL = Goal(  # issue 49's: skip-gram NS against the fastest CPU word2vec we know
    speeds=(SpeedTarget("pword2vec", 2.5, False, "pWord2Vec"),),
    reference="pword2vec",
    short="pWord2Vec",
    analogy_slack=1.0,
    rho_slack=0.01,
    memory_slack=None,
    means=True,
)


def target_checks(runs: list[Run], combo: str, threads: int, goal: Goal | None = None) -> dict[str, str]:
    """The targets of one combo (``goal``, by default its ``GOALS``), column head to PASS, FAIL
    or a dash, from the medians of per-pair speed ratios and of peak memory, and the means or
    medians of quality (``Goal.means``)."""
    goal = goal or GOALS[COMBOS[combo].subwords]
    quality = mean_of if goal.means else median_of
    out = {}
    for target in goal.speeds:
        ratios = pair_ratios(runs, target.peer, combo, threads)
        median = statistics.median(ratios) if ratios else None
        ok = None if median is None else (median > target.ratio if target.above else median >= target.ratio)
        out[speed_head(target)] = check(ok)
    mine, theirs = (select(runs, s, combo, threads) for s in ("w2v", goal.reference))
    analogy, rho = f"analogy ≥ {goal.short} − {goal.analogy_slack:g}", f"rho ≥ {goal.short} − {goal.rho_slack:g}"
    out[analogy] = compare(quality(mine, "analogy_pct"), quality(theirs, "analogy_pct"), -goal.analogy_slack)
    out[rho] = compare(quality(mine, "ws353_rho"), quality(theirs, "ws353_rho"), -goal.rho_slack)
    if goal.memory_slack is not None:
        peak, limit = median_of(mine, "peak_rss_mib"), median_of(theirs, "peak_rss_mib")
        allowed = None if limit is None else limit * (1 + goal.memory_slack)
        out[f"peak ≤ {goal.short} + {goal.memory_slack:.0%}"] = compare(allowed, peak, 0.0)
    return out


def speed_head(target: SpeedTarget) -> str:
    """A speed target's column head: ``≥ 4× fastText``, ``> gensim``."""
    times = "" if target.ratio == 1 else f"{target.ratio:g}× "
    return f"{'>' if target.above else '≥'} {times}{target.name}"


def compare(value: float | None, reference: float | None, slack: float) -> str:
    """PASS when ``value >= reference + slack``; a dash when either is missing."""
    return check(None if value is None or reference is None else value >= reference + slack)
