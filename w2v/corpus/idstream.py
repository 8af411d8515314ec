"""The corpus encoded as vocabulary ids: written once, read back per batch.

An id stream is a file of int32 vocabulary ids in which ``SENTENCE_END`` (-1)
ends a sentence, cut into batches that end at sentence ends. Training reads
one batch at a time (``IdStream.batch``), so its memory does not grow with the
corpus; every epoch reads the same file.

The id files have no name: each is unlinked as it is created
(``tempfile.TemporaryFile``) and used through its open descriptor, so that no
exit, SIGKILL included, can leave one behind.
"""

import os
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.counting import OnRead, check_not_empty, count_corpus
from w2v.corpus.parts import even_bounds
from w2v.corpus.sources import SENTENCE_END
from w2v.corpus.vocab import Vocab
from w2v.errors import CorpusError, plural

ENCODE_IDS = 1 << 20  # provisional ids remapped per step


class IdStream:
    """An int32 id stream in the file open as descriptor ``fd`` (which it owns and
    closes), split into batches that end at sentence ends.

    ``batch_starts`` (B + 1,) int64 are offsets (in ids) of the batches in the file,
    ``batch_words`` (B,) int64 the number of word ids (not sentence ends) in each.
    Batches are read in training order: the file's until ``reorder`` changes it.
    """

    def __init__(self, fd: int, batch_starts: np.ndarray, batch_words: np.ndarray):
        self.starts, self.ends = batch_starts[:-1], batch_starts[1:]  # (B,) each, in training order
        self.batch_words = batch_words
        self.words = int(batch_words.sum())
        self._fd = fd

    def __len__(self) -> int:
        return len(self.batch_words)

    @property
    def longest(self) -> int:
        """Ids (words and sentence ends) in the longest batch: the size of a buffer for ``batch``."""
        return int((self.ends - self.starts).max(initial=0))

    def reorder(self, order: np.ndarray) -> None:
        """Train the batches in ``order`` ((B,) int64, a permutation of the current
        order): batch i becomes the one that was ``order[i]``."""
        self.starts, self.ends, self.batch_words = self.starts[order], self.ends[order], self.batch_words[order]

    def batch(self, index: int, out: np.ndarray | None = None) -> np.ndarray:
        """The ids of batch ``index``: read into the front of ``out`` (int32, at least
        ``longest`` long; a worker reuses one, so reading allocates nothing) and
        returned as a view of it, or into a fresh array."""
        start, end = self.starts[index], self.ends[index]
        count = int(end - start)
        ids = (np.empty(count, dtype=np.int32) if out is None else out)[:count]
        if read_at(self._fd, ids.data.cast("B"), int(start) * 4) != 4 * count:
            raise CorpusError("the encoded corpus (a temporary file) was cut short")
        return ids

    def fileno(self) -> int:
        """The descriptor of the id file."""
        return self._fd

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
    """Writes an id stream block by block, into a nameless file in the folder
    ``workdir``, and chooses batch bounds as it goes.

    A batch ends at the first sentence end at or after its ``batch_size``-th id,
    so that no sentence is split between two batches; or, ``exact``, after its
    ``batch_size``-th word, the sentence cut there if it goes on
    (``cut_at_batch_ends``). ``neighbours``: two words of the stream written so far
    stand side by side in a sentence, so that a word has a context to train on.
    """

    def __init__(self, workdir: str, batch_size: int, exact: bool = False):
        self.batch_size, self.exact = batch_size, exact
        self._file = tempfile.TemporaryFile(dir=workdir)  # noqa: SIM115 - handed to the stream in finish()
        self._written = 0
        self._ends_written = 0
        self._words_written = 0
        self._cut_last = False  # ``exact``: the ids written end with a cut
        self._starts = [0]  # id offset of each batch
        self._ends_before = [0]  # sentence ends before each batch
        self._last = SENTENCE_END  # the last id written
        self.neighbours = False

    def write(self, ids: np.ndarray) -> None:
        """Append int32 ``ids`` (with ``SENTENCE_END`` markers) to the stream."""
        ids = ids.astype(np.int32, copy=False)
        if self.exact:
            ids, starts, self._cut_last = cut_at_batch_ends(ids, self.batch_size, self._words_written, self._cut_last)
        self._file.write(ids.tobytes())
        if len(ids):
            self.neighbours = self.neighbours or side_by_side(ids, self._last)
            self._last = int(ids[-1])
        ends = np.flatnonzero(ids == SENTENCE_END) + self._written
        if self.exact:
            starts += self._written  # offsets in the stream
            self._starts.extend(starts.tolist())
            self._ends_before.extend((self._ends_written + np.searchsorted(ends, starts)).tolist())
        else:
            self._add_sentence_batches(ends)
        self._written += len(ids)
        self._ends_written += len(ends)
        self._words_written += len(ids) - len(ends)

    def _add_sentence_batches(self, ends: np.ndarray) -> None:
        """Start a batch after each sentence end (``ends``, stream offsets of the
        block's) at or after the current batch's ``batch_size``-th id."""
        while True:
            k = int(np.searchsorted(ends, self._starts[-1] + self.batch_size - 1))
            if k == len(ends):
                break
            self._starts.append(int(ends[k]) + 1)
            self._ends_before.append(self._ends_written + k + 1)

    def finish(self) -> IdStream:
        """Return the stream for reading; it takes over the file's descriptor."""
        self._file.flush()
        fd = os.dup(self._file.fileno())
        self._file.close()
        if self._written > self._starts[-1]:
            self._starts.append(self._written)
            self._ends_before.append(self._ends_written)
        starts = np.asarray(self._starts, dtype=np.int64)
        words = np.diff(starts) - np.diff(np.asarray(self._ends_before, dtype=np.int64))
        return IdStream(fd, starts, words)


