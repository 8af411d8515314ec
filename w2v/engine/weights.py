"""The model's weights and the tables the training kernel reads with them.

- ``syn0`` (V, D) float32: input vectors, the word vectors written out. With
  subwords, (V + B, D): the words' rows, then B = ``bucket`` rows of character
  n-grams, a word's input vector being the mean of its rows (``Tables.subword_rows``).
- ``Tables.syn1`` (V - 1, D) float32: the inner nodes of the hierarchical
  softmax's tree; ``Tables.syn1neg`` (V, D) float32: the output vectors of
  negative sampling. A loss that is off has a (0, D) array.
- ``keep_prob`` (V,) float32: subsampling's probability of keeping each word.

word2vec.c's start: input vectors uniform in [-0.5/D, 0.5/D), output vectors zero.
"""

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.ngrams import NgramSettings, input_rows
from w2v.corpus.vocab import Vocab
from w2v.errors import ConfigError, DivergedError
from w2v.vectorio.modelfile import all_finite, weight_shapes
from w2v.words import decode_word, quoted_word

# Training has diverged once a row of a weight matrix is longer than this. Rows of
# trained word2vec models have norms of order 1 to 10 (the largest in runs of the
# presets and defaults on wiki-en-6mb, 5 to 20 epochs: 25, a rare word's CBOW input
# vector; tests/test_train.py trains each preset for an epoch): a logit ``u . h`` of
# 17 puts the sigmoid within 1e-7 of 0 or 1, so an example already fitted takes no
# step worth the name, and fitting needs no longer rows; only steps that overshoot (a
# learning rate too high) make them. A norm of 1e3 allows logits of 1e6. Hierarchical
# softmax needs this check: it skips a node whose |logit| >= 6, so its weights can
# grow without bound while the loss stays finite.
MAX_ROW_NORM = 1e3
# A word whose rows (subwords) repeat n-grams so often that an update moves its vector
# this many times as far as a word's of distinct n-grams (``amplified_word``) is named
# when a run diverges: a token of thousands of one repeated character, whose updates
# overshoot at any usable learning rate.
NAMED_GROWTH = 100
# ``Tables.log_q``'s floor: an extreme --ns-exponent gives log-probabilities below float32's
# range, and an infinite offset would make a logit NaN (inf - inf).
FLOAT32_LOWEST = float(np.finfo(np.float32).min)


class Tables(NamedTuple):
    """The output weights and lookup tables of one run, as the kernel reads them
    (``kernels.train_batch``). N is the total length of the Huffman paths."""

    syn1: np.ndarray  # (V - 1, D) or (0, D) float32: tree nodes (hierarchical softmax)
    syn1neg: np.ndarray  # (V, D) or (0, D) float32: word output vectors (NS, NCE, sampled or full softmax)
    path_nodes: np.ndarray  # (N,) int32: each word's path of syn1 rows from the root
    path_labels: np.ndarray  # (N,) float32: the label of each node on the path, 1 - its Huffman code bit
    path_offsets: np.ndarray  # (V + 1,) int64: word w's path is [path_offsets[w], path_offsets[w + 1])
    alias_prob: np.ndarray  # (V,) uint32: alias-method thresholds in [0, 2**24] (noise words)
    alias_idx: np.ndarray  # (V,) int32: the alias of each column
    log_q: np.ndarray  # (V,) float32: log q(w), q the noise distribution (NCE's and sampled softmax's offsets)
    subword_rows: np.ndarray = np.empty(0, np.int32)  # (M,) int32: with subwords, each word's rows of syn0
    subword_offsets: np.ndarray = np.empty(
        0, np.int64
    )  # (V + 1,): word w's are subword_rows[offsets[w] : offsets[w + 1]]


INIT_BLOCK = 1 << 18  # values drawn and scaled at once: a block stays in the cache between the passes


