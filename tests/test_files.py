"""Atomic outputs (``w2v.files.atomic_output``): temporary files no one can predict or plant a
link at, the permissions of the finished file, and an output path that is a symlink."""

import itertools
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

from w2v.cli import main
from w2v.errors import W2VError
from w2v.files import atomic_output, check_writable, write_atomic
from w2v.vectors.wordvectors import Vectors

FAST = ["--epochs", "1", "--dim", "8", "--min-count", "1", "--threads", "1", "-q"]


def current_umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def ws(tmp_path, tiny_corpus, monkeypatch) -> Path:
    """A working folder with a corpus, a vectors file and a file a planted link leads to."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_bytes(tiny_corpus.read_bytes())
    Vectors(["a", "b", "c"], np.arange(9, dtype=np.float32).reshape(3, 3)).save(tmp_path / "vecs.bin")
    (tmp_path / "victim").write_bytes(b"precious\n")
    return tmp_path


def plant_links(folder: Path, names: list[str]) -> list[Path]:
    """Links to ``victim`` at the names the old scheme used for ``names``' temporary
    files (``NAME.tmp<pid>``, for this process' pid and the next 100), and links at the
    first two names ``tempfile`` will try (made predictable here): one to ``victim``, one
    dangling (to ``created``, which must never come to exist)."""
    planted = []
    for name in names:
        for pid in range(os.getpid(), os.getpid() + 100):
            planted.append(folder / f"{name}.tmp{pid}")
            planted[-1].symlink_to(folder / "victim")
        planted += [folder / f".{name}.planted1.tmp", folder / f".{name}.planted2.tmp"]
        planted[-2].symlink_to(folder / "victim")
        planted[-1].symlink_to(folder / "created")
    return planted


@pytest.mark.parametrize(
    ("argv", "outputs"),
    [
        (["convert", "vecs.bin", "out.bin", "-q"], ["out.bin"]),
        (["convert", "vecs.bin", "out.npy", "-q"], ["out.npy", "out.vocab.txt"]),
        (["vocab", "corpus.txt", "-o", "vocab.txt"], ["vocab.txt"]),
        (
            ["train", "corpus.txt", "-o", "out.txt.gz", "--save-vocab", "vocab.txt", "--save-model", "m.npz", *FAST],
            ["out.txt.gz", "vocab.txt", "m.npz"],
        ),
    ],
    ids=["convert", "convert npy", "vocab", "train"],
)
def test_links_planted_at_temporary_names_are_never_written_through(ws, monkeypatch, capsys, argv, outputs):
    planted = plant_links(ws, outputs)
    random_names = tempfile._get_candidate_names
    # every temporary file or folder made tries the planted names first, then random ones
    monkeypatch.setattr(
        tempfile, "_get_candidate_names", lambda: itertools.chain(["planted1", "planted2"], random_names())
    )
    for output in outputs:
        (ws / output).write_bytes(b"old\n")
    main(argv)
    assert (ws / "victim").read_bytes() == b"precious\n"
    assert not (ws / "created").exists()
    assert all(link.is_symlink() for link in planted)
    for output in outputs:
        assert not (ws / output).is_symlink() and (ws / output).read_bytes() != b"old\n"
    leftovers = {p.name for p in ws.iterdir()} - {p.name for p in planted} - set(outputs)
    assert leftovers == {"corpus.txt", "vecs.bin", "victim"}


def test_the_temporary_file_is_hidden_beside_the_output(tmp_path):
    with atomic_output(str(tmp_path / "out.bin")) as out:
        out.write(b"new\n")
        (temporary,) = tmp_path.iterdir()
        assert re.fullmatch(r"\.out\.bin\.\w{6,}\.tmp", temporary.name)
        assert stat.S_ISREG(os.lstat(temporary).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_new_file_gets_the_umask_permissions(tmp_path):
    write_atomic(str(tmp_path / "new.txt"), b"x\n")
    assert mode_of(tmp_path / "new.txt") == 0o666 & ~current_umask()


@pytest.mark.slow
@pytest.mark.parametrize("umask", [0o077, 0o027, 0o002])
def test_the_umask_is_the_process_umask(tmp_path, umask):
    """The umask is read once, at import: a process started with another one uses it."""
    code = "import sys; from w2v.files import write_atomic; write_atomic(sys.argv[1], b'x')"
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "new.txt")],
        check=True,
        preexec_fn=lambda: os.umask(umask),
        cwd=REPO,
    )
    assert mode_of(tmp_path / "new.txt") == 0o666 & ~umask


@pytest.mark.parametrize("mode", [0o600, 0o664, 0o755, 0o444])
def test_a_replaced_file_keeps_its_permissions(tmp_path, mode):
    path = tmp_path / "old.txt"
    path.write_bytes(b"old\n")
    path.chmod(mode)
    write_atomic(str(path), b"new\n")
    assert path.read_bytes() == b"new\n" and mode_of(path) == mode


def test_an_output_that_is_a_symlink_replaces_its_target(tmp_path):
    """``-o link``: the file the link leads to (through a chain of relative links) is
    replaced atomically, in its own folder; the links stay links."""
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "vectors.bin"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    (tmp_path / "real" / "hop").symlink_to("vectors.bin")
    (tmp_path / "link.bin").symlink_to("real/hop")
    write_atomic(str(tmp_path / "link.bin"), b"new\n")
    assert (tmp_path / "link.bin").is_symlink() and (tmp_path / "real" / "hop").is_symlink()
    assert target.read_bytes() == b"new\n" and mode_of(target) == 0o640
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["hop", "vectors.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bin", "real"]


def test_a_dangling_symlink_output_creates_its_target(tmp_path):
    (tmp_path / "link.txt").symlink_to("made.txt")
    write_atomic(str(tmp_path / "link.txt"), b"new\n")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "made.txt").read_bytes() == b"new\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a link to another user needs root")
def test_a_symlink_of_another_user_in_a_shared_folder_is_refused(tmp_path):
    """As Linux's protected_symlinks: in a sticky world-writable folder (/tmp), a link owned
    by neither us nor the folder's owner is not followed."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (tmp_path / "victim").write_bytes(b"precious\n")
    link = shared / "out.bin"
    link.symlink_to(tmp_path / "victim")
    os.lchown(link, 4242, 4242)
    for write in (lambda: write_atomic(str(link), b"new\n"), lambda: check_writable(str(link))):
        with pytest.raises(W2VError, match=r"not writing through .*out\.bin: a symlink of another user"):
            write()
    assert (tmp_path / "victim").read_bytes() == b"precious\n" and [p.name for p in shared.iterdir()] == ["out.bin"]
    os.lchown(link, os.geteuid(), -1)  # our own link there is followed
    write_atomic(str(link), b"new\n")
    assert (tmp_path / "victim").read_bytes() == b"new\n"


def aged(path: Path, seconds: float) -> Path:
    """``path`` with its modification time ``seconds`` before now (negative: after), the link itself for a link."""
    moment = time.time() - seconds
    os.utime(path, (moment, moment), follow_symlinks=False)
    return path


def written(path: Path, seconds: float) -> Path:
    """A file at ``path`` last modified ``seconds`` before now (``aged``)."""
    path.write_bytes(b"half a file\n")
    return aged(path, seconds)


HOUR = 3600.0


def test_a_write_removes_the_temporary_files_killed_writes_of_it_left(tmp_path):
    """A write killed by SIGKILL leaves its ``.NAME.XXXXXXXX.tmp``; the next write of NAME
    removes those older than its own process, and nothing else: not another output's, not
    a name of another shape, not a link or a folder, not one modified since this process
    started (another run's write under way)."""
    for name in (".out.txt.a1b2_c3d.tmp", ".out.txt.zzzzzzzz.tmp"):
        written(tmp_path / name, HOUR)
    other_shapes = (".out.txt.abc.tmp", ".out.txt.ABCDEFGH.tmp", ".out.txt.abcdefghi.tmp", ".other.txt.abcdefgh.tmp",
                    "out.txt.abcdefgh.tmp", ".out.txt.abcdefgh.tmp.gz")  # fmt: skip
    kept = [written(tmp_path / name, HOUR) for name in other_shapes]
    kept.append(written(tmp_path / ".out.txt.underway.tmp", -HOUR))  # modified after this process started
    (tmp_path / ".out.txt.folder00.tmp").mkdir()
    (tmp_path / ".out.txt.linklink.tmp").symlink_to(tmp_path / "out.txt")
    kept += [aged(tmp_path / ".out.txt.folder00.tmp", HOUR), aged(tmp_path / ".out.txt.linklink.tmp", HOUR)]
    write_atomic(str(tmp_path / "out.txt"), b"new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.txt", *(p.name for p in kept)])
    assert (tmp_path / "out.txt").read_bytes() == b"new\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_stale_temporary_file_of_another_user_stays(tmp_path):
    theirs = written(tmp_path / ".out.txt.abcdefgh.tmp", HOUR)
    os.chown(theirs, 4242, 4242)
    write_atomic(str(tmp_path / "out.txt"), b"new\n")
    assert theirs.exists()
