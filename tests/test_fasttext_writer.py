"""fastText ``.bin`` files written by w2v: fastText's layout byte for byte, read back by
w2v's reader, fastText and gensim with the same vectors for known and unseen words,
and refused (one line, nothing written) where fastText could not hold the model."""

import struct

import numpy as np
import pytest

from w2v.corpus.ngrams import NgramSettings
from w2v.errors import W2VError
from w2v.vectorio import fasttext as fasttext_format
from w2v.vectorio.fasttext import FastTextModel, FastTextSettings, save_fasttext
from w2v.vectorio.subwords import SubwordVectors
from w2v.vectors.wordvectors import Vectors

WORDS = ["</s>", "the", "king", "queen", "kingdom", "café", "naïve", "日本語"]
UNSEEN = ["kingdomz", "queens", "cafés", "日本", "x"]
NGRAMS = NgramSettings(minn=3, maxn=6, bucket=211)
DIM = 8


DEFAULTS = FastTextSettings(ngrams=NGRAMS)


def random_model(settings: FastTextSettings = DEFAULTS) -> FastTextModel:
    """A model of ``WORDS`` whose rows are random, counts decreasing."""
    rng = np.random.default_rng(7)
    bucket = settings.ngrams.bucket
    inputs = rng.standard_normal((len(WORDS) + bucket, DIM)).astype(np.float32)
    outputs = rng.standard_normal((len(WORDS), DIM)).astype(np.float32)
    counts = np.arange(len(WORDS), 0, -1, dtype=np.int64) * 10
    return FastTextModel(WORDS, counts, inputs, outputs, settings)


def composed(model: FastTextModel, words: list[str]) -> np.ndarray:
    """The vectors ``model``'s rows give ``words``, composed in memory."""
    nwords = len(model.words)
    raw = [word.encode() for word in model.words]
    subwords = SubwordVectors(raw, model.input[:nwords], model.input[nwords:], model.settings.ngrams)
    return subwords.compose(words).vectors


def test_the_layout_is_fasttexts_save_model(tmp_path):
    """Magic, version 12, Args::save, Dictionary::save (no labels, pruneidx_size -1),
    the quantization flags and both DenseMatrix::save, in that order."""
    settings = FastTextSettings(model="cbow", loss="hs", ws=3, epoch=2, min_count=1, neg=4, lr_update_rate=50,
                                t=1e-3, ngrams=NgramSettings(2, 4, 3))  # fmt: skip
    inputs = np.arange(5 * 2, dtype=np.float32).reshape(5, 2)
    outputs = -np.arange(2 * 2, dtype=np.float32).reshape(2, 2)
    path = tmp_path / "m.bin"
    save_fasttext(path, FastTextModel(["ab", "é"], np.array([7, 3]), inputs, outputs, settings, ntokens=12))
    expected = struct.pack("<2i", 793712314, 12)
    expected += struct.pack("<12id", 2, 3, 2, 1, 4, 1, 1, 1, 3, 2, 4, 50, 1e-3)  # loss hs 1, model cbow 1
    expected += struct.pack("<3i2q", 2, 2, 0, 12, -1)
    expected += b"ab\0" + struct.pack("<qb", 7, 0) + "é".encode() + b"\0" + struct.pack("<qb", 3, 0)
    expected += b"\0" + struct.pack("<2q", 5, 2) + inputs.tobytes()
    expected += b"\0" + struct.pack("<2q", 2, 2) + outputs.tobytes()
    assert path.read_bytes() == expected


@pytest.mark.parametrize(("model", "code"), [("cbow", 1), ("skipgram", 2)])
@pytest.mark.parametrize(("loss", "loss_code"), [("hs", 1), ("ns", 2), ("softmax", 3)])
def test_model_and_loss_codes(tmp_path, model, code, loss, loss_code):
    path = tmp_path / "m.bin"
    save_fasttext(path, random_model(FastTextSettings(model=model, loss=loss, ngrams=NGRAMS)))
    args = struct.unpack_from("<12id", path.read_bytes(), 8)
    assert (args[6], args[7]) == (loss_code, code)


def test_written_then_read_gives_the_same_vectors(tmp_path):
    model = random_model()
    path = tmp_path / "m.bin"
    save_fasttext(path, model)
    vectors = Vectors.load(path)
    assert vectors.words == WORDS
    np.testing.assert_array_equal(vectors.vectors, composed(model, WORDS))
    np.testing.assert_array_equal(vectors[UNSEEN], composed(model, UNSEEN))


