r"""The training mathematics: skip-gram and CBOW over a batch of token ids.

The models
----------
Each centre word ``o`` of a sentence, within a window shrunk at random per
centre word, is predicted from its context words ``c``:

- skip-gram: each context word's input vector ``h = v_c`` (a row of ``syn0``)
  predicts ``o`` on its own (word2vec.c's and gensim's order: the context
  predicts the centre; one example per (context, centre) pair);
- CBOW: the mean (or, with ``cbow_mean`` off, the sum) of the context words'
  input vectors, ``h = (1/|C|) sum_c v_c``, predicts ``o`` (one example per
  centre word).
- With subwords (fastText's model), a word stands for its rows ``R_w`` of
  ``syn0``: its own and its character n-grams', ``v_w = (1/|R_w|) sum_{r in R_w} syn0[r]``,
  and CBOW's ``h`` is one mean over all the rows of all the context words; the
  gradient of ``h`` goes unscaled to every row. Each sentence position's rows
  are summed once as it comes within reach of the centre word and moved once as
  it leaves (``InputRows``).

The losses
----------
Each loss is a set of logistic units: candidate output rows ``u_r`` with a label
``t_r`` in {0, 1}, and the loss of an example is
``L = -sum_r [t_r log sigma(u_r . h) + (1 - t_r) log sigma(-u_r . h)]`` (nats),
``sigma(f) = 1 / (1 + exp(-f))``. With the step ``g_r = alpha (t_r - sigma(u_r . h))``,
SGD on ``L`` moves ``u_r += g_r h`` and ``h`` by ``sum_r g_r u_r`` (taken with every
``u_r`` as it was before the example), which goes to every input row of ``h``
unscaled, as in word2vec.c.

- hierarchical softmax: ``p(o | h) = prod_{n in path(o)} sigma((1 - 2 d_n) u_n . h)``,
  the candidates are the inner nodes ``n`` of ``o``'s Huffman path (rows of
  ``syn1``) and ``t_n = 1 - d_n`` with ``d_n`` the code bit. word2vec.c leaves a
  node alone where ``|u_n . h| >= 6`` (``HS_MAX_EXP``).
- negative sampling: ``log sigma(u_o . h) + sum_k log sigma(-u_k . h)``, the
  candidates being the target ``o`` (label 1) and ``k`` noise words drawn from the
  unigram distribution to the power 0.75 (label 0; rows of ``syn1neg``); a noise
  word equal to the target is skipped, as in word2vec.c.

``logistic_loss`` is the one interface: output units (``Units``: candidate rows
of an output matrix, their labels and per-row logit offsets such as NCE's
``-log(k q(w))``), against one or more inputs. A loss with another link (a
softmax over the rows, ``softmax_loss``) is another function of the same arguments.
The kernel's other arguments travel in named tuples too: its settings
(``Settings``), its buffers (``Scratch``), the output layer (``Outputs``, with the
batch's copy of the top of the tree, ``Top``) and each centre word (``Window``).

Conventions
-----------
- ``tokens``: int32 vocabulary ids; ``-1`` ends a sentence. Words below
  ``min_count`` are already gone, so positions are counted as in word2vec.c.
- ``syn0`` (V, D) float32 and the output matrices of ``weights.Tables`` are
  updated in place, without locks (Hogwild, as word2vec.c's threads).
- Randomness: word2vec.c's 64-bit LCG ``r = r * 25214903917 + 11``, seeded per
  batch by the caller. Unlike C, the high bits are read (the low 16 bits of a
  power-of-two LCG have period 2**16).
- Losses are negative log-likelihoods in nats, accumulated in float64.

Deviations from word2vec.c (docs/parity.md): the sigmoid is computed (to float32
precision) rather than read from a 1000-entry table; noise words come from an
alias table of the exact unigram**0.75 distribution rather than a 1e8-entry
table; skip-gram batches each window (``window_loss``); with several threads,
each batch trains the top of the tree in a copy of its own (``top_of_tree``);
with subwords, a position's input rows move when it leaves reach (``InputRows``).
``Settings.arithmetic`` (None in every run) makes the kernel take word2vec.c's
draws, sigmoid table, float order and skip-gram pair order instead
(``c_arithmetic``): studies/c_trace traces it against word2vec.c, which it then
matches bit for bit.
"""

from typing import Any, NamedTuple

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from w2v.config import TrainConfig
from w2v.corpus.vocab import MAX_CODE_LENGTH  # the longest Huffman path: sizes the buffer of (unit, input) pairs
from w2v.engine.c_arithmetic import (
    MAX_SENTENCE,
    dot_in_order,
    low16_uniform,
    move_in_order,
    record_step,
    table_noise,
    table_sigmoid,
)
from w2v.engine.jit import (
    LANES,
    LINE_FLOATS,
    jit_helper,
    jit_inline,
    jit_kernel,
    keep_alive,
    lanes_add,
    lanes_divide,
    lanes_fma,
    lanes_load,
    lanes_splat,
    lanes_store,
    lanes_total,
    lanes_totals4,
    lanes_zero,
    prefetch_row,
    scratch,
    stack_matrix,
    unmanaged,
)
from w2v.losses import LOSSES, NO_WORD_LOSS

LCG_MUL = np.uint64(25214903917)
LCG_ADD = np.uint64(11)
HS_MAX_EXP = 6.0  # word2vec.c's MAX_EXP: hierarchical softmax skips nodes with |f| >= this
CHUNK = 16  # skip-gram takes at most this many of a window's context words at once
TOP_NODES = 15  # the tree rows nearest the root (4 levels) that a batch trains in a copy of its own
UNITS = MAX_CODE_LENGTH * CHUNK  # (output unit, input) pairs of one loss call at most: a path's nodes x a chunk
# ``Settings.kind``: the loss of the word output vectors, by its code in ``losses.LOSSES``
NS, NCE, SAMPLED_SOFTMAX, SOFTMAX = (LOSSES[name].code for name in ("ns", "nce", "sampled_softmax", "softmax"))


class Settings(NamedTuple):
    """The batch kernel's settings: a run's, the same for all its batches."""

    window: int  # the maximum window, shrunk at random per centre word to window - b, b uniform in [0, window)
    samples: int  # noise words or candidates per centre word (``draw_candidates``)
    cbow: bool  # CBOW, else skip-gram (``window_loss``)
    cbow_mean: bool  # CBOW's input: the mean of the context words' input vectors, else their sum
    hs: bool  # hierarchical softmax: ``tables.syn1`` trained along the target's path
    kind: int  # the loss of ``tables.syn1neg``: NS, NCE, SAMPLED_SOFTMAX, SOFTMAX or NO_WORD_LOSS (none)
    subwords: bool  # a word's input is the mean of its rows ``tables.subword_rows`` (``InputRows``)
    beta: float = 0.0  # the full softmax's self-normalisation weight (``softmax_loss``)
    sharers: int = 1  # threads training the weights at once, T (``top_of_tree``)
    arithmetic: Any = None  # None: w2v's; a ``c_arithmetic.CArithmetic``: word2vec.c's draws, sigmoid, float order

    @classmethod
    def of(cls, config: TrainConfig, sharers: int) -> "Settings":
        """The settings of a run of ``config`` (resolved) with ``sharers`` threads at
        once, each of one type whatever the config holds, so that every run calls
        the one compiled kernel."""
        kind = LOSSES[config.output_loss].code if config.output_loss else NO_WORD_LOSS
        modes = (config.model == "cbow", bool(config.cbow_mean), bool(config.hs), kind, bool(config.subwords))
        return cls(config.window, config.samples, *modes, float(config.self_norm), sharers)


