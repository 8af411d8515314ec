"""Skip-gram's training pairs, made apart from training, bucketed by block and cut
into chunks: what a machine of a block-partitioned cluster (``blocks``) makes from
its part of the corpus and what the owner of the rows trains.

A pair (context, centre) is made as the batch kernel makes it (``kernels.train_sentence``):
the sentence subsampled with word2vec.c's keep probabilities, the window shrunk at
random for each centre word to ``window - b``, b uniform in [0, window), every word
within it a context of the centre. The kernel's generator also draws the noise
words, so the draws differ from a batch's; their distribution does not.
"""

from typing import NamedTuple

import numpy as np

from w2v.cluster.blocks import Plan, block_keys, block_pairs, unpack_block_keys
from w2v.cluster.paircodec import decode_keys, encode_frames
from w2v.engine.chunks import Chunks
from w2v.engine.jit import jit_kernel
from w2v.engine.kernels import CHUNK, lcg_next, subsampled_sentence


@jit_kernel
def window_pairs(tokens, batch_starts, seeds, keep_prob, window):
    """The pairs of the batches ``tokens[batch_starts[b] : batch_starts[b + 1]]``
    ((N,) int32 ids, ``-1`` ending sentences), batch b's draws from the LCG seed
    ``seeds[b]`` (uint64). ``keep_prob`` (V,) float32: subsampling's. Returns
    (contexts, centres): (P,) int32 each, in the order of the text."""
    room = 0
    for b in range(seeds.shape[0]):
        room += (batch_starts[b + 1] - batch_starts[b]) * 2 * window
    contexts, centres = np.empty(room, np.int32), np.empty(room, np.int32)
    sentence = np.empty(tokens.shape[0], np.int32)
    n = 0
    for b in range(seeds.shape[0]):
        batch, state, i = tokens[batch_starts[b] : batch_starts[b + 1]], np.uint64(seeds[b]), 0
        while i < batch.shape[0]:
            length, i, state = subsampled_sentence(batch, i, keep_prob, sentence, state, None)
            for pos in range(length):
                state = lcg_next(state)
                reach = window - np.int64((state >> np.uint64(16)) % np.uint64(window))
                for c in range(max(pos - reach, 0), min(pos + reach + 1, length)):
                    if c != pos:
                        contexts[n], centres[n] = sentence[c], sentence[pos]
                        n += 1
    return contexts[:n].copy(), centres[:n].copy()


@jit_kernel
def chunk_starts(groups, limit):
    """Where chunks start in a sequence of pairs sorted into ``groups`` ((P,) ints,
    equal for a run of pairs of one group): each run of ``n`` pairs is cut into
    ``ceil(n / limit)`` chunks of sizes differing by at most one.
    Returns (C + 1,) int64, the last entry P."""
    starts = np.empty(groups.shape[0] + 1, np.int64)
    c, first = 0, 0
    while first < groups.shape[0]:
        last = first
        while last < groups.shape[0] and groups[last] == groups[first]:
            last += 1
        pieces = -(-(last - first) // limit)
        for p in range(pieces):
            starts[c] = first + (last - first) * p // pieces
            c += 1
        first = last
    starts[c] = groups.shape[0]
    return starts[: c + 1].copy()


class Frames(NamedTuple):
    """A machine's pairs of a sweep, coded for their blocks (``paircodec``): block b's
    frame is ``data[at[b] : at[b + 1]]``, holding ``counts[b]`` pairs."""

    data: np.ndarray  # (B,) uint8
    at: np.ndarray  # (2N^2 + 1,) int64
    counts: np.ndarray  # (2N^2,) int64

    def frame(self, block: int) -> tuple[np.ndarray, int]:
        """Block ``block``'s frame and its pairs."""
        return self.data[self.at[block] : self.at[block + 1]], int(self.counts[block])

    def share(self, first: int, last: int) -> "Frames":
        """The frames of blocks ``first`` .. ``last - 1``, numbered from 0."""
        at = self.at[first : last + 1]
        return Frames(self.data[at[0] : at[-1]], at - at[0], self.counts[first:last])


def machine_frames(contexts: np.ndarray, centres: np.ndarray, plan: Plan) -> Frames:
    """The frames of a machine's pairs (``window_pairs``) for every block of ``plan``:
    each pair's block and key in one number (``block_keys``), the numbers sorted in
    place (numpy's sort: vectorised where the CPU allows, and no P-sized scratch), then
    cut by block into each block's sorted keys (``unpack_block_keys``)."""
    packed = block_keys(contexts, centres, plan.owner, plan.local, plan.machines, plan.key_span)
    packed.sort()
    starts = unpack_block_keys(packed, plan.key_span, plan.blocks)
    data, at = encode_frames(packed, starts)
    return Frames(data, at, np.diff(starts))


def block_chunks(frames: list[tuple[np.ndarray, int]], plan: Plan, block: int, rng: np.random.Generator):
    """A block's chunks from its ``frames`` (every machine's, in machine order): the
    pairs grouped by centre word, in an order drawn from ``rng`` within a group, cut
    into chunks of up to ``CHUNK`` (``chunk_starts``). Returns (Chunks, the chunks in
    an order drawn from ``rng``, (C,) int64)."""
    keys = np.concatenate([decode_keys(data, count) for data, count in frames] or [np.empty(0, np.int64)])
    machine, part = divmod(block, plan.parts)
    members = plan.members[plan.first[machine] : plan.first[machine + 1]]
    contexts, centres = block_pairs(keys, rng.permutation(len(keys)), members, plan.parts, part)
    starts = chunk_starts(centres, CHUNK)
    return Chunks(contexts, starts, centres[starts[:-1]]), rng.permutation(len(starts) - 1)
