"""Phrases on a Dask cluster: pairs counted on the workers, the corpus written by them as a folder of parts.

The corpus is cut into parts at line ends (``parts.split_sources(lines=True)``:
phrases are counted and joined within lines, so every line stays whole and the
counts, the phrases and the joined text are those of one process). Each pass
counts words and pairs of each run of parts on a worker with the joins of the
passes before (``phrases.part_pairs``), merged in a tree as the vocabulary's counts are
(``cluster.counting.merged_on_cluster``); the client scores the merged counts.
Then each worker writes its parts with the phrases joined, one file per part
(``part-00000.txt``, ...), into a folder beside the output that becomes the output
once every part is written: read in name order, the folder is the corpus one
process would have written, and ``w2v train`` reads a folder as a corpus.
"""

import os
import shutil
import tempfile

from w2v.cluster.connect import Cluster, connect, note_idle_workers, parts_with_words, runs_for, worker_sources
from w2v.cluster.counting import PARTS_PER_WORKER, merged_on_cluster
from w2v.corpus.parts import Part, split_sources
from w2v.corpus.phrases import PhraseTable, WriteReport, part_pairs, write_phrased
from w2v.errors import ConfigError
from w2v.progress import progress_bar


def phrase_parts(cluster: Cluster, sources: list[str]) -> list[Part]:
    """The parts (whole lines) the workers read ``sources`` in."""
    return split_sources(worker_sources(cluster, sources), PARTS_PER_WORKER * len(cluster.workers()), lines=True)


def learn_on_cluster(cluster: Cluster, parts: list[Part], table: PhraseTable, passes: int, prune_at: int,
                     show: bool) -> PhraseTable:  # fmt: skip
    """Fill the empty ``table`` (``phrases.new_table``) with ``passes`` passes over ``parts``."""
    for _ in range(passes):
        table.add_pass(merged_on_cluster(cluster, parts, part_pairs, (table, prune_at), prune_at, show))
    return table


def check_new_folder(folder: str) -> None:
    """ConfigError if ``folder`` (the output of ``write_on_cluster``) is ``-`` (standard
    output cannot take a folder of parts) or exists."""
    if folder == "-":
        raise ConfigError("w2v phrases --cluster writes a folder of parts: give -o FOLDER, not -")
    if os.path.lexists(folder):
        raise ConfigError(f"{folder} exists: w2v phrases --cluster writes a new folder of parts")


def write_parts(parts: list[Part], table: PhraseTable, paths: list[str]) -> list[WriteReport]:
    """Write each of ``parts`` with ``table``'s phrases joined to its path of ``paths``: a
    task of ``write_on_cluster``, a run of parts (``cluster.runs_for``)."""
    return [write_phrased(part, table, path) for part, path in zip(parts, paths, strict=True)]


def write_on_cluster(cluster: Cluster, parts: list[Part], table: PhraseTable, folder: str,
                     show: bool) -> WriteReport:  # fmt: skip
    """Write ``parts`` with ``table``'s phrases joined as the folder ``folder`` (which must
    not exist), a file a part, written by the workers a run of parts a task (``write_parts``);
    the totals of what they wrote."""
    check_new_folder(folder)
    parent = os.path.dirname(os.path.abspath(folder))
    partial = tempfile.mkdtemp(prefix=f".{os.path.basename(folder)}.partial-", dir=parent)
    try:
        paths = iter(os.path.join(partial, f"part-{i:05d}.txt") for i in range(len(parts)))
        runs = [(run, [next(paths) for _ in run]) for run in runs_for(cluster, parts)]
        written = [cluster.client.submit(write_parts, run, table, names, pure=False) for run, names in runs]
        bar = progress_bar("writing", len(parts), "parts", show)
        reports: list[WriteReport] = []
        for future in written:
            reports.extend(cluster.result(future))
            bar.update(len(reports))
        bar.close(True)
        os.rename(partial, folder)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return WriteReport(*(sum(getattr(r, name) for r in reports) for name in ("tokens_in", "tokens_out", "lines")))


def phrases_at(address: str, sources: list[str], table: PhraseTable, folder: str, *, passes: int, prune_at: int,
               show: bool) -> WriteReport:  # fmt: skip
    """On the cluster at ``address`` (``connect.connect``): fill ``table`` with ``passes``
    passes over ``sources`` (files or URLs; 0 passes: the table is applied as it is), then
    write ``sources`` with its phrases joined as the new folder ``folder``
    (``write_on_cluster``); the totals of what was written. Notes, when ``show``, the
    workers left without a part, and shows bars of the parts counted and written."""
    with connect(address, None) as cluster:
        parts = phrase_parts(cluster, sources)
        empty = len(parts) - len(parts_with_words(cluster, parts))
        note_idle_workers(len(parts), len(cluster.workers()), show, lines=True, empty=empty)
        learn_on_cluster(cluster, parts, table, passes, prune_at, show)
        return write_on_cluster(cluster, parts, table, folder, show)
