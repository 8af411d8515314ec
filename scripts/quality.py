"""Train on the benchmark corpus and score the vectors: what ``scripts/ab_quality.py`` and
the studies in ``studies/`` share.

The corpus (``--corpus``; the benchmark machine keeps ``wiki-en-100m.txt`` beside the
repository, text8 from ``http://mattmahoney.net/dc/text8.zip`` stands in for it) is split
once (``split_corpus``): its last ``HELDOUT_BYTES`` (cut at a space) are the held-out text
every model is scored on, the rest the training text. A run (``train_and_score``) trains
with ``SETTINGS`` (2 threads, dim 100, window 5, sample 1e-4, 5 epochs, seed 1) and is
scored by ``w2v score`` (held-out bits per word on ``SCORE_PAIRS`` predictions) and
``w2v eval`` (analogies over the 30,000 most frequent words, WordSim-353). Runs keyed
``combination/group/seed N`` make a table of means ± sd over seeds and differences paired
by seed (``paired_table``).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared/data/wiki-en-100m.txt"  # where the benchmark machine keeps it
HELDOUT_BYTES = 2_000_000
SMALL_TRAIN_BYTES = 2_000_000  # the training text of runs whose cost grows with V (estimators' small table)
SCORE_PAIRS = 50_000  # held-out predictions scored at the end (a uniform sample)
EPOCH_PAIRS = 10_000  # and after each epoch
SETTINGS = {"threads": 2, "dim": 100, "window": 5, "sample": 1e-4, "epochs": 5, "seed": 1}
COMBOS = {  # name: (model, loss settings)
    "skip-gram NS": ("skipgram", {"negative": 5}),
    "CBOW NS": ("cbow", {"negative": 5}),
    "skip-gram HS": ("skipgram", {"hs": True, "negative": 0}),
    "CBOW HS": ("cbow", {"hs": True, "negative": 0}),
    "skip-gram sampled softmax 25": ("skipgram", {"sampled_softmax": 25}),
    "CBOW sampled softmax 25": ("cbow", {"sampled_softmax": 25}),
    "skip-gram NS subwords": ("skipgram", {"negative": 5, "subwords": True}),  # fastText's n-grams, 3 to 6
    "CBOW NS subwords": ("cbow", {"negative": 5, "subwords": True}),
}
METRICS = {  # name: (how to read it from a record, format, higher is better)
    "analogy %": (lambda run: 100 * run["analogy"], "{:.2f}", True),
    "WS-353": (lambda run: run["ws353"], "{:.4f}", True),
    "bits/word": (lambda run: run["score"]["bits_per_word"], "{:.4f}", False),
}


def cut_at_space(data: bytes, at: int) -> int:
    """The offset of the first space at or after ``at`` (the length if none)."""
    space = data.find(b" ", at)
    return len(data) if space < 0 else space


def split_corpus(corpus: Path, folder: Path, heldout_bytes: int = HELDOUT_BYTES) -> dict[str, Path]:
    """Write ``corpus``'s training text, held-out text (its last ``heldout_bytes``) and
    the first ``SMALL_TRAIN_BYTES`` of the training text into ``folder`` (once); return
    their paths by name (``train``, ``heldout``, ``small``)."""
    paths = {name: folder / f"{name}.txt" for name in ("train", "heldout", "small")}
    if all(path.exists() for path in paths.values()):
        return paths
    data = corpus.read_bytes()
    cut = cut_at_space(data, len(data) - heldout_bytes)
    train, heldout = data[:cut], data[cut + 1 :]
    paths["train"].write_bytes(train)
    paths["heldout"].write_bytes(heldout)
    paths["small"].write_bytes(train[: cut_at_space(train, SMALL_TRAIN_BYTES)])
    return paths


def w2v_json(*args: str) -> dict:
    """Run ``w2v ARGS --json``, with the w2v this process imports, and return what it printed."""
    import w2v

    checkout = Path(w2v.__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "w2v", *args, "--json"], capture_output=True, text=True, cwd=checkout)
    if done.returncode:
        raise SystemExit(f"w2v {' '.join(args)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def train_and_score(corpus: Path, heldout: Path, model: str, loss: dict, vocab: int | None, work: Path) -> dict:
    """One run of ``SETTINGS`` with ``loss`` (and at most ``vocab`` words): train (timed:
    the whole ``w2v.train`` call less Numba's compilation, which a first run of each loss
    pays once, and less the held-out scoring after each epoch), score and evaluate.
    Returns its record."""
    import w2v

    settings = {**SETTINGS, "model": model, **loss, **({"max_vocab": vocab} if vocab else {})}
    model_file, vectors_file = work / "model.npz", work / "vectors.bin"
    started = time.perf_counter()
    vectors = w2v.train(
        str(corpus), save_model=str(model_file), heldout=str(heldout), heldout_pairs=EPOCH_PAIRS, **settings
    )
    report = vectors.report
    wall = time.perf_counter() - started - report.compile_seconds - report.heldout_seconds
    vectors.save(vectors_file)
    score = w2v_json("score", str(model_file), str(heldout), "--max-pairs", str(SCORE_PAIRS))
    evaluation = w2v_json("eval", "-v", str(vectors_file))
    return {
        "vocab": len(vectors),
        "train_words": report.train_words,
        "wall_s": wall,
        "words_per_s": report.words_per_second,
        "epoch_heldout": report.epoch_heldout,
        "analogy": evaluation["analogies"][0]["accuracy"],
        "ws353": evaluation["similarity"][0]["spearman"],
        "score": score,
    }


def study_parser(description: str, results: Path) -> argparse.ArgumentParser:
    """The options every script of the benchmark corpus shares: ``--corpus``,
    ``--results`` (its JSON, ``results`` by default), ``--work`` (where the split
    corpus and the runs' files go) and ``--render``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the text to split into training and held-out")
    parser.add_argument("--results", type=Path, default=results, help="the JSON of the runs")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "w2v-estimators")
    parser.add_argument("--render", action="store_true", help="print the tables (and draw the plots) from the JSON")
    return parser


