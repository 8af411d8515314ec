"""The kernels compile once: after a first training run, later runs with another
vector size, model, loss, thread count or subwords, ``w2v score`` and ``--heldout`` load
everything from Numba's cache. Each run is a process of its own, sharing one fresh
cache folder, and counts Numba's compile events (a load from the cache sends none)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from compiles import COUNT_COMPILES

import w2v

pytestmark = pytest.mark.slow  # the test runs ``python -m w2v`` with an empty cache

CHILD = (
    COUNT_COMPILES
    + """
from w2v.cli import main

try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as out:
        json.dump(compiled, out)
"""
)


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    """A corpus of 30,000 Zipf-distributed words and a held-out text of 3,000."""
    folder = tmp_path_factory.mktemp("compile-once")
    rng = np.random.default_rng(4)
    for name, tokens in (("corpus.txt", 30_000), ("held.txt", 3_000)):
        ids = np.minimum(rng.zipf(1.3, tokens), 400)
        lines = [" ".join(f"w{i}" for i in ids[at : at + 20]) for at in range(0, tokens, 20)]
        (folder / name).write_text("\n".join(lines) + "\n")
    return folder


def compiles(folder, cache, args: list[str]) -> list[str]:
    """Run ``w2v ARGS`` in a process of its own with Numba's cache in ``cache``: the
    functions Numba compiled (outermost and nested). With ``-q`` it prints nothing on
    stderr but the note on compiling, as it compiles."""
    record = folder / "compiled.json"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(Path(w2v.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(record), *args], cwd=folder, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert "-q" not in args or all(line.startswith(b"w2v: compiling the ") for line in done.stderr.splitlines())
    return json.loads(record.read_text())


def test_a_first_run_compiles_everything_later_runs_use(texts, tmp_path):
    cache, train = tmp_path / "numba-cache", ["train", "corpus.txt", "--min-count", "1", "--epochs", "1", "-q"]
    first = compiles(
        texts, cache, [*train, "--dim", "16", "--hs", "--negative", "3", "-o", "a.bin", "--save-model", "m.npz"]
    )
    assert {"train_batch", "path_log_probs", "context_vectors"} <= set(first)  # the count would see a compile
    later = {
        "another dim, CBOW, HS, 2 threads": [*train, "--dim", "37", "--model", "cbow", "--hs", "--threads", "2"],
        "NCE and HS, --cbow-sum": [*train, "--dim", "8", "--model", "cbow", "--cbow-sum", "--hs", "--nce", "3"],
        "sampled softmax": [*train, "--dim", "300", "--sampled-softmax", "4", "--threads", "2"],
        "full softmax, balanced tree": [*train, "--dim", "5", "--softmax", "--hs", "--tree", "balanced"],
        "--heldout": [*train, "--dim", "20", "--hs", "--negative", "2", "--heldout", "held.txt"],
        "--heldout, CBOW": [*train, "--dim", "20", "--model", "cbow", "--heldout", "held.txt"],
        "subwords, CBOW, heldout": [*train, "--subwords", "--bucket", "99", "--model", "cbow", "--heldout", "held.txt"],
        "subwords, skip-gram, HS": [*train, "--dim", "24", "--subwords", "--bucket", "500", "--hs", "--threads", "2"],
        "continued, 1 thread": [*train, "--init-model", "m.npz", "--threads", "1"],
        "score": ["score", "m.npz", "held.txt"],
    }
    for what, args in later.items():
        out = ["-o", "later.bin"] if args[0] == "train" else []
        assert compiles(texts, cache, [*args, *out]) == [], what
