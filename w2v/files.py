"""Writing outputs safely: never half-written, never replacing a device or a pipe,
never writing through a link planted beside the output; opening inputs, local files
and URLs, whose read errors are all OSError; the byte-order mark a text input may
start with, which no reader takes for text (``without_bom``, ``skip_bom``)."""

import io
import math
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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


def open_file(file: str | BinaryIO, mode: Literal["rb", "wb"], extension: str | None) -> BinaryIO:
    """A local file (a path, or a binary file object already open, returned as it is
    when not compressed) in binary ``mode`` (``"rb"``, ``"wb"``), compressed as
    ``extension`` says (one of ``COMPRESSED``; None: not compressed) through the
    standard library (zstd: ``backports.zstd`` before Python 3.14). smart_open is for
    URLs only: importing it costs 0.15-0.2 s and 26 MB."""
    if extension == ".gz":
        import gzip

        return gzip.open(file, mode)  # type: ignore[return-value]  # typeshed: not a BinaryIO, but one
    if extension == ".bz2":
        import bz2

        return bz2.open(file, mode)  # type: ignore[return-value]
    if extension == ".xz":
        import lzma

        return lzma.open(file, mode)  # type: ignore[return-value]
    if extension == ".zst":
        return zstd().open(file, mode)  # type: ignore[return-value]
    return open(file, mode) if isinstance(file, str) else file


# URL schemes and the extra of w2v (pyproject.toml) that installs smart_open's support for them
URL_EXTRAS = {
    **dict.fromkeys(("http", "https", "webhdfs"), "http"),
    **dict.fromkeys(("s3", "s3a", "s3n", "s3u"), "s3"),
    "gs": "gcs",
    "azure": "azure",
    **dict.fromkeys(("ssh", "scp", "sftp"), "ssh"),
}


UTF8_BOM = b"\xef\xbb\xbf"  # U+FEFF as UTF-8: Windows editors (Notepad) start UTF-8 text with it


def without_bom(first: bytes) -> bytes:
    """``first``, the first bytes of a text file or stream, without the UTF-8 byte-order
    mark it may start with: it marks the encoding and is no part of the first word or line."""
    return first.removeprefix(UTF8_BOM)


def skip_bom(stream):
    """``stream``, a binary file object at the start of a text file that can ``peek``
    (``open``'s, ``open_input``'s, standard input's), moved past the UTF-8 byte-order
    mark it may start with (``without_bom``); returned."""
    if stream.peek(len(UTF8_BOM)).startswith(UTF8_BOM):
        stream.read(len(UTF8_BOM))
    return stream


def open_input(path: str) -> BinaryIO:
    """``path`` opened for binary reading: a URL (``scheme://``) through smart_open
    (``open_url``), a local file through ``open_file``, decompressed as its extension says."""
    if is_url(path):
        return open_url(path)
    return open_file(path, "rb", compression_of(path))


URL_TIMEOUT_VARIABLE = "W2V_URL_TIMEOUT"
DEFAULT_URL_TIMEOUT = 60.0  # seconds: a server silent that long has stalled, not slowed
MAX_URL_TIMEOUT = 86_400.0  # a day: longer is no limit, and past 2^63 ns (292 years) the socket's timer overflows
TIMED_SCHEMES = ("http", "https")  # smart_open's transports that wait forever unless given a timeout


