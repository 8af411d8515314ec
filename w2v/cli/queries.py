"""Using the vectors: ``analogy``, ``similar``, ``vector``, ``similarity``, ``eval``, ``convert``."""

import os
import sys
from collections.abc import Callable, Iterable, Iterator

import click
import numpy as np

from w2v.cli.app import CONTEXT, Reported, cli
from w2v.cli.training import check_inputs_kept, refuse_pickle_output
from w2v.corpus.vocab import text_words
from w2v.errors import FormatError, W2VError, plural
from w2v.files import binary_name, check_writable, without_bom
from w2v.vectorio.as_fasttext import save_as_fasttext
from w2v.vectorio.modelfile import TrainState
from w2v.vectorio.word2vec import text_records
from w2v.vectors.evaluate import DEFAULT_ANALOGIES, DEFAULT_SIMILARITY, evaluate_analogies, evaluate_similarity
from w2v.vectors.wordvectors import UnknownWordError, Vectors
from w2v.words import decode_word, display_word, encode_word, quoted_word, split_word


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
        help="Vectors file: word2vec text or binary, GloVe, fastText .vec or .bin (whose character n-grams "
        "build words outside the vocabulary), .npy export, w2v model file or checkpoint (folder).",
    )(command)


VECTOR_FORMATS = ["auto", "binary", "text", "glove"]


def vectors_file_argument(command):
    """An optional positional FILE, the same as ``-v FILE``, for a command that has no
    other positional argument (``w2v eval v.bin``); ``chosen_vectors`` picks the one given."""
    return click.argument("file", required=False)(command)


def one_vectors_file(file: str | None, option: str | None, default: str | None = None) -> str:
    """The vectors file given as FILE or as ``-v FILE`` (``option``; None where not
    given), not both unless the same; ``default`` where neither is given."""
    if file is not None and option is not None and file != option:
        raise click.UsageError(f"two vectors files given: {file} and -v {option}")
    chosen = file if file is not None else option if option is not None else default
    if chosen is None:
        raise click.UsageError("give the vectors file: FILE or -v FILE")
    return chosen


def chosen_vectors(file: str | None, vectors_path: str) -> str:
    """The vectors file of a command with ``vectors_options`` and ``vectors_file_argument``."""
    source = click.get_current_context().get_parameter_source("vectors_path")
    given = vectors_path if source is not click.core.ParameterSource.DEFAULT else None
    return one_vectors_file(file, given, vectors_path)


def load_vectors_as(path: str, fmt: str, limit: int | None):
    """``Vectors.load`` of ``path`` in the ``--format``/``--from`` ``fmt`` (one of ``VECTOR_FORMATS``)."""
    binary = None if fmt in ("auto", "glove") else fmt == "binary"
    return Vectors.load(path, binary=binary, limit=limit, no_header=fmt == "glove")


def load_for_query(path: str, fmt: str = "auto", limit: int | None = None) -> Vectors:
    """Load the vectors, with a hint when the default file is missing. Vectors holding
    NaN or an infinite value, which answer every query with NaN, are left out, with
    one warning line."""
    if path == "vectors.bin" and not os.path.exists(path):
        raise W2VError("vectors file not found: vectors.bin (train one with 'w2v train CORPUS', or give -v FILE)")
    vectors = load_vectors_as(path, fmt, limit)
    rows = vectors.nonfinite_rows()
    if len(rows):
        click.echo(f"w2v: warning: {nonfinite_note(path, vectors, rows)}; left out of the queries", err=True)
        vectors = vectors.without_rows(rows)
    return vectors


def nonfinite_note(path: str, vectors: Vectors, rows: np.ndarray) -> str:
    """What the (ascending) ``rows`` of ``vectors`` holding NaN or infinite values are:
    their count and the first's word."""
    first = int(rows[0])
    verb = "holds" if len(rows) == 1 else "hold"
    shown = display_word(vectors.words[first])
    return f"{path}: {plural(len(rows), 'vector')} {verb} NaN or infinite values (the first: '{shown}', word {first + 1:,})"


def limit_noted(search: Callable, limit: int | None) -> Callable:
    """``search``, its unknown-word errors saying that only the ``--limit N`` most
    frequent words were read."""
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


