"""Benchmark ``w2v train`` side by side with word2vec.c, gensim and fastText (and, with
``--subwords``, fastText's model against fastText and gensim's FastText).

Every system trains on one corpus with one set of settings, each as its own child process:
the wall time covers the whole command (vocabulary, training, writing the vectors), the peak
memory is the child's own (``os.wait4``), and one scorer rates every vectors file (analogy
accuracy over the 30,000 most frequent words, WordSim-353 Spearman rho). With ``--repeat``
above 1 the systems take turns (A B A B) and the report gives medians and the ratio of w2v to
each peer per pair of runs, since a shared machine's speed drifts. After each round the
machine's roofs are measured on the same threads (``scripts/roofline.py``: sgemm's GFLOP/s,
random row updates a second), and the report sets each w2v run's useful arithmetic and row
traffic (counted by its kernel, from ``w2v train --report``) against them. Writes into ``--out``
(``bench-results/`` by default): the Markdown report ``benchmarks.md``, the raw runs as
``benchmarks.json`` beside it and the plot ``img/benchmarks.png`` (``--name`` other than
``benchmarks``: those names).

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
- subword vectors (issue 48's targets: fastText's model against fastText and gensim's
  FastText, each at fastText's unsupervised defaults, writing its .vec and .bin):
  ``--systems w2v,fasttext,gensim-ft --combos sg-sub,cbow-sub --repeat 3 --name
  subword-benchmarks`` (three rounds, one seed each: quality as means over the seeds),
  copied to docs/ in the same way;
- against pWord2Vec (skip-gram NS alone; ``scripts/build_pword2vec.sh`` builds it), with the
  roofline of all four word combos: ``--systems w2v,pword2vec --combos sg-ns,cbow-ns,sg-hs,cbow-hs
  --repeat 3 --pword2vec PATH --name pword2vec-benchmarks``, about 10 minutes;
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
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = Path(__file__).resolve().parent
SYSTEMS = ["w2v", "word2vec", "gensim", "fasttext", "gensim-ft", "pword2vec"]
LABELS = {
    "w2v": "w2v",
    "word2vec": "word2vec.c",
    "gensim": "gensim (corpus_file)",
    "fasttext": "fastText",
    "gensim-ft": "gensim FastText (corpus_file)",
    "pword2vec": "pWord2Vec",
}
SUBWORD_SYSTEMS = ("w2v", "fasttext", "gensim-ft")  # the systems that learn character n-grams
WORD_SYSTEMS = ("w2v", "word2vec", "gensim", "fasttext")  # fastText with its n-grams off
PWORD2VEC_COMBOS = ("sg-ns",)  # Intel's pWord2Vec trains skip-gram with negative sampling alone
RUNNERS = {"gensim": "gensim", "gensim-ft": "gensim", "fasttext": "fasttext"}  # system: module (scripts/*_runner.py)


class Combo(NamedTuple):
    """A model-loss pair, and whether a word's input is built from its character n-grams too
    (fastText's model, trained at fastText's unsupervised defaults)."""

    model: str
    loss: str
    subwords: bool = False


COMBOS = {
    "sg-ns": Combo("skipgram", "ns"),
    "cbow-ns": Combo("cbow", "ns"),
    "sg-hs": Combo("skipgram", "hs"),
    "cbow-hs": Combo("cbow", "hs"),
    "sg-sub": Combo("skipgram", "ns", subwords=True),
    "cbow-sub": Combo("cbow", "ns", subwords=True),
}
DEFAULT_COMBOS = [c for c, combo in COMBOS.items() if not combo.subwords]  # the subword ones: --combos sg-sub,cbow-sub
COMBO_LABELS = {
    "sg-ns": "skip-gram+NS",
    "cbow-ns": "CBOW+NS",
    "sg-hs": "skip-gram+HS",
    "cbow-hs": "CBOW+HS",
    "sg-sub": "skip-gram+NS, subwords",
    "cbow-sub": "CBOW+NS, subwords",
}
SUBWORD_COMMAND = (  # for the report's notes; the module docstring says the same
    "python scripts/bench.py --corpus text8 --systems w2v,fasttext,gensim-ft --combos sg-sub,cbow-sub --repeat 3 "
    "--name subword-benchmarks"
)
PWORD2VEC_COMMAND = (  # likewise
    "python scripts/bench.py --corpus text8 --systems w2v,pword2vec --combos sg-ns,cbow-ns,sg-hs,cbow-hs --repeat 3 "
    "--pword2vec PATH --name pword2vec-benchmarks"
)
SUBWORD_ALPHA, SUBWORD_NS_EXPONENT = 0.05, 0.5  # fastText's lr and its fixed noise exponent (counts^0.5)
W2V_MODEL_FILES = {"--save-fasttext": ".bin", "--save-model": ".npz"}  # w2v's full-model option: its file's suffix
GENSIM_LINE_TOKENS = 10_000  # gensim's corpus_file mode drops the rest of a longer line
ANALOGY_VOCAB = 30_000
SYNTACTIC_PREFIX = "gram"  # questions-words' syntactic sections: gram1-adjective-to-adverb ...
CHUNK = 1 << 20  # small: a fork inherits the parent's peak RSS into its own ru_maxrss
SCALING_TARGET, STARTUP_TARGET = 1.8, 2.0


def report_files(name: str) -> tuple[str, str, str]:
    """The report, raw runs and plot that a run named ``name`` writes into ``--out``
    (the plot linked from the report as is)."""
    return f"{name}.md", f"{name}.json", f"img/{name}.png"


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
    minn: int = 3  # the subword combos' n-gram lengths and buckets: fastText's defaults
    maxn: int = 6
    bucket: int = 2_000_000


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
    syntactic_pct: float | None = None  # analogy accuracy on the gram* sections alone
    seed: int | None = None  # None: a system that takes no seed (word2vec.c, pWord2Vec)
    train_s: float | None = None  # w2v: the training alone (its --report), for the roofline
    output_updates: int | None = None  # w2v: the kernel's output-row updates (6 x dim flops each)
    row_visits: int | None = None  # w2v: the rows the kernel read and wrote
    vocab_size: int | None = None  # w2v: the words of its vocabulary


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
    w2v_model_flag: str = "--save-model"  # how w2v writes its full model with subwords (W2V_MODEL_FILES)
    roofs: list[dict] = dataclasses.field(default_factory=list)  # scripts/roofline.py's, one per round


def add_settings(parser: argparse.ArgumentParser) -> None:
    """The options every study of the systems shares: corpus, systems, combos, training settings."""
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help="comma-separated; default: all installed (each runs the combos it can: " + systems_help() + ")",
    )
    parser.add_argument(
        "--combos",
        default=",".join(DEFAULT_COMBOS),
        help=f"comma-separated model-loss pairs, of {', '.join(COMBOS)} (the -sub ones: fastText's model and "
        "unsupervised defaults)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5, help="noise words for the -ns combos")
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--minn", type=int, default=3, help="-sub combos: the shortest character n-gram")
    parser.add_argument("--maxn", type=int, default=6, help="-sub combos: the longest character n-gram")
    parser.add_argument("--bucket", type=int, default=2_000_000, help="-sub combos: rows the n-grams hash into")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "w2v-bench")
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT / "w2v/data", help="holds questions-words.txt and wordsim353.tsv"
    )
    parser.add_argument(
        "--pword2vec",
        default=os.environ.get("PWORD2VEC"),
        help="pWord2Vec's binary (scripts/build_pword2vec.sh builds it); default: $PWORD2VEC, else pWord2Vec on PATH",
    )


def check_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Split the comma-separated lists of ``args`` in place, leaving out the systems that run
    none of the combos (``can_run``); a parser error for unknown names or a missing corpus."""
    args.systems = [s for s in args.systems.split(",") if s]
    args.combos = [c for c in args.combos.split(",") if c]
    bad = [s for s in args.systems if s not in SYSTEMS] + [c for c in args.combos if c not in COMBOS]
    if bad:
        parser.error(f"unknown system or combo: {', '.join(bad)}")
    args.systems = [s for s in args.systems if any(can_run(s, c) for c in args.combos)]
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")


