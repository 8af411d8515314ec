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
- negative sampling: its scores ``s_w = u_w . h`` are not normalised. Its draws
  equal to the target are skipped (as word2vec.c does), so at its optimum
  ``s_w = log p(w | h) - log(k q(w)) - log(1 - p(w | h))`` (q the noise
  distribution, k its draws): ``x_w = k q(w) exp(s_w)`` is ``p / (1 - p)``, and the
  distribution it implies is ``p(w | h) ~ x_w / (1 + x_w) = sigma(s_w + log(k q(w)))``,
  normalised over the vocabulary, reported as ``bits_per_word``; ``softmax(s)`` is
  reported as ``bits_per_word_plain``,
  ``log Z = logsumexp_w s_w`` (mean and spread) says how far from self-normalised
  the scores are, and ``bits_per_word_z1`` takes ``p = exp(s_o)`` (Z = 1).
- NCE, sampled and full softmax: ``softmax(s)``.

The baseline every model must beat is the unigram model ``p(o) = count(o) / total``
of the model's vocabulary, on the same predictions.

Every prediction is scored exactly by default; a ``sampling.Sampling`` scores a
sample of them and normalises a subsample of those, with a standard error
(``w2v.engine.heldout_sample``). A ``Plan`` draws the sample once, so that a text
scored after each epoch recomputes only what depends on the weights.
"""

import itertools
import math
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

import numpy as np

from w2v.corpus.idstream import Encoded, IdStream, encode_corpus
from w2v.engine.heldout_sample import EVERY_PREDICTION, Sample, Sampling, TwoPhase
from w2v.engine.weights import path_tables, subword_tables
from w2v.errors import CorpusError, FormatError
from w2v.losses import LOSSES
from w2v.vectorio.modelfile import TrainState

BLOCK_VALUES = 1 << 20  # floats held at once in a temporary matrix (4 MiB)
INPUT_BLOCK_WORDS = 4096  # words whose subword rows are gathered at once (``WordInputs``)
# Skip-gram predictions planned and scored at once: a batch of 10,000 words makes 100,000 with
# the default window of 5; a window of 10,000 makes 10**8, which would take gigabytes.
PLAN_ROWS = 1 << 18
LOG2E = 1.0 / math.log(2.0)
SIGMA_FLOOR = -15.0  # below it sigma(a) = exp(a) (1 - 3e-7): negative sampling's normaliser as a logsumexp


@dataclass
class Score:
    """The held-out figures of one loss of a model (bits per predicted word)."""

    loss: str  # a name of ``losses.LOSSES``: "hs", or the word output vectors' ("ns", "nce", ...)
    pairs: int  # predictions scored
    oov_tokens: int  # corpus tokens outside the vocabulary, dropped
    bits_per_word: float  # the loss's own distribution (negative sampling: the implied one)
    perplexity: float
    unigram_bits_per_word: float  # over every prediction of the text
    standard_error: float = 0.0  # of bits_per_word, from sampling (0.0: every prediction scored exactly)
    normalised: int = 0  # predictions whose normaliser was summed (hierarchical softmax: all scored)
    mean_log_z: float | None = None  # unnormalised losses: log Z of softmax(s) (nats), over the normalised
    std_log_z: float | None = None
    bits_per_word_z1: float | None = None  # taking p = exp(s_o)
    bits_per_word_plain: float | None = None  # softmax(s)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Planned:
    """A batch's predictions to score, before the weights: the words they predict
    ``targets`` (B,) int64, the sentence of each ``sentences`` (B,) int64, and either
    skip-gram's input words ``inputs`` (B,) int64 or CBOW's context words
    ``contexts`` (B, 2 window) int32 (-1: none there); ``normalised`` (B,) bool:
    those of the normaliser's subsample."""

    targets: np.ndarray
    sentences: np.ndarray
    inputs: np.ndarray | None
    contexts: np.ndarray | None
    normalised: np.ndarray


def sentence_index(ids: np.ndarray, first: int) -> np.ndarray:
    """For each position of ``ids`` (with ``-1`` ending sentences), the index of its
    sentence, counting from ``first``."""
    return first + np.concatenate([[0], np.cumsum(ids[:-1] < 0)]) if len(ids) else np.zeros(0, np.int64)