class Scratch(NamedTuple):
    """The float32 buffers an example is worked in, reused from one to the next: on
    the kernel's stack, but ``table``; and the arithmetic it is worked with.
    S = ``row_stride(D)``; the inputs of an example are rows 0 .. count - 1 of
    ``inputs`` (1 for CBOW, up to ``CHUNK``)."""

    inputs: np.ndarray  # (CHUNK, S): the inputs x_i, each in the first D floats of a row
    grads: np.ndarray  # (CHUNK, S): their gradients, added to the input rows after the example
    pairs: np.ndarray  # (2, UNITS): the (unit, input) pairs' logits then steps, unit by unit; their labels
    table: np.ndarray  # (>= R, CHUNK): the softmax's logits then steps, a row per candidate (``softmax_loss``)
    arithmetic: Any  # ``Settings.arithmetic``, for the loss code, which is handed the buffers alone


class Units(NamedTuple):
    """Output units: R rows of an output matrix, each with a label and a logit offset."""

    out: np.ndarray  # (M, >= D) float32: the output matrix, moved in place
    rows: np.ndarray  # (R,) int32: the units' rows of ``out``, ``u_r = out[rows[r]]``
    labels: Any  # (R,) float32: their labels t_r, 1 or 0; None for a softmax (its target is given apart)
    offsets: Any  # (R,) float32: their logit offsets b_r; None for none (``logit_offset``)


class Top(NamedTuple):
    """A batch's copy of the top of the tree (``top_of_tree``)."""

    copy: np.ndarray  # (K, S) float32: rows first .. first + K - 1 of ``tables.syn1``; K = 0: no copy (one thread)
    first: int  # the first of the copied rows in ``tables.syn1``
    rows: np.ndarray  # (MAX_CODE_LENGTH,) int32 scratch: a path's nodes as rows of ``copy``


class Outputs(NamedTuple):
    """The output layer as a batch trains it."""

    tables: Any  # ``weights.Tables``: the output matrices, moved in place, and the tables read with them
    top: Top  # the batch's copy of the top of the tree
    softmax: Units  # the full softmax's units: every row of ``tables.syn1neg``, offsets 0, labels None


class InputRows(NamedTuple):
    """Where a window's inputs are read and where their gradients go, by the rows
    that ``Window.contexts`` names. Words alone: ``syn0`` both, by word id.

    With subwords, the reach: the positions q of a sentence within reach of the
    centre word p, p - window .. p + window, position q in row ``q % (2 window + 1)``.
    A word's input is the mean of its rows ``R_w`` of ``syn0`` (its own and its
    n-grams'), summed as its position comes into the reach (``enter_reach``); the
    gradients the position's windows give it are summed and added to those rows
    as it leaves (``leave_reach``). CBOW's positions stay from ``pos + window`` to
    ``pos - window``: a CBOW input is the mean of some 90 rows of up to 10 words,
    each position's read and moved once rather than once per window (fastText's
    order), up to 2 window windows old within a thread (at most ``CHUNK``).
    Skip-gram's context words come and leave around each window, as fastText
    reads and moves them per pair: an input of one word's rows, older, trained
    measurably worse (docs/parity.md)."""

    values: np.ndarray  # (M, >= D) float32: the rows the inputs are made of
    sizes: np.ndarray  # (M,) int32: the rows of syn0 each value sums (subwords); empty: one each
    moves: np.ndarray  # (M, >= D) float32: where each context's gradient is added
    words: np.ndarray  # (M,) int32: with subwords, the word at each position in reach; else empty


class WindowKit(NamedTuple):
    """What a batch trains each window with: buffers for its words and candidates, the
    output layer, the settings, the steps' buffers and the learning rate."""

    contexts: np.ndarray  # (2 window,) int32: a window's context words (``Window.contexts``)
    candidates: np.ndarray  # (samples + 1,) int32: its candidate rows (``draw_candidates``)
    labels: np.ndarray  # (samples + 1,) float32: their labels, 1 then 0s
    offsets: np.ndarray  # (samples + 1,) float32: their logit offsets
    outputs: Outputs  # the output layer
    settings: Settings  # the run's settings
    buffers: Scratch  # the buffers an example is worked in
    alpha: float  # the learning rate (float32)


class Window(NamedTuple):
    """A centre word and what is trained on it."""

    contexts: np.ndarray  # (C,) int32: its context words, which predict it, as rows of ``InputRows``
    target: int  # its id
    draws: Units  # the candidate rows of ``tables.syn1neg`` drawn for it, the target first (``draw_candidates``)


@jit_helper
def lcg_next(state):
    """One step of word2vec.c's generator (uint64 -> uint64, wraps)."""
    return state * LCG_MUL + LCG_ADD


@jit_helper
def uniform24(state):
    """A float in [0, 1) from the high 24 bits of ``state``."""
    return np.float32(state >> np.uint64(40)) * np.float32(1.0 / 16777216.0)


@jit_helper
def subsample_draw(state, keep, arithmetic):
    """Subsampling's decision on a word kept with probability ``keep`` (float32):
    (dropped, new state). A draw for a word that may be dropped, from the high 24
    bits (``uniform24``); under ``arithmetic`` (``c_arithmetic``), word2vec.c's: a
    draw for every word while subsampling is on, from the low 16 bits."""
    if arithmetic is None:
        if keep < 1.0:
            state = lcg_next(state)
            return keep < uniform24(state), state
        return False, state
    if not arithmetic.subsampling:
        return False, state
    state = lcg_next(state)
    return keep < low16_uniform(state), state


@jit_helper
def window_reach(state, window, arithmetic):
    """A centre word's window, ``window - b`` words each side, b uniform in
    [0, window) from the generator's ``state`` (just stepped): from its bits 16 and
    up; under ``arithmetic``, word2vec.c's ``r % window``."""
    if arithmetic is None:
        return window - np.int64((state >> np.uint64(16)) % np.uint64(window))
    return window - np.int64(state % np.uint64(window))


@jit_helper
def sentence_full(length, arithmetic):
    """Whether a sentence ends at its ``length``-th word kept: never (w2v cuts a line
    into pieces of tokens as it reads it); under ``arithmetic``, at word2vec.c's
    ``MAX_SENTENCE``."""
    if arithmetic is None:
        return False
    return length >= MAX_SENTENCE


@jit_helper
def empty_sentence_draw(state, length, arithmetic):
    """The generator's state after a sentence of ``length`` words kept is begun: as
    it was; under ``arithmetic``, one step on for an empty sentence, as word2vec.c
    draws a window for a stale centre word it then trains nothing on."""
    if arithmetic is None:
        return state
    if length > 0:
        return state
    return lcg_next(state)


LOG1P_UNIT = (  # log(1 + x) on [0, 1]: degree-7 Chebyshev fit, power basis, |error| < 6e-7
    5.62195900721818e-07,
    0.9999574870750696,
    -0.4992065685478763,
    0.32697310001391783,
    -0.2228362583278401,
    0.13076503250360005,
    -0.05262485136716543,
    0.010119082927575069,
)


@jit_helper
def log1p_unit(x):
    """log(1 + x) for x in [0, 1], float32, by Horner's rule on ``LOG1P_UNIT``: the
    loss of every logistic unit needs one, and a call to ``math.log1p`` would cost
    a large share of the kernel only to report the loss."""
    acc = np.float32(LOG1P_UNIT[7])
    for i in range(6, -1, -1):
        acc = acc * x + np.float32(LOG1P_UNIT[i])
    return acc


EXP_STEP = 0.25
EXP_TABLE = np.exp(-EXP_STEP * np.arange(129)).astype(np.float32)  # exp(-i/4), i = 0..128
EXP_POLY = (0.9999999711710855, -0.9999965234355948, 0.499901974761043, -0.16560896642410514, 0.03679683029352918)


