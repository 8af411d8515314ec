"""BLAS's threads while a training run scores held-out text: at most one (``w2v.blas``),
through threadpoolctl where it is installed; a program's own left as they are."""

import importlib
import os
import subprocess
import sys

import pytest

import w2v
from w2v.blas import SCORING_THREADS, THREAD_VARIABLES

SENTENCES = [["a", "b", "c", "d", "a", "c"], ["b", "d", "e"], ["c", "a", "b", "e", "d"]] * 30


def test_a_training_run_scores_with_one_blas_thread(monkeypatch, tmp_path):
    """BLAS's threads that wait for one another spin, on a busy machine for longer than
    the scoring itself: the run's scoring uses ``SCORING_THREADS``, the rest of the
    process keeps what it had."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    module = importlib.import_module("w2v.train")  # ``w2v.train`` is the function

    def blas_threads() -> dict[str, int]:
        """Each loaded BLAS library's threads (a run may load another: Numba's, SciPy's)."""
        pools = threadpoolctl.threadpool_info()
        return {pool["filepath"]: pool["num_threads"] for pool in pools if pool["user_api"] == "blas"}

    scoring, seen = module.score_plan, []

    def recorded(*args, **kwargs):
        seen.append(blas_threads())
        return scoring(*args, **kwargs)

    monkeypatch.setattr(module, "score_plan", recorded)
    before = blas_threads()
    held = tmp_path / "held.txt"
    held.write_text("a c b\nd e a\n")
    w2v.train(SENTENCES, heldout=str(held), negative=3, dim=6, window=2, min_count=1, epochs=2, threads=2)
    assert before and len(seen) == 2 and all(set(threads.values()) == {SCORING_THREADS} for threads in seen)
    after = blas_threads()
    assert {library: after[library] for library in before} == before


@pytest.mark.slow
def test_import_w2v_leaves_a_programs_blas_threads_as_they_are():
    """The library bounds BLAS only while a run scores (``limited``): ``import w2v``
    sets none of the variables a BLAS library reads as it loads, so that a program's
    own matrix products keep their threads; the command line sets them for the
    commands that make none (``w2v.cli.blas``, tests/test_memory.py)."""
    clean = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    show = f"import w2v, os; print(' '.join(os.environ.get(name, '-') for name in {THREAD_VARIABLES!r}))"
    done = subprocess.run([sys.executable, "-c", show], env=clean, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["-"] * len(THREAD_VARIABLES)
