"""The ``w2v`` command line: click commands that parse, validate and call the library.

Every user mistake ends as one ``w2v: error: ...`` line on stderr and a non-zero
exit (1 for bad input, 2 for bad usage, 130/143 when interrupted), never a traceback.
A closed output pipe (``w2v vocab ... | head -2``) ends any command quietly with
exit 141, as a Unix tool killed by SIGPIPE.
"""

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import click

from w2v.config import DEFAULT_PRUNE_AT, load_preset, preset_names
from w2v.errors import ConfigError, W2VError, plural
from w2v.files import binary_name, check_writable, is_special, is_url
from w2v.plots import METHODS as PLOT_METHODS
from w2v.state import checkpoint_path
from w2v.train import train as train_vectors
from w2v.vectors import display_word

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def fail(message: str, code: int = 1):
    """Print one error line (control characters escaped: it may quote a file) and exit."""
    click.echo(f"w2v: error: {display_word(message)}", err=True)
    sys.exit(code)


CLOSED_PIPE_EXIT = 128 + 13  # a shell's status for a command killed by SIGPIPE


class OutputClosed(Exception):
    """Standard output or error was a pipe whose reader went away (``w2v vocab | head -2``)."""


@contextmanager
def closed_pipe_raised() -> Iterator[None]:
    """BrokenPipeError as ``OutputClosed``, which click lets through to ``main`` (click
    itself exits 1, silently, on EPIPE)."""
    try:
        yield
    except BrokenPipeError:
        raise OutputClosed from None


class Commands(click.Group):
    """The ``w2v`` group: ``closed_pipe_raised`` around what prints, the help and
    version included."""

    def make_context(self, *args, **kwargs):
        with closed_pipe_raised():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with closed_pipe_raised():
            return super().invoke(ctx)


def silence_stdout() -> None:
    """Point standard output at /dev/null, so that the flush at exit does not meet the
    closed pipe again (the Python documentation's recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor behind sys.stdout (captured, closed)
        pass


@click.group(cls=Commands, context_settings=CONTEXT)
@click.version_option(package_name="w2v", prog_name="w2v")
def cli() -> None:
    """word2vec: train word vectors (skip-gram/CBOW, HS/NS) and query them."""


class Terminated(Exception):
    """SIGTERM arrived: unwind like Ctrl-C (workers stop, no output is written)."""


def terminate(_signum, _frame):
    raise Terminated


class Stopped(Exception):
    """Training interrupted (Ctrl-C or SIGTERM); says how to resume when a checkpoint was saved."""

    def __init__(self, cause: BaseException, checkpoint: str | None):
        self.code = 143 if isinstance(cause, Terminated) else 130
        message = "terminated" if self.code == 143 else "interrupted"
        if checkpoint and os.path.isfile(checkpoint_path(checkpoint)):
            from w2v.state import describe_progress, read_meta

            meta = read_meta(checkpoint)  # not the weights: gigabytes for a big model
            where = describe_progress(meta["jobs_done"], meta["batches"], meta["config"]["epochs"])
            message += f"; checkpoint saved in {checkpoint} ({where}): continue with 'w2v train --resume {checkpoint}'"
        super().__init__(message)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run ``cli``, turning every expected failure into one stderr line."""
    if threading.current_thread() is threading.main_thread():  # signal() works only there
        signal.signal(signal.SIGTERM, terminate)
    try:
        cli.main(args=argv, prog_name="w2v", standalone_mode=False)
        if sys.stdout is not None:  # None when started with stdout closed (>&-)
            sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at exit
    except (OutputClosed, BrokenPipeError):
        silence_stdout()
        sys.exit(CLOSED_PIPE_EXIT)
    except click.exceptions.Abort:
        fail("interrupted", 130)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as err:  # plain ``w2v`` (click 8.2+): the help
        click.echo(err.format_message(), err=True)
        sys.exit(2)
    except click.UsageError as err:
        fail(err.format_message() + c_flags_hint(sys.argv[1:] if argv is None else argv), 2)
    except click.ClickException as err:
        fail(err.format_message())
    except W2VError as err:
        fail(str(err))
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except Terminated:
        fail("terminated", 143)
    except Stopped as err:
        fail(str(err), err.code)
    except MemoryError as err:  # numpy's message names the array's shape, e.g. (words, --dim)
        fail(f"out of memory{f': {err}' if str(err) else ''}")


def c_flags_hint(argv: list[str]) -> str:
    """For ``w2v train`` given word2vec.c's flags (``-train x``, ``--cbow 1``): where they are taken."""
    from w2v.c_tools import c_style_flags

    if not argv or argv[0] != "train":
        return ""
    found = c_style_flags(argv[1:], {opt for param in train.params for opt in param.opts})
    if not found:
        return ""
    return f" ({found[0]} is a word2vec.c flag: 'w2v word2vec -train FILE -output FILE ...' takes its command lines)"


def apply_preset(ctx: click.Context, _param, preset: str | None) -> str | None:
    """``--config NAME`` or ``--config FILE.toml``: the preset's settings become defaults,
    so command-line flags win."""
    if preset is None:
        return None
    names = {p.name: p.name for p in ctx.command.params if p.name not in ("config", "corpus")}
    names.update(PRESET_ALIASES)
    try:
        settings = {names[key]: value for key, value in load_preset(preset, set(names)).items()}
    except W2VError as err:
        raise click.BadParameter(str(err), param_hint="--config") from None
    ctx.default_map = {**(ctx.default_map or {}), **settings}
    return preset


def output_format(path: str, fmt: str) -> bool:
    """True for binary: ``--format binary``, or ``auto`` and a ``.bin`` (``.bin.gz`` ...) name."""
    return fmt == "binary" or (fmt == "auto" and binary_name(path))


def check_distinct_outputs(paths: dict[str, str | None]) -> None:
    """Usage error if two output options name the same file (one would overwrite the other)."""
    seen: dict[str, str] = {}
    for option, path in paths.items():
        if path is None or is_special(path):
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise click.UsageError(f"{seen[key]} and {option} name the same file: {path}")
        seen[key] = option


def corpus_sources(corpus: list[str], outputs: list[str | None]) -> list[str]:
    """The command's corpus expanded (``corpus.expand_sources``), without the files the
    command writes (``outputs``: files, or folders such as a checkpoint's; None and ``-``
    ignored), each left out with a note, and with a warning for each file that is
    clearly not text (``corpus.check_text``)."""
    from w2v.corpus import check_text, expand_sources, without_outputs

    written = [path for path in outputs if path and path != "-"]
    sources, skipped = without_outputs(expand_sources(corpus), written)
    for source in skipped:
        click.echo(f"w2v: note: not reading {source}: this run writes it", err=True)
    if not sources:
        raise W2VError("no corpus left to read: every file given is one this run writes")
    for source in sources:
        reason = check_text(source)
        if reason:
            click.echo(f"w2v: warning: {source}: {reason}", err=True)
    return sources


def reject_unused(names: tuple[str, ...], why: str) -> None:
    """Usage error if an option of ``names`` was given on the command line although ``why`` makes it useless."""
    ctx = click.get_current_context()
    command_line = click.core.ParameterSource.COMMANDLINE
    given = [f"--{name.replace('_', '-')}" for name in names if ctx.get_parameter_source(name) == command_line]
    if given:
        raise click.UsageError(f"{', '.join(given)}: no effect {why}")


