"""The Numba training kernels: skip-gram and CBOW over a batch of token ids.

The only Numba code of the package. Pure numeric functions: no I/O, no Python
objects, no allocation per word. One kernel serves both models; hierarchical
softmax and negative sampling are two loss functions of one shape
``(hidden, target, gradient buffer, output matrix, learning rate) -> loss`` that
either or both apply, as in word2vec.c.

Conventions
-----------
- ``tokens``: int32 vocabulary ids; ``-1`` ends a sentence. Words below
  ``min_count`` are already gone, so positions are counted as in word2vec.c.
- ``syn0`` (V, D) float32: input vectors, the ones written out.
- ``syn1`` (V - 1, D) float32: inner-node vectors of the Huffman tree (HS).
- ``syn1neg`` (V, D) float32: output vectors for negative sampling (NS).
  A loss that is off gets a (0, D) array.
- Randomness: word2vec.c's 64-bit LCG ``r = r * 25214903917 + 11``, seeded per
  batch by the caller. Unlike C we read the high bits (the low 16 bits of a
  power-of-two LCG have period 2**16).
- Losses are negative log-likelihoods in nats, accumulated in float64.

Deviations from word2vec.c (see docs/parity.md): the sigmoid is computed
exactly rather than from a 1000-entry table; negatives come from an alias table
of the exact unigram**0.75 distribution rather than a 1e8-entry table.
Hierarchical softmax keeps C's rule of skipping a node when ``|f| >= 6``.
"""

import math

import numpy as np
from numba import njit

FASTMATH = {"reassoc", "contract"}  # not fastmath=True: that makes isnan() always false
JIT = {"nogil": True, "fastmath": FASTMATH, "cache": True}
LCG_MUL = np.uint64(25214903917)
LCG_ADD = np.uint64(11)
HS_MAX_EXP = 6.0  # word2vec.c's MAX_EXP: HS skips nodes with |f| >= this


@njit(inline="always", **JIT)
def lcg_next(state):
    """One step of word2vec.c's generator (uint64 -> uint64, wraps)."""
    return state * LCG_MUL + LCG_ADD


@njit(inline="always", **JIT)
def uniform24(state):
    """A float in [0, 1) from the high 24 bits of ``state``."""
    return np.float32(state >> np.uint64(40)) * np.float32(1.0 / 16777216.0)


