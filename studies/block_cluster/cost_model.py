"""What a block-partitioned cluster would cost, from the simulation's measured traffic:
the efficiency table of studies/block_cluster/README.md.

    python studies/block_cluster/cost_model.py                 # V = 1M, d = 300, 10^10 words an epoch
    python studies/block_cluster/cost_model.py --vocab 67270 --dim 100 --words 16329179

The model (../shared/designs/cluster-blocks.md, "The cost model"), its traffic measured:

- compute: a word takes ``t_c = 1 / (r c)`` s of one process on a machine of c cores,
  r = 1.25M words/s a core (skip-gram NS at d = 300), and a machine in blocks ``work``
  times that: the design's 1.15 (15% for making the pairs), or the factor
  ``scripts/block_speed.py`` measures (``--work``);
- network, bytes a word: ``p (N - 1)/N B + S V d 4 N / W + V d 4 / W``: the pairs sent to
  other machines (p pairs a word, B bytes a pair), S sweeps of right-partition hand-offs
  (``N V d 4`` bytes a sweep), and the input rows re-placed once an epoch; at 1 GB/s;
- an epoch: ``T = (W / N) max(work t_c, t_n) 1.05 + 2 N S 2 ms`` (5% imbalance, a 2 ms
  hand-off a sub-step); efficiency ``W t_c / (N T)``.

p is the simulation's pairs a word. B depends on how densely a sender's pairs fill a
block's ``|L| |R|`` possible keys (``w2v.cluster.paircodec``): it is read at the density of
the projected cluster from the simulation's (density, B) points, interpolated in log
density (the benchmark corpus at N = 8 and 32 brackets V = 1M, W = 10^10 at N = 32), held
at the nearest point outside them.
"""

import argparse
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RATE = 1.25e6  # words a second a core, skip-gram NS at d = 300 (the design's)
BANDWIDTH = 1e9  # bytes a second a machine, 10 Gbit/s usable
HANDOFF = 2e-3  # seconds a sub-step for a partition's hand-off to start
MACHINES = (8, 32, 128)
CORES = (2, 16, 64)


def measured_points(results: dict, epochs: int) -> tuple[float, list[tuple[float, float]]]:
    """The simulation's pairs a word (mean over its runs) and its (density, bytes a
    pair sent) points, one a machine count and sweeps (means over their runs);
    ``epochs`` the runs' epochs. Runs are keyed ``skip-gram NS/N=8 S=1 rho on/seed 1``."""
    runs = {key: r for key, r in results.items() if r.get("bytes_per_pair_sent", 0) > 0}
    pairs = float(np.mean([r["pairs_per_word"] for r in runs.values()]))
    by_shape: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for key, r in runs.items():
        machines, sweeps = (int(part.split("=")[1]) for part in key.split("/")[1].split()[:2])
        density = block_density(r["pairs_per_word"], r["words"] / epochs, r["vocab"], machines, sweeps)
        by_shape.setdefault((machines, sweeps), []).append((density, r["bytes_per_pair_sent"]))
    return pairs, sorted(tuple(np.mean(points, axis=0).tolist()) for points in by_shape.values())


def block_density(pairs_a_word: float, words: float, vocab: int, machines: int, sweeps: int) -> float:
    """The share of a block's ``|L| |R|`` possible keys that one sender's pairs of a
    sweep fill: ``(p W / S) / (N 2N^2)`` pairs over ``(V / N)(V / 2N)`` keys."""
    pairs = pairs_a_word * words / sweeps / (machines * 2 * machines**2)
    return pairs / ((vocab / machines) * (vocab / (2 * machines)))


def bytes_a_pair(points: list[tuple[float, float]], density: float) -> float:
    """B at ``density``, interpolated in log density between the measured points."""
    densities, sizes = zip(*points, strict=True)
    return float(np.interp(np.log(density), np.log(densities), sizes))


def efficiency(machines: int, cores: int, traffic: dict, args: argparse.Namespace) -> tuple[float, float]:
    """(bytes a word, efficiency) of ``machines`` machines of ``cores`` cores."""
    n, s, w = machines, args.sweeps, args.words
    density = block_density(traffic["pairs"], w, args.vocab, n, s)
    pair_bytes = traffic["pairs"] * (n - 1) / n * bytes_a_pair(traffic["points"], density)
    rows = s * args.vocab * args.dim * 4 * n / w + args.vocab * args.dim * 4 / w
    t_c, t_n = 1 / (RATE * cores), (pair_bytes + rows) / BANDWIDTH
    epoch = (w / n) * max(args.work * t_c, t_n) * 1.05 + 2 * n * s * HANDOFF
    return pair_bytes + rows, w * t_c / (n * epoch)


def table(traffic: dict, args: argparse.Namespace) -> str:
    """The markdown efficiency table."""
    lines = ["| machines | cores | bytes a word | efficiency |", "|---|---|---|---|"]
    for machines in MACHINES:
        for cores in CORES:
            size, eta = efficiency(machines, cores, traffic, args)
            lines.append(f"| {machines} | {cores} | {size:.1f} | {100 * eta:.0f}% |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=HERE / "block-simulation.json")
    parser.add_argument("--vocab", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--words", type=float, default=1e10, help="words an epoch")
    parser.add_argument("--sweeps", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=5, help="the simulated runs' epochs")
    parser.add_argument("--work", type=float, default=1.15, help="a machine's cores a word, over one process's")
    args = parser.parse_args()
    pairs, points = measured_points(json.loads(args.results.read_text()), args.epochs)
    print(f"pairs a word {pairs:.3f}; bytes a pair sent at block densities: " + ", ".join(
        f"{d:.2e}: {b:.3f}" for d, b in points))  # fmt: skip
    print(table({"pairs": pairs, "points": points}, args))


if __name__ == "__main__":
    main()
