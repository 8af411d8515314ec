"""The vocabulary: counting with pruning, frequency order, subsampling, noise, Huffman codes.

No Numba here: everything runs once per training run, in numpy or plain Python.
"""

import itertools
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from w2v.errors import CorpusError, FormatError
from w2v.files import write_atomic

MAX_CODE_LENGTH = 40  # word2vec.c's MAX_CODE_LENGTH
ALIAS_ONE = 1 << 24  # alias thresholds are fractions of 2**24 (see kernels.draw_noise)
DEFAULT_PRUNE_AT = 10_000_000  # distinct words held while counting (word2vec.c: 21M)
MAX_PROVISIONAL_IDS = (1 << 31) - 1  # provisional ids are int32
REDUCE_STEP = 1 << 16  # pruned words deleted per step


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


class WordCounter(ProvisionalCounts):
    """Counts words block by block (lists of tokens), giving each a provisional id in
    order of first sight, with pruning (``ProvisionalCounts``). Pruning happens
    after each ``add``, so up to one block's new words more than ``prune_at`` are
    held for a moment. ``scan.ChunkCounter`` does the same from raw bytes.

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
      ``train.count_and_encode`` adds 4 bytes per id for its remap table.

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


@dataclass
class Vocab:
    """Words (bytes) and their corpus counts (int64), most frequent first."""

    words: list[bytes]
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.words)

    @property
    def total(self) -> int:
        """Sum of the counts: the words of one epoch."""
        return int(self.counts.sum())

    @classmethod
    def select(
        cls, words: Sequence[bytes], counts: np.ndarray, min_count: int, max_size: int | None
    ) -> tuple["Vocab", np.ndarray]:
        """Keep words with count >= ``min_count``, sorted by count descending (ties
        in the given order), then the ``max_size`` first. Returns the vocabulary and
        the indices into ``words`` it kept, in vocabulary order."""
        counts = np.asarray(counts, dtype=np.int64)
        order = np.lexsort((np.arange(len(counts)), -counts))
        order = order[counts[order] >= min_count]
        if max_size is not None:
            order = order[:max_size]
        # copies: the originals share memory pages with the many words not kept, which
        # can then all be freed (copying 68k words frees 23 MB on the benchmark corpus)
        return cls([bytes(bytearray(words[i])) for i in order], counts[order]), order

    def keep_probabilities(self, sample: float) -> np.ndarray:
        """Probability of keeping each word (float32, (V,)) under word2vec.c's subsampling:
        ``(sqrt(f / (s T)) + 1) (s T) / f``, capped at 1; all ones when ``sample`` is 0."""
        if sample <= 0:
            return np.ones(len(self), dtype=np.float32)
        threshold = sample * self.total
        ratio = threshold / self.counts
        keep = np.sqrt(1.0 / ratio) * ratio + ratio
        return np.minimum(keep, 1.0).astype(np.float32)

    def noise_distribution(self, exponent: float) -> np.ndarray:
        """The negative-sampling distribution counts**exponent, normalised (float64, (V,))."""
        weights = self.counts.astype(np.float64) ** exponent
        return weights / weights.sum()

    def alias_table(self, exponent: float) -> tuple[np.ndarray, np.ndarray]:
        """Walker/Vose alias table of ``noise_distribution(exponent)``.

        Returns ``(threshold, alias)``: (V,) uint32 thresholds in [0, 2**24] and (V,)
        int32 aliases. A draw picks a column c uniformly, then c if a 24-bit uniform
        is below threshold[c], else alias[c]. Exact up to 2**-24 per column, and
        (V,) in size where word2vec.c spends 400 MB on a 1e8-entry table.
        """
        return build_alias(self.noise_distribution(exponent))

    def huffman(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Huffman codes of word2vec.c's CreateBinaryTree. Returns
        ``(codes, points, offsets)``: word w's path from the root is
        ``codes[offsets[w]:offsets[w+1]]`` (uint8 bits) and ``points[...]`` (int32
        inner-node rows of syn1, the root being V - 2)."""
        return huffman_codes(self.counts)

    def save(self, path: str) -> None:
        """Write word2vec.c's vocabulary file: ``word count`` lines, most frequent first."""
        write_atomic(path, b"".join(b"%s %d\n" % pair for pair in zip(self.words, self.counts.tolist(), strict=True)))

    @staticmethod
    def read_counts(path: str) -> tuple[list[bytes], np.ndarray]:
        """Read a ``word count`` file (word2vec.c -save-vocab, or ours). word2vec.c's
        ``</s>`` entry (its newline token) is skipped: newlines are not words here."""
        words, counts = [], []
        try:
            with open(path, "rb") as lines:
                for number, line in enumerate(lines, 1):
                    fields = line.split()
                    if not fields:
                        continue
                    if len(fields) != 2 or not fields[1].isdigit():
                        raise FormatError(f"{path}: line {number} is not 'word count'")
                    if fields[0] != b"</s>":
                        words.append(fields[0])
                        counts.append(int(fields[1]))
        except OSError as err:
            raise FormatError(f"cannot read vocabulary {path}: {err.strerror}") from None
        return words, np.asarray(counts, dtype=np.int64)


