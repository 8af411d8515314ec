"""Phrases: detect frequent bigrams and join them (word2phrase, as gensim's Phrases).

Counting: one streaming pass over the corpus counts words and adjacent pairs
(pairs never cross a line end) in one ``WordCounter``, so memory is bounded by
``prune_at`` entries as in word2phrase: past it the rarest words and pairs are
pruned (ReduceVocab). Scoring, with ``a b`` a pair, counts ``n(.)`` and ``N``
the corpus's tokens:

- ``default`` (word2phrase): ``(n(ab) - min_count) * N / (n(a) * n(b))``;
- ``npmi`` (gensim): ``ln(n(ab) N / (n(a) n(b))) / -ln(n(ab) / N)``, in [-1, 1].

A pair is scored only if ``a``, ``b`` and ``ab`` were each seen at least
``min_count`` times; it is a phrase if its score is greater than the threshold.
Joining goes left to right as word2phrase does: a word joins the one before it
if that pair is a phrase and the one before was not itself joined, so one pass
makes phrases of two words; each further pass (counted on the previous pass's
output) can join those again, into phrases of up to four words.

Words are bytes, never decoded; the joined word is ``a + delimiter + b``.
"""

import functools
import itertools
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from w2v.config import DEFAULT_PRUNE_AT
from w2v.corpus.counting import CountTable, OnRead, ReadStatus, WordCounter
from w2v.corpus.sources import (
    BLOCK_BYTES,
    MAX_SENTENCE_TOKENS,
    Source,
    chunks_and_offsets,
    corpus_bytes,
    is_stream,
    line_words,
    open_stdin,
    sentence_bytes,
    source_list,
)
from w2v.errors import ConfigError, CorpusError, FormatError
from w2v.files import atomic_output, compression_of, without_bom, write_atomic
from w2v.progress import Steps, reading

SCORINGS = ("default", "npmi")
DEFAULT_THRESHOLD = {"default": 100.0, "npmi": 0.5}
COUNT_KEYS = 1 << 20  # words and pairs handed to the counter at once
Piece = tuple[list[bytes], bool]  # tokens of a line (or part of one), and whether the line ends there
Table = dict[tuple[bytes, bytes], float]
# a path, URL, source that opens itself (a corpus' part) or list of them; or tokenised sentences (lists of str)
Corpus = Source | os.PathLike[str] | Sequence[Source | os.PathLike[str]] | Iterable[Sequence[str]]


def score(pair: int, first: int, second: int, total: int, min_count: int, scoring: str = "default") -> float:
    """The score of a pair seen ``pair`` times, of words seen ``first`` and ``second``
    times, in a corpus of ``total`` tokens.

    >>> score(10, 20, 10, 1000, 5)  # (10 - 5) * 1000 / (20 * 10)
    25.0
    """
    if scoring == "npmi":
        if pair >= total:
            return 1.0
        return math.log(pair * total / (first * second)) / -math.log(pair / total)
    return (pair - min_count) * total / (first * second)


def check_npmi_threshold(scoring: str, threshold: float) -> None:
    """ConfigError if ``scoring`` is npmi and ``threshold`` lies outside [-1, 1], the
    range of npmi scores (a nan threshold too)."""
    if scoring == "npmi" and not -1.0 <= threshold <= 1.0:
        raise ConfigError(f"the npmi threshold must be in [-1, 1], not {threshold:g}")


def check_settings(scoring: str, threshold: float, min_count: int, delimiter: str | bytes, passes: int = 1) -> None:
    if scoring not in SCORINGS:
        raise ConfigError(f"unknown phrase scoring {scoring!r}: use one of {', '.join(SCORINGS)}")
    if not math.isfinite(threshold):
        raise ConfigError(f"the phrase threshold must be a finite number, not {threshold:g}")
    check_npmi_threshold(scoring, threshold)
    if min_count < 1:
        raise ConfigError(f"the phrase min-count must be at least 1, not {min_count}")
    if passes < 1:
        raise ConfigError(f"phrases need at least 1 pass, not {passes}")
    raw = delimiter.encode() if isinstance(delimiter, str) else delimiter
    if not raw or any(c in b" \t\n\r\x0b\x0c" for c in raw):
        raise ConfigError(f"the phrase delimiter must be non-empty and hold no whitespace, not {delimiter!r}")


