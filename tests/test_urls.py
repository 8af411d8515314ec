"""Corpora and vectors read from URLs: a folder served over HTTP on 127.0.0.1, read
through smart_open's http transport (``pip install 'w2v[http]'``, in the test extra)."""

import contextlib
import functools
import http.server
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

from w2v.files import url_timeout
from w2v.vectors.wordvectors import Vectors

SAMPLE = REPO / "data" / "sample.txt.gz"
FAST = ["--threads", "1", "--seed", "1", "--epochs", "1", "--dim", "16"]

pytest.importorskip("requests")  # smart_open's http transport


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder's files, without a log line on stderr for each request."""

    def log_message(self, *_args) -> None:
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A folder served over HTTP (holding the sample corpus, compressed and plain) and its URL."""
    folder = tmp_path_factory.mktemp("served")
    (folder / "sample.txt.gz").write_bytes(SAMPLE.read_bytes())
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        thread.join()


@pytest.mark.slow
def test_training_on_a_url_is_training_on_the_file(cli, served, tmp_path):
    url, _ = served
    here = cli("train", SAMPLE, "-o", tmp_path / "here.bin", "-q", *FAST)
    there = cli("train", f"{url}/sample.txt.gz", "-o", tmp_path / "there.bin", "-q", *FAST)
    assert here.returncode == 0 and there.returncode == 0, there.stderr.decode()
    assert (tmp_path / "here.bin").read_bytes() == (tmp_path / "there.bin").read_bytes()


@pytest.mark.slow
def test_vectors_read_from_a_url(cli, served, tmp_path):
    url, folder = served
    trained = cli("train", SAMPLE, "-o", folder / "v.bin", "-q", *FAST)
    assert trained.returncode == 0, trained.stderr.decode()
    here = cli("similar", "king", "-v", folder / "v.bin")
    there = cli("similar", "king", "-v", f"{url}/v.bin")
    assert there.returncode == 0, there.stderr.decode()
    assert there.stdout == here.stdout and len(there.stdout.splitlines()) == 10


@pytest.mark.slow
@pytest.mark.parametrize("command", [["train", *FAST], ["vocab"], ["phrases"]])
def test_a_missing_url_is_one_line(cli, served, tmp_path, command):
    """Not even the progress line of a reading begun: the URL is opened first."""
    url, _ = served
    done = cli(command[0], f"{url}/nowhere.txt", "-o", tmp_path / "out", *command[1:])
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr.decode()
    assert done.stderr.startswith(b"w2v: error: cannot open corpus ") and b"nowhere.txt: 404" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_workers_of_a_cluster_read_a_url_themselves(cli, served, tmp_path):
    pytest.importorskip("distributed")
    url, _ = served
    here = cli("vocab", SAMPLE, "-o", tmp_path / "here.txt", "-q")
    there = cli("vocab", f"{url}/sample.txt.gz", "-o", tmp_path / "there.txt", "-q", "--cluster", "local:2")
    assert here.returncode == 0 and there.returncode == 0, there.stderr.decode()
    assert (tmp_path / "here.txt").read_bytes() == (tmp_path / "there.txt").read_bytes()


class RawServer:
    """A server on 127.0.0.1 that answers every request with the same bytes ``reply``,
    then closes the connection or (``stall``) holds it open, silent, until ``close()``:
    the replies of a server that breaks down, which no ``http.server`` gives."""

    def __init__(self, reply: bytes, stall: bool = False):
        self.reply, self.stall = reply, stall
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.held: list[socket.socket] = []
        self.closing = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/{name}"

    def serve(self) -> None:
        while True:
            connection, _ = self.listener.accept()
            if self.closing:
                connection.close()
                return
            connection.recv(1 << 16)  # the request
            connection.sendall(self.reply)
            if self.stall:
                self.held.append(connection)
            else:
                connection.close()

    def close(self) -> None:
        self.closing = True
        socket.create_connection(self.listener.getsockname()).close()  # wakes the accept
        self.thread.join()
        self.listener.close()
        for connection in self.held:
            connection.close()


@contextlib.contextmanager
def raw_server(reply: bytes, stall: bool = False) -> Iterator[RawServer]:
    server = RawServer(reply, stall)
    try:
        yield server
    finally:
        server.close()


TEXT = b"the quick brown fox jumps over the lazy dog\n" * 200  # 8,800 bytes
CUT_SHORT = ["short Content-Length", "chunked reply cut"]
BROKEN = r"Connection broken: IncompleteRead\(\d+ bytes read(, \d+ more expected)?\)\n"  # urllib3's words


def cut_short(kind: str, sent: bytes, promised: int) -> bytes:
    """A reply of ``kind`` (one of ``CUT_SHORT``) whose body is ``sent`` where
    ``promised`` bytes are announced: by its Content-Length, or as its first chunk."""
    if kind == "short Content-Length":
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % promised + sent
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % promised + sent


@pytest.mark.parametrize("kind", CUT_SHORT)
@pytest.mark.parametrize("command", [["train", *FAST], ["vocab"], ["phrases"]])
def test_a_corpus_cut_short_is_one_line(tmp_path, kind, command, run_w2v):
    with raw_server(cut_short(kind, TEXT[:5000], 100_000)) as server:
        url = server.url("corpus.txt")
        code, out, err = run_w2v(command[0], url, "-o", tmp_path / "out", "-q", *command[1:])
    assert (code, out) == (1, "") and re.fullmatch(f"w2v: error: cannot read corpus {re.escape(url)}: {BROKEN}", err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", CUT_SHORT)
def test_vectors_cut_short_are_one_line(tmp_path, kind, run_w2v):
    words = [f"w{i}" for i in range(40)]
    Vectors(words, np.ones((40, 16), dtype=np.float32)).save(tmp_path / "v.bin", binary=True)
    body = (tmp_path / "v.bin").read_bytes()  # sent whole, where twice as much is promised
    with raw_server(cut_short(kind, body, 2 * len(body))) as server:
        url = server.url("v.bin")
        code, out, err = run_w2v("similar", "w1", "-v", url)
    assert (code, out) == (1, "") and re.fullmatch(f"w2v: error: {re.escape(url)}: cannot read: {BROKEN}", err)


@pytest.mark.slow
def test_a_cluster_worker_reading_a_url_cut_short_is_one_line(cli, tmp_path):
    """The worker's error reaches the client, which prints it as one process does."""
    pytest.importorskip("distributed")
    with raw_server(cut_short(CUT_SHORT[0], TEXT[:5000], 100_000)) as server:
        url = server.url("corpus.txt")
        done = cli("train", url, "-o", tmp_path / "out.bin", "-q", *FAST, "--cluster", "local:1")
    assert done.returncode == 1
    assert re.fullmatch(f"w2v: error: cannot read corpus {re.escape(url)}: {BROKEN}", done.stderr.decode())
    assert not (tmp_path / "out.bin").exists()


