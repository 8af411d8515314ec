"""Training on a Dask cluster: a replica of the weights on each worker (``rounds.Replica``,
run as a Dask actor), trained in rounds and combined on the client.

The corpus is cut into N contiguous groups of parts, one a worker (``parts``), each
encoded by its worker and kept there across epochs. Every round, each replica takes
the last round's combined rows, trains about ``sync_words`` words of its own text from
them and sends back the rows that moved; the client combines them
(``rounds.combine``) into the next round's weights. The client holds the weights
of record; a worker holds its replica's weights twice (the copy it trains and the
same at the last combining).

A worker lost during a round (its process killed, its machine gone) costs its
round: its report is not combined, and a new replica of its parts, started on a
worker still there (or one that joined), begins at its last finished round with
the current weights, so its slice is trained again. An error of the training
itself (divergence, a corpus that cannot be read) stops the run as in one process.
"""

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from w2v.cluster import Cluster, check_sources
from w2v.cluster_counting import count_on_cluster, counting_parts
from w2v.config import TrainConfig
from w2v.counting import CountTable, check_not_empty
from w2v.errors import W2VError
from w2v.parts import Part, split_sources
from w2v.progress import progress_bar
from w2v.rounds import Changes, Ledger, Replica, RoundLog, RoundResult
from w2v.vocab import Vocab
from w2v.weights import Model
from w2v.workers import Hooks, call_epoch_end, learning_rate

MAX_REPLACEMENTS = 8  # lost workers a run survives, in all
LOST_WORKER = (OSError, TimeoutError)  # what a call to a lost worker raises (Dask's CommClosedError is an OSError)


@dataclass
class ClusterResult:
    """What a run on a cluster returns to ``train``."""

    vocab: Vocab
    weights: dict[str, np.ndarray]
    epoch_loss: list[float]  # mean per example
    epoch_examples: list[int]
    batches: int  # an epoch's, over all replicas
    corpus_words: int
    train_words: int
    rounds: list[RoundLog] = field(default_factory=list)
    replaced: int = 0  # replicas restarted after their worker was lost


def groups_of(parts: list[Part], groups: int) -> list[list[Part]]:
    """``parts`` (in corpus order) as ``groups`` contiguous runs of about equal bytes
    (a part of unknown size counts as the mean of the others, or 1)."""
    sizes = np.array([(p.end - p.start) if p.end is not None else -1 for p in parts], dtype=np.float64)
    known = sizes[sizes >= 0]
    sizes[sizes < 0] = known.mean() if len(known) else 1.0
    middle = np.cumsum(sizes) - sizes / 2
    owner = np.minimum((middle * groups / sizes.sum()).astype(np.int64), groups - 1)
    return [[part for part, k in zip(parts, owner.tolist(), strict=True) if k == group] for group in range(groups)]


def cluster_vocab(cluster: Cluster, sources: list[str], config: TrainConfig, choose, show: bool) -> tuple[Vocab, int]:
    """The vocabulary (``choose(words, counts)``) of ``sources`` counted on the cluster, and the corpus' tokens."""
    table: CountTable = count_on_cluster(cluster, counting_parts(cluster, sources), config.prune_at, show)
    check_not_empty(table.tokens, len(table.words), config.prune_at)
    return choose(table.words, table.counts), table.tokens


def train_on_cluster(
    cluster: Cluster, sources: list[str], config: TrainConfig, choose, start: Callable[[Vocab], Model], hooks: Hooks
) -> ClusterResult:
    """Count, encode and train ``sources`` on ``cluster`` as the module says, from the
    weights ``start(vocab)`` gives for the vocabulary ``choose(words, counts)`` picks."""
    check_sources(cluster, sources)
    vocab, corpus_words = cluster_vocab(cluster, sources, config, choose, hooks.show_progress)
    model = start(vocab)
    weights = {"syn0": model.syn0, "syn1": model.tables.syn1, "syn1neg": model.tables.syn1neg}
    workers = cluster.workers()
    groups = [g for g in groups_of(split_sources(sources, len(workers)), len(workers)) if g]
    run = ClusterRun(cluster, groups, vocab, config, weights, hooks)
    try:
        run.start(workers)
        losses = run.train()
    finally:
        run.close()
    ledger = run.ledger
    batches = int(ledger.sizes[:, 0].sum())
    return ClusterResult(vocab, weights, losses, ledger.examples.tolist(), batches, corpus_words, ledger.trained,
                         ledger.log, run.replaced)  # fmt: skip


