"""The report's plot: words/s and analogy accuracy per system and combo (where matplotlib
is installed)."""

from pathlib import Path

from .records import Results
from .summary import median_of, select
from .systems import COMBO_LABELS, LABELS


def pyplot():
    """matplotlib's pyplot drawing to files (the Agg backend), or None where matplotlib is not installed."""
    try:
        import matplotlib  # optional

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot(results: Results, path: Path) -> bool:
    """Bar charts of words/s and analogy accuracy per system and combo; False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    systems, combos, settings = results.systems, results.combos, results.settings
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / max(1, len(systems))  # a JSON of no runs draws empty axes
    for i, system in enumerate(systems):
        picked = [select(results.runs, system, combo, settings.threads) for combo in combos]
        xs = [k + i * width for k in range(len(combos))]
        kws = [(median_of(p, "words_per_s") or 0) / 1e3 for p in picked]
        acc = [median_of(p, "analogy_pct") or 0 for p in picked]
        axes[0].bar(xs, kws, width, label=LABELS[system])
        axes[1].bar(xs, acc, width, label=LABELS[system])
    for ax, title in zip(axes, ["thousand words/s (higher is faster)", "analogy accuracy %"], strict=True):
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(combos))], [COMBO_LABELS[c] for c in combos])
        ax.set_title(title)
    axes[0].legend()
    fig.suptitle(f"{results.corpus}, {settings.threads} threads, {settings.epochs} epochs")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