def can_run(system: str, combo: str) -> bool:
    """Whether ``system`` trains ``combo``: n-grams (the -sub combos) or words alone
    (pWord2Vec: skip-gram NS alone)."""
    if system == "pword2vec":
        return combo in PWORD2VEC_COMBOS
    return system in (SUBWORD_SYSTEMS if COMBOS[combo].subwords else WORD_SYSTEMS)


def systems_help() -> str:
    """Which systems run which kind of combo, for --help."""
    return (
        f"{', '.join(WORD_SYSTEMS)} the word combos; {', '.join(SUBWORD_SYSTEMS)} the -sub ones; "
        f"pword2vec {', '.join(PWORD2VEC_COMBOS)}"
    )


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
    parser.add_argument("--name", default="benchmarks", help="the report's name: NAME.md, NAME.json, img/NAME.png")
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


def find_systems(wanted: list[str], pword2vec: str | None) -> tuple[dict[str, list[str]], list[str]]:
    """The command prefix of each wanted system that is installed (pWord2Vec: the binary
    ``pword2vec`` names, else ``pWord2Vec`` on PATH), and a note per missing one."""
    found, notes = {}, []
    w2v = find_command("w2v")
    found["w2v"] = [w2v] if w2v else [sys.executable, "-m", "w2v"]
    for system, tool in (("word2vec", find_command("word2vec")), ("pword2vec", pword2vec or find_command("pWord2Vec"))):
        if tool and os.access(tool, os.X_OK):
            found[system] = [tool]
    for system, module in RUNNERS.items():
        if importlib.util.find_spec(module):
            found[system] = [sys.executable, str(SCRIPTS / f"{module}_runner.py")]
    for system in wanted:
        if system == "pword2vec" and system not in found:
            notes.append("pWord2Vec not found (scripts/build_pword2vec.sh builds it; --pword2vec PATH): skipped.")
        elif system not in found:
            notes.append(f"{LABELS[system]} is not installed (`pip install -e .[bench]`): skipped.")
    return {s: found[s] for s in wanted if s in found}, notes


