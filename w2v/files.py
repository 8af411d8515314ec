"""Writing outputs safely: never half-written, never replacing a device or a pipe."""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from w2v.errors import W2VError

COMPRESSED = (".gz", ".bz2", ".xz", ".zst")


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
    extension = next((e for e in COMPRESSED if path.endswith(e)), None) if compress else None
    try:
        if extension:
            import smart_open  # only for compressed outputs

            handle = smart_open.open(target, "wb", compression=extension)
        else:
            handle = open(target, "wb")  # noqa: SIM115 - closed by the with below
        with handle as out:
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
