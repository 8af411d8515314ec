"""Skip-gram NS trained in blocks on a Dask cluster (``w2v.cluster.blockactors``): the
actors' run is the same machines' run in one process, byte for byte, with one thread."""

import signal
import tempfile
from pathlib import Path

import numpy as np
import pytest
from test_cluster import topic_corpus, worker_processes

from w2v.cluster.blockactors import MachinesRun, encoded_text, train_on_machines
from w2v.cluster.blockmachine import BlockMachine, Schedule
from w2v.cluster.blockrun import FRESH, gather, train_blocks
from w2v.cluster.connect import connect, worker_sources
from w2v.config import TrainConfig
from w2v.corpus.counting import count_table
from w2v.corpus.parts import groups_of, split_sources
from w2v.corpus.vocab import Vocab

pytest.importorskip("distributed")


def machines_here(groups, vocab: Vocab, config: TrainConfig, schedule: Schedule, workdir: str) -> list[BlockMachine]:
    """The machines of a cluster run over ``groups`` of parts, in this process."""
    texts = [encoded_text(group, vocab, config, workdir) for group in groups]
    firsts = np.concatenate([[0], np.cumsum([len(text.starts) - 1 for text in texts])]).astype(int)
    machines = [
        BlockMachine(rank, text._replace(first=int(firsts[rank]), total=int(firsts[-1])), vocab, config, schedule)
        for rank, text in enumerate(texts)
    ]
    for machine in machines:
        machine.connect(machines)
    return machines


@pytest.mark.slow
def test_blocks_on_four_workers_are_the_machines_of_one_process_byte_for_byte(tmp_path: Path):
    corpus = topic_corpus(tmp_path / "topics.txt", lines=3000)
    config = TrainConfig(model="skipgram", dim=16, epochs=2, seed=4, threads=1, min_count=1, sample=1e-3).resolved()
    table = count_table([str(corpus)])
    vocab = Vocab.choose(table.words, table.counts, config.min_count, None)
    with connect("local:4", 1) as cluster:
        groups = groups_of(split_sources(worker_sources(cluster, [str(corpus)]), 4), 4)
        assert all(groups)
        there = train_on_machines(cluster, MachinesRun(groups, vocab, config, 2), FRESH)
    schedule = Schedule(4, 2)
    with tempfile.TemporaryDirectory() as workdir:
        here_machines = machines_here(groups, vocab, config, schedule, workdir)
        train_blocks(here_machines, config.epochs, schedule)
        here = gather(here_machines, len(vocab), config.dim)
    for got, want in zip(there, here, strict=True):
        np.testing.assert_array_equal(got, want)
    assert np.abs(there[1]).max() > 0.01  # trained


@pytest.mark.slow
def test_a_worker_killed_between_sweeps_costs_its_sweep_and_not_the_result(tmp_path: Path):
    """The run goes back to the last sweep's rows, new machines start from them once the
    killed worker's place is taken, and the weights are those of a run without the fault."""
    corpus = topic_corpus(tmp_path / "topics.txt", lines=2000)
    config = TrainConfig(model="skipgram", dim=16, epochs=2, seed=4, threads=1, min_count=1, sample=1e-3).resolved()
    table = count_table([str(corpus)])
    vocab = Vocab.choose(table.words, table.counts, config.min_count, None)
    killed: list[int] = []
    reached: list[tuple[int, int]] = []  # where each sweep's end would start the run again

    def kill_a_worker(start) -> None:
        reached.append((start.epoch, start.sweep))
        if not killed:
            victim = worker_processes()[0]
            victim.send_signal(signal.SIGKILL)
            killed.append(victim.pid)

    with connect("local:3", 1) as cluster:
        run = MachinesRun(groups_of(split_sources(worker_sources(cluster, [str(corpus)]), 3), 3), vocab, config, 2)
        clean = train_on_machines(cluster, run, FRESH)
        faulty = train_on_machines(cluster, run, FRESH, after_sweep=kill_a_worker)
    assert killed
    assert reached == [(0, 1), (1, 0), (1, 1), (2, 0)]  # the sweep under way when the worker died: not one more
    for got, want in zip(faulty, clean, strict=True):
        np.testing.assert_array_equal(got, want)
