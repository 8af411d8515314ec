"""Does word2vec.c's subsampling draw keep different words from w2v's?

word2vec.c drops a word w when ``keep(w) < (r & 0xFFFF) / 65536``, r its 64-bit
linear congruential generator (r <- 25214903917 r + 11 mod 2^64) after one step;
w2v compares with the high 24 bits, ``(r >> 40) / 2^24``. The low 16 bits of r
are a generator of their own, modulo 2^16, so consecutive draws are correlated.
This script measures what that changes on a text: the tokens kept, the share of
the ten most frequent words, the spread of "the" per 1000 kept words and how
often two frequent words (kept with probability under 0.2) stay side by side,
relative to chance. Sentences of 10,000 tokens; after each, one draw per kept
word, as CBOW HS draws its windows. Also prints the generator's own correlation:
P(u_n < p, u_n+1 < p) / p^2 for the low 16 bits.

    python studies/cbow_parity/low16_draw.py wiki-en-100m.txt --bytes 40000000
"""

import argparse
from collections import Counter
from pathlib import Path

import numba
import numpy as np

from w2v.corpus.vocab import Vocab
from w2v.engine.kernels import LCG_ADD, LCG_MUL, lcg_next, uniform24

SAMPLE = 1e-4  # scripts/quality.py's
SENTENCE = 10_000  # tokens: w2v's pieces of a one-line corpus


@numba.njit
def subsample(ids, keep, low16, seed):
    """The ids kept from ``ids`` (N,) int64 with keep probabilities ``keep`` (V,),
    drawing with the low 16 bits of the generator (``low16``) or, as w2v's kernel
    does (``uniform24``), its high 24, a draw per word with keep < 1."""
    state, out, n = np.uint64(seed), np.empty_like(ids), 0
    for start in range(0, ids.shape[0], SENTENCE):
        kept = 0
        for i in range(start, min(start + SENTENCE, ids.shape[0])):
            word = ids[i]
            if keep[word] < 1.0:
                state = lcg_next(state)
                u = np.float32(state & np.uint64(0xFFFF)) / np.float32(65536.0) if low16 else uniform24(state)
                if keep[word] < u:
                    continue
            out[n + kept] = word
            kept += 1
        for _ in range(kept):  # a window draw per kept word
            state = lcg_next(state)
        n += kept
    return out[:n]


def lag_one_excess(p: float) -> float:
    """P(u_n < p and u_n+1 < p) / p^2 over the whole period of the low 16 bits."""
    low = np.arange(1 << 16, dtype=np.int64)
    following = (int(LCG_MUL) * low + int(LCG_ADD)) % (1 << 16)
    return float(np.mean((low < p * 65536) & (following < p * 65536)) / p**2)


def statistics(kept: np.ndarray, keep: np.ndarray) -> dict[str, float]:
    """What a draw kept: its size, the ten commonest words' share, the variance of
    word 0's count per 1000 kept words and side-by-side frequent words over chance."""
    frequent = keep[kept] < 0.2
    blocks = (kept[: kept.shape[0] // 1000 * 1000] == 0).reshape(-1, 1000).sum(axis=1)
    return {
        "kept": float(kept.shape[0]),
        "top ten share": float(np.mean(kept < 10)),
        "commonest per 1000, variance": float(blocks.var()),
        "frequent pairs over chance": float(np.mean(frequent[1:] & frequent[:-1]) / np.mean(frequent) ** 2),
    }


def read_ids(path: Path, size: int) -> tuple[np.ndarray, Vocab]:
    """The first ``size`` bytes of ``path`` as ids of w2v's vocabulary of them (words
    of at least 5 occurrences, most frequent first), the others left out."""
    words = path.read_bytes()[:size].split()[:-1]
    counts = Counter(words)
    vocab, _ = Vocab.select(list(counts), np.fromiter(counts.values(), np.int64, len(counts)), 5, None)
    index = {w: i for i, w in enumerate(vocab.words)}
    ids = np.array([index.get(w, -1) for w in words], dtype=np.int64)
    return ids[ids >= 0], vocab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--bytes", type=int, default=40_000_000, help="read this much of the corpus")
    parser.add_argument("--passes", type=int, default=3, help="seeds of each draw")
    args = parser.parse_args()
    ids, vocab = read_ids(args.corpus, args.bytes)
    keep = vocab.keep_probabilities(SAMPLE)
    for low16, name in ((False, "high 24 bits (w2v)"), (True, "low 16 bits (word2vec.c)")):
        runs = [statistics(subsample(ids, keep, low16, 7919 * s + 13), keep) for s in range(1, args.passes + 1)]
        print(name, {key: round(float(np.mean([r[key] for r in runs])), 5) for key in runs[0]})
    excess = {p: round(lag_one_excess(p), 3) for p in (0.02, 0.04, 0.08, 0.3)}
    print("low 16 bits, two draws in a row under p, over chance:", excess)


if __name__ == "__main__":
    main()
