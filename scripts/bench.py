"""Benchmark ``w2v train`` side by side with word2vec.c, gensim and fastText.

Every system trains on one corpus with one set of settings, each as its own child process:
the wall time covers the whole command (vocabulary, training, writing the vectors), the peak
memory is the child's own (``os.wait4``), and one scorer rates every vectors file (analogy
accuracy over the 30,000 most frequent words, WordSim-353 Spearman rho). With ``--repeat``
above 1 the systems take turns (A B A B) and the report gives medians and the ratio of w2v to
each peer per pair of runs, since a shared machine's speed drifts. Writes into ``--out``
(``bench-results/`` by default): the Markdown report ``benchmarks.md``, the raw runs as
``benchmarks.json`` beside it and the plot ``img/benchmarks.png``.

    python scripts/bench.py --corpus text8 --repeat 3 --scaling --startup
    python scripts/bench.py --systems w2v,word2vec --combos sg-ns --corpus small.txt --out bench-results/small

docs/benchmarks.md and docs/performance.md come from parts that run separately (2 cores,
the benchmark corpus, all peers installed); each report is copied there with its plot
(``cp bench-results/benchmarks.md docs/ && cp bench-results/img/benchmarks.png docs/img/``):

- the tables and thread scaling: ``--systems w2v,word2vec,gensim --repeat 3 --scaling
  --startup``, about an hour;
- large vocabularies (docs/performance.md): ``--systems w2v,word2vec,gensim --combos
  sg-ns,cbow-ns --dim 300 --epochs 1 --min-count 1 --repeat 3``, again with ``--min-count
  5``, then both with ``--combos sg-hs,cbow-hs``, 11-15 minutes each (each with an
  ``--out`` of its own);
- kernel changes: ``scripts/ab_kernels.py`` (a few minutes a combination).

Peers are optional (``pip install -e .[bench]``); one that is not installed is skipped and
named in the report.
"""

import argparse
import dataclasses
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = Path(__file__).resolve().parent
SYSTEMS = ["w2v", "word2vec", "gensim", "fasttext"]
LABELS = {
    "w2v": "w2v",
    "word2vec": "word2vec.c",
    "gensim": "gensim (corpus_file)",
    "fasttext": "fastText (no subwords)",
}
COMBOS = {
    "sg-ns": ("skipgram", "ns"),
    "cbow-ns": ("cbow", "ns"),
    "sg-hs": ("skipgram", "hs"),
    "cbow-hs": ("cbow", "hs"),
}
COMBO_LABELS = {"sg-ns": "skip-gram+NS", "cbow-ns": "CBOW+NS", "sg-hs": "skip-gram+HS", "cbow-hs": "CBOW+HS"}
GENSIM_LINE_TOKENS = 10_000  # gensim's corpus_file mode drops the rest of a longer line
ANALOGY_VOCAB = 30_000
CHUNK = 1 << 20  # small: a fork inherits the parent's peak RSS into its own ru_maxrss
TARGETS = {"word2vec": 2.0, "gensim": 1.0}  # w2v words/s over the peer's: at least / above
ANALOGY_SLACK, RHO_SLACK, SCALING_TARGET, STARTUP_TARGET = 1.0, 0.02, 1.8, 2.0
REPORT, RAW, PLOT = "benchmarks.md", "benchmarks.json", "img/benchmarks.png"  # in --out, the plot linked as is
TEXT8 = "`http://mattmahoney.net/dc/text8.zip`"
CORPUS_NOTES = {  # what a known corpus is, for readers who do not have it
    "wiki-en-100m.txt": "the first 10^8 bytes of English Wikipedia text (an early-2015 dump) cleaned as text8 is "
    f"(lowercase a-z, digits spelled out): a stand-in for text8, the public word2vec benchmark corpus ({TEXT8}; "
    "`data/README.md` says how to make a similar one from a current dump)",
    "text8": f"the public word2vec benchmark corpus ({TEXT8})",
}


@dataclasses.dataclass
class Settings:
    """Training settings shared by every system."""

    threads: int
    epochs: int
    dim: int
    window: int
    negative: int
    sample: float
    min_count: int