def w2v_model_flag(w2v: list[str]) -> str:
    """w2v's option that writes a subword model whole: ``--save-fasttext`` (a fastText .bin,
    as the peers write) where this w2v has it, else ``--save-model`` (.npz)."""
    done = subprocess.run([*w2v, "train", "--help"], capture_output=True, text=True)
    return "--save-fasttext" if "--save-fasttext" in done.stdout else "--save-model"


class Job(NamedTuple):
    """What one training command writes, and how: ``vectors`` (word2vec binary, or text for
    the subword combos) and the subword combos' full ``model`` (None for the others)."""

    combo: Combo
    threads: int
    vectors: Path
    model: Path | None
    seed: int


def output_files(ctx: Context, system: str, combo: str, output: Path) -> tuple[Path, Path | None]:
    """The vectors file and full model a run named ``output`` writes: ``output`` itself for the
    word combos; for the subword ones a .vec and the model (.bin; w2v's per W2V_MODEL_FILES)."""
    if not COMBOS[combo].subwords:
        return output, None
    model = W2V_MODEL_FILES[ctx.w2v_model_flag] if system == "w2v" else ".bin"
    return output.with_suffix(".vec"), output.with_suffix(model)


def train_command(ctx: Context, system: str, combo: str, threads: int, output: Path, seed: int = 1) -> list[str]:
    """The full command line that trains ``system`` on ``combo`` and writes ``output_files``."""
    job = Job(COMBOS[combo], threads, *output_files(ctx, system, combo, output), seed)
    make = {"w2v": w2v_args, "word2vec": c_args, "pword2vec": p_args}.get(system, runner_args)
    return [*ctx.binaries[system], *make(ctx, system, job)]


def w2v_args(ctx: Context, system: str, job: Job) -> list[str]:
    """``w2v train``'s arguments (its ``--report`` beside the vectors: ``report_path``)."""
    s, c = ctx.settings, job.combo
    loss = ["--hs"] if c.loss == "hs" else ["--negative", str(s.negative)]
    return ["train", str(ctx.corpus), "-o", str(job.vectors), "--report", str(report_path(job.vectors)),
            "--model", c.model, *loss,
            "--sample", str(s.sample), "--threads", str(job.threads), "--epochs", str(s.epochs),
            "--dim", str(s.dim), "--window", str(s.window), "--min-count", str(s.min_count),
            *subword_args(ctx, system, job), "--seed", str(job.seed), "-q"]  # fmt: skip


