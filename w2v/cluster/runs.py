"""What both ways of training on a cluster share (``training``'s rounds of replicas and
``blocktraining``'s blocks): how a run starts (``ClusterPlan``), what it returns
(``ClusterResult``), the vocabulary counted on the cluster, the corpus cut into a
group of parts a worker, the checks that a resumed run reads the corpus it began
with, and what says that a worker is gone (``worker_lost``)."""

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from w2v.cluster.connect import Cluster, note_idle_workers, parts_with_words
from w2v.cluster.counting import count_on_cluster, counting_parts
from w2v.config import TrainConfig
from w2v.corpus.counting import CountTable, check_not_empty
from w2v.corpus.parts import Part, groups_of, split_sources
from w2v.corpus.vocab import Vocab
from w2v.engine.weights import Model
from w2v.errors import ClusterLost, CorpusError
from w2v.files import is_url
from w2v.report import BlockTraffic, RoundLog
from w2v.vectorio.modelfile import TrainState

MAX_REPLACEMENTS = 8  # lost workers a run survives, in all
LOST_WORKER = (OSError, TimeoutError)  # what a call to a lost worker raises (Dask's CommClosedError is an OSError)
# Dask's RuntimeError for an actor whose worker is gone: from a call to it, or from the future that starts it
ACTOR_LOST = "Worker holding Actor was lost"


def worker_lost(error: BaseException) -> bool:
    """Whether ``error``, raised by a call to a replica's actor, says that its worker is gone."""
    return isinstance(error, LOST_WORKER) or (isinstance(error, RuntimeError) and str(error).startswith(ACTOR_LOST))


@dataclass
class ClusterResult:
    """What a run on a cluster returns to ``train``: its final state, and its rounds or
    (in blocks) its traffic, and the workers it lost."""

    state: TrainState
    epoch_loss: list[float]  # mean per example
    rounds: list[RoundLog] = field(default_factory=list)
    replaced: int = 0  # replicas or machines started again after their worker was lost
    traffic: BlockTraffic | None = None  # a run in blocks'

    @property
    def train_words(self) -> int:
        """The words this run trained (not those of the run it resumed)."""
        return self.traffic.words if self.traffic is not None else sum(r.words for r in self.rounds)

    @property
    def train_seconds(self) -> float:
        """The seconds this run trained."""
        return self.traffic.seconds if self.traffic is not None else sum(r.seconds for r in self.rounds)


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
    ``vectors(vocab, syn0)`` the words' vectors of weights ``syn0``, for ``on_epoch_end``;
    ``fresh``: ``start`` gives word2vec.c's fresh start (no model continued), which a
    run in blocks lets each machine draw for its own rows."""

    choose: Callable
    start: Callable[[Vocab], Model]
    resumed: TrainState | None = None
    checkpoint: str | None = None
    notes: dict = field(default_factory=dict)
    vocabulary: str | None = None
    vectors: Callable[[Vocab, np.ndarray], Any] | None = None
    fresh: bool = True


def worker_groups(cluster: Cluster, sources: list[str], show: bool) -> list[list[Part]]:
    """``sources`` cut into a group of parts a worker of ``cluster`` (contiguous runs of
    about equal bytes), less parts without a word and groups left without a part; a note
    (when ``show``) where some workers have nothing to do."""
    workers = len(cluster.workers())
    parts = split_sources(sources, workers)
    kept = parts_with_words(cluster, parts)
    groups = [group for group in groups_of(kept, workers) if group]
    empty = len(parts) - len(kept)
    note_idle_workers(len(groups) + empty, workers, show, empty=empty)
    return groups


def check_same_groups(expected: list[dict], found: list[tuple[int, int, int]], groups: list[list[Part]]) -> None:
    """CorpusError unless every group of parts encoded the batches, words and ids
    (``found``: batches, words, CRC-32) that the checkpoint's record of it (``expected``,
    ``TrainState.replicas``) says; the same words and ids in other batches name the
    batching, not the corpus."""
    for k, replica in enumerate(expected):
        if found[k] == (replica["batches"], replica["words"], replica["digest"]):
            continue
        parts = ", ".join(str(part) for part in groups[k])
        if found[k][1:] == (replica["words"], replica["digest"]):
            raise CorpusError(
                f"the checkpoint cut its part {parts} into {replica['batches']:,} batches, this w2v into "
                f"{found[k][0]:,} (a checkpoint of an earlier w2v, whose rounds shorter than --batch-words took "
                "whole sentences): resume it with that version"
            )
        raise CorpusError(f"the corpus is not the one checkpointed: its part {parts} has changed")


def checkpointed_groups(state: TrainState) -> list[list[Part]]:
    """The groups of parts of the checkpoint ``state``'s replicas or machines."""
    return [[Part(*part) for part in replica["parts"]] for replica in state.replicas]


def group_record(group: list[Part], jobs_done: int, found: tuple[int, int, int]) -> dict:
    """A checkpoint's record of a replica's or a machine's ``group`` of parts
    (``TrainState.replicas``): its batches trained over all epochs, and ``found``, the
    batches, words and CRC-32 of its ids (``check_same_groups``)."""
    batches, words, digest = found
    parts = [[part.source, part.start, part.end] for part in group]
    return {"parts": parts, "jobs_done": jobs_done, "batches": batches, "words": words, "digest": digest}


def survive(error: Exception, replaced: int) -> None:
    """Raise ``error`` unless it says that a worker is gone (``worker_lost``), and
    ClusterLost where the run has already replaced ``MAX_REPLACEMENTS`` lost workers."""
    if not worker_lost(error):
        raise error
    if replaced >= MAX_REPLACEMENTS:
        raise ClusterLost(f"lost a worker again ({error}) after {MAX_REPLACEMENTS}, the most a run survives")
