"""The word2vec distribution's other tools as library calls: vocabulary, phrases, word
classes, and held-out scoring.

What ``w2v vocab``, ``w2v phrases``, ``w2v classes`` and ``w2v score`` do, from Python;
each returns what it found and writes only the files it is given::

    import w2v

    counted = w2v.count_vocab("corpus.txt.gz", min_count=5)   # VocabCount: words kept, counts
    counted.save("vocab.txt")                                  # word2vec.c's -save-vocab file
    done = w2v.phrases("corpus.txt.gz", "phrased.txt")         # PhrasedCorpus: the table, what was written
    table = w2v.learn_phrases(sentences, min_count=1)          # a PhraseTable alone, nothing written
    classes = w2v.word_classes(vectors, 500)                   # WordClasses of a Vectors' words
    classes.save("classes.txt")                                # 'word class' lines
    scored = w2v.score("model.npz", "heldout.txt")             # ScoreResult: bits per word, by loss

A corpus is what ``w2v.train`` reads: a path, URL or ``-``, a list of them, or
tokenised sentences. ``cluster`` (``local:N``, a scheduler's address or file;
``w2v.cluster.connect``) counts, or detects and writes phrases, on a Dask
cluster whose workers read the corpus (files or URLs) themselves. ``progress``
shows bars on stderr, as the commands do. Mistakes raise ``W2VError`` with
one-line messages.
"""

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from w2v.cluster.counting import count_at
from w2v.cluster.phrases import check_new_folder, phrases_at
from w2v.config import DEFAULT_PRUNE_AT
from w2v.corpus.counting import CountTable, check_not_empty, count_table
from w2v.corpus.phrases import (
    Corpus,
    PhraseTable,
    WriteReport,
    learn_phrases,
    new_table,
    passes_read,
    spooled_streams,
    write_phrased,
)
from w2v.corpus.sources import source_list
from w2v.corpus.vocab import Vocab, coverage_table
from w2v.engine.heldout_sample import Sampling
from w2v.engine.scoring import ScoreResult, score_model
from w2v.errors import ConfigError
from w2v.progress import Steps, reading
from w2v.vectorio.modelfile import TrainState
from w2v.vectors.classes import Clustering, kmeans, write_classes
from w2v.vectors.wordvectors import Vectors


def cluster_sources(corpus: Corpus) -> list[str]:
    """The sources of ``corpus`` for a cluster's workers to read: files (folders
    expanded) or URLs; ConfigError for sentences, which only this process holds."""
    listed = source_list(corpus)
    sources = [source for source in listed or [] if isinstance(source, str)]
    if not listed or len(sources) < len(listed):
        raise ConfigError("a cluster's workers read the corpus themselves: give files or URLs, not sentences")
    return sources


# --- vocab -------------------------------------------------------------------------------


@dataclass(frozen=True)
class VocabCount:
    """What ``count_vocab`` found: ``vocab``, the words kept (bytes) with their counts
    (int64, (V,)), most frequent first, ties in order of first sight; ``counted``, every
    word counted (a ``CountTable``: words in order of first sight, their counts, the
    tokens read and pruning's ``min_reduce``); ``max_vocab``, the cap on the words kept."""

    vocab: Vocab
    counted: CountTable
    max_vocab: int | None

    @property
    def tokens(self) -> int:
        """Tokens read: the corpus' words, kept or not."""
        return self.counted.tokens

    @property
    def distinct_words(self) -> int:
        """Distinct words counted (those pruning dropped aside), kept or not."""
        return len(self.counted.words)

    @property
    def pruned_up_to(self) -> int:
        """The largest count whose words pruning dropped while counting (0: none were)."""
        return self.counted.min_reduce - 1

    def coverage(self, upto: int = 10) -> list[tuple[int, int, int]]:
        """``(min_count, words, tokens covered)`` for each min-count from 1 to ``upto``,
        keeping at most ``max_vocab`` words: the table ``w2v vocab`` prints."""
        return coverage_table(self.counted.counts, self.max_vocab, upto)

    def save(self, path: str) -> None:
        """Write the kept words as ``word count`` lines (word2vec.c's ``-save-vocab``)."""
        self.vocab.save(path)


