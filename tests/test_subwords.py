"""Subword models: a word the model never saw gets the vector its character n-grams
build (the mean of their rows, as fastText's ``getWordVector``), and ``Vectors``
answers as gensim's ``FastTextKeyedVectors``; files without n-grams answer as before."""

import tracemalloc

import numpy as np
import pytest
from reference import fasttext_bin, fasttext_buckets, fasttext_hash, fasttext_subwords, train_fasttext

from w2v.corpus import ngrams
from w2v.corpus.ngrams import NgramSettings, input_rows
from w2v.vectorio.subwords import SubwordVectors
from w2v.vectors.wordvectors import UnknownWordError, Vectors

WORDS = [b"</s>", b"walk", b"talk", b"jump", b"sing"]
DIM, BUCKET, MINN, MAXN = 6, 101, 3, 5


@pytest.fixture
def model(tmp_path):
    """A fastText ``.bin`` of ``WORDS`` whose words' and buckets' rows are random."""
    rows = np.random.default_rng(3).standard_normal((len(WORDS) + BUCKET, DIM)).astype(np.float32)
    path = tmp_path / "tiny.bin"
    path.write_bytes(fasttext_bin(WORDS, dim=DIM, bucket=BUCKET, minn=MINN, maxn=MAXN, values=rows))
    return path, rows


def expected_vector(word: str, rows: np.ndarray, own_row: int | None = None) -> np.ndarray:
    """The mean of ``word``'s n-grams' rows (and ``own_row``), found by plain-Python hashing."""
    picked = [len(WORDS) + fasttext_hash(g) % BUCKET for g in fasttext_subwords(word, MINN, MAXN)]
    picked += [] if own_row is None else [own_row]
    return rows[picked].mean(axis=0) if picked else np.zeros(DIM, dtype=np.float32)


