"""``w2v.Vectors`` answers gensim's ``KeyedVectors`` calls as gensim does: each call is
made on both, on the same vectors file (trained on the sample corpus), and the
answers compared. Skipped where gensim is not installed."""

import itertools
import sys

import numpy as np
import pytest
from conftest import DATA, REPO

import w2v
from w2v.vectors.evaluate import DEFAULT_ANALOGIES, DEFAULT_SIMILARITY
from w2v.vectors.wordvectors import UnknownWordError, Vectors

gensim_models = pytest.importorskip("gensim.models")
KeyedVectors = gensim_models.KeyedVectors
QUESTIONS = DATA / "eval" / "questions-words.txt"
WORDSIM = DATA / "eval" / "wordsim353.tsv"
QUERIES = [("one",), ("king",), ("two", "three"), ("paris", "germany", "france")]


@pytest.fixture(scope="module")
def vectors_file(tmp_path_factory):
    """Vectors trained on the sample corpus, written as word2vec binary."""
    trained = w2v.train(str(REPO / "data" / "sample.txt.gz"), dim=16, epochs=5, threads=1, seed=3)
    path = tmp_path_factory.mktemp("gensim") / "v.bin"
    trained.save(path)
    return path


@pytest.fixture(scope="module")
def both(vectors_file):
    """(ours, gensim's) read from the same file."""
    return (
        Vectors.load_word2vec_format(vectors_file, binary=True),
        KeyedVectors.load_word2vec_format(str(vectors_file), binary=True),
    )


def same_neighbours(ours, theirs, atol=1e-5):
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=atol)


def test_indexing_and_vocabulary(both):
    v, kv = both
    assert v.index_to_key == kv.index_to_key and v.key_to_index == kv.key_to_index
    assert len(v) == len(kv) and v.vector_size == kv.vector_size
    np.testing.assert_array_equal(v.vectors, kv.vectors)
    king = v["king"]
    assert king.shape == (16,) and king.dtype == np.float32
    np.testing.assert_array_equal(king, kv["king"])
    np.testing.assert_array_equal(v[["king", "queen"]], kv[["king", "queen"]])
    assert v[["king", "queen"]].shape == (2, 16)
    np.testing.assert_array_equal(v[5], kv[5])  # a row number, as gensim
    np.testing.assert_array_equal(v.get_vector("one"), kv.get_vector("one"))
    np.testing.assert_allclose(v.get_vector("one", norm=True), kv.get_vector("one", norm=True), rtol=1e-6)
    np.testing.assert_allclose(v.get_normed_vectors(), kv.get_normed_vectors(), rtol=1e-5, atol=1e-7)
    assert v.get_index("king") == kv.get_index("king") and v.get_index("nope", -1) == kv.get_index("nope", -1)
    assert ("king" in v, "nope" in v, 3 in v) == ("king" in kv, "nope" in kv, 3 in kv)


def test_unknown_words_raise_key_error_with_suggestions(both):
    v, kv = both
    for vectors in (v, kv):
        with pytest.raises(KeyError):
            vectors["kingg"]
    with pytest.raises(UnknownWordError) as caught:
        v.most_similar("kingg")
    assert str(caught.value) == "word not in vocabulary: 'kingg' (did you mean: king, kings?)"


def test_similarities(both):
    v, kv = both
    for a, b in [("king", "queen"), ("one", "two"), ("paris", "the")]:
        assert v.similarity(a, b) == pytest.approx(kv.similarity(a, b), abs=1e-6)
        assert v.distance(a, b) == pytest.approx(kv.distance(a, b), abs=1e-6)
    assert v.n_similarity(["king", "man"], ["queen", "woman"]) == pytest.approx(
        kv.n_similarity(["king", "man"], ["queen", "woman"]), abs=1e-6
    )
    for vectors in (v, kv):
        with pytest.raises(ZeroDivisionError):
            vectors.n_similarity([], ["king"])
    np.testing.assert_allclose(v.distances("king"), kv.distances("king"), atol=1e-5)
    np.testing.assert_allclose(v.distances("king", ["queen", "one"]), kv.distances("king", ["queen", "one"]), atol=1e-6)
    np.testing.assert_allclose(v.distances(v["one"]), kv.distances(kv["one"]), atol=1e-5)


