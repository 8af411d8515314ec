"""The Numba training kernels: skip-gram and CBOW over a batch of token ids.

The training kernels (``scan`` holds the counter's Numba code). Pure numeric functions: no I/O, no Python
objects, no allocation per word. One kernel serves both models; hierarchical
softmax and negative sampling are two loss functions of one shape
``(input rows, target, gradient buffers, output matrix, learning rate) -> loss``
that either or both apply, as in word2vec.c. Skip-gram gives them a window's
context rows at once, CBOW its one hidden vector.

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

Deviations from word2vec.c (see docs/parity.md): the sigmoid is computed (to
float32 precision) rather than read from a 1000-entry table; negatives come from
an alias table of the exact unigram**0.75 distribution rather than a 1e8-entry
table; skip-gram batches each window (``make_train_batch``). Hierarchical
softmax keeps C's rule of skipping a node when ``|f| >= 6``.
"""

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from w2v.vocab import MAX_CODE_LENGTH  # the longest Huffman path: sizes the stack buffer of (unit, input) pairs

FASTMATH = {"reassoc", "contract"}  # not fastmath=True: that makes isnan() always false
# Division as in numpy (no ZeroDivisionError check): the check is a branch to an
# exception around every division, which keeps the compiler from vectorising the
# loops of logistic units (their 1 / (1 + e)); no divisor here can be zero.
ERROR_MODEL = "numpy"


def jit_inline(function):
    """Compile a helper that Numba inlines into the kernels (``inline="always"``)."""
    return njit(function, inline="always", nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL, cache=True)


def jit_kernel(function):
    """Compile a kernel (released GIL, ``FASTMATH``, numpy's division, cached)."""
    return njit(function, nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL, cache=True)


LCG_MUL = np.uint64(25214903917)
LCG_ADD = np.uint64(11)
HS_MAX_EXP = 6.0  # word2vec.c's MAX_EXP: HS skips nodes with |f| >= this
CHUNK = 16  # skip-gram batches at most this many of a window's context words (make_train_batch)
# Scratch buffers are padded by this many 4-byte elements (two cache lines) on
# both sides, so that no two threads' buffers can share a cache line.
PAD = 32
UNITS = MAX_CODE_LENGTH * CHUNK  # (output unit, input) pairs of one loss call at most: a path's nodes x a chunk


@intrinsic
def prefetch(typingctx, matrix, row, col):
    """Ask the CPU to start loading the cache line of ``matrix[row, col]`` (a hint:
    no effect on results). Rows of context and output words are scattered over
    tens of MB, so fetching the next centre word's rows early hides memory latency."""

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        index = [context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], signature.args[1:], strict=True)]
        shape = cgutils.unpack_tuple(builder, array.shape)
        strides = cgutils.unpack_tuple(builder, array.strides)
        layout = signature.args[0].layout
        pointer = cgutils.get_item_pointer2(
            context, builder, array.data, shape, strides, layout, index, wraparound=False
        )
        byte_pointer = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [byte_pointer] + [ir.IntType(32)] * 3)
        hint = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        read, high_locality, data_cache = (ir.Constant(ir.IntType(32), v) for v in (0, 3, 1))
        builder.call(hint, [builder.bitcast(pointer, byte_pointer), read, high_locality, data_cache])
        return context.get_dummy_value()

    return types.void(matrix, row, col), codegen


@intrinsic
def unmanaged(typingctx, array):
    """The same array with no reference count (meminfo NULL), for arrays kept alive
    by someone else for as long as it is used (the caller's, or ``keep_alive``).

    Numba counts references to every array it binds to a variable, and the
    helpers inlined into the kernel bind theirs per example: an atomic increment
    and decrement on the array's count, through a call that clobbers every vector
    register. On shared weights both threads hit the same count's cache line.
    Views of an unmanaged array count nothing (+10-27% throughput).
    """

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        for name in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(view, name, getattr(source, name))
        return view._getvalue()

    return array(array), codegen


@intrinsic
def keep_alive(typingctx, arrays):
    """A use of ``arrays`` (a tuple) that generates nothing: they stay alive until here,
    so ``unmanaged`` views of them taken earlier stay valid."""

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.void(arrays), codegen


@jit_inline
def tuple_unmanaged(params):
    """``unmanaged`` of each array of the kernel's ``params`` tuple (7 arrays)."""
    return (
        unmanaged(params[0]),
        unmanaged(params[1]),
        unmanaged(params[2]),
        unmanaged(params[3]),
        unmanaged(params[4]),
        unmanaged(params[5]),
        unmanaged(params[6]),
    )