def test_an_unseen_inflection_is_the_mean_of_its_ngram_rows(model):
    path, rows = model
    vectors = Vectors.load(path)
    assert len(fasttext_subwords("walked", MINN, MAXN)) == 15  # "<walked>": 6 + 5 + 4
    np.testing.assert_allclose(vectors["walked"], expected_vector("walked", rows), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(vectors["talk"], expected_vector("talk", rows, own_row=2), rtol=1e-6, atol=1e-6)
    built = vectors.subwords.compose(["walked", "talk", "x"])
    assert built.ngrams.tolist() == [15, len(fasttext_subwords("talk", MINN, MAXN)), 1]
    np.testing.assert_array_equal(built.vectors[1], vectors["talk"])


def test_unseen_words_are_in_it_but_have_no_index(model):
    """As gensim's FastTextKeyedVectors: ``in`` says a vector can be had; the index
    and ``has_index_for`` hold the words alone."""
    vectors = Vectors.load(model[0])
    assert "walked" in vectors and not vectors.has_index_for("walked")
    assert "walked" not in vectors.key_to_index and len(vectors) == len(WORDS)
    assert vectors.has_index_for("walk") and vectors.has_index_for(1) and 1 in vectors
    assert vectors[["walk", "walked"]].shape == (2, DIM)
    np.testing.assert_array_equal(vectors[["walk", "walked"]][1], vectors["walked"])


def test_queries_take_an_unseen_word_by_its_built_vector(model):
    vectors = Vectors.load(model[0])
    built = vectors["walked"]
    query = built / np.linalg.norm(built)
    cosines = vectors.unit @ query
    best = np.argsort(-cosines, kind="stable")[:3]
    found = vectors.most_similar("walked", topn=3)
    assert [word for word, _ in found] == [vectors.words[i] for i in best]  # no row left out: it has none
    np.testing.assert_allclose([score for _, score in found], cosines[best], rtol=1e-5)
    assert vectors.similarity("walked", "talk") == pytest.approx(float(cosines[2]), rel=1e-5)
    assert vectors.similarity("walked", "walked") == pytest.approx(1.0)
    assert vectors.doesnt_match(["walk", "walked", "talk"]) in ("walk", "walked", "talk")
    assert len(vectors.analogy("walked", "walk", "talk", topn=2)) == 2


def test_a_word_without_ngrams_gets_the_zero_vector_but_no_direction(tmp_path):
    """minn 4: "<a>" is too short for any n-gram. fastText gives the zero vector;
    the queries that need a direction say why they cannot answer."""
    path = tmp_path / "long.bin"
    path.write_bytes(fasttext_bin(WORDS, dim=DIM, bucket=BUCKET, minn=4, maxn=5))
    vectors = Vectors.load(path)
    assert "a" not in vectors
    np.testing.assert_array_equal(vectors["a"], np.zeros(DIM))
    message = "word not in vocabulary: 'a', nor has it a character n-gram of 4 to 5 characters to build a vector from"
    for query in (lambda: vectors.most_similar("a"), lambda: vectors.similarity("a", "walk")):
        with pytest.raises(UnknownWordError) as caught:
            query()
        assert str(caught.value) == message


def test_the_ngram_rows_are_mapped_not_read(model):
    vectors = Vectors.load(model[0])
    assert isinstance(vectors.subwords.buckets, np.memmap)
    assert vectors.subwords.buckets.shape == (BUCKET, DIM)
    assert not isinstance(vectors.vectors, np.memmap)  # the words' vectors are computed once, in memory


def test_a_word_past_the_limit_is_built_from_its_ngrams(model):
    path, rows = model
    vectors = Vectors.load(path, limit=3)
    assert vectors.words == ["</s>", "walk", "talk"] and not vectors.has_index_for("jump")
    np.testing.assert_allclose(vectors["jump"], expected_vector("jump", rows), rtol=1e-6, atol=1e-6)


def test_without_ngrams_a_model_answers_as_a_vectors_file(tmp_path):
    path = tmp_path / "plain.bin"
    path.write_bytes(fasttext_bin(WORDS, dim=DIM, bucket=0, maxn=0))
    vectors = Vectors.load(path)
    assert vectors.subwords is None and "walked" not in vectors
    with pytest.raises(UnknownWordError, match=r"^word not in vocabulary: 'walked' \(did you mean: walk\?\)$"):
        vectors["walked"]
    with pytest.raises(KeyError):
        vectors.most_similar("walked")


def test_fasttexts_own_vectors_of_unseen_words(tmp_path):
    """The vectors of words fastText never saw, built here, are fastText's."""
    model, path = train_fasttext(tmp_path, "the cat sat on the mat café naïve\nthe dog sat on a log\n" * 20)
    vectors = Vectors.load(path)
    for word in ("cats", "sitting", "naïveté", "日本", "x", "</s>"):
        expected = model.get_word_vector(word)
        np.testing.assert_allclose(vectors.subwords.compose([word]).vectors[0], expected, rtol=1e-6, atol=1e-7)


def test_subword_vectors_check_their_shapes():
    settings = NgramSettings(3, 6, 10)
    with pytest.raises(ValueError, match="2 words and 10 buckets"):
        SubwordVectors([b"a", b"b"], np.zeros((3, 4), np.float32), np.zeros((10, 4), np.float32), settings)


ODD_WORDS = [
    b"walk",
    b"</s>",  # no n-gram
    b"",  # "<>"
    b"caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80",  # characters of 2, 3 and 4 bytes
    b"\x80\x80ab\xff\xc3",  # continuation bytes with no lead, a lead with none
    b"a" + b"\x80" * 3000 + b"bc",  # one character of 3,001 bytes, hashed in Python
    b"xy\xe2\x82\xac" * 700,  # 2,800 characters: its n-grams run over several blocks
]


@pytest.mark.parametrize(("minn", "maxn"), [(3, 6), (1, 2), (2, 9)])
def test_each_words_rows_are_fasttexts_ngrams_however_long_or_malformed(monkeypatch, minn, maxn):
    """Every word's rows: its own, then fastText's n-gram buckets in its order
    (``computeSubwords``, transcribed in tests/reference.py), for words of any bytes
    and length, hashed over blocks of a few hundred n-grams."""
    monkeypatch.setattr(ngrams, "BLOCK_NGRAMS", 500)
    rng = np.random.default_rng(0)
    pieces = [b"a", b"\xc3\xa9", b"\xe2\x82\xac", b"\x80", b"\xc3", b"<"]
    words = ODD_WORDS + [b"".join(rng.choice(pieces, rng.integers(0, 12))) for _ in range(200)]
    rows, offsets = input_rows(words, NgramSettings(minn, maxn, 1009))
    for w, word in enumerate(words):
        ngram_rows = [] if word == b"</s>" else fasttext_buckets(word, minn, maxn, 1009)
        assert rows[offsets[w] : offsets[w + 1]].tolist() == [w] + [len(words) + row for row in ngram_rows]


def test_a_long_words_vector_sums_its_rows_in_fasttexts_order(monkeypatch):
    """A word of 2,000 characters (5,997 n-grams over several blocks, summed alone):
    its own row, then its n-grams' rows, added one by one in float32 in fastText's
    order, times 1 / their count, bit for bit."""
    monkeypatch.setattr(ngrams, "BLOCK_NGRAMS", 3000)
    rng = np.random.default_rng(1)
    word = bytes(rng.integers(97, 123, 2000, dtype=np.uint8))
    word_rows = rng.standard_normal((2, DIM)).astype(np.float32)
    buckets = rng.standard_normal((BUCKET, DIM)).astype(np.float32)
    subwords = SubwordVectors([b"walk", word], word_rows, buckets, NgramSettings(MINN, MAXN, BUCKET))
    total = word_rows[1].copy()
    picked = fasttext_buckets(word, MINN, MAXN, BUCKET)
    for row in picked:
        total += buckets[row]
    composed = subwords.composed([word, b"walk"], np.array([1, 0]))
    assert composed.ngrams.tolist() == [len(picked), 9] and len(picked) == 5997
    assert composed.vectors[0].tobytes() == (total * (np.float32(1) / np.float32(len(picked) + 1))).tobytes()


def traced_peak(call) -> int:
    """The most bytes Python and numpy held at once (``tracemalloc``) during ``call()``."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_word_among_many_takes_memory_in_proportion_to_their_bytes():
    """1,023 short words and one of 16 KiB (20 KB in all): building the words' rows of a
    run (``input_rows``) and their composed vectors each peaks under 8 MiB, where
    padding every word of a block to the longest took 115 MiB (and 13 s)."""
    words = [b"w%d" % i for i in range(1023)] + [b"a" * 16384]
    settings = NgramSettings(MINN, MAXN, BUCKET)
    subwords = SubwordVectors(words, np.zeros((1024, DIM), np.float32), np.ones((BUCKET, DIM), np.float32), settings)
    assert traced_peak(lambda: input_rows(words, settings)) < 8 << 20
    assert traced_peak(subwords.vocabulary_vectors) < 8 << 20