def skipgram_pairs(ids: np.ndarray, window: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Positions (input, predicted) (P,) int64 of every ordered pair within ``window``
    of each other in one sentence of ``ids`` (int32, ``-1`` ending sentences), nearest
    first, in blocks of the pairs of consecutive distances: at most ``PLAN_ROWS`` pairs,
    or those of one distance (2 len(ids) at most) where they are more."""
    sentence = np.cumsum(ids < 0)
    bounds = np.flatnonzero(np.concatenate([[True], ids < 0, [True]]))  # around each sentence
    longest = int(np.diff(bounds).max()) - 1  # the longest sentence's words: no pair is further apart
    inputs: list[np.ndarray] = []
    outputs: list[np.ndarray] = []
    pairs = 0  # in ``inputs``
    for d in range(1, min(window, longest - 1) + 1):
        a = np.arange(len(ids) - d)
        a = a[(ids[a] >= 0) & (ids[a + d] >= 0) & (sentence[a] == sentence[a + d])]
        if pairs and pairs + 2 * len(a) > PLAN_ROWS:
            yield np.concatenate(inputs), np.concatenate(outputs)
            inputs, outputs, pairs = [], [], 0
        inputs += [a, a + d]
        outputs += [a + d, a]
        pairs += 2 * len(a)
    if pairs:
        yield np.concatenate(inputs), np.concatenate(outputs)


def context_words(ids: np.ndarray, positions: np.ndarray, window: int) -> np.ndarray:
    """(P, 2 window) int32: for each of ``positions`` in ``ids``, the words at offsets
    -window .. -1, 1 .. window, -1 where that is outside its sentence or the text."""
    offsets = np.array([*range(-window, 0), *range(1, window + 1)])
    at = positions[:, None] + offsets[None, :]
    inside = (at >= 0) & (at < len(ids))
    at = np.where(inside, at, positions[:, None])
    sentence = np.cumsum(ids < 0)
    valid = inside & (ids[at] >= 0) & (sentence[at] == sentence[positions][:, None])
    return np.where(valid, ids[at], -1).astype(np.int32)


def cbow_positions(ids: np.ndarray, window: int) -> np.ndarray:
    """Positions (P,) int64 of the words of ``ids`` with at least one context word."""
    positions = np.flatnonzero(ids >= 0)
    keep = np.zeros(len(positions), dtype=bool)
    rows = max(1, BLOCK_VALUES // (2 * window))
    for start in range(0, len(positions), rows):
        part = slice(start, start + rows)
        keep[part] = (context_words(ids, positions[part], window) >= 0).any(axis=1)
    return positions[keep]


def plan_batch(ids: np.ndarray, first_sentence: int, model: str, window: int, sample: Sample) -> Iterator[Planned]:
    """The predictions of one batch of ids that ``sample`` takes (module docstring), in
    blocks (skip-gram: ``skipgram_pairs``'; CBOW: of ``BLOCK_VALUES`` context words at
    most), so that a wide window's predictions, 2 window a word, are not held at once."""
    sentences = sentence_index(ids, first_sentence)
    if model == "cbow":
        positions = cbow_positions(ids, window)
        rows = max(1, BLOCK_VALUES // (2 * window))
        for start in range(0, len(positions), rows):
            kept, normalised = sample.take(len(positions[start : start + rows]))
            block = positions[start : start + rows][kept]
            contexts = context_words(ids, block, window)
            yield Planned(ids[block].astype(np.int64), sentences[block], None, contexts, normalised)
        return
    for inputs, outputs in skipgram_pairs(ids, window):
        kept, normalised = sample.take(len(inputs))
        inputs, outputs = inputs[kept], outputs[kept]
        yield Planned(ids[outputs].astype(np.int64), sentences[outputs], ids[inputs].astype(np.int64), None, normalised)


class WordInputs(NamedTuple):
    """Each word's input side as scoring reads it (V words, D values): ``means`` (V, D)
    float32, a word's input vector on its own (skip-gram's hidden vector); ``sums``
    (V, D) float32 and ``sizes`` (V,) int32, the sum of the rows of ``syn0`` the word
    stands for and their number, so that CBOW's hidden vector is
    ``sum_c sums[c] / sum_c sizes[c]``: with subwords, fastText's one mean over all
    the rows of all the context words. Without subwords, ``syn0`` and ones."""

    means: np.ndarray
    sums: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, state: TrainState, subwords: tuple[np.ndarray, np.ndarray] | None = None) -> "WordInputs":
        """The inputs of ``state``'s model as its weights are now; ``subwords``: the
        model's subword rows and offsets (``weights.subword_tables``), if the caller
        has them already, else hashed here."""
        size = len(state.vocab)
        if not state.config.subwords:
            return cls(state.syn0, state.syn0, np.ones(size, dtype=np.int32))
        rows, offsets = subwords or subword_tables(state.vocab, state.config)
        sums = np.empty((size, state.syn0.shape[1]), dtype=np.float32)
        for start in range(0, size, INPUT_BLOCK_WORDS):
            words = slice(start, min(start + INPUT_BLOCK_WORDS, size))
            first, last = offsets[words.start], offsets[words.stop]
            sums[words] = np.add.reduceat(state.syn0[rows[first:last]], offsets[words] - first, axis=0)
        sizes = np.diff(offsets).astype(np.int32)  # a word's own row at least: never 0
        return cls(sums / sizes[:, None], sums, sizes)


def hidden_vectors(planned: Planned, inputs: WordInputs, cbow_mean: bool) -> np.ndarray:
    """(B, D) float32: the hidden vector of each planned prediction, skip-gram's input
    vector, or the sum (``cbow_mean``: the mean) of CBOW's context rows
    (``kernels.context_vectors``)."""
    if planned.inputs is not None:
        return inputs.means[planned.inputs]
    from w2v.engine.kernels import context_vectors  # Numba: imported when a model is scored

    contexts = planned.contexts
    assert contexts is not None
    hidden = np.empty((len(contexts), inputs.sums.shape[1]), dtype=np.float32)

    def work(rows: slice) -> None:
        context_vectors(contexts[rows], inputs.sums, inputs.sizes, cbow_mean, hidden[rows])

    in_threads(len(contexts), work)
    return hidden


def in_threads(count: int, work: Callable[[slice], None], threads: int = 2) -> None:
    """``work(rows)`` on ``threads`` consecutive slices of ``range(count)``, each in a
    thread (Numba's kernels release the GIL)."""
    bounds = np.linspace(0, count, threads + 1).astype(np.int64).tolist()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, [slice(a, b) for a, b in itertools.pairwise(bounds)]))