@jit_helper
def exp_neg(a):
    """exp(-a) for float32 a >= 0, |relative error| < 3e-7 (exp(-32) stands for
    anything beyond 32): a table of exp(-i/4) times a degree-4 fit of exp(-r) on
    [0, 1/4). Inlined arithmetic, because ``math.exp`` is a call into libm around
    which the compiler saves and reloads every vector register."""
    a = min(a, np.float32(31.99))
    i = np.int64(a * np.float32(1.0 / EXP_STEP))
    r = a - np.float32(i) * np.float32(EXP_STEP)
    p = np.float32(EXP_POLY[4])
    for c in range(3, -1, -1):
        p = p * r + np.float32(EXP_POLY[c])
    return EXP_TABLE[i] * p


@jit_helper
def logistic(f, label):
    """A logistic unit with logit ``f`` (float32) and label ``label`` (0 or 1).

    Returns (sigma(f), loss) with loss = -log P(label) = softplus(-f) for label 1,
    softplus(f) for 0, in nats, from one exponential: with e = exp(-|f|),
    sigma(f) = 1/(1+e) for f >= 0 and e/(1+e) below; softplus(z) = max(z, 0) + log(1 + e).
    """
    e = exp_neg(abs(f))
    s = np.float32(1.0) / (np.float32(1.0) + e)
    if f < 0:
        s = np.float32(1.0) - s
    z = -f if label else f
    return s, max(z, np.float32(0.0)) + log1p_unit(e)


@jit_helper
def draw_noise(state, alias_prob, alias_idx):
    """One draw from the alias table (``weights.Tables``). Returns (word id, new state)."""
    state = lcg_next(state)
    column = ((state >> np.uint64(32)) * np.uint64(alias_prob.shape[0])) >> np.uint64(32)
    state = lcg_next(state)
    if (state >> np.uint64(40)) < alias_prob[column]:
        return np.int32(column), state
    return alias_idx[column], state


@jit_helper
def noise_word(state, tables, arithmetic):
    """One noise word: (its id, new state), from the alias table (``draw_noise``);
    under ``arithmetic``, from word2vec.c's unigram table (``c_arithmetic.table_noise``)."""
    if arithmetic is None:
        return draw_noise(state, tables.alias_prob, tables.alias_idx)
    state = lcg_next(state)
    return table_noise(state, arithmetic.noise_starts), state


@jit_inline
def draw_candidates(candidates, offsets, target, settings, log_k, state, tables):
    """The candidate output rows of an example, into ``candidates`` ((samples + 1,)
    int32): ``candidates[0] = target``, then ``settings.samples`` words drawn with
    replacement from the noise distribution q. A draw equal to the target is dropped
    for negative sampling, as word2vec.c skips it, and kept for NCE and sampled
    softmax: with every draw kept, sampled softmax over the target and its draws is
    consistent for every k (its expected step vanishes at the true logits, as for
    ranking NCE), which removing the hits is not (its gradient tends to the true
    one over ``1 - p(o | h)``). For NCE and sampled softmax,
    ``offsets[r] = -log(k q(w_r))`` (float32) with ``log_k = log(samples)``.
    Returns (how many candidates, new state)."""
    candidates[0] = target
    n = 1
    for _ in range(settings.samples):
        word, state = noise_word(state, tables, settings.arithmetic)
        if word != target or settings.kind != NS:
            candidates[n] = word
            n += 1
    if settings.kind != NS:
        for r in range(n):
            offsets[r] = -(log_k + tables.log_q[candidates[r]])
    return n, state


@jit_helper
def all_distinct(words):
    """Whether the ids ``words`` (a few) are pairwise distinct."""
    for d in range(1, words.shape[0]):
        for e in range(d):
            if words[d] == words[e]:
                return False
    return True


@jit_helper
def logits(buffers, count, o, out, dim):
    """``out[i] = x_i . o`` for the ``count`` inputs ``x_i = buffers.inputs[i]``
    (float32; ``o`` (D,)), in blocks of ``LANES`` floats: four inputs at a time
    against each block of ``o``, so that the four sums do not wait on each other,
    then two, then one, so that no dot product is computed twice. One input (CBOW)
    is a plain loop (``dot_one``)."""
    inputs = buffers.inputs
    if count == 1:
        out[0] = dot_one(inputs[0], o, dim, buffers.arithmetic)
        return
    i = 0
    while count - i >= 4:
        dot_group(inputs, i, 4, o, out, dim)
        i += 4
    if count - i >= 2:
        dot_group(inputs, i, 2, o, out, dim)
        i += 2
    if count - i == 1:
        dot_group(inputs, i, 1, o, out, dim)


@jit_helper
def dot_one(x, o, dim, arithmetic):
    """``x . o`` over the first ``dim`` floats (float32): a plain loop, which LLVM
    vectorises with partial sums of its own (measured faster than masked blocks for
    one input); under ``arithmetic`` in order, word2vec.c's (``c_arithmetic.dot_in_order``)."""
    if arithmetic is not None and arithmetic.in_order:
        return dot_in_order(x, o, dim)
    f = np.float32(0.0)
    for k in range(dim):
        f += x[k] * o[k]
    return f


@jit_helper
def dot_group(inputs, first, n, o, out, dim):
    """``out[i] = inputs[i] . o`` for the ``n`` inputs i = first .. first + n - 1
    (n = 1, 2 or 4, a constant where it is called, so that the compiler keeps only
    its n sums), in blocks of ``LANES`` floats, the n sums side by side: each sum
    adds its lanes in the same order whatever n (``lanes_total``, ``lanes_totals4``)."""
    a, b = inputs[first], inputs[first + min(1, n - 1)]
    c, d = inputs[first + min(2, n - 1)], inputs[first + min(3, n - 1)]
    sa, sb, sc, sd = lanes_zero(), lanes_zero(), lanes_zero(), lanes_zero()
    for k in range(0, dim, LANES):
        block = lanes_load(o, k, dim)
        sa = lanes_fma(lanes_load(a, k, dim), block, sa)
        if n > 1:
            sb = lanes_fma(lanes_load(b, k, dim), block, sb)
        if n > 2:
            sc = lanes_fma(lanes_load(c, k, dim), block, sc)
            sd = lanes_fma(lanes_load(d, k, dim), block, sd)
    if n == 4:
        lanes_totals4(out, first, sa, sb, sc, sd)
        return
    out[first] = lanes_total(sa)
    if n > 1:
        out[first + 1] = lanes_total(sb)


@jit_helper
def unit_steps(steps, labels, n, hs_rule, alpha, arithmetic):
    """Turn the logits ``steps[:n]`` of (output unit, input) pairs into steps, in
    place: g = alpha (label - sigma(f)) (float32), ``labels[:n]`` (float32, 0 or 1)
    holding each pair's label. With ``hs_rule``, g = 0 where |f| >= 6: word2vec.c's
    hierarchical softmax leaves those nodes alone (negative sampling saturates
    instead). Returns the loss summed over the pairs (nats). Under ``arithmetic``
    with a sigmoid table, the steps take word2vec.c's (``table_unit_steps``); the
    loop of every run of w2v is apart from it, so that it compiles as it would alone.

    One flat loop over contiguous buffers, which the compiler vectorises: a
    skip-gram path has about 14 nodes x 6 inputs."""
    if arithmetic is not None and arithmetic.sigmoid.shape[0]:
        return table_unit_steps(steps, labels, n, hs_rule, alpha, arithmetic.sigmoid)
    loss = 0.0
    for p in range(n):
        f = steps[p]
        label = labels[p]
        s, step = logistic(f, label)
        loss += step
        if hs_rule and not (-HS_MAX_EXP < f < HS_MAX_EXP):
            steps[p] = np.float32(0.0)
        else:
            steps[p] = np.float32((label - s) * alpha)
    return loss


