"""Reading corpora: sources, chunks of bytes, tokenised sentences as bytes, sentence cutting.

Words are the byte strings between ASCII whitespace (as word2vec.c reads them);
they are never decoded here, so any bytes, valid UTF-8 or not, map to the same
word every time. A word is at most ``MAX_WORD_BYTES`` long: a longer run of
non-whitespace is cut to its first ``MAX_WORD_BYTES`` bytes and counted once, the
rest of the run dropped (word2vec.c's ReadWord does the same at 100 bytes), so a
corpus has as many tokens as ``bytes.split`` finds. A newline ends a sentence; a
sentence longer than ``MAX_SENTENCE_TOKENS`` is cut into pieces of at most that
many tokens and no token is dropped (word2vec.c cuts at 1000 and gensim at
10,000, silently dropping the rest of the line).

Counted and encoded corpora mark the end of a sentence with ``SENTENCE_END`` (-1)
among their word ids (``counting``, ``idstream``).
"""

import io
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol, runtime_checkable

from w2v.config import MAX_SENTENCE_TOKENS
from w2v.errors import CorpusError, code_points
from w2v.files import UTF8_BOM, is_url, open_input, without_bom, zstd
from w2v.words import WHITESPACE

BLOCK_BYTES = 1 << 20
MAX_WORD_BYTES = 1 << 16  # longer runs of non-whitespace are data (base64, a file without spaces), not words
SENTENCE_END = -1
FIRST_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]")


