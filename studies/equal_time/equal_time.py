"""Accuracy at equal time: every system trains every combo for 1, 2, 3, 5, 8 and 12 epochs
with the same settings (learning rates included), and each run's analogy accuracy and
WS-353 are set against its wall time. The section "Accuracy at equal time" that ends
studies/equal_time/README.md and the plot equal-time.png beside it come from here: what each
system reaches in the time word2vec.c takes for its default 5 epochs.

    python studies/equal_time/equal_time.py --run                    # all of it: about 3 hours on 2 cores
    python studies/equal_time/equal_time.py --run --combos cbow-ns   # one part (see below)
    python studies/equal_time/equal_time.py --render                 # the section and plot from the JSON

Each run is added to ``--json`` as it finishes, and a run already there is not run again (one
that failed is), so the parts can run on different days and an interrupted sweep goes on where
it stopped; the settings and corpus must be those of the runs already there. The parts on
wiki-en-100m with word2vec.c, gensim and fastText (2 threads, dim 100; 31 epochs of each
system per combo) trained for, on a Zen 5 EPYC: cbow-ns 21 minutes, cbow-hs 21, sg-hs 47,
sg-ns 65, and scoring adds a few seconds a run. Runs are timed and scored by the
benchmark's functions (``scripts/bench/``), so a figure here means what it means there.
"""

import argparse
import dataclasses
import datetime
import json
import os
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the benchmark's runs and scorer: scripts/bench/

from bench.cli import add_settings, check_settings, make_context  # noqa: E402
from bench.commands import shown  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.plot import pyplot  # noqa: E402
from bench.runs import run_one, warm_up  # noqa: E402
from bench.systems import COMBO_LABELS, COMBOS, LABELS, SYSTEMS, label, systems_for  # noqa: E402

SECTION = "<!-- Written by equal_time.py: -->"  # where the section starts in the report; what precedes it is kept

EPOCH_COUNTS = (1, 2, 3, 5, 8, 12)
REFERENCE, REFERENCE_EPOCHS = "word2vec", 5  # "in the time word2vec.c takes for its default 5 epochs"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: ``--run`` or ``--render``, and the shared training settings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--run", action="store_true", help="train the runs not yet in --json, then render")
    mode.add_argument("--render", action="store_true", help="only write the section and plot from --json")
    add_settings(parser)
    parser.add_argument("--epoch-counts", default=",".join(map(str, EPOCH_COUNTS)), help="comma-separated")
    parser.add_argument("--json", type=Path, default=HERE / "equal-time.json")
    parser.add_argument("--plot", type=Path, default=HERE / "equal-time.png")
    parser.add_argument("--out", type=Path, default=HERE / "README.md", help="the report to end")
    args = parser.parse_args(argv)
    check_settings(parser, args)
    args.epoch_counts = sorted({int(e) for e in args.epoch_counts.split(",") if e})
    if not args.epoch_counts or args.epoch_counts[0] < 1:
        parser.error("--epoch-counts: whole numbers of at least 1")
    return args


# --- the sweep ------------------------------------------------------------------------------


def sweep_settings(args: argparse.Namespace) -> dict:
    """What every run of one sweep shares (the epochs vary): the corpus by name and size,
    so that a sweep goes on from another checkout, and the training settings."""
    names = ("threads", "dim", "window", "negative", "sample", "min_count")
    corpus = {"corpus": args.corpus.name, "corpus_bytes": args.corpus.stat().st_size}
    return {**corpus, **{name: getattr(args, name) for name in names}}


def load(path: Path, settings: dict) -> dict:
    """The sweep in ``path``, or a new one; exits with one line if its settings differ."""
    if not path.is_file():
        return {"settings": settings, "machine": machine_info(), "commands": [], "runs": []}
    raw = json.loads(path.read_text())
    if raw["settings"] != settings:
        sys.exit(f"equal_time: {path} holds runs with other settings ({raw['settings']}): give another --json")
    return raw


