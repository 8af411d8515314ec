"""Skip-gram NS trained in blocks on a cluster, the client's side: the machines' groups
of parts, the run's progress, its checkpoints, lost workers and its result.

A fresh run cuts the corpus into a group of parts a worker (``runs.worker_groups``),
a machine each (``blockactors``); a resumed run keeps its checkpoint's machines,
whatever the workers now (several a worker where there are fewer), so that it goes on
as the uninterrupted run would have, to the end of the epoch under way where the
workers are not as many as its machines: then it goes on with a machine a worker
(``regroup``). The client only tells the machines what comes
next (``blockrun.train_blocks``); after each sweep it asks them for their loss and
pairs so far and moves the bar.

At each epoch's end, and after a sweep where a checkpoint is due
(``checkpoint_every``), the client gathers the machines' rows (every row has one
owner: their union is the model, ``blockrun.gather``): what a checkpoint saves,
``on_epoch_end`` sees, and a lost worker sends the run back to. A gathering moves
``2 V D 4`` bytes into the client, so it happens no more often than that.

A worker lost (``runs.worker_lost``) sends the run back to its last gathered rows:
new machines start from them once the cluster no longer lists the lost worker, and
train as the first would have (byte for byte with one thread), up to
``MAX_REPLACEMENTS`` times; then ``ClusterLost``, which keeps the checkpoint.
"""

import contextlib
import dataclasses
import functools
import time
from typing import Any, NamedTuple

import numpy as np

from w2v.cluster.blockactors import MachinesRun, start_machines, without_lost
from w2v.cluster.blockmachine import Schedule, Sent, sweep_batches
from w2v.cluster.blockrun import Start, gather, on_all, sent_total, train_blocks
from w2v.cluster.connect import Cluster
from w2v.cluster.runs import (
    ClusterPlan,
    ClusterResult,
    check_same_groups,
    check_same_sources,
    checkpointed_groups,
    cluster_vocab,
    group_record,
    survive,
    worker_groups,
)
from w2v.config import TrainConfig
from w2v.corpus.idstream import check_trainable
from w2v.corpus.parts import Part
from w2v.engine.runloop import Hooks, RunLoop
from w2v.errors import CorpusError, plural
from w2v.progress import note
from w2v.report import BlockTraffic
from w2v.vectorio.modelfile import TrainState, checkpoint_path


class Kept(NamedTuple):
    """The run as of its last gathered rows: the epoch and sweep it goes on at, the
    weights ((V, D) syn0 and syn1neg) and each epoch's loss (nats, summed) and pairs
    up to there; ``fresh``: the weights are word2vec.c's start, which each machine
    draws for its own rows rather than be sent them."""

    epoch: int
    sweep: int
    weights: tuple[np.ndarray, np.ndarray]
    loss: np.ndarray  # (epochs,) float64
    pairs: np.ndarray  # (epochs,) int64
    fresh: bool = False

    def start(self) -> Start:
        """Where machines started from these rows begin."""
        return Start(self.epoch, self.sweep, None if self.fresh else self.weights)


def regroup_note(machines: int, groups: int, position: dict) -> str:
    """What a run resumed at ``position`` (its checkpoint's ``blocks``) on another number
    of workers than its ``machines`` does: it finishes the epoch under way on them (the
    same arithmetic), then goes on with ``groups`` machines."""
    going_on = f"goes on with {plural(groups, 'machine')}, the corpus cut for this cluster's workers"
    if position["sweep"] == 0:
        return f"resuming a run of {plural(machines, 'machine')} at an epoch's start: it {going_on}"
    finishing = f"the checkpoint's {plural(machines, 'machine')} finish epoch {position['epoch'] + 1}"
    return f"{finishing}; then the run {going_on}"


def train_in_blocks(cluster: Cluster, sources: list[str], config: TrainConfig, plan: ClusterPlan,
                    hooks: Hooks) -> ClusterResult:  # fmt: skip
    """Count, encode and train ``sources`` (as ``worker_sources`` names them) in blocks
    on ``cluster`` as the module says, or go on with ``plan.resumed``; checkpoint as
    ``hooks`` says into ``plan.checkpoint``."""
    resumed = plan.resumed
    if resumed is None:
        vocab, corpus_words = cluster_vocab(cluster, sources, config, plan.choose, hooks.show_progress)
        groups = worker_groups(cluster, sources, hooks.show_progress)
        model = plan.start(vocab)
        zeros = np.zeros(config.epochs)
        kept = Kept(0, 0, (model.syn0, model.tables.syn1neg), zeros, zeros.astype(np.int64), plan.fresh)
        run = BlockRun(cluster, MachinesRun(groups, vocab, config), kept, hooks)
        run.corpus_words, run.notes = corpus_words, plan.notes
    else:
        check_same_sources(cluster, resumed, sources)
        run = BlockRun.resumed(cluster, resumed, hooks)
        groups = worker_groups(cluster, sources, hooks.show_progress)
        if len(groups) != len(run.run.groups):
            run.regroup = groups
            note(regroup_note(len(run.run.groups), len(groups), resumed.blocks), hooks.show_progress)
    run.checkpoint, run.vocabulary = plan.checkpoint, plan.vocabulary
    if plan.vectors is not None:
        view = plan.vectors
        run.hooks = dataclasses.replace(run.hooks, vectors=lambda: view(run.run.vocab, run.kept.weights[0]))
    started = time.perf_counter()
    run.train()
    seconds = time.perf_counter() - started
    losses = [run.epoch_loss(epoch) for epoch in range(min(run.kept.epoch, config.epochs))]
    words = run.words_at(run.kept.epoch, run.kept.sweep) - run.words_at(run.first.epoch, run.first.sweep)
    traffic = BlockTraffic(len(run.run.groups), run.run.config.sweeps, words, seconds, *run.sent)
    return ClusterResult(run.state(), losses, replaced=run.replaced, traffic=traffic)