class Joiner:
    """Joins the phrases of one table in a stream of pieces (see ``Piece``), left to right."""

    def __init__(self, table: Table, delimiter: bytes):
        self.table = table
        self.delimiter = delimiter
        self.last: bytes | None = None  # the previous word, held back while it may still join

    def feed(self, tokens: list[bytes], line_end: bool) -> list[bytes]:
        """The tokens that are final after ``tokens``; all of them at a line end."""
        out: list[bytes] = []
        last, table = self.last, self.table
        for word in tokens:
            if last is not None:
                if (last, word) in table:
                    out.append(last + self.delimiter + word)
                    last = None
                    continue
                out.append(last)
            last = word
        if line_end and last is not None:
            out.append(last)
            last = None
        self.last = last
        return out


@dataclass
class PhraseTable:
    """The phrases of each pass: ``passes[p]`` maps a pair ``(a, b)`` (bytes) to its score."""

    passes: list[Table] = field(default_factory=list)
    delimiter: bytes = b"_"
    scoring: str = "default"
    threshold: float = 100.0
    min_count: int = 5

    def add_pass(self, counts: CountTable) -> None:
        """Add a pass: the phrases of the pair counts ``counts`` (``pair_table``) by these settings."""
        if counts.tokens == 0:
            raise CorpusError("the corpus is empty: it holds no words")
        self.passes.append(score_table(counts, self.min_count, self.threshold, self.scoring))

    def __len__(self) -> int:
        return sum(len(table) for table in self.passes)

    def joiners(self) -> list[Joiner]:
        return [Joiner(table, self.delimiter) for table in self.passes]

    def apply(self, sentence: Sequence[str]) -> list[str]:
        """One sentence (a list of str) with its phrases joined.

        >>> table = PhraseTable([{(b"new", b"york"): 150.0}])
        >>> table.apply(["in", "new", "york", "city"])
        ['in', 'new_york', 'city']
        """
        tokens = [w.encode("utf-8", "surrogateescape") for w in sentence]
        for joiner in self.joiners():
            tokens = joiner.feed(tokens, True)
        return [w.decode("utf-8", "surrogateescape") for w in tokens]

    def save(self, path: str) -> None:
        """Write the table: a header line, then ``PASS A B SCORE`` lines (pass from 1),
        highest score first in each pass. Written beside ``path`` and renamed."""
        header = (
            f"# w2v phrases: passes={len(self.passes)} scoring={self.scoring} threshold={self.threshold!r} "
            f"min_count={self.min_count} delimiter="
        ).encode() + self.delimiter
        lines = [header]
        for number, table in enumerate(self.passes, 1):
            for (a, b), value in sorted(table.items(), key=lambda item: (-item[1], item[0])):
                lines.append(b"%d %s %s %s" % (number, a, b, repr(value).encode()))
        write_atomic(path, b"\n".join(lines) + b"\n")

    @classmethod
    def load(cls, path: str) -> "PhraseTable":
        """Read a table written by ``save``."""
        try:
            with open(path, "rb") as stream:
                data = without_bom(stream.read())
        except OSError as err:
            raise FormatError(f"cannot read phrase table {path}: {err.strerror}") from None
        lines = data.split(b"\n")
        if not lines[0].startswith(b"# w2v phrases:"):
            raise FormatError(f"{path}: not a w2v phrase table (no '# w2v phrases:' header)")
        meta = dict(item.split(b"=", 1) for item in lines[0][len(b"# w2v phrases:") :].split() if b"=" in item)
        try:
            table = cls(
                [{} for _ in range(int(meta[b"passes"]))],
                meta[b"delimiter"],
                meta[b"scoring"].decode(),
                float(meta[b"threshold"]),
                int(meta[b"min_count"]),
            )
            for number, line in enumerate(lines[1:], 2):
                fields = line.split()
                if not fields:
                    continue
                if len(fields) != 4:
                    raise ValueError(f"line {number} is not 'PASS A B SCORE'")
                table.passes[int(fields[0]) - 1][(fields[1], fields[2])] = float(fields[3])
        except (KeyError, ValueError, IndexError) as err:
            raise FormatError(f"{path}: damaged phrase table ({err})") from None
        return table


