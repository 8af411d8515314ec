"""The vocabulary: selection and frequency order, subsampling, noise, Huffman codes, files.

No Numba here: everything runs once per training run, in numpy or plain Python.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from w2v.corpus.sources import line_words
from w2v.errors import CorpusError, FormatError, plural
from w2v.files import skip_bom, write_atomic
from w2v.words import decode_word, encode_word

MAX_CODE_LENGTH = 40  # word2vec.c's MAX_CODE_LENGTH
# The most that a vocabulary's counts may add up to, 2**60 (about 1.2e18 words, 100,000 times the
# largest corpora): their sum and the Huffman tree's node counts stay inside int64 (and below
# ``huffman_codes``' sentinel count), where a sum that wrapped around made subsampling's keep
# probabilities NaN.
MAX_TOTAL_COUNT = 2**60
MAX_COUNT_DIGITS = len(str(MAX_TOTAL_COUNT))  # a longer count is too large (and int() refuses 4,300 digits)
ALIAS_ONE = 1 << 24  # alias thresholds are fractions of 2**24 (see kernels.draw_noise)


def text_words(line: str) -> list[str]:
    """The words of a line of text as a corpus line's are split (``sources.line_words``:
    at ASCII whitespace, each cut to ``MAX_WORD_BYTES`` bytes), so that a word holding
    NBSP, U+3000 or U+2028, as a corpus word may, stays one word (``str.split`` would
    split it there)."""
    return [decode_word(word) for word in line_words(encode_word(line))]


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
        # can then all be freed
        return cls([bytes(bytearray(words[i])) for i in order], counts[order]), order

    @classmethod
    def choose(cls, words: Sequence[bytes], counts: np.ndarray, min_count: int, max_size: int | None) -> "Vocab":
        """``select``'s vocabulary; CorpusError if no word is left."""
        vocab = cls.select(words, counts, min_count, max_size)[0]
        if len(vocab) == 0:
            most = int(np.max(counts, initial=0))
            raise CorpusError(
                f"the vocabulary is empty: no word occurs at least {plural(min_count, 'time')} "
                f"(min_count; the most frequent occurs {plural(most, 'time')})"
            )
        return vocab

    def merged(self, words: Sequence[bytes], counts: np.ndarray, min_count: int) -> "Vocab":
        """This vocabulary plus the ``words`` seen at least ``min_count`` times (their
        ``counts``); a word already here has its count grown by its new count. Sorted by
        count again (ties: this vocabulary's words first, in their order), as a fresh
        vocabulary would be (``--update-vocab``)."""
        merged = dict(zip(self.words, self.counts.tolist(), strict=True))
        for word, count in zip(words, np.asarray(counts).tolist(), strict=True):
            if word in merged:
                merged[word] += count
            elif count >= min_count:
                merged[word] = count
        return Vocab.select(list(merged), np.fromiter(merged.values(), np.int64, len(merged)), 1, None)[0]

    def keep_probabilities(self, sample: float) -> np.ndarray:
        """Probability of keeping each word (float32, (V,)) under word2vec.c's subsampling:
        ``(sqrt(f / (s T)) + 1) (s T) / f``, capped at 1; all ones when ``sample`` is 0."""
        if sample <= 0:
            return np.ones(len(self), dtype=np.float32)
        threshold = sample * self.total
        ratio = threshold / self.counts
        with np.errstate(over="ignore", invalid="ignore"):  # inf x a subnormal ratio (sample 1e-320); 0 x inf (1e308)
            keep = np.sqrt(1.0 / ratio) * ratio + ratio  # word2vec.c's arithmetic, to the last bit
        keep = np.where(np.isfinite(keep), keep, np.sqrt(ratio) + ratio)  # the same sum, where that overflowed
        return np.minimum(keep, 1.0).astype(np.float32)

    def noise_distribution(self, exponent: float) -> np.ndarray:
        """The negative-sampling distribution counts**exponent, normalised (float64, (V,)):
        word2vec.c's powers where their sum is a positive float, else computed in log
        space (``log_noise``: an exponent such as 300 or -300 overflows or underflows
        the powers), so that every finite exponent gives a distribution."""
        with np.errstate(over="ignore"):  # an infinite power or sum: log space below
            weights = self.counts.astype(np.float64) ** exponent
            total = weights.sum()
        if 0 < total < np.inf:
            return weights / total
        return np.exp(log_noise(self.counts, exponent))

    def log_noise_distribution(self, exponent: float) -> np.ndarray:
        """The log of ``noise_distribution`` (float64, (V,)): in log space (``log_noise``)
        where a word's probability underflows to 0, so that it stays finite."""
        distribution = self.noise_distribution(exponent)
        return np.log(distribution) if distribution.all() else log_noise(self.counts, exponent)

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

    def tree(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``huffman``'s arrays for the tree ``kind``: "huffman", or "balanced"
        (``balanced_codes``)."""
        return self.huffman() if kind == "huffman" else balanced_codes(len(self))

    @staticmethod
    def no_paths(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``huffman``'s arrays for ``size`` words with empty paths (no tree: fewer
        than two words, or hierarchical softmax off)."""
        return np.zeros(0, np.uint8), np.zeros(0, np.int32), np.zeros(size + 1, np.int64)

    def save(self, path: str) -> None:
        """Write word2vec.c's vocabulary file: ``word count`` lines, most frequent first."""
        write_atomic(path, b"".join(b"%s %d\n" % pair for pair in zip(self.words, self.counts.tolist(), strict=True)))

    @staticmethod
    def read_counts(path: str) -> tuple[list[bytes], np.ndarray]:
        """Read a ``word count`` file (word2vec.c -save-vocab, or ours). word2vec.c's
        ``</s>`` entry (its newline token) is skipped: newlines are not words here; so is
        a UTF-8 byte-order mark at its start.
        FormatError for a line that is not ``word count``, a word listed twice (it
        would get two vectors) or counts adding up to more than ``MAX_TOTAL_COUNT``."""
        lines_of: dict[bytes, int] = {}  # each word's line number, in the file's order
        counts: list[int] = []
        total = 0
        try:
            with open(path, "rb") as lines:
                for number, line in enumerate(skip_bom(lines), 1):
                    fields = line.split()
                    if not fields:
                        continue
                    if len(fields) != 2 or not fields[1].isdigit():
                        raise FormatError(f"{path}: line {number} is not 'word count'")
                    word, digits = fields
                    if word == b"</s>":
                        continue
                    if word in lines_of:
                        raise FormatError(
                            f"{path}: {decode_word(word)!r} is listed twice, on lines {lines_of[word]} and {number}"
                        )
                    if len(digits) > MAX_COUNT_DIGITS or (total := total + int(digits)) > MAX_TOTAL_COUNT:
                        raise FormatError(
                            f"{path}: line {number}: the counts add up to more than {MAX_TOTAL_COUNT:,} (2**60)"
                        )
                    lines_of[word] = number
                    counts.append(int(digits))
        except OSError as err:
            raise FormatError(f"cannot read vocabulary {path}: {err.strerror}") from None
        return list(lines_of), np.asarray(counts, dtype=np.int64)


def log_noise(counts: np.ndarray, exponent: float) -> np.ndarray:
    """log(counts**exponent / sum(counts**exponent)) (float64, (V,)) for counts (V,) of
    at least 1, in log space: ``exponent (log c - log c*)``, c* the count of the
    likeliest word (the largest for a positive exponent, the smallest for a negative
    one), is at most 0 and 0 at c*, so its log-sum-exp neither overflows nor
    underflows. -inf only for a word whose log-probability is below -1.8e308."""
    logs = np.log(counts.astype(np.float64))
    likeliest = logs.max() if exponent >= 0 else logs.min()
    with np.errstate(over="ignore"):  # past float64's range: -inf, a probability of 0
        relative = exponent * (logs - likeliest)
    return relative - np.log(np.exp(relative).sum())


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
        return Vocab.no_paths(size)
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


def coverage_table(counts: np.ndarray, max_vocab: int | None, upto: int = 10) -> list[tuple[int, int, int]]:
    """``(min_count, words, tokens covered)`` for min-count 1..``upto`` over word ``counts``
    (any order), keeping at most ``max_vocab`` words as ``Vocab.select`` does."""
    ordered = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    covered = np.concatenate([[0], np.cumsum(ordered)])
    rows = []
    for min_count in range(1, upto + 1):
        words = int(np.searchsorted(-ordered, -min_count, side="right"))
        if max_vocab is not None:
            words = min(words, max_vocab)
        rows.append((min_count, words, int(covered[words])))
    return rows


def balanced_codes(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A balanced binary tree over ``size`` words, in ``Vocab.huffman``'s arrays: the
    heap-ordered complete tree of 2 size - 1 nodes, inner nodes 0 .. size - 2 (the
    root 0, node p's children 2p + 1 and 2p + 2, bit 1 for the right one) and word w
    on leaf size - 1 + w, so the words sit on the leaves in frequency order and the
    most frequent ones on the shallower level. Paths are ceil(log2 size) bits or one
    shorter."""
    if size < 2:
        return Vocab.no_paths(size)
    leaves = np.arange(size - 1, 2 * size - 1, dtype=np.int64)
    lengths = np.floor(np.log2(leaves + 1)).astype(np.int64)  # a node's depth is floor(log2(p + 1))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    codes = np.empty(offsets[-1], dtype=np.uint8)
    points = np.empty(offsets[-1], dtype=np.int32)
    nodes = leaves.copy()
    for step in range(int(lengths.max())):  # step from the leaf; its place from the root
        active = np.flatnonzero(lengths > step)
        place = offsets[active] + lengths[active] - 1 - step
        codes[place] = (nodes[active] % 2 == 0).astype(np.uint8)  # a right child has an even position
        nodes[active] = (nodes[active] - 1) // 2
        points[place] = nodes[active]
    return codes, points, offsets
