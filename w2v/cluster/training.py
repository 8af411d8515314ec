"""Training on a Dask cluster: skip-gram NS in blocks (``blocktraining``), every other
model (and skip-gram NS with ``rounds``) with a replica of the weights on each worker
(``rounds.Replica``, run as a Dask actor), trained in rounds and combined on the client.

The corpus is cut into N contiguous groups of parts, one a worker (``parts``), each
encoded by its worker and kept there across epochs. Every round, each replica takes
the last round's combined rows, trains about ``rounds.round_words`` words of its own
text from them and sends back the rows that moved; the client combines them
(``rounds.combine``) into the next round's weights. The client holds the weights
of record; a worker holds its replica's weights twice (the copy it trains and the
same at the last combining).

A worker lost during a round (its process killed, its machine gone: a lost
connection, or Dask's RuntimeError for its actor, ``worker_lost``) costs its
round: its report is not combined, and a new replica of its parts, started on a
worker still there (or one that joined), begins at its last finished round with
the current weights, so its slice is trained again. A worker lost as the replicas
first start stops the run with one line. An error of the training itself
(divergence, a corpus that cannot be read) stops the run as in one process.
"""

import contextlib
import dataclasses
import time
from typing import Any

import numpy as np

from w2v.cluster.blocks import trains_in_blocks
from w2v.cluster.blocktraining import train_in_blocks
from w2v.cluster.connect import Cluster, worker_sources
from w2v.cluster.rounds import Changes, Ledger, Replica, RoundResult
from w2v.cluster.runs import (
    MAX_REPLACEMENTS,
    ClusterPlan,
    ClusterResult,
    check_same_groups,
    check_same_sources,
    checkpointed_groups,
    cluster_vocab,
    group_record,
    survive,
    worker_groups,
    worker_lost,
)
from w2v.config import TrainConfig
from w2v.corpus.idstream import check_trainable
from w2v.corpus.parts import Part
from w2v.corpus.vocab import Vocab
from w2v.engine.runloop import Hooks, RunLoop
from w2v.engine.weights import Model
from w2v.errors import ClusterLost, ConfigError, W2VError
from w2v.progress import note
from w2v.vectorio.modelfile import TrainState, checkpoint_path

# said where a run on a cluster trains in rounds without being asked to
ROUNDS_NOTE = (
    "this model trains on a cluster in rounds, a whole replica of the weights on each worker: only skip-gram "
    "with negative sampling alone trains in blocks, the rows spread over the workers"
)


def check_cluster_settings(config: TrainConfig, asked: dict) -> None:
    """ConfigError for a setting ``asked`` other than its default that the way ``config``
    trains on a cluster does not use: ``sync_words`` and ``combine`` belong to rounds,
    ``sweeps`` to blocks (``cluster.blocks.trains_in_blocks``)."""
    blocks, defaults = trains_in_blocks(config), TrainConfig()
    names = ("sync_words", "combine") if blocks else ("sweeps",)
    unused = [name for name in names if asked.get(name, getattr(defaults, name)) != getattr(defaults, name)]
    if not unused:
        return
    if blocks:
        raise ConfigError(
            f"{unused[0]} applies to rounds: skip-gram with negative sampling trains in blocks on a cluster "
            "(give rounds=True to train it in rounds)",
            f"--{unused[0].replace('_', '-')} applies to rounds: skip-gram with negative sampling trains in "
            "blocks on a cluster (add --rounds to train it in rounds)",
        )
    raise ConfigError(
        "sweeps applies to skip-gram with negative sampling alone, trained in blocks: this run trains in rounds",
        "--sweeps applies to skip-gram with negative sampling alone, trained in blocks: this run trains in rounds",
    )


def train_on_cluster(cluster: Cluster, sources: list[str], config: TrainConfig, plan: ClusterPlan,
                     hooks: Hooks) -> ClusterResult:  # fmt: skip
    """Count, encode and train ``sources`` on ``cluster`` as the module says, or go on
    with ``plan.resumed``; checkpoint as ``hooks`` says into ``plan.checkpoint``."""
    sources = worker_sources(cluster, sources)
    if trains_in_blocks(config) if plan.resumed is None else bool(plan.resumed.blocks):
        return train_in_blocks(cluster, sources, config, plan, hooks)
    if plan.resumed is None:
        vocab, corpus_words = cluster_vocab(cluster, sources, config, plan.choose, hooks.show_progress)
        groups = worker_groups(cluster, sources, hooks.show_progress)
        note(ROUNDS_NOTE, hooks.show_progress and not config.rounds)
        run = ClusterRun(cluster, groups, vocab, config, plan.start(vocab), hooks)
        run.corpus_words, run.notes = corpus_words, plan.notes
    else:
        check_same_sources(cluster, plan.resumed, sources)
        run = ClusterRun.resumed(cluster, plan.resumed, hooks)
    run.checkpoint, run.vocabulary = plan.checkpoint, plan.vocabulary
    if plan.vectors is not None:
        view = plan.vectors
        run.hooks = dataclasses.replace(run.hooks, vectors=lambda: view(run.vocab, run.ledger.weights["syn0"]))
    try:
        try:
            run.start(cluster.workers())
        except Exception as error:
            if not worker_lost(error):
                raise
            raise W2VError(f"a worker left the cluster as the replicas started ({error}): run it again") from None
        losses = run.train()
    finally:
        run.close()
    return ClusterResult(run.state(finished=True), losses, run.ledger.log, run.replaced)