def side_by_side(ids: np.ndarray, before: int) -> bool:
    """Whether two words stand side by side in ``ids`` (int32, ``SENTENCE_END``
    between sentences; not empty), or the id ``before`` them and their first."""
    words = ids != SENTENCE_END
    return (before != SENTENCE_END and bool(words[0])) or bool(np.any(words[1:] & words[:-1]))


def cut_at_batch_ends(
    ids: np.ndarray, size: int, words_before: int, cut_last: bool
) -> tuple[np.ndarray, np.ndarray, bool]:
    """A sentence end after every ``size``-th word of a stream, so that it falls into
    batches of exactly ``size`` words that end at sentence ends: where a sentence goes
    on past such a word, it is cut there (a ``SENTENCE_END`` inserted), as word2vec.c
    cuts its sentences every 1,000 words. ``ids`` (int32, ``SENTENCE_END`` markers) is
    a block of the stream after ``words_before`` words; ``cut_last``: the block before
    ended with a cut, so a ``SENTENCE_END`` opening this one is already written and
    dropped. Returns the block cut, the offsets (int64, in the block cut) at which the
    next batches start, and whether the block cut ends with a cut."""
    if not len(ids):
        return ids, np.empty(0, dtype=np.int64), cut_last
    if cut_last and ids[0] == SENTENCE_END:
        ids = ids[1:]
    word = ids != SENTENCE_END
    last = np.flatnonzero(word & ((words_before + np.cumsum(word)) % size == 0))  # each batch's last word
    ended = (last + 1 < len(ids)) & (ids[np.minimum(last + 1, len(ids) - 1)] == SENTENCE_END)
    cuts = last[~ended] + 1
    starts = last + np.searchsorted(cuts, last, side="right") + 2  # past the word and its sentence end
    return np.insert(ids, cuts, SENTENCE_END), starts, bool(len(cuts)) and int(cuts[-1]) == len(ids)


def evenly_spaced(batches: int, streams: int) -> np.ndarray:
    """The training order of ``batches`` batches taken as ``streams`` evenly spaced
    streams, as word2vec.c's threads each train their own part of the file: stream
    s holds batches [floor(s B / S), floor((s + 1) B / S)), and the order takes the
    first batch of every stream, then the second of every stream, and so on
    (streams run out one batch apart at most). Whatever the number of threads,
    consecutive jobs then come from distant text. Returns (B,) int64, the batch at
    each place; ``streams=1``, or ``streams >= B`` (a batch a stream), is the file's order."""
    streams = max(min(streams, batches), 1)
    bounds = even_bounds(batches, streams)
    lengths = np.diff(bounds)
    stream = np.repeat(np.arange(streams, dtype=np.int64), lengths)
    place = np.arange(batches, dtype=np.int64) - np.repeat(bounds[:-1], lengths)  # within its stream
    return np.lexsort((stream, place))


