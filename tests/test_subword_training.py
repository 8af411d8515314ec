"""Training subword vectors (``--subwords``): fastText's model in w2v's kernel, its
vectors written composed, its model files queried for words never seen."""

import hashlib
import re

import numpy as np
import pytest
from conftest import without_progress

import w2v
from w2v.corpus.ngrams import NgramSettings, input_rows
from w2v.engine.scoring import WordInputs, score_model
from w2v.vectorio.modelfile import TrainState
from w2v.vectors.wordvectors import Vectors
from w2v.words import encode_word

STEMS = ["walk", "talk", "jump", "play", "work", "call", "look", "help", "kick", "pull", "push", "turn"]
OTHERS = ["river", "stone", "cloud", "apple", "green", "table", "quiet", "north", "music", "paper", "horse", "glass"]
PLAIN = dict(dim=16, epochs=3, min_count=1, sample=0, threads=1, seed=1)
QUICK = dict(PLAIN, bucket=5_000)


@pytest.fixture(scope="module")
def inflected(tmp_path_factory):
    """Sentences of one stem with an -s or -ed ending or none (never -ing), words that
    come only with that stem, and one of the other words."""
    rng = np.random.default_rng(0)
    letters = np.array(list("bcdfghjklmnpqrstvwxz"))
    companions = {stem: ["".join(rng.choice(letters, 5)) for _ in range(3)] for stem in STEMS}
    lines = []
    for _ in range(600):
        stem = STEMS[rng.integers(len(STEMS))]
        words = [stem + ["", "s", "ed"][rng.integers(3)], *companions[stem], OTHERS[rng.integers(len(OTHERS))]]
        rng.shuffle(words)
        lines.append(" ".join(words))
    path = tmp_path_factory.mktemp("inflected") / "corpus.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_an_unseen_inflection_is_nearer_its_stem_than_other_words(inflected):
    vectors = w2v.train(str(inflected), subwords=True, **{**QUICK, "epochs": 20})
    assert "walking" not in vectors.key_to_index and "walking" in vectors
    for stem in STEMS:
        built = vectors[stem + "ing"]
        own = cosine(built, vectors[stem])
        assert own > max(cosine(built, vectors[word]) for word in OTHERS), stem


@pytest.mark.slow
@pytest.mark.parametrize("loss", [dict(negative=3), dict(hs=True)])
def test_no_ngrams_trains_as_without_subwords(tiny_corpus, loss):
    """``maxn=0``: each word is its own row alone, and skip-gram's subword path gives
    the vectors of the plain one, bit for bit. (CBOW's moves each position's rows as
    it leaves the reach, not after each window: tests/test_kernels.py checks it
    against the reference.)"""
    plain = w2v.train(str(tiny_corpus), **loss, **PLAIN)
    alone = w2v.train(str(tiny_corpus), **loss, subwords=True, maxn=0, **PLAIN)
    np.testing.assert_array_equal(alone.vectors, plain.vectors)


def test_written_vectors_are_the_mean_of_each_words_rows(tiny_corpus, tmp_path):
    model = tmp_path / "m.npz"
    vectors = w2v.train(str(tiny_corpus), subwords=True, save_model=str(model), **QUICK)
    state = TrainState.load(str(model))
    rows, offsets = input_rows(state.vocab.words, NgramSettings(3, 6, QUICK["bucket"]))
    for word in (b"cat", b"mat", b"the"):
        w = state.vocab.words.index(word)
        mean = state.syn0[rows[offsets[w] : offsets[w + 1]]].mean(axis=0)
        np.testing.assert_allclose(vectors[word.decode()], mean, rtol=1e-5, atol=1e-6)
    assert offsets[1] - offsets[0] > 1  # the words have n-grams
    assert state.syn0.shape == (len(state.vocab) + QUICK["bucket"], QUICK["dim"])


