"""Counting and training on a Dask cluster: a LocalCluster of 2 processes, and a
scheduler and two workers started apart. Skipped where Dask is not installed
(``pip install -e '.[dask]'``)."""

import contextlib
import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, ctrl_c_by_default

import w2v
from w2v.cluster import runs as cluster_runs
from w2v.cluster.training import ClusterRun
from w2v.errors import ClusterLost, ConfigError, CorpusError, W2VError
from w2v.vectorio.modelfile import TrainState, checkpoint_path

pytestmark = pytest.mark.slow  # every test here starts a Dask cluster: processes, or threads that train

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")  # a dependency of distributed

TOPICS = 4
TOPIC_WORDS = 10


def topic_corpus(path: Path, lines: int = 4000, seed: int = 0) -> Path:
    """Lines of 12 words, each line drawn from one of ``TOPICS`` topics of ``TOPIC_WORDS``
    words (``t{topic}w{word}``): a word's neighbours are the words of its topic."""
    rng = np.random.default_rng(seed)
    topics = rng.integers(TOPICS, size=lines)
    words = rng.integers(TOPIC_WORDS, size=(lines, 12))
    path.write_text("".join(" ".join(f"t{t}w{w}" for w in row) + "\n" for t, row in zip(topics, words, strict=True)))
    return path


def topic_margin(vectors) -> float:
    """Mean cosine of pairs of words of one topic less that of pairs across topics."""
    names = [f"t{t}w{w}" for t in range(TOPICS) for w in range(TOPIC_WORDS)]
    unit = np.stack([vectors[name] for name in names])
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    cosines = unit @ unit.T
    topic = np.repeat(np.arange(TOPICS), TOPIC_WORDS)
    same = (topic[:, None] == topic[None, :]) & ~np.eye(len(names), dtype=bool)
    return float(cosines[same].mean() - cosines[topic[:, None] != topic[None, :]].mean())


# skip-gram NS in rounds: the replicas these tests are about (blocks: test_block_cluster.py)
SETTINGS = {"dim": 16, "epochs": 4, "min_count": 1, "sample": 0, "sync_words": 10_000, "seed": 1, "rounds": True}


@pytest.fixture(scope="module")
def topics(tmp_path_factory) -> Path:
    return topic_corpus(tmp_path_factory.mktemp("cluster") / "topics.txt")


def test_vocab_on_two_workers_is_the_vocab_of_one_process(cli, tmp_path):
    corpus = tmp_path / "sample.txt"  # uncompressed: cut into byte ranges at whitespace
    corpus.write_bytes(gzip.decompress((REPO / "data" / "sample.txt.gz").read_bytes()))
    here = cli("vocab", corpus, "-o", tmp_path / "here.txt", "-q", "--min-count", "1")
    with socket.socket() as dask_port:  # Dask's usual HTTP port taken, as by another cluster on this machine
        with contextlib.suppress(OSError):  # taken already
            dask_port.bind(("", 8787))
            dask_port.listen()
        there = cli("vocab", corpus, "-o", tmp_path / "there.txt", "-q", "--min-count", "1", "--cluster", "local:2")
    assert here.returncode == 0 and there.returncode == 0, there.stderr.decode()
    assert there.stderr == b""  # quiet: not even a warning of a port in use
    assert (tmp_path / "here.txt").read_bytes() == (tmp_path / "there.txt").read_bytes()
    assert here.stdout == there.stdout.replace(b"there.txt", b"here.txt")


def test_training_on_two_workers(topics, tmp_path):
    from gensim.models import KeyedVectors

    trained = w2v.train(str(topics), cluster="local:2", threads=1, **{**SETTINGS, "sync_words": 4_000})
    report = trained.report
    assert report.epoch_loss[-1] < report.epoch_loss[0]
    assert report.train_words == 4 * 4000 * 12
    assert len(report.rounds) >= 5 and sum(r.words for r in report.rounds) == report.train_words
    # a round ends at the first batch end past 4,000 words, and a worker's batches are exactly 4,000 words
    # (not --batch-words' 10,000, and cut at the 4,000th word of a 12-word line): rounds of 8,000 words but
    # where a worker's epoch ends in a shorter batch (its round then takes the next epoch's first batch too)
    words = [r.words for r in report.rounds]
    assert max(words) < 2 * 2 * 4_000 and words.count(2 * 4_000) >= len(words) // 2
    assert all(r.bytes_in > 0 for r in report.rounds if r.words >= 4_000)  # the last may be a lone word
    assert topic_margin(trained) > 0.3
    trained.save(tmp_path / "v.bin")
    loaded = KeyedVectors.load_word2vec_format(str(tmp_path / "v.bin"), binary=True)
    np.testing.assert_array_equal(loaded.vectors, trained.vectors)


