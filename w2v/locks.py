"""Folders one run at a time: a run holds its checkpoint folder with an exclusive
``flock`` (``checkpoint_lock``), so that two runs never write one checkpoint."""

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from w2v.errors import ConfigError

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]


@contextmanager
def checkpoint_lock(folder: str) -> Iterator[None]:
    """Hold the checkpoint folder ``folder`` for the block, so that two runs never
    write one checkpoint: an exclusive ``flock`` on its file ``LOCK_FILE``, which
    holds the process id, removed as the block ends. ConfigError at once if another
    run holds it. The kernel drops the lock with the process however it ends (a
    SIGKILL leaves the file, unlocked). Where there is no ``flock`` (Windows),
    nothing is locked."""
    if fcntl is None:
        yield
        return
    path = os.path.join(folder, LOCK_FILE)
    fd = lock_file(path, folder)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with suppress(FileNotFoundError):  # the folder removed meanwhile
            os.unlink(path)  # before the lock goes: a run that opens it later makes a new one
        os.close(fd)


LOCK_FILE = ".lock"


def lock_file(path: str, folder: str) -> int:
    """A descriptor of the file ``path``, created if need be, locked (``flock``) by this
    process; ConfigError if another holds it. A lock taken on a file that its
    holder removed meanwhile (its run ended) locks nothing: then it starts over."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as err:  # a link (ELOOP: O_NOFOLLOW) or a folder where the lock file goes
            what = "a symbolic link" if os.path.islink(path) else "a folder" if os.path.isdir(path) else None
            reason = f"{path} is {what}, not w2v's lock file: remove it" if what else err.strerror
            raise ConfigError(f"cannot lock checkpoint folder {folder}: {reason}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 20, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise ConfigError(f"checkpoint folder {folder} is in use by another run (pid {holder})") from None
        except BaseException:
            os.close(fd)
            raise
        if names_open_file(path, fd):
            return fd
        os.close(fd)


def names_open_file(path: str, fd: int) -> bool:
    """Whether ``path`` names the file open as ``fd``."""
    try:
        found = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (found.st_dev, found.st_ino) == (opened.st_dev, opened.st_ino)