def expand_sources(sources: Iterable[str | os.PathLike], what: str = "corpus") -> list[str]:
    """Resolve the user's corpus arguments into a list of readable sources.

    A folder becomes its files (recursively, sorted, hidden ones skipped); ``-``
    is standard input; a URL (``scheme://``) is passed to smart_open as it is; a
    path that is neither a file nor a folder (a FIFO, ``/dev/stdin``, the
    ``/dev/fd/N`` of a shell's ``<(command)``) is a stream, read once (``is_stream``).
    Raises CorpusError for a local path that does not exist or a folder with no files,
    naming it by ``what`` it is.
    """
    resolved = []
    for source in sources:
        text = os.fspath(source)
        if not text:  # Path("") is the current folder: an unset shell variable would train on it
            raise CorpusError(f"empty {what} path ''")
        if text == "-" or is_url(text):
            resolved.append(text)
            continue
        path = Path(text)
        if path.is_dir():
            files = sorted(
                str(p)
                for p in path.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not files:
                raise CorpusError(f"{what} folder has no files: {text}")
            resolved.extend(files)
        elif path.exists():  # a file, or a stream
            resolved.append(text)
        else:
            raise CorpusError(f"{what} not found: {text}")
    if not resolved:
        raise CorpusError(f"no {what} given")
    return resolved


def without_outputs(sources: Iterable[str], outputs: Iterable[str]) -> tuple[list[str], list[str]]:
    """``sources`` split into those to read and those that are one of a run's ``outputs``
    (files, or folders such as a checkpoint's, whose files are all outputs), compared by
    real path, so that a folder corpus holding a run's output is not trained on it."""
    targets = [os.path.realpath(path) for path in outputs]
    kept: list[str] = []
    skipped: list[str] = []
    for source in sources:
        real = "" if source == "-" or is_url(source) else os.path.realpath(source)
        inside = any(real == target or real.startswith(os.path.join(target, "")) for target in targets)
        (skipped if real and inside else kept).append(source)
    return kept, skipped


TEXT_SAMPLE_BYTES = 1 << 20  # what check_text reads of a source
COMPRESSION_MAGIC = {  # magic bytes: the format and the extension that has it decompressed
    b"\x1f\x8b": ("gzip", ".gz"),
    b"BZh": ("bzip2", ".bz2"),
    b"\xfd7zXZ\x00": ("xz", ".xz"),
    b"\x28\xb5\x2f\xfd": ("zstd", ".zst"),
}
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
CONTROL_BYTES = bytes(b for b in range(32) if b not in WHITESPACE) + b"\x7f"


def check_text(source: str) -> str | None:
    """Why ``source`` is clearly not text, from its first ``TEXT_SAMPLE_BYTES`` (decompressed
    as its name says), or None. Not text: compressed data under a name that does not
    say so (a compression format's magic bytes); UTF-16 (a byte-order mark, or more than a
    quarter NUL bytes); binary data (more than a fifth not valid UTF-8 and more than a
    twentieth control bytes: random bytes have 43% and 11%, while text in any 8-bit
    encoding has no control bytes and a few are legitimate words). Standard input is
    read ahead for it (``peek_stdin``), unless it is a terminal (a megabyte would be
    waited for); another stream (it would be consumed), a URL, or a file that cannot
    be read (reading it will say why) is not checked."""
    if is_url(source) or (is_stream(source) and source != "-"):
        return None
    try:
        if source == "-":
            sample = b"" if sys.stdin.isatty() else peek_stdin(TEXT_SAMPLE_BYTES)
        else:
            with open_source(source) as stream:
                sample = stream.read(TEXT_SAMPLE_BYTES)
    except (CorpusError, ValueError, AttributeError, *stream_errors()):  # type: ignore[misc]  # built at run time
        return None  # AttributeError: no sys.stdin (started with it closed)
    size = len(sample)
    for magic, (name, extension) in COMPRESSION_MAGIC.items():
        if sample.startswith(magic):
            unless = "decompressed first" if source == "-" else f"its name ends in {extension}"
            compressed = f"it starts with {name}'s magic bytes ({magic.hex(' ')}): compressed data"
            return f"{compressed}, read as text unless {unless}"
    if sample.startswith(UTF16_MARKS):
        return "it starts with a UTF-16 byte-order mark: words are read as bytes; convert it to UTF-8 first"
    nuls = sample.count(0)
    if nuls > size // 4:
        return f"{100 * nuls / size:.0f}% of its first megabyte are NUL bytes: UTF-16 text or binary data?"
    invalid = size - len(sample.decode("utf-8", "ignore").encode("utf-8"))
    control = size - len(sample.translate(None, CONTROL_BYTES))
    if invalid > size // 5 and control > size // 20:
        return (
            f"its first megabyte looks like binary data ({100 * invalid / size:.0f}% not valid UTF-8, "
            f"{100 * control / size:.0f}% control bytes)"
        )
    return None


def is_stream(source: "Source") -> bool:
    """Whether ``source`` can be read only once: ``-`` (standard input), or a local path
    that exists and is neither a regular file nor a folder (a FIFO, a pipe's
    ``/dev/fd/N``, a character device)."""
    if not isinstance(source, str):
        return False
    if source == "-":
        return True
    return not is_url(source) and os.path.exists(source) and not os.path.isfile(source) and not os.path.isdir(source)


def stream_identity(source: str) -> tuple[int, int] | str:
    """What tells the stream ``source`` (``is_stream``) apart, the same under each of its
    names: the device and inode of its file (``-`` standard input's, which ``/dev/stdin``
    names too); the name itself where that cannot be found (standard input closed)."""
    try:
        found = os.fstat(sys.stdin.fileno()) if source == "-" else os.stat(source)
    except (OSError, ValueError, AttributeError):  # no descriptor behind sys.stdin (closed, replaced)
        return source
    return found.st_dev, found.st_ino


def shared_stream(first: Iterable[str], second: Iterable[str]) -> str | None:
    """A source of ``first`` reading a stream (``is_stream``: it can be read only once)
    that a source of ``second`` reads too, by whatever name (``-``, ``/dev/stdin``);
    None if there is none."""
    streams = {stream_identity(source) for source in second if is_stream(source)}
    return next((source for source in first if is_stream(source) and stream_identity(source) in streams), None)


@runtime_checkable
class OpenSource(Protocol):
    """A source that opens itself: a part of a file (``parts.Part``), read as a file of its own."""

    def open_bytes(self): ...

    @property
    def start(self) -> int:
        """The byte of its file it starts at: 0 for the first part."""
        ...


Source = str | OpenSource


def open_source(source: Source):
    """Open one source for binary reading, decompressing by extension (.gz .bz2 .xz .zst ...)."""
    if source == "-":
        return open_stdin()
    try:
        return source.open_bytes() if isinstance(source, OpenSource) else open_input(source)
    except OSError as err:
        raise CorpusError(f"cannot open corpus {source}: {err.strerror or err}") from None
    except Exception as err:  # smart_open raises many types, one per transport
        raise CorpusError(f"cannot open corpus {source}: {err}") from None


def starts_file(source: Source) -> bool:
    """Whether ``source`` is read from its file's first byte, where a byte-order mark
    may be: a whole source, or a part that starts at 0."""
    return not isinstance(source, OpenSource) or source.start == 0


@dataclass
class ReadAhead:
    """Bytes of standard input read ahead (``peek_stdin``), which its next reader
    (``open_stdin``) gets first; ``ended``: its end was reached meanwhile."""

    head: bytes = b""
    ended: bool = False


STDIN_AHEAD = ReadAhead()


def peek_stdin(size: int) -> bytes:
    """The first ``size`` bytes of standard input (fewer at its end), read ahead and kept
    for its reader (``open_stdin``): a pipe cannot be read twice."""
    blocks, have = [STDIN_AHEAD.head], len(STDIN_AHEAD.head)
    while have < size and not STDIN_AHEAD.ended:
        block = os.read(sys.stdin.fileno(), size - have)
        blocks.append(block)
        have += len(block)
        STDIN_AHEAD.ended = not block
    STDIN_AHEAD.head = b"".join(blocks)
    return STDIN_AHEAD.head[:size]


class AheadReader(io.RawIOBase):
    """Standard input from the descriptor ``fd`` (a duplicate: closing it leaves
    ``sys.stdin`` open), the bytes ``peek_stdin`` read ahead first."""

    def __init__(self, fd: int, ahead: ReadAhead):
        self.fd, self.head, self.ended = fd, memoryview(ahead.head), ahead.ended

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            count = min(len(buffer), len(self.head))
            buffer[:count], self.head = self.head[:count], self.head[count:]
            return count
        if self.ended:
            return 0
        data = os.read(self.fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


def open_stdin() -> BinaryIO:
    """Standard input to read as a corpus, from a duplicate of its descriptor; what
    ``peek_stdin`` read ahead first, and handed over (the stream is read once)."""
    fd = os.dup(sys.stdin.buffer.fileno())
    if not (STDIN_AHEAD.head or STDIN_AHEAD.ended):
        return os.fdopen(fd, "rb")
    reader = io.BufferedReader(AheadReader(fd, STDIN_AHEAD), BLOCK_BYTES)
    STDIN_AHEAD.head, STDIN_AHEAD.ended = b"", False
    return reader  # type: ignore[return-value]  # a BufferedReader is a binary file


def stream_errors() -> tuple[type[Exception], ...]:
    """What reading a damaged or cut file raises: OSError, EOFError and the decompressors'
    own errors (zlib.error, LZMAError, ZstdError). Called in ``except`` clauses, so only
    once something is raised: reading a plain file imports no decompressor."""
    import lzma
    import zlib

    return (OSError, EOFError, zlib.error, lzma.LZMAError, zstd().ZstdError)


def read_chunks(source: Source, block_bytes: int = BLOCK_BYTES, max_word: int = MAX_WORD_BYTES) -> Iterator[bytes]:
    """Yield the bytes of ``source`` in pieces of about ``block_bytes``, each ending
    at whitespace (or at the source's end), so that no word is split between two pieces.

    A run of non-whitespace that reaches ``max_word`` bytes at the end of a read is
    cut here: its first ``max_word`` bytes and a space end the piece and the rest of
    the run is dropped, so a piece holds at most ``block_bytes + max_word`` bytes.
    A longer run inside one piece is cut by the tokeniser (``line_words``,
    ``chunkcounter.scan_chunk``).
    """
    for chunk, _ in chunks_and_offsets(source, block_bytes, max_word):
        yield chunk


def chunks_and_offsets(
    source: Source,
    block_bytes: int = BLOCK_BYTES,
    max_word: int = MAX_WORD_BYTES,
    on_open: Callable[[], None] | None = None,
) -> Iterator[tuple[bytes, int]]:
    """``read_chunks``' pieces, each with the bytes of ``source`` read so far: of the
    file as stored (compressed bytes for a compressed file, to compare with its size),
    or, where that cannot be told (a pipe, a URL), of its content. ``on_open()`` is
    called once the source is open, before its first read: a progress bar then shows
    the reading begun, and none shows for a source that cannot be opened. A UTF-8
    byte-order mark at the start of a file is skipped (``files.without_bom``)."""
    with open_source(source) as stream:
        if on_open is not None:
            on_open()
        descriptor = seekable_descriptor(stream)
        carry = b""  # the run of non-whitespace the last read ended in: fewer than max_word bytes
        dropping = False  # inside a run already cut at max_word bytes
        at_start = starts_file(source)  # the next block is the file's first
        content = 0
        while True:
            try:
                block = stream.read(max(block_bytes, len(UTF8_BOM)) if at_start else block_bytes)  # the mark whole
            except (ValueError, *stream_errors()) as err:  # type: ignore[misc]  # a tuple built at run time
                raise CorpusError(f"cannot read corpus {source}: {err}") from None
            content += len(block)
            offset = content if descriptor is None else os.lseek(descriptor, 0, os.SEEK_CUR)
            if not block:
                if carry:
                    yield carry, offset
                return
            if at_start:
                block, at_start = without_bom(block), False
            if dropping:
                first = FIRST_SPACE.search(block)
                if first is None:
                    continue
                block, dropping = block[first.start() :], False
            data = carry + block
            cut = max(data.rfind(c, len(carry)) for c in WHITESPACE)
            carry = data[cut + 1 :]
            if len(carry) >= max_word:
                yield data[: cut + 1] + carry[:max_word] + b" ", offset
                carry, dropping = b"", True
            elif cut >= 0:
                yield data[: cut + 1], offset


def seekable_descriptor(stream) -> int | None:
    """The descriptor of the file under ``stream`` (under its decompressor too), if
    its position can be asked (``os.lseek``); None for a pipe, a URL."""
    try:
        descriptor = stream.fileno()
        os.lseek(descriptor, 0, os.SEEK_CUR)
    except (OSError, AttributeError, ValueError):  # io.UnsupportedOperation is both OSError and ValueError
        return None
    return descriptor


def corpus_bytes(sources: Iterable[Source]) -> int | None:
    """The bytes of ``sources`` as stored (compressed files: their compressed size),
    or None if one of them is not a local file (standard input, a URL) or a part of one."""
    total = 0
    for source in sources:
        if not isinstance(source, str) or source == "-" or is_url(source):
            return None
        try:
            total += os.path.getsize(source)
        except OSError:
            return None
    return total


def line_words(line: bytes, max_word: int = MAX_WORD_BYTES) -> list[bytes]:
    """The words of ``line``: its runs of non-whitespace (``bytes.split``), each cut to
    its first ``max_word`` bytes."""
    words = line.split()
    if len(line) > max_word and max(map(len, words), default=0) > max_word:
        return [word[:max_word] for word in words]
    return words


@dataclass
class TokenBlock:
    """A piece of corpus: ``tokens`` (list of bytes) and ``ends``, the sorted
    indices into ``tokens`` after which a sentence ends (a newline, or the cut of
    a sentence at ``MAX_SENTENCE_TOKENS``)."""

    tokens: list[bytes]
    ends: list[int]


class SentenceCutter:
    """Turns lines into a token block with sentence ends, cutting long sentences.

    It remembers how long the current sentence already is, so a sentence spread
    over many blocks (a file with no newline at all) is still cut every
    ``max_tokens`` tokens.
    """

    def __init__(self, max_tokens: int = MAX_SENTENCE_TOKENS):
        self.max_tokens = max_tokens
        self.run = 0  # tokens of the current, unfinished sentence

    def block(self, lines: list[list[bytes]], last_open: bool) -> TokenBlock:
        """``lines`` of tokens; every line but (if ``last_open``) the last ends a sentence."""
        tokens: list[bytes] = []
        ends: list[int] = []
        for index, line in enumerate(lines):
            start = len(tokens)
            tokens.extend(line)
            ends.extend(range(start + self.max_tokens - self.run - 1, len(tokens), self.max_tokens))
            self.run = (self.run + len(line)) % self.max_tokens
            if self.run and (index < len(lines) - 1 or not last_open):
                ends.append(len(tokens) - 1)
                self.run = 0
        return TokenBlock(tokens, ends)


def sentence_bytes(sentence: Iterable[str | bytes]) -> list[bytes]:
    """The words of one tokenised sentence as bytes: str words encoded as UTF-8
    (surrogateescape, so bytes decoded that way come back unchanged), each cut to its
    first ``MAX_WORD_BYTES`` bytes as a corpus file's would be. CorpusError for a
    sentence given as a string, whose iteration would yield its characters, and for a
    word holding a lone surrogate (``'\\ud800'``), which has no UTF-8 bytes."""
    if isinstance(sentence, (str, bytes)):
        raise CorpusError("a corpus of sentences must yield lists of words, not strings")
    try:
        words = [w if isinstance(w, bytes) else str(w).encode("utf-8", "surrogateescape") for w in sentence]
    except UnicodeEncodeError as err:
        raise CorpusError(
            f"a word of the corpus holds a lone surrogate, which has no UTF-8 bytes: {code_points(err.object)}"
        ) from None
    if words and max(map(len, words)) > MAX_WORD_BYTES:
        return [word[:MAX_WORD_BYTES] for word in words]
    return words


def source_list(corpus) -> list[Source] | None:
    """The sources of a corpus given as a path, URL or ``-``, or a non-empty list of
    them, folders expanded (``expand_sources``), or a source that opens itself
    (``OpenSource``) or a non-empty list of them; None for any other corpus, which is
    then an iterable of tokenised sentences. Strings that name no source, several
    of them or one with whitespace, are taken for sentences given as strings (or one
    sentence's tokens): CorpusError saying what a corpus of sentences is."""
    if isinstance(corpus, (str, os.PathLike, OpenSource)):
        corpus = [corpus]
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, OpenSource) for c in corpus):
        return list(corpus)
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, (str, os.PathLike)) for c in corpus):
        several = len(corpus) > 1 or len(os.fspath(corpus[0]).split()) > 1  # strings, or words in one
        if several and not any(is_source(c) for c in corpus):
            shown = os.fspath(corpus[0])
            raise CorpusError(
                f"corpus not found: {shown[:60]!r}: strings are read as file names; a corpus of sentences "
                "is a list of lists of tokens: [['the', 'cat', 'sat'], ['the', 'dog', 'ran'], ...]"
            )
        return [*expand_sources(corpus)]
    return None


def is_source(source: str | os.PathLike) -> bool:
    """Whether ``source`` names something to read: standard input, a URL, a file or a folder."""
    text = os.fspath(source)
    return text == "-" or is_url(text) or (bool(text) and os.path.exists(text))


def sentence_blocks(sentences: Iterable[Iterable[str]], block_tokens: int = 200_000) -> Iterator[TokenBlock]:
    """Token blocks from an iterable of tokenised sentences (the Python API's corpus),
    their words as ``sentence_bytes`` gives them."""
    cutter = SentenceCutter()
    lines: list[list[bytes]] = []
    size = 0
    for sentence in sentences:
        line = sentence_bytes(sentence)
        lines.append(line)
        size += len(line)
        if size >= block_tokens:
            yield cutter.block(lines, last_open=False)
            lines, size = [], 0
    if lines:
        yield cutter.block(lines, last_open=False)