def c_args(ctx: Context, system: str, job: Job) -> list[str]:
    """word2vec.c's arguments (it takes no seed)."""
    s, c = ctx.settings, job.combo
    return ["-train", str(ctx.corpus), "-output", str(job.vectors), "-size", str(s.dim),
            "-window", str(s.window), "-negative", str(s.negative if c.loss == "ns" else 0),
            "-hs", str(int(c.loss == "hs")), "-sample", str(s.sample), "-min-count", str(s.min_count),
            "-iter", str(s.epochs), "-threads", str(job.threads), "-binary", "1",
            "-cbow", str(int(c.model == "cbow"))]  # fmt: skip


def report_path(vectors: Path) -> Path:
    """Where a w2v run writing ``vectors`` writes its ``--report``."""
    return vectors.with_suffix(".report.json")


def p_args(ctx: Context, system: str, job: Job) -> list[str]:
    """pWord2Vec's arguments: word2vec.c's, its learning rate given (0.025, as word2vec.c's
    skip-gram), and its window's contexts as one batch (``-batch-size 2 window + 1``, its default
    for window 5). It takes no seed."""
    s = ctx.settings
    return ["-train", str(ctx.corpus), "-output", str(job.vectors), "-size", str(s.dim), "-window", str(s.window),
            "-negative", str(s.negative), "-sample", str(s.sample), "-min-count", str(s.min_count),
            "-iter", str(s.epochs), "-threads", str(job.threads), "-binary", "1", "-alpha", "0.025",
            "-batch-size", str(2 * s.window + 1)]  # fmt: skip


def runner_args(ctx: Context, system: str, job: Job) -> list[str]:
    """The arguments of scripts/gensim_runner.py (gensim, gensim-ft) or fasttext_runner.py."""
    s, c = ctx.settings, job.combo
    common = ["--negative", str(s.negative if c.loss == "ns" else 0), "--dim", str(s.dim), "--window", str(s.window),
              "--sample", str(s.sample), "--min-count", str(s.min_count), "--epochs", str(s.epochs),
              "--threads", str(job.threads), "--seed", str(job.seed), *subword_args(ctx, system, job)]  # fmt: skip
    if RUNNERS[system] == "gensim":
        flags = ["--sg", str(int(c.model == "skipgram")), "--hs", str(int(c.loss == "hs"))]
        return [str(ctx.gensim_corpus), str(job.vectors), *flags, *common]
    return [str(ctx.corpus), str(job.vectors), "--model", c.model, "--loss", c.loss, *common]


def subword_args(ctx: Context, system: str, job: Job) -> list[str]:
    """For a subword combo, fastText's unsupervised settings and the full model's file, as
    w2v and the runners take them (the same names); nothing for the word combos."""
    if not job.combo.subwords:
        return []
    s = ctx.settings
    flags = ["--subwords", "--alpha", f"{SUBWORD_ALPHA:g}", "--minn", str(s.minn), "--maxn", str(s.maxn),
             "--bucket", str(s.bucket)]  # fmt: skip
    if system != "fasttext":  # fastText's noise exponent is 0.5, fixed
        flags += ["--ns-exponent", f"{SUBWORD_NS_EXPONENT:g}"]
    return [*flags, ctx.w2v_model_flag if system == "w2v" else "--save-model", str(job.model)]


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


class Scores(NamedTuple):
    """A vectors file's analogy accuracy (%), over all questions and over the syntactic
    sections alone, and its WS-353 Spearman rho; None where it could not be scored."""

    analogy_pct: float | None = None
    syntactic_pct: float | None = None
    ws353_rho: float | None = None


def score(ctx: Context, vectors: Path) -> tuple[Scores, str | None]:
    """The ``Scores`` of a word2vec binary or text vectors file, and the scorer that gave them
    (empty scores and None, with a note, when no scorer can rate it)."""
    if ctx.scorer == "w2v eval":
        try:
            return score_w2v(ctx, vectors), "w2v eval"
        except (subprocess.CalledProcessError, ValueError, KeyError, IndexError, TypeError) as err:
            ctx.notes.append(f"`w2v eval` failed on {vectors.name} ({err}); gensim scored it instead.")
    try:
        return score_gensim(ctx, vectors), "gensim"
    except (ValueError, KeyError, ZeroDivisionError, OSError) as err:
        ctx.notes.append(f"gensim could not score {vectors.name}: {err}")
        return Scores(), None