def test_a_cluster_run_takes_a_stream_per_worker_thread(topics, tmp_path):
    """Unless --streams is given, each worker's batches come from a stream per thread of
    its own (word2vec.c's layout), stored with the run."""
    model = tmp_path / "m.npz"
    w2v.train(str(topics), cluster="local:1", threads=3, save_model=str(model), **SETTINGS)
    assert TrainState.load(str(model)).config.streams == 3
    w2v.train(str(topics), cluster="local:1", threads=3, streams=1, save_model=str(model), **SETTINGS)
    assert TrainState.load(str(model)).config.streams == 1


def test_one_worker_is_byte_identical_to_one_process(cli, topics, tmp_path):
    common = ["--threads", "1", "--seed", "1", "--epochs", "2", "--dim", "16", "--min-count", "1", "--hs"]
    plain = cli("train", topics, "-o", tmp_path / "plain.bin", "-q", *common)
    rounds = cli(
        "train", topics, "-o", tmp_path / "rounds.bin", *common, "--cluster", "local:1", "--sync-words", "9000"
    )
    assert plain.returncode == 0 and rounds.returncode == 0, rounds.stderr.decode()
    assert (
        b"w2v: this model trains on a cluster in rounds, a whole replica of the weights on each worker" in rounds.stderr
    )
    assert b"11 rounds" in rounds.stderr  # 96,000 words, 9,000 a round
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "rounds.bin").read_bytes()


