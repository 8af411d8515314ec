"""Intrinsic evaluation: word analogies (accuracy) and word-pair similarity (Spearman).

The semantics are gensim's ``KeyedVectors.evaluate_word_analogies`` and
``evaluate_word_pairs`` (themselves word2vec.c's compute-accuracy), so the numbers
agree with theirs: only the first ``restrict`` words are used; case-insensitive means
every word is upper-cased and a word's vector is that of its first (most frequent)
case variant; questions with a word outside that vocabulary are skipped and counted;
3CosAdd excludes the three question words, then takes the best of the top five
that is not a case variant of one of them.

Two standard sets ship with the package (``w2v/data/README.md`` gives their sources
and licences): ``DEFAULT_ANALOGIES``, the Google analogy set, and
``DEFAULT_SIMILARITY``, WordSim-353. ``rule="word2vec"`` grades as
compute-accuracy.c does instead: the single best word other than the three
question rows, and only if its cosine is positive.
"""

import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol, cast

import numpy as np

from w2v.corpus.sources import stream_errors
from w2v.corpus.vocab import text_words
from w2v.errors import FormatError, W2VError
from w2v.files import open_input, without_bom
from w2v.vectors.search import analogy_method, cosmul_scores
from w2v.words import WHITESPACE

QUESTION_BATCH = 256
GENSIM_TOPN = 5  # gensim looks at the 5 best answers for one that is not a question word
RULES = ("gensim", "word2vec")  # how an answer is picked: see the module docstring
NO_SECTION = "(none)"  # the section of questions before any ': section' header
SCORE_COLUMNS = ("simlex999", "score", "similarity", "sim", "human (mean)", "relatedness", "mean")
DATA = Path(__file__).parents[1] / "data"
SPACES = WHITESPACE.decode()  # what ends a word, in a corpus and here: ASCII whitespace


class UnitVectors(Protocol):
    """What evaluation reads of a ``Vectors``: its words (most frequent first) and its
    rows at unit length, (V, D) float32."""

    words: list[str]

    @property
    def unit(self) -> np.ndarray: ...

    def __len__(self) -> int: ...


DEFAULT_ANALOGIES = str(DATA / "questions-words.txt")  # Mikolov et al. 2013: 19,544 questions, 14 sections
DEFAULT_SIMILARITY = str(DATA / "wordsim353.tsv")  # Finkelstein et al. 2002: 353 pairs


Question = tuple[str, str, str, str]  # a b c d, as matched: upper-cased when case-insensitive


@dataclass
class AnalogySection:
    """A section's ``questions`` in file order and their ``answers``: True (right),
    False (wrong), or None (skipped: a word outside the restricted vocabulary)."""

    name: str
    questions: list[Question] = field(default_factory=list)
    answers: list[bool | None] = field(default_factory=list)

    def with_answer(self, *answers: bool | None) -> list[Question]:
        """The questions whose answer is one of ``answers``, in file order."""
        return [q for q, a in zip(self.questions, self.answers, strict=True) if any(a is b for b in answers)]

    @property
    def correct(self) -> int:
        return self.answers.count(True)

    @property
    def incorrect(self) -> int:
        return self.answers.count(False)

    @property
    def answered(self) -> int:
        return self.correct + self.incorrect

    @property
    def accuracy(self) -> float:
        """Correct / answered; 0.0 when nothing was answered (as gensim)."""
        return self.correct / self.answered if self.answered else 0.0

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "correct": self.correct,
            "incorrect": self.incorrect,
            "answered": self.answered,
            "accuracy": self.accuracy,
        }


@dataclass
class AnalogyResult:
    path: str
    sections: list[AnalogySection]
    questions: int  # well-formed questions read
    skipped: int  # questions with a word outside the restricted vocabulary
    invalid: int  # lines that are neither a section header nor four words
    restrict: int  # the words searched: the first min(restrict, words) (word2vec.c compute-accuracy)
    case_insensitive: bool
    method: str

    @property
    def correct(self) -> int:
        return sum(s.correct for s in self.sections)

    @property
    def answered(self) -> int:
        return sum(s.answered for s in self.sections)

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "accuracy": self.accuracy,
            "correct": self.correct,
            "answered": self.answered,
            "questions": self.questions,
            "skipped": self.skipped,
            "invalid": self.invalid,
            "restrict": self.restrict,
            "case_insensitive": self.case_insensitive,
            "method": self.method,
            "sections": [s.to_dict() for s in self.sections],
        }


