"""Analogy accuracy and word-pair Spearman: file readers, exact numbers, gensim agreement."""

import math
from pathlib import Path

import numpy as np
import pytest

from w2v.errors import FormatError, W2VError
from w2v.vectors.evaluate import (
    DEFAULT_ANALOGIES,
    DEFAULT_SIMILARITY,
    correlation_pvalue,
    evaluate_analogies,
    evaluate_similarity,
    pearson,
    rankdata,
    read_analogies,
    read_pairs,
    regularized_beta,
    spearman,
)
from w2v.vectors.wordvectors import Vectors

FIXTURES = Path(__file__).parent / "fixtures"
ANALOGIES = FIXTURES / "analogies.txt"
PAIRS = FIXTURES / "pairs.tsv"

WORDS = [
    "the", "man", "woman", "king", "queen", "boy", "girl", "prince", "princess", "Prince",
    "paris", "france", "berlin", "germany", "rome", "italy", "apple",
]  # fmt: skip
MATRIX = np.array(
    [
        [0.2, 0.1, 0.1, 0.1, 0.1],  # the
        [1, 0, 0, 0, 0],  # man
        [1, 1, 0, 0, 0],  # woman
        [1, 0, 1, 0, 0],  # king
        [1, 1, 1, 0, 0],  # queen
        [1, 0, 0, 1, 0],  # boy
        [1, 1, 0, 1, 0.2],  # girl
        [1, 0, 1, 0.5, 0],  # prince
        [0.9, 1, 1.1, 0.4, 0.1],  # princess
        [0, 0, 0, 0, 1],  # Prince: a rarer case variant, never used case-insensitively
        [0, 0, 0, 1, 1],  # paris
        [0, 0.5, 0, 1, 2],  # france
        [0, 0, 1, 0, 1],  # berlin
        [0, 0.5, 1, 0, 2],  # germany
        [1, 0, 0, 0, 1],  # rome
        [0, 0, 0, 0, -1],  # italy
        [-1, 0.2, 0.3, 0, 0],  # apple
    ],
    dtype=np.float32,
)
VECTORS = Vectors(WORDS, MATRIX)


def counts(result):
    return [(s.name, s.correct, s.incorrect) for s in result.sections]


# --- statistics ----------------------------------------------------------------------------


def test_rankdata_ties():
    np.testing.assert_array_equal(rankdata([10, 20, 20, 30]), [1, 2.5, 2.5, 4])
    np.testing.assert_array_equal(rankdata([3, 1, 2]), [3, 1, 2])
    np.testing.assert_array_equal(rankdata([5, 5, 5]), [2, 2, 2])
    np.testing.assert_array_equal(rankdata([2, 1, 2, 1, 3]), [3.5, 1.5, 3.5, 1.5, 5])


def test_spearman_exact():
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95), abs=1e-12)
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_spearman_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    x = rng.integers(0, 10, 200).astype(float)  # many ties
    y = x + rng.integers(0, 6, 200)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)


# --- readers -------------------------------------------------------------------------------


def test_read_analogies():
    questions = read_analogies(ANALOGIES)
    assert [(name, len(q)) for name, q in questions.sections] == [("gender", 4), ("capitals", 3)]
    assert questions.sections[0][1][0] == ("man", "woman", "king", "queen")
    assert questions.invalid == 1


def test_read_analogies_without_sections(tmp_path):
    path = tmp_path / "msr.txt"
    path.write_text("good better bad worse\nbig bigger\n")
    questions = read_analogies(path)
    assert questions.sections == [("(none)", [("good", "better", "bad", "worse")])]
    assert questions.invalid == 1
    path.write_text(": empty\n\n")
    with pytest.raises(FormatError, match="no analogy questions"):
        read_analogies(path)
    with pytest.raises(W2VError, match="not found"):
        read_analogies(tmp_path / "nope.txt")


def test_read_pairs_layouts(tmp_path):
    pairs, invalid = read_pairs(PAIRS)
    assert pairs[0] == ("king", "queen", 8.5) and len(pairs) == 6 and invalid == 1
    men = tmp_path / "men.txt"
    men.write_text("sun sunlight 50.000000\nautomobile car 50.000000\n")
    assert read_pairs(men) == ([("sun", "sunlight", 50.0), ("automobile", "car", 50.0)], 0)
    simlex = tmp_path / "SimLex-999.txt"
    simlex.write_text(
        "word1\tword2\tPOS\tSimLex999\tconc(w1)\nold\tnew\tA\t1.58\t2.72\nsmart\tintelligent\tA\t9.2\t1.75\n"
    )
    assert read_pairs(simlex) == ([("old", "new", 1.58), ("smart", "intelligent", 9.2)], 0)
    empty = tmp_path / "empty.tsv"
    empty.write_text("# nothing\n")
    with pytest.raises(FormatError, match="no word pairs"):
        read_pairs(empty)


