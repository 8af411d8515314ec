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

import tempfile
import time
from typing import Any, NamedTuple

import numpy as np

from w2v.cluster.blockmachine import BlockMachine, Rows, Schedule, Sent, Text, sweep_words
from w2v.cluster.blockrun import on_all
from w2v.cluster.blocks import Plan
from w2v.cluster.connect import CONNECT_SECONDS, WAKE_SECONDS, Cluster
from w2v.cluster.pairs import Frames
from w2v.config import TrainConfig
from w2v.corpus.idstream import encode_corpus
from w2v.corpus.parts import Part
from w2v.corpus.vocab import Vocab


class Fingerprint(NamedTuple):
    """A machine's text as encoded: its batches, words and the CRC-32 of its ids (a
    resumed run checks them, ``runs.check_same_groups``), and whether two words of it
    stand side by side in a sentence (``idstream.check_trainable``)."""

    batches: int
    words: int
    digest: int
    neighbours: bool


def encoded_text(parts: list[Part], vocab: Vocab, config: TrainConfig, workdir: str) -> tuple[Text, Fingerprint]:
    """``parts`` encoded with ``vocab`` in ``config``'s batches, end to end, placed at the
    run's batch 0 of 0 until ``locate``d; and its fingerprint."""
    encoded = encode_corpus(parts, config, workdir, lambda _words, _counts: vocab)
    stream = encoded.stream
    batches = [stream.batch(b).copy() for b in range(len(stream))]
    stream.close()
    starts = np.concatenate([[0], np.cumsum([len(batch) for batch in batches])]).astype(np.int64)
    tokens = np.concatenate(batches) if batches else np.empty(0, np.int32)
    return Text(tokens, starts, 0, 0), Fingerprint(len(batches), stream.words, encoded.digest, encoded.neighbours)


class ClusterMachine:
    """A ``BlockMachine`` on a worker, over the text of its ``parts``: what the client
    and the other actors call, passed on to it."""

    def __init__(self, rank: int, parts: list[Part], vocab: Vocab, config: TrainConfig, schedule: Schedule):
        self.workdir = tempfile.TemporaryDirectory(prefix="w2v-blocks-")
        text, self.encoded = encoded_text(parts, vocab, config, self.workdir.name)
        self.machine = BlockMachine(rank, text, vocab, config, schedule)

    def fingerprint(self) -> Fingerprint:
        return self.encoded

    def sweep_words(self) -> np.ndarray:
        """The words each sweep of this machine's text trains, (S,) int64."""
        return sweep_words(self.machine.text, self.machine.schedule.sweeps)

    def locate(self, first: int, total: int) -> None:
        """This machine's batches are the run's ``first`` .. of ``total`` an epoch."""
        self.machine.text = self.machine.text._replace(first=first, total=total)

    def connect(self, peers: list[Any]) -> None:
        self.machine.connect(peers)

    def epoch_plan(self, epoch: int) -> Plan:
        return self.machine.epoch_plan(epoch)

    def place(self, epoch: int, rows: Rows | None) -> None:
        self.machine.place(epoch, rows)

    def send_inputs(self, epoch: int) -> None:
        self.machine.send_inputs(epoch)

    def take_inputs(self) -> None:
        self.machine.take_inputs()

    def make_pairs(self, epoch: int, sweep: int) -> None:
        self.machine.make_pairs(epoch, sweep)

    def start_pairs(self, epoch: int, sweep: int) -> None:
        self.machine.start_pairs(epoch, sweep)

    def finish_pairs(self) -> None:
        self.machine.finish_pairs()

    def train(self, epoch: int, sweep: int, substep: int) -> None:
        self.machine.train(epoch, sweep, substep)

    def held(self) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        return self.machine.held()

    def sent_so_far(self) -> Sent:
        return self.machine.sent_so_far()

    def trained(self) -> tuple[np.ndarray, np.ndarray, int]:
        return self.machine.trained()

    async def receive_frames(self, sender: int, position: tuple[int, int], frames: Frames) -> None:
        self.machine.receive_frames(sender, position, frames)

    async def receive_right(self, part: int, rows: np.ndarray) -> None:
        self.machine.receive_right(part, rows)

    async def receive_inputs(self, words: np.ndarray, rows: np.ndarray) -> None:
        self.machine.receive_inputs(words, rows)

    def close(self) -> None:
        self.machine.close()
        self.workdir.cleanup()


class MachinesRun(NamedTuple):
    """What a run in blocks on a cluster trains: ``groups`` of parts (a machine each)
    of ``config`` (skip-gram NS, resolved; ``config.sweeps`` an epoch) over ``vocab``."""

    groups: list[list[Part]]
    vocab: Vocab
    config: TrainConfig


class Machines(NamedTuple):
    """A run's machines on the cluster: their futures (an actor lives while its future
    does), their actors and the worker each is on."""

    futures: list[Any]
    actors: list[Any]
    workers: list[str]


def start_machines(cluster: Cluster, run: MachinesRun) -> Machines:
    """A ``ClusterMachine`` for each group of ``run``'s parts, on the workers in turn
    (several a worker where there are fewer workers than groups: a resumed run keeps
    its machines to the end of the epoch under way), located among the run's batches and connected to the others."""
    workers, schedule = cluster.workers(), Schedule(len(run.groups), run.config.sweeps)
    where = [workers[rank % len(workers)] for rank in range(len(run.groups))]
    futures = [
        cluster.client.submit(ClusterMachine, rank, group, run.vocab, run.config, schedule, actor=True,
                              workers=[where[rank]], allow_other_workers=False, pure=False)
        for rank, group in enumerate(run.groups)
    ]  # fmt: skip
    actors = [cluster.result(future, on=worker) for future, worker in zip(futures, where, strict=True)]
    firsts = np.concatenate([[0], np.cumsum([found.batches for found in on_all(actors, "fingerprint")])]).astype(int)
    on_all(actors, "connect", actors)
    for actor, first in zip(actors, firsts, strict=False):
        actor.locate(int(first), int(firsts[-1])).result()
    return Machines(futures, actors, where)


def machines_here(run: MachinesRun, workdir: str) -> list[BlockMachine]:
    """The machines ``start_machines`` starts for ``run``, as objects of this process
    (a simulation of the same run: ``blockrun``), connected to each other; their
    texts encoded under ``workdir``."""
    schedule = Schedule(len(run.groups), run.config.sweeps)
    texts = [encoded_text(group, run.vocab, run.config, workdir)[0] for group in run.groups]
    firsts = np.concatenate([[0], np.cumsum([len(text.starts) - 1 for text in texts])]).astype(int)
    machines = [
        BlockMachine(rank, text._replace(first=int(firsts[rank]), total=int(firsts[-1])), run.vocab, run.config,
                     schedule)
        for rank, text in enumerate(texts)
    ]  # fmt: skip
    for machine in machines:
        machine.connect(machines)
    return machines


def without_lost(cluster: Cluster, used: set[str]) -> list[str]:
    """The workers, once the cluster lists as many as ``used`` (the workers a run's
    machines were on) and no longer all of them (a lost worker's address leaves the
    list; one started again has another), or whatever it lists after ``CONNECT_SECONDS``."""
    deadline = time.monotonic() + CONNECT_SECONDS
    while time.monotonic() < deadline:
        workers = cluster.workers()
        if len(workers) >= len(used) and not used <= set(workers):
            return workers
        time.sleep(WAKE_SECONDS)
    return cluster.wait_for_workers()