@jit_helper
def table_unit_steps(steps, labels, n, hs_rule, alpha, sigmoid):
    """``unit_steps`` with word2vec.c's sigmoid table ``sigmoid`` for the steps
    (``c_arithmetic.table_sigmoid``); the loss still of the computed sigmoid."""
    loss = 0.0
    for p in range(n):
        f = steps[p]
        label = labels[p]
        _, step = logistic(f, label)
        loss += step
        if hs_rule and not (-HS_MAX_EXP < f < HS_MAX_EXP):
            steps[p] = np.float32(0.0)
        else:
            steps[p] = np.float32((label - table_sigmoid(sigmoid, f)) * alpha)
    return loss


@jit_helper
def move_unit(buffers, count, o, steps, dim):
    """Apply one output unit's steps ``steps`` ((count,) float32): each input's gradient
    ``buffers.grads[i]`` gains ``steps[i] * o`` against the row as it was, and the row
    ``o`` (D,) moves by the sum of the ``steps[i] * inputs[i]``. Block by block of
    ``LANES`` floats, the row's block held in registers across the inputs; one
    input (CBOW's hidden vector) moves the row directly in a plain loop, as
    word2vec.c does (``move_one``)."""
    inputs, grads = buffers.inputs, buffers.grads
    if count == 1:
        move_one(steps[0], inputs[0], grads[0], o, dim, buffers.arithmetic)
        return
    for k in range(0, dim, LANES):
        row = lanes_load(o, k, dim)
        moved = row
        for i in range(count):
            g = lanes_splat(steps[i])
            lanes_store(grads[i], k, dim, lanes_fma(g, row, lanes_load(grads[i], k, dim)))
            moved = lanes_fma(g, lanes_load(inputs[i], k, dim), moved)
        lanes_store(o, k, dim, moved)


@jit_helper
def move_one(g, x, gradient, o, dim, arithmetic):
    """One input ``x``'s updates by one output row ``o`` at step ``g``: ``gradient``
    gains ``g o`` against the row as it was, and ``o`` gains ``g x``, in a plain loop;
    under ``arithmetic`` in order, in word2vec.c's rounding (``c_arithmetic.move_in_order``)."""
    if arithmetic is not None and arithmetic.in_order:
        move_in_order(g, x, gradient, o, dim)
        return
    for k in range(dim):
        gradient[k] += g * o[k]
        o[k] += g * x[k]


@jit_helper
def move_unit_pair(buffers, count, o, p, steps_o, steps_p, dim):
    """``move_unit`` on two distinct output rows ``o`` and ``p`` ((D,) each) at once,
    with its results: each input's gradient gains ``steps_o[i] * o + steps_p[i] * p``
    against the rows as they were, and each row moves by the sum of its own steps
    times the inputs. Each input row and gradient is read, and each gradient
    written, once for the two rows."""
    inputs, grads = buffers.inputs, buffers.grads
    for k in range(0, dim, LANES):
        row_o, row_p = lanes_load(o, k, dim), lanes_load(p, k, dim)
        moved_o, moved_p = row_o, row_p
        for i in range(count):
            g, h, x = lanes_splat(steps_o[i]), lanes_splat(steps_p[i]), lanes_load(inputs[i], k, dim)
            gradient = lanes_fma(h, row_p, lanes_fma(g, row_o, lanes_load(grads[i], k, dim)))
            lanes_store(grads[i], k, dim, gradient)
            moved_o, moved_p = lanes_fma(g, x, moved_o), lanes_fma(h, x, moved_p)
        lanes_store(o, k, dim, moved_o)
        lanes_store(p, k, dim, moved_p)


def logit_offset(offsets, u):
    """Unit ``u``'s logit offset: ``offsets[u]``, or -0.0 for no offsets (None)."""
    return -0.0 if offsets is None else offsets[u]


@overload(logit_offset, inline="always")
def compiled_logit_offset(offsets, u):
    """``logit_offset`` in the kernels, chosen by the type of ``offsets``: Numba drops
    the branch of ``if offsets is None`` for a None passed as an argument, not for a
    None held in a tuple (``Units``), whose ``offsets[u]`` it then cannot compile. For
    no offsets it is -0.0, which the compiler drops from a sum (``f + -0.0`` is ``f``
    for every float ``f``), so that hierarchical softmax adds nothing to its logits."""
    if isinstance(offsets, types.NoneType):
        return lambda offsets, u: np.float32(-0.0)
    return lambda offsets, u: offsets[u]


@jit_inline
def logistic_units(buffers, count, units, first, last, hs_rule, alpha, dim):
    """The units ``units.out[units.rows[u]]`` for u in [first, last) (distinct rows),
    with labels ``units.labels[u]`` and logit offsets ``units.offsets[u]``, against
    the ``count`` inputs, all at once: every (unit, input) pair's logit, then all the
    steps (one vectorised loop), then the updates, two units at a time when there
    are several inputs (``move_unit_pair``). As the rows are distinct and the inputs
    do not move until the caller applies ``buffers.grads``, the results are those of
    taking the units one by one. ``buffers.pairs`` holds the pairs' logits then
    steps, unit by unit (``count`` to a unit), and their labels. Returns the loss (nats)."""
    unit_logits(buffers, count, units, first, last, 0, dim)
    loss = unit_steps(buffers.pairs[0], buffers.pairs[1], (last - first) * count, hs_rule, alpha, buffers.arithmetic)
    move_units(buffers, count, units, first, last, buffers.pairs[0], dim)
    return loss


@jit_helper
def unit_logits(buffers, count, units, first, last, at, dim):
    """The logits ``u . x + b`` of the (unit, input) pairs of the units
    ``units.out[units.rows[u]]``, u in [first, last), into ``buffers.pairs[0]`` from
    column ``at`` on, unit by unit (``count`` to a unit), and their labels
    ``units.labels[u]`` into ``buffers.pairs[1]``."""
    steps, pair_labels = buffers.pairs[0], buffers.pairs[1]
    for u in range(first, last):
        start = at + (u - first) * count
        logits(buffers, count, units.out[units.rows[u]], steps[start : start + count], dim)
        offset = logit_offset(units.offsets, u)
        for i in range(start, start + count):
            pair_labels[i] = units.labels[u]
            steps[i] += offset


@jit_helper
def move_units(buffers, count, units, first, last, steps, dim):
    """Apply the steps ``steps`` (float32, ``count`` to a unit, from column 0) of the
    units ``units.out[units.rows[u]]``, u in [first, last): two at a time when there
    are several inputs (``move_unit_pair``), else one by one (``move_unit``)."""
    out, rows = units.out, units.rows
    u = first
    while u < last:
        start = (u - first) * count
        if count > 1 and u + 1 < last:
            after = start + count
            o, p = out[rows[u]], out[rows[u + 1]]
            move_unit_pair(buffers, count, o, p, steps[start:after], steps[after : after + count], dim)
            u += 2
        else:
            move_unit(buffers, count, out[rows[u]], steps[start : start + count], dim)
            u += 1