def save(path: Path, raw: dict) -> None:
    """Write the sweep, replacing the file only once the new one is complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(raw, indent=1) + "\n")
    partial.replace(path)


def sweep(args: argparse.Namespace) -> dict:
    """Run every (combo, epochs, system) not yet in ``args.json`` or that failed there (its
    failed record is replaced), saving after each run. The systems take turns at each
    epoch count, so drift in the machine's speed falls on all."""
    raw = load(args.json, sweep_settings(args))
    args.epochs = args.epoch_counts[0]  # bench's context wants one; each run sets its own
    ctx = make_context(args)
    raw["commands"].append(shown(["python", "studies/equal_time/equal_time.py", *sys.argv[1:]]))
    raw["runs"] = [r for r in raw["runs"] if r["error"] is None]
    done = {(r["system"], r["combo"], r["epochs"]) for r in raw["runs"]}
    warm_up(ctx, args.combos)
    base = ctx.settings
    for combo in args.combos:
        for epochs in args.epoch_counts:
            for system in systems_for(ctx.binaries, combo):
                if (system, combo, epochs) in done:
                    continue
                ctx.settings = dataclasses.replace(base, epochs=epochs)
                run = run_one(ctx, system, combo, 0, base.threads, scored=True)
                when = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
                raw["runs"].append({**dataclasses.asdict(run), "epochs": epochs, "date": when})
                save(args.json, raw)
    raw["notes"] = ctx.notes
    save(args.json, raw)
    return raw


# --- the report -----------------------------------------------------------------------------


def successful(raw: dict, combo: str) -> dict[str, dict[int, dict]]:
    """The scored runs of ``combo``: system -> epochs -> run."""
    out: dict[str, dict[int, dict]] = {}
    for run in raw["runs"]:
        if run["combo"] == combo and run["error"] is None and run["analogy_pct"] is not None:
            out.setdefault(run["system"], {})[run["epochs"]] = run
    return out


def cell(run: dict | None) -> str:
    """A run as ``wall s · analogy % · rho``, or a dash."""
    if run is None:
        return "–"
    return f"{run['wall_s']:.0f} s · {run['analogy_pct']:.1f}% · {run['ws353_rho']:.3f}"


def within(runs: dict[int, dict], seconds: float) -> dict | None:
    """The run of most epochs that took at most ``seconds``, or None."""
    fitting = [run for run in runs.values() if run["wall_s"] <= seconds]
    return max(fitting, key=lambda run: run["epochs"], default=None)


def combo_table(raw: dict, combo: str, systems: list[str]) -> list[str]:
    """One combo: a row per epoch count, a column per system."""
    runs = successful(raw, combo)
    counts = sorted({e for by_epochs in runs.values() for e in by_epochs})
    lines = [
        f"### {COMBO_LABELS[combo]}",
        "",
        "| epochs | " + " | ".join(label(s, combo) for s in systems) + " |",
    ]
    lines.append("|---" * (len(systems) + 1) + "|")
    for epochs in counts:
        lines.append(f"| {epochs} | " + " | ".join(cell(runs.get(s, {}).get(epochs)) for s in systems) + " |")
    return [*lines, ""]


def reference_table(raw: dict, combos: list[str], systems: list[str]) -> list[str]:
    """What each system reaches within word2vec.c's wall time for its default 5 epochs."""
    others = [s for s in systems if s != REFERENCE]
    head = f"| model | {LABELS[REFERENCE]}, {REFERENCE_EPOCHS} epochs | " + " | ".join(
        f"{LABELS[s]} in that time" for s in others
    )
    lines = [head + " |", "|---" * (len(others) + 2) + "|"]
    for combo in combos:
        runs = successful(raw, combo)
        reference = runs.get(REFERENCE, {}).get(REFERENCE_EPOCHS)
        if reference is None:
            continue
        cells = []
        for system in others:
            best = within(runs.get(system, {}), reference["wall_s"])
            cells.append("–" if best is None else f"{best['epochs']} epochs: {cell(best)}")
        lines.append(f"| {COMBO_LABELS[combo]} | {cell(reference)} | " + " | ".join(cells) + " |")
    return [*lines, ""] if len(lines) > 2 else []