PRESET_ALIASES = {"format": "fmt", "size": "dim", "iter": "epochs"}  # preset keys as users write them
GIVEN = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
DEFAULT = click.core.ParameterSource.DEFAULT
LONG_RUN_OPTIONS = ("checkpoint", "checkpoint_every", "resume", "save_model", "init_model", "update_vocab")
EXTRA_OPTIONS = ("phrases", "phrase_threshold", "phrase_passes", "classes", "classes_output", "plot")
PATH_OPTIONS = (
    "output",
    "save_vocab",
    "read_vocab",
    "classes_output",
    "plot",
    "checkpoint",
    "save_model",
    "init_model",
    "heldout",
)


def apply_checkpoint(ctx: click.Context, _param, folder: str | None) -> str | None:
    """``--resume FOLDER``: the checkpointed command's options become the defaults."""
    if folder is None:
        return None
    from w2v.state import read_meta

    try:
        command = read_meta(folder).get("notes", {}).get("command", {})
    except W2VError as err:
        raise click.BadParameter(str(err), param_hint="--resume") from None
    ctx.default_map = {**(ctx.default_map or {}), **command}
    return folder


def rerun_recipe(ctx: click.Context) -> dict:
    """The train command's options, paths made absolute, for ``--resume`` to reuse."""
    recipe = {k: v for k, v in ctx.params.items() if k not in ("resume", "quiet")}
    for key in PATH_OPTIONS:
        if recipe.get(key) and recipe[key] != "-":
            recipe[key] = os.path.abspath(recipe[key])
    recipe["corpus"] = [c if c == "-" or is_url(c) else os.path.abspath(c) for c in recipe["corpus"]]
    return recipe


@cli.command(context_settings=CONTEXT)
@click.argument("corpus", nargs=-1)
@click.option(
    "--config",
    metavar="NAME|FILE",
    callback=apply_preset,
    is_eager=True,
    expose_value=False,
    help=f"A preset shipped with w2v ({', '.join(preset_names())}: skip-gram or CBOW, negative sampling or "
    "hierarchical softmax, for text8-sized corpora) or a TOML file of any options below; flags given here win.",
)
@click.option("-o", "--output", default="vectors.bin", show_default=True, help="Vectors file to write.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "binary", "text"]),
    default="auto",
    show_default=True,
    help="auto: binary for .bin names, else text.",
)
@click.option("--model", type=click.Choice(["skipgram", "cbow"]), default="skipgram", show_default=True)
@click.option("--dim", "--size", "dim", type=int, default=100, show_default=True, help="Vector size.")
@click.option(
    "--window", type=int, default=5, show_default=True, help="Maximum context window (shrunk at random per word)."
)
@click.option("--negative", type=int, default=None, help="Noise words per example [5; 0 when --hs is given alone].")
@click.option(
    "--hs/--no-hs",
    default=False,
    show_default=True,
    help="Hierarchical softmax (alone it turns negative sampling off).",
)
@click.option(
    "--tree",
    type=click.Choice(["huffman", "balanced"]),
    default="huffman",
    show_default=True,
    help="--hs: a Huffman tree, or a balanced one with the words in frequency order.",
)
@click.option("--nce", type=click.IntRange(min=0), default=0, help="NCE with K noise words (self-normalised).")
@click.option(
    "--sampled-softmax", type=click.IntRange(min=0), default=0, help="Importance-sampled softmax with K candidates."
)
@click.option(
    "--softmax", is_flag=True, default=False, help="The full softmax over the vocabulary (small vocabularies)."
)
@click.option(
    "--self-norm", type=click.FloatRange(min=0), default=0.0, help="--softmax: add BETA * (log Z)^2 to the loss."
)
@click.option(
    "--ns-exponent",
    type=float,
    default=0.75,
    show_default=True,
    help="Noise distribution: unigram counts to this power.",
)
@click.option(
    "--sample", type=float, default=1e-3, show_default=True, help="Subsampling threshold of frequent words (0: off)."
)
@click.option("--min-count", type=int, default=5, show_default=True, help="Drop words seen fewer times.")
@click.option("--max-vocab", type=int, default=None, help="Keep only the N most frequent words.")
@click.option(
    "--prune-at",
    type=int,
    default=DEFAULT_PRUNE_AT,
    show_default=True,
    help="Distinct words held while counting; past it the rarest are pruned (word2vec.c ReduceVocab).",
)
@click.option("--epochs", "--iter", "epochs", type=int, default=5, show_default=True)
@click.option("--alpha", type=float, default=None, help="Starting learning rate [0.025 skip-gram, 0.05 CBOW].")
@click.option("--min-alpha", type=float, default=None, help="Final learning rate [alpha * 1e-4].")
@click.option(
    "--cbow-sum", is_flag=True, default=False, help="CBOW: sum the context vectors instead of averaging them."
)
@click.option("--threads", type=int, default=None, help="Worker threads [all cores].")
@click.option(
    "--streams",
    type=int,
    default=1,
    show_default=True,
    help="Train N evenly spaced parts of the corpus in turn, a batch of each (word2vec.c: one per thread).",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Random seed; with --threads 1 runs are reproducible."
)
@click.option("--batch-words", type=int, default=10_000, show_default=True, help="Words per work unit.")
@click.option(
    "--save-vocab", type=click.Path(dir_okay=False), default=None, help="Write the vocabulary (word count lines)."
)
@click.option(
    "--read-vocab",
    type=click.Path(dir_okay=False),
    default=None,
    help="Use this vocabulary file instead of counting one.",
)
@click.option("--phrases", is_flag=True, default=False, help="Join phrases (w2v phrases) on the fly before training.")
@click.option(
    "--phrase-threshold", type=float, default=100.0, show_default=True, help="--phrases: word2phrase score threshold."
)
@click.option(
    "--phrase-passes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="--phrases: passes (2: longer phrases).",
)
@click.option(
    "--classes",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Also cluster the words into K classes (k-means, as w2v classes).",
)
@click.option(
    "--classes-output", default="classes.txt", show_default=True, help="--classes: file of 'word class' lines."
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also draw the loss per epoch into this picture (.png, .svg, .pdf; needs matplotlib).",
)
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder to save the training state in after each epoch and when interrupted.",
)
@click.option(
    "--checkpoint-every",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Also save a checkpoint every N minutes.",
)
@click.option(
    "--resume",
    type=click.Path(),
    default=None,
    callback=apply_checkpoint,
    is_eager=True,
    help="Continue the run checkpointed in this folder (same corpus and settings).",
)
@click.option(
    "--save-model",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also save the whole model (weights, vocabulary, settings; .npz) to continue training later.",
)
@click.option("--init-model", type=click.Path(), default=None, help="Start from a saved model and train it on CORPUS.")
@click.option(
    "--heldout",
    type=click.Path(dir_okay=False),
    default=None,
    help="Score this corpus after each epoch: held-out bits per word (as w2v score).",
)
@click.option(
    "--heldout-pairs",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="--heldout: predictions scored (a uniform sample).",
)
@click.option(
    "--update-vocab", is_flag=True, default=False, help="--init-model: add CORPUS's new words (min-count applies)."
)
@click.option(
    "-q", "--quiet", is_flag=True, default=False, help="No progress bar, no summary (--resume still names its outputs)."
)
def train(corpus, output, fmt, quiet, cbow_sum, save_vocab, read_vocab, **settings):
    """Train word vectors on CORPUS (files, folders, URLs, or - for stdin).

    Files may be compressed (.gz .bz2 .xz .zst). Words are split on whitespace,
    a newline ends a sentence.
    """
    ctx = click.get_current_context()
    long_run = {key: settings.pop(key) for key in LONG_RUN_OPTIONS}
    extras = {key: settings.pop(key) for key in EXTRA_OPTIONS}
    if long_run["resume"]:  # the recipe's vocabulary and model options: the checkpoint has its own
        reject_unused(("read_vocab", "save_vocab", "init_model", "update_vocab"), "with --resume")
        if ctx.get_parameter_source("checkpoint") not in GIVEN:
            long_run["checkpoint"] = None  # the run checkpoints where it was resumed from
        long_run.update(init_model=None, update_vocab=False)
        read_vocab = save_vocab = None
    check_train_options(ctx, list(corpus), output, save_vocab, read_vocab, long_run, extras, cbow_sum, settings)
    if long_run["resume"]:
        name_resumed_outputs(long_run, output, extras)
    notes = {"command": rerun_recipe(ctx)}
    classes_output = extras["classes_output"] if extras["classes"] else None
    checkpoint = long_run["checkpoint"] or long_run["resume"]
    sources = corpus_sources(list(corpus), [output, save_vocab, long_run["save_model"], classes_output, checkpoint])
    source = phrased_corpus(sources, extras, settings, quiet)
    seed, heldout = (
        settings["seed"],
        {"heldout": settings.pop("heldout"), "heldout_pairs": settings.pop("heldout_pairs")},
    )
    if heldout["heldout"] is not None and not quiet:
        heldout["on_epoch_end"] = print_epoch
    if long_run["resume"] or long_run["init_model"]:  # settings not given (nor preset) come from the model
        settings = {k: v for k, v in settings.items() if ctx.get_parameter_source(k) != DEFAULT}
        if ctx.get_parameter_source("cbow_sum") != DEFAULT:
            settings["cbow_mean"] = not cbow_sum
    else:
        settings["cbow_mean"] = not cbow_sum
    try:
        vectors = train_vectors(
            source,
            read_vocab=read_vocab,
            save_vocab=save_vocab,
            progress=not quiet,
            **heldout,
            notes=notes,
            **long_run,
            **settings,
        )
    except (KeyboardInterrupt, Terminated) as err:
        raise Stopped(err, long_run["checkpoint"] or long_run["resume"]) from None
    write_start = time.perf_counter()
    written = write_trained(vectors, output, fmt, extras, seed, quiet)
    if not quiet:
        echo_summary(vectors, output, time.perf_counter() - write_start)
        for line in written:
            click.echo(line, err=True)