def pieces_of_sources(
    sources: Sequence[Source], block_bytes: int = BLOCK_BYTES, on_read: OnRead | None = None
) -> Iterator[Piece]:
    """The lines of ``sources`` as pieces, read in bounded chunks (a line may come in
    several pieces; the last one has ``line_end`` True), their words cut as
    ``sources.line_words`` cuts them. Each source ends a line. ``on_read(ReadStatus)``
    (bytes and tokens; no distinct words) is called once the first source is open and
    after each chunk."""
    total = corpus_bytes(sources) if on_read is not None else None
    done = tokens = 0  # bytes of the sources before this one; tokens so far
    start = None if on_read is None else lambda: on_read(ReadStatus(0, total, 0, None))
    for number, source in enumerate(sources):
        open_words = False  # the last line is not ended yet and has words
        offset = 0
        for chunk, offset in chunks_and_offsets(source, block_bytes, on_open=start if number == 0 else None):
            lines = chunk.split(b"\n")
            for line in lines[:-1]:
                words = line_words(line)
                tokens += len(words)
                yield words, True
                open_words = False
            if lines[-1]:
                words = line_words(lines[-1])
                tokens += len(words)
                open_words = open_words or bool(words)
                yield words, False
            if on_read is not None:
                on_read(ReadStatus(done + offset, total, tokens, None))
        done += offset
        if open_words:
            yield [], True


def pieces_of_sentences(sentences: Iterable[Sequence[str]]) -> Iterator[Piece]:
    """Tokenised sentences (lists of str) as pieces."""
    for sentence in sentences:
        yield sentence_bytes(sentence), True


def phrased(pieces: Iterable[Piece], joiners: list[Joiner]) -> Iterator[Piece]:
    """``pieces`` with the phrases of each joiner joined, in order."""
    for tokens, line_end in pieces:
        for joiner in joiners:
            tokens = joiner.feed(tokens, line_end)
        yield tokens, line_end


def count_pairs(pieces: Iterable[Piece], prune_at: int = DEFAULT_PRUNE_AT) -> tuple[WordCounter, int]:
    """Count words and adjacent pairs (keys ``a + b" " + b``) in one ``WordCounter``.
    Returns the counter and the number of tokens."""
    counter = WordCounter(prune_at)
    keys: list[bytes] = []
    tokens_seen = 0
    last: bytes | None = None
    for tokens, line_end in pieces:
        if tokens:
            keys.extend(tokens)
            if last is not None:
                keys.append(last + b" " + tokens[0])
            keys.extend([a + b" " + b for a, b in itertools.pairwise(tokens)])
            last = tokens[-1]
            tokens_seen += len(tokens)
        if line_end:
            last = None
        if len(keys) >= COUNT_KEYS:
            counter.add(keys)
            keys = []
    if keys:
        counter.add(keys)
    return counter, tokens_seen


def pair_table(pieces: Iterable[Piece], prune_at: int = DEFAULT_PRUNE_AT) -> CountTable:
    """``count_pairs``' words and pairs with their counts, as a ``CountTable`` whose
    ``tokens`` are the tokens read (N): what ``score_table`` scores, and what the parts
    of a corpus counted apart merge into (``CountTable.merged``)."""
    counter, tokens = count_pairs(pieces, prune_at)
    live = counter.live_ids()
    return CountTable([counter.words[i] for i in live.tolist()], counter.counts[live], tokens, counter.min_reduce)


def part_pairs(sources: list[Source], table: "PhraseTable", prune_at: int) -> CountTable:
    """``pair_table`` of some sources (a run of a corpus' parts) with ``table``'s phrases
    joined: their count for one pass (``cluster.phrases``). Each source ends a line."""
    return pair_table(phrased(pieces_of_sources(sources), table.joiners()), prune_at)


