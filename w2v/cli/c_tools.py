"""word2vec.c's command lines and query tools, on w2v's library.

word2vec.c's programs take single-dash ``-flag VALUE`` pairs (``-train text8 -size
200 -cbow 1``); ``parse_flags`` reads such a list into a dict by a table of
``Flag``s, and ``word2vec_run`` / ``word2phrase_settings`` turn it into w2v's
settings with word2vec.c's defaults, which differ from ``w2v train``'s (CBOW,
12 threads, ``-hs 1`` keeps negative sampling on, text output whatever the name).
Unlike word2vec.c, which ignores an unknown flag, a flag not in the table is an
error (a typo such as ``-itre 15`` would otherwise train 5 epochs unnoticed).

The query tools answer lines read from standard input and print what distance.c,
word-analogy.c and compute-accuracy.c print (prompts included), so scripts that
parse those programs' output read ours: ``distance_session``,
``word_analogy_session`` and ``accuracy_report`` yield the text to print.
"""

import difflib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.vocab import Vocab, text_words
from w2v.errors import ConfigError
from w2v.toolkit import count_vocab
from w2v.vectors.evaluate import NO_SECTION, AnalogyResult
from w2v.vectors.wordvectors import Vectors
from w2v.words import display_word


@dataclass(frozen=True)
class Flag:
    """One ``-name VALUE`` option of a word2vec.c program: its value's type, its default
    (None: not given) and its help line."""

    name: str
    kind: type
    default: int | float | str | None
    help: str


WORD2VEC_FLAGS = (
    Flag("train", str, None, "Text file to train on (w2v also reads .gz .bz2 .xz .zst, folders and URLs)."),
    Flag("output", str, None, "File to write the vectors (or, with -classes, the classes) to; none: vocabulary only."),
    Flag("size", int, 100, "Vector size."),
    Flag("window", int, 5, "Maximum context window."),
    Flag("sample", float, 1e-3, "Subsampling threshold of frequent words (0: off)."),
    Flag("hs", int, 0, "1: hierarchical softmax, besides negative sampling unless -negative 0."),
    Flag("negative", int, 5, "Noise words per example (0: no negative sampling)."),
    Flag("threads", int, 12, "Worker threads (more than the cores is allowed, but slower)."),
    Flag("iter", int, 5, "Epochs."),
    Flag("min-count", int, 5, "Drop words seen fewer times."),
    Flag("alpha", float, None, "Starting learning rate [0.05 CBOW, 0.025 skip-gram]."),
    Flag("classes", int, 0, "Write K word classes (k-means, 'word class' lines) instead of the vectors."),
    Flag("debug", int, 2, "0: quiet; 1: a summary line; 2: a progress bar too."),
    Flag("binary", int, 0, "1: binary vectors; 0: text, whatever the file is called."),
    Flag("save-vocab", str, None, "Also write the vocabulary ('word count' lines; no </s> entry)."),
    Flag("read-vocab", str, None, "Read the vocabulary from this file instead of counting -train."),
    Flag("cbow", int, 1, "1: CBOW; 0: skip-gram."),
)
WORD2VEC_FLAG_NAMES = {flag.name for flag in WORD2VEC_FLAGS}

WORD2PHRASE_FLAGS = (
    Flag("train", str, None, "Text file to find phrases in."),
    Flag("output", str, None, "File to write the text to, with phrases joined by '_'."),
    Flag("min-count", int, 5, "Ignore words and pairs seen fewer times."),
    Flag("threshold", float, 100.0, "Join pairs scoring above this (higher: fewer phrases)."),
    Flag("debug", int, 2, "0: quiet; 1 or more: a summary line."),
)

# TrainConfig fields named in ConfigError messages, and the word2vec.c flags that set them
FIELD_FLAGS = {
    "dim": "-size",
    "window": "-window",
    "sample": "-sample",
    "negative": "-negative",
    "threads": "-threads",
    "epochs": "-iter",
    "min_count": "-min-count",
    "alpha": "-alpha",
}


def flags_help(flags: Sequence[Flag]) -> str:
    """The flags as help lines, ``-name <type>`` then the help and default, for a click
    docstring (``\\b`` keeps click from re-wrapping them)."""
    lines = ["\b"]
    for flag in flags:
        default = "" if flag.default is None else f" [{flag.default:g}]" if flag.kind is float else f" [{flag.default}]"
        lines.append(f"  -{flag.name} <{flag.kind.__name__}>".ljust(22) + flag.help + default)
    return "\n".join(lines)


def parse_flags(args: Sequence[str], flags: Sequence[Flag], tool: str) -> dict[str, int | float | str | None]:
    """``-name VALUE`` pairs into a dict of every flag's value (its default when not
    given), keyed by name. ConfigError for an unknown or repeated flag, a missing or
    ill-typed value, or a stray argument."""
    table = {f"-{flag.name}": flag for flag in flags}
    values: dict[str, int | float | str | None] = {flag.name: flag.default for flag in flags}
    given: set[str] = set()
    position = 0
    while position < len(args):
        token = args[position]
        flag = table.get(token)
        if flag is None:
            raise ConfigError(unknown_flag(token, list(table), tool))
        if token in given:
            raise ConfigError(f"{token} given twice")
        if position + 1 == len(args):
            raise ConfigError(f"argument missing for {token}")
        values[flag.name] = typed(args[position + 1], flag)
        given.add(token)
        position += 2
    return values


