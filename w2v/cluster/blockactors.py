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
from typing import Any

import numpy as np

from w2v.cluster.blockmachine import BlockMachine, Schedule, Sent, Text
from w2v.cluster.blockrun import Start, gather, on_all, train_blocks
from w2v.cluster.connect import Cluster
from w2v.cluster.pairs import Frames
from w2v.config import TrainConfig
from w2v.corpus.idstream import encode_corpus
from w2v.corpus.parts import Part
from w2v.corpus.vocab import Vocab


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


def start_machines(cluster: Cluster, groups: list[list[Part]], vocab: Vocab, config: TrainConfig,
                   schedule: Schedule) -> list[Any]:  # fmt: skip
    """A ``ClusterMachine`` of ``schedule`` for each group of parts, each on a worker of
    its own, located among the run's batches and connected to the others. Returns
    their futures (an actor lives while its future does) then their actors."""
    workers = cluster.workers()
    futures = [
        cluster.client.submit(ClusterMachine, rank, group, vocab, config, schedule, actor=True,
                              workers=[workers[rank % len(workers)]], allow_other_workers=False, pure=False)
        for rank, group in enumerate(groups)
    ]  # fmt: skip
    actors = [future.result() for future in futures]
    sizes = on_all(actors, "batches")
    firsts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    for actor, first in zip(actors, firsts, strict=False):
        actor.locate(int(first), int(firsts[-1])).result()
    on_all(actors, "connect", actors)
    return [futures, actors]


def train_on_machines(cluster: Cluster, groups: list[list[Part]], vocab: Vocab, config: TrainConfig,
                      sweeps: int, start: Start) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Train ``config`` (skip-gram NS, resolved) in blocks, ``sweeps`` sweeps an epoch,
    on a machine a group of parts; the weights (syn0, syn1neg)."""
    schedule = Schedule(len(groups), sweeps)
    futures, actors = start_machines(cluster, groups, vocab, config, schedule)
    try:
        train_blocks(actors, config.epochs, schedule, start)
        return gather(actors, len(vocab), config.dim)
    finally:
        on_all(actors, "close")
        del futures
