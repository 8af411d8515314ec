r"""Held-out cross-entropy of a trained model's own prediction task, in bits per word.

The task is the one the model was trained on, made deterministic (no
subsampling, no random shrinking of the window):

- skip-gram: every ordered pair (input word ``i``, predicted word ``o``) within
  ``window`` positions of each other in a sentence, ``h = v_i`` (a row of ``syn0``);
- CBOW: every word ``o`` with at least one context word, ``h`` the mean (or sum)
  of its full window's input vectors.

Words outside the vocabulary are dropped before the pairs are formed, as
training drops them, and counted. The cross-entropy is
``H = -(1/N) sum log2 p(o | h)`` over the N predictions, and perplexity ``2**H``.

- hierarchical softmax: ``p(o | h) = prod_{n in path(o)} sigma((1 - 2 d_n) u_n . h)``,
  normalised by construction (exact).
- negative sampling: its scores ``s_w = u_w . h`` are not normalised. At its
  optimum ``s_w = log p(w | h) - log(k q(w))`` (q the noise distribution), so the
  distribution it implies is ``softmax(s + log q)`` over the vocabulary, reported
  as ``bits_per_word``; ``softmax(s)`` is reported as ``bits_per_word_plain``,
  ``log Z = logsumexp_w s_w`` (mean and spread) says how far from self-normalised
  the scores are, and ``bits_per_word_z1`` takes ``p = exp(s_o)`` (Z = 1).

The baseline every model must beat is the unigram model ``p(o) = count(o) / total``
of the model's vocabulary, on the same predictions.
"""

import itertools
import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np

from w2v.corpus.idstream import Encoded, IdStream, encode_corpus
from w2v.engine.state import TrainState
from w2v.engine.weights import path_tables
from w2v.errors import CorpusError, FormatError

BLOCK_VALUES = 1 << 22  # scores held at once (float64: 32 MiB) when scoring against the whole vocabulary
LOG2E = 1.0 / math.log(2.0)


@dataclass
class Score:
    """The held-out figures of one loss of a model (bits per predicted word)."""

    loss: str  # "hs", or the word output vectors': "ns", "nce", "sampled_softmax", "softmax"
    pairs: int  # predictions scored
    oov_tokens: int  # corpus tokens outside the vocabulary, dropped
    bits_per_word: float  # the loss's own distribution (negative sampling: the implied one)
    perplexity: float
    unigram_bits_per_word: float
    mean_log_z: float | None = None  # unnormalised losses: log Z of softmax(s) (nats)
    std_log_z: float | None = None
    bits_per_word_z1: float | None = None  # taking p = exp(s_o)
    bits_per_word_plain: float | None = None  # softmax(s)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Predictions:
    """A block of predictions: hidden vectors ``hidden`` (B, D) float32, the words
    they predict ``targets`` (B,) int64, the sentence of each ``sentences`` (B,)
    int64, and for skip-gram the input word of each ``inputs`` (B,) int64, whose
    row of ``syn0`` the hidden vector is (CBOW: None)."""

    hidden: np.ndarray
    targets: np.ndarray
    sentences: np.ndarray
    inputs: np.ndarray | None


def sentence_index(ids: np.ndarray, first: int) -> np.ndarray:
    """For each position of ``ids`` (with ``-1`` ending sentences), the index of its
    sentence, counting from ``first``."""
    return first + np.concatenate([[0], np.cumsum(ids[:-1] < 0)]) if len(ids) else np.zeros(0, np.int64)