def unknown_flag(token: str, known: list[str], tool: str) -> str:
    """The error for ``token``, not a flag of ``tool``, with the closest flag if any."""
    if not token.startswith("-"):
        return f"unexpected argument {token!r}: {tool} takes -flag VALUE pairs"
    close = difflib.get_close_matches("-" + token.lstrip("-"), known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown option {token}{hint}: {tool} would ignore it, w2v refuses it; see 'w2v {tool} -h'"


def typed(text: str, flag: Flag) -> int | float | str:
    """``text`` as ``flag``'s type; ConfigError naming the flag if it is not one."""
    if flag.kind is str:
        return text
    try:
        return flag.kind(text)
    except ValueError:
        kind = "an integer" if flag.kind is int else "a number"
        raise ConfigError(f"-{flag.name} needs {kind}, not {text!r}") from None


@dataclass(frozen=True)
class Word2VecRun:
    """A word2vec.c command line in w2v's terms: ``settings`` are ``w2v.train``'s
    (TrainConfig fields); ``output`` None means count the vocabulary and stop."""

    train: str
    output: str | None
    binary: bool
    classes: int
    debug: int
    save_vocab: str | None
    read_vocab: str | None
    settings: dict


def word2vec_run(args: Sequence[str]) -> Word2VecRun:
    """Parse word2vec.c's command line ``args`` (without the program name) and check it.
    ConfigError names the flag at fault."""
    values = parse_flags(args, WORD2VEC_FLAGS, "word2vec")
    if values["train"] is None:
        raise ConfigError("give -train FILE")
    settings = {
        "model": "cbow" if values["cbow"] else "skipgram",
        "dim": values["size"],
        "window": values["window"],
        "sample": values["sample"],
        "hs": bool(values["hs"]),
        "negative": values["negative"],  # stays 5 with -hs 1, as in word2vec.c: both losses train
        "threads": values["threads"],
        "epochs": values["iter"],
        "min_count": values["min-count"],
        "alpha": values["alpha"],
    }
    classes = int(values["classes"] or 0)
    if classes < 0:
        raise ConfigError(f"-classes must be 0 (vectors) or a number of classes, not {classes}")
    if values["output"] is not None:
        check_settings(settings)
    return Word2VecRun(
        train=str(values["train"]),
        output=None if values["output"] is None else str(values["output"]),
        binary=bool(values["binary"]),
        classes=classes,
        debug=int(values["debug"] or 0),
        save_vocab=None if values["save-vocab"] is None else str(values["save-vocab"]),
        read_vocab=None if values["read-vocab"] is None else str(values["read-vocab"]),
        settings=settings,
    )


def check_settings(settings: dict) -> None:
    """ConfigError if the training settings are invalid, naming word2vec.c's flags."""
    if not settings["hs"] and settings["negative"] == 0:
        raise ConfigError("nothing to train: -negative 0 and -hs 0 (give -hs 1, or -negative N > 0)")
    try:
        TrainConfig(**settings).resolved()
    except ConfigError as err:
        field, _, rest = str(err).partition(" ")
        raise ConfigError(f"{FIELD_FLAGS[field]} {rest}" if field in FIELD_FLAGS else str(err)) from None


def word2phrase_settings(args: Sequence[str]) -> dict:
    """Parse word2phrase's command line into ``train``, ``output``, ``min_count``,
    ``threshold`` and ``debug``; ConfigError if -train or -output is missing."""
    values = parse_flags(args, WORD2PHRASE_FLAGS, "word2phrase")
    for name in ("train", "output"):
        if values[name] is None:
            raise ConfigError(f"give -{name} FILE")
    if int(values["min-count"] or 0) < 1:
        raise ConfigError(f"-min-count must be at least 1, not {values['min-count']}")
    return {
        "train": values["train"],
        "output": values["output"],
        "min_count": values["min-count"],
        "threshold": values["threshold"],
        "debug": values["debug"],
    }


def c_style_flags(args: Sequence[str], options: set[str]) -> list[str]:
    """The arguments that look like word2vec.c flags (``-train``, ``--cbow``) and are not
    among ``options``: the hint that a word2vec.c command line was given to ``w2v train``."""
    return [a for a in args if a.startswith("-") and a.lstrip("-") in WORD2VEC_FLAG_NAMES and a not in options]


def vocab_only(run: Word2VecRun) -> Vocab:
    """word2vec.c without -output: the vocabulary of ``run.train`` (or of its
    -read-vocab file), words seen fewer than -min-count times dropped."""
    min_count = int(run.settings["min_count"])
    if run.read_vocab is not None:
        return Vocab.choose(*Vocab.read_counts(run.read_vocab), min_count, None)
    return count_vocab([run.train], min_count=min_count).vocab


# --- the query tools ----------------------------------------------------------------------

RESULTS = 40  # distance.c and word-analogy.c print this many words
TOO_FEW = "Only {} words were entered.. three words are needed at the input to perform the calculation\n"
RULE = "-" * 72
DISTANCE_PROMPT = "Enter word or sentence (EXIT to break): "
ANALOGY_PROMPT = "Enter three words (EXIT to break): "
DISTANCE_HEADER = f"\n{'Word':>50}       Cosine distance\n{RULE}\n"
ANALOGY_HEADER = f"\n{'Word':>50}              Distance\n{RULE}\n"


def queries_of(stream: Iterator[str], prompt: str) -> Iterator[str | list[str]]:
    """Yield ``prompt`` (a str) before reading each line of ``stream``, then its words (a
    list, split as a corpus line's: ``text_words``); stop at the end of input or a line
    ``EXIT``. Blank lines are asked again."""
    while True:
        yield prompt
        line = next(stream, None)
        if line is None:
            return
        words = text_words(line)
        if words == ["EXIT"]:
            return
        if words:
            yield words


def positions(vectors: Vectors, words: list[str]) -> tuple[str, bool]:
    """distance.c's ``Word: W  Position in vocabulary: N`` lines for ``words``, up to
    the first that is not in ``vectors`` (position -1, then ``Out of dictionary
    word!``), and whether all were found."""
    text = []
    for word in words:
        row = vectors.key_to_index.get(word, -1)
        text.append(f"\nWord: {display_word(word)}  Position in vocabulary: {row}\n")
        if row < 0:
            text.append("Out of dictionary word!\n")
            return "".join(text), False
    return "".join(text), True


def table(header: str, found: list[tuple[str, float]]) -> str:
    """The C tools' result table: the header, then ``%50s\\t\\t%f`` lines."""
    return header + "".join(f"{display_word(word):>50}\t\t{score:f}\n" for word, score in found)


def distance_session(vectors: Vectors, lines: Iterable[str], n: int = RESULTS) -> Iterator[str]:
    """distance.c: for each line of words, the ``n`` words closest in cosine to the sum
    of their unit vectors (the words themselves excluded). Yields the text to print."""
    for item in queries_of(iter(lines), DISTANCE_PROMPT):
        if isinstance(item, str):
            yield item
            continue
        text, found = positions(vectors, item)
        yield text
        if found:
            yield table(DISTANCE_HEADER, vectors.most_similar(item, topn=n))


def word_analogy_session(vectors: Vectors, lines: Iterable[str], n: int = RESULTS) -> Iterator[str]:
    """word-analogy.c: for each line ``A B C``, the ``n`` words closest to B - A + C
    (``man king woman``: queen), the three excluded; words after the third are ignored."""
    for item in queries_of(iter(lines), ANALOGY_PROMPT):
        if isinstance(item, str):
            yield item
            continue
        if len(item) < 3:
            yield TOO_FEW.format(len(item))
            continue
        text, found = positions(vectors, item[:3])
        yield text
        if found:
            a, b, c = item[:3]
            yield table(ANALOGY_HEADER, vectors.analogy(b, a, c, topn=n))


def c_percent(part: int, whole: int) -> str:
    """``part / whole * 100`` as compute-accuracy.c prints it: float32 arithmetic, two
    decimals, and ``-nan`` for 0 / 0 (glibc on x86-64)."""
    if whole == 0:
        return "-nan"
    return f"{float(np.float32(part) / np.float32(whole) * np.float32(100)):.2f}"


def accuracy_report(result: AnalogyResult) -> Iterator[str]:
    """compute-accuracy.c's output lines for ``result`` (scored with ``rule="word2vec"``):
    each section's name and top-1 accuracy, the running total, semantic (the first five
    sections) and syntactic accuracy, then the questions seen (all four words in the
    vocabulary) of all."""
    preamble = bool(result.sections) and result.sections[0].name == NO_SECTION
    correct = answered = 0
    semantic, syntactic = [0, 0], [0, 0]  # correct, answered
    for number, section in enumerate(result.sections, 0 if preamble else 1):
        correct += section.correct
        answered += section.answered
        kind = semantic if number <= 5 else syntactic
        kind[0] += section.correct
        kind[1] += section.answered
        if number == 0:  # questions before any header count in the totals only, as in C
            continue
        # C divides by 1 for a section with no question answered
        yield f"{section.name}:"
        yield (
            f"ACCURACY TOP1: {c_percent(section.correct, section.answered or 1)} %  "
            f"({section.correct} / {section.answered or 1})"
        )
        yield (
            f"Total accuracy: {c_percent(correct, answered)} %   Semantic accuracy: "
            f"{c_percent(*semantic)} %   Syntactic accuracy: {c_percent(*syntactic)} % "
        )
    seen = result.questions - result.skipped
    yield f"Questions seen / total: {seen} {result.questions}   {c_percent(seen, result.questions)} % "
