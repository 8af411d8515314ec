"""The trace's comparison: where word2vec.c's weights and w2v's first part.

Both programs record their weights before every K-th centre word and after the
last (``build_word2vec_trace``'s ``dumps.bin``; w2v's ``c_arithmetic.CTrace``).
Two values differ beyond float rounding where ``|a - b| > TOLERANCE s``, s the
size of their row: the largest ``|a|`` or ``|b|`` in it (``TINY`` for a row of
zeros). A dot product or an update rounds relative to the terms it sums, which
are of the row's size: a value near 0 in a row of values near 0.1 carries
rounding of 0.1's. ``first_divergence`` names the first dump holding such a
value, its variable (syn0, syn1 or syn1neg), row (word or tree node), column and
both values.
``first_draw_difference`` does the same for the centre words and their windows,
which must agree before the weights can.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

TOLERANCE = 1e-5  # relative: float32 rounds to 6e-8, and a few thousand steps of it stay far below
TINY = 1e-30  # the size of a row of zeros
VARIABLES = ("syn0", "syn1", "syn1neg")


@dataclass
class Dumps:
    """One side's weights: ``steps[j]`` centre words trained before dump j, and each
    variable's (J, rows, D) float32 values."""

    steps: np.ndarray
    weights: dict[str, np.ndarray]


@dataclass
class Divergence:
    """The first value that differs beyond rounding: before centre word ``step``."""

    step: int
    variable: str
    row: int
    column: int
    c_value: float
    w2v_value: float

    row_size: float  # the size it is compared at (``row_sizes``)

    def describe(self, row_name: str) -> str:
        """The difference in words, its row named ``row_name``."""
        relative = abs(self.c_value - self.w2v_value) / self.row_size
        return (
            f"first difference before centre word {self.step:,}: {self.variable}[{self.row}, {self.column}] "
            f"({row_name}): word2vec.c {self.c_value!r}, w2v {self.w2v_value!r} ({relative:.1e} of the row's size)"
        )


def read_c_dumps(path: Path, vocab_size: int, dim: int, variables: tuple[str, ...]) -> Dumps:
    """``dumps.bin`` of the patched word2vec.c: records of the step (int64) then each
    of ``variables`` (vocab_size x dim float32; C's syn1 has a row more than the
    tree's V - 1 nodes, which is dropped)."""
    fields = [("step", "<i8")] + [(name, "<f4", (vocab_size, dim)) for name in variables]
    records = np.fromfile(path, dtype=np.dtype(fields))
    weights = {name: records[name][:, : vocab_size - 1] if name == "syn1" else records[name] for name in variables}
    return Dumps(records["step"].astype(np.int64), weights)


def row_sizes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The size each value of ``a`` and ``b`` ((..., rows, D), one shape) is compared
    at: the largest ``|a|`` or ``|b|`` of its row, at least ``TINY`` ((..., rows, 1) float64)."""
    largest = np.maximum(np.abs(a), np.abs(b)).max(axis=-1, keepdims=True, initial=0.0)
    return np.maximum(largest.astype(np.float64), TINY)


def relative_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|a - b|`` over their rows' sizes (float64, the shape of ``a``)."""
    return np.abs(a.astype(np.float64) - b.astype(np.float64)) / row_sizes(a, b)


def largest_difference(c: Dumps, w2v: Dumps) -> float:
    """The largest ``relative_differences`` of any value in any dump (0.0: bit for bit)."""
    return max(float(relative_differences(c.weights[name], w2v.weights[name]).max(initial=0.0)) for name in c.weights)


def first_divergence(c: Dumps, w2v: Dumps) -> Divergence | None:
    """The first value of the first dump where the two sides differ by more than
    ``TOLERANCE`` of their row's size (``relative_differences``), its variables
    taken in ``VARIABLES``' order; None if none. Dumps are compared while both
    sides' are of the same step (``first_draw_difference`` says where they part)."""
    for j in range(min(len(c.steps), len(w2v.steps))):
        if c.steps[j] != w2v.steps[j]:
            break
        for name in (name for name in VARIABLES if name in c.weights):
            a, b = c.weights[name][j], w2v.weights[name][j]
            differs = np.argwhere(relative_differences(a, b) > TOLERANCE)
            if len(differs):
                row, column = (int(v) for v in differs[0])
                size = float(row_sizes(a[row], b[row])[0])
                return Divergence(
                    int(c.steps[j]), name, row, column, float(a[row, column]), float(b[row, column]), size
                )
    return None


def read_c_windows(path: Path, window: int) -> np.ndarray:
    """The centre words of word2vec.c's ``draws.txt`` and their windows' reach,
    ``window - b`` ((S, 2) int64), in order."""
    rows = [line.split()[2:] for line in path.read_text().splitlines() if line.startswith("w ")]
    drawn = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
    drawn[:, 1] = window - drawn[:, 1]
    return drawn


def first_draw_difference(c: np.ndarray, w2v: np.ndarray) -> str | None:
    """Where the two sides' centre words and windows ((S, 2) int64 each) first part,
    in words; None where they are the same."""
    for step in range(min(len(c), len(w2v))):
        if not np.array_equal(c[step], w2v[step]):
            (cw, cr), (ww, wr) = c[step].tolist(), w2v[step].tolist()
            return (
                f"centre word {step:,}: word2vec.c trains word {cw} with {cr} words each side, w2v word {ww} with {wr}"
            )
    if len(c) != len(w2v):
        return f"word2vec.c trains {len(c):,} centre words, w2v {len(w2v):,}"
    return None