class BlockRun:
    """The client's side of a run in blocks: what it has kept, and its machines while they run."""

    def __init__(self, cluster: Cluster, run: MachinesRun, kept: Kept, hooks: Hooks):
        self.cluster, self.run, self.kept, self.hooks = cluster, run, kept, hooks
        self.first = self.base = kept  # the run as this run, and the machines now training, started from it
        self.loss, self.pairs = kept.loss.copy(), kept.pairs.copy()  # each epoch's so far
        self.found: list[Any] = []  # each machine's ``Fingerprint``, from the first machines
        self.sweep_words = np.zeros(run.config.sweeps, np.int64)  # the words each sweep trains, all machines'
        self.expected: TrainState | None = None  # a resumed run's checkpoint, to check the machines against
        self.regroup: list[list[Part]] | None = None  # the groups to go on with from the next epoch's start
        self.checked = False  # whether ``check_machines`` has seen the machines of these groups
        self.sent = Sent()  # bytes the machines sent each other, over every start
        self.replaced = 0
        self.corpus_words = 0
        self.notes: dict = {}
        self.checkpoint: str | None = None  # folder
        self.vocabulary: str | None = None  # the file the vocabulary was read from, if any

    @classmethod
    def resumed(cls, cluster: Cluster, state: TrainState, hooks: Hooks) -> "BlockRun":
        """The run checkpointed in ``state``, at its sweep, on its machines' parts."""
        config = dataclasses.replace(state.config, threads=cluster.threads)
        weights = (state.syn0, state.syn1neg)
        kept = Kept(state.blocks["epoch"], state.blocks["sweep"], weights, state.epoch_loss, state.epoch_examples)
        run = cls(cluster, MachinesRun(checkpointed_groups(state), state.vocab, config), kept, hooks)
        run.corpus_words, run.notes, run.expected = state.corpus_words, state.notes, state
        return run

    def train(self) -> None:
        """Sweeps until the run has trained all its epochs or an ``on_epoch_end``
        callback stops it, on new machines after a lost worker, and on the machines
        of ``regroup`` from the next epoch's start where it is given. With a checkpoint
        folder, the run is saved after each epoch, every ``hooks.checkpoint_seconds``
        (at a sweep's end) and when interrupted (as of its last gathered rows)."""
        hooks, folder = self.hooks, self.checkpoint
        if folder is not None:
            hooks = dataclasses.replace(hooks, checkpoint=lambda: self.state().save(checkpoint_path(folder)))
        loop: RunLoop | None = None
        with contextlib.ExitStack() as stack:
            while True:
                if self.regroup is not None and self.kept.sweep == 0:
                    self.run, self.regroup, self.checked = self.run._replace(groups=self.regroup), None, False
                machines = start_machines(self.cluster, self.run)
                try:
                    if not self.checked:
                        self.check_machines(machines.actors)
                    if loop is None:
                        total = int(self.sweep_words.sum()) * self.run.config.epochs
                        loop = RunLoop(self.run.config, hooks, total=total, reported=self.kept.epoch)
                        loop.open_bar(self.words_at(self.kept.epoch, self.kept.sweep))
                        stack.enter_context(loop.closing_bar())
                        stack.enter_context(loop.saved_if_stopped())
                    if self.train_machines(machines.actors, loop):
                        return
                except Exception as error:
                    survive(error, self.replaced)
                    self.replaced += 1
                    without_lost(self.cluster, set(machines.workers))
                finally:
                    with contextlib.suppress(Exception):  # a lost worker's actor has nothing left to close
                        on_all(machines.actors, "close")

    def check_machines(self, actors: list[Any]) -> None:
        """Learn what the machines of these groups encoded; CorpusError where it gives
        training nothing (``idstream.check_trainable``) or is not what a resumed run's
        machines encoded (the same groups: each one's batches, words and ids; other
        groups: the words)."""
        self.found = on_all(actors, "fingerprint")
        self.sweep_words = np.sum(on_all(actors, "sweep_words"), axis=0).astype(np.int64)
        words = sum(found.words for found in self.found)
        neighbours = any(found.neighbours for found in self.found)
        check_trainable(words, neighbours=neighbours, tokens=self.corpus_words, vocabulary=self.vocabulary)
        expected = self.expected
        if expected is not None and len(expected.replicas) == len(self.run.groups):
            prints = [(found.batches, found.words, found.digest) for found in self.found]
            check_same_groups(expected.replicas, prints, self.run.groups)
        elif expected is not None and words != expected.stream_words:
            raise CorpusError(
                f"the corpus is not the one checkpointed: it holds {words:,} words of the vocabulary, "
                f"the checkpoint's {expected.stream_words:,}"
            )
        self.checked = True

    def train_machines(self, actors: list[Any], loop: RunLoop) -> bool:
        """Train on ``actors`` from the rows kept, to the run's end, a callback's stop or
        the end of the epoch after which the run goes on regrouped; keep the rows at the
        end; add up the bytes they sent. Whether the run is over."""
        self.base, config = self.kept, self.run.config
        schedule = Schedule(len(self.run.groups), config.sweeps)
        after_sweep = functools.partial(self.after_sweep, actors, loop)
        finished = train_blocks(actors, config.epochs, schedule, self.kept.start(), after_sweep)
        if finished and self.kept.epoch < config.epochs:  # else a finished run's checkpoint: nothing trained
            self.keep(actors, config.epochs, 0)
        self.sent = Sent(*(np.add(self.sent, sent_total(actors)).tolist()))
        return finished or loop.stopped

    def after_sweep(self, actors: list[Any], loop: RunLoop, epoch: int, sweep: int) -> bool:
        """After sweep ``sweep`` of epoch ``epoch``: take the machines' loss and pairs,
        keep their rows at an epoch's end or where a checkpoint is due, report, and
        checkpoint if due. Whether to stop: a callback asked, or the epoch has ended
        and the run goes on regrouped."""
        after = (epoch, sweep + 1) if sweep + 1 < self.run.config.sweeps else (epoch + 1, 0)
        trained = on_all(actors, "trained")
        self.loss = self.base.loss + np.sum([loss for loss, _, _ in trained], axis=0)
        self.pairs = self.base.pairs + np.sum([pairs for _, pairs, _ in trained], axis=0)
        if after[1] == 0 or loop.due():
            self.keep(actors, *after)
        loop.report(self.words_at(*after), after[0], self.epoch_loss)
        loop.save_if_due()
        regrouping = self.regroup is not None and after[1] == 0 and after[0] < self.run.config.epochs
        return loop.stopped or regrouping

    def keep(self, actors: list[Any], epoch: int, sweep: int) -> None:
        """Gather the machines' rows as the run's at ``epoch``'s sweep ``sweep``."""
        weights = gather(actors, len(self.run.vocab), self.run.config.dim)
        self.kept = Kept(epoch, sweep, weights, self.loss.copy(), self.pairs.copy())

    def words_at(self, epoch: int, sweep: int) -> int:
        """The words the run has trained at ``epoch``'s sweep ``sweep``."""
        return int(epoch * self.sweep_words.sum() + self.sweep_words[:sweep].sum())

    def epoch_loss(self, epoch: int) -> float:
        """Mean loss per pair of ``epoch`` so far (nats), nan before any."""
        pairs = self.pairs[epoch]
        return float(self.loss[epoch] / pairs) if pairs else float("nan")

    def state(self) -> TrainState:
        """The run as of its last gathered rows, for a checkpoint or the model file:
        each machine as a replica, its batches trained counted as a round's are."""
        kept, config, sweeps = self.kept, self.run.config, self.run.config.sweeps
        machines = [
            group_record(group, kept.epoch * found.batches + sweep_batches(found.batches, sweeps, kept.sweep)[0],
                         (found.batches, found.words, found.digest))
            for group, found in zip(self.run.groups, self.found, strict=True)
        ]  # fmt: skip
        syn0, syn1neg = kept.weights
        return TrainState(
            config=config,
            vocab=self.run.vocab,
            syn0=syn0,
            syn1=np.zeros((0, config.dim), np.float32),
            syn1neg=syn1neg,
            epoch_loss=kept.loss.copy(),
            epoch_examples=kept.pairs.copy(),
            jobs_done=sum(machine["jobs_done"] for machine in machines),
            batches=sum(found.batches for found in self.found),
            stream_words=int(self.sweep_words.sum()),
            corpus_words=self.corpus_words,
            notes=self.notes,
            replicas=machines,
            blocks={"epoch": kept.epoch, "sweep": kept.sweep},
        )
