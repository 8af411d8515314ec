"""Bytes a run of skip-gram NS trained in blocks sends, counted three ways (issue 61).

Runs one plan twice: (a) the simulation, the run's BlockMachines as objects of this
process (``blockactors.machines_here``: the machines ``start_machines`` starts, over the
same parts of the corpus); (b) the same machines as Dask actors on ``local:N``
(``start_machines``, then ``train_blocks`` with no gathering after a sweep). Around
``train_blocks`` alone it reads:

- the machines' own counters (``blockrun.sent_total``): the encoded pair bytes, the
  right partitions handed on, the input rows moved at an epoch's change; the same plan,
  so the simulation's and the actors' must be equal;
- the operating system's bytes sent on the loopback interface (``psutil``, ``lo``):
  every byte between the processes of a local cluster crosses it once, with Dask's
  message framing, the pickled call arguments, the TCP/IP headers, the driver's
  control calls and the heartbeats. Anything else on this machine that talks over
  ``lo`` (another user's cluster) counts too, and only adds: the run is repeated
  (``--repeats``, on fresh machines) and the least taken, less the rate of the
  quietest idle spell after a run (the actors alive and untouched) over as long;
- Dask's own counters on each worker (``client.run``): ``transfer_outgoing_bytes_total``
  and the transfer counts (data of task results fetched by ``get_data``: not actor
  calls, which travel as ``actor_execute`` messages; shown at work on an 8 MiB result
  one worker fetches from another, after the runs), the worker-to-scheduler stream's
  ``byte_count``, the digests whose name says bytes, and the system monitor's
  ``host_net_io.write_bps`` integrated over the run (every interface of the host,
  ``lo`` with the rest, sampled each 0.5 s).

It prints pairs per trained word (the in-vocabulary words read, times the epochs, as
``studies/block_cluster`` counts them), bytes per pair, the hand-offs a sweep against
``blocks.handoff_bytes`` (``N V D 4``), and the input rows moved against the plans'.

    python scripts/block_bytes.py                                    # data/sample.txt.gz, N=4, S=4, dim 100
    python scripts/block_bytes.py --corpus /work/shared/data/wiki-en-6mb.txt --machines 4 --dim 300 --json out.json
"""

import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's w2v, in this process and the workers it spawns

from w2v.cluster.blockactors import MachinesRun, machines_here, start_machines  # noqa: E402
from w2v.cluster.blockmachine import Schedule, Sent, epoch_plan  # noqa: E402
from w2v.cluster.blockrun import on_all, sent_total, train_blocks  # noqa: E402
from w2v.cluster.blocks import handoff_bytes  # noqa: E402
from w2v.cluster.connect import connect  # noqa: E402
from w2v.config import TrainConfig  # noqa: E402
from w2v.corpus.counting import count_table  # noqa: E402
from w2v.corpus.parts import can_cut, groups_of, split_sources  # noqa: E402
from w2v.corpus.vocab import Vocab  # noqa: E402
from w2v.errors import W2VError  # noqa: E402
from w2v.files import check_writable, open_input, write_atomic  # noqa: E402

FLOAT = 4  # bytes of a float32 row element
HEADER = 66  # bytes lo counts a packet beyond its payload: Ethernet 14, IPv4 20, TCP with timestamps 32
CHECK_BYTES = 8 << 20  # a float64 array one worker fetches from another (data_transfer_counted)
IDLE_SECONDS = 2.0  # the shortest idle spell: longer than the system monitor's interval (0.5 s)


def plain_corpus(path: str, folder: str) -> str:
    """``path``, or a plain copy of it in ``folder`` where it cannot be cut into parts
    (a compressed file is one part: one machine would hold it all)."""
    if can_cut(path):
        return os.path.abspath(path)
    copy = os.path.join(folder, "corpus.txt")
    with open_input(path) as source, open(copy, "wb") as target:
        shutil.copyfileobj(source, target)
    return copy


def planned_run(args: argparse.Namespace, corpus: str) -> MachinesRun:
    """The run measured: skip-gram NS over ``corpus``'s vocabulary, N groups of its parts."""
    config = TrainConfig(model="skipgram", dim=args.dim, epochs=args.epochs, threads=args.threads, seed=args.seed,
                         sample=args.sample, min_count=args.min_count, sweeps=args.sweeps).resolved()  # fmt: skip
    table = count_table([corpus])
    vocab = Vocab.choose(table.words, table.counts, config.min_count, None)
    groups = groups_of(split_sources([corpus], args.machines), args.machines)
    if not all(groups):
        sys.exit(f"block_bytes: {corpus} is too small to give each of {args.machines} machines a part")
    return MachinesRun(groups, vocab, config)