@dataclass
class SimilarityResult:
    path: str
    spearman: float
    pearson: float
    pairs: int  # pairs with both words in the vocabulary
    missing: int  # pairs with a word outside it: skipped, or scored 0 (``dummy4unknown``)
    invalid: int  # lines that are not a word pair and a score
    case_insensitive: bool
    restrict: int | None = None
    spearman_p: float = math.nan  # two-sided p-values, as scipy's spearmanr and pearsonr
    pearson_p: float = math.nan

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Questions:
    """An analogy file: sections of ``(a, b, c, d)`` questions (a is to b as c is to d)."""

    sections: list[tuple[str, list[tuple[str, str, str, str]]]] = field(default_factory=list)
    invalid: int = 0


def _read_lines(path: str, encoding: str = "utf-8") -> list[str]:
    """The lines of the evaluation file ``path``, read as a corpus is: decompressed as
    its name says (``files.open_input``: .gz .bz2 .xz .zst), past a UTF-8 byte-order
    mark, ended by newlines alone (not by the U+2028 or U+0085 a word may hold);
    decoded from ``encoding``, bytes that are not U+FFFD."""
    try:
        with open_input(path) as fin:
            data = without_bom(fin.read())
    except FileNotFoundError:
        raise W2VError(f"evaluation file not found: {path}") from None
    except (ValueError, *stream_errors()) as err:  # type: ignore[misc]  # a tuple built at run time
        raise W2VError(f"cannot read {path}: {getattr(err, 'strerror', None) or err}") from None
    return data.decode(encoding, "replace").split("\n")


def read_analogies(path: str | os.PathLike) -> Questions:
    """Read an analogy file (see ``parse_analogies``)."""
    path = os.fspath(path)
    return parse_analogies(_read_lines(path), path)


def parse_analogies(lines: Iterable[str], source: str) -> Questions:
    """Parse ``: section`` headers and ``a b c d`` lines (blank lines ignored, other
    lines counted as invalid). Questions before any header go to section ``NO_SECTION``.
    ``source`` names the input in the error raised when it holds no question."""
    out = Questions()
    current: list | None = None
    for line in lines:
        if line.startswith(":"):
            current = []
            out.sections.append((line.lstrip(": ").strip(SPACES), current))
            continue
        words = text_words(line)
        if not words:
            continue
        if len(words) != 4:
            out.invalid += 1
            continue
        if current is None:
            current = []
            out.sections.append((NO_SECTION, current))
        current.append(tuple(words))
    if not any(q for _, q in out.sections):
        raise FormatError(f"{source}: no analogy questions ('a b c d' lines) found")
    return out


def read_pairs(
    path: str | os.PathLike, delimiter: str | None = None, encoding: str = "utf-8"
) -> tuple[list[tuple[str, str, float]], int]:
    """Read word-pair similarity lines ``w1 w2 score`` separated by ``delimiter`` (by
    default tabs, or else spaces); ``#`` comments and blank lines are ignored. A first
    row that is not numeric is a header: if it names a score column (e.g. SimLex's
    ``SimLex999``) that column is used, else the third. Returns the pairs and the
    count of invalid lines."""
    path = os.fspath(path)
    pairs, invalid, column, first = [], 0, 2, True
    for line in _read_lines(path, encoding):
        if not line.strip(SPACES) or line.startswith("#"):
            continue
        separator = delimiter if delimiter is not None else ("\t" if "\t" in line else None)  # None: whitespace
        fields = text_words(line) if separator is None else [f.strip(SPACES) for f in line.split(separator)]
        try:
            if len(fields) <= column:
                raise ValueError
            score = float(fields[column])
        except ValueError:
            if first:
                names = [f.lower() for f in fields]
                column = next((names.index(c) for c in SCORE_COLUMNS if c in names[2:]), column)
            else:
                invalid += 1
            first = False
            continue
        first = False
        pairs.append((fields[0], fields[1], score))
    if not pairs:
        raise FormatError(f"{path}: no word pairs ('word1 word2 score' lines) found")
    return pairs, invalid


