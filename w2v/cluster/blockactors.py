"""Skip-gram NS trained in blocks on a Dask cluster: a ``BlockMachine`` as an actor on
each worker, the actors calling each other directly (``blockmachine``), the client
only telling them what to do next (``blockrun``).

Each actor encodes its own parts of the corpus on its worker, as ``rounds.Replica``
does, and learns where its batches sit among the run's (``locate``), which seeds
them as one process seeds its batches. The methods other actors call (the frames,
a right partition, input rows) are coroutines: Dask runs those on the worker's
event loop, not in the actor's one thread, so that an actor takes them while its
thread trains or waits on another actor. With one thread a worker the run's
weights are those of the same machines in one process (``blockrun``), byte for byte.
"""

import contextlib
import functools
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from w2v.cluster.blockmachine import BlockMachine, Schedule, Sent, Text
from w2v.cluster.blockrun import Start, gather, on_all, train_blocks
from w2v.cluster.connect import CONNECT_SECONDS, WAKE_SECONDS, Cluster
from w2v.cluster.pairs import Frames
from w2v.cluster.training import MAX_REPLACEMENTS, worker_lost
from w2v.config import TrainConfig
from w2v.corpus.idstream import encode_corpus
from w2v.corpus.parts import Part
from w2v.corpus.vocab import Vocab
from w2v.errors import ClusterLost


def encoded_text(parts: list[Part], vocab: Vocab, config: TrainConfig, workdir: str) -> Text:
    """``parts`` encoded with ``vocab`` in ``config``'s batches, end to end; placed at the
    run's batch 0 of 0 until ``locate``d."""
    stream = encode_corpus(parts, config, workdir, lambda _words, _counts: vocab).stream
    batches = [stream.batch(b).copy() for b in range(len(stream))]
    stream.close()
    starts = np.concatenate([[0], np.cumsum([len(batch) for batch in batches])]).astype(np.int64)
    tokens = np.concatenate(batches) if batches else np.empty(0, np.int32)
    return Text(tokens, starts, 0, 0)


class ClusterMachine:
    """A ``BlockMachine`` on a worker, over the text of its ``parts``: what the client
    and the other actors call, passed on to it."""

    def __init__(self, rank: int, parts: list[Part], vocab: Vocab, config: TrainConfig, schedule: Schedule):
        self.workdir = tempfile.TemporaryDirectory(prefix="w2v-blocks-")
        text = encoded_text(parts, vocab, config, self.workdir.name)
        self.machine = BlockMachine(rank, text, vocab, config, schedule)

    def batches(self) -> int:
        """The batches of this machine's text."""
        return len(self.machine.text.starts) - 1

    def locate(self, first: int, total: int) -> None:
        """This machine's batches are the run's ``first`` .. of ``total`` an epoch."""
        self.machine.text = self.machine.text._replace(first=first, total=total)

    def connect(self, peers: list[Any]) -> None:
        self.machine.connect(peers)

    def place(self, epoch: int, weights: tuple[np.ndarray, np.ndarray] | None) -> None:
        self.machine.place(epoch, weights)

    def send_inputs(self, epoch: int) -> None:
        self.machine.send_inputs(epoch)

    def take_inputs(self) -> None:
        self.machine.take_inputs()

    def make_pairs(self, epoch: int, sweep: int) -> None:
        self.machine.make_pairs(epoch, sweep)

    def train(self, epoch: int, sweep: int, substep: int) -> None:
        self.machine.train(epoch, sweep, substep)

    def held(self) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        return self.machine.held()

    def sent_so_far(self) -> Sent:
        return self.machine.sent_so_far()

    def trained(self) -> tuple[np.ndarray, np.ndarray, int]:
        return self.machine.trained()

    async def receive_frames(self, sender: int, frames: Frames) -> None:
        self.machine.receive_frames(sender, frames)

    async def receive_right(self, part: int, rows: np.ndarray) -> None:
        self.machine.receive_right(part, rows)

    async def receive_inputs(self, words: np.ndarray, rows: np.ndarray) -> None:
        self.machine.receive_inputs(words, rows)

    def close(self) -> None:
        self.machine.close()
        self.workdir.cleanup()


