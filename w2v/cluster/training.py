"""Training on a Dask cluster: a replica of the weights on each worker (``rounds.Replica``,
run as a Dask actor), trained in rounds and combined on the client.

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
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from w2v.cluster.connect import Cluster, note_idle_workers, parts_with_words, worker_sources
from w2v.cluster.counting import count_on_cluster, counting_parts
from w2v.cluster.rounds import Changes, Ledger, Replica, RoundResult
from w2v.config import TrainConfig
from w2v.corpus.counting import CountTable, check_not_empty
from w2v.corpus.idstream import check_trainable
from w2v.corpus.parts import Part, groups_of, split_sources
from w2v.corpus.vocab import Vocab
from w2v.engine.runloop import Hooks, RunLoop
from w2v.engine.weights import Model
from w2v.errors import ClusterLost, CorpusError, W2VError
from w2v.files import is_url
from w2v.report import RoundLog
from w2v.vectorio.modelfile import TrainState, checkpoint_path

MAX_REPLACEMENTS = 8  # lost workers a run survives, in all
LOST_WORKER = (OSError, TimeoutError)  # what a call to a lost worker raises (Dask's CommClosedError is an OSError)
# Dask's RuntimeError for an actor whose worker is gone: from a call to it, or from the future that starts it
ACTOR_LOST = "Worker holding Actor was lost"


def worker_lost(error: BaseException) -> bool:
    """Whether ``error``, raised by a call to a replica's actor, says that its worker is gone."""
    return isinstance(error, LOST_WORKER) or (isinstance(error, RuntimeError) and str(error).startswith(ACTOR_LOST))


@dataclass
class ClusterResult:
    """What a run on a cluster returns to ``train``: its final state, rounds and lost workers."""

    state: TrainState
    epoch_loss: list[float]  # mean per example
    rounds: list[RoundLog] = field(default_factory=list)
    replaced: int = 0  # replicas restarted after their worker was lost


def check_same_sources(cluster: Cluster, state: TrainState, sources: list[str]) -> None:
    """CorpusError unless ``sources`` (as ``worker_sources`` names them) are the files
    the checkpoint ``state``'s replicas read, in any order, but for files without a
    word (which have no replica): a resumed run goes on with the corpus it began with."""
    checkpointed = {part[0] if is_url(part[0]) else os.path.abspath(part[0])  # a relative one: from here
                    for replica in state.replicas for part in replica["parts"]}  # fmt: skip
    missing = sorted(checkpointed.difference(sources))
    added = parts_with_words(cluster, [Part(source) for source in sources if source not in checkpointed])
    if missing or added:
        change = f"it read {missing[0]}, not given now" if missing else f"{added[0]} is new"
        raise CorpusError(f"the corpus is not the one checkpointed ({change}): resume needs the same corpus")


def cluster_vocab(cluster: Cluster, sources: list[str], config: TrainConfig, choose, show: bool) -> tuple[Vocab, int]:
    """The vocabulary (``choose(words, counts)``) of ``sources`` (as ``worker_sources`` names
    them) counted on the cluster, and the corpus' tokens."""
    table: CountTable = count_on_cluster(cluster, counting_parts(cluster, sources), config.prune_at, show)
    check_not_empty(table.tokens, len(table.words), config.prune_at)
    return choose(table.words, table.counts), table.tokens


@dataclass
class ClusterPlan:
    """How a run on a cluster starts: ``choose(words, counts)`` picks a fresh run's
    vocabulary and ``start(vocab)`` its weights; ``resumed`` is the checkpoint of a
    run to go on with instead (its vocabulary, weights and replicas'); ``checkpoint``
    the folder to save the run in (``state.checkpoint_path``), if any; ``vocabulary``
    the file the vocabulary is read from (``read_vocab``, ``init_model``), if any;
    ``vectors(vocab, syn0)`` the words' vectors of weights ``syn0``, for ``on_epoch_end``."""

    choose: Callable
    start: Callable[[Vocab], Model]
    resumed: TrainState | None = None
    checkpoint: str | None = None
    notes: dict = field(default_factory=dict)
    vocabulary: str | None = None
    vectors: Callable[[Vocab, np.ndarray], Any] | None = None


def train_on_cluster(cluster: Cluster, sources: list[str], config: TrainConfig, plan: ClusterPlan,
                     hooks: Hooks) -> ClusterResult:  # fmt: skip
    """Count, encode and train ``sources`` on ``cluster`` as the module says, or go on
    with ``plan.resumed``; checkpoint as ``hooks`` says into ``plan.checkpoint``."""
    sources = worker_sources(cluster, sources)
    workers = cluster.workers()
    if plan.resumed is None:
        vocab, corpus_words = cluster_vocab(cluster, sources, config, plan.choose, hooks.show_progress)
        parts = split_sources(sources, len(workers))
        kept = parts_with_words(cluster, parts)
        groups = [group for group in groups_of(kept, len(workers)) if group]
        empty = len(parts) - len(kept)
        note_idle_workers(len(groups) + empty, len(workers), hooks.show_progress, empty=empty)
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
            run.start(workers)
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
        groups = [[Part(*part) for part in replica["parts"]] for replica in state.replicas]
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
            self.check_same_corpus(self.expected)
        for k in range(len(self.groups)):
            self.actors[k].place(self.ledger.placement(k)).result()
        self.ledger.trained = sum(self.actors[k].words_done().result() for k in range(len(self.groups)))

    def check_same_corpus(self, state: TrainState) -> None:
        """CorpusError unless every replica encoded the batches, words and ids it had;
        the same words and ids in other batches name the batching, not the corpus."""
        for k, replica in enumerate(state.replicas):
            found = (int(self.ledger.sizes[k, 0]), int(self.ledger.sizes[k, 1]), int(self.digests[k]))
            if found == (replica["batches"], replica["words"], replica["digest"]):
                continue
            parts = ", ".join(str(part) for part in self.groups[k])
            if found[1:] == (replica["words"], replica["digest"]):
                raise CorpusError(
                    f"the checkpoint cut its part {parts} into {replica['batches']:,} batches, this w2v into "
                    f"{found[0]:,} (a checkpoint of an earlier w2v, whose rounds shorter than --batch-words took "
                    "whole sentences): resume it with that version"
                )
            raise CorpusError(f"the corpus is not the one checkpointed: its part {parts} has changed")

    def state(self, finished: bool = False) -> TrainState:
        """The run as it stands after its last round, for a checkpoint or (``finished``)
        the model file; a checkpoint keeps the rows' momentum, if any."""
        ledger, config = self.ledger, self.config
        replicas = [
            {"parts": [[part.source, part.start, part.end] for part in group], "jobs_done": int(ledger.jobs[k]),
             "batches": int(ledger.sizes[k, 0]), "words": int(ledger.sizes[k, 1]), "digest": int(self.digests[k])}
            for k, group in enumerate(self.groups)
        ]  # fmt: skip
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
        if not worker_lost(error):
            raise error
        if self.replaced >= MAX_REPLACEMENTS:
            raise ClusterLost(f"lost a worker again ({error}) after {MAX_REPLACEMENTS}, the most a run survives")
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