# --- analogies -----------------------------------------------------------------------------


def test_analogies_exact():
    result = evaluate_analogies(VECTORS, ANALOGIES)
    # gender: 3 right (Prince -> PRINCE is 'prince', the first case variant); 'unicorn' skipped.
    # capitals: rome - paris + france is not italy.
    assert counts(result) == [("gender", 3, 0), ("capitals", 2, 1)]
    assert (result.correct, result.answered, result.questions, result.skipped, result.invalid) == (5, 6, 7, 1, 1)
    assert result.accuracy == pytest.approx(5 / 6)
    d = result.to_dict()
    assert d["accuracy"] == pytest.approx(5 / 6) and d["sections"][1]["accuracy"] == pytest.approx(2 / 3)
    assert d["restrict"] == len(VECTORS) and d["case_insensitive"] is True and d["method"] == "add"


def test_analogies_restricted():
    result = evaluate_analogies(VECTORS, ANALOGIES, restrict=12)  # berlin, germany, rome, italy out
    assert counts(result) == [("gender", 3, 0), ("capitals", 0, 0)]
    assert (result.questions, result.skipped) == (7, 4)
    assert result.accuracy == 1.0 and result.sections[1].accuracy == 0.0
    result = evaluate_analogies(VECTORS, ANALOGIES, restrict=8)  # princess out too
    assert counts(result) == [("gender", 2, 0), ("capitals", 0, 0)]
    assert result.skipped == 5


def test_analogies_case_sensitive():
    result = evaluate_analogies(VECTORS, ANALOGIES, case_insensitive=False)
    assert counts(result) == [("gender", 2, 0), ("capitals", 2, 1)]  # MAN and Princess unknown
    assert result.skipped == 2


def test_analogies_cosmul():
    # apple is nearly opposite to man: 3CosMul's small denominator makes it win the gender questions
    result = evaluate_analogies(VECTORS, ANALOGIES, method="cosmul")
    assert counts(result) == [("gender", 0, 3), ("capitals", 2, 1)]
    assert result.method == "cosmul"
    assert VECTORS.analogy("king", "man", "woman", topn=1, method="cosmul")[0][0] == "apple"
    alias = evaluate_analogies(VECTORS, ANALOGIES, method="mul")
    assert counts(alias) == counts(result) and alias.method == "cosmul"
    with pytest.raises(ValueError, match="unknown analogy method"):
        evaluate_analogies(VECTORS, ANALOGIES, method="sub")


def test_case_variant_of_a_question_word_is_not_an_answer(tmp_path):
    """gensim skips an answer that upper-cases to a question word; so do we."""
    words = ["a", "b", "c", "C", "d"]
    matrix = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [0, 0.5, 1.2]], dtype=np.float32)
    path = tmp_path / "q.txt"
    path.write_text(": s\na b c d\n")
    assert Vectors(words, matrix).analogy("c", "a", "b", topn=1)[0][0] == "C"
    result = evaluate_analogies(Vectors(words, matrix), path)
    assert counts(result) == [("s", 1, 0)]
    assert_same_as_gensim(Vectors(words, matrix), gensim_kv(words, matrix), path, None, 30000)


def test_word2vec_rule_takes_the_best_word(tmp_path):
    """compute-accuracy.c's rule: the single best word but the three question rows, a case
    variant included, and only with a positive score; gensim's skips the variant and
    takes a negative best."""
    words = ["a", "b", "c", "C", "d"]
    matrix = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [0, 0.5, 1.2]], dtype=np.float32)
    path = tmp_path / "q.txt"
    path.write_text(": s\na b c d\n")
    gensim = evaluate_analogies(Vectors(words, matrix), path)
    word2vec = evaluate_analogies(Vectors(words, matrix), path, rule="word2vec")
    assert (counts(gensim), counts(word2vec)) == ([("s", 1, 0)], [("s", 0, 1)])
    opposite = Vectors(["p", "q", "r", "s"], np.array([[1, 0], [0, 1], [0, 1], [1, -2]], dtype=np.float32))
    path.write_text(": t\np q r s\n")  # q - p + r = (-1, 2): s, the only word left, scores below 0
    assert counts(evaluate_analogies(opposite, path)) == [("t", 1, 0)]
    assert counts(evaluate_analogies(opposite, path, rule="word2vec")) == [("t", 0, 1)]
    with pytest.raises(ValueError, match="unknown analogy rule"):
        evaluate_analogies(opposite, path, rule="C")


# --- similarity ----------------------------------------------------------------------------