def echo_summary(vectors, output: str, write_seconds: float) -> None:
    """The line a training run ends with: vocabulary, speed, final loss, timings."""
    r = vectors.report
    apart = f"{r.compile_seconds:.1f} s compiling the kernels, " if r.compile_seconds else ""
    apart += f"{r.heldout_seconds:.1f} s scoring the held-out text, " if r.heldout_seconds else ""
    click.echo(
        f"w2v: {plural(r.vocab_size, 'word')} in vocabulary, {plural(r.train_words, 'word')} trained "
        f"in {r.train_seconds:.1f} s ({r.words_per_second:,.0f} words/s), final loss {r.epoch_loss[-1]:.4f}; "
        f"{r.prepare_seconds:.1f} s reading the corpus, {apart}{write_seconds:.1f} s writing {output}",
        err=True,
    )


def print_epoch(epoch: int, loss: float, heldout: float) -> None:
    """The line ``w2v train --heldout`` prints after each epoch, above the progress bar."""
    from tqdm import tqdm

    tqdm.write(f"w2v: epoch {epoch + 1}: loss {loss:.4f}, held-out {heldout:.4f} bits per word", file=sys.stderr)


def check_train_options(ctx, corpus, output, save_vocab, read_vocab, long_run, extras, cbow_sum, settings) -> None:
    """The train command's usage rules and output checks, before any work."""
    if not corpus:
        raise click.UsageError(
            f"the checkpoint in {long_run['resume']} does not name its corpus: give it"
            if long_run["resume"]
            else "give a CORPUS (or --resume FOLDER)"
        )
    if long_run["checkpoint_every"] and not (long_run["checkpoint"] or long_run["resume"]):
        raise click.UsageError("--checkpoint-every needs --checkpoint FOLDER")
    check_distinct_outputs(
        {"-o": output, "--save-vocab": save_vocab, "--save-model": long_run["save_model"], "--plot": extras["plot"]}
        | ({"--classes-output": extras["classes_output"]} if extras["classes"] else {})
    )
    if extras["plot"]:
        from w2v.plots import picture_format

        picture_format(extras["plot"])  # matplotlib and the picture's format, before training
    if cbow_sum and settings["model"] != "cbow" and not long_run["init_model"]:
        reject_unused(("cbow_sum",), "with --model skipgram")
    if long_run["init_model"]:  # the model's vocabulary is kept; --update-vocab only adds words
        reject_unused(("read_vocab", "max_vocab"), "with --init-model (it keeps the model's vocabulary)")
    if not extras["phrases"]:
        reject_unused(("phrase_threshold", "phrase_passes"), "without --phrases")
    if not extras["classes"]:
        reject_unused(("classes_output",), "without --classes K")
    check_writable(output)
    for path in (
        save_vocab,
        long_run["save_model"],
        extras["classes_output"] if extras["classes"] else None,
        extras["plot"],
    ):
        if path is not None:
            check_writable(path)
    if read_vocab and not os.path.isfile(read_vocab):
        raise W2VError(f"vocabulary file not found: {read_vocab}")


def name_resumed_outputs(long_run: dict, output: str, extras: dict) -> None:
    """``--resume``: one stderr line naming every file the run will write, before it
    starts, also with ``-q``: a checkpoint names its corpus and outputs as a script
    would (``rerun_recipe``), and one made elsewhere may point them anywhere."""
    resume = long_run["resume"]
    written = [f"-o {output}"]
    if long_run["save_model"]:
        written.append(f"--save-model {long_run['save_model']}")
    if extras["classes"]:
        written.append(f"--classes-output {extras['classes_output']}")
    folder = long_run["checkpoint"] or (resume if os.path.isdir(resume) else None)
    if folder:
        written.append(f"checkpoints in {folder}")
    click.echo(display_word(f"w2v: resuming {resume}; writing {', '.join(written)}"), err=True)  # paths from a file


