"""BLAS's threads while a training run scores held-out text: at most one (``w2v.blas``),
through threadpoolctl where it is installed, else bounded before numpy loads."""

import importlib
import os
import subprocess
import sys

import pytest

import w2v
from w2v.blas import SCORING_THREADS, THREAD_VARIABLES, bound_before_numpy

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


def started_with(code: str, env: dict[str, str]) -> str:
    """What ``code`` prints in a new Python without threadpoolctl, the variables of
    ``THREAD_VARIABLES`` unset but for ``env``."""
    hidden = "import sys; sys.modules['threadpoolctl'] = None\n"  # as if not installed
    clean = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", hidden + code], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_without_threadpoolctl_import_w2v_bounds_blas_before_numpy_loads():
    """Without threadpoolctl nothing bounds a loaded BLAS: ``import w2v`` sets the
    variables BLAS reads as it loads, where the user has not set them and numpy is
    not loaded yet (the command line and the library alike)."""
    show = f"import os; print(' '.join(os.environ.get(name, '-') for name in {THREAD_VARIABLES!r}))"
    assert started_with("import w2v\n" + show, {}) == "1 1 1"
    assert started_with("import w2v\n" + show, {"OPENBLAS_NUM_THREADS": "3"}) == "3 1 1"  # the user's stays
    assert started_with("import numpy, w2v\n" + show, {}) == "- - -"  # too late: numpy's threads are its own
    assert bound_before_numpy() == []  # here numpy is loaded
