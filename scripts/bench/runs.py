"""The timed runs: each system on each combo it trains, taking turns in each round, every
command a child process (wall time, its own peak memory), its vectors scored; the
machine's roofs after each round; and the record of them all, the benchmark's JSON."""

import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from . import SCRIPTS
from .commands import output_files, report_path, train_command
from .corpus import tiny_corpus
from .records import Context, Run
from .scoring import score
from .summary import fmt
from .systems import COMBOS, systems_for


def measure(command: list[str], log: Path) -> tuple[int, float, float]:
    """Run ``command``: its exit status, wall seconds and peak RSS in MiB (its own, via wait4)."""
    with open(log, "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
    return child.returncode, wall, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def tail(path: Path, lines: int = 5) -> str:
    """The last lines of a log file."""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def run_one(ctx: Context, system: str, combo: str, repeat: int, threads: int, scored: bool) -> Run:
    """Train once with seed ``repeat + 1``, measure, score (if asked), and drop the files written."""
    name = f"{system}-{combo}-t{threads}-r{repeat}"
    output, log = ctx.workdir / f"{name}.bin", ctx.workdir / f"{name}.log"
    vectors, model = output_files(ctx, system, combo, output)
    command = train_command(ctx, system, combo, threads, output, seed=repeat + 1)
    rc, wall, rss = measure(command, log)
    run = Run(system, combo, repeat, threads, command, rc, wall, ctx.tokens * ctx.settings.epochs / wall, rss)
    run.seed = None if system in ("word2vec", "pword2vec") else repeat + 1
    missing = [path.name for path in (vectors, model) if path is not None and not path.exists()]
    if rc != 0 or missing:
        run.error = tail(log) or f"exit status {rc}" + (f", no {' or '.join(missing)}" if missing else "")
    elif scored:
        scores, run.scorer = score(ctx, vectors)
        run.analogy_pct, run.syntactic_pct, run.ws353_rho = scores
    if system == "w2v" and rc == 0:
        read_report(run, report_path(vectors))
    remove(vectors, model, report_path(vectors))
    print(progress_line(run), file=sys.stderr, flush=True)
    return run


def read_report(run: Run, path: Path) -> None:
    """Set a w2v run's training seconds and kernel counts from its ``--report`` (a w2v
    without ``--report`` fails its runs instead)."""
    report = json.loads(path.read_text())
    run.train_s, run.output_updates, run.row_visits = (
        report["train_seconds"],
        report.get("output_updates"),
        report.get("row_visits"),
    )
    run.vocab_size = report["vocab_size"]


def remove(*paths: Path | None) -> None:
    """Delete the files of ``paths`` that exist (None: no file)."""
    for path in paths:
        if path is not None:
            path.unlink(missing_ok=True)


def progress_line(run: Run) -> str:
    """One line per finished run, for the console."""
    quality = "" if run.analogy_pct is None else f", analogy {run.analogy_pct:.1f}%, rho {run.ws353_rho:.3f}"
    if run.analogy_pct is not None and COMBOS[run.combo].subwords:
        quality += f", syntactic {fmt(run.syntactic_pct, '.1f')}%"
    status = f" FAILED: {run.error}" if run.error else ""
    return (
        f"bench: {run.system} {run.combo} t{run.threads} #{run.repeat}: {run.wall_s:.1f} s, "
        f"{run.words_per_s / 1e3:,.0f} kw/s, {run.peak_rss_mib:.0f} MiB{quality}{status}"
    )


def run_all(ctx: Context, combos: list[str], repeats: int, scaling: bool) -> list[Run]:
    """Every system on every combo it runs, the systems alternating, each round with its own seed;
    1-thread w2v runs after them with --scaling; then the round's roofs (``measure_roofs``)."""
    runs = []
    for repeat in range(repeats):
        for combo in combos:
            for system in systems_for(ctx.binaries, combo):
                runs.append(run_one(ctx, system, combo, repeat, ctx.settings.threads, scored=True))
            if scaling:
                runs.append(run_one(ctx, "w2v", combo, repeat, 1, scored=False))
        measure_roofs(ctx, [r for r in runs if r.repeat == repeat and r.system == "w2v" and r.vocab_size])
    return runs


def measure_roofs(ctx: Context, w2v_runs: list[Run]) -> None:
    """The machine's roofs (``scripts/roofline.py``) on the runs' threads and a matrix of
    their vocabulary's rows, after a round with w2v runs, into ``ctx.roofs``."""
    if not w2v_runs:
        return
    first = w2v_runs[0]
    command = [sys.executable, str(SCRIPTS / "roofline.py"), "--threads", str(ctx.settings.threads),
               "--rows", str(first.vocab_size), "--dim", str(ctx.settings.dim)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        ctx.notes.append(f"The roofs could not be measured: {done.stderr.strip().splitlines()[-1:]}")
        return
    ctx.roofs.append({"repeat": first.repeat, **json.loads(done.stdout)})
    print(f"bench: roofs of round {first.repeat}: {ctx.roofs[-1]}", file=sys.stderr, flush=True)


def warm_up(ctx: Context, combos: list[str]) -> None:
    """Run w2v once per combo on the tiny corpus (and few buckets), untimed, so that no timed run
    compiles Numba code."""
    settings = dataclasses.replace(ctx.settings, bucket=min(ctx.settings.bucket, 1000))
    tiny = dataclasses.replace(ctx, corpus=tiny_corpus(ctx.workdir), settings=settings)
    for combo in combos:
        output = ctx.workdir / "warm.bin"
        measure(train_command(tiny, "w2v", combo, ctx.settings.threads, output), ctx.workdir / "warm.log")
        remove(*output_files(tiny, "w2v", combo, output), report_path(output))


def measure_startup(ctx: Context, warm_runs: int) -> dict:
    """Wall seconds of ``w2v train`` on a 1,000-word corpus: a first run warms the Numba cache."""
    output = ctx.workdir / "startup.bin"
    command = [*ctx.binaries["w2v"], "train", str(tiny_corpus(ctx.workdir)), "-o", str(output), "--epochs", "1",
               "--min-count", "1", "--threads", str(ctx.settings.threads), "-q"]  # fmt: skip
    walls = [measure(command, ctx.workdir / "startup.log")[1] for _ in range(1 + warm_runs)]
    output.unlink(missing_ok=True)
    return {"command": command, "first_s": walls[0], "warm_s": walls[1:], "warm_median_s": statistics.median(walls[1:])}


def record(ctx: Context, runs: list[Run], *, command: str, date: str, machine: dict, startup: dict | None) -> dict:
    """The benchmark's JSON (``records.results_of`` reads it back): its ``command`` as shown,
    ``date``, ``machine`` (``machine_info``), corpus, settings, scorer, every run, the
    start-up measurement (``measure_startup``, or None), the roofs and the notes."""
    return {
        "command": command,
        "date": date,
        "machine": machine,
        "corpus": str(ctx.corpus),
        "corpus_tokens": ctx.tokens,
        "settings": dataclasses.asdict(ctx.settings),
        "scorer": ctx.scorer,
        "runs": [dataclasses.asdict(r) for r in runs],
        "startup": startup,
        "roofs": ctx.roofs,
        "notes": ctx.notes,
    }