class ClusterRun:
    """The client's side of a run: the replicas' actors and the run's ``Ledger``."""

    def __init__(self, cluster: Cluster, groups: list[list[Part]], vocab: Vocab, config: TrainConfig,
                 model: Model, hooks: Hooks):  # fmt: skip
        self.cluster, self.groups, self.vocab, self.config = cluster, groups, vocab, config
        self.hooks = hooks
        weights = {"syn0": model.syn0, "syn1": model.tables.syn1, "syn1neg": model.tables.syn1neg}
        self.ledger = Ledger(np.zeros((len(groups), 2), dtype=np.int64), config, weights)
        self.digests = np.zeros(len(groups), dtype=np.int64)  # CRC-32 of each replica's ids
        self.expected: TrainState | None = None  # a resumed run's checkpoint, to check the replicas against
        self.actors: list[Any] = [None] * len(groups)
        self.where: list[str] = [""] * len(groups)  # each replica's worker
        self.futures: list[Any] = [None] * len(groups)  # the actors' futures: an actor lives while its future does
        self.replaced = 0
        self.corpus_words = 0
        self.notes: dict = {}
        self.checkpoint: str | None = None  # folder
        self.vocabulary: str | None = None  # the file the vocabulary was read from, if any

    @classmethod
    def resumed(cls, cluster: Cluster, state: TrainState, hooks: Hooks) -> "ClusterRun":
        """The run checkpointed in ``state``, at its last round, with its replicas' parts."""
        groups = checkpointed_groups(state)
        config = dataclasses.replace(state.config, threads=cluster.threads)
        model = Model.build(state.vocab, config, (state.syn0, state.syn1, state.syn1neg))
        run = cls(cluster, groups, state.vocab, config, model, hooks)
        run.ledger.jobs[:] = [replica["jobs_done"] for replica in state.replicas]
        run.ledger.loss[:], run.ledger.examples[:] = state.epoch_loss, state.epoch_examples
        run.corpus_words, run.notes, run.expected = state.corpus_words, state.notes, state
        for name, rows_momentum in run.ledger.momentum.items():
            rows_momentum[:] = state.momentum.get(name, 0.0)  # zero where the checkpoint has none
        return run

    def start(self, workers: list[str]) -> None:
        """Start a replica of each group on its own worker (in turn when there are more
        groups than workers); check that they have something to train
        (``idstream.check_trainable``) and that a resumed run's read what they read
        before; place each in the corpus."""
        for k in range(len(self.groups)):
            self.futures[k] = self.submit(k, workers[k % len(workers)])
        for k in range(len(self.groups)):
            self.actors[k] = self.cluster.result(self.futures[k], on=self.where[k])
            batches, words, self.digests[k] = self.actors[k].fingerprint().result()
            self.ledger.sizes[k] = batches, words
        neighbours = any(actor.has_neighbours().result() for actor in self.actors)
        words = int(self.ledger.sizes[:, 1].sum())
        check_trainable(words, neighbours=neighbours, tokens=self.corpus_words, vocabulary=self.vocabulary)
        if self.expected is not None:
            sizes = zip(self.ledger.sizes.tolist(), self.digests.tolist(), strict=True)
            check_same_groups(self.expected.replicas, [(*size, digest) for size, digest in sizes], self.groups)
        for k in range(len(self.groups)):
            self.actors[k].place(self.ledger.placement(k)).result()
        self.ledger.trained = sum(self.actors[k].words_done().result() for k in range(len(self.groups)))

    def state(self, finished: bool = False) -> TrainState:
        """The run as it stands after its last round, for a checkpoint or (``finished``)
        the model file; a checkpoint keeps the rows' momentum, if any."""
        ledger, config = self.ledger, self.config
        replicas = [
            group_record(group, int(ledger.jobs[k]), (*ledger.sizes[k].tolist(), int(self.digests[k])))
            for k, group in enumerate(self.groups)
        ]
        weights = ledger.weights
        return TrainState(
            config=config,
            vocab=self.vocab,
            syn0=weights["syn0"],
            syn1=weights["syn1"],
            syn1neg=weights["syn1neg"],
            epoch_loss=ledger.loss.copy(),
            epoch_examples=ledger.examples.copy(),
            jobs_done=int(ledger.jobs.sum()),
            batches=int(ledger.sizes[:, 0].sum()),
            stream_words=int(ledger.sizes[:, 1].sum()),
            corpus_words=self.corpus_words,
            notes=self.notes,
            replicas=replicas,
            momentum={} if finished else ledger.momentum,
        )

    def submit(self, k: int, worker: str) -> Any:
        """Start replica ``k``'s actor on ``worker`` with the current weights and its jobs done."""
        client, weights = self.cluster.client, self.ledger.weights
        self.where[k] = worker
        sent = client.scatter([weights[name] for name in ("syn0", "syn1", "syn1neg")], workers=[worker], hash=False)
        return client.submit(
            Replica, self.groups[k], self.vocab, self.config, tuple(sent), int(self.ledger.jobs[k]), len(self.groups),
            actor=True, workers=[worker], allow_other_workers=False, pure=False,
        )  # fmt: skip

    def train(self) -> list[float]:
        """Rounds until every replica has trained all its jobs, or an ``on_epoch_end``
        callback stops the run; each whole epoch's mean loss.
        With a checkpoint folder, the run is saved after each epoch, every
        ``hooks.checkpoint_seconds`` and when interrupted (as of its last round)."""
        ledger, hooks = self.ledger, self.hooks
        if self.checkpoint is not None:
            hooks = dataclasses.replace(hooks, checkpoint=self.save)
        loop = RunLoop(self.config, hooks, total=ledger.total_words, reported=ledger.epochs_done())
        loop.open_bar(ledger.trained)
        update: Changes | None = None
        with loop.closing_bar(), loop.saved_if_stopped():
            while ledger.active() and not loop.stopped:
                update = self.round(update)
                loop.report(ledger.trained, ledger.epochs_done(), ledger.epoch_loss)
                loop.save_if_due()
        return [ledger.epoch_loss(epoch) for epoch in range(ledger.epochs_done())]

    def save(self) -> None:
        """Save the run as of its last round into the checkpoint folder."""
        assert self.checkpoint is not None
        self.state().save(checkpoint_path(self.checkpoint))

    def round(self, update: Changes | None) -> Changes:
        """One round: every replica with jobs left trains from ``update``; returns the next
        update. A replica whose call fails (``lost``) costs the round its report."""
        started, ledger = time.perf_counter(), self.ledger
        active = ledger.active()
        calls: dict[int, Any] = {}  # by replica: its call's future
        failed: dict[int, Exception] = {}
        for k in active:  # a lost worker's actor refuses the call at once
            try:
                calls[k] = self.actors[k].train_round(update, ledger.trained, len(active), ledger.sync_words)
            except Exception as error:
                failed[k] = error
        results: dict[int, RoundResult] = {}
        for k, call in calls.items():
            try:
                results[k] = call.result()
            except W2VError:
                raise
            except Exception as error:
                failed[k] = error
        for k, failure in failed.items():
            self.lost(k, failure)
        return ledger.record(update, results, started)

    def lost(self, k: int, error: Exception) -> None:
        """Replica ``k``'s call failed with ``error``: if it is a lost connection (its worker
        gone), start the replica again on the worker with fewest replicas, or on the next
        if that one leaves as the replica starts; ClusterLost once the run has lost more
        than ``MAX_REPLACEMENTS`` workers, or the replica has failed to start on that many.
        Any other error is raised as it is."""
        survive(error, self.replaced)
        self.replaced += 1
        for tries_left in range(MAX_REPLACEMENTS - 1, -1, -1):
            workers = self.cluster.wait_for_workers()
            alive = [w for w in workers if w != self.where[k]] or workers
            worker = min(alive, key=lambda w: self.where.count(w))
            try:
                self.futures[k] = self.submit(k, worker)
                self.actors[k] = self.cluster.result(self.futures[k], on=worker)
                self.actors[k].fingerprint().result()
                self.actors[k].place(self.ledger.placement(k)).result()
                return
            except Exception as again:
                if not (worker_lost(again) or isinstance(again, KeyError)):  # KeyError: a worker the scheduler dropped
                    raise
                if not tries_left:
                    raise ClusterLost(
                        f"a lost worker's replica did not start again on {MAX_REPLACEMENTS} workers in turn "
                        f"(the last: {again!r})"
                    ) from None

    def close(self) -> None:
        """Drop the actors (their workers delete the encoded ids)."""
        for actor in self.actors:
            if actor is not None:
                with contextlib.suppress(Exception):  # a lost worker has nothing left to delete
                    actor.close().result()
        self.futures = [None] * len(self.groups)
