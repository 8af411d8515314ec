"""Shared fixtures: paths to the repository and the shared data, small corpora, the CLI runners
(``cli``: a process, ``run_w2v``: in this process)."""

import io
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
WIKI_6MB = DATA / "wiki-en-6mb.txt"

# a tiny corpus: 12 distinct words, enough repetitions for min_count 5
TINY_LINES = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat and a dog met on the mat",
    "the log and the mat were red",
    "a red dog and a red cat sat",
]


# The progress lines of ``progress.LineBar`` (stderr is not a terminal in tests), and w2v train's line an epoch
PROGRESS_LINE = re.compile(
    r"w2v: (reading|training|writing|k-means|k-means\+\+ seeding|phrases, pass \d+/\d+|epoch \d+): "
)


def ctrl_c_by_default() -> None:
    """In a child before it starts (``preexec_fn``): SIGINT to its default, whatever
    this process inherited. A test run started as a background job (``&`` in a
    script) has SIGINT ignored, Python keeps it so, and so would its children."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def without_progress(err: str) -> str:
    """``err`` without its progress lines: the messages a test is about."""
    return "".join(line for line in err.splitlines(keepends=True) if not PROGRESS_LINE.match(line))


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels(tmp_path_factory) -> None:
    """Numba's cache holds the counting and training kernels before the first test: on
    a clean checkout the first run compiles them and says so on stderr, with ``-q``
    too, and a test of a command's exact stderr that a worker happens to run first
    would read that note. Tests of the compiling itself use caches of their own."""
    import w2v

    corpus = tmp_path_factory.mktemp("warm") / "warm.txt"
    corpus.write_text("\n".join(TINY_LINES * 20) + "\n")
    w2v.train(str(corpus), dim=4, epochs=1, threads=1, min_count=1)


@pytest.fixture(scope="session")
def wiki6() -> Path:
    """The 6 MB Wikipedia slice; the test is skipped where the shared data is absent."""
    if not WIKI_6MB.is_file():
        pytest.skip(f"shared data not found: {WIKI_6MB}")
    return WIKI_6MB


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory) -> Path:
    """A small text file (100 lines, ~700 tokens) that trains in well under a second."""
    path = tmp_path_factory.mktemp("corpus") / "tiny.txt"
    path.write_text("\n".join(TINY_LINES * 20) + "\n")
    return path


class Stdin(io.TextIOWrapper):
    """Standard input holding ``data`` (text, written as UTF-8, or bytes) for a command
    run in-process: w2v reads the bytes under it (``.buffer``), as a process's stdin;
    ``terminal``: it is typed on a terminal (``isatty``)."""

    def __init__(self, data: str | bytes, terminal: bool = False):
        super().__init__(io.BytesIO(data.encode() if isinstance(data, str) else data), encoding="utf-8")
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


def run_cli(*args, env=None, input=None, cwd=None) -> subprocess.CompletedProcess:
    """Run ``python -m w2v ARGS`` and capture its output (bytes)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "w2v", *map(str, args)],
        capture_output=True,
        env=full_env,
        input=input,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def cli():
    """The CLI runner: ``cli("train", corpus, "-o", out, ...)`` -> CompletedProcess."""
    return run_cli


@pytest.fixture
def run_w2v(capsys, monkeypatch):
    """The in-process CLI runner: ``run_w2v("train", corpus, "-o", out, ...)`` runs
    ``w2v ARGS`` (each made a str) through ``main`` in this process and returns
    (exit code, stdout, stderr), the output it printed since the last call;
    ``stdin``: its standard input (str or bytes), ``cwd``: the folder it runs in
    (for the rest of the test)."""
    from w2v.cli import main

    def run(*args, stdin: str | bytes | None = None, cwd: Path | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", Stdin(stdin))
        if cwd is not None:
            monkeypatch.chdir(cwd)
        try:
            main([str(arg) for arg in args])
            code = 0
        except SystemExit as exit_:
            code = exit_.code
        out, err = capsys.readouterr()
        return code, out, err

    return run


def written_through_fifo(folder: Path, write) -> bytes:
    """Call ``write(path)`` on a FIFO made in ``folder`` while another thread reads
    it; return what was read, after checking the FIFO was written in place (not
    replaced by a file) and nothing else was left in ``folder``."""
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write(str(fifo))
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in folder.iterdir()] == ["fifo"]
    return received[0]
