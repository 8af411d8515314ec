"""Train gensim's Word2Vec in its fastest mode (``corpus_file``) for ``scripts/bench.py``.

Run as a child process so that its wall time and peak memory are its own::

    python scripts/gensim_runner.py CORPUS OUT.bin --sg 1 --hs 0 --negative 5 --dim 100 \
        --window 5 --sample 1e-4 --min-count 5 --epochs 5 --threads 2

CORPUS must have lines of at most 10,000 tokens: ``corpus_file`` silently drops the rest of
a longer line (``bench.py`` makes such a copy).

The learning rate is word2vec.c's (and w2v's) default, as for the other systems: 0.025 for
skip-gram and 0.05 for CBOW, decaying to alpha * 1e-4. gensim's own default is 0.025 for both
(CBOW at 0.025 scored 28% on the analogies where it scores 34-35% at 0.05) and 0.0001 at the end.
"""

import argparse

from gensim.models import Word2Vec


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
    return parser.parse_args()


def main() -> None:
    """Train and write word2vec binary vectors."""
    args = parse_args()
    alpha = 0.025 if args.sg else 0.05
    model = Word2Vec(
        corpus_file=args.corpus,
        alpha=alpha,
        min_alpha=alpha * 1e-4,
        vector_size=args.dim,
        window=args.window,
        negative=args.negative,
        hs=args.hs,
        sample=args.sample,
        min_count=args.min_count,
        epochs=args.epochs,
        workers=args.threads,
        sg=args.sg,
    )
    model.wv.save_word2vec_format(args.output, binary=True)


if __name__ == "__main__":
    main()