@pytest.mark.parametrize("query", QUERIES)
def test_most_similar(both, query):
    v, kv = both
    same_neighbours(v.most_similar(list(query)), kv.most_similar(list(query)))
    same_neighbours(v.most_similar(positive=list(query[:1]), negative=list(query[1:]), topn=3),
                    kv.most_similar(positive=list(query[:1]), negative=list(query[1:]), topn=3))  # fmt: skip
    same_neighbours(v.most_similar(list(query), restrict_vocab=300), kv.most_similar(list(query), restrict_vocab=300))
    same_neighbours(v.most_similar_cosmul(list(query[:2]), list(query[2:])),
                    kv.most_similar_cosmul(list(query[:2]), list(query[2:])))  # fmt: skip


def test_most_similar_forms_of_query(both):
    v, kv = both
    same_neighbours(v.most_similar("king", topn=3), kv.most_similar("king", topn=3))  # one word
    same_neighbours(v.most_similar(positive=[v["king"]]), kv.most_similar(positive=[kv["king"]]))  # a vector
    mixed = ["king", v["woman"] * 3]  # a vector is used as given: not normalised, not left out
    same_neighbours(v.most_similar(mixed, ["man"]), kv.most_similar(["king", kv["woman"] * 3], ["man"]))
    weighted = [("king", 2.0), ("woman", 0.5)]
    same_neighbours(v.most_similar(weighted, [("man", -1.0)]), kv.most_similar(weighted, [("man", -1.0)]))
    same_neighbours(v.most_similar(7, topn=4), kv.most_similar(7, topn=4))  # a row number
    np.testing.assert_allclose(v.most_similar("king", topn=None), kv.most_similar("king", topn=None), atol=1e-5)
    np.testing.assert_allclose(
        v.most_similar_cosmul("king", "man", topn=None), kv.most_similar_cosmul("king", "man", topn=None), rtol=1e-5
    )
    assert v.most_similar("king", topn=0) == kv.most_similar("king", topn=0) == []


def test_similar_by_word_key_and_vector(both):
    v, kv = both
    same_neighbours(v.similar_by_word("one", topn=5), kv.similar_by_word("one", topn=5))
    same_neighbours(v.similar_by_key("one", restrict_vocab=500), kv.similar_by_key("one", restrict_vocab=500))
    vector = v["one"] + v["two"]
    same_neighbours(v.similar_by_vector(vector, topn=5), kv.similar_by_vector(vector, topn=5))


def test_doesnt_match_rank_and_closer_than(both, recwarn):
    v, kv = both
    # no list of two words: both are equally far from their mean, and rounding picks one
    lists = (["king", "queen", "man", "one"], ["one", "two", "three", "paris"], ["paris", "france", "two", "nope"])
    for words in lists:
        assert v.doesnt_match(words) == kv.doesnt_match(words)
    assert "left out: ['nope']" in str(recwarn.pop(UserWarning).message)
    for a, b in itertools.permutations(["king", "queen", "one", "the"], 2):
        assert v.rank(a, b) == kv.rank(a, b)
    assert v.closer_than("king", "man") == kv.closer_than("king", "man")


def analogy_file(tmp_path, per_section: int | None = None):
    """The Google analogy set, or the first questions of each of its sections."""
    if not QUESTIONS.is_file():
        pytest.skip(f"shared data not found: {QUESTIONS}")
    if per_section is None:
        return QUESTIONS
    lines, taken = [], 0
    for line in QUESTIONS.read_text().splitlines():
        taken = 0 if line.startswith(":") else taken + 1
        if taken <= per_section:
            lines.append(line)
    path = tmp_path / "questions.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings", [{}, {"restrict_vocab": 2000}, {"case_insensitive": False}, {"dummy4unknown": True}]
)
def test_evaluate_word_analogies(both, tmp_path, settings):
    v, kv = both
    path = analogy_file(tmp_path)
    score, sections = v.evaluate_word_analogies(path, **settings)
    their_score, their_sections = kv.evaluate_word_analogies(str(path), **settings)
    assert score == pytest.approx(their_score) and 0 < score < 1
    assert sections == their_sections  # names and the questions in each list, Total accuracy last
    assert sections[-1]["section"] == "Total accuracy"


