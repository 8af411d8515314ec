"""Connecting to a Dask cluster (``--cluster``): one started on this machine, or one running elsewhere.

``local:N`` starts a ``LocalCluster`` of N worker processes here, each running one
task at a time; ``tcp://HOST:PORT`` (any Dask address) or the path of a scheduler
file (``dask scheduler --scheduler-file``) joins a running cluster. Dask is an
optional extra (``pip install 'w2v[dask]'``), imported only here and only when a
cluster is asked for.

The workers read the corpus themselves: ``worker_sources`` refuses what they cannot
read (standard input, a pipe, a local file that is not on their machines).
"""

import asyncio
import json
import logging
import multiprocessing
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from w2v.corpus.parts import Part, groups_of, holds_words
from w2v.corpus.sources import is_stream
from w2v.errors import ClusterLost, ConfigError, CorpusError, plural
from w2v.files import is_url
from w2v.progress import note
from w2v.version import __version__

LOCAL = re.compile(r"local:(\d+)")
ADDRESS = re.compile(r"[a-z0-9+]+://\S+")
TASKS_PER_WORKER = 4  # runs of parts a worker is sent to count or check (runs_for)
CONNECT_SECONDS = 5  # to reach a scheduler, and for a worker to join it
WAKE_SECONDS = 0.1  # the longest a wait for futures can miss one that finished
DASK_SETTINGS = {  # a lost worker is noticed within seconds, not after Dask's default 30 s
    "distributed.comm.timeouts.connect": f"{CONNECT_SECONDS}s",
    "distributed.scheduler.worker-ttl": "30s",
}


def import_distributed() -> Any:
    """``dask.distributed``, or ConfigError naming the extra to install."""
    try:
        import dask.distributed
    except ImportError:
        raise ConfigError("--cluster needs Dask: pip install 'w2v[dask]' (or dask[distributed])") from None
    return dask.distributed


@dataclass
class Cluster:
    """A connected cluster: the ``client``, whether its workers are on this machine
    (``local``: they read the files this machine reads), and the threads each worker trains with."""

    client: Any  # dask.distributed.Client
    address: str  # as the user gave it
    local: bool
    threads: int

    def workers(self) -> list[str]:
        """The addresses of the workers connected now, sorted."""
        return sorted(self.client.scheduler_info()["workers"])

    def wait_for_workers(self, count: int = 1) -> list[str]:
        """The workers, once at least ``count`` are connected (ConfigError if they are not
        within ``CONNECT_SECONDS``)."""
        try:
            self.client.wait_for_workers(count, timeout=CONNECT_SECONDS)
        except (TimeoutError, OSError):
            raise ConfigError(
                f"the cluster at {self.address} has {plural(len(self.workers()), 'worker')}, "
                f"not {count} or more, after {CONNECT_SECONDS} s: start workers (dask worker ADDRESS)"
            ) from None
        return self.workers()

    def completed(self, futures: list, on: str | None = None) -> Iterator[Any]:
        """``futures`` as they finish (or fail), waited for in spells of
        ``CONNECT_SECONDS``, where Dask would wait for workers to join. After a spell
        with none finished: ConfigError (``wait_for_workers``) if the cluster has no
        worker left, ConnectionError if it has lost the worker ``on``, the one the
        futures must run on."""
        waiting = import_distributed().as_completed(futures)
        spell = time.monotonic()
        while not waiting.is_empty():
            if waiting.has_ready():
                yield from waiting.next_batch(block=False)
                spell = time.monotonic()
            elif time.monotonic() - spell >= CONNECT_SECONDS:
                workers = self.wait_for_workers()
                if on is not None and on not in workers:
                    raise ConnectionError(f"the worker {on} left the cluster")
                spell = time.monotonic()
            else:
                with waiting.thread_condition:  # notified as each future finishes, as as_completed's own next
                    waiting.thread_condition.wait(timeout=WAKE_SECONDS)

    def result(self, future: Any, on: str | None = None) -> Any:
        """``future.result()``, once it finishes (``completed``)."""
        for done in self.completed([future], on):
            return done.result()