@jit_inline
def logistic_loss(buffers, count, units, distinct, hs_rule, alpha, dim):
    """The loss interface with a sigmoid per row:
    ``-sum_r [t_r log sigma(f_r) + (1 - t_r) log sigma(-f_r)]``, ``f_r = u_r . x + b_r``,
    summed over the ``count`` inputs ``x = buffers.inputs[i]``, for the units
    ``units``: the candidate output rows ``u_r = units.out[units.rows[r]]``, their
    labels ``t_r = units.labels[r]`` (float32) and logit offsets
    ``b_r = units.offsets[r]`` (None: 0).
    Moves the rows and adds each input's gradient to ``buffers.grads[i]``.
    ``distinct``: the rows are known to be pairwise distinct, so they are taken
    together (``logistic_units``), as many at a time as ``buffers.pairs`` holds pairs
    of (``UNITS // count``: all of a draw of up to 39 noise words for 16 inputs);
    else one at a time, so that a row drawn twice sees its first update.
    ``hs_rule``: see ``unit_steps``. Returns the loss (nats)."""
    n = units.rows.shape[0]
    together = max(min(n, UNITS // count), 1) if distinct else 1  # rows taken at once
    loss = 0.0
    for first in range(0, n, together):
        loss += logistic_units(buffers, count, units, first, min(first + together, n), hs_rule, alpha, dim)
    return loss


@jit_inline
def hierarchical_softmax(buffers, count, target, tables, top, alpha, dim):
    """``-log p(target | x)`` for each input x, along ``target``'s Huffman path: its
    nodes are distinct rows of ``tables.syn1``. The path's first nodes, those in the
    top of the tree, are rows of the batch's copy ``top`` (``Top``; see
    ``top_of_tree``). The two parts of the path go through ``logistic_units``' three
    passes together: all logits, one loop of steps, the updates. Returns the loss (nats)."""
    path = slice(tables.path_offsets[target], tables.path_offsets[target + 1])
    nodes, labels = tables.path_nodes[path], tables.path_labels[path]
    tree = Units(tables.syn1, nodes, labels, None)
    copy, first, top_rows = top.copy, top.first, top.rows
    if copy.shape[0] == 0:  # no copy (one thread): the path's rows at once
        return logistic_loss(buffers, count, tree, True, True, alpha, dim)
    n = 0  # the path's nodes in the copy: a prefix of the path
    while n < nodes.shape[0] and first <= nodes[n] < first + copy.shape[0]:
        top_rows[n] = nodes[n] - first
        n += 1
    copied = Units(copy, top_rows, labels, None)
    unit_logits(buffers, count, copied, 0, n, 0, dim)
    unit_logits(buffers, count, tree, n, nodes.shape[0], n * count, dim)
    loss = unit_steps(buffers.pairs[0], buffers.pairs[1], nodes.shape[0] * count, True, alpha, buffers.arithmetic)
    move_units(buffers, count, copied, 0, n, buffers.pairs[0], dim)
    move_units(buffers, count, tree, n, nodes.shape[0], buffers.pairs[0][n * count :], dim)
    return loss


@jit_inline
def top_of_tree(tables, settings):
    """The rows of ``tables.syn1`` that a batch trains in a copy of its own: (the
    first, how many). They are the ``TOP_NODES`` nodes nearest the root, written for
    every centre word whatever the word, so that two threads writing them in the
    shared matrix would pass their cache lines back and forth for every word. Both
    trees number these nodes as one run of rows at the root's end: the Huffman tree
    creates its nodes from the rarest up (the root last, row V - 2), the balanced
    tree in heap order (the root first, row 0). On every path they are a prefix.
    None without hierarchical softmax, or for a tree of one word (no paths)."""
    if not settings.hs or tables.path_nodes.shape[0] == 0:
        return 0, 0
    rows = min(TOP_NODES, tables.syn1.shape[0])
    return (0 if tables.path_nodes[0] == 0 else tables.syn1.shape[0] - rows), rows


@jit_inline
def copy_top(syn1, first, copy, start, dim):
    """Start the batch's copy of the top of the tree: ``copy`` and ``start`` ((K, S)
    float32) take rows ``first, ..., first + K - 1`` of ``syn1``."""
    for r in range(copy.shape[0]):
        row = syn1[first + r]
        for k in range(dim):
            copy[r, k] = row[k]
            start[r, k] = row[k]


@jit_inline
def merge_top(syn1, first, copy, start, weight, dim):
    """End the batch's copy of the top of the tree: the shared rows ``syn1[first + r]``
    gain ``weight`` times the copy's change, ``copy[r] - start[r]``, on top of what
    other threads did to them meanwhile. With ``weight`` = 1/T for T threads, the top
    of the tree becomes the mean of the threads' copies: each copy reaches its own
    equilibrium within a batch (every centre word moves these rows), and the sum of T
    such changes would overshoot it T-fold."""
    for r in range(copy.shape[0]):
        row = syn1[first + r]
        for k in range(dim):
            row[k] += weight * (copy[r, k] - start[r, k])


@jit_inline
def sampled_logistic(buffers, count, draws, alpha, dim):
    """Negative sampling's or NCE's loss for each input: ``draws`` (``Units``) are the
    candidate rows of ``syn1neg``, the target first; their labels, 1 then 0; their
    logit offsets: NCE's ``-log(k q(w))``, 0 for negative sampling. NCE is negative
    sampling with the offsets, which make its optimum ``u_w . h = log p(w | h)``: a
    self-normalised model. Repeated rows, and every row for one input (CBOW), go
    one at a time. Returns the loss (nats)."""
    distinct = count > 1 and all_distinct(draws.rows)
    return logistic_loss(buffers, count, draws, distinct, False, alpha, dim)


@jit_inline
def softmax_loss(buffers, count, units, target_pos, beta, alpha, dim):
    """The loss interface with a softmax over the rows: for each input
    ``x = buffers.inputs[i]``, ``-log p_t + beta (log Z)^2`` with
    ``p_r = exp(f_r) / Z``, ``Z = sum_r exp(f_r)``, ``f_r = u_r . x + b_r`` over the
    candidate rows ``u_r = units.out[units.rows[r]]`` (the target at ``target_pos``;
    ``units.labels`` is not read) and offsets ``b_r = units.offsets[r]``.
    Its gradient in ``f_r`` is ``p_r (1 + 2 beta log Z) - [r = t]``: the step
    ``g_r = alpha ([r = t] - p_r (1 + 2 beta log Z))`` moves ``u_r`` by ``g_r x`` and
    ``x`` by ``g_r u_r`` (into ``buffers.grads[i]``). Every input's gradient is taken
    against the rows as they were, then the rows move (a row listed twice moves
    twice). ``buffers.table`` holds the logits, then the steps, a row per candidate.
    Returns the loss (nats)."""
    inputs, grads, table = buffers.inputs, buffers.grads, buffers.table
    out, rows, offsets = units.out, units.rows, units.offsets
    n = rows.shape[0]
    for r in range(n):
        logits(buffers, count, out[rows[r]], table[r], dim)
        for i in range(count):
            table[r, i] += offsets[r]
    loss = 0.0
    for i in range(count):
        top = table[0, i]
        for r in range(1, n):
            top = max(top, table[r, i])
        total = 0.0
        for r in range(n):
            total += np.exp(np.float64(table[r, i] - top))
        log_z = top + np.log(total)
        loss += log_z - table[target_pos, i] + beta * log_z * log_z
        scale = 1.0 + 2.0 * beta * log_z
        for r in range(n):
            p = np.exp(table[r, i] - log_z)
            table[r, i] = np.float32(alpha * ((1.0 if r == target_pos else 0.0) - p * scale))
    for r in range(n):
        o = out[rows[r]]
        for i in range(count):
            g, gradient = table[r, i], grads[i]
            for k in range(dim):
                gradient[k] += g * o[k]
    for r in range(n):
        o = out[rows[r]]
        for i in range(count):
            g, x = table[r, i], inputs[i]
            for k in range(dim):
                o[k] += g * x[k]
    return loss


@jit_inline
def output_loss(buffers, count, window, outputs, settings, alpha, dim):
    """The losses that are on for ``count`` inputs predicting ``window.target``:
    hierarchical softmax (``settings.hs``), and the loss of the word output vectors
    ``outputs.tables.syn1neg``, ``settings.kind`` (unless NO_WORD_LOSS): on the drawn
    candidates ``window.draws``, or for the full softmax on ``outputs.softmax`` with
    ``settings.beta``. Returns the loss (nats)."""
    tables, target, draws = outputs.tables, window.target, window.draws
    loss = 0.0
    if settings.hs:
        loss += hierarchical_softmax(buffers, count, target, tables, outputs.top, alpha, dim)
    if settings.kind != NO_WORD_LOSS:
        if settings.kind in (SOFTMAX, SAMPLED_SOFTMAX):
            if settings.kind == SOFTMAX:
                units, target_pos, beta = outputs.softmax, target, settings.beta
            else:
                units, target_pos, beta = Units(draws.out, draws.rows, None, draws.offsets), 0, 0.0
            loss += softmax_loss(buffers, count, units, target_pos, beta, alpha, dim)
        else:
            loss += sampled_logistic(buffers, count, draws, alpha, dim)
    return loss


@jit_inline
def window_inputs(sources, chunk, settings, buffers, dim):
    """The inputs that predict a window's centre word, into ``buffers.inputs``, with
    their gradients ``buffers.grads`` zeroed, from the rows ``sources.values[c]``
    for c in ``chunk`` (``InputRows``). Skip-gram: each context's input on its own,
    ``v_c / n_c``; CBOW (``settings.cbow``): one input, ``h = (1/sum_c n_c) sum_c v_c``
    (``settings.cbow_mean``) or the sum, where ``n_c`` is ``sources.sizes[c]`` (the
    rows of ``syn0`` a subword context's value sums), 1 for a word. Returns how many."""
    inputs, grads, sizes = buffers.inputs, buffers.grads, sources.sizes
    count = 1 if settings.cbow else chunk.shape[0]
    for i in range(count):
        members = chunk if settings.cbow else chunk[i : i + 1]
        rows = members.shape[0]
        if settings.subwords:
            rows = 0
            for c in range(members.shape[0]):
                rows += sizes[members[c]]
        divisor = rows if settings.cbow_mean or not settings.cbow else 1
        for k in range(0, dim, LANES):
            total = lanes_zero()
            for c in range(members.shape[0]):
                total = lanes_add(total, lanes_load(sources.values[members[c]], k, dim))
            lanes_store(inputs[i], k, dim, total if divisor == 1 else lanes_divide(total, lanes_splat(divisor)))
            lanes_store(grads[i], k, dim, lanes_zero())
    return count


@jit_inline
def move_inputs(moves, chunk, cbow, grads, dim):
    """Add the inputs' gradients to the rows ``moves[c]`` for c in ``chunk``
    (``InputRows.moves``): skip-gram's ``grads[c]`` to context c's, CBOW's one
    gradient ``grads[0]`` to every context's, unscaled, as in word2vec.c (a
    context listed twice, twice). Each row is taken once: indexed float by float
    (``moves[chunk[c], k]``), the index would be read again after every store, as
    the store might have changed it, and the loop would not be vectorised."""
    for c in range(chunk.shape[0]):
        add_to_row(moves[chunk[c]], grads[0] if cbow else grads[c], dim)


@jit_helper
def add_to_row(row, g, dim):
    """``row[:dim] += g[:dim]`` (float32)."""
    for k in range(0, dim, LANES):
        lanes_store(row, k, dim, lanes_add(lanes_load(row, k, dim), lanes_load(g, k, dim)))


@jit_helper
def enter_reach(syn0, tables, reach, slot, dim):
    """With subwords, the position in row ``slot`` of the reach (``InputRows``) comes
    into it, holding word w = ``reach.words[slot]``: ``reach.values[slot] =
    sum_{r in R_w} syn0[r]`` over the word's rows (``tables.subword_rows[offsets[w] :
    offsets[w + 1]]``: its own and its character n-grams'), ``reach.sizes[slot] =
    |R_w|`` and its gradient ``reach.moves[slot]`` zeroed."""
    rows, offsets, word = tables.subword_rows, tables.subword_offsets, reach.words[slot]
    reach.sizes[slot] = offsets[word + 1] - offsets[word]
    for k in range(0, dim, LANES):
        total = lanes_zero()
        for j in range(offsets[word], offsets[word + 1]):
            total = lanes_add(total, lanes_load(syn0[rows[j]], k, dim))
        lanes_store(reach.values[slot], k, dim, total)
        lanes_store(reach.moves[slot], k, dim, lanes_zero())


@jit_helper
def leave_reach(syn0, tables, reach, slot, dim):
    """The position in row ``slot`` leaves the reach: the gradient its windows gave
    it, ``reach.moves[slot]``, goes unscaled to every row of its word's ``R_w``, as
    fastText's ``Model::update`` adds the hidden vector's (a row listed twice, twice)."""
    rows, offsets, word, g = tables.subword_rows, tables.subword_offsets, reach.words[slot], reach.moves[slot]
    for j in range(offsets[word], offsets[word + 1]):
        add_to_row(syn0[rows[j]], g, dim)


@jit_inline
def enter_position(syn0, tables, reach, sentence, p, dim):
    """Position ``p`` of ``sentence`` comes into the reach, in its row: ``p`` modulo
    the reach's rows."""
    slot = p % reach.sizes.shape[0]
    reach.words[slot] = sentence[p]
    enter_reach(syn0, tables, reach, slot, dim)


@jit_inline
def advance_reach(syn0, tables, reach, sentence, pos, settings, dim):
    """CBOW with subwords (nothing otherwise): keep ``reach`` holding positions
    ``pos - window`` .. ``pos + window`` of ``sentence`` as the centre word moves to
    ``pos``: the one behind leaves, the one ahead enters (at the first position,
    the first ``window``). Where more than ``CHUNK`` positions are in reach, every
    one of them leaves and enters again each ``CHUNK`` centre words, so that no
    input is more than ``CHUNK`` windows old."""
    span, length, window = reach.sizes.shape[0], sentence.shape[0], settings.window
    if not settings.subwords or not settings.cbow:
        return
    if pos == 0:
        for p in range(min(window, length)):
            enter_position(syn0, tables, reach, sentence, p, dim)
    if pos - window - 1 >= 0:
        leave_reach(syn0, tables, reach, (pos - window - 1) % span, dim)
    if span > CHUNK and pos > 0 and pos % CHUNK == 0:
        for p in range(max(pos - window, 0), min(pos + window, length)):
            leave_reach(syn0, tables, reach, p % span, dim)
            enter_reach(syn0, tables, reach, p % span, dim)
    if pos + window < length:
        enter_position(syn0, tables, reach, sentence, pos + window, dim)


@jit_inline
def empty_reach(syn0, tables, reach, sentence, settings, dim):
    """CBOW with subwords: at a sentence's end, the positions still in reach leave it."""
    span, length = reach.sizes.shape[0], sentence.shape[0]
    if not settings.subwords or not settings.cbow:
        return
    for p in range(max(length - settings.window - 1, 0), length):
        leave_reach(syn0, tables, reach, p % span, dim)


@jit_helper
def skipgram_chunk(arithmetic):
    """Skip-gram's context words per update: ``CHUNK``; under ``arithmetic``, its
    ``chunk`` (1: word2vec.c's pair by pair)."""
    if arithmetic is None:
        return CHUNK
    return min(max(arithmetic.chunk, 1), CHUNK)


@jit_inline
def window_loss(syn0, sources, window, outputs, settings, buffers, alpha, dim):
    """One window: its context words (rows ``window.contexts`` of ``sources``,
    ``InputRows``) predict the centre word ``window.target`` through the output
    losses (``output_loss``), and the inputs move.

    Skip-gram's window is batched (HogBatch, Ji et al. 2016): all its context words
    predict through the same output units (the target's path, one shared draw of
    noise words), so each unit is read and moved once against all of them, and the
    context rows take their gradients after the units. Two threads then contend
    for the rows every window touches (the top of the tree, the frequent noise
    words) once per window instead of once per pair. A window of more than
    ``CHUNK`` context words is taken in chunks, the rows moving after each: one
    update summing the steps of a very wide window on repetitive text diverges.
    With subwords, each chunk's context words come into the reach before it and
    leave after it. CBOW's window is one example. Returns the loss (nats)."""
    contexts, tables = window.contexts, outputs.tables
    fresh = settings.subwords and not settings.cbow  # skip-gram with subwords
    loss = 0.0
    together = contexts.shape[0] if settings.cbow else skipgram_chunk(settings.arithmetic)  # per update
    for first in range(0, contexts.shape[0], together):
        chunk = contexts[first : min(first + together, contexts.shape[0])]
        for c in range(chunk.shape[0] if fresh else 0):
            enter_reach(syn0, tables, sources, chunk[c], dim)
        count = window_inputs(sources, chunk, settings, buffers, dim)
        loss += output_loss(buffers, count, window, outputs, settings, alpha, dim)
        move_inputs(sources.moves, chunk, settings.cbow, buffers.grads, dim)
        for c in range(chunk.shape[0] if fresh else 0):
            leave_reach(syn0, tables, sources, chunk[c], dim)
    return loss


@jit_inline
def subsampled_sentence(tokens, start, keep_prob, sentence, state, arithmetic):
    """Copy the sentence starting at ``tokens[start]`` into ``sentence``, dropping
    each word w with probability 1 - ``keep_prob[w]`` (word2vec.c's subsampling,
    ``subsample_draw``), up to its end (or ``sentence_full``). Returns (its length,
    the index of the next sentence's first token, new state)."""
    length = 0
    i = start
    while i < tokens.shape[0] and tokens[i] >= 0:
        word = tokens[i]
        i += 1
        dropped, state = subsample_draw(state, keep_prob[word], arithmetic)
        if dropped:
            continue
        sentence[length] = word
        length += 1
        if sentence_full(length, arithmetic):
            return length, i, state
    return length, i + 1, state


@jit_inline
def prefetch_next(syn0, tables, sentence, pos, settings, dim):
    """Start loading the rows the centre word after ``pos`` will bring into play: the
    context row entering the window, its output row and its Huffman path."""
    length = sentence.shape[0]
    if pos + 1 >= length:
        return
    entering = sentence[min(pos + settings.window + 1, length - 1)]
    if settings.subwords:
        for j in range(tables.subword_offsets[entering], tables.subword_offsets[entering + 1]):
            prefetch_row(syn0, tables.subword_rows[j], dim)
    else:
        prefetch_row(syn0, entering, dim)
    following = sentence[pos + 1]
    if settings.kind != NO_WORD_LOSS:
        prefetch_row(tables.syn1neg, following, dim)
    if settings.hs:
        for j in range(tables.path_offsets[following], tables.path_offsets[following + 1]):
            prefetch_row(tables.syn1, tables.path_nodes[j], dim)


@jit_inline
def output_rows(tables, target, drawn, settings):
    """The output rows one example predicting ``target`` trains: the nodes of its
    Huffman path with hierarchical softmax, plus the ``drawn`` candidates (the
    target and the noise words kept) or, for the full softmax, every word. Each
    costs a dot product, the input's gradient and the row's update: 6 D flops."""
    rows = 0
    if settings.hs:
        rows += tables.path_offsets[target + 1] - tables.path_offsets[target]
    if settings.kind != NO_WORD_LOSS:
        rows += tables.syn1neg.shape[0] if settings.kind == SOFTMAX else drawn
    return rows


@jit_helper
def trace_centre(syn0, tables, target, reach, arithmetic):
    """Nothing; under ``arithmetic``, record centre word ``target``, its ``reach``
    and, every so many, the weights before it (``c_arithmetic.record_step``)."""
    if arithmetic is None:
        return
    record_step(arithmetic.trace, syn0, tables.syn1, tables.syn1neg, target, reach)


@jit_inline
def train_sentence(sentence, syn0, sources, kit, tally, state):
    """Train on a sentence after subsampling (``sentence`` (L,) int32 ids), each of its
    words in turn the centre word of a window shrunk at random, with the buffers and
    settings of ``kit``; ``sources``: where the inputs come from (``InputRows``).
    Adds to ``tally`` ((3,) int64) the training examples, their output-row updates
    (``output_rows``) and the rows read and written (each output row once a chunk of
    context words, each context word's row once). Returns (the summed loss in nats,
    new state)."""
    settings, outputs, tables, dim = kit.settings, kit.outputs, kit.outputs.tables, syn0.shape[1]
    window, length, span = settings.window, sentence.shape[0], sources.sizes.shape[0]
    log_k = np.float32(np.log(max(settings.samples, 1)))
    loss, n, examples, updates, visits = 0.0, 0, 0, 0, 0
    state = empty_sentence_draw(state, length, settings.arithmetic)
    for pos in range(length):
        advance_reach(syn0, tables, sources, sentence, pos, settings, dim)
        state = lcg_next(state)
        reach = window_reach(state, window, settings.arithmetic)
        lo, hi, target = max(pos - reach, 0), min(pos + reach + 1, length), sentence[pos]
        trace_centre(syn0, tables, target, reach, settings.arithmetic)
        prefetch_next(syn0, tables, sentence, pos, settings, dim)
        if hi - lo < 2:
            continue  # no context
        if settings.kind != NO_WORD_LOSS:  # drawn first, so that their rows load while the inputs are formed
            n, state = draw_candidates(kit.candidates, kit.offsets, target, settings, log_k, state, tables)
            for d in range(1, n):
                prefetch_row(tables.syn1neg, kit.candidates[d], dim)
        count = 0
        for c in range(lo, hi):
            if c != pos:
                kit.contexts[count] = c % span if settings.subwords else sentence[c]
                if settings.subwords and not settings.cbow:  # skip-gram's come into the reach in ``window_loss``
                    sources.words[c % span] = sentence[c]
                count += 1
        draws = Units(tables.syn1neg, kit.candidates[:n], kit.labels[:n], kit.offsets[:n])
        centre = Window(kit.contexts[:count], target, draws)
        loss += window_loss(syn0, sources, centre, outputs, settings, kit.buffers, kit.alpha, dim)
        trained, rows = 1 if settings.cbow else count, output_rows(tables, target, n, settings)
        examples += trained
        updates += trained * rows
        visits += (1 if settings.cbow else -(-count // CHUNK)) * rows + count
    empty_reach(syn0, tables, sources, sentence, settings, dim)
    tally[0] += examples  # once a sentence: the counters stay in registers within it
    tally[1] += updates
    tally[2] += visits
    return loss, state


@jit_kernel
def train_batch(tokens, syn0, tables, keep_prob, settings, alpha, seed):
    """Train on a batch of tokens: ``-> (loss_sum, examples, updates, visits)``. One compiled kernel
    for every vector size D (``syn0.shape[1]``, read at run time), model and loss;
    its buffers are on its stack, rows ``row_stride(D)`` floats apart.

    - ``tokens`` (N,) int32, ``-1`` ending sentences;
    - ``syn0`` (V, D) float32 (with subwords (V + B, D): the words' rows, then
      the n-grams', ``tables.subword_rows`` naming each word's) and the output
      matrices of ``tables`` (``weights.Tables``), updated in place;
    - ``keep_prob`` (V,) float32: probability of keeping each word (subsampling);
    - ``settings`` (``Settings``): the window, the noise words or candidates per
      centre word, CBOW or skip-gram, the loss of ``tables.syn1neg`` and its beta,
      and the threads training the weights at once, T. Above 1, the batch trains
      the top of the tree in a copy of its own and adds 1/T of the copy's change to
      ``tables.syn1`` at its end (``top_of_tree``, ``merge_top``);
    - ``alpha``: learning rate for the whole batch; ``seed``: uint64 LCG seed.

    Returns the summed loss (float64, nats), the number of training examples
    (skip-gram: context-centre pairs; CBOW: centre words), of their output-row
    updates (each example times ``output_rows``: the useful arithmetic is 6 D
    flops an update) and of the rows they read and wrote (``train_sentence``; with
    subwords a context word counts as one row).
    """
    tokens, syn0, keep_prob, tables = unmanaged(tokens), unmanaged(syn0), unmanaged(keep_prob), unmanaged(tables)
    dim = syn0.shape[1]
    stride = row_stride(dim)  # floats from one row of the stack buffers to the next
    window, samples = settings.window, settings.samples
    state, alpha = np.uint64(seed), np.float32(alpha)
    vocab = tables.syn1neg.shape[0] if settings.kind == SOFTMAX else 0
    span = 2 * window + 1 if settings.subwords else 0  # positions in reach, with subwords
    owned = (  # the heap scratch buffers, used through unmanaged views
        scratch(tokens.shape[0], np.int32),  # a sentence after subsampling
        scratch(2 * window, np.int32),  # a window's context words
        scratch(samples + 1, np.int32),  # the output loss's candidates
        scratch(samples + 1, np.float32),  # and their labels
        scratch(samples + 1, np.float32),  # and their logit offsets
        np.arange(vocab).astype(np.int32),  # every row: the full softmax's candidates
        np.zeros(vocab, dtype=np.float32),  # and their logit offsets
        np.empty((max(vocab, samples + 1), CHUNK), dtype=np.float32),  # the softmax's logits, then steps
        scratch(MAX_CODE_LENGTH, np.int32),  # a path's nodes in the copy of the top of the tree
        scratch(span * stride, np.float32),  # with subwords, the reach's values (``InputRows``)
        scratch(span, np.int32),  # and sizes
        scratch(span * stride, np.float32),  # and gradients
        scratch(span, np.int32),  # and words
    )
    sentence, contexts, candidates, labels, offsets, all_rows, no_offsets, table, top_rows = unmanaged(owned[:9])
    reach_values, reach_sizes, reach_moves, reach_words = unmanaged(owned[9:])
    labels[:] = 0.0
    labels[0] = 1.0
    offsets[:] = 0.0  # negative sampling's: draw_candidates sets them for the other losses
    inputs, grads = stack_matrix(CHUNK, stride), stack_matrix(CHUNK, stride)  # skip-gram's rows (CBOW: row 0)
    pairs = stack_matrix(2, UNITS)  # (unit, input) pairs' logits then steps; labels
    buffers = Scratch(inputs, grads, pairs, table, settings.arithmetic)
    first_top, top_count = top_of_tree(tables, settings) if settings.sharers > 1 else (0, 0)
    weight = np.float32(1.0 / settings.sharers)
    copy, start = stack_matrix(TOP_NODES, stride)[:top_count], stack_matrix(TOP_NODES, stride)[:top_count]
    copy_top(tables.syn1, first_top, copy, start, dim)
    top = Top(copy, first_top, top_rows)
    outputs = Outputs(tables, top, Units(tables.syn1neg, all_rows, None, no_offsets))
    values, moves = reach_values.reshape((span, stride)), reach_moves.reshape((span, stride))
    no_reach = InputRows(syn0, reach_sizes, syn0, reach_words)  # words alone: syn0 by id
    sources = InputRows(values, reach_sizes, moves, reach_words) if settings.subwords else no_reach
    kit = WindowKit(contexts, candidates, labels, offsets, outputs, settings, buffers, alpha)
    loss, tally, i = 0.0, np.zeros(3, dtype=np.int64), 0
    while i < tokens.shape[0]:
        length, i, state = subsampled_sentence(tokens, i, keep_prob, sentence, state, settings.arithmetic)
        sentence_loss, state = train_sentence(sentence[:length], syn0, sources, kit, tally, state)
        loss += sentence_loss
    merge_top(tables.syn1, first_top, copy, start, weight, dim)
    keep_alive(owned)
    return loss, tally[0], tally[1], tally[2]


@register_jitable
def row_stride(dim):
    """Floats from one row of the kernel's stack buffers to the next: ``dim`` rounded
    up to whole 64-byte cache lines (``LINE_FLOATS`` float32). The buffers start on a
    line, so every row does, and no vector load or store of a row straddles two lines."""
    return -(-dim // LINE_FLOATS) * LINE_FLOATS


def stack_bytes(dim: int) -> int:
    """Bytes of stack the kernel keeps its buffers in for vectors of ``dim`` floats."""
    return 4 * (row_stride(dim) * (2 * CHUNK + 2 * TOP_NODES) + 2 * UNITS)


@jit_kernel
def path_log_probs(hidden, targets, syn1, path_nodes, path_labels, path_offsets, out):
    """Hierarchical softmax's ``log p(o | h) = sum_{n in path(o)} log sigma(+-(u_n . h))``
    for each row ``h = hidden[b]`` ((B, D) float32) and target ``o = targets[b]``,
    into ``out[b]`` (float64, nats): the dot products and the logistic in float64,
    ``log sigma(z) = -(max(-z, 0) + log(1 + exp(-|z|)))``. For ``w2v score``."""
    for b in range(targets.shape[0]):
        target, h = targets[b], hidden[b]
        total = 0.0
        for j in range(path_offsets[target], path_offsets[target + 1]):
            u = syn1[path_nodes[j]]
            f = 0.0
            for k in range(h.shape[0]):
                f += np.float64(h[k]) * np.float64(u[k])
            z = f if path_labels[j] > 0.5 else -f
            total -= max(-z, 0.0) + np.log1p(np.exp(-abs(z)))
        out[b] = total


@jit_kernel
def context_vectors(contexts, sums, sizes, mean, out):
    """CBOW's hidden vectors for ``w2v score``: ``out[b] = sum_c sums[c]`` ((B, D)
    float32) over the context words ``c = contexts[b, k] >= 0`` ((B, 2 window) int32;
    -1: none), in the order of k as training adds them, divided by ``sum_c sizes[c]``
    if ``mean``. ``sums`` (V, D) float32 and ``sizes`` (V,) int32: the sum of the rows
    each word stands for and their number (``syn0`` and ones without subwords)."""
    for b in range(contexts.shape[0]):
        row = out[b]
        row[:] = 0.0
        count = 0
        for k in range(contexts.shape[1]):
            word = contexts[b, k]
            if word >= 0:
                vector = sums[word]
                for d in range(row.shape[0]):
                    row[d] += vector[d]
                count += sizes[word]
        if mean and count > 0:
            scale = np.float32(1.0) / np.float32(count)
            for d in range(row.shape[0]):
                row[d] *= scale


def load_scoring_kernel() -> None:
    """Load (or compile) ``path_log_probs`` and ``context_vectors`` for the argument
    types ``scoring`` passes, on no rows: a first training run compiles them with
    the batch kernel, so that ``w2v score`` and ``--heldout`` compile nothing later."""
    rows, float32, int32, int64 = np.empty((0, 1), np.float32), np.float32, np.int32, np.int64
    path_log_probs(
        rows, np.empty(0, int64), rows, np.empty(0, int32), np.empty(0, float32), np.zeros(1, int64), np.empty(0)
    )
    context_vectors(np.empty((0, 1), int32), rows, np.empty(0, int32), True, rows)
