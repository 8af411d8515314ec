"""Counting a corpus' words: provisional ids, counts and pruning.

Two counters give the same results: ``chunkcounter.ChunkCounter`` tokenises and
hashes raw corpus bytes in compiled code, for files, URLs and stdin;
``WordCounter`` counts lists of tokens in Python, for the library's tokenised
sentences and for phrase detection. Both issue each distinct word a provisional
id in order of first sight, cut sentences as ``sources.SentenceCutter`` does, and
prune as word2vec.c's ReduceVocab does (``ProvisionalCounts``).
``count_corpus`` is the one entry point for a corpus.
"""

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

import numpy as np

from w2v.config import DEFAULT_PRUNE_AT
from w2v.corpus.provisional import OnRead, ProvisionalCounts, ReadStatus
from w2v.corpus.sources import SENTENCE_END, TokenBlock, sentence_blocks, source_list
from w2v.errors import CorpusError
from w2v.interrupts import signals_held

REDUCE_STEP = 1 << 16  # pruned words deleted per step


class WordCounter(ProvisionalCounts):
    """Counts words block by block (lists of tokens), giving each a provisional id in
    order of first sight, with pruning (``ProvisionalCounts``). Pruning happens
    after each ``add``, so up to one block's new words more than ``prune_at`` are
    held for a moment. ``chunkcounter.ChunkCounter`` does the same from raw bytes.

    ``ids`` maps each live word to its provisional id; ``words[i]`` is the word of
    provisional id ``i`` (None once pruned) and ``counts[i]`` its count.

    Memory, in two parts (CPython 3.11, 64-bit):

    - bounded by ``prune_at``: the live words, each roughly 110 bytes plus its
      length (the ``bytes`` object, the int id, its slot in the ``ids`` table;
      measured: 115 bytes for 6-byte words), and while pruning up to 25 bytes
      more per live word and a second, smaller table for a moment. The default 10,000,000
      is about 1.2 GB; ``prune_at=1_000_000`` about 120 MB.
    - growing with the provisional ids issued, live or pruned: 8 bytes in
      ``words`` and 8 in ``counts`` (16 for a moment while ``counts`` grows; its
      spare capacity is never written, so costs no memory). Ids are issued once
      per distinct word, and once more each time a pruned word comes back, so they
      number at most the tokens counted: 5 million distinct words cost 80 MB.
      ``idstream.encode_corpus`` adds 4 bytes per id for its remap table.

    The work of an ``add`` is bounded by its block, except for pruning, which
    visits the ids issued.
    """

    def __init__(self, prune_at: int = DEFAULT_PRUNE_AT):
        super().__init__(prune_at)
        self._issue = itertools.count().__next__  # the next provisional id
        self.ids: defaultdict[bytes, int] = defaultdict(self._issue)  # an unseen word gets the next id
        self.words: list[bytes | None] = []  # provisional id -> word (None once pruned)

    @property
    def issued(self) -> int:
        return len(self.words)

    @property
    def held(self) -> int:
        return len(self.ids)

    def words_of(self, ids: np.ndarray) -> Sequence[bytes]:
        return [self.words[i] for i in ids.tolist()]  # type: ignore[misc]  # live ids: never None

    def find(self, words: Sequence[bytes]) -> np.ndarray:
        return np.array([self.ids.get(word, -1) for word in words], dtype=np.int64)

    def add(self, tokens: list[bytes]) -> np.ndarray:
        """Count ``tokens``; return their provisional ids (int32, same length)."""
        self.check_room(len(tokens))
        held = len(self.ids)
        # one dict lookup per token, in C; a new word is issued the next id on the way
        provisional = np.fromiter(map(self.ids.__getitem__, tokens), dtype=np.int32, count=len(tokens))
        new = len(self.ids) - held  # the newest keys: nothing is deleted while adding
        self.words.extend(reversed(list(itertools.islice(reversed(self.ids), new))))
        self.counted(provisional)
        return provisional

    def _forget(self, dead: np.ndarray) -> None:
        ids, words = self.ids, self.words
        for start in range(0, len(dead), REDUCE_STEP):  # a step at a time: no list of all of them
            for index in dead[start : start + REDUCE_STEP].tolist():
                del ids[words[index]]
                words[index] = None
        self.ids = defaultdict(self._issue, ids)  # shrink the table (insertion order, so ids stay ascending)


def block_ids(block: TokenBlock, ids: np.ndarray) -> np.ndarray:
    """Insert ``SENTENCE_END`` after each sentence end of ``block`` into its ``ids`` (int32)."""
    if not block.ends:
        return ids
    return np.insert(ids, np.asarray(block.ends, dtype=np.int64) + 1, SENTENCE_END)


