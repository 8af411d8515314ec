"""How much of a Huffman path's row traffic batching centre words would share.

    python studies/path_sharing/path_sharing.py text8                  # B = 2, 4, 8, 16
    python studies/path_sharing/path_sharing.py corpus.txt --batches 2,4 --words 1000000

Skip-gram with hierarchical softmax scores every context word of a window against
every node of the centre word's path. Training B consecutive centre words at once
would read and write a node that several of their paths share (the top of the tree)
once for all of them; the (context, node) pairs, and so the arithmetic, stay the
same. This prints, for groups of B consecutive centre words of the corpus' first
``--words`` words, subsampled as training subsamples them (``--sample``), the node
rows their paths visit and how many of those are distinct: the share such batching
would save. studies/path_sharing/README.md reports it. Not a test and not run in CI.
"""

import argparse
from pathlib import Path

import numpy as np

from w2v.corpus.counting import count_table
from w2v.corpus.vocab import Vocab

GROUPS = 50_000  # groups of B centre words counted per B


def kept_ids(corpus: Path, vocab: Vocab, words: int, sample: float, seed: int) -> np.ndarray:
    """The vocabulary ids (K,) of the first ``words`` words of ``corpus`` that are in the
    vocabulary and survive subsampling (keep probability ``Vocab.keep_probabilities``)."""
    index = {word: i for i, word in enumerate(vocab.words)}
    with open(corpus, "rb") as text:
        tokens = text.read(words * 12).split()[:words]
    ids = np.array([index.get(token, -1) for token in tokens], dtype=np.int64)
    ids = ids[ids >= 0]
    keep = vocab.keep_probabilities(sample)
    return ids[np.random.default_rng(seed).random(len(ids)) < keep[ids]]


def node_rows(ids: np.ndarray, points: np.ndarray, offsets: np.ndarray, batch: int) -> tuple[int, int]:
    """Node rows visited by the paths of ``GROUPS`` groups of ``batch`` consecutive centre
    words of ``ids``, and how many are distinct within their group."""
    groups = ids[: len(ids) // batch * batch].reshape(-1, batch)[:GROUPS]
    visited = distinct = 0
    for group in groups:
        paths = [points[offsets[word] : offsets[word + 1]] for word in group]
        visited += sum(len(path) for path in paths)
        distinct += len(np.unique(np.concatenate(paths)))
    return visited, distinct


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the text: the benchmark corpus, or text8")
    parser.add_argument("--batches", default="2,4,8,16", help="comma-separated B")
    parser.add_argument("--words", type=int, default=2_000_000)
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    table = count_table([str(args.corpus)])
    vocab = Vocab.choose(table.words, table.counts, args.min_count, None)
    _codes, points, offsets = vocab.huffman()
    ids = kept_ids(args.corpus, vocab, args.words, args.sample, args.seed)
    print(f"{len(vocab):,} words; mean path {np.diff(offsets)[ids].mean():.1f} nodes per kept centre word")
    for batch in (int(b) for b in args.batches.split(",")):
        visited, distinct = node_rows(ids, points, offsets, batch)
        print(f"B = {batch}: {visited:,} node rows visited, {distinct:,} distinct: {1 - distinct / visited:.1%} shared")


if __name__ == "__main__":
    main()