def restricted_index(vectors: UnitVectors, restrict: int | None, case_insensitive: bool) -> dict[str, int]:
    """Key to row over the first ``restrict`` words; upper-cased keys when case-insensitive,
    the first (most frequent) variant winning, as gensim's ``ok_vocab``."""
    words = vectors.words[: len(vectors) if restrict is None else restrict]
    index = {}
    for i in range(len(words) - 1, -1, -1):
        index[words[i].upper() if case_insensitive else words[i]] = i
    return index


def evaluate_analogies(
    vectors: UnitVectors,
    path: str | os.PathLike,
    restrict: int | None = 30_000,
    case_insensitive: bool = True,
    method: str = "add",
    rule: str = "gensim",
) -> AnalogyResult:
    """Accuracy on an analogy file, per section and overall (see the module docstring).
    ``method="cosmul"`` (or its alias ``"mul"``) ranks answers by 3CosMul instead of 3CosAdd;
    ``rule="word2vec"`` picks the answer as compute-accuracy.c does; ``restrict=None``: all words."""
    path = os.fspath(path)
    return score_analogies(vectors, read_analogies(path), path, restrict, case_insensitive, method, rule)


def score_analogies(
    vectors: UnitVectors,
    questions: Questions,
    path: str,
    restrict: int | None = 30_000,
    case_insensitive: bool = True,
    method: str = "add",
    rule: str = "gensim",
) -> AnalogyResult:
    """``evaluate_analogies`` on questions already read (``path`` names their source)."""
    method = analogy_method(method)
    if rule not in RULES:
        raise ValueError(f"unknown analogy rule {rule!r}: {' or '.join(RULES)}")
    rows = len(vectors) if restrict is None else min(restrict, len(vectors))
    index = restricted_index(vectors, rows, case_insensitive)
    unit = vectors.unit[:rows]
    upper = [w.upper() if case_insensitive else w for w in vectors.words[:rows]]
    sections, todo = [], []  # todo: (section, question's place in it, rows of a, b and c, the four keys)
    total = skipped = 0
    for name, items in questions.sections:
        section = AnalogySection(name)
        sections.append(section)
        for words in items:
            keys = cast(Question, tuple(w.upper() for w in words) if case_insensitive else tuple(words))
            total += 1
            section.questions.append(keys)
            section.answers.append(None)
            if any(k not in index for k in keys):
                skipped += 1
                continue
            todo.append((section, len(section.questions) - 1, index[keys[0]], index[keys[1]], index[keys[2]], keys))
    for start in range(0, len(todo), QUESTION_BATCH):
        _grade(todo[start : start + QUESTION_BATCH], unit, upper, method, rule)
    return AnalogyResult(
        path=path,
        sections=sections,
        questions=total,
        skipped=skipped,
        invalid=questions.invalid,
        restrict=rows,
        case_insensitive=case_insensitive,
        method=method,
    )


def _grade(batch: list, unit: np.ndarray, upper: list[str], method: str, rule: str) -> None:
    """Answer a batch of questions ``(section, place, rows of a, b and c, the four keys)``
    over the (rows, D) ``unit`` vectors, whose keys are ``upper``, and note each answer
    in its section: the best of the top ``GENSIM_TOPN`` that is not a question word
    (``rule`` gensim), or the best with a positive score (word2vec)."""
    rows = len(unit)
    a = unit[[q[2] for q in batch]]
    b = unit[[q[3] for q in batch]]
    c = unit[[q[4] for q in batch]]
    # (rows, batch) scores of each word as the answer b - a + c: 3CosAdd or 3CosMul
    scores = unit @ _unit_cols((b - a + c).T) if method == "add" else cosmul_scores(unit @ b.T, unit @ a.T, unit @ c.T)
    keep = min(GENSIM_TOPN + 3, rows)
    best = np.argpartition(-scores, keep - 1, axis=0)[:keep] if rows > keep else np.arange(rows)[:, None]
    best = np.broadcast_to(best, (keep, len(batch)))
    for j, (section, place, ia, ib, ic, keys) in enumerate(batch):
        cand = best[:, j]
        cand_scores = scores[cand, j]
        ranked = [int(r) for r in cand[np.lexsort((cand, -cand_scores))] if r not in (ia, ib, ic)]
        if rule == "word2vec":  # compute-accuracy.c: its best starts at score 0
            predicted = upper[ranked[0]] if ranked and scores[ranked[0], j] > 0 else None
        else:
            predicted = None
            for r in ranked[:GENSIM_TOPN]:
                predicted = upper[r]
                if predicted not in keys[:3]:
                    break
        section.answers[place] = predicted == keys[3]


