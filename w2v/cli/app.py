"""The ``w2v`` command group and its entry point: every failure as one line.

Every user mistake ends as one ``w2v: error: ...`` line on stderr and a non-zero
exit (1 for bad input, 2 for bad usage, 130/143 when interrupted), never a traceback.
A closed output pipe (``w2v vocab ... | head -2``) ends any command quietly with
exit 141, as a Unix tool killed by SIGPIPE; standard output that cannot be written
(a full disk, a file size limit, ``>&-``) is one line and exit 1 (``streams``).
"""

import itertools
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import click

from w2v.cli.c_tools import WORD2VEC_FLAG_NAMES, c_style_flags
from w2v.cli.streams import OutputFailed, use_checked_streams
from w2v.errors import ConfigError, NotAModelError, W2VError
from w2v.vectorio.detect import vectors_kind
from w2v.vectorio.modelfile import checkpoint_path, describe_progress, read_meta
from w2v.words import display_word

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
    version included; a command's Ctrl-C is ``Stopped`` here, before click would
    print an empty line for it (as every command stops: one line)."""

    def make_context(self, *args, **kwargs):
        with closed_pipe_raised():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with closed_pipe_raised():
            try:
                return super().invoke(ctx)
            except KeyboardInterrupt as interrupt:
                raise Stopped(interrupt, None) from None


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


class Reported(Exception):
    """A command's failures, each already reported on stderr in one line (``w2v vector``'s
    unknown words, the others answered): exit 1 without another line."""


class Terminated(Exception):
    """SIGTERM arrived: unwind like Ctrl-C (workers stop, no output is written)."""


def terminate(_signum, _frame):
    raise Terminated


class Stopped(Exception):
    """Training interrupted (Ctrl-C, SIGTERM, its cluster lost); says how to resume when a
    checkpoint was saved (on the ``cluster`` it ran on, if any: it resumes only on a cluster)."""

    def __init__(self, cause: BaseException, checkpoint: str | None, cluster: str | None = None):
        self.code = {Terminated: 143, KeyboardInterrupt: 130}.get(type(cause), 1)
        message = {143: "terminated", 130: "interrupted"}.get(self.code, str(cause))
        if checkpoint and os.path.isfile(checkpoint_path(checkpoint)):
            meta = read_meta(checkpoint)  # not the weights: gigabytes for a big model
            where = describe_progress(meta["jobs_done"], meta["batches"], meta["config"]["epochs"])
            again = f"w2v train --resume {checkpoint}" + (f" --cluster {cluster}" if cluster else "")
            message += f"; checkpoint saved in {checkpoint} ({where}): continue with '{again}'"
        super().__init__(message)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run ``cli``, turning every expected failure into one stderr line."""
    if threading.current_thread() is threading.main_thread():  # signal() works only there
        signal.signal(signal.SIGTERM, terminate)
    use_checked_streams()
    try:
        check_flag_values(sys.argv[1:] if argv is None else argv)
        check_fasttext_flags(sys.argv[1:] if argv is None else argv)
        cli.main(args=argv, prog_name="w2v", standalone_mode=False)
        sys.stdout.flush()  # what is still buffered meets a closed pipe or a full disk here, not at exit
    except (OutputClosed, BrokenPipeError):
        silence_stdout()
        sys.exit(CLOSED_PIPE_EXIT)
    except click.exceptions.Abort:
        fail("interrupted", 130)
    except Reported:
        sys.exit(1)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as err:  # plain ``w2v`` (click 8.2+): the help
        click.echo(err.format_message(), err=True)
        sys.exit(2)
    except click.UsageError as err:
        fail(usage_message(err, sys.argv[1:] if argv is None else argv), 2)
    except click.ClickException as err:
        fail(err.format_message())
    except NotAModelError as err:
        fail(not_a_model_message(err))
    except ConfigError as err:
        fail(err.flags or str(err))
    except OutputFailed as err:
        silence_stdout()  # what is still buffered goes nowhere at exit, not into the failure again
        fail(str(err))
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


def not_a_model_message(err: NotAModelError) -> str:
    """The error for a file given where a model file is needed: what it is, when it is
    vectors (which hold no output weights), and how to keep a model."""
    kind = vectors_kind(err.path)
    if kind is None:
        return str(err)
    return (
        f"{err.path} holds {kind}, not a w2v model: vectors files have no output weights to train, score or write to fastText; "
        "keep a model with 'w2v train ... --save-model FILE'"
    )


