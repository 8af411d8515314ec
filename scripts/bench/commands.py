"""Each system's training command: the same settings in each one's own options, the files
it writes; and a command as the report shows it."""

import shlex
import sys
import sysconfig
from pathlib import Path
from typing import NamedTuple

from . import ROOT
from .records import Context
from .systems import COMBOS, RUNNERS, Combo

SUBWORD_ALPHA, SUBWORD_NS_EXPONENT = 0.05, 0.5  # fastText's lr and its fixed noise exponent (counts^0.5)
W2V_MODEL_FILES = {"--save-fasttext": ".bin", "--save-model": ".npz"}  # w2v's full-model option: its file's suffix


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