STALLED = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nthe quick "  # then nothing


@pytest.mark.parametrize(
    ("reply", "argv", "message"),
    [
        (STALLED, ["vocab", "{url}", "-o", "{out}", "-q"], "cannot read corpus {url}: "),
        (b"", ["vocab", "{url}", "-o", "{out}", "-q"], "cannot open corpus {url}: "),  # not even the headers
        (STALLED, ["similar", "quick", "-v", "{url}"], "{url}: cannot read: "),
    ],
    ids=["corpus", "corpus without headers", "vectors"],
)
def test_a_server_that_stalls_is_one_line_after_the_timeout(monkeypatch, tmp_path, reply, argv, message, run_w2v):
    """``$W2V_URL_TIMEOUT`` (60 s by default) set short: the wait ends, with one line."""
    monkeypatch.setenv("W2V_URL_TIMEOUT", "0.2")
    with raw_server(reply, stall=True) as server:
        url = server.url("stalled.txt")
        code, out, err = run_w2v(*[arg.format(url=url, out=tmp_path / "out") for arg in argv])
    expected = message.format(url=url) + "the server sent nothing for 0.2 s ($W2V_URL_TIMEOUT sets how long to wait)"
    assert (code, out, err) == (1, "", f"w2v: error: {expected}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("value", "seconds"), [(None, 60.0), ("", 60.0), (" 2.5 ", 2.5), ("86400", 86_400.0)])
def test_the_url_timeout_is_60_seconds_unless_set(monkeypatch, value, seconds):
    if value is None:
        monkeypatch.delenv("W2V_URL_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("W2V_URL_TIMEOUT", value)
    assert url_timeout() == seconds


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf", "86401"])
def test_a_timeout_that_is_no_number_of_seconds_is_one_line(monkeypatch, tmp_path, value, run_w2v):
    monkeypatch.setenv("W2V_URL_TIMEOUT", value)
    url = "http://127.0.0.1:9/corpus.txt"  # never reached
    code, out, err = run_w2v("vocab", url, "-o", tmp_path / "out", "-q")
    why = f"W2V_URL_TIMEOUT={value!r}: give the seconds a URL's server may stay silent, above 0 and at most 86,400"
    assert (code, out, err) == (1, "", f"w2v: error: cannot open corpus {url}: {why}\n")