def count_vocab(
    corpus: Corpus,
    *,
    min_count: int = 5,
    max_vocab: int | None = None,
    prune_at: int = DEFAULT_PRUNE_AT,
    cluster: str | None = None,
    progress: bool = False,
) -> VocabCount:
    """Count the words of ``corpus`` as ``w2v.train`` does (same tokens; past ``prune_at``
    distinct words the rarest are pruned, as word2vec.c's ReduceVocab) and keep those
    seen at least ``min_count`` times, at most the ``max_vocab`` most frequent.

    Returns a ``VocabCount``; writes nothing (``VocabCount.save`` does). CorpusError if
    the corpus holds no word, pruning left none, or no word reaches ``min_count``.

    >>> count_vocab([["a", "b", "a"], ["a", "c"]], min_count=2).vocab.words
    [b'a']
    """
    if cluster is None:
        from w2v.engine.jit import compiling_noted  # Numba: imported by a count, not by ``import w2v``

        with compiling_noted(), Steps(progress) as steps:
            counted = count_table(corpus, prune_at, on_read=reading(steps))
    else:
        counted = count_at(cluster, cluster_sources(corpus), prune_at, progress)
    check_not_empty(counted.tokens, len(counted.words), prune_at)
    return VocabCount(Vocab.choose(counted.words, counted.counts, min_count, max_vocab), counted, max_vocab)


# --- phrases -----------------------------------------------------------------------------


class PhrasedCorpus(NamedTuple):
    """What ``phrases`` did: the ``table`` of phrases joined (learnt or given) and what was
    ``written`` (lines, tokens read, tokens written)."""

    table: PhraseTable
    written: WriteReport


def phrases(
    corpus: Corpus,
    output: str,
    *,
    passes: int = 1,
    threshold: float | None = None,
    scoring: str = "default",
    min_count: int = 5,
    delimiter: str | bytes = "_",
    prune_at: int = DEFAULT_PRUNE_AT,
    apply_phrases: str | PhraseTable | None = None,
    save_phrases: str | None = None,
    cluster: str | None = None,
    progress: bool = False,
) -> PhrasedCorpus:
    """word2phrase: detect the phrases of ``corpus`` and write it to ``output`` with them
    joined, one line per input line, words separated by one space (``-``: standard
    output; .gz .bz2 .xz .zst compress). Returns a ``PhrasedCorpus``.

    Detection is ``w2v.learn_phrases``' (see ``w2v.corpus.phrases`` for the scores):
    ``passes`` over the corpus (a stream is first copied to a temporary file), each
    joining the last one's phrases again; pairs scoring above ``threshold`` (None: 100
    for ``scoring="default"``, word2phrase's, 0.5 for ``"npmi"``), with the pair and
    its words seen at least ``min_count`` times, are joined by ``delimiter``; counting
    prunes past ``prune_at`` words and pairs. ``apply_phrases``: join this table's
    phrases (a ``PhraseTable``, or a file ``save_phrases`` wrote) instead of detecting
    them. ``save_phrases``: also write the table there.

    ``cluster``: count and write on a Dask cluster; ``output`` is then a new folder of
    parts (``part-00000.txt``, ...), read in name order the text one process writes."""
    if cluster is not None:
        check_new_folder(output)
        if apply_phrases is None:
            table, learnt = new_table(min_count, threshold, scoring, passes, delimiter), passes
        else:
            table, learnt = given_table(apply_phrases), 0
        shared = cluster_sources(corpus)
        written = phrases_at(cluster, shared, table, output, passes=learnt, prune_at=prune_at, show=progress)
        if save_phrases:
            table.save(save_phrases)
        return PhrasedCorpus(table, written)
    with spooled_streams(corpus) as sources, Steps(progress) as steps:
        if apply_phrases is None:
            shown = passes_read(steps, passes)
            table = learn_phrases(sources, passes=passes, threshold=threshold, scoring=scoring, min_count=min_count,
                                  delimiter=delimiter, prune_at=prune_at, on_read=shown)  # fmt: skip
        else:
            table = given_table(apply_phrases)
        if save_phrases:
            table.save(save_phrases)
        written = write_phrased(sources, table, output, on_read=reading(steps, "writing"))
    return PhrasedCorpus(table, written)


