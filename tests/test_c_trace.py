"""studies/c_trace: word2vec.c and w2v's kernel, traced centre word by centre word on a
few kilobytes of data/sample.txt.gz, compute the same weights once w2v takes C's draws,
sigmoid table, float order and pair order (``w2v.engine.c_arithmetic``); and the trace
finds each of those left out. Skipped without gcc or the ``word2vec`` package (the
source of word2vec.c)."""

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO


def study_module(name: str):
    """``studies/c_trace/NAME.py``, loaded by its path (a study is not a package)."""
    spec = importlib.util.spec_from_file_location(f"c_trace_{name}", REPO / "studies" / "c_trace" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def c_trace():
    """The study's driver."""
    return study_module("c_trace")


@pytest.fixture(scope="module")
def program(c_trace, tmp_path_factory) -> Path:
    """word2vec.c with the trace, built once for the module."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    if importlib.util.find_spec("word2vec") is None:
        pytest.skip("the word2vec package (word2vec.c's source) is not installed")
    return c_trace.build(tmp_path_factory.mktemp("word2vec-trace"))


def traced(c_trace, program: Path, tmp_path: Path, **options):
    """The trace's ``Result`` for ``Options(**options)``."""
    return c_trace.trace(c_trace.Options(**options), tmp_path, program)


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        {},  # CBOW, hierarchical softmax: the combination that trails word2vec.c (studies/cbow_parity)
        {"model": "skipgram"},
        {"negative": 5},  # CBOW, hierarchical softmax and negative sampling: C's noise table
        # a line of 1,050 words, all kept: C's sentences of 1,000 words; epochs one after the other
        {"sample": 0.0, "words": 300, "long_line": 1_050, "min_count": 1, "epochs": 2},
    ],
    ids=["cbow-hs", "skipgram-hs", "cbow-hs-ns", "cbow-hs-long-sentence"],
)
def test_w2v_computes_word2vec_c_bit_for_bit(c_trace, program: Path, tmp_path: Path, options: dict) -> None:
    result = traced(c_trace, program, tmp_path, **options)
    assert result.draws is None, result.draws
    assert result.divergence is None, result.report()
    assert c_trace.largest_difference(result.c_dumps, result.w2v_dumps) == 0.0
    assert result.agrees and result.c_dumps.steps[-1] > 200  # centre words trained, each one compared
    assert len(result.c_dumps.steps) == result.c_dumps.steps[-1] + 1  # before each, and after the last
    # w2v's own Huffman tree and C's sigmoid table; its keep probabilities are C's to a float's last bit
    assert [note for note in result.notes if "keep probability" not in note] == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "options, variable",
    [({"c_sigmoid": False}, "syn1"), ({"model": "skipgram", "c_pairs": False}, "syn0")],
    ids=["computed-sigmoid", "skipgram-windows-at-once"],
)
def test_the_trace_finds_each_alignment_left_out(c_trace, program: Path, tmp_path: Path, options, variable) -> None:
    """w2v's computed sigmoid moves the first centre word's tree nodes; its skip-gram
    windows taken at once (HogBatch) move the context rows of the first window with
    two context words. Either is far beyond rounding, and named."""
    result = traced(c_trace, program, tmp_path, **options)
    divergence = result.divergence
    assert result.draws is None and divergence is not None and not result.agrees
    assert divergence.step == 1 and divergence.variable == variable
    assert abs(divergence.c_value - divergence.w2v_value) > 1e-4 * divergence.row_size
    assert f"{variable}[{divergence.row}, {divergence.column}]" in result.report()[-1]


@pytest.mark.slow
def test_w2v_float_order_is_rounding(c_trace, program: Path, tmp_path: Path) -> None:
    """With w2v's own float order (vectorised partial sums, fused multiply-adds), the
    weights are not C's to the bit but stay within rounding over 1,400 centre words."""
    result = traced(c_trace, program, tmp_path, c_order=False, sample=0.0, long_line=1_100)
    assert result.agrees
    assert 0.0 < c_trace.largest_difference(result.c_dumps, result.w2v_dumps) < c_trace.TOLERANCE


def test_comparison_names_the_first_value_beyond_rounding() -> None:
    """A value near 0 in a row of larger ones is compared at the row's size: its rounding
    passes; a real difference is named, with its step, variable, row and column."""
    compare = study_module("compare")
    c = np.zeros((3, 2, 4), dtype=np.float32)
    c[:, 0] = [0.5, -0.25, 1e-7, 0.125]
    w2v = c.copy()
    w2v[1, 0, 2] = 1.5e-7  # 50% of itself, 5e-8 of its row's size: rounding
    w2v[2, 1, 3] = 1e-3  # a row of zeros moved
    steps = np.array([0, 5, 10])
    divergence = compare.first_divergence(compare.Dumps(steps, {"syn0": c}), compare.Dumps(steps, {"syn0": w2v}))
    assert (divergence.step, divergence.variable, divergence.row, divergence.column) == (10, "syn0", 1, 3)
    assert (divergence.c_value, divergence.w2v_value) == (0.0, pytest.approx(1e-3))
