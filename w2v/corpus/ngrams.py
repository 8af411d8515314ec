"""fastText's character n-grams of a word (``Dictionary::computeSubwords``) and their buckets.

A word's n-grams are the ``minn`` to ``maxn`` characters (UTF-8 sequences) long
substrings of ``<word>``, but not ``<`` or ``>`` alone; ``</s>`` has none. Each is
hashed by 32-bit FNV-1a over its bytes taken as signed chars, modulo ``bucket``:
its row is ``nwords + bucket`` of fastText's input matrix. Vectorised over a block
of words in numpy, for composing vectors when querying and for tables built once per
run; no Numba here.
"""

from typing import NamedTuple

import numpy as np

from w2v.config import TrainConfig

EOS = b"</s>"  # fastText's end of sentence, which has no n-grams
FNV_OFFSET = np.uint32(2166136261)
FNV_PRIME = np.uint32(16777619)
BLOCK_WORDS = 4096  # words hashed at once by ``input_rows``: the block's padded bytes stay small


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


def ngram_buckets(words: list[bytes], minn: int, maxn: int, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """fastText's ``computeSubwords`` for a block of words: the index in ``words`` of
    each character n-gram's word and its bucket (int64 arrays), n-gram by n-gram,
    vectorised over the words: at each start byte of a character, n grows one
    character (a byte and its UTF-8 continuation bytes) at a time. A word's n-grams
    come in fastText's order: by start, then by length."""
    padded = [b"<" + word + b">" for word in words]
    lengths = np.array([0 if word == EOS else len(p) for word, p in zip(words, padded, strict=True)])
    width = int(lengths.max(initial=0))
    if not has_ngrams(minn, maxn) or width == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    text = np.zeros((len(words), width + 1), dtype=np.uint8)  # a zero byte past every word
    for i, p in enumerate(padded):
        text[i, : lengths[i]] = np.frombuffer(p, dtype=np.uint8)[: lengths[i]]
    signed = text.view(np.int8).astype(np.int32).view(np.uint32)  # a byte as fastText hashes it
    continuation = (text & 0xC0) == 0x80
    owners, buckets = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]  # n-grams may all be too short
    for start in range(width):
        rows = np.flatnonzero((start < lengths) & ~continuation[:, start])
        hashes = np.full(len(rows), FNV_OFFSET, dtype=np.uint32)
        ends = np.full(len(rows), start)
        for size in range(1, maxn + 1):
            left = ends < lengths[rows]
            rows, hashes, ends = rows[left], hashes[left], ends[left]
            if not len(rows):
                break  # every word ended: no longer n-gram starts here
            more = np.ones(len(rows), dtype=bool)  # the first byte of the character, then its continuations
            while more.any():
                hashes[more] = (hashes[more] ^ signed[rows[more], ends[more]]) * FNV_PRIME
                ends[more] += 1
                more &= continuation[rows, ends] & (ends < lengths[rows])
            if size >= minn:
                kept = ~((size == 1) & ((start == 0) | (ends == lengths[rows])))  # not "<" or ">" alone
                owners.append(rows[kept])
                buckets.append((hashes[kept] % np.uint32(bucket)).astype(np.int64))
    return np.concatenate(owners), np.concatenate(buckets)


def input_rows(words: list[bytes], settings: NgramSettings) -> tuple[np.ndarray, np.ndarray]:
    """The rows of fastText's input matrix that make each of the V ``words``: its own
    row w, then row ``V + bucket`` of each of its n-grams in fastText's order
    (``Dictionary::getSubwords``), as (rows (N,) int32, offsets (V + 1,) int64): word
    w's rows are ``rows[offsets[w] : offsets[w + 1]]``. The matrix has
    ``V + settings.bucket`` rows; ``maxn`` 0 gives each word its own row alone."""
    size = len(words)
    if size + settings.bucket > np.iinfo(np.int32).max:
        raise ValueError(f"{size:,} words and {settings.bucket:,} buckets overflow int32 row ids")
    owners, buckets = [], []
    for start in range(0, size, BLOCK_WORDS):
        block_owners, block_buckets = ngram_buckets(words[start : start + BLOCK_WORDS], *settings)
        owners.append(block_owners + start)
        buckets.append(block_buckets + size)
    word_ids = np.arange(size, dtype=np.int64)
    owner = np.concatenate([word_ids, *owners])  # each word's own row first, then its n-grams in order
    row = np.concatenate([word_ids, *buckets])
    order = np.argsort(owner, kind="stable")
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=size), out=offsets[1:])
    return row[order].astype(np.int32), offsets
