"""Nearest neighbours, analogies and unknown words, with exact numbers on hand-made vectors."""

import math

import numpy as np
import pytest
from reference import fasttext_bin

import w2v.vectors.search as query
from w2v.errors import W2VError
from w2v.vectors.wordvectors import UnknownWordError, Vectors

PLANE = Vectors(
    ["a", "b", "c", "d", "e", "f"],
    np.array([[1, 0], [0, 1], [1, 1], [1, -1], [-1, 0], [3, 4]], dtype=np.float32),
)
ROYAL = Vectors(
    ["man", "woman", "king", "queen", "prince", "apple"],
    np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 0.2, 1], [0, 0, -1]], dtype=np.float32),
)
R2 = math.sqrt(2)


def approx(pairs):
    return [(w, pytest.approx(s, abs=1e-6)) for w, s in pairs]


def test_most_similar_exact():
    # ties (c, d) go to the more frequent word
    assert PLANE.most_similar(["a"]) == approx([("c", 1 / R2), ("d", 1 / R2), ("f", 0.6), ("b", 0.0), ("e", -1.0)])
    assert PLANE.most_similar(["a"], topn=2) == approx([("c", 1 / R2), ("d", 1 / R2)])
    assert PLANE.most_similar("a", topn=1) == approx([("c", 1 / R2)])


def test_most_similar_positive_negative():
    assert PLANE.most_similar(["a", "b"], topn=3) == approx([("c", 1.0), ("f", 7 / (5 * R2)), ("d", 0.0)])
    s5 = math.sqrt(5)
    assert PLANE.most_similar(["f"], ["e"], topn=3) == approx([("c", 3 / math.sqrt(10)), ("a", 2 / s5), ("b", 1 / s5)])


def test_most_similar_restrict():
    assert PLANE.most_similar(["a"], restrict_vocab=3) == approx([("c", 1 / R2), ("b", 0.0)])


def test_analogy_3cosadd_exact():
    q = np.array([1 / R2 - 1, 1, 1 / R2])  # king - man + woman on unit vectors
    q /= np.linalg.norm(q)
    queen = q @ np.array([0, 1, 1]) / R2
    prince = q @ np.array([1, 0.2, 1]) / math.sqrt(2.04)
    apple = -q[2]
    expected = [("queen", queen), ("prince", prince), ("apple", apple)]
    assert ROYAL.analogy("king", "man", "woman", topn=3) == approx(expected)
    assert queen == pytest.approx(0.958569, abs=1e-6)


def test_analogy_3cosmul_exact():
    def shifted(x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        return (1 + x @ y / np.linalg.norm(x) / np.linalg.norm(y)) / 2

    king, man, woman = [1, 0, 1], [1, 0, 0], [0, 1, 0]

    def score(x):
        return shifted(x, king) * shifted(x, woman) / (shifted(x, man) + 1e-6)

    expected = [("queen", score([0, 1, 1])), ("prince", score([1, 0.2, 1])), ("apple", score([0, 0, -1]))]
    assert ROYAL.analogy("king", "man", "woman", topn=3, method="cosmul") == approx(expected)
    assert ROYAL.analogy("king", "man", "woman", topn=3, method="mul") == approx(expected)  # the alias
    assert expected[0][1] == pytest.approx(1.280328, abs=1e-6)


def test_analogy_excludes_inputs_and_bad_method():
    found = [w for w, _ in ROYAL.analogy("king", "man", "woman", topn=10)]
    assert found == ["queen", "prince", "apple"]
    with pytest.raises(ValueError, match="unknown analogy method 'sub': add or cosmul"):
        ROYAL.analogy("king", "man", "woman", method="sub")


def test_zero_vector():
    v = Vectors(["z", "a", "b"], np.array([[0, 0], [1, 0], [0, 2]], dtype=np.float32))
    assert v.most_similar(["a"]) == approx([("z", 0.0), ("b", 0.0)])
    np.testing.assert_array_equal(v.unit, [[0, 0], [1, 0], [0, 1]])


def test_unknown_word_suggestions():
    v = Vectors(["king", "kings", "queen", "Paris"], np.eye(4, dtype=np.float32))
    with pytest.raises(UnknownWordError, match=r"word not in vocabulary: 'kingg' \(did you mean: king, kings\?\)"):
        v.most_similar(["kingg"])
    with pytest.raises(UnknownWordError, match=r"'paris' \(did you mean: Paris\?\)"):
        v.analogy("king", "queen", "paris")
    with pytest.raises(UnknownWordError, match=r"'zzz'$"):
        v.index("zzz")
    assert issubclass(UnknownWordError, W2VError)
    with pytest.raises(W2VError, match="no query words"):
        v.most_similar([])


def test_a_word_without_utf8_bytes_is_an_unknown_key(tmp_path):
    """A lone surrogate is in no vocabulary: KeyError (UnknownWordError), as gensim raises
    for any unknown word, where UnicodeEncodeError came from printing it (or, in a subword
    model, from hashing its n-grams); such a word is not written to a file either."""
    ft = tmp_path / "ft.bin"
    ft.write_bytes(fasttext_bin([w.encode() for w in ROYAL.words], dim=3, bucket=20))
    for vectors in (ROYAL, Vectors.load(ft)):
        with pytest.raises(KeyError, match=r"^word not in vocabulary: '\\ud800'$"):
            vectors.most_similar("\ud800")
        with pytest.raises(KeyError, match=r"^word not in vocabulary: 'king\\udfff' \(did you mean: king\?\)$"):
            vectors["king\udfff"]
        assert "\ud800" not in vectors
    with pytest.raises(W2VError, match=r"cannot write \S*v.txt: word 2 \(U\+0061 U\+D800\) holds a lone surrogate"):
        Vectors(["b", "a\ud800"], np.eye(2, dtype=np.float32)).save(tmp_path / "v.txt")
    assert not (tmp_path / "v.txt").exists()


def test_bytes_are_no_words():
    """``b"the"`` is a sequence of ints, which read as row numbers [116, 104, 101]:
    TypeError wherever a word, or words, may be given."""
    v = Vectors([f"w{i}" for i in range(120)], np.random.default_rng(1).standard_normal((120, 4)).astype(np.float32))
    calls = [
        lambda: v.most_similar(b"the"),
        lambda: v.most_similar([b"w1"]),
        lambda: v.most_similar_cosmul(["w1"], b"ab"),
        lambda: v[b"the"],
        lambda: v.get_index(b"w1"),
        lambda: v.n_similarity(b"ab", ["w1"]),
        lambda: v.doesnt_match(b"abc"),
        lambda: v.distances("w1", b"ab"),
        lambda: v.similarity(bytearray(b"w1"), "w2"),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"^words are str, not (bytes|bytearray) \(b'\w+'\): decode them"):
            call()
    assert b"w1" not in v


def test_blocked_search_matches_brute_force(monkeypatch):
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(100)]
    v = Vectors(words, rng.standard_normal((100, 6)).astype(np.float32))
    full = v.most_similar(["w3", "w5"], ["w9"], topn=20)
    monkeypatch.setattr(query, "BLOCK_ROWS", 7)
    assert v.most_similar(["w3", "w5"], ["w9"], topn=20) == approx(full)  # BLAS may round blocks differently
    u = v.unit.astype(np.float64)
    q = u[3] + u[5] - u[9]
    sims = u @ (q / np.linalg.norm(q))
    sims[[3, 5, 9]] = -np.inf
    best = np.argsort(-sims)[:20]
    assert [w for w, _ in full] == [words[i] for i in best]
    np.testing.assert_allclose([s for _, s in full], sims[best], atol=1e-6)


