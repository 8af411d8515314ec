"""fastText's character n-grams of a word (``Dictionary::computeSubwords``) and their buckets.

A word's n-grams are the ``minn`` to ``maxn`` characters (UTF-8 sequences) long
substrings of ``<word>``, but not ``<`` or ``>`` alone; ``</s>`` has none. Each is
hashed by 32-bit FNV-1a over its bytes taken as signed chars, modulo ``bucket``:
its row is ``nwords + bucket`` of fastText's input matrix. Vectorised in numpy over
the n-grams of many words at once, with time and memory linear in the words' bytes
however long one word is, for composing vectors when querying and for tables built
once per run; no Numba here.
"""

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from w2v.config import TrainConfig

EOS = b"</s>"  # fastText's end of sentence, which has no n-grams
FNV_OFFSET = np.uint32(2166136261)
FNV_PRIME = np.uint32(16777619)
SIGNED = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int32).view(np.uint32)  # a byte as fastText hashes it
SIGNED_INTS = SIGNED.tolist()
BLOCK_NGRAMS = 1 << 20  # n-grams hashed at once: a block's arrays take some tens of MB
PYTHON_LANES = 16  # hashes extended one by one in Python, once no more than this many go on


class NgramSettings(NamedTuple):
    """Which character n-grams a word has and how many buckets they hash into:
    ``minn`` to ``maxn`` characters (fastText's defaults 3 to 6; ``maxn`` 0: none),
    ``bucket`` rows (fastText's default 2,000,000)."""

    minn: int = 3
    maxn: int = 6
    bucket: int = 2_000_000

    @classmethod
    def of(cls, config: TrainConfig) -> "NgramSettings":
        """The n-gram settings of a run's input matrix (``bucket``: its ``ngram_rows``,
        0 without subwords or n-grams)."""
        return cls(config.minn, config.maxn, config.ngram_rows)

    def has_ngrams(self) -> bool:
        """Whether these lengths give a word any n-gram."""
        return has_ngrams(self.minn, self.maxn)

    def lengths(self) -> str:
        """``"3 to 6 characters"``: the n-grams' lengths, for messages."""
        return f"{self.minn} characters" if self.minn == self.maxn else f"{self.minn} to {self.maxn} characters"


def has_ngrams(minn: int, maxn: int) -> bool:
    """Whether n-gram lengths ``minn`` to ``maxn`` give a word any n-gram."""
    return maxn >= max(minn, 1)


class PaddedWords(NamedTuple):
    """Words as fastText pads them, ``<word>``, one after another (``</s>`` left out:
    it has no n-grams). Every word starts with ``<`` and ends with ``>``, which are no
    UTF-8 continuation bytes, so no character runs from one word into the next."""

    codes: np.ndarray  # (B,) uint8: the padded words' bytes
    starts: np.ndarray  # (C + 1,) int64: the byte each character starts at, then B
    firsts: np.ndarray  # (W + 1,) int64: each word's first character (its "<"), then C

    @classmethod
    def of(cls, words: list[bytes]) -> "PaddedWords":
        """``words`` padded; a word of ``</s>`` holds no character."""
        kept = [word for word in words if word != EOS]
        codes = np.frombuffer(b"<" + b"><".join(kept) + b">" if kept else b"", dtype=np.uint8)
        starts = np.append(np.flatnonzero((codes & 0xC0) != 0x80), len(codes))
        sizes = np.fromiter((0 if word == EOS else len(word) + 2 for word in words), dtype=np.int64, count=len(words))
        word_starts = np.concatenate([[0], np.cumsum(sizes)])  # in bytes
        return cls(codes, starts, np.searchsorted(starts, word_starts))

    @property
    def chars(self) -> int:
        """C, the characters of all the padded words."""
        return len(self.starts) - 1


def ngram_blocks(words: list[bytes], settings: NgramSettings) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """fastText's ``computeSubwords`` for ``words``: the index in ``words`` of each
    character n-gram's word and its bucket (int64 arrays), word by word, each word's in
    fastText's order (by start, then by length), in blocks of about ``BLOCK_NGRAMS``
    n-grams (a word's may run on into the next block). Time and memory are linear in
    the words' bytes: words are hashed in groups of about ``BLOCK_NGRAMS`` bytes, a
    longer word alone, and a group's n-grams block by block of their starts."""
    if not settings.has_ngrams():
        return
    lanes = max(1, BLOCK_NGRAMS // (settings.maxn - max(settings.minn, 1) + 1))  # n-gram starts a block
    sizes = np.fromiter((len(word) + 2 for word in words), dtype=np.int64, count=len(words))
    group_of = (np.cumsum(sizes) - sizes) // lanes  # words starting in the same span of bytes group together
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(group_of)) + 1, [len(words)]])
    for first, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        text = PaddedWords.of(words[first:stop])
        for start in range(0, text.chars, lanes):
            owners, buckets = hashed_ngrams(text, range(start, min(start + lanes, text.chars)), settings)
            if len(owners):
                yield owners + first, buckets