def syntactic_pct(sections: list[tuple[str, int, int]]) -> float | None:
    """Accuracy (%) over the syntactic sections (named ``gram...`` in questions-words) of
    ``(name, correct, answered)`` triples; None when none was answered."""
    correct = sum(right for name, right, _ in sections if name.startswith(SYNTACTIC_PREFIX))
    answered = sum(seen for name, _, seen in sections if name.startswith(SYNTACTIC_PREFIX))
    return 100 * correct / answered if answered else None


def score_w2v(ctx: Context, vectors: Path) -> Scores:
    """Score with ``w2v eval --json`` (analogy accuracy there is a fraction)."""
    command = [sys.executable, "-m", "w2v", "eval", "-v", str(vectors), "--json", "--restrict", str(ANALOGY_VOCAB),
               "--analogies", str(ctx.eval_dir / "questions-words.txt"),
               "--similarity", str(ctx.eval_dir / "wordsim353.tsv")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    analogies = result["analogies"][0]
    sections = [(part["name"], part["correct"], part["answered"]) for part in analogies["sections"]]
    return Scores(
        100 * float(analogies["accuracy"]), syntactic_pct(sections), float(result["similarity"][0]["spearman"])
    )


def score_gensim(ctx: Context, vectors: Path) -> Scores:
    """Score with gensim: questions-words over the 30,000 most frequent words, case-insensitive."""
    from gensim.models import KeyedVectors  # optional, and slow to import

    binary = vectors.suffix == ".bin"
    kv = KeyedVectors.load_word2vec_format(str(vectors), binary=binary, unicode_errors="replace")
    with warnings.catch_warnings():  # all-zero vectors (words never trained) divide by a zero norm
        warnings.simplefilter("ignore", RuntimeWarning)
        analogy, parts = kv.evaluate_word_analogies(
            str(ctx.eval_dir / "questions-words.txt"), restrict_vocab=ANALOGY_VOCAB, case_insensitive=True
        )
        rho = kv.evaluate_word_pairs(str(ctx.eval_dir / "wordsim353.tsv"), case_insensitive=True)[1][0]
    sections = [(p["section"], len(p["correct"]), len(p["correct"]) + len(p["incorrect"])) for p in parts]
    return Scores(100 * analogy, syntactic_pct(sections), float(rho))


# --- runs -----------------------------------------------------------------------------------


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


def systems_for(ctx: Context, combo: str) -> list[str]:
    """The installed systems that run ``combo``, in their order."""
    return [system for system in ctx.binaries if can_run(system, combo)]


def run_all(ctx: Context, combos: list[str], repeats: int, scaling: bool) -> list[Run]:
    """Every system on every combo it runs, the systems alternating, each round with its own seed;
    1-thread w2v runs after them with --scaling; then the round's roofs (``measure_roofs``)."""
    runs = []
    for repeat in range(repeats):
        for combo in combos:
            for system in systems_for(ctx, combo):
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


def tiny_corpus(ctx: Context) -> Path:
    """A 1,000-word corpus of 50 distinct words, for start-up and warm-up runs."""
    rng = random.Random(1)
    path = ctx.workdir / "tiny-corpus.txt"
    path.write_text(" ".join(f"w{rng.randrange(50)}" for _ in range(1000)))
    return path


def warm_up(ctx: Context, combos: list[str]) -> None:
    """Run w2v once per combo on the tiny corpus (and few buckets), untimed, so that no timed run
    compiles Numba code."""
    settings = dataclasses.replace(ctx.settings, bucket=min(ctx.settings.bucket, 1000))
    tiny = dataclasses.replace(ctx, corpus=tiny_corpus(ctx), settings=settings)
    for combo in combos:
        output = ctx.workdir / "warm.bin"
        measure(train_command(tiny, "w2v", combo, ctx.settings.threads, output), ctx.workdir / "warm.log")
        remove(*output_files(tiny, "w2v", combo, output), report_path(output))


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


def check(ok: bool | None) -> str:
    """PASS, FAIL, or a dash when it cannot be told."""
    return "–" if ok is None else ("PASS" if ok else "FAIL")


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


def label(system: str, combo: str) -> str:
    """A system's name in a combo's rows: fastText on a word combo runs with its n-grams off."""
    plain = system == "fasttext" and not COMBOS[combo].subwords
    return LABELS[system] + (" (no subwords)" if plain else "")


def system_table(runs: list[Run], ctx: Context, combo: str) -> list[str]:
    """One combo's table: medians per system (quality: ``quality_of`` the combo; a subword
    combo's table has the syntactic analogies apart)."""
    subwords, quality = COMBOS[combo].subwords, quality_of(combo)
    heads = ["system", "runs", "wall s", "kw/s", "peak MiB", "analogy %", *(["syntactic %"] * subwords), "WS-353 rho"]
    lines = [f"### {COMBO_LABELS[combo]}", ""]
    if subwords:
        lines += ["Analogy, syntactic and rho: means over the rounds' seeds; wall, kw/s and peak: medians.", ""]
    lines += ["| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
    for system in systems_for(ctx, combo):
        done = select(runs, system, combo, ctx.settings.threads)
        failed = sum(1 for r in runs if (r.system, r.combo) == (system, combo) and r.error)
        kws = median_of(done, "words_per_s")
        cells = [label(system, combo), f"{len(done)}" + (f" ({failed} failed)" if failed else ""),
                 fmt(median_of(done, "wall_s"), ".1f"), fmt(kws and kws / 1e3, ",.0f"),
                 fmt(median_of(done, "peak_rss_mib"), ".0f"), fmt(quality(done, "analogy_pct"), ".1f"),
                 *([fmt(quality(done, "syntactic_pct"), ".1f")] * subwords),
                 fmt(quality(done, "ws353_rho"), ".3f")]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def ratio_table(runs: list[Run], ctx: Context, combos: list[str]) -> list[str]:
    """w2v's words/s over each peer's, per pair of runs, with the median."""
    lines = ["| model+loss | peer | w2v / peer per pair | median |", "|---|---|---|---|"]
    for combo in combos:
        for peer in (s for s in systems_for(ctx, combo) if s != "w2v"):
            ratios = pair_ratios(runs, peer, combo, ctx.settings.threads)
            cell = ", ".join(f"{r:.2f}" for r in ratios) or "–"
            median = fmt(statistics.median(ratios) if ratios else None, ".2f")
            lines.append(f"| {COMBO_LABELS[combo]} | {label(peer, combo)} | {cell} | {median} |")
    return [*lines, ""]


def targets_table(runs: list[Run], ctx: Context, combos: list[str]) -> list[str]:
    """PASS/FAIL per target and combo: a table for the word combos, one for the subword ones
    (each kind has its own ``GOALS``), and one against pWord2Vec where it ran."""
    lines = []
    for subwords in (False, True):
        kind = [c for c in combos if COMBOS[c].subwords == subwords]
        title = ["Subword combos (fastText's model), against fastText and gensim's FastText:", ""] if subwords else []
        lines += goal_table(runs, ctx, kind, GOALS[subwords], title)
    against = [c for c in combos if "pword2vec" in systems_for(ctx, c)]
    title = ["Against pWord2Vec (quality: means over the rounds):", ""]
    return lines + goal_table(runs, ctx, against, PWORD2VEC_GOAL, title)


def goal_table(runs: list[Run], ctx: Context, combos: list[str], goal: Goal, title: list[str]) -> list[str]:
    """``title``, then one row per combo of ``goal``'s ``target_checks``; nothing without combos."""
    if not combos:
        return []
    checks = {combo: target_checks(runs, combo, ctx.settings.threads, goal) for combo in combos}
    heads = list(checks[combos[0]])
    lines = [*title, "| model+loss | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    lines += [f"| {COMBO_LABELS[c]} | " + " | ".join(checks[c][h] for h in heads) + " |" for c in combos]
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


def roofline_table(runs: list[Run], ctx: Context, combos: list[str]) -> list[str]:
    """Per combo, w2v's medians over the rounds of ``fractions``, each run against its own
    round's roofs; the roofs themselves below."""
    roofs = {roof["repeat"]: roof for roof in ctx.roofs}
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
    for combo in combos:
        found = [
            f for r in select(runs, "w2v", combo, ctx.settings.threads)
            if r.repeat in roofs and (f := fractions(r, roofs[r.repeat], ctx.settings.dim)) is not None
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
        for r in ctx.roofs
    )
    return [*lines, "", f"Roofs: {measured}.", ""]


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


def header_lines(ctx: Context, info: dict, command: str, when: str, combos: list[str]) -> list[str]:
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
        "default learning rates" + subword_settings(ctx, combos),
        f"- Scorer: {ctx.scorer}; analogy = questions-words accuracy over the {ANALOGY_VOCAB:,} most frequent "
        "words (case-insensitive), WS-353 = Spearman rho",
        "- wall = the whole command (vocabulary, training, writing vectors); kw/s = corpus tokens × epochs / wall, "
        "in thousands; peak = the child process's maximum resident set size; figures are medians over runs",
        "",
    ]


def subword_settings(ctx: Context, combos: list[str]) -> str:
    """The subword combos' own settings for the header's line, if any of them ran."""
    if not any(COMBOS[c].subwords for c in combos):
        return ""
    s = ctx.settings
    return (
        f"; the subword combos at fastText's unsupervised defaults: learning rate {SUBWORD_ALPHA:g} (both models), "
        f"noise exponent {SUBWORD_NS_EXPONENT:g}, character n-grams of {s.minn}-{s.maxn}, {s.bucket:,} buckets"
    )


def standing_notes(ctx: Context, combos: list[str]) -> list[str]:
    """Notes that always apply, and those of the systems and kinds of combo that ran."""
    notes = [
        "The systems run one after another, taking turns in each round, so drift in the machine's speed "
        "falls on all of them; ratios are taken per pair of runs of the same round. Round r (from 0) trains "
        "with seed r + 1 in every system that takes one (word2vec.c and pWord2Vec take none).",
        "Before the timed runs w2v trains once per model on a tiny corpus, untimed, so its Numba cache is warm.",
    ]
    if {"gensim", "gensim-ft"} & set(ctx.binaries):
        notes.append(
            f"gensim's fastest mode (`corpus_file`) trains only the first {GENSIM_LINE_TOKENS:,} tokens of each "
            "line and drops the rest without a word, so it trains on a copy of the corpus cut into lines of at most "
            f"{GENSIM_LINE_TOKENS:,} tokens (made once, not timed); the other systems read the original file."
        )
    if any(not COMBOS[c].subwords for c in combos):
        notes += word_notes(ctx)
    if any(COMBOS[c].subwords for c in combos):
        notes += subword_notes(ctx)
    else:
        notes.append(
            f"Subword vectors (fastText's model) are measured apart ([subword-benchmarks.md](subword-benchmarks.md)): "
            f"`{SUBWORD_COMMAND}`."
        )
    if "pword2vec" not in ctx.binaries and "sg-ns" in combos:
        notes.append(
            f"Against Intel's pWord2Vec, with each w2v run set against the machine's roofs "
            f"([pword2vec-benchmarks.md](pword2vec-benchmarks.md)): `{PWORD2VEC_COMMAND}`."
        )
    return notes


def word_notes(ctx: Context) -> list[str]:
    """Notes on the peers in the word combos."""
    notes = []
    if "gensim" in ctx.binaries:
        notes.append(
            "gensim's Word2Vec is given word2vec.c's learning rates (0.025 skip-gram, 0.05 CBOW, decaying to "
            "alpha * 1e-4), not its own default 0.025 for both, so that every system trains with the same settings."
        )
    if "word2vec" in ctx.binaries:
        notes.append(
            "word2vec.c (`pip install word2vec`, command `word2vec`) holds a 10^8-entry negative-sampling "
            "table (400 MB) with NS: most of its peak memory."
        )
    if "pword2vec" in ctx.binaries:
        notes.append(
            "pWord2Vec (Intel Labs' HogBatch word2vec: the contexts of a window share their noise words, so each "
            "window's update is a small matrix product) trains skip-gram NS alone, reads the whole corpus into "
            "memory first, and takes word2vec.c's settings with `-batch-size 2 window + 1` and no seed. It is "
            "built from its source (`git clone https://github.com/IntelLabs/pWord2Vec`) with "
            "`apt-get install g++ libopenblas-dev` and `sh scripts/build_pword2vec.sh pWord2Vec bin`: "
            "OpenBLAS's `cblas.h` for `mkl.h`, `openblas_set_num_threads(1)` for `mkl_set_num_threads(1)`, "
            "`<mm_malloc.h>`, `<cstdio>` and `<cstdlib>` included, `g++ -std=c++11 -O3 -march=native -fopenmp`, "
            "then `-D USE_MKL ... -lopenblas` for `bin/pWord2Vec` and the plain loops without it for "
            "`bin/pWord2Vec-loops`. The OpenBLAS build is the one measured, the faster of the two on this "
            "machine (docs/performance.md)."
        )
    if "fasttext" in ctx.binaries:
        notes.append(
            "In the word combos fastText runs with subwords off (minn = maxn = 0, wordNgrams 1, bucket 0) and "
            "word2vec.c's learning rates (its own default is 0.05 for both models); its runner writes word2vec "
            "binary vectors like the others."
        )
    return notes


def subword_notes(ctx: Context) -> list[str]:
    """Notes on the subword combos: what each system writes, how fastText is run."""
    suffix = W2V_MODEL_FILES[ctx.w2v_model_flag]
    notes = [
        "In the subword combos every system trains fastText's model with fastText's unsupervised settings (the "
        "header's), writes the composed vectors of its words (the mean of a word's rows) as a `.vec`, the file "
        f"scored, and its whole model: fastText and gensim's FastText a fastText `.bin`, w2v `{ctx.w2v_model_flag}` "
        f"(`{suffix}`)" + ("" if suffix == ".bin" else ", as this w2v has no `--save-fasttext`") + ". "
        f"The syntactic column is the accuracy on questions-words' `{SYNTACTIC_PREFIX}*` sections alone."
    ]
    if "fasttext" in ctx.binaries:
        notes.append(
            "fastText trains through its Python module (`fasttext-wheel`: the C++ library the `fasttext` command "
            "runs); its runner saves the `.bin` with `save_model` and writes the `.vec` from `get_word_vector`, as "
            "`saveVectors` does, in Python."
        )
    if "gensim-ft" in ctx.binaries:
        notes.append(
            "gensim's FastText learning rate decays to alpha * 1e-4, as w2v's does (fastText's decays to 0); it "
            "writes the `.vec` with `save_word2vec_format` and the `.bin` with `save_facebook_model`."
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
    lines = header_lines(ctx, info, extras["command"], extras["date"], combos)
    if extras.get("plot"):
        lines += [f"![words/s and analogy accuracy per system and model]({extras['plot']})", ""]
    lines += ["## Results", ""]
    for combo in combos:
        lines += system_table(runs, ctx, combo)
    if len(ctx.binaries) > 1:
        lines += ["## w2v against each peer (words/s)", "", *ratio_table(runs, ctx, combos)]
        lines += ["## Targets", "", *targets_table(runs, ctx, combos)]
    if ctx.roofs:
        lines += roofline_table(runs, ctx, combos)
    if extras.get("scaling"):
        lines += scaling_table(runs, ctx, combos)
    if extras.get("startup"):
        lines += startup_lines(extras["startup"])
    lines += command_lines(runs)
    lines += ["## Notes", ""] + [f"- {note}" for note in standing_notes(ctx, combos) + ctx.notes]
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
    report, raw_runs, plotted = report_files(args.name)
    if plot(runs, ctx, args.combos, args.out / plotted):
        extras["plot"] = plotted
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
        "roofs": ctx.roofs,
        "notes": ctx.notes,
    }
    (args.out / raw_runs).write_text(json.dumps(raw, indent=1) + "\n")
    (args.out / report).write_text(render(ctx, runs, args.combos, extras, info))


def make_context(args: argparse.Namespace) -> Context:
    """Find the systems (a line on stderr per missing one), the scorer and w2v's full-model
    option, count the corpus, make gensim's copy."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    binaries, notes = find_systems(args.systems, args.pword2vec)
    for note in notes:
        print(f"bench: {note}", file=sys.stderr)
    settings = Settings(args.threads, args.epochs, args.dim, args.window, args.negative, args.sample, args.min_count,
                        args.minn, args.maxn, args.bucket)  # fmt: skip
    scorer = pick_scorer()
    if scorer == "gensim" and not importlib.util.find_spec("gensim"):
        sys.exit("bench: no scorer: neither `w2v eval --json` nor gensim is available")
    gensim_corpus = gensim_copy(args.corpus, args.workdir) if {"gensim", "gensim-ft"} & set(binaries) else None
    corpus = args.corpus.resolve()
    subwords = any(COMBOS[c].subwords for c in args.combos)
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
        w2v_model_flag(binaries["w2v"]) if subwords and "w2v" in binaries else "--save-model",
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
    report, raw_runs, _ = report_files(args.name)
    print(f"bench: wrote {args.out / report}, {args.out / raw_runs}", file=sys.stderr)
    return 1 if any(r.error for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
