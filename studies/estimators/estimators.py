"""The estimators of the softmax side by side: the tables and plot of studies/estimators/README.md.

    python studies/estimators/estimators.py --table full    # six losses x two models (about 30 min on 2 cores)
    python studies/estimators/estimators.py --table small   # eight losses at --max-vocab 5000 (about 25 min)
    python studies/estimators/estimators.py --render        # the markdown tables and the plot from the JSON

The corpus (``--corpus``: the benchmark corpus, or text8) is split once by
``scripts/quality.py``: its last 2 MB (cut at a space) are the held-out text every
model is scored on, the rest the training text. Each run trains skip-gram or CBOW with 2 threads, dim
100, window 5, sample 1e-4, 5 epochs and seed 1, scoring a sample of held-out
predictions after each epoch (``train --heldout``), then ``w2v score`` (held-out
bits per word on ``SCORE_PAIRS`` predictions; normalised over the vocabulary for
the losses that are not) and ``w2v eval`` (analogies over the 30,000 most frequent
words, WordSim-353). The ``small`` table caps the vocabulary at 5,000 words and adds
the full softmax; as that costs O(V) per prediction (skip-gram: per context word),
its runs train on the first ``SMALL_TRAIN_BYTES`` of the training text, not all of it.

Results go to ``estimators.json`` beside this script (one record per run, replaced run
by run, so that a table can be rerun alone); ``--render`` prints the tables and draws
``estimators-heldout.png`` beside it. Not a test and not run in CI.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the shared helpers: scripts/quality.py

from quality import SETTINGS, SMALL_TRAIN_BYTES, split_corpus, study_parser, train_and_score  # noqa: E402

RESULTS = HERE / "estimators.json"
PLOT = HERE / "estimators-heldout.png"
SMALL_VOCAB = 5000
LOSSES = {  # name: w2v.train settings
    "HS Huffman": {"hs": True, "negative": 0},
    "HS balanced": {"hs": True, "negative": 0, "tree": "balanced"},
    "NS 5": {"negative": 5},
    "NCE 5": {"nce": 5},
    "NCE 25": {"nce": 25},
    "sampled softmax 25": {"sampled_softmax": 25},
}
SOFTMAXES = {  # the small table's additions; beta 0.1 as Devlin et al. (2014) weigh log^2 Z
    "softmax": {"softmax": True},
    "softmax, self-norm 0.1": {"softmax": True, "self_norm": 0.1},
}
TABLES = {"full": LOSSES, "small": {**LOSSES, **SOFTMAXES}}
MODELS = ("skipgram", "cbow")
MODEL_NAMES = {"skipgram": "skip-gram", "cbow": "CBOW"}
TITLES = {
    "full": "Full vocabulary",
    "small": f"{SMALL_VOCAB:,} words, first {SMALL_TRAIN_BYTES / 1e6:.0f} MB of the training text",
}


def run_table(table: str, models: list[str], losses: list[str], corpus: Path, work: Path, results_path: Path) -> None:
    """Train and score the ``losses`` of ``table`` (all if empty) for ``models``,
    saving each record in ``results_path`` as it comes."""
    paths = split_corpus(corpus, work)
    corpus = paths["small" if table == "small" else "train"]
    vocab = SMALL_VOCAB if table == "small" else None
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    for model in models:
        for name, loss in TABLES[table].items():
            if losses and name not in losses:
                continue
            key = f"{table}/{model}/{name}"
            print(f"{key} ...", file=sys.stderr, flush=True)
            results[key] = train_and_score(corpus, paths["heldout"], model, loss, vocab, work)
            results_path.write_text(json.dumps(results, indent=1) + "\n")
            print(f"{key}: {format_row(name, results[key])}", file=sys.stderr, flush=True)


def format_row(name: str, run: dict) -> str:
    """A markdown table row: loss, wall s, words/s, analogy %, WS-353, held-out bits
    per word, perplexity, the unigram model's bits per word, mean log Z."""
    score = run["score"]
    log_z = "-" if score.get("mean_log_z") is None else f"{score['mean_log_z']:.2f}"
    cells = [
        name,
        f"{run['wall_s']:.0f}",
        f"{run['words_per_s'] / 1e3:,.0f}k",
        f"{100 * run['analogy']:.1f}",
        f"{run['ws353']:.3f}",
        f"{score['bits_per_word']:.3f}",
        f"{score['perplexity']:,.0f}",
        f"{score['unigram_bits_per_word']:.3f}",
        log_z,
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| loss | wall s | words/s | analogy % | WS-353 | bits/word | perplexity | unigram bits/word | mean log Z |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def render(results: dict) -> str:
    """The markdown tables of every table and model in ``results``."""
    parts = []
    for table in TABLES:
        for model in MODELS:
            rows = [format_row(name, results[f"{table}/{model}/{name}"]) for name in TABLES[table]
                    if f"{table}/{model}/{name}" in results]  # fmt: skip
            if rows:
                parts.append(f"**{TITLES[table]}, {MODEL_NAMES[model]}**\n\n{HEADER}\n" + "\n".join(rows))
    return "\n\n".join(parts)


def draw(results: dict, picture: Path) -> None:
    """Held-out bits per word after each epoch, a panel per table and model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for row, table in enumerate(TABLES):
        for column, model in enumerate(MODELS):
            axis = axes[row][column]
            for name in TABLES[table]:
                run = results.get(f"{table}/{model}/{name}")
                if run:
                    axis.plot(range(1, len(run["epoch_heldout"]) + 1), run["epoch_heldout"], marker="o", label=name)
            axis.set_title(
                f"{MODEL_NAMES[model]}, {'full vocabulary' if table == 'full' else f'{SMALL_VOCAB:,} words'}"
            )
            axis.set_ylabel("held-out bits per word")
            axis.set_xticks(range(1, SETTINGS["epochs"] + 1))
            axis.grid(alpha=0.3)
    for axis in axes[1]:
        axis.set_xlabel("epoch")
    axes[0][0].legend(fontsize=8)
    axes[1][0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(picture, dpi=110)


def main() -> None:
    parser = study_parser(__doc__.split("\n\n")[0], RESULTS)
    parser.add_argument("--table", choices=list(TABLES), help="train and score this table's runs")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: skipgram, cbow")
    parser.add_argument("--losses", default="", help="comma-separated loss names of the table (default: all)")
    parser.add_argument("--plot", type=Path, default=PLOT, help="the picture --render draws")
    args = parser.parse_args()
    if args.table:
        args.work.mkdir(parents=True, exist_ok=True)
        losses = [name for name in args.losses.split(",") if name]
        run_table(args.table, args.models.split(","), losses, args.corpus, args.work, args.results)
    if args.render:
        results = json.loads(args.results.read_text())
        print(render(results))
        draw(results, args.plot)


if __name__ == "__main__":
    main()