def _unit_cols(m: np.ndarray) -> np.ndarray:
    """``m`` (D, k) with each column, a 3CosAdd query, scaled to unit length (zero columns stay 0)."""
    norms = np.linalg.norm(m, axis=0)
    norms[norms == 0] = 1
    return m / norms


def evaluate_similarity(
    vectors: UnitVectors,
    path: str | os.PathLike,
    restrict: int | None = None,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
    delimiter: str | None = None,
    encoding: str = "utf-8",
) -> SimilarityResult:
    """Spearman's rho (and Pearson's r), with their p-values, between a file's human
    scores and the cosines of the pairs found in the first ``restrict`` words (all by
    default); ``dummy4unknown``: a pair with a word outside them counts with cosine 0
    (gensim's option) instead of being skipped. ``delimiter``, ``encoding``: of the file
    (``read_pairs``)."""
    path = os.fspath(path)
    pairs, invalid = read_pairs(path, delimiter, encoding)
    index = restricted_index(vectors, restrict, case_insensitive)
    unit = vectors.unit
    gold, model, missing = [], [], 0
    for w1, w2, score in pairs:
        k1, k2 = (w1.upper(), w2.upper()) if case_insensitive else (w1, w2)
        if k1 in index and k2 in index:
            gold.append(score)
            model.append(float(unit[index[k1]] @ unit[index[k2]]))
        else:
            missing += 1
            if dummy4unknown:
                gold.append(score)
                model.append(0.0)
    if missing == len(pairs) and not dummy4unknown:
        raise W2VError(f"{path}: none of the {len(pairs)} word pairs is in the vocabulary")
    rho, r = spearman(gold, model), pearson(gold, model)
    return SimilarityResult(
        path=path,
        spearman=rho,
        pearson=r,
        pairs=len(pairs) - missing,
        missing=missing,
        invalid=invalid,
        case_insensitive=case_insensitive,
        restrict=restrict,
        spearman_p=correlation_pvalue(rho, len(gold)),
        pearson_p=correlation_pvalue(r, len(gold)),
    )


def rankdata(x) -> np.ndarray:
    """Ranks 1..n, tied values getting the average of their ranks (scipy's "average")."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(x)]
    ranks = np.empty(len(x))
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def pearson(x, y) -> float:
    """Pearson's r; nan when either side is constant."""
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    y = np.asarray(y, dtype=np.float64) - np.mean(y)
    denom = np.sqrt((x @ x) * (y @ y))
    return float(x @ y / denom) if denom > 0 else float("nan")


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's r of the average ranks."""
    return pearson(rankdata(x), rankdata(y))


class Correlation(NamedTuple):
    """A correlation and its two-sided p-value (scipy's result objects unpack the same way)."""

    statistic: float
    pvalue: float


def correlation_pvalue(r: float, n: int) -> float:
    """The two-sided p-value of a correlation ``r`` over ``n`` pairs, from Student's t
    with n - 2 degrees of freedom, as scipy's ``pearsonr`` and ``spearmanr`` give it:
    the regularized incomplete beta ``I(1 - r², (n - 2)/2, 1/2)``; nan below 3 pairs."""
    if n < 3 or math.isnan(r):
        return math.nan
    if abs(r) >= 1:
        return 0.0
    return regularized_beta((n - 2) / 2, 0.5, 1 - r * r)


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I(x; a, b), by its continued fraction
    (Numerical Recipes' betai), for a, b > 0 and x in [0, 1]."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float, steps: int = 300, tiny: float = 1e-300) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, steps + 1):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        for numerator in (even, odd):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return result