@intrinsic(prefer_literal=True)
def stack_matrix(typingctx, rows, cols):
    """A (rows, cols) float32 array on the stack of the kernel it is inlined
    into: one buffer per call site, allocated on entry, unmanaged. ``rows`` and
    ``cols`` must be compile-time constants (a global, or a factory's argument).

    For the buffers the inner loops write (a window's input rows and gradients,
    the output-row step, the units' logits and steps): the compiler knows stack memory is reached by no other
    pointer, so it keeps the output row and its step in registers across the
    inputs and drops the overlap checks and scalar fallbacks it adds for heap
    arrays (skip-gram +5-12% on 2 threads). A module-level intrinsic, not one
    made per kernel: Numba keys its cache on the pickled closure of a kernel,
    and an intrinsic in the closure pickles differently in every process.
    """
    if not isinstance(rows, types.IntegerLiteral) or not isinstance(cols, types.IntegerLiteral):
        return None
    n_rows, n_cols = rows.literal_value, cols.literal_value
    array_type = types.Array(types.float32, 2, "C")

    def codegen(context, builder, signature, args):
        data = cgutils.alloca_once(builder, ir.FloatType(), size=ir.Constant(ir.IntType(64), n_rows * n_cols))
        array = context.make_array(array_type)(context, builder)
        intp = context.get_value_type(types.intp)
        context.populate_array(
            array,
            data=data,
            shape=[ir.Constant(intp, n_rows), ir.Constant(intp, n_cols)],
            strides=[ir.Constant(intp, 4 * n_cols), ir.Constant(intp, 4)],
            itemsize=ir.Constant(intp, 4),
            meminfo=None,
        )
        return array._getvalue()

    return array_type(rows, cols), codegen


@jit_inline
def prefetch_row(matrix, row, dim):
    """Prefetch every cache line (16 float32) of ``matrix[row]``."""
    for col in range(0, dim, 16):
        prefetch(matrix, row, col)


@jit_inline
def scratch(size, dtype):
    """An uninitialised (size,) buffer of a 4-byte ``dtype``, ``PAD`` elements away
    from any other allocation on both sides (see ``PAD``)."""
    return np.empty(size + 2 * PAD, dtype=dtype)[PAD:-PAD]


@jit_inline
def lcg_next(state):
    """One step of word2vec.c's generator (uint64 -> uint64, wraps)."""
    return state * LCG_MUL + LCG_ADD


@jit_inline
def uniform24(state):
    """A float in [0, 1) from the high 24 bits of ``state``."""
    return np.float32(state >> np.uint64(40)) * np.float32(1.0 / 16777216.0)


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


@jit_inline
def log1p_unit(x):
    """log(1 + x) for x in [0, 1], float32, by Horner's rule on ``LOG1P_UNIT``.

    A polynomial because ``math.log1p`` per logistic unit cost 25-45% of the
    kernel's time, only to report the loss.
    """
    acc = np.float32(LOG1P_UNIT[7])
    for i in range(6, -1, -1):
        acc = acc * x + np.float32(LOG1P_UNIT[i])
    return acc


EXP_STEP = 0.25
EXP_TABLE = np.exp(-EXP_STEP * np.arange(129)).astype(np.float32)  # exp(-i/4), i = 0..128
EXP_POLY = (0.9999999711710855, -0.9999965234355948, 0.499901974761043, -0.16560896642410514, 0.03679683029352918)


@jit_inline
def exp_neg(a):
    """exp(-a) for float32 a >= 0, |relative error| < 3e-7 (exp(-32) stands for
    anything beyond 32): a table of exp(-i/4) times a degree-4 fit of exp(-r) on
    [0, 1/4). Inlined arithmetic, because ``math.exp`` is a call into libm around
    which the compiler saves and reloads every vector register (10% of the kernel).
    """
    a = min(a, np.float32(31.99))
    i = np.int64(a * np.float32(1.0 / EXP_STEP))
    r = a - np.float32(i) * np.float32(EXP_STEP)
    p = np.float32(EXP_POLY[4])
    for c in range(3, -1, -1):
        p = p * r + np.float32(EXP_POLY[c])
    return EXP_TABLE[i] * p