def score_table(counts: CountTable, min_count: int, threshold: float, scoring: str) -> Table:
    """The pairs of ``counts`` (``pair_table``) scoring above ``threshold`` (see the module's doc)."""
    words, count_of = counts.words, counts.counts
    single = {word: i for i, word in enumerate(words) if b" " not in word}
    table: Table = {}
    for index in np.flatnonzero(count_of >= min_count).tolist():
        key = words[index]
        if b" " not in key:
            continue
        a, b = key.split(b" ")
        ia, ib = single.get(a), single.get(b)
        if ia is None or ib is None:
            continue  # pruned
        na, nb = int(count_of[ia]), int(count_of[ib])
        if na < min_count or nb < min_count:
            continue
        value = score(int(count_of[index]), na, nb, counts.tokens, min_count, scoring)
        if value > threshold:
            table[(a, b)] = value
    return table


def new_table(
    min_count: int, threshold: float | None, scoring: str, passes: int, delimiter: str | bytes
) -> "PhraseTable":
    """An empty phrase table with these settings, checked (``threshold`` None: the
    scoring's default), for ``learn_phrases`` to fill pass by pass."""
    if threshold is None:
        threshold = DEFAULT_THRESHOLD.get(scoring, 100.0)
    check_settings(scoring, threshold, min_count, delimiter, passes)
    raw = delimiter.encode() if isinstance(delimiter, str) else delimiter
    return PhraseTable([], raw, scoring, float(threshold), min_count)


def learn_phrases(
    corpus: Corpus,
    *,
    min_count: int = 5,
    threshold: float | None = None,
    scoring: str = "default",
    passes: int = 1,
    delimiter: str | bytes = "_",
    prune_at: int = DEFAULT_PRUNE_AT,
    on_read: Callable[[int, ReadStatus], None] | None = None,
) -> PhraseTable:
    """Detect phrases in ``corpus``: a path, URL, or a list of them (read ``passes``
    times; not ``-`` nor another stream, see ``spooled_streams``), or a re-iterable of
    tokenised sentences (lists of str).
    ``threshold``: 100 for ``default`` scoring, 0.5 for ``npmi`` when not given.
    ``on_read(pass_number, ReadStatus)`` follows the reading of files, pass by pass (from 1).

    >>> sentences = [["new", "york", "is", "big"]] * 6 + [["new", "cars"], ["old", "york"]]
    >>> table = learn_phrases(sentences, min_count=1, threshold=1)
    >>> table.apply(["i", "love", "new", "york"])
    ['i', 'love', 'new_york']
    """
    table = new_table(min_count, threshold, scoring, passes, delimiter)
    pieces = corpus_pieces(corpus)
    for done in range(passes):
        shown = None if on_read is None else functools.partial(on_read, done + 1)
        table.add_pass(pair_table(phrased(pieces(shown), table.joiners()), prune_at))
    return table


def passes_read(steps: Steps, passes: int) -> Callable[[int, ReadStatus], None]:
    """An ``on_read`` for ``learn_phrases`` showing the reading of each of its ``passes``
    as a step of ``steps`` (``progress.reading``: ``phrases, pass 1/2``, ...)."""
    return lambda done, status: reading(steps, f"phrases, pass {done}/{passes}")(status)


def corpus_pieces(corpus: Corpus, once: bool = False) -> Callable[[OnRead | None], Iterator[Piece]]:
    """A function returning a fresh piece iterator over ``corpus`` at each call, given
    an ``on_read`` callback or None (``once``: it will be called only once, so stdin
    and iterators are fine). Tokenised sentences are not reported to ``on_read``."""
    sources = source_list(corpus)
    if sources is not None:
        streams = [s for s in sources if is_stream(s)] if not once else []
        if streams:
            raise CorpusError(
                f"phrases read the corpus more than once: {streams[0]} is a stream "
                "(standard input or a pipe) that can be read only once; spool it to a file first"
            )
        return lambda on_read: pieces_of_sources(sources, on_read=on_read)
    sentences = cast(Iterable[Sequence[str]], corpus)
    if iter(sentences) is sentences and not once:
        raise CorpusError("phrases read the corpus more than once: give a list of sentences, not an iterator")
    return lambda _on_read: pieces_of_sentences(sentences)