def build_alias(probabilities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias method over ``probabilities`` (float64, (V,), summing to 1)."""
    size = len(probabilities)
    scaled = probabilities * size
    threshold = np.full(size, ALIAS_ONE, dtype=np.uint32)
    alias = np.arange(size, dtype=np.int32)
    small = [int(i) for i in np.flatnonzero(scaled < 1.0)]
    large = [int(i) for i in np.flatnonzero(scaled >= 1.0)]
    scaled = scaled.tolist()
    while small and large:
        lo, hi = small.pop(), large[-1]
        threshold[lo] = round(scaled[lo] * ALIAS_ONE)
        alias[lo] = hi
        scaled[hi] -= 1.0 - scaled[lo]
        if scaled[hi] < 1.0:
            small.append(large.pop())
    return threshold, alias


def huffman_codes(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """word2vec.c's CreateBinaryTree over ``counts`` sorted descending (int64, (V,)).

    The two-pointer merge builds inner nodes V .. 2V-2; word w's code is read from
    the root down. See ``Vocab.huffman`` for the returned arrays.
    """
    size = len(counts)
    if size < 2:
        return np.zeros(0, np.uint8), np.zeros(0, np.int32), np.zeros(size + 1, np.int64)
    count = np.concatenate([counts, np.full(size, np.iinfo(np.int64).max // 4)]).tolist()
    parent = [0] * (2 * size - 1)
    binary = [0] * (2 * size - 1)
    pos1, pos2 = size - 1, size
    for node in range(size, 2 * size - 1):
        pair = []
        for _ in range(2):
            if pos1 >= 0 and count[pos1] < count[pos2]:
                pair.append(pos1)
                pos1 -= 1
            else:
                pair.append(pos2)
                pos2 += 1
        count[node] = count[pair[0]] + count[pair[1]]
        parent[pair[0]] = parent[pair[1]] = node
        binary[pair[1]] = 1
    parent_arr = np.asarray(parent, dtype=np.int64)
    binary_arr = np.asarray(binary, dtype=np.uint8)
    root = 2 * size - 2
    lengths = np.zeros(size, dtype=np.int64)
    nodes = np.arange(size, dtype=np.int64)
    while (active := np.flatnonzero(nodes != root)).size:  # walk all words up at once
        lengths[active] += 1
        nodes[active] = parent_arr[nodes[active]]
    if lengths.max() > MAX_CODE_LENGTH:
        raise ValueError(f"Huffman code longer than {MAX_CODE_LENGTH} bits")
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    codes = np.empty(offsets[-1], dtype=np.uint8)
    points = np.empty(offsets[-1], dtype=np.int32)
    nodes = np.arange(size, dtype=np.int64)
    for step in range(int(lengths.max())):  # step from the leaf; its place from the root
        active = np.flatnonzero(lengths > step)
        place = offsets[active] + lengths[active] - 1 - step
        codes[place] = binary_arr[nodes[active]]
        points[place] = parent_arr[nodes[active]] - size  # the inner node deciding that bit
        nodes[active] = parent_arr[nodes[active]]
    return codes, points, offsets
