"""The compiled counter, ``ChunkCounter``: it tokenises chunks of corpus bytes,
hashes their words into an open-addressing table and counts them in one Numba
loop, with ``counting.WordCounter``'s results (ids, sentence ends, counts, pruning).

Words are the bytes between ASCII whitespace (``b" \\t\\n\\r\\x0b\\x0c"``, as
``bytes.split``), each cut to its first ``sources.MAX_WORD_BYTES`` bytes. Only the
words held (not pruned) are stored, each at an index ``k`` of the store, in the
order they were issued: word ``k`` is ``arena[starts[k]:starts[k + 1]]``, its
64-bit FNV-1a hash ``hashes[k]`` and its provisional id ``ids[k]`` (ascending in
``k``). Pruning moves the words kept to the front of the store, so that it is
bounded by the words held, not by the provisional ids ever issued. The table
holds store indices (int32, ``EMPTY`` for a free slot), a power of two in size,
probed linearly from ``hash & (size - 1)``.
"""

from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

import numpy as np

from w2v.config import DEFAULT_PRUNE_AT
from w2v.corpus.provisional import OnRead, ProvisionalCounts, ReadStatus, grown
from w2v.corpus.sources import (
    BLOCK_BYTES,
    MAX_SENTENCE_TOKENS,
    MAX_WORD_BYTES,
    SENTENCE_END,
    Source,
    chunks_and_offsets,
    corpus_bytes,
)
from w2v.jitcache import njit_cached

FNV_OFFSET = np.uint64(0xCBF29CE484222325)  # 64-bit FNV-1a
FNV_PRIME = np.uint64(0x100000001B3)
EMPTY = -1  # a free slot of the table
NEWLINE = 10
FIRST_TABLE = 1 << 16  # slots; the table doubles when half full


def counting_kernel(function):
    """Compile a function of the scan: released GIL, cached on disk (``w2v.jitcache``)."""
    return njit_cached(function, nogil=True)


class Store(NamedTuple):
    """The words held and the table that finds them, as the compiled functions read
    and write them (in place). ``held`` words are stored, at indices 0 .. held - 1."""

    table: np.ndarray  # (T,) int32: a store index per slot, ``EMPTY`` for a free one; T a power of two
    hashes: np.ndarray  # (>= held,) uint64: each word's 64-bit FNV-1a hash
    starts: np.ndarray  # (>= held + 1,) int64: word k is ``arena[starts[k]:starts[k + 1]]``
    ids: np.ndarray  # (>= held,) int32: each word's provisional id, ascending
    arena: np.ndarray  # uint8: the words' bytes, one after the other


class Scan(NamedTuple):
    """Where the scan of a chunk stands (``scan_chunk``), with the store's counters."""

    position: int  # the chunk's next byte to read
    written: int  # ids and sentence ends written to the output
    run: int  # tokens of the current, unfinished sentence
    issued: int  # provisional ids issued: the next new word's
    held: int  # words stored: the next new word's store index


@counting_kernel
def is_space(byte):
    """ASCII whitespace as ``bytes.split`` sees it: space, \\t \\n \\v \\f \\r."""
    return byte == 32 or 9 <= byte <= 13


@counting_kernel
def same_bytes(arena, start, chunk, first, length):
    """Whether ``arena[start:start + length]`` equals ``chunk[first:first + length]``."""
    for k in range(length):  # noqa: SIM110 - a loop: Numba compiles no generator expressions
        if arena[start + k] != chunk[first + k]:
            return False
    return True


@counting_kernel
def fnv1a(data, start, end):
    """The 64-bit FNV-1a hash of ``data[start:end]`` (uint8)."""
    digest = FNV_OFFSET
    for k in range(start, end):
        digest = (digest ^ np.uint64(data[k])) * FNV_PRIME
    return digest


@counting_kernel
def probe(store, data, start, end, digest):
    """Find the word ``data[start:end]`` (uint8, hash ``digest``) in ``store.table``.
    Returns ``(slot, k)``: its slot and store index, or the free slot where it would
    go and ``EMPTY``."""
    table, hashes, starts, arena = store.table, store.hashes, store.starts, store.arena
    mask = np.uint64(table.shape[0] - 1)
    slot = digest & mask
    length = end - start
    while True:
        word = table[slot]
        if word == EMPTY:
            return slot, EMPTY
        first = starts[word]
        if (
            hashes[word] == digest
            and starts[word + 1] - first == length
            and same_bytes(arena, first, data, start, length)
        ):
            return slot, word
        slot = (slot + np.uint64(1)) & mask