def assert_close_to(found: np.ndarray, expected: np.ndarray, word: str) -> None:
    """``found`` within 1e-5 of ``expected``'s norm, value by value."""
    gap = float(np.abs(found - expected).max())
    assert gap <= 1e-5 * max(float(np.linalg.norm(expected)), 1e-12), f"{word}: off by {gap}"


@pytest.mark.parametrize("settings", [DEFAULTS, FastTextSettings("cbow", "hs", ngrams=NGRAMS)])
def test_fasttext_reads_the_same_vectors(tmp_path, settings):
    fasttext = pytest.importorskip("fasttext")
    model = random_model(settings)
    path = tmp_path / "m.bin"
    save_fasttext(path, model)
    loaded = fasttext.load_model(str(path))
    words, counts = loaded.get_words(include_freq=True)
    assert words == WORDS and counts.tolist() == model.counts.tolist()
    args = loaded.f.getArgs()
    assert (args.model.name, args.loss.name) == (settings.model, settings.loss)
    assert (args.minn, args.maxn, args.bucket, args.dim) == (3, 6, 211, DIM)
    np.testing.assert_array_equal(loaded.get_output_matrix(), model.output)
    ours = composed(model, WORDS + UNSEEN)
    for word, vector in zip(WORDS + UNSEEN, ours, strict=True):
        assert_close_to(vector, loaded.get_word_vector(word), word)


def test_gensim_reads_the_same_vectors(tmp_path):
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext")
    model = random_model()
    path = tmp_path / "m.bin"
    save_fasttext(path, model)
    loaded = gensim_fasttext.load_facebook_model(str(path))
    assert loaded.wv.index_to_key == WORDS and (loaded.sg, loaded.hs, loaded.negative) == (1, 0, 5)
    checked = [word for word in WORDS if word != "</s>"] + UNSEEN  # gensim gives </s> n-grams, fastText none
    for word, vector in zip(checked, composed(model, checked), strict=True):
        assert_close_to(vector, loaded.wv[word], word)


def with_settings(**changes):
    """A change to a model: its settings' ``changes``."""
    return lambda model: model._replace(settings=model.settings._replace(**changes))


def with_fields(**changes):
    """A change to a model: ``changes`` of its fields, each a function of the model."""
    return lambda model: model._replace(**{name: change(model) for name, change in changes.items()})


SHAPES = "(8 words, 211 buckets)"
SPLIT = "holds whitespace or a NUL, which ends a word"
REFUSED = {  # a change to the model: what the error says of it
    "loss": (with_settings(loss="nce"), "loss 'nce' (fastText's are hs, ns, softmax)"),
    "model": (with_settings(model="sg"), "model 'sg' (fastText's are cbow, skipgram)"),
    "maxn": (with_settings(ngrams=NgramSettings(3, 101, 211)), "maxn 101: n-grams are 0 to 100 characters long"),
    "input rows": (with_fields(input=lambda m: m.input[:-1]), f"input matrix of shape (218, 8), not (219, 8) {SHAPES}"),
    "output rows": (with_fields(output=lambda m: m.output[:-1]), f"output matrix of shape (7, 8), not (8, 8) {SHAPES}"),
    "counts": (with_fields(counts=lambda m: m.counts[:3]), f"counts of shape (3,), not (8,) {SHAPES}"),
    "space": (with_fields(words=lambda m: [*WORDS[:-1], "new york"]), f"word 8, 'new york', {SPLIT}"),
    "NUL": (with_fields(words=lambda m: [*WORDS[:-1], "a\0b"]), f"word 8, 'a\\x00b', {SPLIT}"),
}


@pytest.mark.parametrize(("change", "why"), REFUSED.values(), ids=REFUSED)
def test_a_model_fasttext_cannot_hold_is_refused(tmp_path, change, why):
    path = tmp_path / "m.bin"
    with pytest.raises(W2VError) as caught:
        save_fasttext(path, change(random_model()))
    assert str(caught.value) == f"cannot write {path} as a fastText model: {why}"
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "m.bin"
    path.write_bytes(b"old")

    def full_disk(out, matrix):
        out.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fasttext_format, "write_matrix", full_disk)
    with pytest.raises(W2VError, match="No space left on device"):
        save_fasttext(path, random_model())
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["m.bin"]