def phrased_corpus(corpus: list[str], extras: dict, settings: dict, quiet: bool) -> list[str] | Iterator[list[bytes]]:
    """``train --phrases``: the corpus with the phrases it holds joined on the fly
    (never written); else the corpus as given."""
    if not extras["phrases"]:
        return corpus
    from w2v.corpus import is_stream
    from w2v.phrases import learn_phrases, phrased_lines
    from w2v.progress import Steps, reading

    streams = [source for source in corpus if is_stream(source)]
    if streams:
        raise W2VError(
            f"--phrases reads the corpus more than once: give files, not {streams[0]} "
            "(standard input or a pipe, read only once)"
        )
    passes = extras["phrase_passes"]
    with Steps(not quiet) as steps:
        table = learn_phrases(
            corpus,
            min_count=settings["min_count"],
            threshold=extras["phrase_threshold"],
            passes=passes,
            prune_at=settings["prune_at"],
            on_read=lambda done, status: reading(steps, f"phrases, pass {done}/{passes}")(status),
        )
    if not quiet:
        found = ", ".join(f"{len(t):,}" for t in table.passes)
        click.echo(f"w2v: phrases found in {plural(passes, 'pass', 'passes')}: {found}", err=True)
    return phrased_lines(corpus, table)


def write_trained(vectors, output: str, fmt: str, extras: dict, seed: int, quiet: bool) -> list[str]:
    """Write the vectors to ``output`` and, with ``--classes K``, cluster them first and
    write the classes too, then with ``--plot FILE`` draw the loss per epoch; return the
    lines that say what else was written, for after the training summary. The vectors file is renamed into place last: when clustering
    or writing the classes fails, an old one is not replaced."""
    from w2v.files import atomic_output
    from w2v.formats import write_vectors
    from w2v.progress import Steps

    k, classes_output = extras["classes"], extras["classes_output"]
    written = []
    if k:
        from w2v.classes import kmeans, write_classes

        with Steps(not quiet) as steps:
            labels = kmeans(vectors.vectors, k, seed=seed, on_step=steps).labels
    with atomic_output(output, compress=True) as out:
        write_vectors(out, vectors.words, vectors.vectors, output_format(output, fmt))
        out.flush()  # a device (/dev/full) fails here, before the classes are written
        if k:
            write_classes(classes_output, vectors.words, labels)
            written.append(
                f"w2v: {plural(len(vectors), 'word')} in {plural(k, 'class', 'classes')}; wrote {classes_output}"
            )
    if extras["plot"]:  # after the vectors are in place: a picture is not worth losing them for
        from w2v.plots import plot_loss

        plot_loss(extras["plot"], vectors.report.epoch_loss, vectors.report.epoch_heldout)
        written.append(f"w2v: loss of {plural(len(vectors.report.epoch_loss), 'epoch')} drawn; wrote {extras['plot']}")
    return written


# --- using the vectors: analogy, similar, eval, convert --------------------------------


def vectors_options(command):
    """``-v/--vectors``, ``--format`` and ``--limit``: which vectors file and how to read it."""
    command = click.option(
        "--limit", type=click.IntRange(min=1), default=None, help="Read only the N first (most frequent) words."
    )(command)
    command = click.option(
        "--format",
        "fmt",
        type=click.Choice(VECTOR_FORMATS),
        default="auto",
        show_default=True,
        help="Vectors file format; auto detects it (glove: text without the 'COUNT DIM' line).",
    )(command)
    return click.option(
        "-v",
        "--vectors",
        "vectors_path",
        default="vectors.bin",
        show_default=True,
        help="Vectors file: word2vec text or binary, GloVe, fastText .vec or .bin, .npy export, "
        "w2v model file or checkpoint (folder).",
    )(command)


VECTOR_FORMATS = ["auto", "binary", "text", "glove"]


def load_vectors_as(path: str, fmt: str, limit: int | None):
    """``Vectors.load`` of ``path`` in the ``--format``/``--from`` ``fmt`` (one of ``VECTOR_FORMATS``)."""
    from w2v.vectors import Vectors

    binary = None if fmt in ("auto", "glove") else fmt == "binary"
    return Vectors.load(path, binary=binary, limit=limit, no_header=fmt == "glove")


def load_for_query(path: str, fmt: str, limit: int | None):
    """Load the vectors, with a hint when the default file is missing."""
    if path == "vectors.bin" and not os.path.exists(path):
        raise W2VError("vectors file not found: vectors.bin (train one with 'w2v train CORPUS', or give -v FILE)")
    return load_vectors_as(path, fmt, limit)


def limit_noted(search: Callable, limit: int | None) -> Callable:
    """``search``, its unknown-word errors saying that only the ``--limit N`` most
    frequent words were read."""
    from w2v.vectors import UnknownWordError

    if limit is None:
        return search

    def noted(*args):
        try:
            return search(*args)
        except UnknownWordError as err:
            raise W2VError(f"{err}; only the {limit:,} most frequent words were read (--limit {limit})") from None

    return noted


def neighbours(found) -> str:
    """``word<tab>score`` lines of the (word, cosine) pairs ``found``."""
    return "".join(f"{display_word(word)}\t{score:.4f}\n" for word, score in found)


def answer_stdin(prompt: str, answer: Callable[[list[str]], str | bytes], what: tuple[str, str]) -> None:
    """Answer the queries of standard input, one a line, printing ``answer(words)`` for
    each; on a terminal, a prompt loop (``prompt`` on stderr; EXIT or end of input to
    stop). A query ``answer`` fails on (W2VError: an unknown word) is reported and skipped;
    if any failed and stdin is not a terminal, W2VError at the end counts them
    (``what``: the singular and plural of a query)."""
    interactive = sys.stdin.isatty()
    asked = failed = 0
    while True:
        if interactive:
            click.echo(prompt, nl=False, err=True)
        line = sys.stdin.readline()
        if not line:
            break
        query = line.split()
        if not query:
            continue
        if interactive and query == ["EXIT"]:
            break
        asked += 1
        try:
            text = answer(query)
        except W2VError as err:  # an unknown word too (UnknownWordError)
            failed += 1
            click.echo(f"w2v: error: {display_word(str(err))}", err=True)
            continue
        click.echo(text, nl=False)
    if failed and not interactive:
        raise W2VError(f"{failed:,} of {plural(asked, *what)} could not be answered")