def batches_of(stream: IdStream) -> Iterator[tuple[np.ndarray, int]]:
    """Each batch's ids with the index of its first sentence."""
    first = 0
    for b in range(len(stream)):
        ids = stream.batch(b)
        yield ids, first
        first += int((ids < 0).sum())


class Census(NamedTuple):
    """What scoring needs to know of every prediction of a text: how many there are,
    how often each word is the target (``targets``, (V,) int64) and the sentences."""

    predictions: int
    targets: np.ndarray
    sentences: int


def census(stream: IdStream, model: str, window: int, vocab_size: int) -> Census:
    """Count the predictions of ``stream`` for ``model`` in one pass."""
    targets = np.zeros(vocab_size, dtype=np.int64)
    sentences = 0
    for ids, _ in batches_of(stream):
        for words in prediction_targets(ids, model, window):
            targets += np.bincount(words, minlength=vocab_size)
        sentences += int((ids < 0).sum())
    return Census(int(targets.sum()), targets, sentences)


def prediction_targets(ids: np.ndarray, model: str, window: int) -> Iterator[np.ndarray]:
    """The word each prediction of ``ids`` predicts, in ``plan_batch``'s order and
    blocks, without planning their inputs."""
    if model == "cbow":
        yield ids[cbow_positions(ids, window)]
        return
    for _, outputs in skipgram_pairs(ids, window):
        yield ids[outputs]


def joined(parts: list[Planned]) -> Planned:
    """The planned predictions of several batches as one block (sentence indices are the text's already)."""
    return Planned(
        np.concatenate([p.targets for p in parts]),
        np.concatenate([p.sentences for p in parts]),
        concatenated([p.inputs for p in parts]),
        concatenated([p.contexts for p in parts]),
        np.concatenate([p.normalised for p in parts]),
    )