def skipgram_pairs(ids: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (input, predicted) of every ordered pair within ``window`` of each
    other in one sentence of ``ids`` (int32, ``-1`` ending sentences)."""
    sentence = np.cumsum(ids < 0)
    inputs, outputs = [], []
    for d in range(1, window + 1):
        a = np.arange(len(ids) - d)
        ok = (ids[a] >= 0) & (ids[a + d] >= 0) & (sentence[a] == sentence[a + d])
        a = a[ok]
        inputs += [a, a + d]
        outputs += [a + d, a]
    order = np.concatenate([[0], *outputs]).astype(np.int64)[1:]
    return np.concatenate([[0], *inputs]).astype(np.int64)[1:], order, sentence


def skipgram_predictions(ids, syn0, window, keep, first_sentence) -> Predictions:
    """The skip-gram predictions of one batch of ids, those where ``keep(n)`` (a (n,)
    bool mask for n pairs) is true."""
    inputs, outputs, _ = skipgram_pairs(ids, window)
    kept = keep(len(inputs))
    inputs, outputs = inputs[kept], outputs[kept]
    sentences = sentence_index(ids, first_sentence)
    words = ids[inputs].astype(np.int64)
    return Predictions(syn0[words], ids[outputs].astype(np.int64), sentences[outputs], words)


def cbow_predictions(ids, syn0, window, cbow_mean, keep, first_sentence) -> Predictions:
    """The CBOW predictions of one batch of ids: each word with a context, from the
    mean (``cbow_mean``) or sum of its whole window's input vectors."""
    sentence = np.cumsum(ids < 0)
    hidden = np.zeros((len(ids), syn0.shape[1]), dtype=np.float32)
    count = np.zeros(len(ids), dtype=np.int64)
    for d in (*range(-window, 0), *range(1, window + 1)):
        at = np.arange(max(-d, 0), len(ids) - max(d, 0))
        ok = (ids[at] >= 0) & (ids[at + d] >= 0) & (sentence[at] == sentence[at + d])
        hidden[at[ok]] += syn0[ids[at[ok] + d]]
        count[at[ok]] += 1
    positions = np.flatnonzero(count > 0)
    positions = positions[keep(len(positions))]
    hidden = hidden[positions]
    if cbow_mean:
        hidden /= count[positions, None].astype(np.float32)
    sentences = sentence_index(ids, first_sentence)
    return Predictions(hidden, ids[positions].astype(np.int64), sentences[positions], None)


def path_log_probs(hidden: np.ndarray, targets: np.ndarray, state: TrainState, threads: int = 2) -> np.ndarray:
    """``log p(target | hidden)`` (nats, float64 (B,)) under hierarchical softmax
    (``kernels.path_log_probs``), the rows split between ``threads`` threads."""
    from w2v.engine.kernels import path_log_probs as kernel  # Numba: imported when a model is scored

    nodes, labels, offsets = path_tables(state.vocab, state.config)
    out = np.empty(len(targets))
    hidden = np.ascontiguousarray(hidden, dtype=np.float32)
    bounds = np.linspace(0, len(targets), threads + 1).astype(np.int64)
    parts = [slice(a, b) for a, b in itertools.pairwise(bounds.tolist())]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda p: kernel(hidden[p], targets[p], state.syn1, nodes, labels, offsets, out[p]), parts))
    return out


