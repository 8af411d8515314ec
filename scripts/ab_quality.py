"""A/B of the quality of two checkouts' vectors: the same runs, seed by seed.

    git worktree add /tmp/w2v-base main      # the code to compare against
    python scripts/ab_quality.py /tmp/w2v-base --combos "CBOW HS,skip-gram HS" --seeds 1,2,3,4,5

For a change that alters multi-threaded results (``--threads 1`` staying
byte-identical): does it cost quality? Each run trains one combination with one
seed and one checkout, as ``scripts/quality.py`` trains it (the benchmark corpus less
its last 2 MB; 2 threads, dim 100, window 5, sample 1e-4, 5 epochs)
and is scored on every evaluation there is: analogies, WordSim-353 and held-out
bits per word on those 2 MB. Each run is a child process started from inside its
checkout, so that it imports that checkout's ``w2v``. Seeds are the outer loop and
the two checkouts alternate, so a study cut short is still paired.

Records go to ``--results`` (one per run, saved as it comes; a run already there
is not redone); the table gives each side's mean ± sd over seeds and the mean
difference, variant − base, paired by seed. About 1 minute a run on 2 cores for
HS, less for NS. Not a test and not run in CI.
"""

import json
import os
import sys
from pathlib import Path

from ab_kernels import imported_from, run_python
from quality import COMBOS, ROOT, paired_table, split_corpus, study_parser

CHILD = """
import json, sys
from pathlib import Path
sys.path.append(sys.argv[1])
from quality import train_and_score
corpus, heldout, model, settings, work = sys.argv[2:]
print(json.dumps(train_and_score(Path(corpus), Path(heldout), model, json.loads(settings), None, Path(work))))
"""


def train_in(checkout: Path, paths: dict[str, Path], model: str, settings: dict, work: Path) -> dict:
    """One run of ``quality.train_and_score`` (this checkout's script) with
    ``checkout``'s w2v (``ab_kernels.run_python``); its record."""
    arguments = [str(paths["train"]), str(paths["heldout"]), model, json.dumps(settings), str(work)]
    done = run_python(checkout, ["-c", CHILD, str(ROOT / "scripts"), *arguments])
    if done.returncode != 0:
        sys.exit(f"{checkout}: run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.splitlines()[-1])


def run_study(sides: dict[str, Path], combos: list[str], seeds: list[int], args) -> None:
    """Train and score every (seed, combination, side) not yet in ``args.results``."""
    args.work.mkdir(parents=True, exist_ok=True)
    paths = split_corpus(args.corpus, args.work)
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for seed in seeds:
        order = list(sides) if seed % 2 else list(sides)[::-1]
        for combo in combos:
            model, loss = COMBOS[combo]
            for side in order:
                key = f"{combo}/{side}/seed {seed}"
                if key in results:
                    continue
                print(f"{key} ...", file=sys.stderr, flush=True)
                work = args.work / side
                work.mkdir(parents=True, exist_ok=True)
                results[key] = train_in(sides[side], paths, model, {**loss, "seed": seed}, work)
                args.results.write_text(json.dumps(results, indent=1) + "\n")


def render(results: dict) -> str:
    """A markdown table: per combination, each side's mean ± sd over seeds of every
    metric, and the variant's mean difference from the base, paired by seed."""
    return paired_table(results, "side", {"base": "base", "variant": "variant"})


def main() -> None:
    default_results = Path(os.environ.get("TMPDIR", "/tmp")) / "w2v-ab-quality.json"
    parser = study_parser(__doc__.split("\n\n")[0], default_results)
    parser.add_argument("base", type=Path, nargs="?", help="the checkout to compare against (a folder holding w2v/)")
    parser.add_argument("--variant", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--combos", default="CBOW HS,skip-gram HS", help=f"comma-separated, of: {', '.join(COMBOS)}")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds")
    args = parser.parse_args()
    combos = args.combos.split(",")
    if unknown := [combo for combo in combos if combo not in COMBOS]:
        parser.error(f"unknown combination: {', '.join(unknown)}")
    if args.base is not None:
        sides = {"base": args.base, "variant": args.variant}
        if len({imported_from(checkout) for checkout in sides.values()}) < 2:
            parser.error("both sides import the same w2v: give two checkouts")
        run_study(sides, combos, [int(value) for value in args.seeds.split(",")], args)
    if args.render or args.base is not None:
        print(render(json.loads(args.results.read_text())))


if __name__ == "__main__":
    main()