def test_evaluate_word_analogies_cosmul(both, tmp_path):
    """gensim accepts similarity_function but always ranks by 3CosAdd: 3CosMul is checked
    against w2v's own analogy queries instead."""
    v, _ = both
    path = analogy_file(tmp_path, per_section=100)
    _, sections = v.evaluate_word_analogies(path, similarity_function="most_similar_cosmul")
    for a, b, c, expected in sections[-1]["correct"]:
        found = [w.upper() for w, _ in v.analogy(b.lower(), a.lower(), c.lower(), topn=5, method="cosmul")]
        assert expected in found
    with pytest.raises(w2v.W2VError, match="similarity_function must be one of"):
        v.evaluate_word_analogies(path, similarity_function="nearest")


@pytest.mark.parametrize(
    "settings", [{}, {"restrict_vocab": 1000}, {"case_insensitive": False}, {"dummy4unknown": True}]
)
def test_evaluate_word_pairs(both, settings):
    if not WORDSIM.is_file():
        pytest.skip(f"shared data not found: {WORDSIM}")
    v, kv = both
    (pearson, pearson_p), (spearman, spearman_p), oov = v.evaluate_word_pairs(WORDSIM, **settings)
    theirs = kv.evaluate_word_pairs(str(WORDSIM), **settings)
    assert pearson == pytest.approx(theirs[0][0], abs=1e-6) and pearson_p == pytest.approx(theirs[0][1], rel=1e-4)
    assert spearman == pytest.approx(theirs[1][0], abs=1e-6) and spearman_p == pytest.approx(theirs[1][1], rel=1e-4)
    assert oov == pytest.approx(theirs[2]) and 0 < oov < 100
    result = v.evaluate_word_pairs(WORDSIM)[1]
    assert (result.statistic, result.pvalue) == tuple(result)  # as scipy's result objects


def test_evaluations_without_a_path_use_the_sets_w2v_eval_uses(both):
    """gensim's calls need a path; w2v's default to the sets shipped with w2v, which
    ``w2v eval`` scores: the Google analogies and WordSim-353."""
    v, kv = both
    score, sections = v.evaluate_word_analogies()
    assert (score, sections) == kv.evaluate_word_analogies(DEFAULT_ANALOGIES) and 0 < score < 1
    assert len(sections) == 15  # the set's 14 sections, then Total accuracy
    _, spearman, oov = v.evaluate_word_pairs()
    theirs = kv.evaluate_word_pairs(DEFAULT_SIMILARITY)
    assert spearman.statistic == pytest.approx(theirs[1][0], abs=1e-6) and oov == pytest.approx(theirs[2])


def test_evaluate_word_pairs_other_delimiter(both, tmp_path):
    v, kv = both
    path = tmp_path / "pairs.csv"
    path.write_text("# a comment\nking,queen,8.5\none,two,7\nking,one,1\nparis,france,9\nthe,of,2\nnope,king,3\n")
    ours = v.evaluate_word_pairs(path, delimiter=",")
    theirs = kv.evaluate_word_pairs(str(path), delimiter=",")
    assert ours[0] == pytest.approx(tuple(theirs[0]), rel=1e-5) and ours[1] == pytest.approx(tuple(theirs[1]))
    assert ours[2] == pytest.approx(theirs[2]) == 100 / 6