@counting_kernel
def scan_chunk(chunk, out, store, scan, max_tokens, max_word):
    """Tokenise ``chunk`` (uint8) from ``scan.position`` on, each token cut to its
    first ``max_word`` bytes, writing each token's provisional id to ``out`` (int32,
    from ``scan.written`` on) and ``SENTENCE_END`` after each sentence: at a newline
    ending a sentence of at least one token, and after every ``max_tokens`` tokens of
    one (``scan.run`` of them are already read). A new word is issued id
    ``scan.issued`` and stored in ``store`` at index ``scan.held``: its hash in
    ``hashes``, its bytes in ``arena`` from ``starts[held]``, its id in ``ids``, its
    index in a free slot of ``table`` (open addressing, linear probing). The caller
    leaves room in ``hashes``, ``starts``, ``ids`` and ``arena`` for every token of
    the chunk; the table must keep a free slot in two, so the scan stops before a
    new word would fill more than half of it.

    Returns the ``Scan`` reached: the position (the chunk's length, or the start of
    the word that did not fit) and the updated counters."""
    position, written, run, issued, held = scan.position, scan.written, scan.run, scan.issued, scan.held
    table, hashes, starts, ids, arena = store.table, store.hashes, store.starts, store.ids, store.arena
    limit = table.shape[0] // 2
    size = chunk.shape[0]
    while position < size:
        byte = chunk[position]
        if is_space(byte):
            if byte == NEWLINE and run > 0:
                out[written] = SENTENCE_END
                written += 1
                run = 0
            position += 1
            continue
        end = position
        while end < size and not is_space(chunk[end]):
            end += 1
        stop = min(end, position + max_word)  # the word: the run cut to max_word bytes
        digest = fnv1a(chunk, position, stop)
        slot, word = probe(store, chunk, position, stop, digest)
        if word == EMPTY:
            if held >= limit:
                return Scan(position, written, run, issued, held)
            word = held
            table[slot] = word
            hashes[word] = digest
            ids[word] = issued
            start = starts[word]
            arena[start : start + stop - position] = chunk[position:stop]
            starts[word + 1] = start + stop - position
            issued += 1
            held += 1
        out[written] = ids[word]
        written += 1
        run += 1
        if run == max_tokens:
            out[written] = SENTENCE_END
            written += 1
            run = 0
        position = end
    return Scan(position, written, run, issued, held)


@counting_kernel
def fill_table(table, hashes, held):
    """Empty ``table`` and put the store indices ``0 .. held - 1`` back by their ``hashes``."""
    mask = np.uint64(table.shape[0] - 1)
    table[:] = EMPTY
    for word in range(held):
        slot = hashes[word] & mask
        while table[slot] != EMPTY:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = word


@counting_kernel
def compact(keep, store):
    """Move the stored words whose ``keep`` (bool, one per word held) is True to the
    front of ``store``, in order, each with its hash, bytes and id (its table is left
    for the caller to fill again). Returns how many."""
    hashes, starts, ids, arena = store.hashes, store.starts, store.ids, store.arena
    kept = 0
    end = 0
    for word in range(keep.shape[0]):
        if keep[word]:
            first, length = starts[word], starts[word + 1] - starts[word]
            for byte in range(length):  # forward, byte by byte: end <= first, the ranges may overlap
                arena[end + byte] = arena[first + byte]
            hashes[kept], ids[kept], starts[kept] = hashes[word], ids[word], end
            end += length
            kept += 1
    starts[kept] = end
    return kept


@counting_kernel
def find_words(store, words, bounds):
    """The indices in ``store`` of the words ``words[bounds[i]:bounds[i + 1]]``
    (uint8, int64), ``EMPTY`` for a word not held."""
    found = np.empty(bounds.shape[0] - 1, dtype=np.int64)
    for i in range(found.shape[0]):
        start, end = bounds[i], bounds[i + 1]
        found[i] = probe(store, words, start, end, fnv1a(words, start, end))[1]
    return found


class ArenaWords(Sequence[bytes]):
    """The words at store indices ``indices`` (int64), each made when it is read: a
    vocabulary keeps a few of a corpus' words, and the rest never become ``bytes``
    objects (on the benchmark corpus, 220,000 of them would take 10 MB)."""

    def __init__(self, arena: np.ndarray, starts: np.ndarray, indices: np.ndarray):
        self.arena, self.starts, self.indices = arena, starts, indices

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index):  # an int: no slices
        word = self.indices[index]
        return self.arena[self.starts[word] : self.starts[word + 1]].tobytes()