@njit(inline="always", **JIT)
def softplus(x):
    """log(1 + exp(x)) without overflow, in float64: the loss of one logistic unit."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


@njit(inline="always", **JIT)
def draw_noise(state, alias_prob, alias_idx):
    """One draw from the alias table. Returns (word id, new state).

    ``alias_prob`` (V,) uint32 holds thresholds in [0, 2**24]; ``alias_idx`` (V,)
    int32 the alias of each column.
    """
    state = lcg_next(state)
    column = ((state >> np.uint64(32)) * np.uint64(alias_prob.shape[0])) >> np.uint64(32)
    state = lcg_next(state)
    if (state >> np.uint64(40)) < alias_prob[column]:
        return np.int32(column), state
    return alias_idx[column], state


@njit(inline="always", **JIT)
def dot(hidden, out, row, dim):
    """hidden (D,) . out[row] (D,) in float32."""
    f = np.float32(0.0)
    for k in range(dim):
        f += hidden[k] * out[row, k]
    return f


@njit(inline="always", **JIT)
def logistic_update(hidden, out, row, f, label, alpha, grad, dim):
    """One logistic unit of the output layer, ``f = hidden . out[row]`` predicting ``label``.

    Adds alpha * dloglik/dhidden to ``grad`` (D,) and alpha * dloglik/dout[row]
    to ``out[row]``, in one loop (the gradient reads out[row] before its update).
    Returns the loss in nats.
    """
    g = np.float32((label - 1.0 / (1.0 + math.exp(-f))) * alpha)
    for k in range(dim):
        grad[k] += g * out[row, k]
        out[row, k] += g * hidden[k]
    return softplus(-f if label > 0.5 else f)


@njit(inline="always", **JIT)
def hs_loss(hidden, target, syn1, grad, alpha, codes, points, code_offsets, dim):
    """Hierarchical softmax along ``target``'s Huffman path. Returns the loss (nats).

    ``codes`` (N,) uint8 and ``points`` (N,) int32 hold every word's path from the
    root, word w at ``code_offsets[w]:code_offsets[w + 1]``. Label = 1 - code.
    Nodes where |f| >= 6 are left unchanged, as in word2vec.c.
    """
    loss = 0.0
    for j in range(code_offsets[target], code_offsets[target + 1]):
        node = points[j]
        label = 1.0 - codes[j]
        f = dot(hidden, syn1, node, dim)
        if f <= -HS_MAX_EXP or f >= HS_MAX_EXP:
            loss += softplus(-f if label > 0.5 else f)
        else:
            loss += logistic_update(hidden, syn1, node, f, label, alpha, grad, dim)
    return loss


@njit(inline="always", **JIT)
def ns_loss(hidden, target, syn1neg, grad, alpha, negatives, alias_prob, alias_idx, state, dim):
    """Negative sampling: target as positive, ``len(negatives) - 1`` noise words.

    The noise words are drawn into ``negatives`` first, then scored; a noise word
    equal to the target is skipped (word2vec.c). Returns (loss in nats, state).
    """
    negatives[0] = target
    for d in range(1, negatives.shape[0]):
        negatives[d], state = draw_noise(state, alias_prob, alias_idx)
    loss = 0.0
    for d in range(negatives.shape[0]):
        word = negatives[d]
        if d > 0 and word == target:
            continue
        f = dot(hidden, syn1neg, word, dim)
        loss += logistic_update(hidden, syn1neg, word, f, 1.0 if d == 0 else 0.0, alpha, grad, dim)
    return loss, state


@njit(inline="always", **JIT)
def output_loss(hidden, target, params, grad, alpha, negatives, state, dim):
    """Both losses that are on (HS if ``syn1`` has rows, NS if ``syn1neg`` has)."""
    syn1, syn1neg, codes, points, code_offsets, alias_prob, alias_idx = params
    loss = 0.0
    if syn1.shape[0] > 0:
        loss += hs_loss(hidden, target, syn1, grad, alpha, codes, points, code_offsets, dim)
    if syn1neg.shape[0] > 0:
        step, state = ns_loss(hidden, target, syn1neg, grad, alpha, negatives, alias_prob, alias_idx, state, dim)
        loss += step
    return loss, state


def make_train_batch(dim):
    """Build the batch kernel for vectors of ``dim`` floats (a compile-time constant).

    The returned function has the signature

    ``train_batch(tokens, syn0, params, keep_prob, window, negative, cbow, cbow_mean,
    alpha, seed) -> (loss_sum, examples)``

    - ``tokens`` (N,) int32, ``-1`` ending sentences;
    - ``syn0`` (V, D) float32, updated in place (as are the output matrices);
    - ``params``: ``(syn1, syn1neg, codes, points, code_offsets, alias_prob, alias_idx)``;
    - ``keep_prob`` (V,) float32: probability of keeping each word (subsampling);
    - ``window``: maximum window, shrunk at random per centre word to window - b,
      b uniform in [0, window), as in word2vec.c;
    - ``cbow``: predict the centre word from the (mean, or sum if not
      ``cbow_mean``) of its context; else skip-gram, where each context word's
      input vector predicts the centre word (word2vec.c, gensim);
    - ``alpha``: learning rate for the whole batch; ``seed``: uint64 LCG seed.

    Returns the summed loss (float64, nats) and the number of training examples
    (skip-gram: context-centre pairs; CBOW: centre words).
    """

    @njit(**JIT)
    def train_batch(tokens, syn0, params, keep_prob, window, negative, cbow, cbow_mean, alpha, seed):
        state = np.uint64(seed)
        sentence = np.empty(tokens.shape[0], dtype=np.int32)
        hidden = np.empty(dim, dtype=np.float32)
        grad = np.empty(dim, dtype=np.float32)
        negatives = np.empty(negative + 1, dtype=np.int32)
        loss = 0.0
        examples = 0
        i = 0
        while i < tokens.shape[0]:
            length = 0
            while i < tokens.shape[0] and tokens[i] >= 0:
                word = tokens[i]
                i += 1
                if keep_prob[word] < 1.0:
                    state = lcg_next(state)
                    if keep_prob[word] < uniform24(state):
                        continue
                sentence[length] = word
                length += 1
            i += 1  # the sentence end
            for pos in range(length):
                state = lcg_next(state)
                reach = window - np.int64((state >> np.uint64(16)) % np.uint64(window))
                lo = max(pos - reach, 0)
                hi = min(pos + reach + 1, length)
                target = sentence[pos]
                if cbow:
                    count = 0
                    hidden[:] = 0.0
                    for c in range(lo, hi):
                        if c != pos:
                            count += 1
                            for k in range(dim):
                                hidden[k] += syn0[sentence[c], k]
                    if count == 0:
                        continue
                    if cbow_mean:
                        for k in range(dim):
                            hidden[k] /= count
                    grad[:] = 0.0
                    step, state = output_loss(hidden, target, params, grad, alpha, negatives, state, dim)
                    loss += step
                    examples += 1
                    for c in range(lo, hi):
                        if c != pos:
                            for k in range(dim):
                                syn0[sentence[c], k] += grad[k]
                else:
                    for c in range(lo, hi):
                        if c == pos:
                            continue
                        context = sentence[c]
                        grad[:] = 0.0
                        step, state = output_loss(syn0[context], target, params, grad, alpha, negatives, state, dim)
                        loss += step
                        examples += 1
                        for k in range(dim):
                            syn0[context, k] += grad[k]
        return loss, examples

    return train_batch


_BATCH_KERNELS = {}


def train_batch_kernel(dim):
    """The (cached) batch kernel for vector size ``dim``."""
    if dim not in _BATCH_KERNELS:
        _BATCH_KERNELS[dim] = make_train_batch(dim)
    return _BATCH_KERNELS[dim]