def test_a_corpus_of_fewer_parts_than_workers_is_noted(cli, topics, tmp_path):
    packed = tmp_path / "topics.txt.gz"  # compressed: one part
    packed.write_bytes(gzip.compress(topics.read_bytes()))
    done = cli(
        "train", packed, "-o", tmp_path / "v.bin", "--cluster", "local:2", "--dim", "8", "--epochs", "1", "--rounds"
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"the corpus is 1 part: 1 of the 2 workers has work" in done.stderr
    assert b"1 round (" in done.stderr  # a lone replica's long rounds
    counted = cli("vocab", packed, "-o", tmp_path / "vocab.txt", "--cluster", "local:2")
    assert counted.returncode == 0 and b"the corpus is 1 part: 1 of the 2 workers has work" in counted.stderr
    phrased = cli("phrases", packed, "-o", tmp_path / "phrased", "--cluster", "local:2")
    assert phrased.returncode == 0 and b"1 of the 2 workers has work (a file of one line" in phrased.stderr
    line = tmp_path / "line.txt"  # plain, but one line: phrases cut it into parts of which one holds it all
    line.write_bytes(topics.read_bytes().replace(b"\n", b" "))
    phrased = cli("phrases", line, "-o", tmp_path / "phrased-line", "--cluster", "local:2")
    assert phrased.returncode == 0 and b"the corpus is 8 parts, 7 without words: 1 of the 2" in phrased.stderr
    assert b"has work" not in cli("vocab", topics, "-o", tmp_path / "all.txt", "--cluster", "local:2").stderr


@pytest.mark.parametrize("packed", [False, True])
def test_parts_without_words_have_no_replica(cli, topics, tmp_path, packed):
    """An empty file, or one of whitespace, would leave its replica nothing to train:
    the plain file is cut in two, one a worker; the compressed one is one part."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = topics.read_bytes()
    if packed:
        (corpus / "a.txt.gz").write_bytes(gzip.compress(text))
    else:
        (corpus / "a.txt").write_bytes(text)
    (corpus / "b.txt").write_bytes(b"")
    (corpus / "c.txt").write_bytes(b" \n\t\n" * 1000)
    done = cli("train", corpus, "-o", tmp_path / "v.bin", "--cluster", "local:2", "--dim", "8", "--epochs", "1",
               "--min-count", "1")  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    note = b"the corpus is 3 parts, 2 without words: 1 of the 2 workers has work"
    assert (note in done.stderr) if packed else (b"has work" not in done.stderr)
    assert b"48,000 words trained" in done.stderr


def test_a_script_without_the_main_guard_is_told_of_it(topics, tmp_path):
    """Each local worker process imports the script that started it again: at its top
    level, w2v's call would start a cluster in each. They exit; the script gets one error."""
    script = tmp_path / "script.py"
    script.write_text(f"import w2v\nw2v.train([{str(topics)!r}], cluster='local:2', epochs=1, dim=8)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count(b"Traceback") == 1, done.stderr.decode()[-3000:]
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("w2v.errors.ConfigError: the worker processes of local:2 did not start")
    assert b"""call w2v under 'if __name__ == "__main__":'""" in done.stderr


ROUNDS = ("--sync-words", "10000", "--rounds")  # skip-gram NS in rounds of 10,000 words


@contextlib.contextmanager
def training_in_a_terminal(topics, folder: Path, how: tuple[str, ...] = ROUNDS) -> Iterator[subprocess.Popen]:
    """``w2v train --cluster local:2`` as from a terminal (a process group of its
    own, Ctrl-C not ignored), checkpointing into ``folder``, once it trains (``how``:
    in rounds, or blocks); its processes are killed after the block if it has not ended."""
    command = [sys.executable, "-m", "w2v", "train", topics, "-o", folder.parent / "v.bin", "--cluster", "local:2",
               "--checkpoint", folder, "--dim", "8", "--epochs", "5000", *how]  # fmt: skip
    child = subprocess.Popen(list(map(str, command)), stderr=subprocess.PIPE, start_new_session=True,
                             preexec_fn=ctrl_c_by_default)  # fmt: skip
    assert child.stderr is not None
    for line in child.stderr:  # progress lines, stderr not being a terminal
        if line.startswith(b"w2v: training: ") and b"lr=" in line:
            break
    try:
        yield child
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def ctrl_c_ends_it_with_one_line(child: subprocess.Popen, folder: Path) -> None:
    """Ctrl-C at the terminal (SIGINT to the whole group) ends ``child`` with one line,
    its checkpoint saved and no vectors written."""
    os.killpg(child.pid, signal.SIGINT)
    assert child.stderr is not None
    err = child.stderr.read()
    assert child.wait(60) == 130, err.decode()[-3000:]
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err.decode()[-3000:]
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith(f"w2v: error: interrupted; checkpoint saved in {folder}")
    assert last.endswith(f"continue with 'w2v train --resume {folder} --cluster local:2'")
    assert not (folder.parent / "v.bin").exists()


@pytest.mark.parametrize("how", [ROUNDS, ()], ids=["rounds", "blocks"])
def test_ctrl_c_stops_the_run_with_one_line(topics, tmp_path, how):
    """Ctrl-C reaches every process of the terminal's foreground group: the workers
    leave it to the client, which checkpoints and stops them."""
    folder = tmp_path / "ck"
    with training_in_a_terminal(topics, folder, how) as child:
        ctrl_c_ends_it_with_one_line(child, folder)


def ignores_sigint(process) -> bool:
    """Whether ``process`` ignores SIGINT (its ``SigIgn`` mask in /proc)."""
    with contextlib.suppress(FileNotFoundError):
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads signal masks from /proc")
def test_ctrl_c_after_a_worker_is_started_again_stops_the_run_with_one_line(topics, tmp_path):
    """A worker process that its nanny starts again after a loss leaves Ctrl-C to the
    client too, as the first ones do."""
    folder = tmp_path / "ck"
    with training_in_a_terminal(topics, folder) as child:
        assert child.stderr is not None
        first = worker_processes()
        assert len(first) == 2 and all(ignores_sigint(process) for process in first)
        first[0].kill()
        first_pids, started_again, deadline = {process.pid for process in first}, [], time.monotonic() + 60
        while not started_again:  # paced by the progress lines, at least one every 10 s
            assert child.stderr.readline() and time.monotonic() < deadline, "no worker started again ignores SIGINT"
            started_again = [p for p in worker_processes() if p.pid not in first_pids and ignores_sigint(p)]
        ctrl_c_ends_it_with_one_line(child, folder)


def worker_processes() -> list:
    """The LocalCluster's worker processes: children of this one started by multiprocessing."""
    children = psutil.Process().children(recursive=True)
    return [child for child in children if "spawn_main" in " ".join(child.cmdline())]


def killing_a_worker(killed: list[int]):
    """An ``on_progress`` that kills a worker process after the first round, once, its pid added to ``killed``."""

    def kill_one(done, _total, _alpha, _loss):
        if not killed and done > 0:
            victim = worker_processes()[0]
            victim.send_signal(signal.SIGKILL)
            killed.append(victim.pid)

    return kill_one


def test_a_worker_killed_mid_run_is_replaced(topics, monkeypatch):
    """A worker killed after the first round: its replica starts again on a worker
    still there, the first try failing as if that worker had left as it started."""
    killed: list[int] = []
    vanished: list[str] = []
    submit = ClusterRun.submit

    def submit_to_a_vanishing_worker(run, k, worker):
        if killed and not vanished:
            vanished.append(worker)
            raise KeyError(worker)  # as Dask's scheduler does for a worker it dropped
        return submit(run, k, worker)

    monkeypatch.setattr(ClusterRun, "submit", submit_to_a_vanishing_worker)
    trained = w2v.train(str(topics), cluster="local:2", threads=1, on_progress=killing_a_worker(killed), **SETTINGS)
    assert killed and vanished and trained.report.workers_lost == 1
    assert trained.report.train_words == 4 * 4000 * 12  # the lost round was trained again
    assert topic_margin(trained) > 0.3


def test_a_worker_that_stops_answering_is_replaced(topics, monkeypatch):
    """A worker stopped mid-run (SIGSTOP: a machine hung, not gone) keeps its connections
    open; the scheduler drops it after ``worker-ttl`` without heartbeats, and its
    replica starts again on the other worker."""
    from w2v.cluster import connect as cluster

    stopped: list = []

    def stop_one(done, _total, _alpha, _loss):
        if not stopped and done > 0:
            stopped.append(worker_processes()[0])
            stopped[0].send_signal(signal.SIGSTOP)

    monkeypatch.setitem(cluster.DASK_SETTINGS, "distributed.scheduler.worker-ttl", "2s")
    try:
        trained = w2v.train(str(topics), cluster="local:2", threads=1, on_progress=stop_one, **SETTINGS)
    finally:
        for process in stopped:
            with contextlib.suppress(psutil.NoSuchProcess):  # the nanny may have ended it
                process.send_signal(signal.SIGKILL)
    assert stopped and trained.report.workers_lost == 1
    assert trained.report.train_words == 4 * 4000 * 12 and topic_margin(trained) > 0.3


def test_dasks_record_of_lost_workers_does_not_fail_a_finished_run(topics, monkeypatch):
    """Dask's LocalCluster can look up a removed worker where it no longer lists it
    (dask/distributed#5407, seen after a worker was lost): its KeyError, raised as the
    cluster closes, leaves the run's result as it was."""
    from distributed.deploy.spec import SpecCluster

    removed: list[str] = []

    def forgetting(cluster, op, message):
        if op == "remove":
            removed.append(message)
            raise KeyError(message)
        return listing(cluster, op, message)

    listing = SpecCluster._update_worker_status
    monkeypatch.setattr(SpecCluster, "_update_worker_status", forgetting)
    trained = w2v.train(str(topics), cluster="local:2", threads=1, **SETTINGS)
    assert removed and topic_margin(trained) > 0.3


def test_a_run_that_loses_more_workers_than_it_survives_keeps_its_checkpoint(topics, tmp_path, monkeypatch):
    """Past MAX_REPLACEMENTS lost workers (none here) the run stops with one line, saved as of its last round."""
    killed: list[int] = []
    monkeypatch.setattr(cluster_runs, "MAX_REPLACEMENTS", 0)  # where ``survive`` reads it
    with pytest.raises(ClusterLost, match=r"^lost a worker again \(.+\) after 0, the most a run survives$"):
        w2v.train(str(topics), cluster="local:2", threads=1, on_progress=killing_a_worker(killed),
                  checkpoint=str(tmp_path / "ck"), **SETTINGS)  # fmt: skip
    state = TrainState.load(str(tmp_path / "ck"))
    assert killed and 0 < state.jobs_done < state.batches * SETTINGS["epochs"] and len(state.replicas) == 2


ACTOR_LOST = "Worker holding Actor was lost"  # Dask's words (distributed/actor.py, scheduler.py)


class ActorLostInARound:
    """Replica 0's actor, whose worker is lost as the run's second round begins, as Dask
    says it (``RuntimeError: Worker holding Actor was lost``): at the call (``when`` is
    "call": the actor's future has erred) or from the call's result. Once: the replica
    started again in its place is a real one."""

    def __init__(self, actor, when: str, lost: list[int]):
        self.actor, self.when, self.lost = actor, when, lost

    def __getattr__(self, name: str):
        method = getattr(self.actor, name)
        if name != "train_round" or self.lost:
            return method

        def train_round(update, done, *others):
            if done == 0:  # the first round
                return method(update, done, *others)
            self.lost.append(done)
            if self.when == "call":
                raise RuntimeError(f"{ACTOR_LOST}.  Status: error")
            return LostResult()

        return train_round


class LostResult:
    """A call of an actor whose worker is lost: its result is Dask's RuntimeError."""

    def result(self):
        raise RuntimeError(ACTOR_LOST)


@pytest.mark.parametrize("when", ["call", "result"])
def test_an_actor_lost_in_a_round_costs_the_round(topics, monkeypatch, when):
    """A worker lost during a round, as Dask reports it for an actor (a RuntimeError, not a
    lost connection), costs the round: the replica starts again on the other worker."""
    lost: list[int] = []
    start = ClusterRun.start

    def start_then_lose(run, workers):
        start(run, workers)
        run.actors[0] = ActorLostInARound(run.actors[0], when, lost)

    monkeypatch.setattr(ClusterRun, "start", start_then_lose)
    trained = w2v.train(str(topics), cluster="local:2", threads=1, **SETTINGS)
    assert lost and trained.report.workers_lost == 1
    assert trained.report.train_words == 4 * 4000 * 12  # the lost round was trained again
    assert topic_margin(trained) > 0.3


def test_an_actor_lost_as_the_replicas_start_is_one_error(topics, monkeypatch):
    """The first replica's actor gone as it starts (Dask's RuntimeError from its future): one line."""
    from w2v.cluster.connect import Cluster

    result = Cluster.result

    def lost_actor_first(cluster, future, on=None):
        if on is not None:  # a replica's actor, started on worker ``on``
            raise RuntimeError(ACTOR_LOST)
        return result(cluster, future, on)

    monkeypatch.setattr(Cluster, "result", lost_actor_first)
    with pytest.raises(W2VError, match=r"^a worker left the cluster as the replicas started \(Worker holding Actor"):
        w2v.train(str(topics), cluster="local:2", threads=1, **SETTINGS)


def test_a_worker_gone_as_the_replicas_start_is_one_error(topics, monkeypatch):
    """A replica's worker gone before its actor starts: Dask would wait for it to
    come back; the run stops with one line."""
    submit = ClusterRun.submit

    def submit_first_to_a_gone_worker(run, k, worker):
        return submit(run, k, "tcp://127.0.0.1:9" if k == 0 else worker)

    monkeypatch.setattr(ClusterRun, "submit", submit_first_to_a_gone_worker)
    with pytest.raises(W2VError, match=r"^a worker left the cluster as the replicas started \(.+\): run it again$"):
        w2v.train(str(topics), cluster="local:2", threads=1, **SETTINGS)  # Dask: (No valid workers found)


def test_a_task_bound_to_a_gone_worker_is_a_lost_connection():
    """Dask holds a task bound to a worker that has left until the worker comes
    back; the client takes it for a lost connection after a spell."""
    from w2v.cluster.connect import connect

    gone = "tcp://127.0.0.1:9"
    with connect("local:1", None) as cluster:
        bound = cluster.client.submit(sum, [1, 2], workers=[gone], allow_other_workers=False, pure=False)
        with pytest.raises(ConnectionError, match=f"the worker {gone} left the cluster"):
            cluster.result(bound, on=gone)
        assert cluster.result(cluster.client.submit(sum, [1, 2], pure=False), on=cluster.workers()[0]) == 3


@contextlib.contextmanager
def started_apart(file: Path, workers: int, *options: str, env: dict | None = None) -> Iterator[Path]:
    """A scheduler and ``workers`` workers (with ``options`` and ``env``) started as
    ``dask scheduler`` and ``dask worker`` would be on a cluster's machines (here all
    on 127.0.0.1), writing the scheduler file ``file``; stopped after the block."""
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    started = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                 "--scheduler-file", str(file)], stderr=subprocess.DEVNULL)]  # fmt: skip
    try:
        with distributed.Client(scheduler_file=str(file), timeout=60) as client:
            worker = [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(file), "--nthreads",
                      "1", "--no-dashboard", "--host", "127.0.0.1", *options]  # fmt: skip
            for _ in range(workers):
                started.append(subprocess.Popen(worker, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}))
            client.wait_for_workers(workers, timeout=60)
        yield file
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def scheduler(tmp_path):
    """A scheduler and two workers started apart (``started_apart``); its scheduler file."""
    with started_apart(tmp_path / "scheduler.json", 2) as file:
        yield file


