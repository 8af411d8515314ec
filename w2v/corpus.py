"""Reading corpora: sources, bounded-memory tokenising, sentence cutting, id streams.

Words are the byte strings between ASCII whitespace (as word2vec.c reads them);
they are never decoded here, so any bytes, valid UTF-8 or not, map to the same
word every time. A newline ends a sentence; a sentence longer than
``MAX_SENTENCE_TOKENS`` is cut into pieces of at most that many tokens and no
token is dropped (word2vec.c cuts at 1000 and gensim at 10,000, silently
dropping the rest of the line).

Encoded corpora are int32 id streams in which ``SENTENCE_END`` (-1) ends a
sentence; they live in a file and are read back in slices (``IdStream``), so
training memory does not grow with the corpus.
"""

import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
    with open_source(source) as stream:
        carry = b""
        while True:
            try:
                block = stream.read(block_bytes)
            except (ValueError, *stream_errors()) as err:  # type: ignore[misc]  # a tuple built at run time
                raise CorpusError(f"cannot read corpus {source}: {err}") from None
            if not block:
                if carry:
                    yield carry
                return
            data = carry + block
            cut = max(data.rfind(c, max(len(carry) - 1, 0)) for c in WHITESPACE)
            first = FIRST_SPACE.search(data)
            run = first.start() if first else len(data)  # the leading run without whitespace
            while run > block_bytes:  # cut it into tokens of block_bytes
                yield data[:block_bytes] + b" "
                data, run, cut = data[block_bytes:], run - block_bytes, cut - block_bytes
            carry = data[cut + 1 :]
            if cut >= 0:
                yield data[: cut + 1]


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


def token_blocks(sources: Iterable[str], block_bytes: int = BLOCK_BYTES) -> Iterator[TokenBlock]:
    """Tokenise each source in bounded blocks. Each source's end ends a sentence."""
    cutter = SentenceCutter()
    for source in sources:
        for chunk in read_chunks(source, block_bytes):
            lines = [line.split() for line in chunk.split(b"\n")]
            yield cutter.block(lines, last_open=not chunk.endswith(b"\n"))
        if cutter.run:
            yield cutter.block([[]], last_open=False)


def sentence_blocks(sentences: Iterable[Iterable[str]], block_tokens: int = 200_000) -> Iterator[TokenBlock]:
    """Token blocks from an iterable of tokenised sentences (the Python API's corpus).

    Words are encoded as UTF-8 (surrogateescape, so bytes decoded that way come back unchanged).
    """
    cutter = SentenceCutter()
    lines: list[list[bytes]] = []
    size = 0
    for sentence in sentences:
        if isinstance(sentence, (str, bytes)):
            raise CorpusError("a corpus of sentences must yield lists of words, not strings")
        line = [w if isinstance(w, bytes) else str(w).encode("utf-8", "surrogateescape") for w in sentence]
        lines.append(line)
        size += len(line)
        if size >= block_tokens:
            yield cutter.block(lines, last_open=False)
            lines, size = [], 0
    if lines:
        yield cutter.block(lines, last_open=False)


def block_ids(block: TokenBlock, ids: np.ndarray) -> np.ndarray:
    """Insert ``SENTENCE_END`` after each sentence end of ``block`` into its ``ids`` (int32)."""
    if not block.ends:
        return ids
    return np.insert(ids, np.asarray(block.ends, dtype=np.int64) + 1, SENTENCE_END)


class IdStream:
    """An int32 id stream in a file, split into batches that end at sentence ends.

    ``batch_starts`` (B + 1,) int64 are offsets (in ids) of the batches,
    ``batch_words`` (B,) int64 the number of word ids (not sentence ends) in each.
    """

    def __init__(self, path: str, batch_starts: np.ndarray, batch_words: np.ndarray):
        self.path = path
        self.batch_starts = batch_starts
        self.batch_words = batch_words
        self.words = int(batch_words.sum())
        self._fd = os.open(path, os.O_RDONLY)

    def __len__(self) -> int:
        return len(self.batch_words)

    @property
    def longest(self) -> int:
        """Ids (words and sentence ends) in the longest batch: the size of a buffer for ``batch``."""
        return int(np.diff(self.batch_starts).max(initial=0))

    def batch(self, index: int, out: np.ndarray | None = None) -> np.ndarray:
        """The ids of batch ``index``: read into the front of ``out`` (int32, at least
        ``longest`` long; a worker reuses one, so reading allocates nothing) and
        returned as a view of it, or into a fresh array."""
        start, end = self.batch_starts[index], self.batch_starts[index + 1]
        count = int(end - start)
        ids = (np.empty(count, dtype=np.int32) if out is None else out)[:count]
        if read_at(self._fd, ids.data.cast("B"), int(start) * 4) != 4 * count:
            raise CorpusError(f"the encoded corpus {self.path} was cut short")
        return ids

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_at(fd: int, into: memoryview, offset: int) -> int:
    """Read bytes of file ``fd`` from ``offset`` into ``into``; returns how many were read
    (``os.preadv``; on a platform without it, ``os.pread`` and a copy)."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [into], offset)
    data = os.pread(fd, len(into), offset)
    into[: len(data)] = data
    return len(data)


class IdStreamWriter:
    """Writes an id stream block by block and chooses batch bounds as it goes.

    A batch ends at the first sentence end at or after its ``batch_size``-th id,
    so that no sentence is split between two batches.
    """

    def __init__(self, path: str, batch_size: int):
        self.path = path
        self.batch_size = batch_size
        self._file = open(path, "wb")  # noqa: SIM115 - closed in finish()
        self._written = 0
        self._ends_written = 0
        self._starts = [0]  # id offset of each batch
        self._ends_before = [0]  # sentence ends before each batch

    def write(self, ids: np.ndarray) -> None:
        """Append int32 ``ids`` (with ``SENTENCE_END`` markers) to the stream."""
        self._file.write(ids.astype(np.int32, copy=False).tobytes())
        ends = np.flatnonzero(ids == SENTENCE_END) + self._written
        while True:
            k = int(np.searchsorted(ends, self._starts[-1] + self.batch_size - 1))
            if k == len(ends):
                break
            self._starts.append(int(ends[k]) + 1)
            self._ends_before.append(self._ends_written + k + 1)
        self._written += len(ids)
        self._ends_written += len(ends)

    def finish(self) -> IdStream:
        """Close the file and return the stream for reading."""
        self._file.close()
        if self._written > self._starts[-1]:
            self._starts.append(self._written)
            self._ends_before.append(self._ends_written)
        starts = np.asarray(self._starts, dtype=np.int64)
        words = np.diff(starts) - np.diff(np.asarray(self._ends_before, dtype=np.int64))
        return IdStream(self.path, starts, words)
