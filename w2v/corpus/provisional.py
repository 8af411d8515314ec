"""Provisional counts: what the two corpus counters share (``counting.WordCounter`` in
Python, ``chunkcounter.ChunkCounter`` compiled): a count per provisional id, word2vec.c's
pruning, and the reading status they report."""

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from w2v.config import DEFAULT_PRUNE_AT
from w2v.errors import CorpusError

MAX_PROVISIONAL_IDS = (1 << 31) - 1  # provisional ids are int32


def grown(array: np.ndarray, used: int, needed: int) -> np.ndarray:
    """``array``, or, if it is shorter than ``needed``, a zeroed one at least twice as
    long holding its first ``used`` items (pages not yet written cost no memory)."""
    if len(array) >= needed:
        return array
    bigger = np.zeros(max(needed, 2 * len(array)), dtype=array.dtype)
    bigger[:used] = array[:used]
    return bigger


class ProvisionalCounts(ABC):
    """What the two counters share: a count per provisional id, the tokens counted,
    and pruning as in word2vec.c's ReduceVocab. When more than ``prune_at``
    distinct words are held after a block, the rarest are dropped: words seen at
    most ``min_reduce`` times go, then ``min_reduce`` grows by one. A pruned
    word's count is 0 and, seen again, it starts a new count under a new
    provisional id; a live word's count is at least 1.

    Memory: ``counts`` takes 8 bytes per provisional id issued, live or pruned (16 for a
    moment while it doubles), the one cost that grows with the ids and not with the
    words held.

    Subclasses issue the ids (in order of first sight), say how many they issued
    (``issued``) and how many words they hold (``held``), give the words of ids
    and the ids of words (``words_of``, ``find``), and forget pruned words (``_forget``)."""

    def __init__(self, prune_at: int = DEFAULT_PRUNE_AT):
        self.prune_at = prune_at
        self.counts = np.zeros(1 << 16, dtype=np.int64)  # provisional id -> count
        self.min_reduce = 1
        self.tokens = 0

    @property
    @abstractmethod
    def issued(self) -> int:
        """Provisional ids issued so far, live or pruned."""

    @property
    @abstractmethod
    def held(self) -> int:
        """Distinct words held (live)."""

    @abstractmethod
    def words_of(self, ids: np.ndarray) -> Sequence[bytes]:
        """The words of live provisional ``ids``."""

    @abstractmethod
    def find(self, words: Sequence[bytes]) -> np.ndarray:
        """The provisional ids of ``words`` (int64), -1 for a word not held."""

    @abstractmethod
    def _forget(self, dead: np.ndarray) -> None:
        """Drop the words of provisional ids ``dead`` (int64) from the table."""

    def check_room(self, new_ids: int) -> None:
        """Raise CorpusError if up to ``new_ids`` more ids would not fit in int32."""
        if self.issued + new_ids > MAX_PROVISIONAL_IDS:
            raise CorpusError(
                f"counting needs more than {MAX_PROVISIONAL_IDS:,} word ids (one per distinct word, one more "
                "each time a pruned word comes back): split the corpus, or raise --prune-at"
            )

    def counted(self, provisional: np.ndarray) -> None:
        """Add one block's provisional ids (int32, no sentence ends) to the counts and
        prune if too many words are held."""
        self._count(provisional)
        self.tokens += len(provisional)
        while self.held > self.prune_at:
            self._reduce()

    def _count(self, provisional: np.ndarray) -> None:
        """Add one block's ids to ``counts``, with work bounded by the block: a bincount
        while the ids issued are few next to the block, else a sort (``np.unique``)."""
        self.counts = grown(self.counts, len(self.counts), self.issued)
        if self.issued <= 4 * len(provisional):
            seen = np.bincount(provisional)
            self.counts[: len(seen)] += seen
        else:
            distinct, times = np.unique(provisional, return_counts=True)
            self.counts[distinct] += times

    def _reduce(self) -> None:
        """Drop every word counted at most ``min_reduce`` times (word2vec.c ReduceVocab)."""
        live = self.live_ids()
        dead = live[self.counts[live] <= self.min_reduce]
        del live
        self._forget(dead)
        self.counts[dead] = 0
        self.min_reduce += 1

    def live_ids(self) -> np.ndarray:
        """Provisional ids of the words still held (int64, ascending)."""
        return np.flatnonzero(self.counts[: self.issued])


class ReadStatus(NamedTuple):
    """How far reading a corpus has come, for a progress display: ``bytes_read`` of
    ``total_bytes`` (as stored: compressed bytes of a compressed file; None for
    tokenised sentences, and the total None where unknown), the ``tokens`` counted and
    the distinct ``words`` held (None where not counted)."""

    bytes_read: int | None
    total_bytes: int | None
    tokens: int | None
    words: int | None


OnRead = Callable[[ReadStatus], None]
