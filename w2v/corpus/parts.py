"""Evenly spaced parts: of a count of batches (``--streams``) or of a corpus' bytes (``--cluster``).

word2vec.c's T threads each train the part of the file that starts at byte
``t * size / T``, so that at any moment the model sees distant text. w2v uses the
same layout twice: ``idstream.evenly_spaced`` cuts the encoded corpus' batches into
evenly spaced streams (``even_bounds`` over batches), and ``split_sources`` cuts the
corpus files into byte ranges that a cluster's workers read, count and train on
their own (``even_bounds`` over bytes). A byte range is cut where word2vec.c's
threads start reading, but never inside a word: part i of a file holds the bytes
from just after the first whitespace at or after ``i * size / N`` to just after the
first whitespace at or after ``(i + 1) * size / N``, so every word of the file is in
exactly one part, whole.

Phrases are counted and joined within lines, so for them parts are cut at line
ends instead (``lines``: after the first newline at or after the offset), which
keeps every line, and so every pair and every join, whole: a file of one line is
then one part.

A file that cannot be cut (compressed: it must be read from its start; a URL whose
size is not known here) is one part.
"""

import os
import re
from dataclasses import dataclass

import numpy as np

from w2v.corpus.sources import FIRST_SPACE, read_chunks
from w2v.files import compression_of, is_url, open_input

READ_BYTES = 1 << 20
NEWLINE = re.compile(rb"\n")


def even_bounds(total: int, parts: int) -> np.ndarray:
    """The bounds of ``parts`` evenly spaced parts of ``total`` items: (parts + 1,)
    int64, part p = [bounds[p], bounds[p + 1]) with bounds[p] = floor(p * total / parts)."""
    return np.arange(parts + 1, dtype=np.int64) * total // parts


@dataclass(frozen=True)
class Part:
    """Bytes ``[start, end)`` of ``source`` (a path or URL) as cut at whitespace, or at
    line ends if ``lines`` (see the module's docstring); ``end`` None for the whole
    source. Read as a source of its own by ``open_bytes``."""

    source: str
    start: int = 0
    end: int | None = None
    lines: bool = False

    def __str__(self) -> str:
        if self.end is None:
            return self.source
        return f"{self.source} (bytes {self.start:,} to {self.end:,})"

    @property
    def size(self) -> int | None:
        """Its bytes as stored: the range's, or a whole local file's (compressed, if it
        is); None for a URL, whose size is not known here."""
        if self.end is not None:
            return self.end - self.start
        return None if is_url(self.source) else os.path.getsize(self.source)

    def open_bytes(self):
        """A binary stream of the part's bytes (``PartReader``), or of the whole source."""
        stream = open_input(self.source)
        if self.end is None:
            return stream
        return PartReader(stream, self.start, self.end, NEWLINE if self.lines else FIRST_SPACE)


class PartReader:
    """Reads the part of ``stream`` whose nominal bounds are ``[start, end)``: from just
    after the first ``cut`` (a one-byte pattern: whitespace, or a newline) at or after
    ``start`` (from 0 if ``start`` is 0) to just after the first at or after ``end`` (or
    the stream's end)."""

    def __init__(self, stream, start: int, end: int, cut: re.Pattern = FIRST_SPACE):
        self._stream, self._end, self._cut_at = stream, end, cut
        self._position = start
        self._done = False
        self._pending = b""
        if start > 0:
            stream.seek(start)
            self._skip_to_word()

    def _skip_to_word(self) -> None:
        """Drop the bytes up to and including the first cut (whitespace, or a newline): the
        word (or line) under way belongs to the part before."""
        while True:
            block = self._stream.read(READ_BYTES)
            if not block:
                self._done = True
                return
            cut = first_match(self._cut_at, block)
            if cut >= 0:
                self._position += cut + 1
                self._pending = block[cut + 1 :]
                self._done = self._position > self._end  # the whole part was one word of the part before
                return
            self._position += len(block)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of the part (all that is left for a negative size)."""
        chunks, left = [], size
        while not self._done and left != 0:
            wanted = READ_BYTES if left < 0 else left
            if self._pending:
                block, self._pending = self._pending[:wanted], self._pending[wanted:]
            else:
                block = self._stream.read(wanted)
            if not block:
                self._done = True
                break
            block = self._cut(block)
            chunks.append(block)
            self._position += len(block)
            left = left - len(block) if left > 0 else left
        return b"".join(chunks)

    def _cut(self, block: bytes) -> bytes:
        """``block`` (read at the current position) up to the part's end; sets ``_done``
        when the end is in it, keeping what follows unread."""
        past = max(self._end - self._position, 0)  # bytes of the block before the nominal end
        if past >= len(block):
            return block
        cut = first_match(self._cut_at, block, past)
        if cut < 0:
            return block  # the word (or line) under way at the end goes on in the next block
        self._done = True
        return block[: cut + 1]

    def close(self) -> None:
        self._stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def first_match(pattern: re.Pattern, block: bytes, start: int = 0) -> int:
    """The index of the first match of ``pattern`` in ``block`` at or after ``start``, -1 if none."""
    found = pattern.search(block, start)
    return -1 if found is None else found.start()


def holds_words(part: Part) -> bool:
    """Whether ``part`` holds a word, a byte that is not ASCII whitespace (as the
    tokeniser splits), read up to the first one."""
    return any(chunk.strip() for chunk in read_chunks(part))


def can_cut(source: str) -> bool:
    """Whether ``source`` can be cut into byte ranges: a local, uncompressed file."""
    return not is_url(source) and compression_of(source) is None and os.path.isfile(source)


def split_sources(sources: list[str], parts: int, lines: bool = False) -> list[Part]:
    """``sources`` (files or URLs, as ``sources.expand_sources`` lists them) as about
    ``parts`` parts of even size, in corpus order: every source that cannot be cut
    (``can_cut``) is one part, and each file that can is cut into evenly spaced parts
    in number proportional to its share of the cuttable bytes, out of the parts left
    (at least one: a folder of many files of about one size is a part a file, and a
    file much larger than the others is cut however many there are).
    ``lines``: cut at line ends (``Part.lines``)."""
    sizes = {source: os.path.getsize(source) for source in sources if can_cut(source)}
    cuttable = sum(sizes.values())
    room = parts - (len(sources) - len(sizes))  # parts for the files that can be cut
    result = []
    for source in sources:
        if source not in sizes:
            result.append(Part(source))
            continue
        size = sizes[source]
        count = max(1, min(round(room * size / cuttable) if cuttable else 1, size))
        if count == 1:
            result.append(Part(source))
            continue
        bounds = even_bounds(size, count)
        result.extend(Part(source, int(bounds[i]), int(bounds[i + 1]), lines) for i in range(count))
    return result


def groups_of(parts: list[Part], groups: int) -> list[list[Part]]:
    """``parts`` (in corpus order) as ``groups`` contiguous runs of about equal bytes: a
    part's own, a whole local file's size (compressed, if it is), and for a URL the
    mean of the others (or 1)."""
    sizes = np.array([-1 if part.size is None else part.size for part in parts], dtype=np.float64)
    known = sizes[sizes >= 0]
    sizes[sizes < 0] = known.mean() if len(known) else 1.0
    middle = np.cumsum(sizes) - sizes / 2
    owner = np.minimum((middle * groups / max(sizes.sum(), 1.0)).astype(np.int64), groups - 1)
    return [[part for part, k in zip(parts, owner.tolist(), strict=True) if k == group] for group in range(groups)]
