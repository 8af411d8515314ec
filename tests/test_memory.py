"""Peak memory of a whole ``w2v train`` run on a corpus of millions of distinct words,
and of vectors files; the BLAS threads a command starts (each maps its own buffer)."""

import gzip
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO
from reference import fasttext_bin

from w2v.blas import THREAD_VARIABLES
from w2v.cli import cli
from w2v.cli.blas import BLAS_COMMANDS

resource = pytest.importorskip("resource")  # POSIX only

DISTINCT = 5_000_000
PRUNE_AT = 500_000
LIMIT_MB = 450

# Runs COMMAND... in a child and prints the child's peak RSS: RUSAGE_CHILDREN of
# this wrapper covers only that child, not the children of other tests.
PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(done.returncode)\n"
)


def write_distinct_corpus(path, distinct: int, frequent: int = 100, every: int = 4, per_line: int = 20) -> None:
    """``distinct`` words seen once each ('w' and 5 base-36 digits, shuffled), and
    after every ``every`` of them one of ``frequent`` words ('f' and 5 digits)
    that survive pruning and min-count; ``per_line`` words a line."""
    rng = np.random.default_rng(0)
    digits = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)

    def words(first: bytes, numbers: np.ndarray) -> np.ndarray:
        rows = np.empty((len(numbers), 7), dtype=np.uint8)  # 'x' 5 digits ' '
        rows[:, 0], rows[:, 6] = first[0], ord(" ")
        for column in range(5, 0, -1):
            rows[:, column] = digits[numbers % 36]
            numbers = numbers // 36
        return rows

    assert distinct <= 36**5
    mixed = np.zeros(distinct + distinct // every, dtype=bool)
    mixed[every :: every + 1] = True
    rows = np.empty((len(mixed), 7), dtype=np.uint8)
    rows[~mixed] = words(b"w", rng.permutation(distinct))
    rows[mixed] = words(b"f", rng.integers(0, frequent, mixed.sum()))
    rows[per_line - 1 :: per_line, 6] = ord("\n")
    rows[-1, 6] = ord("\n")
    rows.tofile(path)


def test_corpus_generator_is_what_it_says(tmp_path):
    path = tmp_path / "c.txt"
    write_distinct_corpus(path, 1000, frequent=3)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and [len(line.split()) for line in lines[:-1]] == [20] * 62 + [10]
    tokens = path.read_bytes().split()
    rare = [t for t in tokens if t.startswith(b"w")]
    assert len(tokens) == 1250 and len(rare) == len(set(rare)) == 1000
    assert {t for t in tokens if t.startswith(b"f")} == {b"f00000", b"f00001", b"f00002"}


@pytest.mark.slow
def test_peak_rss_of_training_on_five_million_distinct_words_is_bounded(tmp_path):
    """``w2v train --epochs 1 --prune-at 500000`` on 5,000,000 distinct words
    (6.25M tokens, 44 MB) peaks under LIMIT_MB = 450 MB of RSS.

    Measured on Linux, CPython 3.11, numpy 2.4, Numba: about 280 MB, of which
    about 165 MB is Python, numpy, Numba and the compiled kernels (a run on a tiny
    corpus), about 60-80 MB the 12 to 16 bytes per provisional id (live or pruned)
    that counting and encoding keep (a count, and a remap entry), and the rest the
    500,000-odd live words. The limit leaves
    about 50% for other platforms and versions. With the default --prune-at
    (10,000,000: nothing pruned here) the same run peaks at about 1 GB, so the
    limit fails if counting stops pruning.
    """
    corpus, output = tmp_path / "corpus.txt", tmp_path / "out.txt"
    write_distinct_corpus(corpus, DISTINCT)
    command = [sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "w2v", "train", str(corpus), "-o", str(output)]
    command += ["--epochs", "1", "--threads", "1", "--dim", "8", "--prune-at", str(PRUNE_AT), "-q"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    peak_mb = int(done.stdout.split()[-1]) / (1 << 20 if sys.platform == "darwin" else 1 << 10)  # bytes on macOS
    assert peak_mb < LIMIT_MB, f"peak RSS {peak_mb:.0f} MB"
    lines = output.read_text().splitlines()
    assert lines[0] == "100 8"  # the frequent words; the 5M words seen once are gone
    assert all(line.startswith("f") for line in lines[1:])


CLAIMED_DIM = 2_000_000
HELD_RECORDS = 12


@pytest.mark.slow
@pytest.mark.parametrize("binary", [False, True])
def test_compressed_vectors_take_the_memory_of_what_they_hold_not_of_their_header(tmp_path, binary):
    """A 50-100 KB ``.gz`` whose header promises 1,000 records of 2,000,000 values (8 GB)
    but which holds 12 (96 MB of float32) fails at its end with one line, its peak RSS
    under those 96 MB plus 200 MB. A compressed file's size after decompression is not
    known before it is read, so the promised matrix is reserved but never touched.

    Measured on Linux: about 200 MB (binary) and 230 MB (text); the interpreter and
    numpy take about 35 MB, a 16 MB read chunk and the text parser's copies the rest.
    """
    path = tmp_path / ("v.bin.gz" if binary else "v.txt.gz")
    zeros = bytes(4 * CLAIMED_DIM) if binary else b"0 " * CLAIMED_DIM
    with gzip.open(path, "wb") as out:
        out.write(b"1000 %d\n" % CLAIMED_DIM)
        for i in range(HELD_RECORDS):
            out.write(b"w%d %s\n" % (i, zeros))
    command = [sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "w2v", "similar", "-v", str(path), "w1"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"w2v: error: {path}: file ends after record {HELD_RECORDS}; the header promises 1,000"
    ]
    peak_mb = int(done.stdout.split()[-1]) / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    held_mb = HELD_RECORDS * CLAIMED_DIM * 4 / (1 << 20)
    assert peak_mb < held_mb + 200, f"peak RSS {peak_mb:.0f} MB"


# Runs ``python -m w2v ARGS`` (runpy, as ``-m`` does) and prints, as it exits, its
# threads and OPENBLAS_NUM_THREADS, on stderr's last line.
THREADS_AT_EXIT = (
    "import atexit, os, runpy, sys\n"
    "setting = lambda: os.environ.get('OPENBLAS_NUM_THREADS', '-')\n"
    "atexit.register(lambda: print(len(os.listdir('/proc/self/task')), setting(), file=sys.stderr))\n"
    "runpy.run_module('w2v', run_name='__main__', alter_sys=True)\n"
)
COUNTS_THREADS = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc (Linux)")


def threads_at_exit(args: list[str], **env) -> tuple[int, str]:
    """The threads of ``python -m w2v ARGS`` at its end, and its OPENBLAS_NUM_THREADS
    ('-' for unset); the BLAS variables of this process are left out, ``env`` added."""
    inherited = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    command = [sys.executable, "-c", THREADS_AT_EXIT, *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env={**inherited, **env}, timeout=300)
    assert done.returncode == 0, done.stderr
    threads, setting = done.stderr.splitlines()[-1].split()
    return int(threads), setting


@pytest.mark.slow
@COUNTS_THREADS
@pytest.mark.parametrize("command", ["train", "vocab"])
def test_a_command_without_matrix_products_starts_no_blas_threads(tmp_path, tiny_corpus, command):
    """OpenBLAS starts a thread per core as numpy loads it, and so does SciPy's, which
    Numba imports with its first kernel: under ``ulimit -v 400000`` ``w2v train`` hung
    at 100% CPU in that start-up, retrying a failed mapping of a thread's buffer. A
    command whose work is not BLAS's starts none (OPENBLAS_NUM_THREADS=1): the main
    thread is the only one left at its end. Was 3 threads, the variable unset (2 cores)."""
    output = tmp_path / ("v.bin" if command == "train" else "vocab.txt")
    args = [command, str(tiny_corpus), "-o", str(output), "-q"]
    assert threads_at_exit(args) == (1, "1")


@pytest.mark.slow
@COUNTS_THREADS
def test_a_blas_thread_count_the_user_set_is_kept(tmp_path, tiny_corpus):
    args = ["train", str(tiny_corpus), "-o", str(tmp_path / "v.bin"), "-q"]
    assert threads_at_exit(args, OPENBLAS_NUM_THREADS="2")[1] == "2"


@pytest.mark.slow
@COUNTS_THREADS
def test_a_command_of_matrix_products_keeps_the_blas_threads(tmp_path):
    """``w2v similar``: a product of the vocabulary's matrix, which BLAS's threads share."""
    vectors = tmp_path / "v.txt"
    vectors.write_text("2 2\nking 1 0\nqueen 0.8 0.6\n")
    assert threads_at_exit(["similar", "king", "-v", str(vectors)])[1] == "-"


SCIPY_BLAS_AT_EXIT = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print(type(sys.modules.get('scipy.linalg.cython_blas', 0)).__name__, file=sys.stderr))\n"
    "runpy.run_module('w2v', run_name='__main__', alter_sys=True)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["train", "vocab"])
def test_a_command_that_trains_or_counts_loads_no_scipy_blas(tmp_path, tiny_corpus, command):
    """Numba loads SciPy's BLAS with its first kernel where SciPy is installed, and that
    OpenBLAS maps a 32 MB buffer as it loads, retrying a failed mapping forever: under
    ``ulimit -v 350000`` ``w2v train`` hung even on one BLAS thread. w2v's kernels call
    no BLAS, so the commands that train or count keep Numba from loading it (the
    module is None: marked missing). Was ``module`` (loaded) where SciPy is installed."""
    pytest.importorskip("scipy")
    output = tmp_path / ("v.bin" if command == "train" else "vocab.txt")
    command_line = [sys.executable, "-c", SCIPY_BLAS_AT_EXIT, command, str(tiny_corpus), "-o", str(output), "-q"]
    done = subprocess.run(command_line, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "NoneType"


def test_the_commands_that_keep_the_blas_threads_are_commands():
    assert BLAS_COMMANDS.issubset(cli.commands)


LONG_WORD = 1_000_000


@pytest.mark.slow
def test_a_fasttext_model_of_a_million_byte_word_is_queried_in_memory_linear_in_it(tmp_path):
    """``w2v similar alpha -v`` on a 1 MB fastText ``.bin`` whose dictionary holds a word
    of 1,000,000 bytes (4 million n-grams) answers with its peak RSS under 300 MB.

    Measured on Linux: about 130 MB in 2 s, of which 45 MB is the interpreter and
    numpy (a model of four short words); each word's n-grams were hashed padded to
    the longest word, one numpy pass per byte, and summed one rank of n-gram at a
    time: 1.5 GB and 90 to 113 s.
    """
    letters = np.random.default_rng(0).integers(ord("a"), ord("z") + 1, LONG_WORD, dtype=np.uint8)
    path = tmp_path / "lw1m.bin"
    path.write_bytes(fasttext_bin([b"alpha", b"beta", b"gamma", letters.tobytes()], dim=4, bucket=1000))
    command = [sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "w2v", "similar", "alpha", "-v", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    *answers, peak = done.stdout.split("\n")[:-1]
    assert [line.split("\t")[0][:5] for line in answers] == ["gamma", letters[:5].tobytes().decode(), "beta"]
    peak_mb = int(peak) / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"