def given_table(apply_phrases: str | PhraseTable) -> PhraseTable:
    """The table to apply: ``apply_phrases`` itself, or the file it names, read."""
    if isinstance(apply_phrases, str):
        return PhraseTable.load(apply_phrases)
    return apply_phrases


# --- classes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class WordClasses:
    """What ``word_classes`` found: the ``words`` (V) and the ``clustering`` (``labels``
    (V,) int32, each word's class in 0..k-1, numbered in order of their first word;
    ``centroids`` (k, D) float32 unit rows; the ``iterations`` run; ``mean_similarity``,
    the mean cosine of a word to its centroid)."""

    words: list[str]
    clustering: Clustering

    @property
    def labels(self) -> np.ndarray:
        """(V,) int32: the class of each of ``words``."""
        return self.clustering.labels

    def __iter__(self) -> Iterator[tuple[str, int]]:
        """``(word, class)`` pairs, in the vectors' word order."""
        return zip(self.words, self.labels.tolist(), strict=True)

    def save(self, path: str, order: str = "class") -> None:
        """Write ``word class`` lines: sorted by class (``order="class"``, the words of a
        class in vocabulary order, as the word2vec demo sorts them), or in the vectors'
        word order (``"vocab"``, word2vec.c's own output)."""
        write_classes(path, self.words, self.labels, order=order)


def word_classes(
    vectors: Vectors,
    k: int,
    *,
    iterations: int = 10,
    seed: int = 1,
    init: str = "kmeans++",
    progress: bool = False,
) -> WordClasses:
    """Cluster the words of ``vectors`` into ``k`` classes, as word2vec.c's ``-classes``:
    spherical k-means on the unit vectors (``w2v.vectors.classes``), for at most
    ``iterations`` (fewer once no word changes class), seeded by k-means++ drawn with
    ``seed`` or (``init="word2vec"``) word2vec.c's word ``i`` in class ``i mod k``.
    Returns ``WordClasses``; writes nothing (``WordClasses.save`` does). ConfigError
    for more classes than words."""
    with Steps(progress) as steps:
        found = kmeans(vectors.vectors, k, iterations=iterations, seed=seed, init=init, on_step=steps)
    return WordClasses(list(vectors.words), found)


def score(
    model: str,
    corpus: Corpus,
    *,
    window: int | None = None,
    max_pairs: int | None = None,
    max_normalised: int | None = None,
    seed: int = 1,
) -> ScoreResult:
    """Held-out cross-entropy of ``model``'s own prediction task on ``corpus``, in bits
    per predicted word, for each of its losses (``w2v.engine.scoring``): ``model`` a
    ``save_model`` file or a checkpoint (folder or file); ``window`` the pairs' reach
    (default the model's); every prediction scored exactly unless ``max_pairs`` or
    ``max_normalised`` sample them (drawn with ``seed``), the figure then with its
    standard error. Returns ``ScoreResult``; FormatError for a file that is no model.
    A first run says on stderr that it compiles the scoring kernels (``jit.compiling_noted``)."""
    from w2v.engine.jit import compiling_noted  # Numba: imported to score, not by ``import w2v``

    state = TrainState.load(model)
    with compiling_noted(), tempfile.TemporaryDirectory(prefix="w2v-") as workdir:
        return score_model(state, corpus, workdir, window, Sampling(max_pairs, max_normalised, seed))