HEADERS = click.option(
    "--headers", is_flag=True, default=False, help="Stdin mode: a '# query' line before each answer."
)


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
@click.option("-n", "--top", "n", type=click.IntRange(min=1), default=10, show_default=True, help="Results to print.")
@click.option(
    "--method",
    type=click.Choice(["add", "cosmul"]),
    default="add",
    show_default=True,
    help="3CosAdd, or 3CosMul (Levy & Goldberg 2014).",
)
@click.option("--restrict", type=click.IntRange(min=1), default=None, help="Search only the N most frequent words.")
@HEADERS
def analogy(words, vectors_path, fmt, limit, n, method, restrict, headers):
    """Words closest to A - B + C (king man woman: queen), with their cosine.

    With no words, reads 'A B C' lines from stdin and answers each, a blank line
    after each answer (a prompt loop on a terminal, EXIT or end of input to stop).
    """
    if words and len(words) != 3:
        raise click.UsageError(f"give three words A B C (for A - B + C), not {len(words)}; or none to read stdin")
    vectors = load_for_query(vectors_path, fmt, limit)
    search = limit_noted(lambda q: vectors.analogy(*q, topn=n, method=method, restrict_vocab=restrict), limit)
    if words:
        click.echo(neighbours(search(words)), nl=False)
        return

    def answer(query: list[str]) -> str:
        if len(query) != 3:
            raise W2VError(f"need three words A B C, got {len(query)}: {' '.join(query)}")
        header = f"# {' - '.join(map(display_word, query[:2]))} + {display_word(query[2])}\n"
        return (header if headers else "") + neighbours(search(query)) + "\n"

    answer_stdin("Enter three words (EXIT to break): ", answer, ("analogy", "analogies"))


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@click.option("--minus", multiple=True, help="A word to subtract (repeatable).")
@vectors_options
@click.option("-n", "--top", "n", type=click.IntRange(min=1), default=10, show_default=True, help="Results to print.")
@click.option("--restrict", type=click.IntRange(min=1), default=None, help="Search only the N most frequent words.")
@HEADERS
def similar(words, minus, vectors_path, fmt, limit, n, restrict, headers):
    """Words closest in cosine to the mean of WORDS (minus the --minus words).

    With no words, reads lines of words from stdin and answers each (their mean,
    minus the --minus words), a blank line after each answer (a prompt loop on a
    terminal, EXIT or end of input to stop).
    """
    vectors = load_for_query(vectors_path, fmt, limit)
    search = limit_noted(lambda query: vectors.most_similar(query, list(minus), topn=n, restrict_vocab=restrict), limit)
    if words:
        click.echo(neighbours(search(list(words))), nl=False)
        return

    def answer(query: list[str]) -> str:
        found = search(query)
        header = f"# {' + '.join(query)}{''.join(f' - {m}' for m in minus)}\n" if headers else ""
        return header + neighbours(found) + "\n"

    answer_stdin("Enter word or sentence (EXIT to break): ", answer, ("query", "queries"))


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
def vector(words, vectors_path, fmt, limit):
    """Print the vectors of WORDS: 'word v1 ... vD' lines (fastText's print-word-vectors).

    With no words, reads words from stdin (any number a line) and prints their
    vectors. A line (or the arguments) with an unknown word prints nothing for it and
    is reported on stderr.
    """
    from w2v.formats import encode_word, text_records

    vectors = load_for_query(vectors_path, fmt, limit)

    def records(query) -> bytes:
        rows = vectors.vectors[[vectors.index(w) for w in query]]
        return text_records([encode_word(w) for w in query], rows)

    answer = limit_noted(records, limit)

    if words:
        click.echo(answer(words), nl=False)
        return
    answer_stdin("Enter words (EXIT to break): ", answer, ("line", "lines"))


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
def similarity(words, vectors_path, fmt, limit):
    """Print the cosine similarity of the words A and B.

    With no words, reads 'A B' lines from stdin and prints 'A<tab>B<tab>cosine'
    for each (a prompt loop on a terminal, EXIT or end of input to stop).
    """
    from w2v.vectors import display_word

    if words and len(words) != 2:
        raise click.UsageError(f"give two words A B, not {len(words)}; or none to read stdin")
    vectors = load_for_query(vectors_path, fmt, limit)
    cosine = limit_noted(lambda a, b: vectors.similarity(a, b), limit)
    if words:
        click.echo(f"{cosine(*words):.4f}")
        return

    def answer(query: list[str]) -> str:
        if len(query) != 2:
            raise W2VError(f"need two words A B, got {len(query)}: {' '.join(query)}")
        a, b = query
        return f"{display_word(a)}\t{display_word(b)}\t{cosine(a, b):.4f}\n"

    answer_stdin("Enter two words (EXIT to break): ", answer, ("pair", "pairs"))


@cli.command("eval", context_settings=CONTEXT)
@vectors_options
@click.option(
    "--analogies",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Analogy file (': section', 'a b c d') [none given: the Google set shipped with w2v].",
)
@click.option(
    "--similarity",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Word-pair file ('w1 w2 score') [none given: WordSim-353, shipped with w2v].",
)
@click.option(
    "--restrict",
    type=click.IntRange(min=1),
    default=30_000,
    show_default=True,
    help="Analogies: only the N most frequent words (word2vec.c compute-accuracy).",
)
@click.option("--case-sensitive", is_flag=True, default=False, help="Do not upper-case words before matching.")
@click.option("--method", type=click.Choice(["add", "cosmul"]), default="add", show_default=True)
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the results as JSON.")
def evaluate(vectors_path, fmt, limit, analogies, similarity, restrict, case_sensitive, method, as_json):
    """Analogy accuracy and word-similarity Spearman rho, as gensim computes them.

    With neither --analogies nor --similarity, scores the Google analogy set and
    WordSim-353, which ship with w2v.
    """
    import json

    from w2v.evaluate import DEFAULT_ANALOGIES, DEFAULT_SIMILARITY, evaluate_analogies, evaluate_similarity

    if not analogies and not similarity:
        analogies, similarity = (DEFAULT_ANALOGIES,), (DEFAULT_SIMILARITY,)
    for path in (*analogies, *similarity):
        if not os.path.isfile(path):
            raise W2VError(f"evaluation file not found: {path}")
    vectors = load_for_query(vectors_path, fmt, limit)
    ci = not case_sensitive
    results_a = [
        evaluate_analogies(vectors, p, restrict=restrict, case_insensitive=ci, method=method) for p in analogies
    ]
    results_s = [evaluate_similarity(vectors, p, case_insensitive=ci) for p in similarity]
    if as_json:
        out = {
            "vectors": vectors_path,
            "analogies": [r.to_dict() for r in results_a],
            "similarity": [r.to_dict() for r in results_s],
        }
        click.echo(json.dumps(out, indent=2))
        return
    for r in results_a:
        click.echo(
            f"{r.path}: analogy accuracy {100 * r.accuracy:.2f}% ({r.correct:,}/{r.answered:,}); "
            f"{plural(r.questions, 'question')}, {r.skipped:,} skipped (a word outside the {r.restrict:,} most frequent)"
            + (f", {plural(r.invalid, 'invalid line')}" if r.invalid else "")
        )
        for s in r.sections:
            click.echo(f"  {display_word(s.name):<32} {100 * s.accuracy:6.2f}%  ({s.correct:,}/{s.answered:,})")
    for r in results_s:
        click.echo(
            f"{r.path}: Spearman {r.spearman:.4f} (Pearson {r.pearson:.4f}) on {plural(r.pairs, 'pair')}, "
            f"{r.missing:,} missing" + (f", {plural(r.invalid, 'invalid line')}" if r.invalid else "")
        )


@cli.command(context_settings=CONTEXT)
@click.argument("source")
@click.argument("dest")
@click.option(
    "--from",
    "from_fmt",
    type=click.Choice(VECTOR_FORMATS),
    default="auto",
    show_default=True,
    help="SOURCE format; auto detects it (.npy by name; glove: text without the 'COUNT DIM' line).",
)
@click.option(
    "--to",
    "to_fmt",
    type=click.Choice(["auto", "binary", "text", "npy", "projector"]),
    default="auto",
    show_default=True,
    help="DEST format; auto: binary for .bin, npy (+ .vocab.txt) for .npy, else text. projector: "
    "DEST_vectors.tsv and DEST_metadata.tsv for TensorBoard's Embedding Projector.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Keep only the N first (most frequent) words.")