def test_word2vec_format_both_ways(both, tmp_path):
    v, kv = both
    text = tmp_path / "ours.txt"
    v.save_word2vec_format(text)  # text, as gensim's default
    assert text.read_bytes().split(b"\n", 1)[0] == b"%d 16" % len(v)
    read = KeyedVectors.load_word2vec_format(str(text), binary=False)
    assert read.index_to_key == v.words
    np.testing.assert_allclose(read.vectors, v.vectors, rtol=1e-5)
    binary = tmp_path / "ours.bin"
    v.save_word2vec_format(binary, binary=True)
    np.testing.assert_array_equal(KeyedVectors.load_word2vec_format(str(binary), binary=True).vectors, v.vectors)
    theirs = tmp_path / "theirs.txt"
    kv.save_word2vec_format(str(theirs))
    limited = Vectors.load_word2vec_format(theirs, limit=100)
    assert limited.words == kv.index_to_key[:100]
    np.testing.assert_allclose(limited.vectors, kv.vectors[:100], rtol=1e-5)


def test_unicode_errors_as_gensim(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"3 2\ncaf\xc3\xa9 1 2\nbad\xff 3 4\nok 5 6\n")
    for errors in ("replace", "ignore"):
        ours = Vectors.load_word2vec_format(path, unicode_errors=errors)
        assert ours.words == KeyedVectors.load_word2vec_format(str(path), unicode_errors=errors).index_to_key
    with pytest.raises(w2v.W2VError, match=r"bad.txt: a word is not utf-8 \(invalid start byte\)"):
        Vectors.load_word2vec_format(path, unicode_errors="strict")
    assert Vectors.load_word2vec_format(path).words[1] == "bad\udcff"  # by default: the bytes kept
    latin = Vectors.load_word2vec_format(path, encoding="latin-1")
    assert latin.words == KeyedVectors.load_word2vec_format(str(path), encoding="latin-1").index_to_key


def test_to_and_from_gensim(both):
    v, _ = both
    keyed = v.to_gensim()
    assert isinstance(keyed, KeyedVectors) and keyed.index_to_key == v.words
    np.testing.assert_array_equal(keyed.vectors, v.vectors)
    same_neighbours(keyed.most_similar("king"), v.most_similar("king"))
    back = Vectors.from_gensim(keyed)
    assert back.words == v.words and back.vectors.dtype == np.float32
    np.testing.assert_array_equal(back.vectors, v.vectors)
    model = gensim_models.Word2Vec([["a", "b", "c"], ["b", "c", "a"]] * 20, vector_size=4, min_count=1, workers=1)
    from_model = Vectors.from_gensim(model)  # a model: its .wv
    assert from_model.words == model.wv.index_to_key
    np.testing.assert_array_equal(from_model.vectors, model.wv.vectors)
    with pytest.raises(w2v.W2VError, match=r"^not gensim KeyedVectors: list$"):
        Vectors.from_gensim([1, 2])


def test_to_gensim_of_a_subword_model_answers_unseen_words(tiny_corpus, tmp_path):
    """A subword model goes over as gensim's ``FastTextKeyedVectors``, whose n-gram rows
    build a word never seen: the vector w2v gives it, and gensim's own reader of the
    model's fastText ``.bin``."""
    from gensim.models.fasttext import FastTextKeyedVectors, load_facebook_vectors

    model = tmp_path / "m.bin"
    v = w2v.train(str(tiny_corpus), subwords=True, bucket=5000, dim=8, min_count=1, epochs=1, threads=1,
                  save_fasttext=str(model))  # fmt: skip
    keyed, read = v.to_gensim(), load_facebook_vectors(str(model))
    assert isinstance(keyed, FastTextKeyedVectors) and keyed.index_to_key == v.words
    assert "catz" in keyed and "catz" not in keyed.key_to_index
    for word in ("catz", "dogs", "the"):
        np.testing.assert_allclose(keyed[word], v[word], atol=1e-6)
        np.testing.assert_allclose(keyed[word], read[word], atol=1e-6)
    same_neighbours(keyed.most_similar("catz", topn=3), v.most_similar("catz", topn=3))
    assert type(Vectors(v.words, v.vectors).to_gensim()) is KeyedVectors  # no subwords: plain KeyedVectors


def test_to_gensim_without_gensim(both, monkeypatch):
    monkeypatch.setitem(sys.modules, "gensim.models", None)  # import fails, as where gensim is absent
    with pytest.raises(w2v.W2VError, match=r"^to_gensim needs gensim: pip install gensim$"):
        both[0].to_gensim()


