"""Train fastText, with subwords off (a plain word2vec) or on (``--subwords``), for ``scripts/bench.py``.

Run as a child process so that its wall time and peak memory are its own::

    python scripts/fasttext_runner.py CORPUS OUT.bin --model skipgram --loss ns --negative 5 \
        --dim 100 --window 5 --sample 1e-4 --min-count 5 --epochs 5 --threads 2 --seed 1
    python scripts/fasttext_runner.py CORPUS OUT.vec --model skipgram --loss ns --negative 5 \
        --dim 100 --window 5 --sample 1e-4 --min-count 5 --epochs 5 --threads 2 --seed 1 \
        --subwords --alpha 0.05 --minn 3 --maxn 6 --bucket 2000000 --save-model OUT.bin

Without ``--subwords``, ``minn=maxn=0``, ``wordNgrams=1`` and ``bucket=0`` leave only the word
vectors, and the learning rate is word2vec.c's, 0.025 for skip-gram and 0.05 for CBOW
(fastText's own default is 0.05 for both), so that every system trains with the same settings.
With it, fastText's model: a word's vector is the mean of its own row and its character
n-grams' (``get_word_vector``), ``--save-model`` writes the fastText ``.bin`` (``save_model``).
The vectors are written as word2vec binary for a ``.bin`` name, else as text (a ``.vec``, as
fastText's ``saveVectors`` writes it). fastText's noise distribution is counts^0.5, fixed.
"""

import argparse

import fasttext
import numpy as np
from peer_options import add_subword_options, parsed


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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, help="the learning rate [0.025 skip-gram, 0.05 CBOW]")
    add_subword_options(parser, "fastText's model")
    return parsed(parser)


def write_vectors(path: str, words: list[str], matrix: np.ndarray) -> None:
    """word2vec binary for a ``.bin`` path (header ``"V D\\n"``, then per word its bytes, a
    space, D float32, a newline), else text (``word v1 ... vD``, values as ``%.6g``)."""
    rows = np.ascontiguousarray(matrix, dtype="<f4")
    row_format = " ".join(["%.6g"] * rows.shape[1]).encode() + b"\n"
    with open(path, "wb") as out:
        out.write(f"{len(words)} {rows.shape[1]}\n".encode())
        for word, row in zip(words, rows, strict=True):
            name = word.encode("utf-8") + b" "
            out.write(name + (row.tobytes() + b"\n" if path.endswith(".bin") else row_format % tuple(row.tolist())))


def train(args: argparse.Namespace):
    """fastText's unsupervised model, with or without its n-grams."""
    off = {"minn": 0, "maxn": 0, "bucket": 0}
    ngrams = {"minn": args.minn, "maxn": args.maxn, "bucket": args.bucket} if args.subwords else off
    # fasttext-wheel 0.9.2 takes no seed argument, yet hands fastText every entry of its defaults
    fasttext.FastText.unsupervised_default["seed"] = args.seed
    return fasttext.train_unsupervised(
        args.corpus,
        model=args.model,
        lr=args.alpha or (0.025 if args.model == "skipgram" else 0.05),
        dim=args.dim,
        ws=args.window,
        neg=args.negative,
        loss=args.loss,
        t=args.sample,
        minCount=args.min_count,
        epoch=args.epochs,
        thread=args.threads,
        wordNgrams=1,
        verbose=0,
        **ngrams,
    )


def main() -> None:
    """Train and write the word vectors (and the model, if asked)."""
    args = parse_args()
    model = train(args)
    words = model.get_words(on_unicode_error="replace")
    if args.subwords:
        vectors = np.stack([model.get_word_vector(word) for word in words])
    else:
        vectors = model.get_input_matrix()[: len(words)]
    write_vectors(args.output, words, vectors)
    if args.save_model:
        model.save_model(args.save_model)


if __name__ == "__main__":
    main()