@click.option("-q", "--quiet", is_flag=True, default=False, help="No summary line.")
def convert(source, dest, from_fmt, to_fmt, limit, quiet):
    """Convert vectors (any file -v reads) to word2vec text, binary or .npy + vocabulary,
    or write them for TensorBoard's Embedding Projector (--to projector: DEST is a prefix)."""
    if to_fmt == "auto":
        to_fmt = "npy" if dest.endswith(".npy") else "binary" if binary_name(dest) else "text"
    if to_fmt == "npy" and not dest.endswith(".npy"):
        raise click.BadParameter(f"--to npy needs a name ending in .npy, not {dest}", param_hint="DEST")
    for path in (f"{dest}_vectors.tsv", f"{dest}_metadata.tsv") if to_fmt == "projector" else (dest,):
        check_writable(path)
    vectors = load_vectors_as(source, from_fmt, limit)
    extra = ""
    if to_fmt == "npy":
        extra = f" and {vectors.save_npy(dest)}"
    elif to_fmt == "projector":
        dest, metadata = vectors.save_projector(dest)
        extra = f" and {metadata}"
    else:
        vectors.save(dest, binary=to_fmt == "binary")
    if not quiet:
        click.echo(
            f"w2v: wrote {plural(len(vectors), 'vector')} of {plural(vectors.dim, 'value')} to {dest}{extra} ({to_fmt})",
            err=True,
        )


@cli.command(context_settings=CONTEXT)
@click.argument("model")
@click.argument("corpus", nargs=-1, required=True)
@click.option("--window", type=click.IntRange(min=1), default=None, help="Reach of the pairs [the model's window].")
@click.option("--max-pairs", type=click.IntRange(min=1), default=None, help="Score a uniform sample of N predictions.")
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of the --max-pairs sample.")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the figures as JSON.")
@click.option(
    "--per-line",
    is_flag=True,
    default=False,
    help="Print each non-blank line's log-probability in bits, a column per loss (10,000-token pieces of longer lines).",
)
def score(model, corpus, window, max_pairs, seed, as_json, per_line):
    """Held-out cross-entropy of MODEL's own prediction task on CORPUS, in bits per word.

    MODEL is a --save-model file or a checkpoint (folder or file): vectors files
    hold no output weights. Skip-gram predicts every word within --window of
    each word, CBOW each word from its whole window; no subsampling.
    """
    import tempfile

    from w2v.scoring import score_model
    from w2v.state import TrainState

    state = TrainState.load(model)
    with tempfile.TemporaryDirectory(prefix="w2v-") as workdir:
        result = score_model(state, list(corpus), workdir, window, max_pairs, seed)
    if per_line:
        click.echo("".join("\t".join(f"{bits:.4f}" for bits in row) + "\n" for row in result.sentence_bits), nl=False)
    elif as_json:
        import json

        first, *others = (s.to_dict() for s in result.scores)
        click.echo(json.dumps({**first, "other_losses": others}, indent=2))
    else:
        for s in result.scores:
            click.echo(
                f"{s.loss}: {s.bits_per_word:.4f} bits per word (perplexity {s.perplexity:,.1f}) on "
                f"{plural(s.pairs, 'prediction')}; unigram {s.unigram_bits_per_word:.4f}; "
                f"{plural(s.oov_tokens, 'token')} out of vocabulary"
            )
            if s.mean_log_z is not None:
                click.echo(
                    f"{s.loss}: softmax(s) {s.bits_per_word_plain:.4f} bits, Z = 1 {s.bits_per_word_z1:.4f} bits; "
                    f"log Z mean {s.mean_log_z:.3f}, sd {s.std_log_z:.3f}"
                )


MISSING_SHOWN = 10  # words not in the vocabulary named in plot's note; the rest are counted


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
@click.option(
    "--words-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also plot these words: one a line (the first field; a 'word count' vocabulary works).",
)
@click.option("-o", "--output", default="map.png", show_default=True, help="Picture to write (.png, .svg, .pdf, ...).")
@click.option(
    "--method",
    type=click.Choice(PLOT_METHODS),
    default="pca",
    show_default=True,
    help="pca: numpy; tsne needs scikit-learn, umap needs umap-learn.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of t-SNE and UMAP.")
@click.option("-q", "--quiet", is_flag=True, default=False, help="No summary line.")
def plot(words, vectors_path, fmt, limit, words_file, output, method, seed, quiet):
    """Draw WORDS as labelled points on a 2-D map of their vectors.

    The map is the first two principal components of the words' unit vectors
    (--method pca): words used alike land close together. Words not in the
    vocabulary are left out, with a note. Needs matplotlib: pip install 'w2v[plot]'.
    """
    from w2v.plots import check_method, picture_format, plot_words, project
    from w2v.vectors import display_word

    chosen = list(dict.fromkeys([*words, *(read_word_list(words_file) if words_file else [])]))
    if not chosen:
        raise click.UsageError("give the WORDS to plot, or --words-file FILE")
    picture_format(output)  # matplotlib and the picture's format, before any work
    check_method(method)
    check_writable(output)
    vectors = load_for_query(vectors_path, fmt, limit)
    known = [w for w in chosen if w in vectors]
    missing = [display_word(w) for w in chosen if w not in vectors]
    more = f" and {len(missing) - MISSING_SHOWN:,} more" if len(missing) > MISSING_SHOWN else ""
    named = ", ".join(missing[:MISSING_SHOWN]) + more
    if len(known) < 2:
        absent = f" ({named} not in it)" if missing else ""
        raise W2VError(f"a map needs at least 2 words in the vocabulary, not {len(known)}{absent}")
    if missing:
        click.echo(f"w2v: {plural(len(missing), 'word')} not in the vocabulary, left out: {named}", err=True)
    projection = project(vectors.vectors[[vectors.index(w) for w in known]], method, seed)
    title = f"{os.path.basename(vectors_path)}: {plural(len(known), 'word')}, {projection.method} of unit vectors"
    plot_words(output, known, projection, title)
    if not quiet:
        click.echo(f"w2v: {plural(len(known), 'word')} on a {projection.method} map; wrote {output}", err=True)


def read_word_list(path: str) -> list[str]:
    """The first field of each non-blank line of ``path``, as the vocabulary spells words."""
    from w2v.formats import decode_word

    try:
        with open(path, "rb") as handle:
            return [decode_word(line.split()[0]) for line in handle if line.strip()]
    except OSError as err:
        raise W2VError(f"cannot read the words file {path}: {err.strerror}") from None


# --- more tools: vocab, classes, phrases ---------------------------------------------


