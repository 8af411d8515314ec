"""The study behind ``--streams``'s default: the file's order against evenly spaced streams.

    python scripts/streams.py --run          # 4 combinations x 3 settings x 5 seeds (about 75 min on 2 cores)
    python scripts/streams.py --render       # the markdown table from the JSON

word2vec.c's T threads each train an evenly spaced part of the corpus, so at any moment the
model sees distant text; ``--streams N`` gives w2v that layout independently of the thread
count. Each run trains one combination (skip-gram or CBOW, negative sampling or HS) with one
setting of ``--streams`` and one seed, on the benchmark corpus less its last 2 MB, with the
settings of ``scripts/estimators.py`` (2 threads, dim 100, window 5, sample 1e-4, 5 epochs),
and is scored on every evaluation there is: analogies, WordSim-353 and held-out bits per word
on those 2 MB. Seeds are the outer loop, so a study cut short is still balanced.

Results go to ``docs/streams.json`` (one record per run, saved as it comes; a run already
there is not redone). Not a test and not run in CI.
"""

import json
import statistics
import sys
from pathlib import Path

from estimators import ROOT, split_corpus, study_parser, train_and_score

RESULTS = ROOT / "docs/streams.json"
COMBOS = {  # name: (model, loss settings)
    "skip-gram NS": ("skipgram", {"negative": 5}),
    "CBOW NS": ("cbow", {"negative": 5}),
    "skip-gram HS": ("skipgram", {"hs": True, "negative": 0}),
    "CBOW HS": ("cbow", {"hs": True, "negative": 0}),
}
METRICS = {  # name: (how to read it from a record, format, higher is better)
    "analogy %": (lambda run: 100 * run["analogy"], "{:.2f}", True),
    "WS-353": (lambda run: run["ws353"], "{:.4f}", True),
    "bits/word": (lambda run: run["score"]["bits_per_word"], "{:.4f}", False),
}


def run_study(streams: list[int], seeds: list[int], corpus: Path, work: Path, results_path: Path) -> None:
    """Train and score every (seed, combination, streams) not yet in ``results_path``."""
    paths = split_corpus(corpus, work)
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    for seed in seeds:
        for combo, (model, loss) in COMBOS.items():
            for setting in streams:
                key = f"{combo}/streams {setting}/seed {seed}"
                if key in results:
                    continue
                print(f"{key} ...", file=sys.stderr, flush=True)
                settings = {**loss, "seed": seed, "streams": setting}
                results[key] = train_and_score(paths["train"], paths["heldout"], model, settings, None, work)
                results_path.write_text(json.dumps(results, indent=1) + "\n")


def summary(values: list[float], spec: str, signed: bool = False) -> str:
    """``mean ± sd`` of ``values``, each as ``spec`` formats it (the mean with its sign if ``signed``)."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    mean = (
        spec.replace("{:", "{:+").format(statistics.fmean(values)) if signed else spec.format(statistics.fmean(values))
    )
    return f"{mean} ± {spec.format(spread)}"


def render(results: dict) -> str:
    """A markdown table: per combination and setting, each metric's mean ± sd over seeds,
    and the mean difference of streams against the file's order (paired by seed)."""
    settings = sorted({int(key.split("/")[1].split()[1]) for key in results})
    return paired_table(results, "--streams", {f"streams {s}": str(s) for s in settings})


def paired_table(results: dict, column: str, groups: dict[str, str]) -> str:
    """A markdown table of runs keyed ``combination/group/seed N``: per combination and
    group (``groups``: each key's group, shown as its value in ``column``; the first is
    the base), each metric's mean ± sd over seeds, then each other group's mean
    difference from the base, paired by seed."""
    header = f"| combination | {column} | seeds | " + " | ".join(METRICS) + " |"
    lines = [header, "|" + "---|" * (3 + len(METRICS))]
    for combo in COMBOS:
        runs = {g: {k.split("/")[2]: v for k, v in results.items() if k.startswith(f"{combo}/{g}/")} for g in groups}
        for group, shown in groups.items():
            if runs[group]:
                cells = [summary([read(r) for r in runs[group].values()], spec) for read, spec, _ in METRICS.values()]
                lines.append(f"| {combo} | {shown} | {len(runs[group])} | " + " | ".join(cells) + " |")
        base = next(iter(groups))
        for group, shown in list(groups.items())[1:]:
            seeds = sorted(set(runs[base]) & set(runs[group]))
            if len(seeds) < 2:
                continue
            cells = []
            for read, spec, _ in METRICS.values():
                diffs = [read(runs[group][seed]) - read(runs[base][seed]) for seed in seeds]
                cells.append(summary(diffs, spec, signed=True))
            lines.append(f"| {combo} | {shown} − {groups[base]} | {len(seeds)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = study_parser(__doc__.split("\n\n")[0], RESULTS)
    parser.add_argument("--run", action="store_true", help="train and score the runs not yet done")
    parser.add_argument("--streams", default="1,2,16", help="comma-separated settings of --streams")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds")
    args = parser.parse_args()
    if args.run:
        args.work.mkdir(parents=True, exist_ok=True)
        streams = [int(value) for value in args.streams.split(",")]
        run_study(streams, [int(value) for value in args.seeds.split(",")], args.corpus, args.work, args.results)
    if args.render:
        print(render(json.loads(args.results.read_text())))


if __name__ == "__main__":
    main()