class ClusterRun:
    """The client's side of a run: the replicas' actors and the run's ``Ledger``."""

    def __init__(self, cluster: Cluster, groups: list[list[Part]], vocab: Vocab, config: TrainConfig,
                 weights: dict[str, np.ndarray], hooks: Hooks):  # fmt: skip
        self.cluster, self.groups, self.vocab, self.config = cluster, groups, vocab, config
        self.hooks = hooks
        self.ledger = Ledger(np.zeros((len(groups), 2), dtype=np.int64), config, weights)
        self.actors: list[Any] = [None] * len(groups)
        self.where: list[str] = [""] * len(groups)  # each replica's worker
        self.futures: list[Any] = [None] * len(groups)  # the actors' futures: an actor lives while its future does
        self.replaced = 0
        self.reported = 0  # epochs reported to the hooks

    def start(self, workers: list[str]) -> None:
        """Start a replica of each group on its own worker; place each in the corpus."""
        for k, worker in enumerate(workers[: len(self.groups)]):
            self.futures[k] = self.submit(k, worker)
        for k in range(len(self.groups)):
            self.actors[k] = self.futures[k].result()
            self.ledger.sizes[k] = self.actors[k].size().result()
        for k in range(len(self.groups)):
            self.actors[k].place(self.ledger.placement(k)).result()

    def submit(self, k: int, worker: str) -> Any:
        """Start replica ``k``'s actor on ``worker`` with the current weights and its jobs done."""
        client, weights = self.cluster.client, self.ledger.weights
        sent = client.scatter([weights[name] for name in ("syn0", "syn1", "syn1neg")], workers=[worker], hash=False)
        self.where[k] = worker
        return client.submit(
            Replica, self.groups[k], self.vocab, self.config, tuple(sent), int(self.ledger.jobs[k]),
            actor=True, workers=[worker], allow_other_workers=False, pure=False,
        )  # fmt: skip

    def train(self) -> list[float]:
        """Rounds until every replica has trained all its jobs; each epoch's mean loss."""
        bar = progress_bar("training", self.ledger.total_words, "words", self.hooks.show_progress)
        update: Changes | None = None
        completed = False
        try:
            while self.ledger.active():
                update = self.round(update)
                self.report(bar)
            completed = True
        finally:
            bar.close(completed)
        return [self.ledger.epoch_loss(epoch) for epoch in range(self.config.epochs)]

    def round(self, update: Changes | None) -> Changes:
        """One round: every replica with jobs left trains from ``update``; returns the next update."""
        started, ledger = time.perf_counter(), self.ledger
        active = ledger.active()
        calls = {k: self.actors[k].train_round(update, ledger.trained, len(active), self.config.sync_words)
                 for k in active}  # fmt: skip
        results: dict[int, RoundResult] = {}
        for k, call in calls.items():
            try:
                results[k] = call.result()
            except W2VError:
                raise
            except Exception as error:
                self.lost(k, error)
        return ledger.record(update, results, started)

    def lost(self, k: int, error: Exception) -> None:
        """Replica ``k``'s call failed with ``error``: if it is a lost connection (its worker
        gone), start the replica again on the worker with fewest replicas; else raise it."""
        if not isinstance(error, LOST_WORKER) or self.replaced >= MAX_REPLACEMENTS:
            raise error
        self.replaced += 1
        workers = self.cluster.wait_for_workers()
        alive = [w for w in workers if w != self.where[k]] or workers
        worker = min(alive, key=lambda w: self.where.count(w))
        self.futures[k] = self.submit(k, worker)
        self.actors[k] = self.futures[k].result()
        self.actors[k].place(self.ledger.placement(k)).result()

    def report(self, bar) -> None:
        """The bar, ``on_progress`` and ``on_epoch_end`` for the epochs every replica finished."""
        config, hooks, ledger = self.config, self.hooks, self.ledger
        while self.reported < min(ledger.epochs_done(), config.epochs):
            if hooks.on_epoch_end is not None:
                call_epoch_end(hooks.on_epoch_end, self.reported, ledger.epoch_loss(self.reported))
            self.reported += 1
        current = min(self.reported, config.epochs - 1)
        loss = ledger.epoch_loss(current)
        alpha = learning_rate(config.alpha or 0.0, config.min_alpha or 0.0, ledger.trained / ledger.total_words)
        shown = {"epoch": f"{min(self.reported + 1, config.epochs)}/{config.epochs}", "lr": f"{alpha:.5f}"}
        bar.update(ledger.trained, **shown, **({"loss": f"{loss:.4f}"} if loss == loss else {}))
        if hooks.on_progress is not None:
            hooks.on_progress(ledger.trained, ledger.total_words, alpha, loss)

    def close(self) -> None:
        """Drop the actors (their workers delete the encoded ids)."""
        for actor in self.actors:
            if actor is not None:
                with contextlib.suppress(Exception):  # a lost worker has nothing left to delete
                    actor.close().result()
        self.futures = [None] * len(self.groups)