def summary(values: list[float], spec: str, signed: bool = False) -> str:
    """``mean ± sd`` of ``values``, each as ``spec`` formats it (the mean with its sign if ``signed``)."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    mean = (
        spec.replace("{:", "{:+").format(statistics.fmean(values)) if signed else spec.format(statistics.fmean(values))
    )
    return f"{mean} ± {spec.format(spread)}"


def paired_table(results: dict, column: str, groups: dict[str, str], metrics: dict = METRICS) -> str:
    """A markdown table of runs keyed ``combination/group/seed N``: per combination and
    group (``groups``: each key's group, shown as its value in ``column``; the first is
    the base), each of ``metrics``' mean ± sd over seeds, then each other group's mean
    difference from the base, paired by seed."""
    header = f"| combination | {column} | seeds | " + " | ".join(metrics) + " |"
    lines = [header, "|" + "---|" * (3 + len(metrics))]
    for combo in COMBOS:
        runs = {g: {k.split("/")[2]: v for k, v in results.items() if k.startswith(f"{combo}/{g}/")} for g in groups}
        for group, shown in groups.items():
            if runs[group]:
                cells = [summary([read(r) for r in runs[group].values()], spec) for read, spec, _ in metrics.values()]
                lines.append(f"| {combo} | {shown} | {len(runs[group])} | " + " | ".join(cells) + " |")
        base = next(iter(groups))
        for group, shown in list(groups.items())[1:]:
            seeds = sorted(set(runs[base]) & set(runs[group]))
            if len(seeds) < 2:
                continue
            cells = []
            for read, spec, _ in metrics.values():
                diffs = [read(runs[group][seed]) - read(runs[base][seed]) for seed in seeds]
                cells.append(summary(diffs, spec, signed=True))
            lines.append(f"| {combo} | {shown} − {groups[base]} | {len(seeds)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