@jit_inline
def logistic(f, label):
    """A logistic unit with logit ``f`` (float32) and target ``label`` (0 or 1).

    Returns (sigmoid(f), loss) with loss = -log P(label) = softplus(+-f) in nats,
    from one exponential: with e = exp(-|f|), sigmoid(f) = 1/(1+e) for f >= 0 and
    e/(1+e) below; softplus(z) = max(z, 0) + log(1 + e).
    """
    e = exp_neg(abs(f))
    s = np.float32(1.0) / (np.float32(1.0) + e)
    if f < 0:
        s = np.float32(1.0) - s
    z = -f if label else f
    return s, max(z, np.float32(0.0)) + log1p_unit(e)


@jit_inline
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


@jit_inline
def logits(inputs, count, o, out, dim):
    """``out[i] = inputs[i] . o`` for the ``count`` inputs (float32; ``o`` (D,))."""
    for i in range(count):
        x = inputs[i]
        f = np.float32(0.0)
        for k in range(dim):
            f += x[k] * o[k]
        out[i] = f


@jit_inline
def unit_steps(steps, labels, n, hs_rule, alpha):
    """Turn the logits ``steps[:n]`` of (output unit, input) pairs into steps, in
    place: g = alpha * (label - sigmoid(f)) (float32), ``labels[:n]`` (float32,
    0 or 1) holding each pair's target. With ``hs_rule``, g = 0 where |f| >= 6:
    word2vec.c's hierarchical softmax leaves those nodes alone (negative sampling
    saturates instead). Returns the loss summed over the pairs (nats).

    One flat loop over contiguous buffers, which the compiler vectorises (16
    pairs an instruction); a skip-gram path has about 14 nodes x 6 inputs."""
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


@jit_inline
def move_unit(inputs, count, o, steps, grads, acc, dim):
    """Apply one output unit's steps: each input's gradient ``grads[i]`` gains
    ``steps[i] * o`` against the row as it was, and the row ``o`` (D,) moves once,
    by the sum of the ``steps[i] * inputs[i]`` (gathered in ``acc`` (D,)). With
    one input (CBOW's hidden vector) it is word2vec.c's update."""
    if count == 1:
        g, x, gradient = steps[0], inputs[0], grads[0]
        for k in range(dim):
            gradient[k] += g * o[k]
            o[k] += g * x[k]
        return
    acc[:] = 0.0
    for i in range(count):
        g, x, gradient = steps[i], inputs[i], grads[i]
        for k in range(dim):
            gradient[k] += g * o[k]
            acc[k] += g * x[k]
    for k in range(dim):
        o[k] += acc[k]


@jit_inline
def output_unit(inputs, count, out, row, label, grads, scores, acc, alpha, dim):
    """One output unit ``out[row]`` with target ``label`` against the ``count``
    inputs ``inputs[:count]``, in three passes (all logits, all steps, then the
    updates), so that the inputs' dot products and logistics overlap instead of
    waiting on each other. ``scores`` (4, >= count) is ``output_loss``'s.
    Returns the summed loss (nats)."""
    o, steps, labels = out[row], scores[0], scores[2 + label]  # rows 2 and 3: all 0, all 1
    logits(inputs, count, o, steps, dim)
    loss = unit_steps(steps, labels, count, False, alpha)
    move_unit(inputs, count, o, steps, grads, acc, dim)
    return loss


@jit_inline
def distinct_units(inputs, count, out, rows, codes, hs_rule, grads, scores, acc, alpha, dim):
    """The output units ``out[rows[u]]``, distinct rows, label 1 - ``codes[u]``,
    against the ``count`` inputs, all at once: every unit's logits, then all the
    steps (one vectorised loop), then the updates. As the rows are distinct and
    the inputs do not move until the caller applies ``grads``, the results are
    those of taking the units one by one (``output_unit``); the dot products of
    many units are in flight at once. ``scores`` (4, UNITS): row 0 the (unit,
    input) pairs' logits, then steps, unit by unit (``count`` to a unit), row 1
    their labels. Returns the loss (nats)."""
    steps, labels = scores[0], scores[1]
    for u in range(rows.shape[0]):
        first = u * count
        logits(inputs, count, out[rows[u]], steps[first : first + count], dim)
        label = np.float32(codes[u] == 0)
        for i in range(first, first + count):
            labels[i] = label
    loss = unit_steps(steps, labels, rows.shape[0] * count, hs_rule, alpha)
    for u in range(rows.shape[0]):
        first = u * count
        move_unit(inputs, count, out[rows[u]], steps[first : first + count], grads, acc, dim)
    return loss