@dataclasses.dataclass
class Run:
    """One measured command."""

    system: str
    combo: str
    repeat: int
    threads: int
    command: list[str]
    returncode: int
    wall_s: float
    words_per_s: float
    peak_rss_mib: float
    analogy_pct: float | None = None
    ws353_rho: float | None = None
    scorer: str | None = None
    error: str | None = None


@dataclasses.dataclass
class Context:
    """What every run needs: paths, settings, the scorer, and notes for the report."""

    corpus: Path
    gensim_corpus: Path | None
    tokens: int
    settings: Settings
    workdir: Path
    eval_dir: Path
    binaries: dict[str, list[str]]
    scorer: str
    notes: list[str] = dataclasses.field(default_factory=list)


def add_settings(parser: argparse.ArgumentParser) -> None:
    """The options every study of the systems shares: corpus, systems, combos, training settings."""
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated; default: all installed")
    parser.add_argument("--combos", default=",".join(COMBOS), help="comma-separated model-loss pairs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5, help="noise words for the -ns combos")
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "w2v-bench")
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT / "w2v/data", help="holds questions-words.txt and wordsim353.tsv"
    )


def check_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Split the comma-separated lists of ``args`` in place; a parser error for unknown names
    or a missing corpus."""
    args.systems = [s for s in args.systems.split(",") if s]
    args.combos = [c for c in args.combos.split(",") if c]
    bad = [s for s in args.systems if s not in SYSTEMS] + [c for c in args.combos if c not in COMBOS]
    if bad:
        parser.error(f"unknown system or combo: {', '.join(bad)}")
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_settings(parser)
    parser.add_argument("--repeat", type=int, default=1, help="rounds; systems alternate within each")
    parser.add_argument("--scaling", action="store_true", help="also time w2v with 1 thread (not scored)")
    parser.add_argument("--startup", action="store_true", help="also time w2v train on a tiny corpus, warm")
    parser.add_argument(
        "--out", type=Path, default=Path("bench-results"), help="the folder of the report, its JSON and its plot"
    )
    args = parser.parse_args(argv)
    check_settings(parser, args)
    if args.scaling and args.threads < 2:
        parser.error("--scaling compares 1 thread with --threads: give --threads 2 or more")
    return args


# --- corpus ---------------------------------------------------------------------------------


def count_tokens(path: Path) -> int:
    """Whitespace-separated tokens in ``path``, read in chunks."""
    total, inside_word = 0, False
    with open(path, "rb") as corpus:
        while chunk := corpus.read(CHUNK):
            total += len(chunk.split())
            if inside_word and not chunk[:1].isspace():
                total -= 1  # a word cut by the chunk boundary was counted twice
            inside_word = not chunk[-1:].isspace()
    return total


def read_tokens(path: Path):
    """Yield the whitespace-separated tokens of ``path`` as bytes, in chunk-sized lists."""
    carry = b""
    with open(path, "rb") as corpus:
        while chunk := corpus.read(CHUNK):
            words = (carry + chunk).split()
            carry = b"" if chunk[-1:].isspace() or not words else words.pop()
            yield words
    if carry:
        yield [carry]


def gensim_copy(corpus: Path, workdir: Path) -> Path:
    """A copy of ``corpus`` in lines of at most 10,000 tokens, made once per corpus version."""
    stat = corpus.stat()
    path = workdir / f"{corpus.stem}.lines{GENSIM_LINE_TOKENS}-{stat.st_size}-{int(stat.st_mtime)}.txt"
    if path.exists():
        return path
    pending: list[bytes] = []
    with tempfile.NamedTemporaryFile(dir=workdir, prefix=f".{path.name}.", suffix=".tmp", delete=False) as out:
        for words in read_tokens(corpus):
            pending.extend(words)
            while len(pending) >= GENSIM_LINE_TOKENS:
                out.write(b" ".join(pending[:GENSIM_LINE_TOKENS]) + b"\n")
                del pending[:GENSIM_LINE_TOKENS]
        if pending:
            out.write(b" ".join(pending) + b"\n")
    os.replace(out.name, path)
    return path


# --- systems --------------------------------------------------------------------------------


def find_command(name: str) -> str | None:
    """A console script of this interpreter's environment, else one on PATH (shims are slower)."""
    local = Path(sysconfig.get_path("scripts")) / name
    return str(local) if local.is_file() and os.access(local, os.X_OK) else shutil.which(name)