def unseen_notes(vectors: Vectors, zero_vectors: bool = False) -> Callable[[Iterable[str]], None]:
    """A function that says on stderr, once per word, which query words outside the
    vocabulary a subword model builds from their character n-grams (nothing for other
    files). A word with no n-gram is left to the query's error, or, with
    ``zero_vectors`` (``w2v vector``), noted as getting fastText's zero vector."""
    noted: set[str] = set()

    def note(words: Iterable[str]) -> None:
        if vectors.subwords is None:
            return
        for word in words:
            if word in noted or vectors.has_index_for(word):
                continue
            count = vectors.subwords.ngram_count(word)
            if count or zero_vectors:
                noted.add(word)
                click.echo(f"w2v: note: {unseen_note(word, count, vectors.subwords.settings.lengths())}", err=True)

    return note


def unseen_note(word: str, ngrams: int, lengths: str) -> str:
    """What a subword model makes of ``word``, outside its vocabulary, with ``ngrams``
    character n-grams of ``lengths`` (``"3 to 6 characters"``)."""
    shown = f"{quoted_word(word)} is not in the vocabulary"
    if not ngrams:
        return f"{shown} and has no character n-gram of {lengths}: its vector is zero, as fastText gives it"
    return f"{shown}: built from {plural(ngrams, 'character n-gram')}"


def read_stdin_lines() -> Iterator[str]:
    """Standard input's lines, read one at a time (a prompt is answered before the next)
    as bytes, as a corpus is read: a UTF-8 byte-order mark at the start skipped, each
    line decoded as words are (``decode_word``: any bytes, whatever the locale)."""
    for number, line in enumerate(iter(sys.stdin.buffer.readline, b"")):
        yield decode_word(without_bom(line) if number == 0 else line)


def stdin_queries(prompt: str) -> Iterator[list[str]]:
    """The queries of standard input, one a line (its words, split as a corpus line's:
    ``text_words``), blank lines skipped; on a terminal, ``prompt`` on stderr before
    each line, and EXIT stops."""
    interactive = sys.stdin.isatty()
    lines = read_stdin_lines()
    while True:
        if interactive:
            click.echo(prompt, nl=False, err=True)
        line = next(lines, None)
        if line is None:
            return
        query = text_words(line)
        if interactive and query == ["EXIT"]:
            return
        if query:
            yield query


def answer_each(queries: Iterable[list[str]], answer: Callable[[list[str]], str | bytes]) -> tuple[int, int]:
    """Print ``answer(query)`` for each query; one it fails on (W2VError: an unknown word)
    is reported on stderr, one line, and skipped. Returns how many were asked and failed."""
    asked = failed = 0
    for query in queries:
        asked += 1
        try:
            text = answer(query)
        except W2VError as err:  # an unknown word too (UnknownWordError)
            failed += 1
            click.echo(f"w2v: error: {display_word(str(err))}", err=True)
            continue
        click.echo(text, nl=False)
    return asked, failed