def concatenated(arrays: list[np.ndarray | None]) -> np.ndarray | None:
    """The arrays end to end, or None where they are None."""
    present = [array for array in arrays if array is not None]
    return np.concatenate(present) if present else None


class Plan:
    """The predictions of an encoded text to score with a model of ``model`` and
    ``window``: counted once (``census``) and, when sampled, drawn once and kept, so
    that scoring the text again after each epoch recomputes only what depends on
    the weights, in one block; every prediction is planned again, batch by batch, otherwise."""

    def __init__(self, stream: IdStream, model: str, window: int, sampling: Sampling, vocab_size: int):
        self.stream, self.model, self.window, self.sampling = stream, model, window, sampling
        self.census = census(stream, model, window, vocab_size)
        if self.census.predictions == 0:
            raise CorpusError("nothing to score: no word of the corpus has an in-vocabulary neighbour")
        self.kept = None if sampling.predictions is None else [joined(list(self.draw()))]

    def draw(self) -> Iterator[Planned]:
        sample = Sample(self.census.predictions, self.sampling)
        for ids, first in batches_of(self.stream):
            yield from plan_batch(ids, first, self.model, self.window, sample)

    def batches(self) -> Iterator[Planned]:
        return iter(self.kept) if self.kept is not None else self.draw()