@jit_inline
def hs_loss(inputs, count, target, syn1, grads, scores, acc, alpha, codes, points, code_offsets, dim):
    """Hierarchical softmax: the inputs predict ``target`` along its Huffman path,
    one output unit per node, label = 1 - code. ``codes`` (N,) uint8 and
    ``points`` (N,) int32 hold every word's path from the root, word w at
    ``code_offsets[w]:code_offsets[w + 1]``. A path's nodes are distinct rows,
    so they are taken all at once (``distinct_units``): the logits are those of
    word2vec.c's node-by-node loop. Returns the loss (nats)."""
    path = slice(code_offsets[target], code_offsets[target + 1])
    return distinct_units(inputs, count, syn1, points[path], codes[path], True, grads, scores, acc, alpha, dim)


@jit_inline
def draw_negatives(negatives, target, state, alias_prob, alias_idx):
    """Fill ``negatives`` with the target then ``len(negatives) - 1`` noise words. Returns the state."""
    negatives[0] = target
    for d in range(1, negatives.shape[0]):
        negatives[d], state = draw_noise(state, alias_prob, alias_idx)
    return state


@jit_inline
def all_distinct(words):
    """Whether the ids ``words`` (a few) are pairwise distinct."""
    for d in range(1, words.shape[0]):
        for e in range(d):
            if words[d] == words[e]:
                return False
    return True


@jit_inline
def ns_loss(inputs, count, draws, syn1neg, grads, scores, acc, alpha, dim):
    """Negative sampling: ``draws[0][0]`` is the positive target, the rest of
    ``draws[0]`` noise words, and ``draws[1]`` their codes (0 for the target, 1
    for the rest). When all are distinct and there are several inputs, they are
    taken at once (``distinct_units``); else one ``output_unit`` each, in turn (a
    noise word drawn twice sees its first update), a noise word equal to the
    target skipped (word2vec.c). Both give the same results where both apply;
    CBOW's one input keeps the second way, which is as fast for it.
    ``scores`` (4, >= count) is ``output_loss``'s. Returns the loss (nats)."""
    negatives, noise_codes = draws
    if count > 1 and all_distinct(negatives):
        return distinct_units(inputs, count, syn1neg, negatives, noise_codes, False, grads, scores, acc, alpha, dim)
    loss = 0.0
    for d in range(negatives.shape[0]):
        word = negatives[d]
        if d > 0 and word == negatives[0]:
            continue
        loss += output_unit(inputs, count, syn1neg, word, d == 0, grads, scores, acc, alpha, dim)
    return loss