def section(raw: dict, plot_link: str | None) -> str:
    """The Markdown section that ends the report."""
    s, machine = raw["settings"], raw["machine"]
    combos = [c for c in COMBOS if successful(raw, c)]
    systems = [s for s in SYSTEMS if any(s in successful(raw, c) for c in combos)]
    lines = [
        SECTION,
        "",
        "## Accuracy at equal time",
        "",
        f"Every system trains `{s['corpus']}` with the benchmark's settings (dim {s['dim']}, window "
        f"{s['window']}, negative {s['negative']} or HS, sample {s['sample']:g}, min-count {s['min_count']}, "
        f"{s['threads']} threads, word2vec.c's learning rates) for each number of epochs; a cell is the whole "
        "command's wall time · analogy accuracy · WS-353 rho, one run each, so a cell's time carries the "
        "drift of a shared machine's speed (up to 2x between neighbouring runs here): read the trend along "
        "a column, not one cell. Machine: "
        f"{machine['cpu']}, {machine['cores']} cores. Commands: "
        + "; ".join(f"`{shown(shlex.split(c))}`" for c in dict.fromkeys(raw["commands"]))
        + ".",
        "",
    ]
    if plot_link:
        lines += [f"![analogy accuracy and WS-353 against wall time]({plot_link})", ""]
    if REFERENCE in systems:
        lines += [f"### Within {LABELS[REFERENCE]}'s time for {REFERENCE_EPOCHS} epochs", ""]
        lines += reference_table(raw, combos, systems)
    for combo in combos:
        lines += combo_table(raw, combo, systems)
    return "\n".join(lines)


def plot(raw: dict, path: Path) -> bool:
    """Analogy accuracy and WS-353 against wall time (log scale), a line per system (one
    colour each, the same in every panel) and a column per combo, each point marked with
    its epochs; False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    combos = [c for c in COMBOS if successful(raw, c)]
    fig, axes = plt.subplots(2, len(combos), figsize=(4 * len(combos), 7), squeeze=False)
    for column, combo in enumerate(combos):
        by_system = successful(raw, combo)
        for colour, system in enumerate(SYSTEMS):
            runs = [by_system[system][e] for e in sorted(by_system.get(system, {}))]
            for row, key in enumerate(("analogy_pct", "ws353_rho") if runs else ()):
                ax = axes[row][column]
                points = [r["wall_s"] for r in runs], [r[key] for r in runs]
                ax.plot(*points, marker="o", color=f"C{colour}", label=LABELS[system])
                for r in runs:
                    ax.annotate(str(r["epochs"]), (r["wall_s"], r[key]), fontsize=7, xytext=(3, 3),
                                textcoords="offset points")  # fmt: skip
        axes[0][column].set_title(COMBO_LABELS[combo])
        for row, axis_label in enumerate(("analogy accuracy %", "WS-353 rho")):
            axes[row][column].set_xscale("log")
            axes[row][column].tick_params(axis="x", which="minor", labelbottom=False)  # decades only
            axes[row][column].set_xlabel("wall seconds (log)")
            axes[row][column].set_ylabel(axis_label)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_report(args: argparse.Namespace, raw: dict) -> None:
    """Replace the section at the end of ``args.out`` (or add it) and draw the plot."""
    link = None
    if plot(raw, args.plot):
        link = os.path.relpath(args.plot.resolve(), args.out.resolve().parent)
    text = args.out.read_text() if args.out.is_file() else ""
    head = text[: text.find(SECTION)] if SECTION in text else text
    kept = head.rstrip("\n") + "\n" if head else ""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(kept + ("\n" if kept else "") + section(raw, link) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run the missing runs (``--run``), then write the section and the plot."""
    args = parse_args(argv)
    if args.run:
        raw = sweep(args)
    elif args.json.is_file():
        raw = json.loads(args.json.read_text())
    else:
        sys.exit(f"equal_time: no runs yet: {args.json} is absent (run with --run)")
    write_report(args, raw)
    print(f"equal_time: wrote {args.out}, {args.json}", file=sys.stderr)
    return 1 if any(r["error"] for r in raw["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
