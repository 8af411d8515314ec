"""What a machine of skip-gram NS in blocks spends its cores on, a trained word, against
one process training the same corpus with the batch kernel.

    python scripts/block_speed.py --corpus data/sample.txt.gz
    python scripts/block_speed.py --corpus text8 --machines 1,8 --rounds 3

Each round trains the corpus once in one process (``w2v.train``, one thread: its
``train_seconds``) and once as N machines of blocks in this process
(``blockrun.train_blocks``, one thread a machine), alternating, and counts the CPU
seconds of each thread that works for the machines (``time.thread_time``, so that
threads sharing the cores do not count each other's time): making and coding the
pairs (``BlockMachine.make_pairs``, one sweep ahead), making a block's chunks
(``BlockMachine.chunks_of``, one sub-step ahead) and the chunk kernel
(``engine.chunks.train_chunks``). The sum over the phases, over one process's
seconds, is the ``--work`` factor of ``studies/block_cluster/cost_model.py``: the
cores a machine in blocks needs for one process's one. The network is not measured
here (``scripts/block_bytes.py``), nor the Dask calls: the machines are objects of
this process. Medians over the rounds.
"""

import argparse
import gzip
import json
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from w2v.cluster import blockmachine
from w2v.cluster.blockactors import MachinesRun, machines_here
from w2v.cluster.blockmachine import BlockMachine, Schedule
from w2v.cluster.blockrun import train_blocks
from w2v.config import TrainConfig
from w2v.corpus.counting import count_table
from w2v.corpus.parts import groups_of, split_sources
from w2v.corpus.vocab import Vocab

PHASES = ("pairs", "chunks", "kernel")


class PhaseClock:
    """CPU seconds of the machines' phases, summed over the threads that run them."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def timed(self, phase: str, function):
        """``function``, its calls' thread CPU time added to ``phase``."""

        def run(*args, **kwargs):
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[phase] += time.thread_time() - started

        return run


def plain_corpus(corpus: str, folder: str) -> str:
    """``corpus``, decompressed into ``folder`` if gzipped: a compressed file is one
    part, which would give every word to one machine."""
    if not corpus.endswith(".gz"):
        return corpus
    plain = str(Path(folder) / Path(corpus).stem)
    with gzip.open(corpus, "rb") as packed, open(plain, "wb") as out:
        shutil.copyfileobj(packed, out)
    return plain


def blocks_round(corpus: str, machines: int, config: TrainConfig, vocab: Vocab, folder: str) -> dict[str, float]:
    """One run of ``machines`` machines over ``corpus``: CPU seconds by phase."""
    clock = PhaseClock()
    originals = (BlockMachine.make_pairs, BlockMachine.chunks_of, blockmachine.train_chunks)
    BlockMachine.make_pairs = clock.timed("pairs", originals[0])  # type: ignore[method-assign]
    BlockMachine.chunks_of = clock.timed("chunks", originals[1])  # type: ignore[method-assign]
    blockmachine.train_chunks = clock.timed("kernel", originals[2])
    try:
        groups = groups_of(split_sources([corpus], machines), machines)
        here = machines_here(MachinesRun(groups, vocab, config), folder)
        train_blocks(here, config.epochs, Schedule(machines, config.sweeps))
        for machine in here:
            machine.close()
    finally:
        BlockMachine.make_pairs, BlockMachine.chunks_of, blockmachine.train_chunks = originals  # type: ignore[method-assign]
    return dict(clock.seconds)


def one_process_round(corpus: str, config: TrainConfig) -> tuple[float, int]:
    """One process's training seconds (one thread) over ``corpus``, and its words trained."""
    import w2v

    settings = {name: getattr(config, name) for name in ("dim", "window", "sample", "epochs", "negative", "seed")}
    report = w2v.train(corpus, threads=1, min_count=config.min_count, **settings).report
    return report.train_seconds, report.train_words


def measure(args: argparse.Namespace) -> dict:
    """The rounds, alternating one process and each machine count; medians."""
    config = TrainConfig(dim=args.dim, epochs=args.epochs, threads=1, sample=args.sample, sweeps=args.sweeps,
                         seed=1).resolved()  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        corpus = plain_corpus(args.corpus, folder)
        table = count_table([corpus])
        vocab = Vocab.choose(table.words, table.counts, config.min_count, None)
        blocks_round(corpus, 1, config, vocab, folder)  # compiles the kernels
        one: list[float] = []
        phases: dict[int, list[dict[str, float]]] = {n: [] for n in args.machines}
        words = 0
        for _ in range(args.rounds):
            seconds, words = one_process_round(corpus, config)
            one.append(seconds)
            for machines in args.machines:
                phases[machines].append(blocks_round(corpus, machines, config, vocab, folder))
    return figures(one, phases, words, config)


def figures(one: list[float], phases: dict[int, list[dict[str, float]]], words: int, config: TrainConfig) -> dict:
    """Nanoseconds a trained word: one process's and each phase's; the work factor."""
    base = statistics.median(one) / words * 1e9
    result = {"words": words, "dim": config.dim, "sweeps": config.sweeps, "one_process_ns": base, "machines": {}}
    for machines, rounds in phases.items():
        ns = {phase: statistics.median(r.get(phase, 0.0) for r in rounds) / words * 1e9 for phase in PHASES}
        result["machines"][machines] = {**ns, "work": sum(ns.values()) / base}
    return result


def render(result: dict) -> str:
    lines = [
        f"{result['words']:,} words trained, dim {result['dim']}, {result['sweeps']} sweeps an epoch; "
        f"one process (1 thread): {result['one_process_ns']:.0f} ns a word",
        "| machines | pairs ns | chunks ns | kernel ns | all ns | work (x one process) |",
        "|---|---|---|---|---|---|",
    ]
    for machines, ns in result["machines"].items():
        total = sum(ns[phase] for phase in PHASES)
        cells = " | ".join(f"{ns[phase]:.0f}" for phase in PHASES)
        lines.append(f"| {machines} | {cells} | {total:.0f} | {ns['work']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="data/sample.txt.gz")
    parser.add_argument("--machines", default="1", help="machine counts, comma-separated")
    parser.add_argument("--sweeps", type=int, default=4)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    args.machines = [int(n) for n in args.machines.split(",")]
    if min(args.machines) < 1 or min(args.sweeps, args.dim, args.epochs, args.rounds) < 1:
        parser.error("--machines, --sweeps, --dim, --epochs and --rounds must be at least 1")
    result = measure(args)
    print(render(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
