"""word2vec.c's command lines: ``word2vec``, ``word2phrase``, ``distance``, ``word-analogy``, ``compute-accuracy``."""

import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import click

from w2v.cli.app import CONTEXT, cli
from w2v.cli.c_tools import (
    WORD2PHRASE_FLAGS,
    WORD2VEC_FLAGS,
    accuracy_report,
    distance_session,
    flags_help,
    vocab_only,
    word2phrase_settings,
    word2vec_run,
    word_analogy_session,
)
from w2v.cli.queries import load_for_query, one_vectors_file, read_stdin_lines, vectors_file_argument
from w2v.cli.tools import check_phrase_outputs, write_phrases
from w2v.cli.training import check_distinct_outputs, check_inputs_kept, echo_summary
from w2v.errors import ConfigError, W2VError
from w2v.files import check_writable
from w2v.progress import note
from w2v.toolkit import word_classes
from w2v.train import train as train_vectors
from w2v.vectors.evaluate import parse_analogies, score_analogies

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
    return f"{summary}\n\n{flags_help(flags)}"


def word2vec_help() -> str:
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
    run = c_arguments(args, word2vec_run)
    outputs = {"-output": run.output, "-save-vocab": run.save_vocab}
    check_distinct_outputs(outputs)
    check_inputs_kept([("-train", run.train), ("-read-vocab", run.read_vocab)], outputs)
    for path in (run.output, run.save_vocab):
        if path is not None:
            check_writable(path)
    if run.read_vocab is not None and not os.path.isfile(run.read_vocab):
        raise W2VError(f"vocabulary file not found: {run.read_vocab}")
    if run.output is None:  # word2vec.c stops after the vocabulary
        vocab = vocab_only(run)
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
        word_classes(vectors, run.classes, iterations=10, init="word2vec").save(run.output, order="vocab")
    else:
        vectors.save(run.output, binary=run.binary)
    if run.debug > 0:
        echo_summary(vectors, run.output, time.perf_counter() - write_start)


def word2phrase_help() -> str:
    return c_help(
        "word2phrase's command line: join frequent pairs of words with '_' (as 'w2v phrases').\n\n"
        "'w2v word2phrase -train text.txt -output phrases.txt -threshold 100 -debug 2' runs as ./word2phrase "
        "does; run it again on its output for phrases of up to four words. An unknown flag is an error.",
        WORD2PHRASE_FLAGS,
    )


@cli.command("word2phrase", context_settings=C_TOOL, help=word2phrase_help(), options_metavar="")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="-train FILE -output FILE [-flag VALUE]...")
def word2phrase(args):
    settings = c_arguments(args, word2phrase_settings)
    check_phrase_outputs(settings["output"], None, None)
    detection = {"min_count": settings["min_count"], "threshold": settings["threshold"]}
    write_phrases([settings["train"]], settings["output"], detection, settings["debug"] == 0)


def echo_session(texts: Iterator[str]) -> None:
    """Print a C tool's output as it comes (prompts without a newline)."""
    for text in texts:
        click.echo(text, nl=False)


VECTORS_OPTION = click.option("-v", "--vectors", "vectors_path", default=None, help="The vectors file (or give FILE).")


def c_tool_vectors(command):
    """word2vec.c's tools' vectors file: their positional FILE, or ``-v FILE`` as every
    other w2v command takes it (``one_vectors_file``)."""
    return vectors_file_argument(VECTORS_OPTION(command))


@cli.command("distance", context_settings=CONTEXT)
@c_tool_vectors
def distance(file, vectors_path):
    """word2vec.c's distance: the 40 words closest to a word or to the sum of several.

    Reads lines of words from stdin ('Enter word or sentence (EXIT to break): ')
    and prints distance.c's table of words and cosines for each. FILE (or -v
    FILE): vectors in any word2vec format.
    """

    echo_session(distance_session(load_for_query(one_vectors_file(file, vectors_path)), read_stdin_lines()))


@cli.command("word-analogy", context_settings=CONTEXT)
@c_tool_vectors
def word_analogy(file, vectors_path):
    """word2vec.c's word-analogy: for 'A B C', the 40 words closest to B - A + C.

    Note the order: 'man king woman' answers queen (w2v analogy takes 'king man
    woman'). Reads lines from stdin ('Enter three words (EXIT to break): ') and
    prints word-analogy.c's table for each. FILE (or -v FILE): vectors in any
    word2vec format.
    """

    echo_session(word_analogy_session(load_for_query(one_vectors_file(file, vectors_path)), read_stdin_lines()))


@cli.command("compute-accuracy", context_settings=CONTEXT)
@VECTORS_OPTION
@click.argument("args", nargs=-1, metavar="[FILE] [THRESHOLD]")
def compute_accuracy(vectors_path, args):
    """word2vec.c's compute-accuracy: analogy accuracy of FILE on the questions of stdin.

    'w2v compute-accuracy vectors.bin 30000 < questions-words.txt' (or -v
    vectors.bin 30000). Only the THRESHOLD most frequent words are read (0: all);
    words are upper-cased; a question is answered by the best word for B - A + C
    other than A, B and C, and skipped if one of its words is out of the
    vocabulary. Prints each section's top-1 accuracy, the running total, semantic
    (first five sections) and syntactic accuracy, then the questions seen, in
    compute-accuracy.c's format ('w2v eval' grades as gensim does).
    """

    file, threshold = accuracy_arguments(vectors_path, list(args))
    if sys.stdin.isatty():
        note("reading analogy questions from standard input (': section' and 'a b c d' lines; Ctrl-D ends them)")
    vectors = load_for_query(file, limit=threshold or None)
    questions = parse_analogies(read_stdin_lines(), "standard input")
    result = score_analogies(vectors, questions, "-", restrict=None, rule="word2vec")
    for line in accuracy_report(result):
        click.echo(line)


def accuracy_arguments(vectors_path: str | None, args: list[str]) -> tuple[str, int]:
    """compute-accuracy's vectors file and THRESHOLD from ``[FILE] [THRESHOLD]`` and ``-v``."""
    names_file = args and (vectors_path is None or not args[0].isdigit())  # -v FILE THRESHOLD, or FILE THRESHOLD
    file = args.pop(0) if names_file else None
    if len(args) > 1:
        raise click.UsageError(f"got unexpected extra argument ({args[1]})")
    if args and not (args[0].isascii() and args[0].isdigit()):  # digits alone: no sign, no other script's
        raise click.BadParameter(f"{args[0]!r} is not a whole number of 0 or more", param_hint="'THRESHOLD'")
    return one_vectors_file(file, vectors_path), int(args[0]) if args else 0