def init_input_vectors(size: int, dim: int, seed: int, threads: int = 1) -> np.ndarray:
    """word2vec.c's init: uniform in [-0.5/dim, 0.5/dim), float32 (size, dim): the
    values of ``default_rng(seed).random((size, dim), dtype=float32)``, less 0.5, over
    ``dim``, drawn by ``threads`` threads at once, each from its own even-numbered
    place in that one stream (``init_values``), so the result is the same for any
    ``threads``. A subword run's 2,000,000 n-gram rows are most of it."""
    vectors = np.empty((size, dim), dtype=np.float32)
    flat, start = vectors.reshape(-1), np.random.default_rng(seed).bit_generator.state
    share = -(-flat.size // max(threads, 1))
    share += share % 2  # PCG64 gives two float32 a step: each share starts on a step
    bounds = [(first, min(first + share, flat.size)) for first in range(0, flat.size, share)]
    if len(bounds) == 1:
        init_values(flat, start, dim)
    else:
        with ThreadPoolExecutor(len(bounds)) as pool:  # numpy's generators release the GIL as they fill
            list(pool.map(lambda bound: init_values(flat[bound[0] : bound[1]], start, dim, bound[0]), bounds))
    return vectors


def init_values(out: np.ndarray, start: Any, dim: int, first: int = 0) -> None:
    """Values ``first .. first + len(out) - 1`` (``first`` even) of the float32 stream of
    the PCG64 state ``start``, less 0.5, over ``dim``, into ``out``, a block at a time."""
    bits = np.random.PCG64()
    bits.state = start
    bits.advance(first // 2)
    generator = np.random.Generator(bits)
    for at in range(0, out.size, INIT_BLOCK):
        block = out[at : at + INIT_BLOCK]
        generator.random(out=block, dtype=np.float32)
        block -= 0.5
        block /= dim


def fresh_weights(size: int, config: TrainConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """word2vec.c's start for ``size`` words: random ``syn0`` (the n-gram rows too,
    drawn after the words' so that these start as without subwords), zero ``syn1``
    and ``syn1neg``. ConfigError, before allocating, if they cannot fit in memory."""
    shapes = weight_shapes(size, config)
    check_memory(shapes, config)
    syn1, syn1neg = (np.zeros(shapes[name], dtype=np.float32) for name in ("syn1", "syn1neg"))
    syn0 = init_input_vectors(shapes["syn0"][0], config.dim, config.seed, config.threads or 1)
    return syn0, syn1, syn1neg


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux's MemAvailable: free
    memory and the page cache that can be dropped); None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_memory(shapes: dict[str, tuple[int, int]], config: TrainConfig) -> None:
    """ConfigError if the weight matrices of ``shapes`` (float32) need more memory than
    is available: with subwords, say that ``bucket`` is the knob (its rows are most of it)."""
    needed = sum(4 * rows * cols for rows, cols in shapes.values())
    available = available_memory()
    if available is None or needed <= available:
        return
    what = f"{needed / 1e9:.1f} GB of weights, more than the {available / 1e9:.1f} GB of memory available"
    if config.ngram_rows:
        share = 4 * config.ngram_rows * config.dim / 1e9
        raise ConfigError(
            f"{what} ({share:.1f} GB of them the bucket={config.bucket:,} n-gram rows): lower bucket",
            f"{what} ({share:.1f} GB of them the --bucket {config.bucket:,} n-gram rows): lower --bucket",
        )
    raise ConfigError(f"{what}: lower dim or the vocabulary (min_count, max_vocab)")


def carry_weights(
    base_vocab: Vocab, base_weights: tuple[np.ndarray, np.ndarray, np.ndarray], vocab: Vocab, config: TrainConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``--init-model``: the weights for ``vocab`` (the model's vocabulary, perhaps
    updated) from ``base_weights`` = (syn0, syn1, syn1neg) over ``base_vocab``. Known
    words keep their rows; new words start as in a fresh run (random input vector,
    zero output vector). Tree nodes keep their rows and new ones start at zero (as
    gensim does), although a changed vocabulary rebuilds the tree under them. With
    subwords, the n-gram rows are kept whole."""
    rows = word_rows(base_vocab.words, vocab.words)
    known = rows >= 0
    syn0, syn1, syn1neg = fresh_weights(len(vocab), config)
    base_syn0, base_syn1, base_syn1neg = base_weights
    syn0[: len(vocab)][known] = base_syn0[rows[known]]
    syn0[len(vocab) :] = base_syn0[len(base_vocab) :]  # subwords' n-gram rows: hashed alike for any vocabulary
    if config.output_loss:
        syn1neg[known] = base_syn1neg[rows[known]]
    if config.hs:
        shared = min(len(syn1), len(base_syn1))
        syn1[:shared] = base_syn1[:shared]
    return syn0, syn1, syn1neg


def input_weights(
    words: Sequence[bytes], vectors: np.ndarray, vocab: Vocab, config: TrainConfig
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], int]:
    """fastText's ``-pretrainedVectors``: a fresh run's weights for ``vocab`` but the
    input rows of its words among ``words``, which start from their ``vectors`` (n, D);
    the output weights start at zero, as in any fresh run. Also how many words did."""
    rows = word_rows(words, vocab.words)
    known = rows >= 0
    syn0, syn1, syn1neg = fresh_weights(len(vocab), config)
    syn0[: len(vocab)][known] = vectors[rows[known]]
    return (syn0, syn1, syn1neg), int(known.sum())


def word_rows(base_words: Sequence[bytes], words: Sequence[bytes]) -> np.ndarray:
    """The row among ``base_words`` of each of ``words`` ((n,) int64; the first where it
    is listed twice), -1 for a word not among them."""
    rows = {word: i for i, word in reversed(list(enumerate(base_words)))}
    return np.array([rows.get(word, -1) for word in words], dtype=np.int64)


def largest_row_norm(weights: np.ndarray) -> float:
    """The largest Euclidean norm of a row of ``weights`` (N, D) float32, 0 for no
    row: NaN if a weight is NaN, infinite if one is (or if the squares overflow
    float32). Allocates N floats, not N * D."""
    if not weights.size:
        return 0.0
    return float(np.sqrt(np.einsum("ij,ij->i", weights, weights).max()))


@dataclass
class Model:
    """The weights of a run and the tables built for them from its vocabulary and settings."""

    syn0: np.ndarray
    tables: Tables
    keep_prob: np.ndarray
    words: list[bytes]  # the vocabulary's, to name one in a message

    @classmethod
    def build(
        cls, vocab: Vocab, config: TrainConfig, weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    ) -> "Model":
        """The model over ``vocab`` with ``weights`` = (syn0, syn1, syn1neg) (float32,
        shaped as ``weight_shapes`` says), or fresh ones (``fresh_weights``)."""
        syn0, syn1, syn1neg = weights if weights is not None else fresh_weights(len(vocab), config)
        nodes, labels, offsets = path_tables(vocab, config)
        log_q = np.maximum(vocab.log_noise_distribution(config.ns_exponent), FLOAT32_LOWEST).astype(np.float32)
        alias_prob, alias_idx = vocab.alias_table(config.ns_exponent)
        subword_rows, subword_offsets = subword_tables(vocab, config)
        tables = Tables(
            syn1=syn1, syn1neg=syn1neg, path_nodes=nodes, path_labels=labels, path_offsets=offsets,
            alias_prob=alias_prob, alias_idx=alias_idx, log_q=log_q,
            subword_rows=subword_rows, subword_offsets=subword_offsets,
        )  # fmt: skip
        return cls(syn0, tables, vocab.keep_probabilities(config.sample), vocab.words)

    def check_diverged(self, epoch: int, alpha: float) -> None:
        """DivergedError if a row of ``syn0``, ``syn1`` or ``syn1neg`` has a norm past
        ``MAX_ROW_NORM``, or a weight is NaN or infinite (its row's norm is then NaN
        or infinite too). ``epoch`` (from 1) and ``alpha`` go into the message."""
        for name, weights in (("syn0", self.syn0), ("syn1", self.tables.syn1), ("syn1neg", self.tables.syn1neg)):
            norm = largest_row_norm(weights)
            if norm <= MAX_ROW_NORM:
                continue
            if all_finite(weights):
                what = f"a row of {name} has norm {norm:.3g}, where trained models stay below {MAX_ROW_NORM:g}"
            else:
                what = f"non-finite weights in {name}"
            raise DivergedError(f"training diverged in epoch {epoch} ({what}): {self.divergence_advice(alpha)}")

    def divergence_advice(self, alpha: float) -> str:
        """What the message of a diverged run advises: to take out the word whose
        repeated n-grams make each of its updates ``NAMED_GROWTH`` times too long or
        more (``amplified_word``), else to lower the learning rate ``alpha``."""
        word, growth = amplified_word(self.tables.subword_rows, self.tables.subword_offsets)
        if growth < NAMED_GROWTH:
            return f"lower the learning rate (--alpha, now {alpha:g})"
        return (
            f"the word {quoted_word(decode_word(self.words[word]))} repeats its character n-grams so often that "
            f"each update moves its vector {growth:,.0f} times as far as a word's of distinct n-grams: "
            "take the word out of the corpus"
        )


def amplified_word(rows: np.ndarray, offsets: np.ndarray) -> tuple[int, float]:
    """The word whose updates move its input vector farthest for their gradient, and
    how many times as far as a word of distinct rows, given each word's ``rows``
    (``Tables.subword_rows`` and ``subword_offsets``): an update adds the gradient to
    each row the word lists (a row listed k times, k times, as fastText does), so the
    word's vector, their mean, moves ``sum_r k_r**2 / |R_w|`` times the gradient: 1
    for distinct rows, ``|R_w|`` for one row listed throughout, so only words of
    ``NAMED_GROWTH`` rows or more are looked at. (-1, 1.0) where none moves farther."""
    sizes = np.diff(offsets)
    best, growth = -1, 1.0
    for word in np.flatnonzero(sizes >= NAMED_GROWTH).tolist():
        _, listed = np.unique(rows[offsets[word] : offsets[word + 1]], return_counts=True)
        moved = float(np.square(listed, dtype=np.float64).sum()) / sizes[word]
        if moved > growth:
            best, growth = word, moved
    return best, growth


def subword_tables(vocab: Vocab, config: TrainConfig) -> tuple[np.ndarray, np.ndarray]:
    """``Tables``' subword rows and offsets: each word's rows of ``syn0`` with
    ``config.subwords`` (``ngrams.input_rows``), else empty."""
    if not config.subwords:
        return Tables._field_defaults["subword_rows"], Tables._field_defaults["subword_offsets"]
    return input_rows(vocab.words, NgramSettings.of(config))


def path_tables(vocab: Vocab, config: TrainConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``Tables``' path nodes, labels and offsets: those of ``config.tree`` with
    ``config.hs``, else empty paths for every word."""
    codes, nodes, offsets = vocab.tree(config.tree) if config.hs else Vocab.no_paths(len(vocab))
    return nodes, (1 - codes).astype(np.float32), offsets