def simulated(run: MachinesRun, folder: str) -> dict[str, Any]:
    """The run's machines in this process: what they sent and trained, the words they read,
    and the input rows the plans move between epochs."""
    machines = machines_here(run, folder)
    schedule = Schedule(len(run.groups), run.config.sweeps)
    train_blocks(machines, run.config.epochs, schedule)
    words = sum(int(np.count_nonzero(machine.text.tokens >= 0)) for machine in machines) * run.config.epochs
    plans = [epoch_plan(machines[0].mass, schedule, run.config.seed, epoch) for epoch in range(run.config.epochs)]
    moved = sum(int(np.count_nonzero(a.owner != b.owner)) for a, b in itertools.pairwise(plans))
    figures = {"sent": sent_total(machines)._asdict(), "pairs": trained_pairs(machines), "words": words,
               "input_bytes_planned": moved * run.config.dim * FLOAT}  # fmt: skip
    on_all(machines, "close")
    return figures


def trained_pairs(machines: list[Any]) -> int:
    """The pairs the machines trained, all epochs (their ``trained`` counters)."""
    return int(sum(pairs.sum() for _loss, pairs, _chunks in on_all(machines, "trained")))


def dask_counters(dask_worker: Any) -> dict[str, float]:
    """What a Dask worker counts of what it sent: run on each worker (``client.run``)."""
    counted = {
        "transfer_outgoing_bytes_total": dask_worker.transfer_outgoing_bytes_total,
        "transfer_outgoing_count_total": dask_worker.transfer_outgoing_count_total,
        "transfer_incoming_count_total": dask_worker.state.transfer_incoming_count_total,
        "to_scheduler_stream_bytes": dask_worker.batched_stream.byte_count,
    }
    for name, value in dask_worker.digests_total.items():
        if "bytes" in str(name):
            counted[f"digest {name}"] = value
    return counted


def host_net_written(window: tuple[float, float], dask_worker: Any) -> float:
    """Bytes the host sent on every interface in ``window`` (wall-clock seconds), by the
    worker's system monitor: ``host_net_io.write_bps`` times each sample's interval, the
    intervals that overlap the window whole (a sample at time t covers the 0.5 s before)."""
    quantities = dask_worker.monitor.quantities
    times, rates = np.array(quantities["time"]), np.array(quantities["host_net_io.write_bps"])
    overlapping = np.flatnonzero((times[1:] > window[0]) & (times[:-1] < window[1])) + 1
    return float(np.sum(rates[overlapping] * (times[overlapping] - times[overlapping - 1])))


def summed_change(before: dict[str, dict], after: dict[str, dict]) -> dict[str, float]:
    """Each counter's change over the run, summed over the workers."""
    change: dict[str, float] = {}
    for worker, counted in after.items():
        for name, value in counted.items():
            change[name] = change.get(name, 0) + value - before[worker].get(name, 0)
    return change


def loopback() -> np.ndarray:
    """Bytes and packets sent on the loopback interface so far, (2,) int64."""
    lo = psutil.net_io_counters(pernic=True)["lo"]
    return np.array([lo.bytes_sent, lo.packets_sent], np.int64)


def idle_loopback(seconds: float) -> np.ndarray:
    """Bytes and packets a second sent on the loopback interface with the run idle, over
    ``seconds`` or ``IDLE_SECONDS`` if longer (the system monitor's sample after the run
    comes within it), (2,) float64."""
    spell = max(seconds, IDLE_SECONDS)
    before = loopback()
    time.sleep(spell)
    return (loopback() - before) / spell


def measured_run(cluster: Any, run: MachinesRun) -> dict[str, Any]:
    """The run's machines started as actors on ``cluster``: their counters and Dask's and
    the loopback's around ``train_blocks``, and the loopback's over an idle spell as long."""
    machines, client = start_machines(cluster, run), cluster.client
    before = client.run(dask_counters)
    lo_before, started = loopback(), time.time()
    train_blocks(machines.actors, run.config.epochs, Schedule(len(run.groups), run.config.sweeps))
    lo_run, finished = loopback() - lo_before, time.time()
    dask = summed_change(before, client.run(dask_counters))
    lo_idle = idle_loopback(finished - started)
    host = client.run(host_net_written, (started, finished), workers=[machines.workers[0]])
    figures = {"sent": sent_total(machines.actors)._asdict(), "pairs": trained_pairs(machines.actors),
               "seconds": finished - started, "lo_bytes_sent": int(lo_run[0]), "lo_packets_sent": int(lo_run[1]),
               "lo_idle_bytes_per_s": float(lo_idle[0]), "lo_idle_packets_per_s": float(lo_idle[1]), "dask": dask,
               "host_net_io_written": next(iter(host.values()))}  # fmt: skip
    on_all(machines.actors, "close")
    return figures