class ChunkCounter(ProvisionalCounts):
    """``WordCounter``'s counts and provisional ids from raw corpus bytes, tokenised,
    hashed and counted in one compiled loop (``scan_chunk``).

    Memory, besides the counts (8 bytes per provisional id issued, live or pruned:
    ``ProvisionalCounts``), is bounded by the words held (at most ``prune_at`` and
    one chunk's new words): the table, 4 bytes a slot, 2 to 4 slots per word held
    (8 MB for the 250,000 distinct words of a 17M-token corpus); per word held, 8
    bytes of hash, 8 of start, 4 of id and its bytes; and per chunk, 4 bytes per
    byte of it for the ids (``sources.BLOCK_BYTES``, 1 MB: 4 MB).
    """

    def __init__(
        self, prune_at: int = DEFAULT_PRUNE_AT, max_tokens: int = MAX_SENTENCE_TOKENS, max_word: int = MAX_WORD_BYTES
    ):
        super().__init__(prune_at)
        self.max_tokens = max_tokens
        self.max_word = max_word
        self.table = np.full(FIRST_TABLE, EMPTY, dtype=np.int32)
        self.hashes = np.empty(FIRST_TABLE, dtype=np.uint64)  # store index -> hash
        self.starts = np.zeros(FIRST_TABLE + 1, dtype=np.int64)  # store index -> start in arena
        self.ids = np.empty(FIRST_TABLE, dtype=np.int32)  # store index -> provisional id
        self.arena = np.empty(1 << 20, dtype=np.uint8)
        self.run = 0  # tokens of the current, unfinished sentence
        self._issued = 0
        self._held = 0

    def load_compiled(self) -> None:
        """Load (or compile) every compiled function now, each called on nothing with
        the argument types counting passes it (a chunk is ``bytes``, read-only);
        counting later compiles nothing. Changes nothing."""
        self.add_chunk(b"")  # scan_chunk
        self.find([])  # find_words
        fill_table(self.table, self.hashes, self._held)  # the words held
        compact(np.ones(0, dtype=bool), self.store)  # keeps starts[0] == 0

    @property
    def store(self) -> Store:
        """The store's arrays as they are now (``add_chunk`` replaces them as they grow)."""
        return Store(self.table, self.hashes, self.starts, self.ids, self.arena)

    @property
    def issued(self) -> int:
        return self._issued

    @property
    def held(self) -> int:
        return self._held

    def words_of(self, ids: np.ndarray) -> Sequence[bytes]:
        return ArenaWords(self.arena, self.starts, np.searchsorted(self.ids[: self._held], ids))

    def find(self, words: Sequence[bytes]) -> np.ndarray:
        bounds = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(word) for word in words], out=bounds[1:])
        data = np.frombuffer(b"".join(words), dtype=np.uint8)
        found = find_words(self.store, data, bounds)
        return np.where(found == EMPTY, -1, self.ids[np.maximum(found, 0)].astype(np.int64))

    def read(
        self, sources: Iterable[Source], block_bytes: int = BLOCK_BYTES, on_read: OnRead | None = None
    ) -> Iterator[np.ndarray]:
        """Count the sources one after the other, in chunks of about ``block_bytes``;
        yield the provisional ids of each chunk with its sentence ends (int32), as
        ``WordCounter`` would for the same tokens. The end of each source ends a sentence.
        ``on_read(ReadStatus)`` is called once the first source is open and after each
        chunk is counted."""
        sources = list(sources)
        start = None
        if on_read is not None:
            total = corpus_bytes(sources)
            start = lambda: on_read(ReadStatus(0, total, 0, 0))  # noqa: E731
        done = 0  # bytes of the sources read before this one
        for number, source in enumerate(sources):
            offset = 0
            for chunk, offset in chunks_and_offsets(source, block_bytes, self.max_word, start if number == 0 else None):
                ids = self.add_chunk(chunk)
                if on_read is not None:
                    on_read(ReadStatus(done + offset, total, self.tokens, self._held))
                yield ids
            done += offset
            if self.run:
                self.run = 0
                yield np.array([SENTENCE_END], dtype=np.int32)

    def add_chunk(self, chunk: bytes) -> np.ndarray:
        """Count the tokens of ``chunk``, which ends at whitespace or at the end of a source."""
        data = np.frombuffer(chunk, dtype=np.uint8)
        most = (len(data) + 1) // 2  # tokens (and new words) in the chunk at most
        self.check_room(most)
        held = self._held
        self.hashes = grown(self.hashes, held, held + most)
        self.starts = grown(self.starts, held + 1, held + most + 1)
        self.ids = grown(self.ids, held, held + most)
        self.arena = grown(self.arena, int(self.starts[held]), int(self.starts[held]) + len(data))
        out = np.empty(len(data) + 1, dtype=np.int32)  # ids and sentence ends: at most two per token
        scan = Scan(0, 0, self.run, self._issued, self._held)
        while True:
            scan = scan_chunk(data, out, self.store, scan, self.max_tokens, self.max_word)
            self.run, self._issued, self._held = scan.run, scan.issued, scan.held
            if scan.position == len(data):
                break
            self.table = np.empty(2 * len(self.table), dtype=np.int32)
            fill_table(self.table, self.hashes, self._held)
        ids = out[: scan.written]
        self.counted(ids[ids != SENTENCE_END])
        return ids

    def _forget(self, dead: np.ndarray) -> None:
        keep = np.ones(self._held, dtype=bool)
        keep[np.searchsorted(self.ids[: self._held], dead)] = False  # dead: held ids, ascending as ``ids``
        self._held = compact(keep, self.store)
        fill_table(self.table, self.hashes, self._held)
