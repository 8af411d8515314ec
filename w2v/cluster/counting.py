"""Counting a corpus on a Dask cluster: each worker counts parts it reads itself, the
counts are merged in a tree.

The corpus is cut into parts (``parts.split_sources``: about ``PARTS_PER_WORKER``
a worker, so that a slow part does not hold the others up), and the parts are
sent a run a task (``cluster.runs_for``: a folder of thousands of files in a few
tasks a worker). Each run is counted by the compiled counter on a worker
(``counting.count_table``) and adjacent tables are merged pairwise, level by level,
on the workers (``CountTable.merged``), so the client receives one table. Runs are
merged in corpus order, so with no pruning the result is the single-machine count,
word for word and in the same order.
"""

from w2v.cluster.connect import Cluster, connect, note_idle_workers, runs_for, worker_sources
from w2v.corpus.counting import CountTable, count_table
from w2v.corpus.parts import Part, split_sources
from w2v.progress import progress_bar

PARTS_PER_WORKER = 4


def counting_parts(cluster: Cluster, sources: list[str]) -> list[Part]:
    """The parts the workers count ``sources`` in: ``sources`` as ``worker_sources`` names them."""
    return split_sources(sources, PARTS_PER_WORKER * len(cluster.workers()))


def count_on_cluster(cluster: Cluster, parts: list[Part], prune_at: int, show: bool = False) -> CountTable:
    """The counts of ``parts`` (in corpus order), counted and merged on the cluster's
    workers; a bar of the parts counted on stderr when ``show``. A part that cannot
    be read raises its CorpusError here."""
    return merged_on_cluster(cluster, parts, count_table, (prune_at,), prune_at, show)


def count_at(address: str, sources: list[str], prune_at: int, show: bool = False) -> CountTable:
    """The counts of ``sources`` (files or URLs, in corpus order) counted on the cluster at
    ``address`` (``connect.connect``: ``local:N``, a scheduler's address or file), with a note
    when some workers have no part to count and a bar of the parts counted when ``show``."""
    with connect(address, None) as cluster:
        parts = counting_parts(cluster, worker_sources(cluster, sources))
        note_idle_workers(len(parts), len(cluster.workers()), show)
        return count_on_cluster(cluster, parts, prune_at, show)


def merged_on_cluster(cluster: Cluster, parts: list, count, arguments: tuple, prune_at: int, show: bool) -> CountTable:
    """``count(run, *arguments)`` (a ``CountTable``) of each run of ``parts`` (``runs_for``)
    on the workers, merged pairwise in corpus order, level by level, on the workers; the
    client receives the last table alone. A bar of the parts counted when ``show``."""
    client = cluster.client
    runs = runs_for(cluster, parts)
    level = [client.submit(count, run, *arguments, pure=False) for run in runs]
    run_parts = {future.key: len(run) for future, run in zip(level, runs, strict=True)}
    bar = progress_bar("counting", len(parts), "parts", show)
    try:
        counted = 0
        for future in cluster.completed(level):
            counted += run_parts[future.key]
            bar.update(counted)
        while len(level) > 1:
            pairs = [level[i : i + 2] for i in range(0, len(level), 2)]
            level = [client.submit(CountTable.merged, *pair, prune_at, pure=False) if len(pair) == 2 else pair[0]
                     for pair in pairs]  # fmt: skip
        return cluster.result(level[0])
    finally:
        bar.close(True)
