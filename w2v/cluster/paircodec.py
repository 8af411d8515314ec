"""The wire format of a block's training pairs: sorted keys, delta-coded as varints.

A sender's pairs for one block (``blocks``: left partition L, right partition R)
are keys ``k = centre_local * |L| + context_local`` (the centre word's index in R,
the context word's in L), sorted; the frame holds the differences of consecutive
keys (the first from 0) as unsigned LEB128 varints: 7 bits a byte, the high bit set
on every byte but a number's last. A gap below 128 (a pair repeated, or close to
the one before) takes one byte, below 16,384 two: a frame of P pairs among
``|L| |R|`` possible keys takes about ``log2(|L| |R| / P) / 7`` bytes a pair, fewer
as the pairs of a block grow denser. The receiver knows L's and R's members
(every machine derives the plan), so the keys name the pairs' words.
"""

import numpy as np

from w2v.engine.jit import jit_kernel


@jit_kernel
def varint_bytes(keys):
    """The bytes of the frame of ``keys`` ((P,) int64, sorted, >= 0): how many."""
    total, before = 0, 0
    for i in range(keys.shape[0]):
        gap = keys[i] - before
        before = keys[i]
        total += 1
        while gap >= 128:
            gap >>= 7
            total += 1
    return total


@jit_kernel
def encode_keys(keys):
    """The frame of ``keys`` ((P,) int64, sorted, >= 0): (B,) uint8."""
    out = np.empty(varint_bytes(keys), np.uint8)
    at, before = 0, 0
    for i in range(keys.shape[0]):
        gap = keys[i] - before
        before = keys[i]
        while gap >= 128:
            out[at] = np.uint8((gap & 127) | 128)
            gap >>= 7
            at += 1
        out[at] = np.uint8(gap)
        at += 1
    return out


@jit_kernel
def decode_keys(frame, pairs):
    """The ``pairs`` keys of ``frame`` ((B,) uint8, ``encode_keys``): (pairs,) int64.
    ValueError where the frame does not hold exactly that many."""
    keys = np.empty(pairs, np.int64)
    at, value = 0, 0
    for i in range(pairs):
        gap, shift = 0, 0
        while True:
            if at >= frame.shape[0] or shift > 56:
                raise ValueError("a pair frame ends inside a number or holds too few pairs")
            byte = np.int64(frame[at])
            at += 1
            gap |= (byte & 127) << shift
            shift += 7
            if byte < 128:
                break
        value += gap
        keys[i] = value
    if at != frame.shape[0]:
        raise ValueError("a pair frame holds more bytes than its pairs")
    return keys


@jit_kernel
def encode_frames(keys, starts):
    """The frames of ``keys[starts[f] : starts[f + 1]]`` ((P,) int64, each run sorted;
    ``starts`` (F + 1,) int64), laid end to end: ((B,) uint8, (F + 1,) int64 where
    each frame's bytes start)."""
    frames = starts.shape[0] - 1
    at = np.zeros(frames + 1, np.int64)
    for f in range(frames):
        at[f + 1] = at[f] + varint_bytes(keys[starts[f] : starts[f + 1]])
    out = np.empty(at[frames], np.uint8)
    for f in range(frames):
        out[at[f] : at[f + 1]] = encode_keys(keys[starts[f] : starts[f + 1]])
    return out, at


@jit_kernel
def decode_frames(data, at, starts):
    """The keys of the frames ``data[at[f] : at[f + 1]]`` (``encode_frames``), frame f
    holding ``starts[f + 1] - starts[f]`` of them: (P,) int64."""
    keys = np.empty(starts[-1], np.int64)
    for f in range(starts.shape[0] - 1):
        keys[starts[f] : starts[f + 1]] = decode_keys(data[at[f] : at[f + 1]], starts[f + 1] - starts[f])
    return keys