def parse_address(address: str) -> tuple[str, int | str]:
    """("local", N) for ``local:N``, ("address", ADDRESS) for a scheduler's address,
    ("file", PATH) for a scheduler file; ConfigError for anything else."""
    if (local := LOCAL.fullmatch(address)) is not None:
        workers = int(local.group(1))
        if workers < 1:
            raise ConfigError("--cluster local:N needs N >= 1 worker processes")
        return "local", workers
    if ADDRESS.fullmatch(address):
        return "address", address
    if os.path.isfile(address):
        return "file", address
    raise ConfigError(
        f"--cluster must be local:N, a scheduler's address (tcp://HOST:PORT) or a scheduler file, not {address!r}"
    )


@contextmanager
def connect(address: str, threads: int | None) -> Iterator[Cluster]:
    """Start or join the cluster ``address`` (see ``parse_address``) for the block.
    ``threads``: each worker's training threads; by default the cores over the
    workers for ``local:N``, else each worker's own thread count (``dask worker --nthreads``).
    The client talks to the workers directly where it can reach them (``reaches_workers``;
    always for ``local:N``), else through the scheduler."""
    kind, where = parse_address(address)
    distributed = import_distributed()
    import dask

    with dask.config.set(DASK_SETTINGS), quiet_logs():
        if kind == "local":
            assert isinstance(where, int)
            per_worker = threads or max((os.cpu_count() or 1) // where, 1)
            with (
                closed_after(local_cluster(distributed, where)) as local,
                distributed.Client(local, direct_to_workers=True) as client,
            ):
                cluster = Cluster(client, address, True, per_worker)
                cluster.wait_for_workers(where)
                yield cluster
            return
        with joined(distributed, kind, str(where)) as client:
            cluster = Cluster(client, address, False, threads or 0)
            workers = cluster.wait_for_workers()
            check_same_w2v(client, workers)
            client.direct_to_workers = reaches_workers(client, workers)
            if not threads:
                cluster.threads = min(client.scheduler_info()["workers"][w]["nthreads"] for w in workers)
            with scheduler_kept(client, address):
                yield cluster


@contextmanager
def scheduler_kept(client: Any, address: str) -> Iterator[None]:
    """Raise ClusterLost for whatever the block raises once ``client`` has lost its
    scheduler (it then cancels every future, and the calls to actors, the waits for
    workers and the results fail each in its own way)."""
    try:
        yield
    except Exception:
        if client.status not in ("connecting", "closed"):
            raise
        raise ClusterLost(f"lost the connection to the Dask scheduler at {address}") from None


@contextmanager
def closed_after(local: Any) -> Iterator[Any]:
    """``local`` (a ``LocalCluster``) for the block, closed after it. Dask's own record
    of the cluster's workers can fall out of step with the scheduler's once a worker
    is lost (dask/distributed#5407: a worker's removal looked up where it is no longer
    listed); the KeyError then comes out of closing, after the workers and the
    scheduler have stopped, and would fail a run that had finished."""
    try:
        yield local
    finally:
        with suppress(KeyError):
            local.close()


def local_cluster(distributed: Any, workers: int) -> Any:
    """A ``LocalCluster`` of ``workers`` one-task processes, started with Ctrl-C left to
    this process. Each worker process starts by importing this process' main module
    again, as Python's spawn does: a script that calls w2v at its top level, not under
    ``if __name__ == "__main__":``, would have each start a cluster of its own. There
    (the import of a process being spawned) this exits quietly, and here the workers
    that did not start are one ConfigError naming the guard."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):  # as multiprocessing checks it
        raise SystemExit(1)
    try:
        with interrupts_for_this_process_alone():
            return distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                memory_limit=0,
                preload=["w2v.cluster.connect"],  # dask_setup, in each worker process as it starts
                dashboard_address="127.0.0.1:0",  # the HTTP server Dask always starts: a free local port
                silence_logs=logging.CRITICAL,  # its workers' log lines too (a heartbeat lost as it closes)
            )
    except RuntimeError as error:
        raise ConfigError(
            f"the worker processes of local:{workers} did not start ({error}); in a script, call w2v under "
            "'if __name__ == \"__main__\":', as each worker process imports the script again"
        ) from None


def check_same_w2v(client: Any, workers: list[str]) -> None:
    """ConfigError unless each of ``workers`` has this w2v installed (its version, as
    Dask reads it from the installed package): a worker without it cannot unpickle
    w2v's tasks, and leaves the cluster as it tries."""
    found = client.get_versions(packages=["w2v"])["workers"]
    for worker in workers:
        theirs = ((found.get(worker) or {}).get("packages") or {}).get("w2v")
        if theirs != __version__:
            has = "no w2v" if theirs is None else f"w2v {theirs}"
            raise ConfigError(
                f"the worker {worker} has {has}, this machine w2v {__version__}: install the same "
                f"on every worker (pip install 'w2v[dask]=={__version__}')"
            )


@contextmanager
def interrupts_for_this_process_alone() -> Iterator[None]:
    """Ignore SIGINT while the block starts worker processes, which inherit that (and
    only that: a handler is not inherited). A Ctrl-C at the terminal, which reaches
    every process of its foreground group, then interrupts this process alone, which
    checkpoints and stops the workers, instead of each worker too, with its traceback.
    A Ctrl-C during the block is lost. Only the main thread sets handlers: called
    from another, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def dask_setup(worker: Any) -> None:
    """Run by Dask in each worker process of ``local:N`` as it starts (``preload``),
    one that its nanny starts again after a loss too: ignore SIGINT there, as
    ``interrupts_for_this_process_alone`` makes the first workers do, so that a
    Ctrl-C at the terminal stops this process alone. A worker started again
    outside that block would otherwise stop at a Ctrl-C with its traceback."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def reaches_workers(client: Any, workers: list[str]) -> bool:
    """Whether ``client`` can connect to each of ``workers`` itself (within
    ``CONNECT_SECONDS``). Where it can, the replicas' calls and their weights go
    straight to their workers; where it cannot (workers behind the scheduler's
    network), through the scheduler, which then carries every round's rows twice."""

    async def identify_each() -> None:
        for worker in workers:
            await asyncio.wait_for(client.rpc(worker).identity(), CONNECT_SECONDS)

    try:
        client.sync(identify_each)
    except (OSError, TimeoutError):
        return False
    return True


@contextmanager
def joined(distributed: Any, kind: str, where: str) -> Iterator[Any]:
    """A client of the running scheduler at ``where`` (an address, or a scheduler file);
    ConfigError if it cannot be reached within ``CONNECT_SECONDS``, or does not answer
    as a Dask scheduler within twice that."""
    address = scheduler_address_in(where) if kind == "file" else where
    client = answered(lambda: distributed.Client(address, timeout=CONNECT_SECONDS), where)
    with client:
        yield client


def scheduler_address_in(path: str) -> str:
    """The scheduler's address that the scheduler file ``path`` holds (JSON, as ``dask
    scheduler --scheduler-file`` writes it); ConfigError if it holds none."""
    try:
        with open(path, encoding="utf-8") as file:
            address = json.load(file).get("address")
    except (OSError, ValueError, AttributeError):  # unreadable, not JSON, not a JSON object
        address = None
    if not isinstance(address, str):
        raise ConfigError(f"{path} is not a Dask scheduler file (JSON with the scheduler's address)")
    return address


def answered(make: Callable[[], Any], where: str) -> Any:
    """``make()``, a Dask client, if it returns within 2 x ``CONNECT_SECONDS``. Dask
    bounds the connection but waits for the scheduler's handshake without a limit, so
    that an address where something else listens (a web server) would hang the run:
    the client starts in a thread of its own, left behind if it does not return. A
    failure to connect (or a TLS address without Dask's TLS settings) is ConfigError."""
    made: list[Any] = []
    failed: list[Exception] = []

    def start() -> None:
        try:
            made.append(make())
        except Exception as error:
            failed.append(error)

    thread = threading.Thread(target=start, name="w2v-connect", daemon=True)
    thread.start()
    thread.join(2 * CONNECT_SECONDS)
    if thread.is_alive():
        raise ConfigError(
            f"no Dask scheduler answered at {where} within {2 * CONNECT_SECONDS} s (something else listens there, "
            "or the scheduler is stuck)"
        )
    if failed:
        if isinstance(failed[0], (OSError, TimeoutError, ValueError, TypeError)):
            raise ConfigError(f"cannot reach the Dask scheduler at {where} within {CONNECT_SECONDS} s: {failed[0]}")
        raise failed[0]
    return made[0]


@contextmanager
def quiet_logs() -> Iterator[None]:
    """Dask's own log lines (a worker restarted, a connection closed) kept off stderr
    for the block: w2v reports what matters to the run itself."""
    names = ["distributed", *(name for name in logging.root.manager.loggerDict if name.startswith("distributed."))]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]  # some of Dask's own (distributed.client) set theirs
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def worker_sources(cluster: Cluster, sources: list[str]) -> list[str]:
    """``sources`` as the workers must name them: local files by their absolute paths
    (a worker runs in a folder of its own), URLs as they are. CorpusError for a source
    the workers cannot read: standard input or a pipe (this process's alone), or a
    local file missing on a worker of a remote cluster."""
    for source in sources:
        if is_stream(source):
            raise CorpusError(
                f"--cluster reads the corpus on the workers: {'standard input' if source == '-' else source} "
                "cannot be shared; write it to a file they can read"
            )
    named = [source if is_url(source) else os.path.abspath(source) for source in sources]
    local = [source for source in named if not is_url(source)]
    if cluster.local or not local:
        return named
    seen = cluster.client.run(lambda: [os.path.isfile(source) for source in local])
    for worker, found in sorted(seen.items()):
        missing = [source for source, there in zip(local, found, strict=True) if not there]
        if missing:
            raise CorpusError(
                f"corpus file {missing[0]} is not on the cluster's worker {worker}: put the corpus on a "
                "filesystem every worker mounts at the same path, or give a URL (s3://, gs://, hdfs://, https://)"
            )
    return named


