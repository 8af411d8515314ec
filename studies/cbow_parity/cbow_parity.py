"""CBOW against word2vec.c, and the default data order: w2v with ``--streams 1`` and with
``--streams`` equal to the threads (2), and word2vec.c, paired by seed on two corpora.

    python studies/cbow_parity/cbow_parity.py --run --corpus wiki=wiki-en-100m.txt --corpus books=books.txt \\
        --word2vec word2vec-seed
    python studies/cbow_parity/cbow_parity.py --render

Each run trains one combination (CBOW NS, CBOW HS, and skip-gram NS as a control) with one
system and one seed on a corpus less its last 2 MB, with the settings of
``scripts/quality.py`` (2 threads, dim 100, window 5, sample 1e-4, min-count 5, 5 epochs,
word2vec.c's learning rates), and is scored by ``w2v eval`` (analogies over the 30,000 most
frequent words, WordSim-353); w2v's runs are scored on the held-out 2 MB too. word2vec.c
takes no seed: ``--word2vec`` names a build with one (README.md gives the three-line patch;
seed 1 is word2vec.c's own). CBOW's seeds come first, the control's last, and within each
the seeds are the outer loop, so a study cut short is still balanced.

Results go to ``cbow-parity-NAME.json`` beside this script, one per corpus (one record per
run, saved as it comes; a run already there is not redone). Not a test and not run in CI.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the shared helpers: scripts/quality.py

from quality import COMBOS, METRICS, SETTINGS, paired_table, split_corpus, train_and_score, w2v_json  # noqa: E402

STUDIED = {"CBOW NS": "cbow", "CBOW HS": "cbow", "skip-gram NS": "control"}
SYSTEMS = {"word2vec.c": "word2vec.c", "streams 1": "w2v --streams 1", "streams 2": "w2v --streams 2"}
SHARED_METRICS = ("analogy %", "WS-353")  # word2vec.c's runs have no held-out score


def results_path(name: str) -> Path:
    """Where corpus ``name``'s runs are kept."""
    return HERE / f"cbow-parity-{name}.json"


def word2vec_c_run(binary: str, combo: str, seed: int, train: Path, work: Path) -> dict:
    """Train word2vec.c (``binary``, built with ``-seed``) on ``train`` and evaluate its vectors."""
    model, loss = COMBOS[combo]
    vectors = work / "c-vectors.bin"
    loss_args = ["-hs", "1", "-negative", "0"] if loss.get("hs") else ["-hs", "0", "-negative", str(loss["negative"])]
    command = [binary, "-train", str(train), "-output", str(vectors), "-binary", "1",
               "-cbow", "1" if model == "cbow" else "0", "-alpha", "0.05" if model == "cbow" else "0.025",
               "-size", str(SETTINGS["dim"]), "-window", str(SETTINGS["window"]), "-sample", str(SETTINGS["sample"]),
               "-min-count", "5", "-iter", str(SETTINGS["epochs"]), "-threads", str(SETTINGS["threads"]),
               "-seed", str(seed), *loss_args]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    evaluation = w2v_json("eval", "-v", str(vectors))
    return {"analogy": evaluation["analogies"][0]["accuracy"], "ws353": evaluation["similarity"][0]["spearman"]}


def one_run(binary: str, combo: str, system: str, seed: int, paths: dict[str, Path], work: Path) -> dict:
    """The record of ``system`` (a key of ``SYSTEMS``) training ``combo`` with ``seed``."""
    if system == "word2vec.c":
        return word2vec_c_run(binary, combo, seed, paths["train"], work)
    model, loss = COMBOS[combo]
    settings = {**loss, "seed": seed, "streams": int(system.split()[1])}
    return train_and_score(paths["train"], paths["heldout"], model, settings, None, work)


def run_study(corpora: dict[str, Path], seeds: list[int], binary: str, work: Path) -> None:
    """Train and score every (group, seed, corpus, combination, system) not yet kept."""
    for name in corpora:
        (work / name).mkdir(parents=True, exist_ok=True)
    splits = {name: split_corpus(path, work / name) for name, path in corpora.items()}
    kept = {name: json.loads(p.read_text()) if (p := results_path(name)).exists() else {} for name in corpora}
    for group in ("cbow", "control"):
        for seed in seeds:
            for name, combo, system in [
                (n, c, s) for n in corpora for c in STUDIED if STUDIED[c] == group for s in SYSTEMS
            ]:
                key = f"{combo}/{system}/seed {seed}"
                if key in kept[name]:
                    continue
                print(f"{name}: {key} ...", file=sys.stderr, flush=True)
                kept[name][key] = one_run(binary, combo, system, seed, splits[name], work / name)
                results_path(name).write_text(json.dumps(kept[name], indent=1) + "\n")


def render(results: dict) -> str:
    """A corpus' table from its runs (``results``): per combination and system, analogy and
    WS-353 mean ± sd over seeds, then each w2v setting's difference from word2vec.c, paired
    by seed."""
    metrics = {metric: METRICS[metric] for metric in SHARED_METRICS}
    return paired_table(results, "system", SYSTEMS, metrics)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="train and score the runs not yet done")
    parser.add_argument("--render", action="store_true", help="print each corpus' table from its JSON")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "w2v-cbow-parity")
    parser.add_argument("--corpus", dest="corpora", action="append", default=[], help="NAME=PATH, once per corpus")
    parser.add_argument("--word2vec", default="word2vec-seed", help="word2vec.c built with -seed (README.md)")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds")
    args = parser.parse_args()
    corpora = {name: Path(path) for name, path in (item.split("=", 1) for item in args.corpora)}
    if args.run:
        run_study(corpora, [int(value) for value in args.seeds.split(",")], args.word2vec, args.work)
    if args.render:
        for name in corpora or [p.stem.removeprefix("cbow-parity-") for p in sorted(HERE.glob("cbow-parity-*.json"))]:
            print(f"\n### {name}\n\n{render(json.loads(results_path(name).read_text()))}")


if __name__ == "__main__":
    main()