def url_timeout() -> float:
    """The seconds an ``http://`` or ``https://`` read waits for its server (to connect,
    and for each next byte): ``$W2V_URL_TIMEOUT``, ``DEFAULT_URL_TIMEOUT`` where it is
    unset or empty. W2VError for a value that is not a number of seconds above 0 and at
    most ``MAX_URL_TIMEOUT``."""
    text = os.environ.get(URL_TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_URL_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_URL_TIMEOUT:
        raise W2VError(
            f"{URL_TIMEOUT_VARIABLE}={text!r}: give the seconds a URL's server may stay silent, "
            f"above 0 and at most {MAX_URL_TIMEOUT:,.0f}"
        )
    return seconds


def open_url(url: str) -> BinaryIO:
    """``url`` opened for binary reading through smart_open, decompressed as its name
    says, as a stream whose errors are all OSError (``URLReader``); an ``http(s)://`` one
    waits ``url_timeout()`` seconds at most for its server. A URL whose transport
    smart_open lacks the packages for is a W2VError naming the extra to install
    (``pip install 'w2v[s3]'``)."""
    import smart_open  # only for URLs: it costs 0.15-0.2 s and 26 MB to import

    timeout = url_timeout() if url.split("://", 1)[0].lower() in TIMED_SCHEMES else None
    try:
        stream = smart_open.open(url, "rb", transport_params={} if timeout is None else {"timeout": timeout})
    except ImportError as err:  # smart_open's message: five lines, naming its own extra
        raise missing_transport(url, err) from None
    except OSError as err:  # requests' errors (a refused connection, a 404) are OSErrors
        if timeout is not None and timed_out(err):
            raise OSError(transport_error_text(err, timeout)) from None
        raise
    return io.BufferedReader(URLReader(stream, timeout))


class URLReader(io.RawIOBase):
    """A stream smart_open opened whose read errors are all OSError, which every reader
    catches as it catches a disk's (``sources.stream_errors``): its transports raise
    their own types (``transport_errors``), such as urllib3's ProtocolError for a body
    cut short (a short ``Content-Length``, a chunked reply cut, a closed connection) and
    ReadTimeoutError. ``timeout``: the seconds a read waits (``url_timeout``), None
    where not ours to set."""

    def __init__(self, stream: BinaryIO, timeout: float | None):
        super().__init__()
        self._stream, self._timeout = stream, timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """Read up to ``len(buffer)`` bytes into ``buffer``; how many (0 at the end)."""
        try:
            data = self._stream.read(len(buffer))
        except transport_errors() as err:
            raise OSError(transport_error_text(err, self._timeout)) from None
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()


TRANSPORT_ERRORS = {  # module: the base of its errors, for smart_open's transports and what they read through
    "http.client": "HTTPException",
    "urllib3.exceptions": "HTTPError",  # under requests (http, https, webhdfs) and boto3 (s3)
    "botocore.exceptions": "BotoCoreError",
    "google.api_core.exceptions": "GoogleAPIError",
    "azure.core.exceptions": "AzureError",
    "paramiko.ssh_exception": "SSHException",
}


def transport_errors() -> tuple[type[Exception], ...]:
    """The base types of the errors a URL's transport raises while reading, of the
    modules loaded (a transport has loaded its own by then): called in ``except``
    clauses, so only once something is raised. Not ``Exception``: the SIGTERM handler's
    exception must go through."""
    loaded = (sys.modules.get(module) for module in TRANSPORT_ERRORS)
    return tuple(getattr(module, TRANSPORT_ERRORS[module.__name__]) for module in loaded if module is not None)


def timed_out(err: BaseException) -> bool:
    """Whether ``err`` is a read or connection that timed out, as urllib3 (under
    requests and boto3) or requests raise it; those modules are loaded by then."""
    urllib3 = sys.modules.get("urllib3.exceptions")
    requests = sys.modules.get("requests.exceptions")
    return (urllib3 is not None and isinstance(err, urllib3.TimeoutError)) or (
        requests is not None and isinstance(err, requests.Timeout)
    )


def transport_error_text(err: BaseException, timeout: float | None) -> str:
    """One line for ``err``, raised by a URL's transport: for a timeout of ours, how
    long it waited and what sets that; else its first argument (urllib3's errors print
    as a tuple's repr: a message, then the error behind it)."""
    if timeout is not None and timed_out(err):
        return f"the server sent nothing for {timeout:g} s (${URL_TIMEOUT_VARIABLE} sets how long to wait)"
    first = err.args[0] if err.args else None
    return first if isinstance(first, str) else str(err) or type(err).__name__


def missing_transport(url: str, err: ImportError) -> W2VError:
    """The one-line error for a URL whose smart_open transport lacks its packages."""
    scheme = url.split("://", 1)[0].lower()
    extra = URL_EXTRAS.get(scheme)
    if extra is None:
        return W2VError(f"reading {scheme}:// URLs needs a package that is missing: {str(err).splitlines()[0]}")
    return W2VError(f"reading {scheme}:// URLs needs smart_open's {extra} support: pip install 'w2v[{extra}]'")


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


def read_umask() -> int:
    """The process's umask. Reading it means setting it for a moment (0o077 meanwhile,
    so that a file another thread creates then is never more open than it should be),
    so it is read once, at import."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


UMASK = read_umask()


def output_target(path: str) -> str:
    """The file that writing ``path`` replaces: ``path`` itself, or, when it is a symlink,
    the file it leads to (the link is kept). A link that Linux's ``protected_symlinks``
    would not follow is refused (W2VError): one in a sticky world-writable folder such
    as /tmp, owned by neither this user nor the folder's owner."""
    if not os.path.islink(path):
        return path
    link, folder = os.lstat(path), os.stat(os.path.dirname(os.path.abspath(path)))
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    if shared and hasattr(os, "geteuid") and link.st_uid not in (os.geteuid(), folder.st_uid):
        raise W2VError(f"not writing through {path}: a symlink of another user in a shared folder")
    return os.path.realpath(path)


def finished_mode(target: str) -> int:
    """The permission bits a finished output gets: those of the file it replaces, else
    what ``open`` gives a new file (0o666 less the umask)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode) & 0o777  # never set-id bits
    except FileNotFoundError:
        return 0o666 & ~UMASK


RUN_STARTED = time.time()  # about when this process started: w2v imports this module at once
TEMPORARY_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")  # tempfile's names: 8 of them


def is_temporary_of(entry_name: str, name: str) -> bool:
    """Whether ``entry_name`` is a temporary file name ``atomic_output`` gives an output
    called ``name``: ``.NAME.XXXXXXXX.tmp``, X one of ``TEMPORARY_LETTERS``."""
    prefix, suffix = f".{name}.", ".tmp"
    letters = entry_name[len(prefix) : -len(suffix)]
    shaped = entry_name.startswith(prefix) and entry_name.endswith(suffix)
    return shaped and len(entry_name) == len(prefix) + 8 + len(suffix) and set(letters) <= TEMPORARY_LETTERS


def remove_stale_temporaries(folder: str, name: str) -> None:
    """Remove from ``folder`` what earlier writes of the output ``name`` left when killed
    (SIGKILL, a power cut): its temporary files (``is_temporary_of``) that are regular
    files, owned by this user and last modified before this process started, so never
    the file of another run's write under way. A file that cannot be removed stays."""
    if not hasattr(os, "geteuid"):  # no owner to check (Windows)
        return
    try:
        with os.scandir(folder) as found:
            stale = [entry for entry in found if is_temporary_of(entry.name, name)]
    except OSError:
        return
    for entry in stale:
        with suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mtime < RUN_STARTED:
                os.unlink(entry.path)


@contextmanager
def atomic_output(path: str, compress: bool = False) -> Iterator[BinaryIO]:
    """A binary file object for ``path``, written to a temporary file beside it and
    renamed over it when the block ends without an error (so an interrupted or failed
    write leaves no half-written file and any old file untouched). The temporary file
    has an unpredictable name (``.NAME.XXXXXXXX.tmp``) and is created exclusively, so a
    link planted in the folder is never written through; the finished file has the
    permissions of the one it replaces, or a new file's. ``path`` naming a symlink: the
    file it leads to is replaced (``output_target``). A device or FIFO is written in
    place, ``-`` is standard output, and with ``compress`` a .gz/.bz2/.xz/.zst name is
    compressed. OSError becomes a one-line W2VError naming ``path``. Once it is in place,
    the temporary files that earlier writes of it left when killed are removed
    (``remove_stale_temporaries``)."""
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    extension = compression_of(path) if compress else None
    try:
        if is_special(path):
            with open_file(path, "wb", extension) as out:
                yield out
            return
        target = output_target(path)
        folder, name = os.path.split(os.path.abspath(target))
        mode = finished_mode(target)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as raw, open_file(raw, "wb", extension) as out:
                yield out
            os.replace(temporary, target)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary)
            raise
        remove_stale_temporaries(folder, name)
    except OSError as err:  # numpy's tofile raises one without strerror ("N requested and 0 written")
        raise W2VError(f"cannot write {path}: {err.strerror or err}") from None


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``atomic_output``."""
    with atomic_output(path) as out:
        out.write(data)


def check_writable(path: str) -> None:
    """W2VError if ``path`` cannot be written (nothing is created), for failing before
    the work that would write it."""
    if not path:
        raise W2VError("empty output path ''")
    folder = os.path.dirname(os.path.realpath(output_target(path)))  # a symlink's target is what is replaced
    if os.path.isdir(path):
        raise W2VError(f"output path is a folder: {path}")
    if not os.path.isdir(folder):
        raise W2VError(f"output folder does not exist: {folder}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise W2VError(f"output path is not writable: {path}")