def test_unit_is_cached_and_float32():
    v = Vectors(["a", "b"], np.array([[3, 4], [0, 2]], dtype=np.float64).astype(np.float32))
    assert v.unit is v.unit
    assert v.unit.dtype == np.float32
    np.testing.assert_allclose(v.unit, [[0.6, 0.8], [0, 1]])
    assert v.similarity("a", "b") == pytest.approx(0.8)


def test_unit_rows_in_blocks():
    """Rows of any dtype come back float32 at unit length, zero rows zero, whatever the block size."""
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((11, 4))
    matrix[6] = 0
    whole = query.unit_rows(matrix)
    assert whole.dtype == np.float32
    np.testing.assert_array_equal(query.unit_rows(matrix, block=3), whole)
    np.testing.assert_allclose(np.linalg.norm(np.delete(whole, 6, axis=0), axis=1), 1, rtol=1e-6)
    np.testing.assert_array_equal(whole[6], 0)
    np.testing.assert_allclose(whole, matrix / np.linalg.norm(matrix, axis=1, keepdims=True).clip(1e-30), rtol=1e-6)


def test_a_vector_near_float32s_largest_keeps_its_direction():
    """Its norm overflows float32 (it was scaled to zero, with a numpy RuntimeWarning)."""
    v = Vectors(["big", "a"], np.array([[3e38, 3e38, 3e38], [1, 1, 0]], dtype=np.float32))
    with np.errstate(all="raise"):
        np.testing.assert_allclose(v.unit[0], [1 / math.sqrt(3)] * 3, rtol=1e-6)
    assert v.most_similar("a") == approx([("big", 2 / math.sqrt(6))])


def test_nonfinite_rows_are_found_and_left_out():
    matrix = np.arange(12, dtype=np.float32).reshape(6, 2)
    matrix[[1, 4]] = [[np.nan, 0], [1, -np.inf]]
    v = Vectors(list("abcdef"), matrix, counts=np.arange(6, 0, -1))
    np.testing.assert_array_equal(v.nonfinite_rows(), [1, 4])
    np.testing.assert_array_equal(query.nonfinite_rows(matrix, block=4), [1, 4])
    left = v.without_rows(v.nonfinite_rows())
    assert left.words == list("acdf") and left.counts.tolist() == [6, 4, 3, 1]
    np.testing.assert_array_equal(left.vectors, matrix[[0, 2, 3, 5]])
    assert left.nonfinite_rows().tolist() == [] and ROYAL.nonfinite_rows().tolist() == []


def test_agrees_with_gensim():
    keyedvectors = pytest.importorskip("gensim.models.keyedvectors")
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(400)]
    matrix = rng.standard_normal((400, 12)).astype(np.float32)
    kv = keyedvectors.KeyedVectors(12)
    kv.add_vectors(words, matrix)
    v = Vectors(words, matrix)
    for pos, neg in [(["w1"], []), (["w1", "w7"], ["w2"]), (["w4", "w5", "w6"], ["w8", "w9"])]:
        ours = v.most_similar(pos, neg, topn=10)
        theirs = kv.most_similar(positive=pos, negative=neg, topn=10)
        assert [w for w, _ in ours] == [w for w, _ in theirs]
        np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)
    ours = v.analogy("w1", "w2", "w3", topn=10, method="cosmul")
    theirs = kv.most_similar_cosmul(positive=["w1", "w3"], negative=["w2"], topn=10)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)
    ours = v.most_similar(["w1"], topn=5, restrict_vocab=100)
    theirs = kv.most_similar("w1", topn=5, restrict_vocab=100)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
