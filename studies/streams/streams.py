"""The study behind ``--streams``'s default: the file's order against evenly spaced streams.

    python studies/streams/streams.py --run       # 4 combinations x 3 settings x 5 seeds (about 75 min on 2 cores)
    python studies/streams/streams.py --render       # the markdown table from the JSON

word2vec.c's T threads each train an evenly spaced part of the corpus, so at any moment the
model sees distant text; ``--streams N`` gives w2v that layout independently of the thread
count. Each run trains one combination (skip-gram or CBOW, negative sampling or HS) with one
setting of ``--streams`` and one seed, on the benchmark corpus less its last 2 MB, with the
settings of ``scripts/quality.py`` (2 threads, dim 100, window 5, sample 1e-4, 5 epochs),
and is scored on every evaluation there is: analogies, WordSim-353 and held-out bits per word
on those 2 MB. Seeds are the outer loop, so a study cut short is still balanced.

Results go to ``streams.json`` beside this script (one record per run, saved as it comes; a run already
there is not redone). Not a test and not run in CI.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the shared helpers: scripts/quality.py

from quality import COMBOS, paired_table, split_corpus, study_parser, train_and_score  # noqa: E402

RESULTS = HERE / "streams.json"


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


def render(results: dict) -> str:
    """A markdown table: per combination and setting, each metric's mean ± sd over seeds,
    and the mean difference of streams against the file's order (paired by seed)."""
    settings = sorted({int(key.split("/")[1].split()[1]) for key in results})
    return paired_table(results, "--streams", {f"streams {s}": str(s) for s in settings})


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
