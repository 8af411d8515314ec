"""Vectors built from character n-grams: a subword model's vector for any word.

A subword model (fastText's, w2v's with subwords) holds each word's own row and
``bucket`` rows of character n-grams, both float32 and usually memory-mapped from the
model file. A word's vector is, as fastText's ``getWordVector`` computes it, the mean
of its own row (when it is a word of the model) and the rows of its n-grams
(``w2v.corpus.ngrams``), summed in float32 in fastText's order. A word the model has
never seen is built from its n-grams alone; one with no n-gram either (too short for
``minn``, ``</s>``) gets the zero vector, as fastText and gensim give it.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from w2v.corpus.ngrams import NgramSettings, count_ngrams, ngram_blocks
from w2v.words import encode_word

BLOCK_WORDS = 1024  # words whose n-gram rows are gathered at once
LONG_RUN = 1024  # a word's n-grams in a block, past which they are summed alone, GATHER_ROWS rows at a time
GATHER_ROWS = 4096  # rows of such a run gathered and summed at once: (4096, D) float32


class Composed(NamedTuple):
    """Vectors built for n words: ``vectors`` (n, D) float32 and ``ngrams`` (n,) int64,
    the number of n-gram rows each is the mean of (its own row, if any, not counted)."""

    vectors: np.ndarray
    ngrams: np.ndarray


@dataclass(eq=False)
class SubwordVectors:
    """The ``words`` of a subword model (V,), UTF-8 bytes as they are hashed, their own
    ``word_rows`` (V, D) float32, the n-gram ``buckets`` (bucket, D) float32 and the
    n-gram ``settings`` (``settings.bucket`` is the buckets' row count)."""

    words: list[bytes]
    word_rows: np.ndarray
    buckets: np.ndarray
    settings: NgramSettings

    def __post_init__(self) -> None:
        dim = self.word_rows.shape[1]
        if self.word_rows.shape[0] != len(self.words) or self.buckets.shape != (self.settings.bucket, dim):
            raise ValueError(
                f"{len(self.words)} words and {self.settings.bucket} buckets, but word rows of shape "
                f"{self.word_rows.shape} and buckets of shape {self.buckets.shape}"
            )

    @property
    def dim(self) -> int:
        """D, the number of values a vector."""
        return self.word_rows.shape[1]

    @cached_property
    def index(self) -> dict[bytes, int]:
        """Word (bytes) to row; a word listed twice maps to its first row. Built on the
        first query of a word, not at loading."""
        return {word: row for row, word in reversed(list(enumerate(self.words)))}

    def compose(self, words: Sequence[str]) -> Composed:
        """The vectors of any ``words``: each the mean of its own row, if it is a word of
        the model, and its n-grams' rows; zero where it has neither."""
        raw = [encode_word(word) for word in words]
        return self.composed(raw, np.array([self.index.get(word, -1) for word in raw], dtype=np.int64))

    def vocabulary_vectors(self) -> np.ndarray:
        """(V, D) float32: the vector of every word of the model, in its order (the
        vectors fastText's ``.vec`` holds)."""
        return self.composed(self.words, np.arange(len(self.words))).vectors

    def ngram_count(self, word: str) -> int:
        """How many character n-grams ``word`` has (repeated n-grams counted each time)."""
        return sum(len(buckets) for _owners, buckets in ngram_blocks([encode_word(word)], self.settings))

    def composed(self, words: list[bytes], rows: np.ndarray) -> Composed:
        """``Composed`` of ``words`` whose own rows are ``rows`` ((n,) int64, -1 for a word
        outside the model), ``BLOCK_WORDS`` at a time."""
        vectors = np.empty((len(words), self.dim), dtype=np.float32)
        ngrams = np.empty(len(words), dtype=np.int64)
        for start in range(0, len(words), BLOCK_WORDS):
            block = slice(start, start + BLOCK_WORDS)
            vectors[block], ngrams[block] = self.block_means(words[block], rows[block])
        return Composed(vectors, ngrams)

    def block_means(self, words: list[bytes], rows: np.ndarray) -> Composed:
        """``composed`` for one block of words: their rows summed in float32, the word's
        own row first, then its n-grams' in fastText's order, times 1 / their count."""
        known = rows >= 0
        sums = np.zeros((len(words), self.dim), dtype=np.float32)
        sums[known] = self.word_rows[rows[known]]
        ngrams = np.zeros(len(words), dtype=np.int64)
        with np.errstate(over="ignore", invalid="ignore"):  # past float32's range: inf or NaN, as fastText's sums
            for owners, buckets in ngram_blocks(words, self.settings):
                count_ngrams(ngrams, owners)
                self.add_ngram_rows(sums, owners, buckets)
            counts = np.maximum(known + ngrams, 1).astype(np.float32)  # no row at all: the zero vector
            sums *= (np.float32(1) / counts)[:, None]
        return Composed(sums, ngrams)

    def add_ngram_rows(self, sums: np.ndarray, owners: np.ndarray, buckets: np.ndarray) -> None:
        """Add to ``sums`` (n, D) float32 the rows of ``buckets`` (G,), each to its word's
        row ``owners`` (G,) (ascending, each word's n-grams in fastText's order), one after
        another as fastText sums them: a word's run of n-grams longer than ``LONG_RUN``
        alone, the others rank by rank over all their words (every word's first, then
        every word's second, ...)."""
        firsts = np.flatnonzero(np.diff(owners, prepend=-1))  # where each word's run starts
        lengths = np.diff(firsts, append=len(owners))
        long = lengths > LONG_RUN
        for first, length in zip(firsts[long].tolist(), lengths[long].tolist(), strict=True):
            self.add_in_order(sums[owners[first]], buckets[first : first + length])
        rank = np.arange(len(owners)) - np.repeat(firsts, lengths)  # each n-gram's place in its word's run
        short = np.repeat(~long, lengths)
        owners, buckets, rank = owners[short], buckets[short], rank[short]
        by_rank, per_rank = np.argsort(rank, kind="stable"), np.bincount(rank, minlength=1)
        ends = np.cumsum(per_rank)
        for first, last in zip(ends - per_rank, ends, strict=True):
            at = by_rank[first:last]  # the n-grams of one rank, at most one a word
            sums[owners[at]] += self.buckets[buckets[at]]

    def add_in_order(self, total: np.ndarray, buckets: np.ndarray) -> None:
        """Add the rows of ``buckets`` to ``total`` (D,) float32 in place, one after another
        (``np.add.accumulate``, sequential), ``GATHER_ROWS`` rows gathered at a time."""
        for start in range(0, len(buckets), GATHER_ROWS):
            rows = self.buckets[buckets[start : start + GATHER_ROWS]]
            rows[0] += total
            np.add.accumulate(rows, axis=0, out=rows)
            total[:] = rows[-1]
