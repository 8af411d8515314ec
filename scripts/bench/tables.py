"""The report's tables of results: each combo's figures per system, w2v's words/s over
each peer's, the targets' PASS or FAIL, and w2v's thread scaling."""

import statistics

from .records import Results
from .summary import check, fmt, median_of, pair_ratios, quality_of, select
from .systems import COMBO_LABELS, COMBOS, label
from .targets import GOALS, PWORD2VEC_GOAL, SCALING_TARGET, Goal, target_checks


def system_table(results: Results, combo: str) -> list[str]:
    """One combo's table: medians per system (quality: ``quality_of`` the combo; a subword
    combo's table has the syntactic analogies apart)."""
    runs, threads = results.runs, results.settings.threads
    subwords, quality = COMBOS[combo].subwords, quality_of(combo)
    heads = ["system", "runs", "wall s", "kw/s", "peak MiB", "analogy %", *(["syntactic %"] * subwords), "WS-353 rho"]
    lines = [f"### {COMBO_LABELS[combo]}", ""]
    if subwords:
        lines += ["Analogy, syntactic and rho: means over the rounds' seeds; wall, kw/s and peak: medians.", ""]
    lines += ["| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
    for system in results.ran(combo):
        done = select(runs, system, combo, threads)
        failed = sum(1 for r in runs if (r.system, r.combo) == (system, combo) and r.error)
        kws = median_of(done, "words_per_s")
        cells = [label(system, combo), f"{len(done)}" + (f" ({failed} failed)" if failed else ""),
                 fmt(median_of(done, "wall_s"), ".1f"), fmt(kws and kws / 1e3, ",.0f"),
                 fmt(median_of(done, "peak_rss_mib"), ".0f"), fmt(quality(done, "analogy_pct"), ".1f"),
                 *([fmt(quality(done, "syntactic_pct"), ".1f")] * subwords),
                 fmt(quality(done, "ws353_rho"), ".3f")]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def ratio_table(results: Results) -> list[str]:
    """w2v's words/s over each peer's, per pair of runs, with the median."""
    lines = ["| model+loss | peer | w2v / peer per pair | median |", "|---|---|---|---|"]
    for combo in results.combos:
        for peer in (s for s in results.ran(combo) if s != "w2v"):
            ratios = pair_ratios(results.runs, peer, combo, results.settings.threads)
            cell = ", ".join(f"{r:.2f}" for r in ratios) or "–"
            median = fmt(statistics.median(ratios) if ratios else None, ".2f")
            lines.append(f"| {COMBO_LABELS[combo]} | {label(peer, combo)} | {cell} | {median} |")
    return [*lines, ""]


def targets_table(results: Results) -> list[str]:
    """PASS/FAIL per target and combo: a table for the word combos, one for the subword ones
    (each kind has its own ``GOALS``), and one against pWord2Vec where it ran."""
    lines = []
    for subwords in (False, True):
        kind = [c for c in results.combos if COMBOS[c].subwords == subwords]
        title = ["Subword combos (fastText's model), against fastText and gensim's FastText:", ""] if subwords else []
        lines += goal_table(results, kind, GOALS[subwords], title)
    against = [c for c in results.combos if "pword2vec" in results.ran(c)]
    title = ["Against pWord2Vec (quality: means over the rounds):", ""]
    return lines + goal_table(results, against, PWORD2VEC_GOAL, title)


def goal_table(results: Results, combos: list[str], goal: Goal, title: list[str]) -> list[str]:
    """``title``, then one row per combo of ``goal``'s ``target_checks``; nothing without combos."""
    if not combos:
        return []
    checks = {combo: target_checks(results.runs, combo, results.settings.threads, goal) for combo in combos}
    heads = list(checks[combos[0]])
    lines = [*title, "| model+loss | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    lines += [f"| {COMBO_LABELS[c]} | " + " | ".join(checks[c][h] for h in heads) + " |" for c in combos]
    return [*lines, ""]


def scaling_table(results: Results) -> list[str]:
    """w2v words/s with N threads over 1 thread, per pair of runs."""
    n = results.settings.threads
    head = f"| model+loss | kw/s 1 thread | kw/s {n} threads | ratio per pair | median | ≥ {SCALING_TARGET}× |"
    lines = ["## Thread scaling (w2v)", "", head, "|---|---|---|---|---|---|"]
    for combo in results.combos:
        one, many = (median_of(select(results.runs, "w2v", combo, t), "words_per_s") for t in (1, n))
        mine = {r.repeat: r.words_per_s for r in select(results.runs, "w2v", combo, n)}
        ratios = [mine[r.repeat] / r.words_per_s for r in select(results.runs, "w2v", combo, 1) if r.repeat in mine]
        median = statistics.median(ratios) if ratios else None
        lines.append(
            f"| {COMBO_LABELS[combo]} | {fmt(one and one / 1e3, ',.0f')} | {fmt(many and many / 1e3, ',.0f')} "
            f"| {', '.join(f'{r:.2f}' for r in ratios) or '–'} | {fmt(median, '.2f')} "
            f"| {check(None if median is None else median >= SCALING_TARGET)} |"
        )
    return [*lines, ""]