def test_repr_names_the_size_and_first_words_not_the_vocabulary():
    """``print(vectors)`` in a session: one short line, however large the vocabulary."""
    words = [f"w{i}" for i in range(10_000)]
    shown = repr(Vectors(words, np.zeros((10_000, 8), dtype=np.float32)))
    assert shown == "Vectors(10,000 words x 8 dims: 'w0', 'w1', 'w2', ...)"
    assert repr(Vectors(["a"], np.zeros((1, 1), dtype=np.float32))) == "Vectors(1 word x 1 dim: 'a')"


def test_wv_and_has_index_for_answer_as_gensim(both):
    """Code written for a gensim model runs on a ``Vectors``: ``model.wv`` is the vectors,
    and ``has_index_for`` answers as gensim's for words, row numbers and strangers."""
    v, kv = both
    assert v.wv is v
    same_neighbours(v.wv.most_similar("king", topn=5), kv.most_similar("king", topn=5))
    for key in ("king", "the", "not-a-word-here", 0, len(v) - 1, len(v), -1, 2.5, None):
        assert v.has_index_for(key) == kv.has_index_for(key), key


def test_save_refuses_gensims_pickle_names_unless_told_the_format(both, tmp_path):
    v = both[0]
    for name in ("x.kv", "x.model", "X.KV"):
        with pytest.raises(w2v.W2VError, match=rf"^{tmp_path / name}: a \.(kv|model) file is gensim's pickled "):
            v.save(tmp_path / name)
        assert not (tmp_path / name).exists()
    v.save(tmp_path / "x.model", binary=True)  # the format given: written as asked
    np.testing.assert_array_equal(Vectors.load(tmp_path / "x.model").vectors, v.vectors)


def test_word_counts_as_gensim_keeps_them(tmp_path):
    """Counts come with training and with a model file, answer ``get_vecattr``, go over
    to gensim and back, and ``fvocab=`` writes them as gensim does."""
    sample = str(REPO / "data" / "sample.txt.gz")
    trained = w2v.train(sample, dim=8, epochs=1, threads=1, save_model=str(tmp_path / "m.npz"))
    loaded = Vectors.load(tmp_path / "m.npz")
    assert trained.counts is not None and trained.counts[0] >= trained.counts[-1] >= 5
    np.testing.assert_array_equal(loaded.counts, trained.counts)
    keyed = loaded.to_gensim()
    for word in ("the", "king", loaded.words[-1]):
        assert (
            loaded.get_vecattr(word, "count") == keyed.get_vecattr(word, "count") == trained.get_vecattr(word, "count")
        )
    np.testing.assert_array_equal(Vectors.from_gensim(keyed).counts, loaded.counts)
    loaded.save_word2vec_format(tmp_path / "ours.txt", fvocab=tmp_path / "ours.vocab")
    keyed.save_word2vec_format(str(tmp_path / "theirs.txt"), fvocab=str(tmp_path / "theirs.vocab"))
    assert (tmp_path / "ours.vocab").read_bytes() == (tmp_path / "theirs.vocab").read_bytes()
    assert Vectors.load(tmp_path / "ours.txt").words == loaded.words


def test_counts_where_a_file_holds_none(both, tmp_path):
    v, _ = both
    assert v.counts is None
    with pytest.raises(w2v.W2VError, match=r"^get_vecattr needs the word counts, which a vectors file does not hold"):
        v.get_vecattr("king", "count")
    with pytest.raises(KeyError, match="w2v keeps the word counts only"):
        Vectors(["a"], np.ones((1, 2), np.float32), counts=np.array([3])).get_vecattr("a", "color")
    with pytest.raises(w2v.W2VError, match=r"^fvocab needs the word counts"):
        v.save_word2vec_format(tmp_path / "x.txt", fvocab=tmp_path / "x.vocab")
    assert not (tmp_path / "x.txt").exists() and not (tmp_path / "x.vocab").exists()
