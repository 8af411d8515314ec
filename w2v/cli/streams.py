"""A command's standard input and output: every write to standard output is whole and
checked, and a stream the process was started without is one line when used.

Python's own standard output loses what a write leaves unwritten when it is unbuffered
(``PYTHONUNBUFFERED``, ``python -u``): a write cut short by a file size limit or a full
disk returns its count, which nothing reads, and the command exits 0. Its failures are
OSError, a traceback. A stream closed when the process started (``>&-``, ``<&-``) is
None, which every use trips on. ``use_checked_streams`` replaces them for a command:
a failed write is ``OutputFailed``, a closed stream's use a W2VError, one line each; a
reader gone (BrokenPipeError) is left to ``app.main``, which ends quietly.
"""

import io
import os
import sys

from w2v.errors import W2VError


class OutputFailed(W2VError):
    """Standard output could not be written: a full disk, a file size limit, or closed."""


class WholeWrites(io.RawIOBase):
    """The descriptor ``fd`` of standard output, written whole: after a short write (a
    file size limit or a full disk reached) the rest is written again, which then fails
    with the reason. A failure other than BrokenPipeError is ``OutputFailed``."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data) -> int:
        """Write all of ``data`` (bytes-like); its length in bytes."""
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            try:
                done += os.write(self._fd, view[done:])
            except BrokenPipeError:
                raise
            except OSError as err:
                raise OutputFailed(f"cannot write standard output: {err.strerror or err}") from None
        return done


CLOSED_INPUT = "cannot read standard input: it is closed"


class MissingInput(io.RawIOBase):
    """Standard input when the process was started without it (``<&-``): reading it, or
    taking its descriptor (which a corpus ``-`` is read through), is a W2VError; it is
    no terminal."""

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        raise W2VError(CLOSED_INPUT)

    def readinto(self, buffer) -> int:
        raise W2VError(CLOSED_INPUT)


class MissingOutput(io.RawIOBase):
    """Standard output when the process was started without it (``>&-``): writing it is
    ``OutputFailed``; it has no descriptor (``fileno`` raises io.UnsupportedOperation,
    which what probes it, such as colorama, expects)."""

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        raise OutputFailed("cannot write standard output: it is closed")


def use_checked_streams() -> None:
    """Make ``sys.stdin`` and ``sys.stdout`` a command's (above). The process's own
    standard output is written through ``WholeWrites``, buffered (click flushes each
    line it prints, ``atomic_output`` what it writes to ``-``), its text passed on to
    the buffer at once so that it keeps its place among the bytes written to
    ``sys.stdout.buffer``. A stream the process was started without is a
    ``MissingInput`` or ``MissingOutput`` (unbuffered: a failed write leaves nothing for
    the flush at exit). A standard output already replaced (a test's capture, an
    earlier call) is left as it is."""
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(MissingInput())
    if sys.stdout is None:
        sys.stdout = io.TextIOWrapper(MissingOutput(), write_through=True)
    elif sys.stdout is sys.__stdout__ and isinstance(sys.stdout, io.TextIOWrapper):
        own = sys.stdout
        own.flush()
        buffered = io.BufferedWriter(WholeWrites(own.fileno()))
        sys.stdout = io.TextIOWrapper(
            buffered, encoding=own.encoding, errors=own.errors, line_buffering=own.line_buffering, write_through=True
        )
