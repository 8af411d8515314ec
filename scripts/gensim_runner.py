"""Train gensim's Word2Vec, or its FastText (``--subwords``), in its fastest mode
(``corpus_file``) for ``scripts/bench.py``.

Run as a child process so that its wall time and peak memory are its own::

    python scripts/gensim_runner.py CORPUS OUT.bin --sg 1 --hs 0 --negative 5 --dim 100 \
        --window 5 --sample 1e-4 --min-count 5 --epochs 5 --threads 2 --seed 1
    python scripts/gensim_runner.py CORPUS OUT.vec --sg 1 --hs 0 --negative 5 --dim 100 \
        --window 5 --sample 1e-4 --min-count 5 --epochs 5 --threads 2 --seed 1 --subwords \
        --alpha 0.05 --minn 3 --maxn 6 --bucket 2000000 --ns-exponent 0.5 --save-model OUT.bin

CORPUS must have lines of at most 10,000 tokens: ``corpus_file`` silently drops the rest of
a longer line (``bench.py`` makes such a copy). The vectors are written as word2vec binary
for a ``.bin`` name, else as text (with ``--subwords``: each word's composed vector);
``--save-model`` also writes FastText's whole model as a fastText ``.bin``.

The learning rate is word2vec.c's (and w2v's) default unless ``--alpha`` gives it, as for the
other systems: 0.025 for skip-gram and 0.05 for CBOW, decaying to alpha * 1e-4. gensim's own
default is 0.025 for both (CBOW at 0.025 scored 28% on the analogies where it scores 34-35% at
0.05) and 0.0001 at the end.
"""

import argparse

from gensim.models import FastText, Word2Vec
from gensim.models.fasttext import save_facebook_model
from peer_options import add_subword_options, parsed


def parse_args() -> argparse.Namespace:
    """The training settings, named as in ``bench.py``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("output")
    for name, kind in [("sg", int), ("hs", int), ("negative", int), ("dim", int), ("window", int)]:
        parser.add_argument(f"--{name}", type=kind, required=True)
    parser.add_argument("--sample", type=float, required=True)
    parser.add_argument("--min-count", type=int, required=True)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--alpha", type=float, help="[0.025 skip-gram, 0.05 CBOW]")
    parser.add_argument("--ns-exponent", type=float, default=0.75)
    add_subword_options(parser, "gensim's FastText")
    return parsed(parser)


def train(args: argparse.Namespace) -> Word2Vec:
    """A trained Word2Vec, or FastText with ``--subwords``."""
    alpha = args.alpha or (0.025 if args.sg else 0.05)
    settings = {
        "corpus_file": args.corpus,
        "alpha": alpha,
        "min_alpha": alpha * 1e-4,
        "vector_size": args.dim,
        "window": args.window,
        "negative": args.negative,
        "ns_exponent": args.ns_exponent,
        "hs": args.hs,
        "sample": args.sample,
        "min_count": args.min_count,
        "epochs": args.epochs,
        "workers": args.threads,
        "sg": args.sg,
        "seed": args.seed,
    }
    if args.subwords:
        return FastText(**settings, min_n=args.minn, max_n=args.maxn, bucket=args.bucket)
    return Word2Vec(**settings)


def main() -> None:
    """Train and write the vectors (and the fastText model, if asked)."""
    args = parse_args()
    model = train(args)
    model.wv.save_word2vec_format(args.output, binary=args.output.endswith(".bin"))
    if args.save_model:
        save_facebook_model(model, args.save_model)


if __name__ == "__main__":
    main()