@jit_inline
def output_loss(inputs, count, target, params, grads, scores, acc, alpha, draws, dim):
    """Both losses that are on (HS if ``syn1`` has rows, NS if ``syn1neg`` has) for
    ``count`` inputs predicting ``target``, ``draws`` (``ns_loss``) already
    drawn; adds the inputs' gradients to ``grads[:count]``. ``scores`` (4,
    UNITS): rows 0 and 1 scratch, row 2 all 0 and row 3 all 1 (the labels of
    negative sampling's units taken one at a time); ``acc`` (D,) scratch.
    Returns the loss (nats)."""
    syn1, syn1neg, codes, points, code_offsets, _, _ = params
    loss = 0.0
    if syn1.shape[0] > 0:
        loss += hs_loss(inputs, count, target, syn1, grads, scores, acc, alpha, codes, points, code_offsets, dim)
    if syn1neg.shape[0] > 0:
        loss += ns_loss(inputs, count, draws, syn1neg, grads, scores, acc, alpha, dim)
    return loss


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

    Skip-gram batches each centre word's window (HogBatch, Ji et al. 2016): all
    its context words predict the centre word through the same output units (the
    nodes of its Huffman path, and one shared draw of noise words), so the units
    are taken one at a time against the context words, each unit's row is read
    once and moved once by the sum of their steps, and the context rows take
    their gradients afterwards. word2vec.c instead walks the units per context
    word, updating each row after every pair, and draws fresh noise words per
    pair. The batched form reads and writes each output row once per window
    instead of up to 2 * window times, which keeps two Hogwild threads from
    fighting over the rows every window touches (the top of the Huffman tree, the
    frequent noise words): 2-thread throughput x1.4 over the per-pair loop, see
    docs/performance.md; quality in docs/parity.md. A window of more than
    ``CHUNK`` context words is taken in chunks of that many, rows moving after
    each: summing the steps of a whole wide window on repetitive text (a word
    seen a hundred times in it) diverged where word2vec.c's per-pair updates do
    not. CBOW has one input (the hidden vector), so its loop is word2vec.c's.

    Returns the summed loss (float64, nats) and the number of training examples
    (skip-gram: context-centre pairs; CBOW: centre words).
    """

    @jit_kernel
    def train_batch(tokens, syn0, params, keep_prob, window, negative, cbow, cbow_mean, alpha, seed):
        tokens, syn0, keep_prob = unmanaged(tokens), unmanaged(syn0), unmanaged(keep_prob)
        params = tuple_unmanaged(params)
        syn1, syn1neg, _, points, code_offsets, alias_prob, alias_idx = params
        state = np.uint64(seed)
        alpha = np.float32(alpha)
        owned = (  # the heap scratch buffers, used through unmanaged views
            scratch(tokens.shape[0], np.int32),
            scratch(2 * window, np.int32),
            scratch(negative + 1, np.int32),
            scratch(negative + 1, np.int32),
        )
        sentence = unmanaged(owned[0])
        contexts = unmanaged(owned[1])  # a window's context words
        negatives = unmanaged(owned[2])
        noise_codes = unmanaged(owned[3])  # the target's code 0, the noise words' 1
        noise_codes[:] = 1
        noise_codes[0] = 0
        draws = (negatives, noise_codes)
        inputs = stack_matrix(CHUNK, dim)  # skip-gram: a chunk of the window's context rows
        grads = stack_matrix(CHUNK, dim)  # their gradients (CBOW: the hidden vector's, row 0)
        hidden = stack_matrix(1, dim)  # CBOW's input
        acc = stack_matrix(1, dim)[0]  # an output row's step
        scores = stack_matrix(4, UNITS)  # (unit, input) pairs: logits then steps, labels; all 0, all 1
        scores[2, :] = 0.0
        scores[3, :] = 1.0
        use_ns = syn1neg.shape[0] > 0
        use_hs = syn1.shape[0] > 0
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
                if pos + 1 < length:  # the next centre word's new context and output rows
                    prefetch_row(syn0, sentence[min(pos + window + 1, length - 1)], dim)
                    if use_ns:
                        prefetch_row(syn1neg, sentence[pos + 1], dim)
                    if use_hs:
                        for j in range(code_offsets[sentence[pos + 1]], code_offsets[sentence[pos + 1] + 1]):
                            prefetch_row(syn1, points[j], dim)
                if hi - lo < 2:
                    continue  # no context
                if use_ns:  # drawn first, so that their rows load while the inputs are formed
                    state = draw_negatives(negatives, target, state, alias_prob, alias_idx)
                    for d in range(1, negatives.shape[0]):
                        prefetch_row(syn1neg, negatives[d], dim)
                count = 0
                for c in range(lo, hi):
                    if c != pos:
                        contexts[count] = sentence[c]
                        count += 1
                if cbow:
                    hidden[0, :] = 0.0
                    for c in range(count):
                        for k in range(dim):
                            hidden[0, k] += syn0[contexts[c], k]
                    if cbow_mean:
                        for k in range(dim):
                            hidden[0, k] /= np.float32(count)
                    grads[0, :] = 0.0
                    loss += output_loss(hidden, 1, target, params, grads, scores, acc, alpha, draws, dim)
                    examples += 1
                    for c in range(count):
                        for k in range(dim):
                            syn0[contexts[c], k] += grads[0, k]
                else:
                    for first in range(0, count, CHUNK):
                        chunk = contexts[first : min(first + CHUNK, count)]
                        for c in range(chunk.shape[0]):
                            for k in range(dim):
                                inputs[c, k] = syn0[chunk[c], k]
                                grads[c, k] = 0.0
                        loss += output_loss(
                            inputs, chunk.shape[0], target, params, grads, scores, acc, alpha, draws, dim
                        )
                        for c in range(chunk.shape[0]):
                            for k in range(dim):
                                syn0[chunk[c], k] += grads[c, k]
                    examples += count
        keep_alive(owned)
        return loss, examples

    return train_batch


_BATCH_KERNELS: dict[int, Any] = {}


def stack_bytes(dim: int) -> int:
    """Bytes of stack the kernel for ``dim`` keeps its buffers in."""
    return 4 * (dim * (2 * CHUNK + 2) + 4 * UNITS)


def train_batch_kernel(dim):
    """The (cached) batch kernel for vector size ``dim``."""
    if dim not in _BATCH_KERNELS:
        _BATCH_KERNELS[dim] = make_train_batch(dim)
    return _BATCH_KERNELS[dim]