def test_a_cluster_started_apart(cli, topics, tmp_path, scheduler):
    address = json.loads(scheduler.read_text())["address"]
    vocab = cli("vocab", topics, "-o", tmp_path / "vocab.txt", "-q", "--min-count", "1", "--cluster", address)
    assert vocab.returncode == 0, vocab.stderr.decode()
    assert len((tmp_path / "vocab.txt").read_text().splitlines()) == TOPICS * TOPIC_WORDS
    here = topics.parent  # a path relative to this folder, where the workers run in another
    relative = cli("vocab", topics.name, "-o", tmp_path / "relative.txt", "-q", "--min-count", "1", "--cluster",
                   address, cwd=here)  # fmt: skip
    assert relative.returncode == 0, relative.stderr.decode()
    assert (tmp_path / "relative.txt").read_bytes() == (tmp_path / "vocab.txt").read_bytes()
    done = cli("train", topics, "-o", tmp_path / "v.txt", "--cluster", scheduler, "--dim", "16", "--epochs", "4",
               "--min-count", "1", "--sample", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert b"blocks on 2 machines, 4 sweeps an epoch (" in done.stderr
    assert topic_margin(w2v.Vectors.load_word2vec_format(tmp_path / "v.txt")) > 0.3
    missing = cli("train", tmp_path / "nowhere.txt", "--cluster", address, "-o", tmp_path / "x.bin")
    assert missing.returncode != 0 and b"corpus not found" in missing.stderr


@pytest.mark.parametrize("how", [ROUNDS, ()], ids=["rounds", "blocks"])
def test_a_scheduler_lost_mid_run_is_one_line_and_a_checkpoint(topics, tmp_path, how):
    """The client cancels every future when its scheduler goes; the run says so in one
    line, with its checkpoint as of its last round, instead of Dask's tracebacks."""
    folder = tmp_path / "ck"
    with started_apart(tmp_path / "scheduler.json", 2) as file:
        command = [sys.executable, "-m", "w2v", "train", topics, "-o", tmp_path / "v.bin", "--cluster", file,
                   "--checkpoint", folder, "--dim", "8", "--epochs", "5000", *how]  # fmt: skip
        child = subprocess.Popen(list(map(str, command)), stderr=subprocess.PIPE)
        assert child.stderr is not None
        for line in child.stderr:
            if line.startswith(b"w2v: training: ") and b"lr=" in line:
                break
        scheduler = next(p for p in psutil.process_iter(["cmdline"]) if str(file) in (p.info["cmdline"] or [])
                         and "distributed.cli.dask_scheduler" in p.info["cmdline"])  # fmt: skip
        scheduler.kill()
        err = child.stderr.read()
        assert child.wait(60) == 1, err.decode()[-3000:]
    assert b"Traceback" not in err, err.decode()[-3000:]
    lost = f"w2v: error: lost the connection to the Dask scheduler at {file}; checkpoint saved in {folder} ("
    assert err.decode().strip().splitlines()[-1].startswith(lost)
    assert err.decode().strip().endswith(f"continue with 'w2v train --resume {folder} --cluster {file}'")
    assert TrainState.load(checkpoint_path(str(folder))).replicas and not (tmp_path / "v.bin").exists()


WITHOUT_W2V = """
import importlib.metadata, sys

class Hidden:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "w2v":
            raise ModuleNotFoundError(f"No module named {name!r}")

sys.meta_path.insert(0, Hidden())
installed = importlib.metadata.version
importlib.metadata.version = lambda name: installed(name) if name != "w2v" else installed("no such package")
"""


def test_a_worker_without_w2v_is_one_line(cli, topics, tmp_path):
    """A worker without w2v would leave the cluster at the first task, unable to
    unpickle it, and the run wait for workers forever: it is refused at once."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(WITHOUT_W2V)
    with started_apart(tmp_path / "scheduler.json", 1, env={"PYTHONPATH": str(tmp_path / "site")}) as file:
        done = cli("vocab", topics, "--cluster", file, "-o", tmp_path / "vocab.txt")
    assert done.returncode == 1, done.stderr.decode()
    assert done.stderr.decode().startswith("w2v: error: the worker tcp://127.0.0.1:")
    assert "has no w2v, this machine w2v " in done.stderr.decode() and len(done.stderr.splitlines()) == 1


def test_a_cluster_left_without_workers_is_one_error(tmp_path):
    """Dask waits for a worker to join; w2v stops with its error once none has for a spell."""
    from w2v.cluster.connect import connect

    with started_apart(tmp_path / "scheduler.json", 1, "--no-nanny") as file, connect(str(file), None) as cluster:
        gone = cluster.client.submit(os._exit, 1, pure=False)  # the one worker's process ends: none is left
        with pytest.raises(ConfigError, match="has 0 workers, not 1 or more, after 5 s"):
            cluster.result(gone)


def test_the_client_reaches_workers_started_apart_directly(scheduler):
    from w2v.cluster.connect import connect, reaches_workers

    with connect(str(scheduler), None) as cluster:
        assert cluster.client.direct_to_workers and cluster.threads == 1
        assert reaches_workers(cluster.client, cluster.workers())
        assert not reaches_workers(cluster.client, [*cluster.workers(), "tcp://127.0.0.1:9"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cluster", "local:0"], b"local:N needs N >= 1"),
        (["--cluster", "nowhere"], b"--cluster must be local:N, a scheduler's address"),
        (["--cluster", "tcp://127.0.0.1:9"], b"cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
        (["--sync-words", "5"], b"--sync-words: no effect without --cluster"),
        (["--sweeps", "2", "--rounds"], b"--sweeps, --rounds: no effect without --cluster"),
        (
            ["--cluster", "local:1", "--sync-words", "5"],
            b"--sync-words applies to rounds: skip-gram with negative "
            b"sampling trains in blocks on a cluster (add --rounds to train it in rounds)",
        ),
        (["--cluster", "local:1", "--combine", "sum"], b"--combine applies to rounds"),
        (
            ["--cluster", "local:1", "--model", "cbow", "--sweeps", "2"],
            b"--sweeps applies to skip-gram with negative sampling alone, trained in blocks: this run trains in rounds",
        ),
        (["--cluster", "local:1", "--hs", "--negative", "5", "--sweeps", "2"], b"--sweeps applies to skip-gram"),
        (["--cluster", "local:1", "--phrases"], b"run w2v phrases --cluster first"),
    ],
)
def test_cluster_mistakes_are_one_line(cli, topics, tmp_path, args, message):
    done = cli("train", topics, "-o", tmp_path / "x.bin", "-q", *args)
    assert done.returncode != 0 and message in done.stderr, done.stderr.decode()
    assert len(done.stderr.decode().strip().splitlines()) <= 2 and b"Traceback" not in done.stderr  # usage: 2 lines
    assert not (tmp_path / "x.bin").exists()


def test_an_address_where_no_scheduler_answers_is_one_line(cli, topics, tmp_path):
    """Dask waits for a scheduler's handshake without a limit; w2v for 10 s."""
    with socket.socket() as listener:  # connections are accepted (the kernel's backlog), never answered
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        done = cli("vocab", topics, "-o", tmp_path / "v.txt", "--cluster", address)
    assert done.returncode == 1, done.stderr.decode()
    unanswered = f"no Dask scheduler answered at {address} within 10 s (something else listens there, or the"
    assert done.stderr.decode() == f"w2v: error: {unanswered} scheduler is stuck)\n"
    written = tmp_path / "scheduler.json"
    written.write_text('{"addr')  # not JSON: Dask would wait for it to be, then fail on no address
    done = cli("vocab", topics, "-o", tmp_path / "v.txt", "--cluster", written)
    not_a_file = f"{written} is not a Dask scheduler file (JSON with the scheduler's address)"
    assert done.returncode == 1 and done.stderr.decode() == f"w2v: error: {not_a_file}\n"
    assert not (tmp_path / "v.txt").exists()


def test_a_corpus_with_no_word_of_the_vocabulary_is_one_line(cli, tmp_path):
    """As in one process: the replicas hold no word, and nothing is trained or written."""
    (tmp_path / "counts.txt").write_text("foo 10\nbar 5\n")
    (tmp_path / "unknown.txt").write_text("zzqx yyqx\n")
    flags = ["--read-vocab", "counts.txt", "--cluster", "local:1", "-q"]
    done = cli("train", "unknown.txt", "-o", "x.bin", *flags, cwd=tmp_path)
    message = "none of the corpus' 2 words is in the vocabulary of counts.txt: nothing to train"
    assert (done.returncode, done.stderr.decode()) == (1, f"w2v: error: {message}\n")
    assert not (tmp_path / "x.bin").exists()


def test_a_corpus_where_no_word_has_a_context_is_one_line(cli, tmp_path):
    """As in one process: the replicas' streams hold no two words side by side."""
    (tmp_path / "lonely.txt").write_text("man\nwoman\nman\n")
    done = cli("train", "lonely.txt", "-o", "x.bin", "--min-count", "1", "--cluster", "local:1", "-q", cwd=tmp_path)
    message = "nothing to train: no sentence (line) of the corpus holds two words of the vocabulary, so no word"
    assert (done.returncode, done.stderr.decode()) == (1, f"w2v: error: {message} has a context\n")
    assert not (tmp_path / "x.bin").exists()


def test_standard_input_cannot_reach_the_workers(cli, tmp_path):
    done = cli("train", "-", "--cluster", "local:1", "-o", tmp_path / "x.bin", "-q", input=b"a b c\n")
    assert done.returncode == 1
    assert done.stderr.strip().endswith(b"standard input cannot be shared; write it to a file they can read")


def test_without_dask_the_option_names_the_extra(cli, topics, tmp_path):
    hide = tmp_path / "hide"
    (hide / "dask").mkdir(parents=True)
    (hide / "dask" / "__init__.py").write_text("raise ImportError('no dask here')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(hide), str(REPO)])}
    done = cli("vocab", topics, "-o", tmp_path / "v.txt", "--cluster", "local:2", env=env)
    assert done.returncode == 1
    assert done.stderr.strip() == b"w2v: error: --cluster needs Dask: pip install 'w2v[dask]' (or dask[distributed])"


def stop_halfway(done, total, _alpha, _loss):
    if done > total // 2:
        raise KeyboardInterrupt


@pytest.mark.parametrize(("combine", "sync_words"), [("auto", 10_000), ("momentum", 10_000), ("mixed", 4_000)])
def test_an_interrupted_run_resumes_byte_identical(topics, tmp_path, combine, sync_words):
    """One thread a worker: a run on a cluster is reproducible. Rounds of 4,000 words: the
    replicas' batches (4,000 words, not --batch-words' 10,000) are encoded again alike."""
    settings = {**SETTINGS, "threads": 1, "combine": combine, "sync_words": sync_words}
    whole = w2v.train(str(topics), cluster="local:2", **settings)
    with pytest.raises(KeyboardInterrupt):
        w2v.train(str(topics), cluster="local:2", checkpoint=str(tmp_path / "ck"), on_progress=stop_halfway, **settings)
    state = TrainState.load(str(tmp_path / "ck"))
    assert 0 < state.jobs_done < state.batches * 4 and len(state.replicas) == 2
    assert [r["parts"][0][0] for r in state.replicas] == [str(topics)] * 2
    saved = {"auto": set(), "momentum": {"syn0", "syn1", "syn1neg"}, "mixed": {"syn1", "syn1neg"}}[combine]
    assert state.momentum.keys() == saved  # the rows' momentum goes on where it was
    with pytest.raises(ConfigError, match="checkpointed on a cluster: resume it with cluster="):
        w2v.train(str(topics), resume=str(tmp_path / "ck"))
    ended: list[tuple[int, float]] = []
    rest = w2v.train(str(topics), cluster="local:2", resume=str(tmp_path / "ck"), threads=1, combine=combine,
                     on_epoch_end=lambda epoch, loss: ended.append((epoch, loss)))  # fmt: skip
    assert rest.vectors.tobytes() == whole.vectors.tobytes()
    assert rest.report.epoch_loss == whole.report.epoch_loss
    first = min(replica["jobs_done"] // replica["batches"] for replica in state.replicas)  # epochs all had done
    assert ended == [(epoch, whole.report.epoch_loss[epoch]) for epoch in range(first, SETTINGS["epochs"])]


def test_a_checkpoint_whose_replicas_read_otherwise_is_refused(topics, tmp_path):
    """A replica that encodes other ids than it checkpointed: the corpus has changed; the
    same ids in other batches: the batching has (a checkpoint of an earlier w2v)."""
    settings = {**SETTINGS, "threads": 1, "sync_words": 4_000}
    folder = str(tmp_path / "ck")
    with pytest.raises(KeyboardInterrupt):
        w2v.train(str(topics), cluster="local:2", checkpoint=folder, on_progress=stop_halfway, **settings)
    state = TrainState.load(folder)
    state.replicas[0]["batches"] += 1
    state.batches += 1
    state.save(checkpoint_path(folder))
    with pytest.raises(CorpusError, match=r"checkpoint cut its part .* into 8 batches, this w2v into 7 \(a checkpoint"):
        w2v.train(str(topics), cluster="local:2", resume=folder, threads=1)
    state.replicas[0]["digest"] ^= 1
    state.save(checkpoint_path(folder))
    with pytest.raises(CorpusError, match=r"the corpus is not the one checkpointed: its part .* has changed"):
        w2v.train(str(topics), cluster="local:2", resume=folder, threads=1)
    other, empty = tmp_path / "other.txt", tmp_path / "empty.txt"
    other.write_text("new words\n")
    empty.write_text(" \n")
    with pytest.raises(CorpusError, match=rf"checkpointed \(it read {topics}, not given now\): resume needs the same"):
        w2v.train(str(other), cluster="local:2", resume=folder, threads=1)
    with pytest.raises(CorpusError, match=rf"the corpus is not the one checkpointed \({other} is new\)"):
        w2v.train([str(topics), str(other)], cluster="local:2", resume=folder, threads=1)
    with pytest.raises(CorpusError, match=r"its part .* has changed"):  # a file without words: no replica of its own
        w2v.train([str(empty), str(topics)], cluster="local:2", resume=folder, threads=1)


def test_phrases_on_two_workers_are_the_phrases_of_one_process(cli, tmp_path):
    words = gzip.decompress((REPO / "data" / "sample.txt.gz").read_bytes()).split()
    corpus = tmp_path / "lines.txt"  # lines of 20 words: cut into parts at line ends
    corpus.write_bytes(b"".join(b" ".join(words[i : i + 20]) + b"\n" for i in range(0, len(words), 20)))
    common = ["--min-count", "3", "--threshold", "20", "--passes", "2", "-q"]
    here = cli("phrases", corpus, "-o", tmp_path / "here.txt", "--save-phrases", tmp_path / "here.tsv", *common)
    there = cli("phrases", corpus, "-o", tmp_path / "there", "--save-phrases", tmp_path / "there.tsv", *common,
                "--cluster", "local:2")  # fmt: skip
    assert here.returncode == 0 and there.returncode == 0, there.stderr.decode()
    assert (tmp_path / "here.tsv").read_bytes() == (tmp_path / "there.tsv").read_bytes()
    parts = sorted((tmp_path / "there").iterdir())
    assert len(parts) == 8 and [p.name for p in parts][:2] == ["part-00000.txt", "part-00001.txt"]
    assert b"".join(p.read_bytes() for p in parts) == (tmp_path / "here.txt").read_bytes()
    assert b"_" in (tmp_path / "here.txt").read_bytes()
    again = cli("phrases", corpus, "-o", tmp_path / "there", "--cluster", "local:2", "-q")
    assert again.returncode == 1 and again.stderr.endswith(
        b"exists: w2v phrases --cluster writes a new folder of parts\n"
    )


def test_on_epoch_end_on_a_cluster_sees_the_vectors_and_stops_the_run(topics, tmp_path):
    """The callback of one argument works on a cluster as in one process: the epoch from
    1, the combined vectors as they stand after its round, and True ends the run there."""
    seen = []

    def stop_after_two(end):
        seen.append((end.epoch, end.loss, end.vectors.copy()))
        return end.epoch == 2

    result = w2v.train(str(topics), cluster="local:1", threads=1, on_epoch_end=stop_after_two, **SETTINGS)
    assert [epoch for epoch, _, _ in seen] == [1, 2] and [loss for _, loss, _ in seen] == result.report.epoch_loss
    assert seen[-1][2].words == result.words and seen[-1][2].vectors.tobytes() == result.vectors.tobytes()
    assert result.report.train_words < SETTINGS["epochs"] * result.report.corpus_words
