"""Corpora and vectors read from URLs: a folder served over HTTP on 127.0.0.1, read
through smart_open's http transport (``pip install 'w2v[http]'``, in the test extra)."""

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
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


def test_training_on_a_url_is_training_on_the_file(cli, served, tmp_path):
    url, _ = served
    here = cli("train", SAMPLE, "-o", tmp_path / "here.bin", "-q", *FAST)
    there = cli("train", f"{url}/sample.txt.gz", "-o", tmp_path / "there.bin", "-q", *FAST)
    assert here.returncode == 0 and there.returncode == 0, there.stderr.decode()
    assert (tmp_path / "here.bin").read_bytes() == (tmp_path / "there.bin").read_bytes()


def test_vectors_read_from_a_url(cli, served, tmp_path):
    url, folder = served
    trained = cli("train", SAMPLE, "-o", folder / "v.bin", "-q", *FAST)
    assert trained.returncode == 0, trained.stderr.decode()
    here = cli("similar", "king", "-v", folder / "v.bin")
    there = cli("similar", "king", "-v", f"{url}/v.bin")
    assert there.returncode == 0, there.stderr.decode()
    assert there.stdout == here.stdout and len(there.stdout.splitlines()) == 10


@pytest.mark.parametrize("command", [["train", *FAST], ["vocab"], ["phrases"]])
def test_a_missing_url_is_one_line(cli, served, tmp_path, command):
    """Not even the progress line of a reading begun: the URL is opened first."""
    url, _ = served
    done = cli(command[0], f"{url}/nowhere.txt", "-o", tmp_path / "out", *command[1:])
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr.decode()
    assert done.stderr.startswith(b"w2v: error: cannot open corpus ") and b"nowhere.txt: 404" in done.stderr
    assert not (tmp_path / "out").exists()


def test_the_workers_of_a_cluster_read_a_url_themselves(cli, served, tmp_path):
    pytest.importorskip("distributed")
    url, _ = served
    here = cli("vocab", SAMPLE, "-o", tmp_path / "here.txt", "-q")
    there = cli("vocab", f"{url}/sample.txt.gz", "-o", tmp_path / "there.txt", "-q", "--cluster", "local:2")
    assert here.returncode == 0 and there.returncode == 0, there.stderr.decode()
    assert (tmp_path / "here.txt").read_bytes() == (tmp_path / "there.txt").read_bytes()
