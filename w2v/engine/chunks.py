r"""Skip-gram negative sampling over chunks of (context, centre) pairs: the kernel of
training in blocks (``w2v.cluster.blocks``).

A chunk is up to ``CHUNK`` context words ``c`` that predict one centre word ``o``,
gathered from anywhere in the corpus: the pairs of a block that share a centre word.
Each chunk is one skip-gram window of the batch kernel (``kernels.window_loss``):
its context words' input rows ``v_c`` (rows of ``syn0``) predict ``o`` through the
same output units, the target ``u_o`` (label 1) and noise words ``u_k`` (label 0)
of one draw, with the loss

``L = -sum_c [log sigma(u_o . v_c) + sum_k log sigma(-u_k . v_c)]`` (nats).

The noise words are drawn from the block's right partition R (``ChunkNoise``): the
noise distribution ``q`` restricted to R, ``q_R(w) = q(w) / Q_R`` for w in R. A chunk
draws ``floor(k rho) + [u < frac(k rho)]`` of them (u uniform), so that a word of R
is drawn as a negative as often, in expectation over a sweep, as with ``k`` draws
from the whole ``q``: with ``rho = Q_R / T_R``, T_R the share of the pairs whose centre
word is in R, a word w of R is drawn ``T_R k rho q(w) / Q_R = k q(w)`` times a pair.
"""

from typing import NamedTuple

import numpy as np

from w2v.engine.jit import jit_helper, jit_kernel, keep_alive, scratch, stack_matrix, unmanaged
from w2v.engine.kernels import (
    CHUNK,
    NS,
    UNITS,
    InputRows,
    Outputs,
    Scratch,
    Settings,
    Top,
    Units,
    Window,
    lcg_next,
    row_stride,
    uniform24,
    window_loss,
)


class Chunks(NamedTuple):
    """A block's training pairs in chunks: chunk ``i`` is the context words
    ``contexts[starts[i] : starts[i + 1]]`` (at most ``CHUNK``) predicting ``centres[i]``."""

    contexts: np.ndarray  # (P,) int32: context words, rows of syn0
    starts: np.ndarray  # (C + 1,) int64: where each chunk's context words start
    centres: np.ndarray  # (C,) int32: each chunk's centre word, a row of syn1neg


class ChunkNoise(NamedTuple):
    """The noise distribution of a right partition R: an alias table over its words'
    places in R, which are the rows of R's own output matrix."""

    alias_prob: np.ndarray  # (|R|,) uint32: alias thresholds in [0, 2**24] (``vocab.build_alias``)
    alias_idx: np.ndarray  # (|R|,) int32: the alias of each column, a place in R
    draws: float  # noise words a chunk draws on average, k rho (``floor`` or ``ceil`` of it each time)


def chunk_settings(window: int, samples: int, sharers: int) -> Settings:
    """The batch kernel's settings for skip-gram negative sampling with ``samples``
    noise words (the most a chunk draws) and ``sharers`` threads at once."""
    return Settings(window, samples, False, True, False, NS, False, 0.0, sharers)


@jit_helper
def draw_count(draws, state):
    """``floor(draws)``, plus one with probability ``frac(draws)``. Returns (count, new state)."""
    whole = np.int64(draws)
    state = lcg_next(state)
    if uniform24(state) < np.float32(draws - whole):
        whole += 1
    return whole, state


@jit_helper
def draw_from(noise, centre, candidates, state):
    """The candidates of a chunk into ``candidates``: ``centre`` first, then the noise
    words drawn from ``noise``, a draw equal to the centre skipped (as word2vec.c
    does). Returns (how many candidates, new state)."""
    count, state = draw_count(noise.draws, state)
    candidates[0] = centre
    n = 1
    for _ in range(count):
        state = lcg_next(state)
        column = ((state >> np.uint64(32)) * np.uint64(noise.alias_prob.shape[0])) >> np.uint64(32)
        state = lcg_next(state)
        kept = (state >> np.uint64(40)) < noise.alias_prob[column]
        word = np.int32(column) if kept else noise.alias_idx[column]
        if word != centre:
            candidates[n] = word
            n += 1
    return n, state


@jit_helper
def chunk_alpha(alphas, i, chunks):
    """The learning rate of chunk ``i`` of ``chunks``: from ``alphas[0]`` at the first
    to ``alphas[1]`` at the end, linearly (float32)."""
    return np.float32(alphas[0] + (alphas[1] - alphas[0]) * (i / max(chunks, 1)))


@jit_kernel
def train_chunks(chunks, order, syn0, tables, noise, settings, alphas, seed):
    """Train the chunks ``order`` ((n,) int64 indices into ``chunks``, ``Chunks``) in that
    order: ``-> (loss_sum, pairs)``, the loss in nats (float64) over the pairs trained.

    - ``syn0`` (V, D) float32 and ``tables.syn1neg`` (V, D) float32 (``weights.Tables``),
      moved in place without locks (Hogwild);
    - ``noise`` (``ChunkNoise``): the right partition's noise words and draws a chunk;
    - ``settings``: ``chunk_settings``, its ``samples`` at least ``ceil(noise.draws)``;
    - ``alphas`` (2,) float64: the learning rate at the first chunk and after the last;
    - ``seed``: uint64 LCG seed of the noise draws.
    """
    syn0, tables = unmanaged(syn0), unmanaged(tables)
    dim, stride = syn0.shape[1], row_stride(syn0.shape[1])
    state = np.uint64(seed)
    owned = (
        scratch(settings.samples + 1, np.int32),  # a chunk's candidates
        scratch(settings.samples + 1, np.float32),  # and their labels
        scratch(settings.samples + 1, np.float32),  # and their logit offsets (none: 0)
        scratch(1, np.int32),  # the softmax's and the tree's rows: none
        np.empty((0, CHUNK), dtype=np.float32),  # the softmax's table: none
    )
    candidates, labels, offsets, no_rows, no_table = unmanaged(owned)
    labels[:] = 0.0
    labels[0] = 1.0
    offsets[:] = 0.0
    buffers = Scratch(stack_matrix(CHUNK, stride), stack_matrix(CHUNK, stride), stack_matrix(2, UNITS), no_table, None)
    top = Top(stack_matrix(0, stride), 0, no_rows)
    outputs = Outputs(tables, top, Units(tables.syn1neg, no_rows[:0], None, offsets[:0]))
    sources = InputRows(syn0, no_rows[:0], syn0, no_rows[:0])
    loss, pairs = 0.0, 0
    for i in range(order.shape[0]):
        c = order[i]
        contexts = chunks.contexts[chunks.starts[c] : chunks.starts[c + 1]]
        n, state = draw_from(noise, chunks.centres[c], candidates, state)
        draws = Units(tables.syn1neg, candidates[:n], labels[:n], offsets[:n])
        window = Window(contexts, chunks.centres[c], draws)
        alpha = chunk_alpha(alphas, i, order.shape[0])
        loss += window_loss(syn0, sources, window, outputs, settings, buffers, alpha, dim)
        pairs += contexts.shape[0]
    keep_alive(owned)
    return loss, pairs