def test_similarity_exact():
    result = evaluate_similarity(VECTORS, PAIRS)
    assert (result.pairs, result.missing, result.invalid) == (5, 1, 1)
    unit = MATRIX / np.linalg.norm(MATRIX, axis=1, keepdims=True)
    pairs = [(3, 4), (1, 2), (5, 6), (10, 11), (3, 16)]
    model = [float(unit[i] @ unit[j]) for i, j in pairs]
    gold = [8.5, 8.5, 7.0, 6.0, 1.0]
    assert result.spearman == pytest.approx(spearman(gold, model), abs=1e-12)
    assert result.spearman == pytest.approx(0.2051956704, abs=1e-9)
    assert result.pearson == pytest.approx(0.8931280, abs=1e-6)
    assert result.to_dict()["pairs"] == 5


def test_similarity_all_missing(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("foo\tbar\t1\n")
    with pytest.raises(W2VError, match="none of the 1 word pairs"):
        evaluate_similarity(VECTORS, path)


# --- gensim agreement ----------------------------------------------------------------------


def gensim_kv(words, matrix):
    keyedvectors = pytest.importorskip("gensim.models.keyedvectors")
    kv = keyedvectors.KeyedVectors(matrix.shape[1])
    kv.add_vectors(words, matrix)
    return kv


def assert_same_as_gensim(vectors, kv, analogies, pairs, restrict):
    ours = evaluate_analogies(vectors, analogies, restrict=restrict)
    score, sections = kv.evaluate_word_analogies(str(analogies), restrict_vocab=restrict, case_insensitive=True)
    assert ours.accuracy == pytest.approx(score, abs=1e-4)
    assert counts(ours) == [(s["section"], len(s["correct"]), len(s["incorrect"])) for s in sections[:-1]]
    if pairs is not None:
        ours = evaluate_similarity(vectors, pairs)
        pearson_r, spearman_r, oov_ratio = kv.evaluate_word_pairs(str(pairs), restrict_vocab=len(vectors))
        assert ours.spearman == pytest.approx(spearman_r[0], abs=1e-4)
        assert ours.pearson == pytest.approx(pearson_r[0], abs=1e-4)
        assert 100 * ours.missing / (ours.pairs + ours.missing) == pytest.approx(oov_ratio)


def test_gensim_agrees_on_fixtures():
    kv = gensim_kv(WORDS, MATRIX)
    for restrict in (30000, 12, 8, 3):
        assert_same_as_gensim(VECTORS, kv, ANALOGIES, PAIRS, restrict)


def test_gensim_agrees_on_google_analogies_and_wordsim():
    """Structured random vectors over the words of the sets shipped with w2v (with case
    variants and skipped questions), checked against gensim section by section."""
    analogies, pairs = Path(DEFAULT_ANALOGIES), Path(DEFAULT_SIMILARITY)
    rng = np.random.default_rng(1)
    lines = analogies.read_text().splitlines()
    words = [w.lower() for line in lines if not line.startswith(":") for w in line.split()]
    words += [w for line in pairs.read_text().splitlines() if not line.startswith("#") for w in line.split("\t")[:2]]
    words = list(dict.fromkeys(words))
    rng.shuffle(words)
    words = words[:900]
    words += [w.capitalize() for w in words[:50]] + [w.upper() for w in words[100:120]]
    dim = 30
    vec = {w: rng.standard_normal(dim) for w in words}
    offset = None
    for line in lines:
        if line.startswith(":"):
            offset = rng.standard_normal(dim) * 1.5
            continue
        a, b = (w.lower() for w in line.split()[:2])
        if a in vec and b in vec and rng.random() < 0.5:
            vec[b] = vec[a] + offset + rng.standard_normal(dim) * 0.5
    matrix = np.array([vec[w] for w in words], dtype=np.float32)
    vectors, kv = Vectors(words, matrix), gensim_kv(words, matrix)
    assert_same_as_gensim(vectors, kv, analogies, pairs, 30000)
    assert_same_as_gensim(vectors, kv, analogies, None, 400)
    result = evaluate_analogies(vectors, analogies)
    assert result.questions == 19544 and 0.5 < result.accuracy < 1 and result.skipped > 0


def test_correlation_pvalues_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(4)
    for n in (3, 4, 10, 353, 5000):
        x = rng.normal(size=n)
        y = x * rng.uniform(0, 1) + rng.normal(size=n)
        assert correlation_pvalue(pearson(x, y), n) == pytest.approx(stats.pearsonr(x, y).pvalue, rel=1e-9, abs=1e-300)
        rho = spearman(x, y)
        assert correlation_pvalue(rho, n) == pytest.approx(stats.spearmanr(x, y).pvalue, rel=1e-9, abs=1e-300)
    assert correlation_pvalue(1.0, 10) == 0.0 and correlation_pvalue(-1.0, 10) == 0.0
    assert math.isnan(correlation_pvalue(0.5, 2)) and math.isnan(correlation_pvalue(math.nan, 10))
    assert regularized_beta(2.0, 3.0, 0.0) == 0.0 and regularized_beta(2.0, 3.0, 1.0) == 1.0
    assert regularized_beta(1.0, 1.0, 0.3) == pytest.approx(0.3)  # the uniform distribution's CDF