def on_cluster(run: MachinesRun, repeats: int) -> tuple[list[dict[str, Any]], float | None]:
    """``repeats`` runs of ``run`` on ``local:N``, each on machines of its own
    (``measured_run``), and ``data_transfer_counted`` where N > 1."""
    with connect(f"local:{len(run.groups)}", run.config.threads) as cluster:
        measured = [measured_run(cluster, run) for _ in range(repeats)]
        return measured, data_transfer_counted(cluster) if len(run.groups) > 1 else None


def data_transfer_counted(cluster: Any) -> float:
    """What ``transfer_outgoing_bytes_total`` counts of a task's result (``CHECK_BYTES``)
    that another worker fetches for a task of its own: the counter at work."""
    client, workers = cluster.client, cluster.workers()
    before = client.run(dask_counters)
    held = client.submit(np.ones, CHECK_BYTES // 8, workers=[workers[0]], pure=False)
    used = client.submit(np.sum, held, workers=[workers[1]], allow_other_workers=False, pure=False)
    cluster.result(used)
    return summed_change(before, client.run(dask_counters))["transfer_outgoing_bytes_total"]


def network_calls(machines: int, sweeps: int, epochs: int) -> int:
    """The calls of a run that cross between processes, each a request and a reply: the
    driver's to every machine (``place`` or ``send_inputs`` and ``take_inputs`` an epoch,
    ``make_pairs`` or ``start_pairs``, ``finish_pairs`` and 2N ``train`` a sweep) and the
    machines' to the others (frames a sweep, a right partition a sub-step where N > 1,
    input rows an epoch's change);
    a machine's calls to itself stay in its process."""
    driver = machines * (epochs + 2 * (epochs - 1) + epochs * sweeps * (2 + 2 * machines))
    others = machines * (machines - 1)
    peers = epochs * sweeps * (others + (2 * machines * machines if machines > 1 else 0)) + (epochs - 1) * others
    return driver + peers


def loopback_figures(repeats: list[dict[str, Any]], total: int, calls: int) -> dict[str, Any]:
    """The loopback's bytes against the actors' ``total``, the repeats' least (other traffic
    on this machine only adds), less the quietest idle spell's rate over as long; the
    residue split into TCP/IP headers (``HEADER`` a packet) and the rest, a message
    (``calls`` requests and as many replies)."""
    best = min(repeats, key=lambda rep: rep["lo_bytes_sent"])
    quiet = min(repeats, key=lambda rep: rep["lo_idle_bytes_per_s"])
    idle = np.array([quiet["lo_idle_bytes_per_s"], quiet["lo_idle_packets_per_s"]]) * best["seconds"]
    residue = best["lo_bytes_sent"] - idle[0] - total
    headers = (best["lo_packets_sent"] - idle[1]) * HEADER
    return {
        "lo_bytes_sent": best["lo_bytes_sent"], "lo_idle_bytes_sent": idle[0],
        "lo_packets_sent": best["lo_packets_sent"],
        "lo_over_actors": best["lo_bytes_sent"] / max(total, 1),
        "lo_less_idle_over_actors": (best["lo_bytes_sent"] - idle[0]) / max(total, 1),
        "lo_over_actors_by_repeat": [rep["lo_bytes_sent"] / max(total, 1) for rep in repeats],
        "residue_bytes": residue, "residue_tcp_ip_headers": headers, "network_calls": calls,
        "residue_rest_per_message": (residue - headers) / max(2 * calls, 1), "seconds": best["seconds"],
        "host_net_io_written": best["host_net_io_written"], "dask": best["dask"],
    }  # fmt: skip


def report(run: MachinesRun, here: dict[str, Any], repeats: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the simulation (``here``) and the actors' runs (``repeats``), side by side."""
    config, machines, there = run.config, len(run.groups), repeats[0]
    sent, sweeps = Sent(**there["sent"]), config.epochs * run.config.sweeps
    total = sent.pair_bytes + sent.right_bytes + sent.input_bytes
    same = all(rep["sent"] == here["sent"] and rep["pairs"] == here["pairs"] for rep in repeats)
    return {
        "machines": machines, "sweeps": run.config.sweeps, "epochs": config.epochs, "dim": config.dim,
        "vocab": len(run.vocab), "words": here["words"], "pairs": there["pairs"],
        "pairs_per_word": there["pairs"] / here["words"], "pairs_sent": sent.pairs, "pair_bytes": sent.pair_bytes,
        "bytes_per_pair_sent": sent.pair_bytes / max(sent.pairs, 1),
        "pair_bytes_per_word": sent.pair_bytes / here["words"],
        "handoff_bytes_per_sweep": sent.right_bytes / sweeps,
        "handoff_formula_per_sweep": handoff_bytes(len(run.vocab), machines, config.dim),
        "input_bytes": sent.input_bytes, "input_bytes_planned": here["input_bytes_planned"],
        "simulation_sent": here["sent"], "actors_sent": there["sent"], "simulation_pairs": here["pairs"],
        "same_counts": same, "actors_total_bytes": total,
        **loopback_figures(repeats, total, network_calls(machines, run.config.sweeps, config.epochs)),
    }  # fmt: skip


def print_table(figures: dict[str, Any]) -> None:
    """The figures as a two-column table."""
    ratios = ", ".join(f"{ratio:.4f}" for ratio in figures["lo_over_actors_by_repeat"])
    rows = [
        ("machines N, sweeps S, epochs, dim", f"{figures['machines']}, {figures['sweeps']}, {figures['epochs']}, "
                                              f"{figures['dim']}"),
        ("vocabulary V, words trained", f"{figures['vocab']:,}, {figures['words']:,}"),
        ("pairs trained, a trained word", f"{figures['pairs']:,}, {figures['pairs_per_word']:.3f}"),
        ("pairs sent to another machine", f"{figures['pairs_sent']:,}"),
        ("pair bytes, a pair sent, a trained word", f"{figures['pair_bytes']:,}, {figures['bytes_per_pair_sent']:.3f}, "
                                                    f"{figures['pair_bytes_per_word']:.3f}"),
        ("hand-off bytes a sweep: counted, N V D 4", f"{figures['handoff_bytes_per_sweep']:,.0f}, "
                                                     f"{figures['handoff_formula_per_sweep']:,}"),
        ("input-row bytes: counted, planned", f"{figures['input_bytes']:,}, {figures['input_bytes_planned']:,}"),
        ("simulation's counts = actors' (every repeat)", str(figures["same_counts"])),
        ("actors' bytes sent, all", f"{figures['actors_total_bytes']:,}"),
        ("lo bytes sent: least run, idle as long", f"{figures['lo_bytes_sent']:,}, "
                                                   f"{figures['lo_idle_bytes_sent']:,.0f}"),
        ("lo / actors: by repeat; least, less idle", f"{ratios}; {figures['lo_less_idle_over_actors']:.4f}"),
        ("residue: all, TCP/IP headers", f"{figures['residue_bytes']:,.0f}, {figures['residue_tcp_ip_headers']:,.0f}"),
        ("residue less headers: calls, a message", f"{figures['network_calls']:,}, "
                                                   f"{figures['residue_rest_per_message']:,.0f}"),
        ("host_net_io written (all NICs)", f"{figures['host_net_io_written']:,.0f}"),
        ("train_blocks seconds", f"{figures['seconds']:.1f}"),
    ]  # fmt: skip
    rows += [(f"Dask {name}", f"{value:,.0f}") for name, value in figures["dask"].items()]
    if figures["check_transfer_counted"] is not None:
        rows.append((f"Dask counts a {figures['check_transfer_bytes']:,}-byte data transfer as",
                     f"{figures['check_transfer_counted']:,.0f}"))  # fmt: skip
    for name, value in rows:
        print(f"{name:<46} {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(REPO / "data" / "sample.txt.gz"))
    parser.add_argument("--machines", type=int, default=4)
    parser.add_argument("--sweeps", type=int, default=4)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="training threads a machine")
    parser.add_argument("--sample", type=float, default=1e-4, help="as studies/block_cluster")
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="runs on the cluster: the least loopback counts")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if not os.path.isfile(args.corpus):
        parser.error(f"corpus not found: {args.corpus}")
    if min(args.machines, args.sweeps, args.dim, args.epochs, args.threads, args.repeats) < 1:
        parser.error("--machines, --sweeps, --dim, --epochs, --threads and --repeats must be at least 1")
    try:
        if args.json:
            check_writable(args.json)
            if os.path.exists(args.json) and os.path.samefile(args.json, args.corpus):
                parser.error("--json names the corpus: give another file")
        with tempfile.TemporaryDirectory(prefix="w2v-block-bytes-") as folder:
            run = planned_run(args, plain_corpus(args.corpus, folder))
            here = simulated(run, folder)
            repeats, transfer_counted = on_cluster(run, args.repeats)
            figures = {**report(run, here, repeats), "check_transfer_bytes": CHECK_BYTES,
                       "check_transfer_counted": transfer_counted}  # fmt: skip
        print_table(figures)
        if args.json:
            write_atomic(args.json, json.dumps(figures, indent=1).encode())
    except W2VError as error:
        sys.exit(f"block_bytes: {error}")


if __name__ == "__main__":
    main()