def hashed_ngrams(text: PaddedWords, lanes: range, settings: NgramSettings) -> tuple[np.ndarray, np.ndarray]:
    """The n-grams of ``text`` that start at its characters ``lanes``, as ``ngram_blocks``
    gives them (word indices within ``text``): at each start, n grows one character at
    a time, its bytes hashed into the (n - 1)-gram's hash, vectorised over the starts."""
    smallest = max(settings.minn, 1)
    starts = np.arange(lanes.start, lanes.stop)
    owners = np.searchsorted(text.firsts, starts, side="right") - 1  # a word of "</s>" has no character
    bows, eows = text.firsts[owners], text.firsts[owners + 1] - 1  # the "<" and ">" of each start's word
    grid = np.full((len(starts), settings.maxn - smallest + 1), -1, dtype=np.int64)  # each start's n-grams by length
    hashes = np.full(len(starts), FNV_OFFSET, dtype=np.uint32)
    alive = np.arange(len(starts))  # the starts whose n-gram of this length ends inside their word
    for size in range(1, settings.maxn + 1):
        alive = alive[starts[alive] + size - 1 <= eows[alive]]
        if not len(alive):
            break
        added = starts[alive] + size - 1  # the character each n-gram adds
        hashes[alive] = extended(hashes[alive], text.codes, text.starts[added], text.starts[added + 1])
        if size >= smallest:
            kept = alive
            if size == 1:  # not "<" or ">" alone
                kept = alive[(starts[alive] != bows[alive]) & (starts[alive] != eows[alive])]
            grid[kept, size - smallest] = hashes[kept] % np.uint32(settings.bucket)
    found = grid >= 0
    return np.repeat(owners, found.sum(axis=1)), grid[found]


def extended(hashes: np.ndarray, codes: np.ndarray, begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """FNV-1a ``hashes`` (n,) uint32 extended by the bytes ``codes[begins[i]:ends[i]]``
    (each at least one), byte by byte over all of them at once while more than
    ``PYTHON_LANES`` go on; those left (characters far longer than UTF-8's four bytes,
    in malformed text) are finished one by one, so that time stays linear in bytes."""
    hashes, at = hashes.copy(), begins.copy()
    going = np.arange(len(hashes))
    while len(going) > PYTHON_LANES:
        hashes[going] = (hashes[going] ^ SIGNED[codes[at[going]]]) * FNV_PRIME
        at[going] += 1
        going = going[at[going] < ends[going]]
    for lane in going.tolist():
        hashes[lane] = fnv_extended(int(hashes[lane]), codes[at[lane] : ends[lane]])
    return hashes


def fnv_extended(state: int, data: np.ndarray) -> int:
    """The 32-bit FNV-1a ``state`` extended by the bytes ``data`` (uint8), in Python."""
    prime = int(FNV_PRIME)
    for byte in data.tolist():
        state = ((state ^ SIGNED_INTS[byte]) * prime) & 0xFFFFFFFF
    return state


def count_ngrams(counts: np.ndarray, owners: np.ndarray) -> None:
    """Add to ``counts`` (W,) int64 the n-grams each word has in a block of
    ``ngram_blocks`` (``owners``, ascending), in time of the block's words alone."""
    counts[owners[0] : owners[-1] + 1] += np.bincount(owners - owners[0])


def input_rows(words: list[bytes], settings: NgramSettings) -> tuple[np.ndarray, np.ndarray]:
    """The rows of fastText's input matrix that make each of the V ``words``: its own
    row w, then row ``V + bucket`` of each of its n-grams in fastText's order
    (``Dictionary::getSubwords``), as (rows (N,) int32, offsets (V + 1,) int64): word
    w's rows are ``rows[offsets[w] : offsets[w + 1]]``. The matrix has
    ``V + settings.bucket`` rows; ``maxn`` 0 gives each word its own row alone."""
    size = len(words)
    if size + settings.bucket > np.iinfo(np.int32).max:
        raise ValueError(f"{size:,} words and {settings.bucket:,} buckets overflow int32 row ids")
    ngrams = np.zeros(size, dtype=np.int64)  # each word's n-grams
    rows = [np.empty(0, dtype=np.int32)]  # the n-grams' rows, word by word
    for owners, buckets in ngram_blocks(words, settings):
        count_ngrams(ngrams, owners)
        rows.append((buckets + size).astype(np.int32))
    before = np.cumsum(ngrams) - ngrams  # the n-grams of the words before each
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(ngrams + 1, out=offsets[1:])
    return np.insert(np.concatenate(rows), before, np.arange(size, dtype=np.int32)), offsets
