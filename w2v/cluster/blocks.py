r"""The plan of skip-gram negative sampling trained in blocks on N machines: which
machine owns which rows, and which block each trains when (PyTorch-BigGraph's
bucket schedule, Lerer et al., SysML 2019, applied to word2vec).

Every row has one owner at a time, and training pairs travel to the rows:

- the input vectors (rows of ``syn0``) are split into N left partitions L_m, one a
  machine, balanced by kept-token mass ``count(w) keep(w)`` (``left_partitions``),
  assigned afresh each epoch;
- the output vectors (rows of ``syn1neg``) into 2N right partitions R_j by rank
  round robin: word w (ids are ranks by count) is in ``R_(w mod 2N)``, its index
  there ``w div 2N``;
- an epoch is S sweeps, a sweep 2N sub-steps; in sub-step s machine m trains block
  ``(L_m, R_((2m + s) mod 2N))`` (``block_right``): the blocks of a sub-step share no
  row, every (L, R) meets once a sweep, and a right partition, once trained, is
  next needed two sub-steps later by the machine before: one sub-step to move it;
- the pair (context c, centre o) is trained in block ``(L_owner(c), R_(o mod 2N))``,
  in its sweep, by the machine owning c; a machine sends each of its pairs there
  (``block_keys``: the block and the pair's key within it, ``paircodec``).

The learning rate follows one process's schedule: ``alpha0 (1 - p)``, floored at
``min_alpha``, with p the fraction of the run done, ``(e 2NS + k 2N + s + f) / (E 2NS)``
for epoch e, sweep k, sub-step s and f the fraction of the block done (``block_alphas``).
"""

from typing import NamedTuple

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.vocab import build_alias
from w2v.engine.chunks import ChunkNoise
from w2v.engine.jit import jit_kernel

HEAVIEST = 8  # words a machine that are placed heaviest first, before the rest in random order


def trains_in_blocks(config: TrainConfig) -> bool:
    """Whether a run of ``config`` on a cluster trains in blocks: skip-gram with negative
    sampling alone (no hierarchical softmax, no subwords), unless ``rounds`` asks for
    replicas. Every other model trains in rounds (``cluster.rounds``): CBOW's and the
    tree's updates reach rows no pair's block holds."""
    plain = config.model == "skipgram" and config.losses == ["ns"] and not config.subwords
    return plain and not config.rounds


class Plan(NamedTuple):
    """The placement of one epoch: N machines, each word's input row's owner."""

    machines: int  # N
    owner: np.ndarray  # (V,) int32: the machine whose left partition holds each word
    local: np.ndarray  # (V,) int32: the word's index in its left partition (ids in increasing order)
    sizes: np.ndarray  # (N,) int64: the words of each left partition
    members: np.ndarray  # (V,) int32: the words of L_0, then of L_1, ... each in increasing order
    first: np.ndarray  # (N + 1,) int64: L_m is members[first[m] : first[m + 1]]

    @property
    def parts(self) -> int:
        """The right partitions, 2N."""
        return 2 * self.machines

    @property
    def blocks(self) -> int:
        """The blocks (L_m, R_j), numbered ``m * 2N + j``."""
        return self.machines * self.parts

    @property
    def key_span(self) -> int:
        """A bound on the keys of every block (``block_keys``): ``ceil(V / 2N) max |L|``."""
        return -(-len(self.owner) // self.parts) * int(self.sizes.max())


@jit_kernel
def lightest_first(order, mass, machines):
    """Each word of ``order`` ((V,) int64) in turn to the machine holding the least
    ``mass`` ((V,) float64) so far. Returns the owners, (V,) int32."""
    load = np.zeros(machines)
    owner = np.empty(order.shape[0], np.int32)
    for w in order:
        lightest = 0
        for m in range(1, machines):
            if load[m] < load[lightest]:
                lightest = m
        owner[w] = lightest
        load[lightest] += mass[w]
    return owner


def left_partitions(mass: np.ndarray, machines: int, rng: np.random.Generator) -> Plan:
    """The plan that balances the kept-token ``mass`` ((V,) float64) of the input rows
    over ``machines``: the ``HEAVIEST * machines`` heaviest words placed heaviest first
    (the greedy rule for balance), the rest in an order drawn from ``rng``, each to
    the lightest machine so far, so that which words share a machine changes from
    epoch to epoch."""
    by_mass = np.argsort(-mass, kind="stable")
    head = HEAVIEST * machines
    order = np.concatenate([by_mass[:head], rng.permutation(by_mass[head:])])
    owner = lightest_first(order.astype(np.int64), mass.astype(np.float64), machines)
    members = np.argsort(owner, kind="stable").astype(np.int32)  # ids increasing within each owner
    sizes = np.bincount(owner, minlength=machines).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)])
    local = np.empty(owner.shape[0], np.int32)
    local[members] = np.arange(owner.shape[0]) - first[owner[members]]
    return Plan(machines, owner, local, sizes, members, first)


def block_right(machine: int, substep: int, machines: int) -> int:
    """The right partition machine ``machine`` trains in sub-step ``substep``: (2m + s) mod 2N."""
    return (2 * machine + substep) % (2 * machines)