@cli.command(context_settings=CONTEXT)
@click.argument("corpus", nargs=-1, required=True)
@click.option(
    "-o", "--output", default="vocab.txt", show_default=True, help="Vocabulary file to write ('word count' lines)."
)
@click.option(
    "--min-count", type=click.IntRange(min=1), default=5, show_default=True, help="Drop words seen fewer times."
)
@click.option("--max-vocab", type=click.IntRange(min=1), default=None, help="Keep only the N most frequent words.")
@click.option(
    "--prune-at",
    type=click.IntRange(min=1),
    default=DEFAULT_PRUNE_AT,
    show_default=True,
    help="Distinct words held while counting; past it the rarest are pruned (word2vec.c ReduceVocab).",
)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar.")
def vocab(corpus, output, min_count, max_vocab, prune_at, quiet):
    """Count the words of CORPUS and write the vocabulary (word2vec.c's -save-vocab format).

    Prints the vocabulary's size, the tokens it covers, and the coverage at each
    --min-count from 1 to 10, to help choose one.
    """
    from w2v.counting import count_words
    from w2v.progress import Steps, compiling_noted, reading
    from w2v.vocab import Vocab, coverage_table

    check_writable(output)
    sources = corpus_sources(list(corpus), [output])
    with compiling_noted(not quiet), Steps(not quiet) as steps:
        counter = count_words(sources, prune_at, on_read=reading(steps))
    live = counter.live_ids()
    counts = counter.counts[live]
    chosen = Vocab.choose(counter.words_of(live), counts, min_count, max_vocab)
    chosen.save(output)
    total = counter.tokens
    click.echo(
        f"{plural(len(chosen), 'word')} (min-count {min_count}"
        + (f", max-vocab {max_vocab:,}" if max_vocab else "")
        + f") cover {chosen.total:,} of {plural(total, 'token')} ({100 * chosen.total / total:.2f}%); "
        f"{plural(len(live), 'distinct word')} counted; wrote {output}"
    )
    if counter.min_reduce > 1:
        click.echo(
            f"note: counting pruned words seen at most {plural(counter.min_reduce - 1, 'time')} (--prune-at {prune_at:,}); "
            "their counts are not included"
        )
    click.echo("min-count\twords\ttokens\tcoverage")
    for row_min, words, covered in coverage_table(counts, max_vocab):
        click.echo(f"{row_min}\t{words}\t{covered}\t{100 * covered / total:.2f}%")


@cli.command(context_settings=CONTEXT)
@vectors_options
@click.option("-k", "--classes", "k", type=click.IntRange(min=1), required=True, help="Number of classes.")
@click.option("-o", "--output", default="classes.txt", show_default=True, help="File of 'word class' lines to write.")
@click.option(
    "--init",
    type=click.Choice(["kmeans++", "word2vec"]),
    default="kmeans++",
    show_default=True,
    help="k-means++ seeding, or word2vec.c's (word i in class i mod k).",
)
@click.option(
    "--iter",
    "iterations",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Most iterations (word2vec.c: 10).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of k-means++.")
@click.option(
    "--order",
    type=click.Choice(["class", "vocab"]),
    default="class",
    show_default=True,
    help="Sort lines by class (as the word2vec demo does), or keep the vectors' word order.",
)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar, no summary line.")
def classes(vectors_path, fmt, limit, k, output, init, iterations, seed, order, quiet):
    """Cluster the words into K classes: k-means on the unit vectors (word2vec.c -classes)."""
    from w2v.classes import kmeans, write_classes
    from w2v.progress import Steps

    check_writable(output)
    vectors = load_for_query(vectors_path, fmt, limit)
    with Steps(not quiet) as steps:
        found = kmeans(vectors.vectors, k, iterations=iterations, seed=seed, init=init, on_step=steps)
    write_classes(output, vectors.words, found.labels, order=order)
    if not quiet:
        click.echo(
            f"w2v: {plural(len(vectors), 'word')} in {plural(k, 'class', 'classes')} after "
            f"{plural(found.iterations, 'iteration')} "
            f"(mean cosine to centroid {found.mean_similarity:.4f}); wrote {output}",
            err=True,
        )


@cli.command(context_settings=CONTEXT)
@click.argument("corpus", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    required=True,
    help="Corpus to write with phrases joined ('-': stdout; .gz .bz2 .xz .zst compress).",
)
@click.option(
    "--min-count",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Ignore words and pairs seen fewer times.",
)
@click.option("--threshold", type=float, default=None, help="Join pairs scoring above this [100; npmi: 0.5].")
@click.option(
    "--scoring",
    type=click.Choice(["default", "npmi"]),
    default="default",
    show_default=True,
    help="default: word2phrase's (n(ab) - min_count) N / (n(a) n(b)); npmi: in [-1, 1].",
)
@click.option(
    "--passes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Passes; each can join the last one's phrases again.",
)
@click.option("--delimiter", default="_", show_default=True, help="Joins the words of a phrase.")
@click.option(
    "--prune-at",
    type=click.IntRange(min=1),
    default=DEFAULT_PRUNE_AT,
    show_default=True,
    help="Words and pairs held while counting; past it the rarest are pruned (word2phrase ReduceVocab).",
)
@click.option("--save-phrases", type=click.Path(dir_okay=False), default=None, help="Also write the phrase table.")
@click.option(
    "--apply-phrases",
    type=click.Path(dir_okay=False),
    default=None,
    help="Join the phrases of this table (from --save-phrases) instead of detecting them.",
)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar, no summary line.")
def phrases(
    corpus, output, min_count, threshold, scoring, passes, delimiter, prune_at, save_phrases, apply_phrases, quiet
):
    """Detect phrases (frequent bigrams) in CORPUS and write it with them joined (word2phrase).

    Each line of the corpus gives one line of output, its words separated by one
    space; 'new york' becomes 'new_york'. --passes 2 builds longer phrases.
    """
    from w2v.phrases import PhraseTable, check_npmi_threshold, learn_phrases, spooled_streams, write_phrased
    from w2v.progress import Steps, reading

    if output != "-":
        check_writable(output)
    if save_phrases is not None:
        check_writable(save_phrases)
    if apply_phrases is not None:
        reject_unused(
            ("threshold", "scoring", "min_count", "passes", "delimiter", "prune_at"),
            "with --apply-phrases (the table's own settings apply)",
        )
        if not os.path.isfile(apply_phrases):
            raise W2VError(f"phrase table not found: {apply_phrases}")
    if threshold is not None:
        try:
            check_npmi_threshold(scoring, threshold)
        except ConfigError as err:  # a usage error, reported before the corpus is read
            raise click.BadParameter(str(err), param_hint="--threshold") from None
    with spooled_streams(corpus_sources(list(corpus), [output, save_phrases])) as sources, Steps(not quiet) as steps:
        if apply_phrases:
            table = PhraseTable.load(apply_phrases)
        else:
            table = learn_phrases(
                sources,
                min_count=min_count,
                threshold=threshold,
                scoring=scoring,
                passes=passes,
                delimiter=delimiter,
                prune_at=prune_at,
                on_read=lambda done, status: reading(steps, f"phrases, pass {done}/{passes}")(status),
            )
        if save_phrases:
            table.save(save_phrases)
        written = write_phrased(sources, table, output, on_read=reading(steps, "writing"))
    if not quiet:
        found = "; ".join(f"pass {p}: {plural(len(t), 'phrase')}" for p, t in enumerate(table.passes, 1))
        click.echo(
            f"w2v: {found}; {plural(written.lines, 'line')}, {plural(written.tokens_in, 'token')} in, "
            f"{written.tokens_out:,} out; wrote {output}" + (f" and {save_phrases}" if save_phrases else ""),
            err=True,
        )


# --- word2vec.c's command lines: word2vec, word2phrase, distance, word-analogy, compute-accuracy ---

# the raw arguments reach the command: click must not read -hs as -h -s, nor -h as its help
C_TOOL = {**CONTEXT, "help_option_names": ["--help"], "ignore_unknown_options": True}
C_HELP = ("-h", "-help")
Parsed = TypeVar("Parsed")


def c_arguments(args: tuple[str, ...], parse: Callable[[tuple[str, ...]], Parsed]) -> Parsed:
    """``parse(args)`` (a ``c_tools`` parser); the help for no arguments or -h (word2vec.c
    prints its usage then), a usage error for a bad command line."""
    ctx = click.get_current_context()
    if not args or args[0] in C_HELP:
        click.echo(ctx.get_help())
        ctx.exit(0)
    try:
        return parse(args)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


def c_help(summary: str, flags) -> str:
    from w2v.c_tools import flags_help

    return f"{summary}\n\n{flags_help(flags)}"


def word2vec_help() -> str:
    from w2v.c_tools import WORD2VEC_FLAGS

    return c_help(
        "word2vec.c's command line: train vectors with its flags and defaults.\n\n"
        "'w2v word2vec -train text8 -output vectors.bin -cbow 1 -size 200 -window 8 -negative 25 -hs 0 "
        "-sample 1e-4 -threads 20 -binary 1 -iter 15' runs as ./word2vec does. Defaults are word2vec.c's, not "
        "'w2v train''s: CBOW, -alpha 0.05 (0.025 skip-gram), 12 threads (more than the cores is allowed, but "
        "slower), text output unless -binary 1, and -hs 1 keeps -negative 5 on (both losses train). Without "
        "-output the vocabulary is counted (and written with -save-vocab) and nothing is trained. -classes K "
        "writes 'word class' lines (k-means, word2vec.c's initialisation, 10 iterations) instead of vectors.\n\n"
        "Differences: a newline is not the word </s> (the vocabulary has one word less), and an unknown flag is "
        "an error where word2vec.c ignores it. docs/options.md maps each flag to 'w2v train'.",
        WORD2VEC_FLAGS,
    )


@cli.command("word2vec", context_settings=C_TOOL, help=word2vec_help(), options_metavar="")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="-train FILE [-output FILE] [-flag VALUE]...")
def word2vec(args):
    from w2v.c_tools import count_vocab, word2vec_run

    run = c_arguments(args, word2vec_run)
    check_distinct_outputs({"-output": run.output, "-save-vocab": run.save_vocab})
    for path in (run.output, run.save_vocab):
        if path is not None:
            check_writable(path)
    if run.read_vocab is not None and not os.path.isfile(run.read_vocab):
        raise W2VError(f"vocabulary file not found: {run.read_vocab}")
    if run.output is None:  # word2vec.c stops after the vocabulary
        vocab = count_vocab(run)
        if run.save_vocab is not None:
            vocab.save(run.save_vocab)
        if run.debug > 0:
            saved = f"; wrote {run.save_vocab}" if run.save_vocab else ""
            click.echo(f"w2v: {len(vocab):,} words in vocabulary; no -output, nothing trained{saved}", err=True)
        return
    vectors = train_vectors(
        [run.train], read_vocab=run.read_vocab, save_vocab=run.save_vocab, progress=run.debug > 1, **run.settings
    )
    write_start = time.perf_counter()
    if run.classes:
        from w2v.classes import kmeans, write_classes

        found = kmeans(vectors.vectors, run.classes, iterations=10, init="word2vec")
        write_classes(run.output, vectors.words, found.labels, order="vocab")
    else:
        vectors.save(run.output, binary=run.binary)
    if run.debug > 0:
        echo_summary(vectors, run.output, time.perf_counter() - write_start)