VocabChooser = Callable[[Sequence[bytes], np.ndarray], Vocab]


@dataclass
class Encoded:
    """The corpus as vocabulary ids, with its fingerprint."""

    vocab: Vocab
    stream: IdStream
    corpus_words: int  # tokens read (rare words included)
    digest: int  # CRC-32 of the id stream: a resumed run checks it reads the same corpus
    neighbours: bool  # two words stand side by side in a sentence: a word has a context (``IdStreamWriter``)


def encode_corpus(
    corpus,
    config: TrainConfig,
    workdir: str,
    choose: VocabChooser | None = None,
    on_read: OnRead | None = None,
    exact_batches: bool = False,
) -> Encoded:
    """One pass over ``corpus`` (``counting.count_corpus``): count words and write
    their provisional ids to ``workdir``; then ``choose(words, counts)`` the
    vocabulary from the counts (words kept after pruning, first-occurrence order;
    by default ``Vocab.choose`` by ``config.min_count`` and ``config.max_vocab``)
    and rewrite the ids as vocabulary ids (words outside it dropped) into an
    ``IdStream`` of ``config.batch_words`` batches (``IdStreamWriter``, ``exact``
    if ``exact_batches``). Both id files are nameless files in ``workdir``; an
    OSError of theirs (a full ``$TMPDIR``, mostly) is raised as one CorpusError
    line, and reading the corpus raises CorpusError already.
    ``on_read(counting.ReadStatus)`` follows the reading."""
    if choose is None:
        choose = lambda words, counts: Vocab.choose(words, counts, config.min_count, config.max_vocab)  # noqa: E731
    try:
        counter, blocks = count_corpus(corpus, config.prune_at, on_read)
        with tempfile.TemporaryFile(dir=workdir) as provisional:
            for ids in blocks:
                provisional.write(ids.tobytes())
            check_not_empty(counter.tokens, counter.held, counter.prune_at)
            live = counter.live_ids()
            vocab = choose(counter.words_of(live), counter.counts[live])
            mapping = np.full(counter.issued + 1, -2, dtype=np.int32)  # last slot: SENTENCE_END
            mapping[-1] = SENTENCE_END
            found = counter.find(vocab.words)  # a word of an old vocabulary may not be in this corpus
            mapping[found[found >= 0]] = np.flatnonzero(found >= 0)
            writer = IdStreamWriter(workdir, config.batch_words, exact_batches)
            digest = 0
            provisional.seek(0)
            while (ids := np.fromfile(provisional, dtype=np.int32, count=ENCODE_IDS)).size:
                mapped = mapping[ids]  # SENTENCE_END (-1) indexes the last slot
                mapped = mapped[mapped != -2]
                writer.write(mapped)
                digest = zlib.crc32(mapped.tobytes(), digest)
            return Encoded(vocab, writer.finish(), counter.tokens, digest, writer.neighbours)
    except OSError as err:
        raise CorpusError(f"cannot write the encoded corpus in {workdir} ($TMPDIR): {err.strerror or err}") from None


def check_trainable(words: int, *, neighbours: bool, tokens: int, vocabulary: str | None) -> None:
    """CorpusError where an encoded corpus gives training nothing: none of the corpus'
    ``tokens`` is a word of the vocabulary (read from the file ``vocabulary``, a
    ``read_vocab`` or a model's), so that its stream holds no ``words``; or no two of
    its words stand side by side in a sentence (not ``neighbours``: a corpus of
    one-word lines), so that no word has a context and every epoch's loss is NaN."""
    if words == 0:
        source = f" of {vocabulary}" if vocabulary else ""
        raise CorpusError(
            f"none of the corpus' {plural(tokens, 'word')} is in the vocabulary{source}: nothing to train"
        )
    if not neighbours:
        raise CorpusError(
            "nothing to train: no sentence (line) of the corpus holds two words of the vocabulary, "
            "so no word has a context"
        )