def handoff_bytes(vocab_size: int, machines: int, dim: int) -> int:
    """The bytes of right partitions that ``machines`` machines hand on in a sweep: in
    each of the 2N sub-steps every machine hands the partition it trained, ``|R_j| D``
    float32s, to the machine before it, so each R_j moves N times a sweep:
    ``N sum_j |R_j| D 4 = N V D 4`` (``|R_j| = len(range(j, V, 2N))``, summing to V),
    and 0 for N = 1, whose one machine keeps both its partitions."""
    if machines == 1:
        return 0
    return machines * vocab_size * dim * np.dtype(np.float32).itemsize


def right_members(part: int, parts: int, vocab: int) -> np.ndarray:
    """The words of right partition ``part`` of ``parts``: part, part + parts, ... (int32)."""
    return np.arange(part, vocab, parts, dtype=np.int32)


def right_noise(noise: np.ndarray, centres: np.ndarray, parts: int, samples: int, corrected: bool) -> list[ChunkNoise]:
    """Each right partition's noise: the noise distribution ``noise`` ((V,) float64, summing
    to 1) restricted to it, and the draws a chunk: ``samples`` times
    ``rho_j = Q_j / T_j`` where ``corrected`` (Q_j its noise mass, T_j its share of
    the pairs' centre words, ``centres`` (V,) float64 summing to 1), else ``samples``.
    A draw is a word's place in its partition (``right_members``)."""
    tables = []
    for j in range(parts):
        members = right_members(j, parts, noise.shape[0])
        mass = noise[members].sum()
        prob, idx = build_alias(noise[members] / mass)
        rho = mass / centres[members].sum() if corrected else 1.0
        tables.append(ChunkNoise(prob, idx, float(samples * rho)))
    return tables


@jit_kernel
def block_keys(contexts, centres, owner, local, machines, span):
    """Each pair's block, ``owner(c) * 2N + (o mod 2N)``, and its key there,
    ``(o div 2N) * |L| + local(c)`` (``paircodec``; |L| the size of c's left
    partition), as one number ``block * span + key`` ((P,) int64), for the pairs
    (``contexts[i]``, ``centres[i]``): ``span`` (``Plan.key_span``) exceeds every
    key, so the numbers sort by block, then by key."""
    parts = 2 * machines
    sizes = np.zeros(machines, np.int64)
    for w in range(owner.shape[0]):
        sizes[owner[w]] += 1
    packed = np.empty(contexts.shape[0], np.int64)
    for i in range(contexts.shape[0]):
        c, o = contexts[i], centres[i]
        block = owner[c] * parts + o % parts
        packed[i] = block * span + np.int64(o // parts) * sizes[owner[c]] + local[c]
    return packed


@jit_kernel
def unpack_block_keys(packed, span, blocks):
    """``packed`` ((P,) int64, ``block_keys``, sorted) turned, in place, into each
    pair's key in its block; returns where each of the ``blocks`` blocks' keys
    start, (blocks + 1,) int64, the last entry P."""
    starts = np.zeros(blocks + 1, np.int64)
    block, end = 0, span  # the block of the pairs so far, and where the next one's numbers start
    for i in range(packed.shape[0]):
        while packed[i] >= end:
            block += 1
            starts[block] = i
            end += span
        packed[i] -= end - span
    starts[block + 1 :] = packed.shape[0]
    return starts


@jit_kernel
def block_pairs(keys, order, members, parts, part):
    """The pairs that ``keys`` ((P,) int64, ``unpack_block_keys``) name in a block of right
    partition ``part`` (of ``parts``) and the left partition ``members`` ((|L|,) int32,
    its words by place), grouped by centre word (increasing), each group in the order
    its pairs come in ``order`` ((P,) int64, a permutation of the keys): the keys
    undone and sorted stably by centre in one counting sort, O(P + |R|).
    Returns (contexts, centres), (P,) int32 each."""
    size = members.shape[0]
    packed = np.empty(keys.shape[0], np.int64)  # each pair's centre's place << 32 | its context word
    groups = 0
    for i in range(keys.shape[0]):
        group = keys[i] // size
        packed[i] = (group << 32) | members[keys[i] - group * size]
        groups = max(groups, group + 1)
    at = np.zeros(groups + 1, np.int64)
    for i in range(keys.shape[0]):
        at[(packed[i] >> 32) + 1] += 1
    for g in range(groups):
        at[g + 1] += at[g]
    contexts, centres = np.empty(keys.shape[0], np.int32), np.empty(keys.shape[0], np.int32)
    for i in range(order.shape[0]):
        pair = packed[order[i]]
        group = pair >> 32
        contexts[at[group]] = np.int32(pair & 0xFFFFFFFF)
        centres[at[group]] = group * parts + part
        at[group] += 1
    return contexts, centres


def block_alphas(alphas: tuple[float, float], position: tuple[int, int, int], steps: tuple[int, int, int]):
    """The learning rate at the start and the end of a block: ``alphas`` (alpha0,
    min_alpha); ``position`` (epoch, sweep, sub-step) of ``steps`` (epochs, sweeps,
    sub-steps a sweep). Returns (2,) float64."""
    epochs, sweeps, substeps = steps
    epoch, sweep, substep = position
    done = (epoch * sweeps + sweep) * substeps + substep
    progress = np.array([done, done + 1]) / (epochs * sweeps * substeps)
    return alphas[0] - (alphas[0] - alphas[1]) * np.minimum(progress, 1.0)
