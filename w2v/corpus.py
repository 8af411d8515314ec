"""Reading corpora: sources, chunks of bytes, tokenised sentences as bytes, sentence cutting.

Words are the byte strings between ASCII whitespace (as word2vec.c reads them);
they are never decoded here, so any bytes, valid UTF-8 or not, map to the same
word every time. A newline ends a sentence; a sentence longer than
``MAX_SENTENCE_TOKENS`` is cut into pieces of at most that many tokens and no
token is dropped (word2vec.c cuts at 1000 and gensim at 10,000, silently
dropping the rest of the line).

Counted and encoded corpora mark the end of a sentence with ``SENTENCE_END`` (-1)
among their word ids (``counting``, ``idstream``).
"""

import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from w2v.errors import CorpusError
from w2v.files import is_url, open_input, zstd

BLOCK_BYTES = 1 << 20
MAX_SENTENCE_TOKENS = 10_000
SENTENCE_END = -1
WHITESPACE = b" \t\n\r\x0b\x0c"
FIRST_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]")


def expand_sources(sources: Iterable[str | os.PathLike]) -> list[str]:
    """Resolve the user's corpus arguments into a list of readable sources.

    A folder becomes its files (recursively, sorted, hidden ones skipped); ``-``
    is standard input; a URL (``scheme://``) is passed to smart_open as it is.
    Raises CorpusError for a local path that does not exist or a folder with no files.
    """
    resolved = []
    for source in sources:
        text = os.fspath(source)
        if not text:  # Path("") is the current folder: an unset shell variable would train on it
            raise CorpusError("empty corpus path ''")
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
                raise CorpusError(f"corpus folder has no files: {text}")
            resolved.extend(files)
        elif path.is_file():
            resolved.append(text)
        else:
            raise CorpusError(f"corpus not found: {text}")
    if not resolved:
        raise CorpusError("no corpus given")
    return resolved


def open_source(source: str):
    """Open one source for binary reading, decompressing by extension (.gz .bz2 .xz .zst ...)."""
    if source == "-":
        return os.fdopen(os.dup(sys.stdin.buffer.fileno()), "rb")
    try:
        return open_input(source)
    except OSError as err:
        raise CorpusError(f"cannot open corpus {source}: {err.strerror or err}") from None
    except Exception as err:  # smart_open raises many types, one per transport
        raise CorpusError(f"cannot open corpus {source}: {err}") from None


def stream_errors() -> tuple[type[Exception], ...]:
    """What reading a damaged or cut file raises: OSError, EOFError and the decompressors'
    own errors (zlib.error, LZMAError, ZstdError). Called in ``except`` clauses, so only
    once something is raised: reading a plain file imports no decompressor."""
    import lzma
    import zlib

    return (OSError, EOFError, zlib.error, lzma.LZMAError, zstd().ZstdError)


def read_chunks(source: str, block_bytes: int = BLOCK_BYTES) -> Iterator[bytes]:
    """Yield the bytes of ``source`` in pieces of about ``block_bytes``, each ending
    at whitespace, so that no token is split between two pieces.

    A run of more than ``block_bytes`` bytes without whitespace is split into
    tokens of at most ``block_bytes`` bytes, so that memory stays bounded.
    """
    for chunk, _ in chunks_and_offsets(source, block_bytes):
        yield chunk


def chunks_and_offsets(source: str, block_bytes: int = BLOCK_BYTES) -> Iterator[tuple[bytes, int]]:
    """``read_chunks``' pieces, each with the bytes of ``source`` read so far: of the
    file as stored (compressed bytes for a compressed file, to compare with its size),
    or, where that cannot be told (a pipe, a URL), of its content."""
    with open_source(source) as stream:
        descriptor = seekable_descriptor(stream)
        carry = b""
        content = 0
        while True:
            try:
                block = stream.read(block_bytes)
            except (ValueError, *stream_errors()) as err:  # type: ignore[misc]  # a tuple built at run time
                raise CorpusError(f"cannot read corpus {source}: {err}") from None
            content += len(block)
            offset = content if descriptor is None else os.lseek(descriptor, 0, os.SEEK_CUR)
            if not block:
                if carry:
                    yield carry, offset
                return
            data = carry + block
            cut = max(data.rfind(c, max(len(carry) - 1, 0)) for c in WHITESPACE)
            first = FIRST_SPACE.search(data)
            run = first.start() if first else len(data)  # the leading run without whitespace
            while run > block_bytes:  # cut it into tokens of block_bytes
                yield data[:block_bytes] + b" ", offset
                data, run, cut = data[block_bytes:], run - block_bytes, cut - block_bytes
            carry = data[cut + 1 :]
            if cut >= 0:
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


def corpus_bytes(sources: Iterable[str]) -> int | None:
    """The bytes of ``sources`` as stored (compressed files: their compressed size),
    or None if one of them is not a local file (standard input, a URL)."""
    total = 0
    for source in sources:
        if source == "-" or is_url(source):
            return None
        try:
            total += os.path.getsize(source)
        except OSError:
            return None
    return total


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
    (surrogateescape, so bytes decoded that way come back unchanged). CorpusError for
    a sentence given as a string, whose iteration would yield its characters."""
    if isinstance(sentence, (str, bytes)):
        raise CorpusError("a corpus of sentences must yield lists of words, not strings")
    return [w if isinstance(w, bytes) else str(w).encode("utf-8", "surrogateescape") for w in sentence]


def source_list(corpus) -> list[str] | None:
    """The sources of a corpus given as a path, URL or ``-``, or a non-empty list of
    them, folders expanded (``expand_sources``); None for any other corpus, which is
    then an iterable of tokenised sentences. Strings that name no source, several
    of them or one with whitespace, are taken for sentences given as strings (or one
    sentence's tokens): CorpusError saying what a corpus of sentences is."""
    if isinstance(corpus, (str, os.PathLike)):
        corpus = [corpus]
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, (str, os.PathLike)) for c in corpus):
        several = len(corpus) > 1 or len(os.fspath(corpus[0]).split()) > 1  # strings, or words in one
        if several and not any(is_source(c) for c in corpus):
            shown = os.fspath(corpus[0])
            raise CorpusError(
                f"corpus not found: {shown[:60]!r}: strings are read as file names; a corpus of sentences "
                "is a list of lists of tokens: [['the', 'cat', 'sat'], ['the', 'dog', 'ran'], ...]"
            )
        return expand_sources(corpus)
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