def count_corpus(
    corpus, prune_at: int = DEFAULT_PRUNE_AT, on_read: OnRead | None = None
) -> tuple[ProvisionalCounts, Iterator[np.ndarray]]:
    """A counter and the corpus' provisional ids, block by block with their sentence
    ends (int32), which it counts as they are read. ``corpus``: a path, URL or
    ``-``, or a list of them, read as bytes (``chunkcounter.ChunkCounter``); or an iterable of
    tokenised sentences (lists of str; ``WordCounter``). Both give a corpus the same ids.
    ``on_read(ReadStatus)`` is called as reading starts and after each block."""
    sources = source_list(corpus)
    if sources is not None:
        with signals_held():  # Numba loads or compiles the counter here: see ``interrupts``
            from w2v.corpus.chunkcounter import (
                ChunkCounter,  # Numba: imported by the first count, not by ``import w2v``
            )

            reader = ChunkCounter(prune_at)
            reader.load_compiled()
        return reader, reader.read(sources, on_read=on_read)
    counter = WordCounter(prune_at)
    return counter, count_sentences(counter, corpus, on_read)


def count_sentences(counter: WordCounter, sentences: Iterable, on_read: OnRead | None) -> Iterator[np.ndarray]:
    """The provisional ids of tokenised ``sentences``, block by block with their sentence
    ends, counted by ``counter`` as they are read; ``on_read`` before the first and
    after each block."""
    if on_read is not None:
        on_read(ReadStatus(None, None, 0, 0))
    for block in sentence_blocks(sentences):
        ids = block_ids(block, counter.add(block.tokens))
        if on_read is not None:
            on_read(ReadStatus(None, None, counter.tokens, counter.held))
        yield ids


def counted(corpus, prune_at: int = DEFAULT_PRUNE_AT, on_read: OnRead | None = None) -> ProvisionalCounts:
    """``count_corpus``'s counter once it has read all of ``corpus`` (its ids dropped)."""
    counter, blocks = count_corpus(corpus, prune_at, on_read)
    for _ in blocks:
        pass  # counted as read
    return counter


def count_words(corpus, prune_at: int = DEFAULT_PRUNE_AT, on_read: OnRead | None = None) -> ProvisionalCounts:
    """Count ``corpus`` (as ``count_corpus``) without keeping its ids; CorpusError if
    it holds no word."""
    counter = counted(corpus, prune_at, on_read)
    check_not_empty(counter.tokens, counter.held, counter.prune_at)
    return counter


class CountTable(NamedTuple):
    """Counted words as they travel between machines: ``words`` (bytes) in order of
    first sight, their ``counts`` (int64), the ``tokens`` read and ``min_reduce``, one
    more than the largest count that pruning dropped (1: nothing pruned)."""

    words: list[bytes]
    counts: np.ndarray
    tokens: int
    min_reduce: int

    @classmethod
    def of(cls, counter: ProvisionalCounts) -> "CountTable":
        """The live words of ``counter`` and their counts."""
        live = counter.live_ids()
        return cls(list(counter.words_of(live)), counter.counts[live], counter.tokens, counter.min_reduce)

    def merged(self, later: "CountTable", prune_at: int) -> "CountTable":
        """The counts of this table's text followed by ``later``'s: words in order of first
        sight (this table's, then ``later``'s new ones), counts summed. Merging the tables
        of a corpus' parts in corpus order, in any grouping, gives the table of the whole
        corpus counted at once when nothing was pruned. Over ``prune_at`` words, the
        words counted at most ``min_reduce`` times are dropped, and ``min_reduce`` grows by
        one, until at most ``prune_at`` are left (ReduceVocab's rule, applied to the sums)."""
        index = {word: i for i, word in enumerate(self.words)}
        found = np.fromiter((index.get(word, -1) for word in later.words), dtype=np.int64, count=len(later.words))
        counts = np.concatenate([self.counts, later.counts[found < 0]])
        np.add.at(counts, found[found >= 0], later.counts[found >= 0])
        words = self.words + [word for word, at in zip(later.words, found.tolist(), strict=True) if at < 0]
        min_reduce = max(self.min_reduce, later.min_reduce)
        while len(counts) > prune_at:
            kept = np.flatnonzero(counts > min_reduce)
            words, counts, min_reduce = [words[i] for i in kept], counts[kept], min_reduce + 1
        return CountTable(words, counts, self.tokens + later.tokens, min_reduce)


def count_table(corpus, prune_at: int = DEFAULT_PRUNE_AT, on_read: OnRead | None = None) -> CountTable:
    """The words and counts of ``corpus`` (as ``count_corpus``) as a ``CountTable``
    (empty if it holds no word)."""
    return CountTable.of(counted(corpus, prune_at, on_read))


def check_not_empty(tokens: int, held: int, prune_at: int) -> None:
    """CorpusError if a count read no token (``tokens``), or pruned every word it
    counted (``held`` words left, pruning at ``prune_at``)."""
    if tokens == 0:
        raise CorpusError("the corpus is empty: it holds no words")
    if held == 0:
        raise CorpusError(
            f"every word was pruned while counting (prune_at={prune_at:,}: past that many distinct "
            "words, the rarest are dropped): raise --prune-at"
        )