def answer_stdin(
    prompt: str, answer: Callable[[list[str]], str | bytes], what: tuple[str, str], each_word: bool = False
) -> None:
    """Answer the queries of standard input, one a line (``each_word``: one a word),
    printing ``answer(words)`` for each; on a terminal, a prompt loop (``prompt`` on
    stderr; EXIT or end of input to stop). A query ``answer`` fails on is reported and
    skipped; if any failed and stdin is not a terminal, W2VError at the end counts them
    (``what``: the singular and plural of a query)."""
    lines = stdin_queries(prompt)
    queries = ([word] for line in lines for word in line) if each_word else lines
    asked, failed = answer_each(queries, answer)
    if failed and not sys.stdin.isatty():
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
    note = unseen_notes(vectors)

    def find(query: list[str]) -> list[tuple[str, float]]:
        note(query)
        return vectors.analogy(*query, topn=n, method=method, restrict_vocab=restrict)

    search = limit_noted(find, limit)
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
    note = unseen_notes(vectors)

    def find(query: list[str]) -> list[tuple[str, float]]:
        note([*query, *minus])
        return vectors.most_similar(query, list(minus), topn=n, restrict_vocab=restrict)

    search = limit_noted(find, limit)
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
    vectors. A word outside the vocabulary of a subword model (a fastText .bin) is
    built from its character n-grams, with a note on stderr (fastText's zero vector
    where it has none); another unknown word, and an empty one or one holding
    whitespace (which no line can hold), is reported on stderr, the other words
    printed, and the exit status is 1.
    """

    vectors = load_for_query(vectors_path, fmt, limit)
    note = unseen_notes(vectors, zero_vectors=True)

    def record(query: list[str]) -> bytes:
        if split_word(query):  # a line's first field would be none, or several
            why = "it is empty" if not query[0] else "whitespace ends a word"
            raise W2VError(f"{quoted_word(query[0])} is not a word: {why}; no 'word v1 ... vD' line can hold it")
        note(query)
        return text_records([encode_word(query[0])], vectors.get_vector(query[0])[None, :])

    answer = limit_noted(record, limit)
    if not words:
        answer_stdin("Enter words (EXIT to break): ", answer, ("word", "words"), each_word=True)
    elif answer_each(([word] for word in words), answer)[1]:
        raise Reported  # each unknown word's line is printed


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
def similarity(words, vectors_path, fmt, limit):
    """Print the cosine similarity of the words A and B.

    With no words, reads 'A B' lines from stdin and prints 'A<tab>B<tab>cosine'
    for each (a prompt loop on a terminal, EXIT or end of input to stop).
    """
    if words and len(words) != 2:
        raise click.UsageError(f"give two words A B, not {len(words)}; or none to read stdin")
    vectors = load_for_query(vectors_path, fmt, limit)
    note = unseen_notes(vectors)

    def similarity_of(a: str, b: str) -> float:
        note([a, b])
        return vectors.similarity(a, b)

    cosine = limit_noted(similarity_of, limit)
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
@vectors_file_argument
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
def evaluate(file, vectors_path, fmt, limit, analogies, similarity, restrict, case_sensitive, method, as_json):
    """Analogy accuracy and word-similarity Spearman rho of the vectors FILE (or -v
    FILE), as gensim computes them.

    With neither --analogies nor --similarity, scores the Google analogy set and
    WordSim-353, which ship with w2v.
    """
    import json

    if not analogies and not similarity:
        analogies, similarity = (DEFAULT_ANALOGIES,), (DEFAULT_SIMILARITY,)
    for path in (*analogies, *similarity):
        if not os.path.isfile(path):
            raise W2VError(f"evaluation file not found: {path}")
    vectors_path = chosen_vectors(file, vectors_path)
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
    type=click.Choice(["auto", "binary", "text", "npy", "projector", "fasttext"]),
    default="auto",
    show_default=True,
    help="DEST format; auto: binary for .bin, npy (+ .vocab.txt) for .npy, else text. projector: "
    "DEST_vectors.tsv and DEST_metadata.tsv for TensorBoard's Embedding Projector. fasttext: a fastText .bin "
    "of a w2v model file or checkpoint (SOURCE), which fastText and gensim read.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Keep only the N first (most frequent) words.")
@click.option("-q", "--quiet", is_flag=True, default=False, help="No summary line.")
def convert(source, dest, from_fmt, to_fmt, limit, quiet):
    """Convert vectors (any file -v reads) to word2vec text, binary or .npy + vocabulary,
    or write them for TensorBoard's Embedding Projector (--to projector: DEST is a prefix);
    or a w2v model file or checkpoint to a fastText .bin (--to fasttext)."""
    check_inputs_kept([("SOURCE", source)], {"DEST": dest})
    if to_fmt == "fasttext":
        convert_to_fasttext(source, dest, from_fmt != "auto" or limit is not None, quiet)
        return
    if to_fmt == "auto":
        refuse_pickle_output(dest, "DEST")
        to_fmt = "npy" if dest.endswith(".npy") else "binary" if binary_name(dest) else "text"
    if to_fmt == "npy" and not dest.endswith(".npy"):
        raise click.BadParameter(f"--to npy needs a name ending in .npy, not {dest}", param_hint="DEST")
    for path in (f"{dest}_vectors.tsv", f"{dest}_metadata.tsv") if to_fmt == "projector" else (dest,):
        check_writable(path)
    vectors = load_vectors_as(source, from_fmt, limit)
    rows = vectors.nonfinite_rows()
    if len(rows):  # a query leaves them out; a converted file would carry them on unnoticed
        raise FormatError(f"{nonfinite_note(source, vectors, rows)}: remove or fix them to convert the file")
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


def convert_to_fasttext(source: str, dest: str, options_given: bool, quiet: bool) -> None:
    """``convert --to fasttext``: write the model file or checkpoint ``source`` to ``dest``
    as a fastText ``.bin`` (``vectorio.as_fasttext``); ``options_given``: --from or
    --limit was, which a whole model cannot take."""
    if options_given:
        raise click.UsageError("--from and --limit do not apply to --to fasttext: it writes a w2v model whole")
    check_writable(dest)
    model = save_as_fasttext(dest, TrainState.load(source))
    if not quiet:
        settings = model.settings
        ngrams = f" and {plural(settings.ngrams.bucket, 'n-gram row')}" if settings.ngrams.bucket else ""
        click.echo(
            f"w2v: wrote {plural(len(model.words), 'word')}{ngrams} of {plural(model.input.shape[1], 'value')} "
            f"to {dest} (fastText {settings.model}, loss {settings.loss})",
            err=True,
        )