class TreeScorer:
    """Hierarchical softmax's log-probabilities with the output weights ``syn1`` and
    the tree's ``paths`` (``weights.path_tables``: nodes, labels, offsets)."""

    def __init__(self, syn1: np.ndarray, paths: tuple[np.ndarray, np.ndarray, np.ndarray], threads: int = 2):
        self.syn1, self.paths, self.threads = syn1, paths, threads

    @classmethod
    def of(cls, state: TrainState) -> "TreeScorer":
        return cls(state.syn1, path_tables(state.vocab, state.config))

    def log_probs(self, hidden: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """``log p(target | hidden)`` (nats, float64 (B,)) for hidden vectors (B, D)
        (``kernels.path_log_probs``), the rows split between the threads."""
        from w2v.engine.kernels import path_log_probs  # Numba: imported when a model is scored

        out = np.empty(len(targets))
        hidden = np.ascontiguousarray(hidden, dtype=np.float32)
        in_threads(
            len(targets), lambda p: path_log_probs(hidden[p], targets[p], self.syn1, *self.paths, out[p]), self.threads
        )
        return out


def log_normalisers(
    hidden: np.ndarray, out: np.ndarray, offsets: np.ndarray | None, plain: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``log Z = log sum_w exp(s_w)`` and ``log Z_ns = log sum_w sigma(s_w + offsets_w)``
    (B,) float64 for the hidden vectors (B, D), ``s_w = u_w . h`` over the rows of
    ``out`` (V, D), in blocks of ``BLOCK_VALUES`` scores (float32; the logs float64).
    ``Z_ns`` normalises negative sampling's implied distribution (``NoiseScorer``; nan
    where ``offsets`` is None; ``Z`` is nan unless ``plain``); where every ``s_w + offsets_w`` is below ``SIGMA_FLOOR``
    it is taken as ``log sum_w exp(s_w + offsets_w)``, which it then equals to float32
    precision."""
    log_z = np.full(len(hidden), np.nan)
    log_z_ns = np.full(len(hidden), np.nan)
    rows = max(1, BLOCK_VALUES // max(len(out), 1))
    shift = None if offsets is None else offsets.astype(np.float32)
    room = np.empty((min(rows, len(hidden)), len(out)), dtype=np.float32)  # each block's scores, worked in place
    for start in range(0, len(hidden), rows):
        block = slice(start, start + rows)
        scores = np.matmul(hidden[block], out.T, out=room[: len(hidden[block])])
        if plain:
            log_z[block] = logsumexp_rows(scores)
        if shift is None:
            continue
        scores += shift
        low = scores.max(axis=1) < SIGMA_FLOOR
        below = logsumexp_rows(scores[low]) if low.any() else None
        np.negative(scores, out=scores)  # sigma(a) = 1 / (1 + exp(-a)), in place
        with np.errstate(over="ignore"):  # exp(-a) of a far below 0 is inf, and sigma(a) then 0
            np.exp(scores, out=scores)
        scores += 1.0
        np.reciprocal(scores, out=scores)
        log_z_ns[block] = np.log(scores.sum(axis=1, dtype=np.float64))
        if below is not None:
            log_z_ns[block][low] = below
    return log_z, log_z_ns


def logsumexp_rows(x: np.ndarray) -> np.ndarray:
    """``log sum_j exp(x[i, j])`` (float64 (rows,)) for each row of ``x`` (float32)."""
    top = x.max(axis=1)
    return top + np.log(np.exp(x - top[:, None]).sum(axis=1, dtype=np.float64))


class Expansions(NamedTuple):
    """``log sum_w pi_w exp(u_w . h) ~ h . mean + h^T covariance h / 2``: the
    second-order (cumulant) expansions in ``h`` of normalisers under k weightings
    ``pi`` of the output vectors ``u_w``, each summing to 1 (``means`` (D, k),
    ``covariances`` (D, k D), float32). Stand-ins for ``log Z`` at ``k D^2`` flops a
    prediction instead of ``V D``: control variates (``sampling``)."""

    means: np.ndarray
    covariances: np.ndarray

    @classmethod
    def of(cls, out: np.ndarray, weights: np.ndarray) -> "Expansions":
        """For the output vectors ``out`` (V, D) and weightings ``weights`` (k, V)."""
        weights = weights.astype(np.float32)
        means = weights @ out  # (k, D)
        blocks = [out.T @ (out * pi[:, None]) - np.outer(mean, mean) for pi, mean in zip(weights, means, strict=True)]
        return cls(np.ascontiguousarray(means.T), np.concatenate(blocks, axis=1))

    def log_z(self, hidden: np.ndarray) -> np.ndarray:
        """(B, k) float64: each expansion at each hidden vector (B, D)."""
        k = self.means.shape[1]
        quadratic = (hidden @ self.covariances).reshape(len(hidden), k, -1)
        return (hidden @ self.means + 0.5 * np.einsum("bkd,bd->bk", quadratic, hidden)).astype(np.float64)


class NoiseScorer:
    """The word output vectors' distributions for blocks of predictions (module
    docstring). For skip-gram, whose hidden vector is the input word's row, the
    normalisers are computed once per input word and kept."""

    def __init__(self, state: TrainState, inputs: WordInputs, diagnostics: bool = True):
        self.syn0, self.out = inputs.means, state.syn1neg
        self.log_q = state.vocab.log_noise_distribution(state.config.ns_exponent)
        self.cache = np.full((2, len(state.vocab)), np.nan)  # per input word: log Z, log Z_ns
        self.implied = LOSSES[state.config.output_loss or "hs"].scored == "implied"
        draws = float(state.config.negative or 0)  # k, above 0 for negative sampling
        self.offsets = np.log(draws) + self.log_q if self.implied else None  # log(k q_w)
        self.plain = diagnostics or not self.implied  # softmax(s): the own distribution, or a diagnostic
        uniform = np.full(len(self.out), 1.0 / max(len(self.out), 1))
        self.expansions = Expansions.of(self.out, np.stack([uniform, np.exp(self.log_q)]))

    def normalisers(self, planned: Planned, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log Z`` of softmax(s) and ``log Z_ns`` of negative sampling's implied
        distribution (``log_normalisers``) for each normalised prediction."""
        if planned.inputs is None:
            return log_normalisers(hidden[planned.normalised], self.out, self.offsets, self.plain)
        inputs = planned.inputs[planned.normalised]
        missing = np.unique(inputs[np.isnan(self.cache[0, inputs])])
        if len(missing):
            self.cache[:, missing] = log_normalisers(self.syn0[missing], self.out, self.offsets, self.plain)
        return self.cache[0, inputs], self.cache[1, inputs]

    def proxies(self, planned: Planned, hidden: np.ndarray) -> np.ndarray:
        """(B, 2): minus both expansions (``Expansions``) at each prediction; for
        skip-gram computed once per input word."""
        if planned.inputs is None:
            return -self.expansions.log_z(hidden)
        words, at = np.unique(planned.inputs, return_inverse=True)
        return -self.expansions.log_z(self.syn0[words])[at]

    def parts(self, planned: Planned, hidden: np.ndarray) -> "dict[str, Parts]":
        """The ``Parts`` of the loss's own distribution (``own``: for negative sampling
        the one it implies) and of ``plain`` softmax(s)."""
        scores = np.einsum("ij,ij->i", hidden, self.out[planned.targets]).astype(np.float64)
        log_z, log_z_ns = self.normalisers(planned, hidden)
        proxies = self.proxies(planned, hidden)
        plain = Parts(scores, proxies, -log_z)
        if self.offsets is None:
            return {"own": plain, "plain": plain}
        log_sigma = -np.logaddexp(0.0, -(scores + self.offsets[planned.targets]))  # log sigma(s_o + log(K q_o))
        own = Parts(log_sigma, proxies, -log_z_ns)
        return {"own": own, "plain": plain} if self.plain else {"own": own}