def find_systems(wanted: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """The command prefix of each wanted system that is installed, and a note per missing one."""
    found, notes = {}, []
    w2v = find_command("w2v")
    found["w2v"] = [w2v] if w2v else [sys.executable, "-m", "w2v"]
    c_tool = find_command("word2vec")
    if c_tool:
        found["word2vec"] = [c_tool]
    for peer in ("gensim", "fasttext"):
        if importlib.util.find_spec(peer):
            found[peer] = [sys.executable, str(SCRIPTS / f"{peer}_runner.py")]
    for system in wanted:
        if system not in found:
            notes.append(f"{LABELS[system]} is not installed (`pip install -e .[bench]`): skipped.")
    return {s: found[s] for s in wanted if s in found}, notes


def train_command(ctx: Context, system: str, combo: str, threads: int, output: Path) -> list[str]:
    """The full command line that trains ``system`` on ``combo`` and writes ``output``."""
    s, (model, loss) = ctx.settings, COMBOS[combo]
    negative = s.negative if loss == "ns" else 0
    base = ctx.binaries[system]
    if system == "w2v":
        loss_flags = ["--hs"] if loss == "hs" else ["--negative", str(negative)]
        return [*base, "train", str(ctx.corpus), "-o", str(output), "--model", model, *loss_flags,
                "--sample", str(s.sample), "--threads", str(threads), "--epochs", str(s.epochs),
                "--dim", str(s.dim), "--window", str(s.window), "--min-count", str(s.min_count), "-q"]  # fmt: skip
    if system == "word2vec":
        return [*base, "-train", str(ctx.corpus), "-output", str(output), "-size", str(s.dim),
                "-window", str(s.window), "-negative", str(negative), "-hs", str(int(loss == "hs")),
                "-sample", str(s.sample), "-min-count", str(s.min_count), "-iter", str(s.epochs),
                "-threads", str(threads), "-binary", "1", "-cbow", str(int(model == "cbow"))]  # fmt: skip
    common = ["--negative", str(negative), "--dim", str(s.dim), "--window", str(s.window),
              "--sample", str(s.sample), "--min-count", str(s.min_count), "--epochs", str(s.epochs),
              "--threads", str(threads)]  # fmt: skip
    if system == "gensim":
        flags = ["--sg", str(int(model == "skipgram")), "--hs", str(int(loss == "hs"))]
        return [*base, str(ctx.gensim_corpus), str(output), *flags, *common]
    return [*base, str(ctx.corpus), str(output), "--model", model, "--loss", loss, *common]


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


# --- scoring --------------------------------------------------------------------------------


def pick_scorer() -> str:
    """``w2v eval`` when this w2v has it, else gensim."""
    probe = subprocess.run([sys.executable, "-m", "w2v", "eval", "--help"], capture_output=True, text=True)
    if probe.returncode == 0 and "--json" in probe.stdout:
        return "w2v eval"
    return "gensim"


def score(ctx: Context, vectors: Path) -> tuple[float | None, float | None, str | None]:
    """Analogy accuracy (%) and WS-353 rho of a binary vectors file, and the scorer that gave them
    (``None`` for all three, with a note, when no scorer can rate it)."""
    if ctx.scorer == "w2v eval":
        try:
            return (*score_w2v(ctx, vectors), "w2v eval")
        except (subprocess.CalledProcessError, ValueError, KeyError, IndexError, TypeError) as err:
            ctx.notes.append(f"`w2v eval` failed on {vectors.name} ({err}); gensim scored it instead.")
    try:
        return (*score_gensim(ctx, vectors), "gensim")
    except (ValueError, KeyError, ZeroDivisionError, OSError) as err:
        ctx.notes.append(f"gensim could not score {vectors.name}: {err}")
        return None, None, None


def score_w2v(ctx: Context, vectors: Path) -> tuple[float, float]:
    """Score with ``w2v eval --json`` (analogy accuracy there is a fraction)."""
    command = [sys.executable, "-m", "w2v", "eval", "-v", str(vectors), "--json", "--restrict", str(ANALOGY_VOCAB),
               "--analogies", str(ctx.eval_dir / "questions-words.txt"),
               "--similarity", str(ctx.eval_dir / "wordsim353.tsv")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    return 100 * float(result["analogies"][0]["accuracy"]), float(result["similarity"][0]["spearman"])


def score_gensim(ctx: Context, vectors: Path) -> tuple[float, float]:
    """Score with gensim: questions-words over the 30,000 most frequent words, case-insensitive."""
    from gensim.models import KeyedVectors  # optional, and slow to import

    kv = KeyedVectors.load_word2vec_format(str(vectors), binary=True, unicode_errors="replace")
    with warnings.catch_warnings():  # all-zero vectors (words never trained) divide by a zero norm
        warnings.simplefilter("ignore", RuntimeWarning)
        analogy = kv.evaluate_word_analogies(
            str(ctx.eval_dir / "questions-words.txt"), restrict_vocab=ANALOGY_VOCAB, case_insensitive=True
        )[0]
        rho = kv.evaluate_word_pairs(str(ctx.eval_dir / "wordsim353.tsv"), case_insensitive=True)[1][0]
    return 100 * analogy, float(rho)


# --- runs -----------------------------------------------------------------------------------


def run_one(ctx: Context, system: str, combo: str, repeat: int, threads: int, scored: bool) -> Run:
    """Train once, measure, score (if asked), and drop the vectors file."""
    name = f"{system}-{combo}-t{threads}-r{repeat}"
    output, log = ctx.workdir / f"{name}.bin", ctx.workdir / f"{name}.log"
    command = train_command(ctx, system, combo, threads, output)
    rc, wall, rss = measure(command, log)
    run = Run(system, combo, repeat, threads, command, rc, wall, ctx.tokens * ctx.settings.epochs / wall, rss)
    if rc != 0 or not output.exists():
        run.error = tail(log) or f"exit status {rc}"
    elif scored:
        run.analogy_pct, run.ws353_rho, run.scorer = score(ctx, output)
    output.unlink(missing_ok=True)
    print(progress_line(run), file=sys.stderr, flush=True)
    return run


def progress_line(run: Run) -> str:
    """One line per finished run, for the console."""
    quality = "" if run.analogy_pct is None else f", analogy {run.analogy_pct:.1f}%, rho {run.ws353_rho:.3f}"
    status = f" FAILED: {run.error}" if run.error else ""
    return (
        f"bench: {run.system} {run.combo} t{run.threads} #{run.repeat}: {run.wall_s:.1f} s, "
        f"{run.words_per_s / 1e3:,.0f} kw/s, {run.peak_rss_mib:.0f} MiB{quality}{status}"
    )


def run_all(ctx: Context, combos: list[str], repeats: int, scaling: bool) -> list[Run]:
    """Every system on every combo, the systems alternating; 1-thread w2v runs after them with --scaling."""
    runs = []
    for repeat in range(repeats):
        for combo in combos:
            for system in ctx.binaries:
                runs.append(run_one(ctx, system, combo, repeat, ctx.settings.threads, scored=True))
            if scaling:
                runs.append(run_one(ctx, "w2v", combo, repeat, 1, scored=False))
    return runs


def tiny_corpus(ctx: Context) -> Path:
    """A 1,000-word corpus of 50 distinct words, for start-up and warm-up runs."""
    rng = random.Random(1)
    path = ctx.workdir / "tiny-corpus.txt"
    path.write_text(" ".join(f"w{rng.randrange(50)}" for _ in range(1000)))
    return path


def warm_up(ctx: Context, combos: list[str]) -> None:
    """Run w2v once per combo on the tiny corpus, untimed, so that no timed run compiles Numba code."""
    tiny = dataclasses.replace(ctx, corpus=tiny_corpus(ctx))
    for combo in combos:
        measure(
            train_command(tiny, "w2v", combo, ctx.settings.threads, ctx.workdir / "warm.bin"), ctx.workdir / "warm.log"
        )
    (ctx.workdir / "warm.bin").unlink(missing_ok=True)


def measure_startup(ctx: Context, warm_runs: int) -> dict:
    """Wall seconds of ``w2v train`` on a 1,000-word corpus: a first run warms the Numba cache."""
    output = ctx.workdir / "startup.bin"
    command = [*ctx.binaries["w2v"], "train", str(tiny_corpus(ctx)), "-o", str(output), "--epochs", "1",
               "--min-count", "1", "--threads", str(ctx.settings.threads), "-q"]  # fmt: skip
    walls = [measure(command, ctx.workdir / "startup.log")[1] for _ in range(1 + warm_runs)]
    output.unlink(missing_ok=True)
    return {"command": command, "first_s": walls[0], "warm_s": walls[1:], "warm_median_s": statistics.median(walls[1:])}


# --- summary --------------------------------------------------------------------------------


def median_of(runs: list[Run], attr: str) -> float | None:
    """Median of a run attribute over the runs that have it."""
    values = [getattr(r, attr) for r in runs if getattr(r, attr) is not None]
    return statistics.median(values) if values else None


def select(runs: list[Run], system: str, combo: str, threads: int) -> list[Run]:
    """The successful runs of one system, combo and thread count, in order."""
    return [r for r in runs if (r.system, r.combo, r.threads) == (system, combo, threads) and r.error is None]


def pair_ratios(runs: list[Run], peer: str, combo: str, threads: int, peer_threads: int | None = None) -> list[float]:
    """w2v words/s over the peer's, per repeat where both succeeded."""
    mine = {r.repeat: r.words_per_s for r in select(runs, "w2v", combo, threads)}
    theirs = {r.repeat: r.words_per_s for r in select(runs, peer, combo, peer_threads or threads)}
    return [mine[k] / theirs[k] for k in sorted(mine.keys() & theirs.keys())]


def check(ok: bool | None) -> str:
    """PASS, FAIL, or a dash when it cannot be told."""
    return "–" if ok is None else ("PASS" if ok else "FAIL")


def target_checks(runs: list[Run], combo: str, threads: int) -> dict[str, str]:
    """The targets for one combo, from medians and per-pair ratios."""
    w2v, c_tool = (select(runs, s, combo, threads) for s in ("w2v", "word2vec"))
    out = {}
    for peer, need in TARGETS.items():
        ratios = pair_ratios(runs, peer, combo, threads)
        median = statistics.median(ratios) if ratios else None
        out[f"speed vs {peer}"] = check(
            None if median is None else (median >= need if peer == "word2vec" else median > need)
        )
    out["analogy vs C"] = compare(median_of(w2v, "analogy_pct"), median_of(c_tool, "analogy_pct"), -ANALOGY_SLACK)
    out["rho vs C"] = compare(median_of(w2v, "ws353_rho"), median_of(c_tool, "ws353_rho"), -RHO_SLACK)
    return out


def compare(value: float | None, reference: float | None, slack: float) -> str:
    """PASS when ``value >= reference + slack``; a dash when either is missing."""
    return check(None if value is None or reference is None else value >= reference + slack)


def machine_info() -> dict:
    """CPU model, cores, memory, and the versions of Python and the libraries involved."""
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout if shutil.which("lscpu") else ""
    model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name")), "")
    meminfo = Path("/proc/meminfo").read_text().split() if Path("/proc/meminfo").exists() else []
    ram_gib = int(meminfo[meminfo.index("MemTotal:") + 1]) / 2**20 if "MemTotal:" in meminfo else None
    versions = {"python": platform.python_version()}
    for package in ("w2v", "numpy", "numba", "gensim", "word2vec", "fasttext-wheel", "matplotlib"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return {
        "cpu": model or platform.processor(),
        "cores": os.cpu_count(),
        "ram_gib": ram_gib,
        "os": platform.platform(),
        "versions": versions,
    }


# --- report ---------------------------------------------------------------------------------


def fmt(value: float | None, spec: str) -> str:
    """A number for a table cell, or a dash."""
    return "–" if value is None else format(value, spec)


def system_table(runs: list[Run], ctx: Context, combo: str) -> list[str]:
    """One combo's table: medians per system."""
    head = "| system | runs | wall s | kw/s | peak MiB | analogy % | WS-353 rho |"
    lines = [f"### {COMBO_LABELS[combo]}", "", head, "|---" * 7 + "|"]
    for system in ctx.binaries:
        done = select(runs, system, combo, ctx.settings.threads)
        failed = sum(1 for r in runs if (r.system, r.combo) == (system, combo) and r.error)
        count = f"{len(done)}" + (f" ({failed} failed)" if failed else "")
        kws = median_of(done, "words_per_s")
        lines.append(
            f"| {LABELS[system]} | {count} | {fmt(median_of(done, 'wall_s'), '.1f')} "
            f"| {fmt(kws and kws / 1e3, ',.0f')} | {fmt(median_of(done, 'peak_rss_mib'), '.0f')} "
            f"| {fmt(median_of(done, 'analogy_pct'), '.1f')} | {fmt(median_of(done, 'ws353_rho'), '.3f')} |"
        )
    return [*lines, ""]


def ratio_table(runs: list[Run], ctx: Context, combos: list[str]) -> list[str]:
    """w2v's words/s over each peer's, per pair of runs, with the median."""
    lines = ["| model+loss | peer | w2v / peer per pair | median |", "|---|---|---|---|"]
    for combo in combos:
        for peer in (s for s in ctx.binaries if s != "w2v"):
            ratios = pair_ratios(runs, peer, combo, ctx.settings.threads)
            cell = ", ".join(f"{r:.2f}" for r in ratios) or "–"
            median = fmt(statistics.median(ratios) if ratios else None, ".2f")
            lines.append(f"| {COMBO_LABELS[combo]} | {LABELS[peer]} | {cell} | {median} |")
    return [*lines, ""]


def targets_table(runs: list[Run], ctx: Context, combos: list[str]) -> list[str]:
    """PASS/FAIL per target and combo."""
    names = list(target_checks(runs, combos[0], ctx.settings.threads))
    heads = {
        "speed vs word2vec": "≥ 2× word2vec.c",
        "speed vs gensim": "> gensim",
        "analogy vs C": "analogy ≥ C − 1",
        "rho vs C": "rho ≥ C − 0.02",
    }
    lines = ["| model+loss | " + " | ".join(heads[n] for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    for combo in combos:
        checks = target_checks(runs, combo, ctx.settings.threads)
        lines.append(f"| {COMBO_LABELS[combo]} | " + " | ".join(checks[n] for n in names) + " |")
    return [*lines, ""]


def scaling_table(runs: list[Run], ctx: Context, combos: list[str]) -> list[str]:
    """w2v words/s with N threads over 1 thread, per pair of runs."""
    n = ctx.settings.threads
    head = f"| model+loss | kw/s 1 thread | kw/s {n} threads | ratio per pair | median | ≥ {SCALING_TARGET}× |"
    lines = ["## Thread scaling (w2v)", "", head, "|---|---|---|---|---|---|"]
    for combo in combos:
        one, many = (median_of(select(runs, "w2v", combo, t), "words_per_s") for t in (1, n))
        mine = {r.repeat: r.words_per_s for r in select(runs, "w2v", combo, n)}
        ratios = [mine[r.repeat] / r.words_per_s for r in select(runs, "w2v", combo, 1) if r.repeat in mine]
        median = statistics.median(ratios) if ratios else None
        lines.append(
            f"| {COMBO_LABELS[combo]} | {fmt(one and one / 1e3, ',.0f')} | {fmt(many and many / 1e3, ',.0f')} "
            f"| {', '.join(f'{r:.2f}' for r in ratios) or '–'} | {fmt(median, '.2f')} "
            f"| {check(None if median is None else median >= SCALING_TARGET)} |"
        )
    return [*lines, ""]


def startup_lines(startup: dict) -> list[str]:
    """The start-up measurement."""
    warm = startup["warm_median_s"]
    return [
        "## Start-up (w2v)",
        "",
        f"`w2v train` on a 1,000-word corpus: {startup['first_s']:.2f} s the first time (Numba cache may be cold), "
        f"{warm:.2f} s warm (median of {len(startup['warm_s'])}): {check(warm < STARTUP_TARGET)} "
        f"(target < {STARTUP_TARGET:.0f} s).",
        "",
    ]


def header_lines(ctx: Context, info: dict, command: str, when: str) -> list[str]:
    """Title, command, machine and settings."""
    s, v = ctx.settings, info["versions"]
    ram = f"{info['ram_gib']:.0f} GiB RAM" if info["ram_gib"] else "RAM unknown"
    return [
        "# Benchmarks",
        "",
        "Generated by `scripts/bench.py`: do not edit by hand. Accuracy against wall time, epoch by epoch, "
        "is a study of its own (`studies/equal_time/`).",
        "",
        f"- Command: `{command}`",
        f"- Date: {when}",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {ram}; {info['os']}",
        "- Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- Corpus: `{ctx.corpus.name}`, {ctx.tokens:,} tokens"
        + (f": {CORPUS_NOTES[ctx.corpus.name]}" if ctx.corpus.name in CORPUS_NOTES else ""),
        f"- Settings: dim {s.dim}, window {s.window}, negative {s.negative} (NS) or hierarchical softmax alone "
        f"(HS), sample {s.sample:g}, min-count {s.min_count}, {s.epochs} epochs, {s.threads} threads, "
        "default learning rates",
        f"- Scorer: {ctx.scorer}; analogy = questions-words accuracy over the {ANALOGY_VOCAB:,} most frequent "
        "words (case-insensitive), WS-353 = Spearman rho",
        "- wall = the whole command (vocabulary, training, writing vectors); kw/s = corpus tokens × epochs / wall, "
        "in thousands; peak = the child process's maximum resident set size; figures are medians over runs",
        "",
    ]


def standing_notes(ctx: Context) -> list[str]:
    """Notes that always apply."""
    notes = [
        "The systems run one after another, taking turns in each round, so drift in the machine's speed "
        "falls on all of them; ratios are taken per pair of runs of the same round.",
        "Before the timed runs w2v trains once per model on a tiny corpus, untimed, so its Numba cache is warm.",
    ]
    if "gensim" in ctx.binaries:
        notes.append(
            f"gensim's fastest mode (`corpus_file`) trains only the first {GENSIM_LINE_TOKENS:,} tokens of each "
            "line and drops the rest without a word, so it trains on a copy of the corpus cut into lines of at most "
            f"{GENSIM_LINE_TOKENS:,} tokens (made once, not timed); the other systems read the original file. "
            "It is given word2vec.c's learning rates (0.025 skip-gram, 0.05 CBOW, decaying to alpha * 1e-4), "
            "not its own default 0.025 for both, so that every system trains with the same settings."
        )
    if "word2vec" in ctx.binaries:
        notes.append(
            "word2vec.c (`pip install word2vec`, command `word2vec`) holds a 10^8-entry negative-sampling "
            "table (400 MB) with NS: most of its peak memory."
        )
    if "fasttext" in ctx.binaries:
        notes.append(
            "fastText runs with subwords off (minn = maxn = 0, wordNgrams 1, bucket 0) and word2vec.c's "
            "learning rates (its own default is 0.05 for both models); its runner writes word2vec binary vectors "
            "like the others."
        )
    return notes


def shown(command: list[str]) -> str:
    """``command`` as a reader can run it from the corpus' folder: a program by its name
    (``python`` for this interpreter), a file of this checkout by its path in it, any
    other absolute path (the corpus, the work folder's files, a console script such as
    ``w2v`` of this environment, which may lie inside the checkout) by its file name."""
    scripts = Path(sysconfig.get_path("scripts"))
    words = []
    for word in command:
        path = Path(word)
        if word == sys.executable:
            words.append("python")
        elif path.parent == scripts:
            words.append(path.name)
        elif not path.is_absolute():
            words.append(word)
        elif path.is_relative_to(ROOT):
            words.append(str(path.relative_to(ROOT)))
        else:
            words.append(path.name)
    return shlex.join(words)


def command_lines(runs: list[Run]) -> list[str]:
    """The command of each system's first run per model and thread count (``shown``)."""
    seen, lines = set(), ["## Commands (first round)", "", "```"]
    for run in runs:
        if (run.system, run.combo, run.threads) not in seen:
            seen.add((run.system, run.combo, run.threads))
            lines.append(shown(run.command))
    return [*lines, "```", ""]


def render(ctx: Context, runs: list[Run], combos: list[str], extras: dict, info: dict) -> str:
    """The Markdown report."""
    lines = header_lines(ctx, info, extras["command"], extras["date"])
    if extras.get("plot"):
        lines += [f"![words/s and analogy accuracy per system and model]({extras['plot']})", ""]
    lines += ["## Results", ""]
    for combo in combos:
        lines += system_table(runs, ctx, combo)
    if len(ctx.binaries) > 1:
        lines += ["## w2v against each peer (words/s)", "", *ratio_table(runs, ctx, combos)]
        lines += ["## Targets", "", *targets_table(runs, ctx, combos)]
    if extras.get("scaling"):
        lines += scaling_table(runs, ctx, combos)
    if extras.get("startup"):
        lines += startup_lines(extras["startup"])
    lines += command_lines(runs)
    lines += ["## Notes", ""] + [f"- {note}" for note in standing_notes(ctx) + ctx.notes]
    return "\n".join(lines) + "\n"


def pyplot():
    """matplotlib's pyplot drawing to files (the Agg backend), or None where matplotlib is not installed."""
    try:
        import matplotlib  # optional

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot(runs: list[Run], ctx: Context, combos: list[str], path: Path) -> bool:
    """Bar charts of words/s and analogy accuracy per system and combo; False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / len(ctx.binaries)
    for i, system in enumerate(ctx.binaries):
        picked = [select(runs, system, combo, ctx.settings.threads) for combo in combos]
        xs = [k + i * width for k in range(len(combos))]
        kws = [(median_of(p, "words_per_s") or 0) / 1e3 for p in picked]
        acc = [median_of(p, "analogy_pct") or 0 for p in picked]
        axes[0].bar(xs, kws, width, label=LABELS[system])
        axes[1].bar(xs, acc, width, label=LABELS[system])
    for ax, title in zip(axes, ["thousand words/s (higher is faster)", "analogy accuracy %"], strict=True):
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(combos))], [COMBO_LABELS[c] for c in combos])
        ax.set_title(title)
    axes[0].legend()
    fig.suptitle(f"{ctx.corpus.name}, {ctx.settings.threads} threads, {ctx.settings.epochs} epochs")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_outputs(args: argparse.Namespace, ctx: Context, runs: list[Run], extras: dict) -> None:
    """The Markdown report, the JSON of every run beside it and the plot, in ``args.out``."""
    info = machine_info()
    args.out.mkdir(parents=True, exist_ok=True)
    if plot(runs, ctx, args.combos, args.out / PLOT):
        extras["plot"] = PLOT
    else:
        ctx.notes.append("matplotlib is not installed: no plot.")
    raw = {
        "command": extras["command"],
        "date": extras["date"],
        "machine": info,
        "corpus": str(ctx.corpus),
        "corpus_tokens": ctx.tokens,
        "settings": dataclasses.asdict(ctx.settings),
        "scorer": ctx.scorer,
        "runs": [dataclasses.asdict(r) for r in runs],
        "startup": extras.get("startup"),
        "notes": ctx.notes,
    }
    (args.out / RAW).write_text(json.dumps(raw, indent=1) + "\n")
    (args.out / REPORT).write_text(render(ctx, runs, args.combos, extras, info))


def make_context(args: argparse.Namespace) -> Context:
    """Find the systems and the scorer, count the corpus, make gensim's copy."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    binaries, notes = find_systems(args.systems)
    settings = Settings(args.threads, args.epochs, args.dim, args.window, args.negative, args.sample, args.min_count)
    scorer = pick_scorer()
    if scorer == "gensim" and not importlib.util.find_spec("gensim"):
        sys.exit("bench: no scorer: neither `w2v eval --json` nor gensim is available")
    gensim_corpus = gensim_copy(args.corpus, args.workdir) if "gensim" in binaries else None
    corpus = args.corpus.resolve()
    return Context(
        corpus,
        gensim_corpus,
        count_tokens(corpus),
        settings,
        args.workdir,
        args.eval_dir.resolve(),
        binaries,
        scorer,
        notes,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 1 if any run failed."""
    args = parse_args(argv)
    ctx = make_context(args)
    extras = {
        "command": shown(["python", "scripts/bench.py", *(sys.argv[1:] if argv is None else argv)]),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "scaling": args.scaling,
    }
    if args.startup:
        extras["startup"] = measure_startup(ctx, max(2, args.repeat))
    warm_up(ctx, args.combos)
    runs = run_all(ctx, args.combos, args.repeat, args.scaling)
    write_outputs(args, ctx, runs, extras)
    print(f"bench: wrote {args.out / REPORT}, {args.out / RAW}", file=sys.stderr)
    return 1 if any(r.error for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