def phrase_sentences(sentences: Iterable[Sequence[str]], table: PhraseTable) -> Iterator[list[str]]:
    """The sentences (lists of str) with ``table``'s phrases joined."""
    for tokens, _ in phrased(pieces_of_sentences(sentences), table.joiners()):
        yield [w.decode("utf-8", "surrogateescape") for w in tokens]


def phrased_lines(corpus: Corpus, table: PhraseTable, max_tokens: int = MAX_SENTENCE_TOKENS) -> Iterator[list[bytes]]:
    """The non-empty lines of ``corpus`` (as for ``write_phrased``) with ``table``'s
    phrases joined, as lists of bytes, cut every ``max_tokens`` tokens as training
    cuts sentences: a corpus for ``w2v.train`` that is never written to disk."""
    line: list[bytes] = []
    for tokens, line_end in phrased(corpus_pieces(corpus, once=True)(None), table.joiners()):
        line.extend(tokens)
        while len(line) >= max_tokens:
            yield line[:max_tokens]
            line = line[max_tokens:]
        if line_end and line:
            yield line
            line = []


@dataclass
class WriteReport:
    """What ``write_phrased`` wrote: tokens read, tokens written, lines."""

    tokens_in: int
    tokens_out: int
    lines: int


def write_phrased(corpus: Corpus, table: PhraseTable, output: str, on_read: OnRead | None = None) -> WriteReport:
    """Write ``corpus`` (paths or sentences, as for ``learn_phrases``) with its phrases
    joined to ``output`` (``-``: standard output), one line per input line, words
    separated by one space. Names ending in .gz .bz2 .xz .zst are compressed.
    ``on_read(ReadStatus)`` follows the reading of files."""
    source = corpus_pieces(corpus, once=True)(on_read)
    report = WriteReport(0, 0, 0)
    joiners = table.joiners()
    with atomic_output(output, compress=True) as out:
        started = False
        buffer: list[bytes] = []
        size = 0
        for tokens, line_end in source:
            report.tokens_in += len(tokens)
            for joiner in joiners:
                tokens = joiner.feed(tokens, line_end)
            report.tokens_out += len(tokens)
            if tokens:
                if started:
                    buffer.append(b" ")
                buffer.append(b" ".join(tokens))
                started = True
                size += len(buffer[-1])
            if line_end:
                buffer.append(b"\n")
                started = False
                report.lines += 1
            if size >= BLOCK_BYTES or len(buffer) >= 65536:
                out.write(b"".join(buffer))
                buffer, size = [], 0
        out.write(b"".join(buffer))
    return report


@contextmanager
def spooled_streams(corpus: Corpus) -> Iterator[Corpus]:
    """``corpus`` (as for ``learn_phrases``) as its list of sources, each stream among them
    (``-``, a FIFO, a pipe's ``/dev/fd/N``: ``sources.is_stream``) replaced by a temporary
    copy, named with its compressed extension, so that it can be read more than once; a
    corpus of sentences as it is."""
    sources = source_list(corpus)
    if sources is None or not any(is_stream(s) for s in sources):
        yield corpus if sources is None else sources
        return
    with tempfile.TemporaryDirectory(prefix="w2v-phrases-") as folder:
        copies = []
        for index, source in enumerate(sources):
            if isinstance(source, str) and is_stream(source):
                copy = os.path.join(folder, f"stream{index}{compression_of(source) or ''}")
                spool(source, copy)
                source = copy
            copies.append(source)
        yield copies


def spool(stream: str, copy: str) -> None:
    """Copy the bytes of ``stream`` (``-``: standard input) to the file ``copy``."""
    try:
        with open(copy, "wb") as out, open_stdin() if stream == "-" else open(stream, "rb") as source:
            shutil.copyfileobj(source, out, BLOCK_BYTES)  # open_stdin: what a check read ahead too
    except OSError as err:
        raise CorpusError(f"cannot copy {stream} to {copy}: {err.strerror or err}") from None