class Parts(NamedTuple):
    """One distribution's log-probabilities of a block of B predictions, in nats, as
    the two-phase estimator takes them (``sampling.TwoPhase.add``)."""

    exact: np.ndarray  # (B,): the part computed for every prediction (log sigma(.), or s_o)
    proxies: np.ndarray  # (B, C): control variates of the normaliser (C = 0: none)
    minus_log_z: np.ndarray  # (B,): -log Z where normalised (0 where the distribution needs none)


@dataclass
class ScoreResult:
    """``scores``, one per loss scored; ``sentence_bits`` (S, losses) float64: each
    sentence's total log-probability in bits under each loss's distribution, over
    the predictions normalised (all of them by default); ``sample``: the model's
    subsampling threshold, which can put its figure above the unigram model's
    (``above_unigram_note``)."""

    scores: list[Score]
    sentence_bits: np.ndarray
    sample: float = 0.0

    def above_unigram(self) -> str | None:
        """The first loss's ``above_unigram_note`` (one line is enough), or None."""
        notes = (above_unigram_note(s.loss, self.sample, bits=s.bits_per_word, unigram=s.unigram_bits_per_word)
                 for s in self.scores)  # fmt: skip
        return next((note for note in notes if note is not None), None)


def model_losses(config) -> list[str]:
    """The losses a model of ``config`` can be scored with: ``hs`` first, then its word output vectors'."""
    return config.losses


def score_model(
    state: TrainState, corpus, workdir: str, window: int | None = None, sampling: Sampling = EVERY_PREDICTION
) -> ScoreResult:
    """Score ``state``'s model on ``corpus`` (a path, URL, list of them, or tokenised
    sentences), reading it into ``workdir``. ``window``: the pairs' reach (default the
    model's; ConfigError where ``TrainConfig`` refuses it); ``sampling``: which
    predictions (default all, exactly)."""
    window = window or state.config.window
    replace(state.config, window=window).validate()
    encoded = encode_corpus(corpus, state.config, workdir, lambda _words, _counts: state.vocab)
    try:
        plan = Plan(encoded.stream, state.config.model, window, sampling, len(state.vocab))
        return score_plan(state, plan, encoded)
    finally:
        encoded.stream.close()