def word2phrase_help() -> str:
    from w2v.c_tools import WORD2PHRASE_FLAGS

    return c_help(
        "word2phrase's command line: join frequent pairs of words with '_' (as 'w2v phrases').\n\n"
        "'w2v word2phrase -train text.txt -output phrases.txt -threshold 100 -debug 2' runs as ./word2phrase "
        "does; run it again on its output for phrases of up to four words. An unknown flag is an error.",
        WORD2PHRASE_FLAGS,
    )


@cli.command("word2phrase", context_settings=C_TOOL, help=word2phrase_help(), options_metavar="")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="-train FILE -output FILE [-flag VALUE]...")
def word2phrase(args):
    from w2v.c_tools import word2phrase_settings

    settings = c_arguments(args, word2phrase_settings)
    click.get_current_context().invoke(
        phrases,
        corpus=(settings["train"],),
        output=settings["output"],
        min_count=settings["min_count"],
        threshold=settings["threshold"],
        quiet=settings["debug"] == 0,
    )


def read_stdin_lines() -> Iterator[str]:
    """Standard input's lines, read one at a time (a prompt is answered before the next)."""
    return iter(sys.stdin.readline, "")


def echo_session(texts: Iterator[str]) -> None:
    """Print a C tool's output as it comes (prompts without a newline)."""
    for text in texts:
        click.echo(text, nl=False)


@cli.command("distance", context_settings=CONTEXT)
@click.argument("file")
def distance(file):
    """word2vec.c's distance: the 40 words closest to a word or to the sum of several.

    Reads lines of words from stdin ('Enter word or sentence (EXIT to break): ')
    and prints distance.c's table of words and cosines for each. FILE: vectors in
    any word2vec format.
    """
    from w2v.c_tools import distance_session
    from w2v.vectors import Vectors

    echo_session(distance_session(Vectors.load(file), read_stdin_lines()))


@cli.command("word-analogy", context_settings=CONTEXT)
@click.argument("file")
def word_analogy(file):
    """word2vec.c's word-analogy: for 'A B C', the 40 words closest to B - A + C.

    Note the order: 'man king woman' answers queen (w2v analogy takes 'king man
    woman'). Reads lines from stdin ('Enter three words (EXIT to break): ') and
    prints word-analogy.c's table for each.
    """
    from w2v.c_tools import word_analogy_session
    from w2v.vectors import Vectors

    echo_session(word_analogy_session(Vectors.load(file), read_stdin_lines()))


@cli.command("compute-accuracy", context_settings=CONTEXT)
@click.argument("file")
@click.argument("threshold", type=click.IntRange(min=0), default=0, required=False)
def compute_accuracy(file, threshold):
    """word2vec.c's compute-accuracy: analogy accuracy of FILE on the questions of stdin.

    'w2v compute-accuracy vectors.bin 30000 < questions-words.txt'. Only the
    THRESHOLD most frequent words are read (0: all); words are upper-cased; a
    question is answered by the best word for B - A + C other than A, B and C, and
    skipped if one of its words is out of the vocabulary. Prints each section's
    top-1 accuracy, the running total, semantic (first five sections) and syntactic
    accuracy, then the questions seen, in compute-accuracy.c's format ('w2v eval'
    grades as gensim does).
    """
    from w2v.c_tools import accuracy_report
    from w2v.evaluate import parse_analogies, score_analogies
    from w2v.vectors import Vectors

    vectors = Vectors.load(file, limit=threshold or None)
    questions = parse_analogies(read_stdin_lines(), "standard input")
    result = score_analogies(vectors, questions, "-", restrict=None, rule="word2vec")
    for line in accuracy_report(result):
        click.echo(line)