def parts_with_words(cluster: Cluster, parts: list[Part]) -> list[Part]:
    """The ``parts`` that hold a word (``parts.holds_words``, asked of the workers a
    run of parts a task, ``runs_for``): the others (empty files, whitespace, the parts
    past a file's only line end) have no work."""
    found = [cluster.client.submit(words_in, run, pure=False) for run in runs_for(cluster, parts)]
    held = [words for future in found for words in cluster.result(future)]
    return [part for part, words in zip(parts, held, strict=True) if words]


def runs_for(cluster: Cluster, parts: list[Part]) -> list[list[Part]]:
    """``parts`` as contiguous runs of about equal bytes (``parts.groups_of``), up to
    ``TASKS_PER_WORKER`` a worker of ``cluster``, to send a task a run: a task a part
    would cost a round trip a file in a folder of thousands, and several a worker
    keep a slow run from holding the others up."""
    runs = groups_of(parts, max(min(len(parts), TASKS_PER_WORKER * len(cluster.workers())), 1))
    return [run for run in runs if run]


def words_in(parts: list[Part]) -> list[bool]:
    """Whether each of ``parts`` holds a word (``parts.holds_words``): a task of ``parts_with_words``."""
    return [holds_words(part) for part in parts]


def note_idle_workers(parts: int, workers: int, show: bool, lines: bool = False, empty: int = 0) -> None:
    """Say on stderr (when ``show``) that only some of the ``workers`` have work, where
    the corpus is fewer ``parts`` than that, or ``empty`` of them hold no word: parts are
    cut at whitespace, or at line ends (``lines``, for phrases), and a compressed file
    or a URL is one."""
    working = parts - empty
    if working >= workers:
        return
    whole = "a compressed file or a URL is one part"
    if lines:
        whole = "a file of one line, a compressed file or a URL is one part"
    held = f", {empty} without words" if empty else ""
    work = "has work" if working == 1 else "have work"
    hint = f"{whole}; give several files to use them all"
    note(f"the corpus is {plural(parts, 'part')}{held}: {working} of the {workers} workers {work} ({hint})", show)
