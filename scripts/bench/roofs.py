"""Each w2v run against the machine's roofs, measured after its round on the same threads
(``scripts/roofline.py``): its useful GFLOP/s against sgemm's, its rows a second against
the random row updates the memory allows; and the report's table of them."""

import statistics
from typing import NamedTuple

from .records import Results, Run
from .summary import select
from .systems import COMBO_LABELS


class Fractions(NamedTuple):
    """A w2v run against its round's roofs, training alone and whole command: useful GFLOP/s
    (6 dim flops an output-row update) and their fraction of sgemm's; rows read and written a
    second (millions) and their fraction of the random row updates the memory allows."""

    gflops: tuple[float, float]
    of_sgemm: tuple[float, float]
    mrows: tuple[float, float]
    of_memory: tuple[float, float]


def fractions(run: Run, roofs: dict, dim: int) -> Fractions | None:
    """``run``'s ``Fractions`` of ``roofs``; None without the kernel's counts."""
    if run.output_updates is None or run.row_visits is None or not run.train_s:
        return None
    train, whole = run.train_s, run.wall_s
    flops, rows = 6 * dim * run.output_updates / 1e9, run.row_visits / 1e6  # GFLOP, millions of rows
    sgemm, memory = roofs["sgemm_gflops"], roofs["row_updates_per_s"] / 1e6
    return Fractions(
        (flops / train, flops / whole),
        (flops / train / sgemm, flops / whole / sgemm),
        (rows / train, rows / whole),
        (rows / train / memory, rows / whole / memory),
    )


def roofline_table(results: Results) -> list[str]:
    """Per combo, w2v's medians over the rounds of ``fractions``, each run against its own
    round's roofs; the roofs themselves below."""
    settings, roofs = results.settings, {roof["repeat"]: roof for roof in results.roofs}
    lines = [
        "## Roofline (w2v)",
        "",
        "Useful arithmetic = 6 × dim flops per output-row update the kernel counts (a dot product, the input's "
        "gradient, the row's update); rows = the rows it reads and writes (each output row once per window, or "
        "chunk of 16 context words, each context row once). Each run is set against the roofs measured after its "
        "round on the same threads (`scripts/roofline.py`): sgemm's GFLOP/s and the random row updates a second "
        "the memory allows. Training alone / whole command; medians over rounds.",
        "",
        "| model+loss | GFLOP/s | of sgemm | M rows/s | of memory roof |",
        "|---|---|---|---|---|",
    ]
    for combo in results.combos:
        found = [
            f for r in select(results.runs, "w2v", combo, settings.threads)
            if r.repeat in roofs and (f := fractions(r, roofs[r.repeat], settings.dim)) is not None
        ]  # fmt: skip
        if not found:
            continue
        cells = []
        for field, spec in (("gflops", ".1f"), ("of_sgemm", ".0%"), ("mrows", ".0f"), ("of_memory", ".0%")):
            pair = [statistics.median(getattr(f, field)[k] for f in found) for k in (0, 1)]
            cells.append(f"{pair[0]:{spec}} / {pair[1]:{spec}}")
        lines.append(f"| {COMBO_LABELS[combo]} | " + " | ".join(cells) + " |")
    measured = "; ".join(
        f"round {r['repeat']}: sgemm {r['sgemm_gflops']:.0f} GFLOP/s, {r['row_updates_per_s'] / 1e6:.0f} M row "
        f"updates/s ({r['gb_per_s']:.1f} GB/s) on {r['rows']:,} x {r['dim']} rows"
        for r in results.roofs
    )
    return [*lines, "", f"Roofs: {measured}.", ""]