def log_normalisers(hidden: np.ndarray, out: np.ndarray, log_prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``logsumexp_w s_w`` and ``logsumexp_w (s_w + log_prior_w)`` (B,) float64 for the
    hidden vectors (B, D), ``s_w = u_w . h`` over the rows of ``out`` (V, D), in blocks
    of ``BLOCK_VALUES`` scores (the scores in float32, their sums in float64)."""
    log_z = np.empty(len(hidden))
    log_z_prior = np.empty(len(hidden))
    rows = max(1, BLOCK_VALUES // max(len(out), 1))
    for start in range(0, len(hidden), rows):
        block = slice(start, start + rows)
        scores = (hidden[block] @ out.T).astype(np.float64)
        log_z[block] = logsumexp_rows(scores)
        log_z_prior[block] = logsumexp_rows(scores + log_prior)
    return log_z, log_z_prior


def logsumexp_rows(x: np.ndarray) -> np.ndarray:
    """``log sum_j exp(x[i, j])`` for each row (float64)."""
    top = x.max(axis=1)
    return top + np.log(np.exp(x - top[:, None]).sum(axis=1))


class NoiseScorer:
    """Negative sampling's distributions for blocks of predictions (module docstring).
    For skip-gram, whose hidden vector is the input word's row, the normalisers are
    computed once per input word and kept."""

    def __init__(self, state: TrainState):
        self.syn0, self.out = state.syn0, state.syn1neg
        self.log_q = np.log(state.vocab.noise_distribution(state.config.ns_exponent))
        self.cache = np.full((2, len(state.vocab)), np.nan)  # per input word: log Z, log Z with the prior

    def normalisers(self, block: Predictions) -> tuple[np.ndarray, np.ndarray]:
        """``log Z`` of softmax(s) and of softmax(s + log q) for each prediction (B,)."""
        if block.inputs is None:
            return log_normalisers(block.hidden, self.out, self.log_q)
        missing = np.unique(block.inputs[np.isnan(self.cache[0, block.inputs])])
        if len(missing):
            self.cache[:, missing] = log_normalisers(self.syn0[missing], self.out, self.log_q)
        return self.cache[0, block.inputs], self.cache[1, block.inputs]

    def normalised(self, block: Predictions, implied: bool) -> dict[str, np.ndarray]:
        """Per prediction (nats): the ``plain`` (softmax(s)) and ``z1`` log-probabilities,
        ``log_z``, and the loss's own: the distribution negative sampling implies
        (``implied``), else ``plain``."""
        scores = np.einsum("ij,ij->i", block.hidden, self.out[block.targets]).astype(np.float64)
        log_z, log_z_prior = self.normalisers(block)
        implied_log_p = scores + self.log_q[block.targets] - log_z_prior
        plain = scores - log_z
        return {"own": implied_log_p if implied else plain, "plain": plain, "z1": scores, "log_z": log_z}


@dataclass
class Totals:
    """Sums over the predictions scored (nats), one entry per quantity."""

    count: int
    sums: dict[str, float]
    squares: dict[str, float]

    def add(self, values: dict[str, np.ndarray]) -> None:
        for key, value in values.items():
            self.sums[key] = self.sums.get(key, 0.0) + float(value.sum())
            self.squares[key] = self.squares.get(key, 0.0) + float((value * value).sum())

    def bits(self, key: str) -> float:
        """Mean of ``-value`` over the predictions, in bits."""
        return -self.sums[key] / max(self.count, 1) * LOG2E


class Sample:
    """Which predictions to score, in order: all of them, or ``size`` of ``total``
    drawn uniformly without replacement (seeded)."""

    def __init__(self, total: int, size: int | None, seed: int):
        self.chosen = (
            None
            if size is None or size >= total
            else np.sort(np.random.default_rng(seed).choice(total, size, replace=False))
        )
        self.seen = 0

    def take(self, n: int) -> np.ndarray:
        """A (n,) bool mask over the next ``n`` predictions."""
        mask = np.ones(n, dtype=bool)
        if self.chosen is not None:
            mask[:] = False
            lo, hi = np.searchsorted(self.chosen, [self.seen, self.seen + n])
            mask[self.chosen[lo:hi] - self.seen] = True
        self.seen += n
        return mask


def batches_of(stream: IdStream) -> Iterator[tuple[np.ndarray, int]]:
    """Each batch's ids with the index of its first sentence."""
    first = 0
    for b in range(len(stream)):
        ids = stream.batch(b)
        yield ids, first
        first += int((ids < 0).sum())


def predictions(stream: IdStream, state: TrainState, window: int, sample: Sample) -> Iterator[Predictions]:
    """The model's predictions over ``stream``, batch by batch (module docstring)."""
    config = state.config
    for ids, first in batches_of(stream):
        if config.model == "cbow":
            yield cbow_predictions(ids, state.syn0, window, config.cbow_mean, sample.take, first)
        else:
            yield skipgram_predictions(ids, state.syn0, window, sample.take, first)


def count_predictions(stream: IdStream, state: TrainState, window: int) -> int:
    """How many predictions ``predictions`` makes over ``stream``."""
    counted = Sample(0, None, 0)
    for _ in predictions(stream, state, window, counted):
        pass
    return counted.seen


@dataclass
class ScoreResult:
    """``scores``, one per loss of the model; ``sentence_bits`` (S, losses) float64:
    each sentence's total log-probability in bits under each loss's distribution."""

    scores: list[Score]
    sentence_bits: np.ndarray


def score_model(
    state: TrainState, corpus, workdir: str, window: int | None = None, max_pairs: int | None = None, seed: int = 1
) -> ScoreResult:
    """Score ``state``'s model on ``corpus`` (a path, URL, list of them, or tokenised
    sentences), reading it into ``workdir``. ``window``: the pairs' reach (default the
    model's); ``max_pairs``: score a uniform sample of that many predictions."""
    encoded = encode_corpus(corpus, state.config, workdir, lambda _words, _counts: state.vocab)
    try:
        return score_encoded(state, encoded, window, max_pairs, seed)
    finally:
        encoded.stream.close()


def score_encoded(
    state: TrainState, encoded: Encoded, window: int | None = None, max_pairs: int | None = None, seed: int = 1
) -> ScoreResult:
    """``score_model`` on a corpus already encoded with ``state``'s vocabulary."""
    losses = (["hs"] if state.config.hs else []) + ([state.config.output_loss] if state.config.output_loss else [])
    if not losses or state.syn0.shape[0] == 0:
        raise FormatError("the model has no output weights to score with")
    window = window or state.config.window
    total = count_predictions(encoded.stream, state, window)
    if total == 0:
        raise CorpusError("nothing to score: no word of the corpus has an in-vocabulary neighbour")
    return accumulate(encoded, state, window, Sample(total, max_pairs, seed), losses)


def accumulate(encoded: Encoded, state: TrainState, window: int, sample: Sample, losses: list[str]) -> ScoreResult:
    """Sum every loss's log-probabilities over the sampled predictions (``score_model``)."""
    stream = encoded.stream
    log_unigram = np.log(state.vocab.counts / state.vocab.total)
    noise = NoiseScorer(state) if losses[-1] != "hs" else None
    totals = {loss: Totals(0, {}, {}) for loss in losses}
    sentences = int(sum(int((ids < 0).sum()) for ids, _ in batches_of(stream)))
    sentence_logs = np.zeros((sentences + 1, len(losses)))
    for block in predictions(stream, state, window, sample):
        for column, loss in enumerate(losses):
            if loss == "hs":
                values = {"own": path_log_probs(block.hidden, block.targets, state)}
            else:
                values = noise.normalised(block, implied=loss == "ns") if noise is not None else {}
            values["unigram"] = log_unigram[block.targets]
            totals[loss].count += len(block.targets)
            totals[loss].add(values)
            sentence_logs[:, column] += np.bincount(block.sentences, values["own"], minlength=sentences + 1)
    oov = encoded.corpus_words - stream.words
    scores = [summary(loss, totals[loss], oov) for loss in losses]
    return ScoreResult(scores, sentence_logs[:sentences] * LOG2E)


def summary(loss: str, totals: Totals, oov: int) -> Score:
    """The ``Score`` of one loss from its totals."""
    bits = totals.bits("own")
    score = Score(loss, totals.count, oov, bits, 2.0**bits, totals.bits("unigram"))
    if loss != "hs":
        mean = totals.sums["log_z"] / totals.count
        score.mean_log_z = mean
        score.std_log_z = math.sqrt(max(totals.squares["log_z"] / totals.count - mean * mean, 0.0))
        score.bits_per_word_z1 = totals.bits("z1")
        score.bits_per_word_plain = totals.bits("plain")
    return score