class MachinesRun(NamedTuple):
    """What a run in blocks on a cluster trains: ``groups`` of parts (a machine each)
    of ``config`` (skip-gram NS, resolved) over ``vocab``, ``sweeps`` sweeps an epoch."""

    groups: list[list[Part]]
    vocab: Vocab
    config: TrainConfig
    sweeps: int


class Machines(NamedTuple):
    """A run's machines on the cluster: their futures (an actor lives while its future
    does), their actors and the worker each is on."""

    futures: list[Any]
    actors: list[Any]
    workers: list[str]


def start_machines(cluster: Cluster, run: MachinesRun) -> Machines:
    """A ``ClusterMachine`` for each group of ``run``'s parts, each on a worker of its
    own, located among the run's batches and connected to the others."""
    workers, schedule = cluster.workers(), Schedule(len(run.groups), run.sweeps)
    where = [workers[rank % len(workers)] for rank in range(len(run.groups))]
    futures = [
        cluster.client.submit(ClusterMachine, rank, group, run.vocab, run.config, schedule, actor=True,
                              workers=[where[rank]], allow_other_workers=False, pure=False)
        for rank, group in enumerate(run.groups)
    ]  # fmt: skip
    actors = [cluster.result(future, on=worker) for future, worker in zip(futures, where, strict=True)]
    firsts = np.concatenate([[0], np.cumsum(on_all(actors, "batches"))]).astype(int)
    on_all(actors, "connect", actors)
    for actor, first in zip(actors, firsts, strict=False):
        actor.locate(int(first), int(firsts[-1])).result()
    return Machines(futures, actors, where)


def train_on_machines(cluster: Cluster, run: MachinesRun, start: Start,
                      after_sweep: Callable[[Start], None] | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Train ``run`` from ``start``; the weights (syn0, syn1neg). After each sweep the
    machines' rows are gathered (the whole model: every row has one owner) and
    ``after_sweep`` is given where the run would start again from them. A worker lost
    (``training.worker_lost``) sends the run back to the last sweep's end: new machines
    start from its rows once the cluster no longer lists the lost worker, and train as
    the first ones would have (byte for byte with one thread), up to
    ``MAX_REPLACEMENTS`` times; then ClusterLost."""
    saved = [start]
    for lost in range(MAX_REPLACEMENTS + 1):
        machines = start_machines(cluster, run)
        try:
            train_blocks(machines.actors, run.config.epochs, Schedule(len(run.groups), run.sweeps), saved[-1],
                         functools.partial(keep_sweep, run, machines.actors, saved, after_sweep))  # fmt: skip
            return gather(machines.actors, len(run.vocab), run.config.dim)
        except Exception as error:
            if not worker_lost(error):
                raise
            if lost == MAX_REPLACEMENTS:
                message = f"lost a worker again ({error}) after {MAX_REPLACEMENTS}, the most a run survives"
                raise ClusterLost(message) from None
            without_lost(cluster, set(machines.workers), len(run.groups))
        finally:
            with contextlib.suppress(Exception):  # a lost worker's actor has nothing left to close
                on_all(machines.actors, "close")
    raise AssertionError("the loop returns or raises")


def keep_sweep(run: MachinesRun, actors: list[Any], saved: list[Start], after_sweep, epoch: int, sweep: int) -> None:
    """After sweep ``sweep`` of epoch ``epoch``: the run's rows and where it goes on, into ``saved``."""
    after = Start(epoch, sweep + 1) if sweep + 1 < run.sweeps else Start(epoch + 1, 0)
    saved.append(after._replace(weights=gather(actors, len(run.vocab), run.config.dim)))
    if after_sweep is not None:
        after_sweep(saved[-1])


def without_lost(cluster: Cluster, used: set[str], count: int) -> list[str]:
    """The workers, once the cluster lists ``count`` and no longer all of ``used``
    (a lost worker's address leaves the list; one started again has another), or
    whatever it lists after ``CONNECT_SECONDS``."""
    deadline = time.monotonic() + CONNECT_SECONDS
    while time.monotonic() < deadline:
        workers = cluster.workers()
        if len(workers) >= count and not used <= set(workers):
            return workers
        time.sleep(WAKE_SECONDS)
    return cluster.wait_for_workers()
