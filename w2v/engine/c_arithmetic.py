"""word2vec.c's arithmetic, which the training kernel takes for the trace that
compares the two programs step by step (studies/c_trace).

``kernels.Settings.arithmetic`` is None in every run of w2v: the kernel's helpers
that read it are compiled for a None argument, Numba drops their branch of
``if arithmetic is None`` that is not taken, and the kernel is the one it was.
A ``CArithmetic`` makes the kernel do what word2vec.c (v0.1c, one thread) does
where w2v differs (docs/parity.md), the sigmoid, the float order and the pair
order each where it asks:

- draws: subsampling draws for every word when it is on (``subsampling``), from
  the low 16 bits of the generator, ``(r & 0xFFFF) / 65536``; the window is
  ``window - r % window``; a noise word is entry ``(r >> 16) % 1e8`` of C's unigram
  table (``noise_starts``), its ``</s>`` (word 0) replaced by ``r % (V - 1) + 1``;
- sentences: one ends at its 1,000th word kept (``MAX_SENTENCE``), the next
  starting at the next word; an empty one takes a window draw, as word2vec.c
  draws one for a stale centre word it then trains nothing on;
- the sigmoid: ``expTable[(int)((f + 6) * 83)]`` (``sigmoid``; negative sampling
  takes 1 above 6 and 0 below -6);
- the float order: one input's dot product summed term by term from the first,
  its updates ``a + g * b`` rounded twice, never fused (``plain_add``), and
  skip-gram's context words one at a time (``chunk`` 1: word2vec.c's pair order).

``CTrace`` records, before every ``every``-th centre word, the weights, and the
centre words and their windows' reach.
"""

from typing import NamedTuple

import numpy as np

from w2v.engine.jit import jit_helper, plain_add, plain_mul

EXP_TABLE_SIZE = 1000  # word2vec.c's sigmoid table: entry i is sigma(12 i / 1000 - 6)
MAX_EXP = 6  # and it covers (-6, 6)
TABLE_SCALE = EXP_TABLE_SIZE // MAX_EXP // 2  # 83, not 83.3: C's integer division, so f maps to sigma(0.996 f - 0.024)
NOISE_TABLE = 10**8  # entries of word2vec.c's unigram table
MAX_SENTENCE = 1000  # word2vec.c's MAX_SENTENCE_LENGTH: words kept in a sentence at most


class CTrace(NamedTuple):
    """What a kernel run under ``CArithmetic`` records: S centre words at most,
    the weights before centre words 0, every, 2 every, ... (N of them at most)."""

    every: int  # the weights are recorded before every this many centre words
    steps: np.ndarray  # (1,) int64: the centre words trained so far
    centres: np.ndarray  # (S, 2) int64: each centre word and its window's reach (words each side)
    syn0: np.ndarray  # (N, V, D) float32: syn0 before centre word 0, every, 2 every, ...
    syn1: np.ndarray  # (N, V - 1, D) float32 (or (N, 0, D)): syn1, the same
    syn1neg: np.ndarray  # (N, V, D) float32 (or (N, 0, D)): syn1neg, the same


class CArithmetic(NamedTuple):
    """word2vec.c's draws, sigmoid and float order, for ``kernels.train_batch``."""

    sigmoid: np.ndarray  # (EXP_TABLE_SIZE,) float32: word2vec.c's expTable (``sigmoid_table``); (0,): w2v's
    noise_starts: np.ndarray  # (V,) int64: the first entry of each word in C's unigram table of NOISE_TABLE
    subsampling: bool  # -sample > 0: every word takes a draw
    in_order: bool  # word2vec.c's float order (``dot_in_order``, ``move_in_order``); False: w2v's
    chunk: int  # skip-gram's context words per update: 1, word2vec.c's order; kernels.CHUNK, w2v's
    trace: CTrace  # what the run records


def sigmoid_table() -> np.ndarray:
    """word2vec.c's ``expTable`` (float32, (EXP_TABLE_SIZE,)) computed as C does:
    ``x = (i / 1000.f * 2 - 1) * 6`` in float, ``exp`` in double rounded to float,
    then ``x / (x + 1)`` in float."""
    i = np.arange(EXP_TABLE_SIZE, dtype=np.float32)
    argument = (i / np.float32(EXP_TABLE_SIZE) * np.float32(2) - np.float32(1)) * np.float32(MAX_EXP)
    e = np.exp(argument.astype(np.float64)).astype(np.float32)
    return e / (e + np.float32(1))


@jit_helper
def low16_uniform(state):
    """word2vec.c's subsampling draw: ``(r & 0xFFFF) / 65536`` (float32)."""
    return np.float32(state & np.uint64(0xFFFF)) * np.float32(1.0 / 65536.0)


@jit_helper
def table_sigmoid(table, f):
    """sigma(f) as word2vec.c reads it: ``table[(int)((f + 6) * 83)]`` for |f| < 6,
    in C's float arithmetic; 1 above 6 and 0 below -6 (negative sampling's clamp;
    hierarchical softmax leaves the nodes with |f| >= 6 alone)."""
    if f > np.float32(MAX_EXP):
        return np.float32(1.0)
    if f < np.float32(-MAX_EXP):
        return np.float32(0.0)
    return table[np.int64(plain_mul(plain_add(f, np.float32(MAX_EXP)), np.float32(TABLE_SCALE)))]


@jit_helper
def table_noise(state, starts):
    """word2vec.c's noise word for the generator's ``state`` (just stepped):
    ``table[(r >> 16) % 1e8]``, its word 0 (``</s>``) replaced by ``r % (V - 1) + 1``;
    the table given by each word's first entry ``starts`` ((V,) int64, ascending)."""
    entry = np.int64((state >> np.uint64(16)) % np.uint64(NOISE_TABLE))
    word = np.searchsorted(starts, entry, side="right") - 1
    if word == 0:
        word = np.int64(state % np.uint64(starts.shape[0] - 1)) + 1
    return np.int32(word)


@jit_helper
def dot_in_order(x, o, dim):
    """``x . o`` over the first ``dim`` floats, summed from the first term on, each
    product and sum rounded to float32 (word2vec.c's ``f += neu1[c] * syn1[c + l2]``)."""
    f = np.float32(0.0)
    for k in range(dim):
        f = plain_add(f, plain_mul(x[k], o[k]))
    return f


@jit_helper
def move_in_order(g, x, gradient, o, dim):
    """word2vec.c's two updates of one output row ``o`` at step ``g``: ``gradient += g o``
    against the row as it was, then ``o += g x``, each product and sum rounded."""
    for k in range(dim):
        gradient[k] = plain_add(gradient[k], plain_mul(g, o[k]))
        o[k] = plain_add(o[k], plain_mul(g, x[k]))


@jit_helper
def record_step(trace, syn0, syn1, syn1neg, target, reach):
    """Record centre word ``target`` and its ``reach`` into ``trace`` (``CTrace``), and
    before every ``trace.every``-th one the weights as they stand."""
    step = trace.steps[0]
    trace.centres[step, 0] = target
    trace.centres[step, 1] = reach
    if step % trace.every == 0:
        at = step // trace.every
        trace.syn0[at] = syn0
        trace.syn1[at] = syn1
        trace.syn1neg[at] = syn1neg
    trace.steps[0] = step + 1