def test_a_model_file_answers_known_and_unseen_words(tiny_corpus, tmp_path):
    model, out = tmp_path / "m.npz", tmp_path / "v.bin"
    trained = w2v.train(str(tiny_corpus), subwords=True, save_model=str(model), **QUICK)
    trained.save(str(out))
    loaded, written = Vectors.load(str(model)), Vectors.load(str(out))
    np.testing.assert_allclose(loaded.vectors, trained.vectors, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(written.vectors, trained.vectors, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(loaded["cats"], trained["cats"], rtol=1e-6, atol=1e-7)
    assert "cats" in loaded and "cats" not in loaded.key_to_index and "cats" not in written


@pytest.mark.slow
@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_threads_1_runs_are_byte_identical(tiny_corpus, tmp_path, model):
    digests = set()
    for _ in range(2):
        vectors = w2v.train(str(tiny_corpus), subwords=True, model=model, **QUICK)
        digests.add(hashlib.md5(vectors.vectors.tobytes()).hexdigest())
    assert len(digests) == 1


def test_continued_training_keeps_the_ngram_rows(tiny_corpus, tmp_path):
    model = tmp_path / "m.npz"
    w2v.train(str(tiny_corpus), subwords=True, save_model=str(model), **QUICK)
    before = TrainState.load(str(model))
    more = tmp_path / "more.txt"
    more.write_text("zebra zebra zebra the cat\n" * 10)
    after_path = tmp_path / "after.npz"
    w2v.train(str(more), init_model=str(model), update_vocab=True, save_model=str(after_path), epochs=1, threads=1)
    after = TrainState.load(str(after_path))
    assert len(after.vocab) == len(before.vocab) + 1
    assert after.syn0.shape[0] == len(after.vocab) + QUICK["bucket"]
    unused = before.syn0[len(before.vocab) :] == after.syn0[len(after.vocab) :]
    assert unused.all(axis=1).sum() > QUICK["bucket"] // 2  # rows the new text has no n-gram in: kept as they were
    assert not unused.all()  # and the others trained


@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_scoring_reads_each_words_rows(tiny_corpus, tmp_path, model):
    """``w2v score``'s input vectors: a word's mean of its rows, and for CBOW the sum of
    its rows with their count (a flat mean over all the context words' rows)."""
    path = tmp_path / "m.npz"
    w2v.train(str(tiny_corpus), model=model, subwords=True, save_model=str(path), **QUICK)
    state = TrainState.load(str(path))
    inputs = WordInputs.of(state)
    rows, offsets = input_rows(state.vocab.words, NgramSettings(3, 6, QUICK["bucket"]))
    w = state.vocab.words.index(encode_word("dog"))
    mine = state.syn0[rows[offsets[w] : offsets[w + 1]]]
    np.testing.assert_allclose(inputs.sums[w], mine.sum(axis=0), rtol=1e-5, atol=1e-6)
    assert inputs.sizes[w] == len(mine)
    np.testing.assert_allclose(inputs.means[w], mine.mean(axis=0), rtol=1e-5, atol=1e-6)
    result = score_model(state, str(tiny_corpus), str(tmp_path))
    assert all(np.isfinite(score.bits_per_word) for score in result.scores)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--minn", "2"], "--minn applies to subword vectors only: add --subwords"),
        (["--subwords", "--minn", "5", "--maxn", "4"], "1 <= minn <= maxn <= 100"),
        (["--subwords", "--maxn", "101"], "1 <= minn <= maxn <= 100"),
        (["--subwords", "--bucket", "0"], "--bucket must be from 1 to 2,147,483,647, not 0"),
        (["--subwords", "--bucket", "2000000000", "--dim", "1000"], "lower --bucket"),
        (["--subwords", "--cluster", "local:1"], "--subwords does not work with --cluster yet"),
    ],
)
def test_bad_subword_settings_are_one_line(cli, tiny_corpus, tmp_path, args, message):
    out = tmp_path / "v.bin"
    result = cli("train", tiny_corpus, "-o", out, "--min-count", "1", *args)
    err = without_progress(result.stderr.decode())
    assert result.returncode != 0 and message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


@pytest.mark.slow
def test_a_token_whose_ngrams_repeat_is_named_when_training_diverges(cli, tmp_path):
    """A token of 10,000 times one letter lists the row of "aaa" 9,998 times among its
    39,995 rows: each update of its vector adds the gradient to each listed row, so the
    vector moves 9,994 times as far as a word's of distinct n-grams, and the run
    diverges at any usable --alpha. The one line names the token, not --alpha."""
    token = "a" * 10_000
    lines = [f"the quick brown fox jumps over the lazy dog {token if i % 10 == 0 else 'now'} end" for i in range(300)]
    corpus, out = tmp_path / "corpus.txt", tmp_path / "v.bin"
    corpus.write_text("\n".join(lines) + "\n")
    result = cli(
        "train",
        corpus,
        "-o",
        out,
        "--subwords",
        "--bucket",
        "1000",
        "--dim",
        "16",
        "--min-count",
        "1",
        "-q",
        "--threads",
        "1",
    )
    assert result.returncode == 1 and not out.exists()
    assert re.fullmatch(
        r"w2v: error: training diverged in epoch 1 \([^)]*\): the word 'a{60}\.\.\.' \(10,000 characters\) repeats its "
        r"character n-grams so often that each update moves its vector 9,994 times as far as a word's of "
        r"distinct n-grams: take the word out of the corpus\n",
        result.stderr.decode(),
    ), result.stderr.decode()
