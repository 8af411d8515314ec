"""Train fastText with subwords off (a plain word2vec) for ``scripts/bench.py``.

Run as a child process so that its wall time and peak memory are its own::

    python scripts/fasttext_runner.py CORPUS OUT.bin --model skipgram --loss ns --negative 5 \
        --dim 100 --window 5 --sample 1e-4 --min-count 5 --epochs 5 --threads 2

``minn=maxn=0``, ``wordNgrams=1`` and ``bucket=0`` leave only the word vectors, which are
written in word2vec's binary format like the other systems' (fastText itself writes text).
The learning rate is word2vec.c's, 0.025 for skip-gram and 0.05 for CBOW (fastText's own
default is 0.05 for both), so that every system trains with the same settings.
"""

import argparse

import fasttext
import numpy as np


def parse_args() -> argparse.Namespace:
    """The training settings, named as in ``bench.py``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("output")
    parser.add_argument("--model", choices=["skipgram", "cbow"], required=True)
    parser.add_argument("--loss", choices=["ns", "hs"], required=True)
    for name in ["negative", "dim", "window", "min-count", "epochs", "threads"]:
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--sample", type=float, required=True)
    return parser.parse_args()


def write_binary(path: str, words: list[str], matrix: np.ndarray) -> None:
    """word2vec binary: header ``"V D\\n"``, then per word its bytes, a space, D float32, a newline."""
    with open(path, "wb") as out:
        out.write(f"{len(words)} {matrix.shape[1]}\n".encode())
        for word, row in zip(words, matrix.astype("<f4"), strict=True):
            out.write(word.encode("utf-8") + b" " + row.tobytes() + b"\n")


def main() -> None:
    """Train and write the word vectors."""
    args = parse_args()
    model = fasttext.train_unsupervised(
        args.corpus,
        model=args.model,
        lr=0.025 if args.model == "skipgram" else 0.05,
        dim=args.dim,
        ws=args.window,
        neg=args.negative,
        loss=args.loss,
        t=args.sample,
        minCount=args.min_count,
        epoch=args.epochs,
        thread=args.threads,
        minn=0,
        maxn=0,
        wordNgrams=1,
        bucket=0,
        verbose=0,
    )
    words = model.get_words(on_unicode_error="replace")
    write_binary(args.output, words, model.get_input_matrix()[: len(words)])


if __name__ == "__main__":
    main()