def score_plan(
    state: TrainState,
    plan: Plan,
    encoded: Encoded,
    *,
    losses: list[str] | None = None,
    tree: TreeScorer | None = None,
    subwords: tuple[np.ndarray, np.ndarray] | None = None,
    diagnostics: bool = True,
) -> ScoreResult:
    """Score ``state``'s model on ``plan``'s predictions of ``encoded`` (a corpus
    encoded with the model's vocabulary) for ``losses`` (of ``model_losses``; all if
    None); ``tree``: hierarchical softmax's scorer, and ``subwords``: the subword
    rows and offsets (``WordInputs.of``), if the caller has them already;
    ``diagnostics``: negative sampling's softmax(s) figures too (``Score``)."""
    losses = model_losses(state.config) if losses is None else losses
    if not losses or state.syn0.shape[0] == 0:
        raise FormatError("the model has no output weights to score with")
    log_unigram = np.log(state.vocab.counts / state.vocab.total)
    inputs = WordInputs.of(state, subwords)
    noise = NoiseScorer(state, inputs, diagnostics) if losses[-1] != "hs" else None
    tree = tree or (TreeScorer.of(state) if losses[0] == "hs" else None)
    estimates = {(loss, part): TwoPhase(0 if loss == "hs" else 2) for loss in losses for part in ("own", "plain")}
    sentence_logs = np.zeros((plan.census.sentences + 1, len(losses)))
    for planned in plan.batches():
        hidden = hidden_vectors(planned, inputs, state.config.cbow_mean)
        unigram = log_unigram[planned.targets]
        for column, loss in enumerate(losses):
            normalised = planned.normalised if loss != "hs" else np.ones(len(hidden), dtype=bool)
            for part, parts in loss_parts(loss, planned, hidden, tree if loss == "hs" else noise).items():
                estimates[loss, part].add(parts.exact, unigram, parts.proxies, normalised, parts.minus_log_z)
                if part == "own":
                    full = parts.exact[normalised] + parts.minus_log_z
                    at = planned.sentences[normalised]
                    sentence_logs[:, column] += np.bincount(at, full, minlength=len(sentence_logs))
    unigram_mean = float(plan.census.targets @ log_unigram) / plan.census.predictions
    oov = encoded.corpus_words - encoded.stream.words
    scores = [summary(loss, estimates, unigram_mean, oov, plan.census.predictions) for loss in losses]
    return ScoreResult(scores, sentence_logs[: plan.census.sentences] * LOG2E, state.config.sample)


def loss_parts(
    loss: str, planned: Planned, hidden: np.ndarray, scorer: "TreeScorer | NoiseScorer | None"
) -> dict[str, Parts]:
    """``loss``'s log-probabilities of a block (``Parts``) per distribution (``own``,
    and ``plain`` for the word output vectors, scored by a ``NoiseScorer``);
    hierarchical softmax's, scored by a ``TreeScorer``, are exact, with no normaliser."""
    if isinstance(scorer, TreeScorer):
        exact = scorer.log_probs(hidden, planned.targets)
        return {"own": Parts(exact, np.zeros((len(hidden), 0)), np.zeros(len(hidden)))}
    assert isinstance(scorer, NoiseScorer)
    return scorer.parts(planned, hidden)


def summary(loss: str, estimates: dict, unigram_mean: float, oov: int, population: int) -> Score:
    """The ``Score`` of one loss from its estimates (``TwoPhase``, by (loss, part))."""
    own = estimates[loss, "own"]
    bits = -own.mean(unigram_mean) * LOG2E
    score = Score(loss, own.count, oov, bits, 2.0**bits, -unigram_mean * LOG2E)
    score.standard_error = own.standard_error(population) * LOG2E
    score.normalised = own.normaliser.count
    if loss != "hs" and estimates[loss, "plain"].count:
        plain = estimates[loss, "plain"]
        sxx, _, _ = plain.normaliser.centred()
        score.mean_log_z = -plain.normaliser.means()[0]
        score.std_log_z = math.sqrt(max(sxx, 0.0) / max(plain.normaliser.count, 1))
        score.bits_per_word_z1 = -plain.sum_c / max(plain.count, 1) * LOG2E
        score.bits_per_word_plain = -plain.mean(unigram_mean) * LOG2E
    return score


def above_unigram_note(loss: str, sample: float, *, bits: float, unigram: float) -> str | None:
    """The line that says why a model trained with subsampling (``sample`` above 0)
    scores ``bits`` per word with ``loss``, above the ``unigram`` model's, and what to
    compare instead; None where it scores below it or was trained without
    subsampling (docs/estimators.md)."""
    if sample <= 0 or not bits > unigram:
        return None
    return (
        f"note: {loss} scores {bits:.2f} bits per word, above the unigram model's {unigram:.2f}, as a model "
        f"trained with --sample {sample:g} can: subsampling thinned out the frequent words it learned from, so it "
        "under-predicts them in raw text. Compare models trained with the same --sample (--sample 0 to compare "
        "with the unigram model; docs/estimators.md)"
    )