# gensim's Word2Vec keywords spelled as flags, where w2v's flag differs (``--size`` and
# ``--iter`` are aliases, and click suggests ``--min-count`` for ``--min_count``)
GENSIM_FLAGS = {
    "workers": "--threads",
    "sg": "--model skipgram (sg=1) or --model cbow (sg=0)",
    "vector-size": "--dim",
    "max-vocab-size": "--prune-at (distinct words held while counting)",
    "max-final-vocab": "--max-vocab",
    "cbow-mean": "--cbow-sum for cbow_mean=0 (the mean is the default)",
    "corpus-file": "the corpus file as an argument",
    "compute-loss": "nothing: the loss is always computed",
}
SINGLE_DASH_NAMES = {"topn": "--top"}  # gensim's and word2vec.c's names of options w2v spells otherwise
# fastText's flags (one dash, or two by habit), lower-cased, where w2v's option is named
# otherwise: ``w2v train``'s, and the queries' (``-k``: fastText's predict and nn)
FASTTEXT_TRAIN_FLAGS = {
    "epoch": "--epochs",
    "lr": "--alpha",
    "ws": "--window",
    "mincount": "--min-count",
    "thread": "--threads",
    "neg": "--negative",
    "t": "--sample",
    "loss": "--hs (-loss hs), --negative N (-loss ns) or --softmax (-loss softmax)",
    "input": "the corpus as an argument: w2v train FILE",
    "output": "-o FILE (and --save-fasttext FILE.bin for fastText's model)",
    "verbose": "-q for -verbose 0",
}
FASTTEXT_QUERY_FLAGS = {"k": "--top"}


def command_options(argv: list[str]) -> tuple[click.Command | None, dict[str, click.Option]]:
    """The command ``argv`` runs (None for none) and its options by every name they take."""
    command = cli.commands.get(argv[0]) if argv else None
    params = [p for p in command.params if isinstance(p, click.Option)] if command else []
    return command, {name: p for p in params for name in (*p.opts, *p.secondary_opts)}


class OtherToolsFlag(click.UsageError):
    """A flag of another tool's, its message naming w2v's option (no more hints added)."""


def usage_message(err: click.UsageError, argv: list[str]) -> str:
    """The one line for a usage error: a flag that is another tool's name gets w2v's
    (gensim's ``--workers``, ``-topn`` for ``--top``, word2vec.c's ``-train``)."""
    if isinstance(err, OtherToolsFlag):
        return err.format_message()
    command, options = command_options(argv)
    given = [arg.split("=")[0] for arg in argv[1:] if arg.startswith("-") and arg.split("=")[0] not in options]
    training = command is not None and command.name == "train"
    for flag in given:
        name = flag.lstrip("-").replace("_", "-").lower()
        if training and name in GENSIM_FLAGS:
            return f"{flag} is gensim's name: use {GENSIM_FLAGS[name]}"
    if hint := c_flags_hint(argv):
        return err.format_message() + hint
    for flag in given:
        name = flag.lstrip("-").lower()
        spelled = SINGLE_DASH_NAMES.get(name, f"--{name}")
        if not flag.startswith("--") and len(name) > 1 and spelled in options:  # -topn: click reads -t -o -p -n
            return f"no option {flag}: use {spelled}"
    return err.format_message()


def check_flag_values(argv: list[str]) -> None:
    """A usage error for a value after a flag that takes none (``--hs 1``, word2vec.c's
    habit), which would otherwise be read as a corpus file named ``1`` (or ``0``)."""
    _, options = command_options(argv)
    for flag, value in itertools.pairwise(argv[1:]):
        option = options.get(flag)
        if option is None or not option.is_flag or option.count or value not in ("0", "1"):
            continue
        off = f" (or give {option.secondary_opts[0]})" if option.secondary_opts else ""
        name = flag.lstrip("-")
        keep_off = f"for word2vec.c's -{name} 0" if name in WORD2VEC_FLAG_NAMES else "to keep it off"
        raise click.UsageError(f"{flag} takes no value: give {flag} alone to turn it on; leave it out{off} {keep_off}")


def check_fasttext_flags(argv: list[str]) -> None:
    """A usage error naming w2v's option for a fastText flag (``-epoch 10``, ``--lr
    0.1``), before click reads it: one it would split into short options (``-output``
    is ``-o utput``) or name no close option for. A word2vec.c command line (``-train
    FILE -output FILE``) is left to ``c_flags_hint``, which points to ``w2v word2vec``."""
    command, options = command_options(argv)
    if command is None:
        return
    flags = FASTTEXT_TRAIN_FLAGS if command.name == "train" else FASTTEXT_QUERY_FLAGS if "--top" in options else {}
    args = list(itertools.takewhile(lambda arg: arg != "--", argv[1:]))
    if command.name == "train" and set(c_style_flags(args, set(options))) - {"-output"}:
        return
    for arg in args:
        flag = arg.split("=")[0]
        name = flag.lstrip("-").lower()
        if flag.startswith("-") and flag not in options and name in flags:
            owners = "fastText's and word2vec.c's" if name in WORD2VEC_FLAG_NAMES else "fastText's"
            raise OtherToolsFlag(f"{flag} is {owners} name: use {flags[name]}")


def c_flags_hint(argv: list[str]) -> str:
    """For ``w2v train`` given word2vec.c's flags (``-train x``, ``--cbow 1``): where they are taken."""
    if not argv or argv[0] != "train":
        return ""
    found = c_style_flags(argv[1:], {opt for param in cli.commands["train"].params for opt in param.opts})
    if not found:
        return ""
    return f" ({found[0]} is a word2vec.c flag: 'w2v word2vec -train FILE -output FILE ...' takes its command lines)"
