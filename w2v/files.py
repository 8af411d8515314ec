"""Writing outputs safely: never half-written, never replacing a device or a pipe."""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, Literal

from w2v.errors import W2VError

COMPRESSED = (".gz", ".bz2", ".xz", ".zst")


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL (``scheme://...``), which smart_open reads."""
    return "://" in path


def compression_of(path: str) -> str | None:
    """The compressed extension ``path`` ends with (one of ``COMPRESSED``), or None."""
    return next((e for e in COMPRESSED if path.endswith(e)), None)


def binary_name(path: str) -> bool:
    """A ``.bin`` name, perhaps under a compressed extension (``v.bin``, ``v.bin.gz``):
    the vectors formats' cue for binary."""
    extension = compression_of(path)
    return (path[: -len(extension)] if extension else path).endswith(".bin")


def open_file(path: str, mode: Literal["rb", "wb"], extension: str | None) -> BinaryIO:
    """A local file opened in binary ``mode`` (``"rb"``, ``"wb"``), compressed as
    ``extension`` says (one of ``COMPRESSED``; None: not compressed) through the
    standard library (zstd: ``backports.zstd`` before Python 3.14). smart_open is for
    URLs only: importing it costs 0.15-0.2 s and 26 MB."""
    if extension == ".gz":
        import gzip

        return gzip.open(path, mode)  # type: ignore[return-value]  # typeshed: not a BinaryIO, but one
    if extension == ".bz2":
        import bz2

        return bz2.open(path, mode)  # type: ignore[return-value]
    if extension == ".xz":
        import lzma

        return lzma.open(path, mode)  # type: ignore[return-value]
    if extension == ".zst":
        return zstd().open(path, mode)  # type: ignore[return-value]
    return open(path, mode)


def open_input(path: str) -> BinaryIO:
    """``path`` opened for binary reading: a URL (``scheme://``) through smart_open,
    a local file through ``open_file``, decompressed as its extension says."""
    if is_url(path):
        import smart_open  # only for URLs: it costs 0.15-0.2 s and 26 MB to import

        return smart_open.open(path, "rb")
    return open_file(path, "rb", compression_of(path))


def zstd():
    """The zstd module: the standard library's from Python 3.14, ``backports.zstd`` before."""
    if sys.version_info >= (3, 14):
        from compression import zstd
    else:
        from backports import zstd
    return zstd


def is_special(path: str) -> bool:
    """True for an existing output that is not a regular file (a device such as
    /dev/null, a FIFO): it is written in place, never replaced by a file."""
    return os.path.exists(path) and not os.path.isfile(path)


@contextmanager
def atomic_output(path: str, compress: bool = False) -> Iterator[BinaryIO]:
    """A binary file object for ``path``, written beside it and renamed over it when
    the block ends without an error (so an interrupted or failed write leaves no
    half-written file and any old file untouched). A device or FIFO is written in
    place, ``-`` is standard output, and with ``compress`` a .gz/.bz2/.xz/.zst name
    is compressed. OSError becomes a one-line W2VError naming ``path``."""
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    special = is_special(path)
    target = path if special else f"{path}.tmp{os.getpid()}"
    try:
        with open_file(target, "wb", compression_of(path) if compress else None) as out:
            yield out
        if not special:
            os.replace(target, path)
    except OSError as err:
        raise W2VError(f"cannot write {path}: {err.strerror}") from None
    finally:
        if not special and os.path.exists(target):
            os.unlink(target)


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``atomic_output``."""
    with atomic_output(path) as out:
        out.write(data)


def check_writable(path: str) -> None:
    """W2VError if ``path`` cannot be written (nothing is created), for failing before
    the work that would write it."""
    if not path:
        raise W2VError("empty output path ''")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise W2VError(f"output path is a folder: {path}")
    if not os.path.isdir(folder):
        raise W2VError(f"output folder does not exist: {folder}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise W2VError(f"output path is not writable: {path}")
