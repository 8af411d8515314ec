"""The quality of a vectors file, by one scorer for every system: analogy accuracy over the
30,000 most frequent words (all of questions-words, and its syntactic sections alone) and
WS-353's Spearman rho."""

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import NamedTuple

from .records import Context

ANALOGY_VOCAB = 30_000
SYNTACTIC_PREFIX = "gram"  # questions-words' syntactic sections: gram1-adjective-to-adverb ...


def pick_scorer() -> str:
    """``w2v eval`` when this w2v has it, else gensim."""
    probe = subprocess.run([sys.executable, "-m", "w2v", "eval", "--help"], capture_output=True, text=True)
    if probe.returncode == 0 and "--json" in probe.stdout:
        return "w2v eval"
    return "gensim"


class Scores(NamedTuple):
    """A vectors file's analogy accuracy (%), over all questions and over the syntactic
    sections alone, and its WS-353 Spearman rho; None where it could not be scored."""

    analogy_pct: float | None = None
    syntactic_pct: float | None = None
    ws353_rho: float | None = None


def score(ctx: Context, vectors: Path) -> tuple[Scores, str | None]:
    """The ``Scores`` of a word2vec binary or text vectors file, and the scorer that gave them
    (empty scores and None, with a note, when no scorer can rate it)."""
    if ctx.scorer == "w2v eval":
        try:
            return score_w2v(ctx, vectors), "w2v eval"
        except (subprocess.CalledProcessError, ValueError, KeyError, IndexError, TypeError) as err:
            ctx.notes.append(f"`w2v eval` failed on {vectors.name} ({err}); gensim scored it instead.")
    try:
        return score_gensim(ctx, vectors), "gensim"
    except (ValueError, KeyError, ZeroDivisionError, OSError) as err:
        ctx.notes.append(f"gensim could not score {vectors.name}: {err}")
        return Scores(), None


def syntactic_pct(sections: list[tuple[str, int, int]]) -> float | None:
    """Accuracy (%) over the syntactic sections (named ``gram...`` in questions-words) of
    ``(name, correct, answered)`` triples; None when none was answered."""
    correct = sum(right for name, right, _ in sections if name.startswith(SYNTACTIC_PREFIX))
    answered = sum(seen for name, _, seen in sections if name.startswith(SYNTACTIC_PREFIX))
    return 100 * correct / answered if answered else None


def score_w2v(ctx: Context, vectors: Path) -> Scores:
    """Score with ``w2v eval --json`` (analogy accuracy there is a fraction)."""
    command = [sys.executable, "-m", "w2v", "eval", "-v", str(vectors), "--json", "--restrict", str(ANALOGY_VOCAB),
               "--analogies", str(ctx.eval_dir / "questions-words.txt"),
               "--similarity", str(ctx.eval_dir / "wordsim353.tsv")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    analogies = result["analogies"][0]
    sections = [(part["name"], part["correct"], part["answered"]) for part in analogies["sections"]]
    return Scores(
        100 * float(analogies["accuracy"]), syntactic_pct(sections), float(result["similarity"][0]["spearman"])
    )


def score_gensim(ctx: Context, vectors: Path) -> Scores:
    """Score with gensim: questions-words over the 30,000 most frequent words, case-insensitive."""
    from gensim.models import KeyedVectors  # optional, and slow to import

    binary = vectors.suffix == ".bin"
    kv = KeyedVectors.load_word2vec_format(str(vectors), binary=binary, unicode_errors="replace")
    with warnings.catch_warnings():  # all-zero vectors (words never trained) divide by a zero norm
        warnings.simplefilter("ignore", RuntimeWarning)
        analogy, parts = kv.evaluate_word_analogies(
            str(ctx.eval_dir / "questions-words.txt"), restrict_vocab=ANALOGY_VOCAB, case_insensitive=True
        )
        rho = kv.evaluate_word_pairs(str(ctx.eval_dir / "wordsim353.tsv"), case_insensitive=True)[1][0]
    sections = [(p["section"], len(p["correct"]), len(p["correct"]) + len(p["incorrect"])) for p in parts]
    return Scores(100 * analogy, syntactic_pct(sections), float(rho))
