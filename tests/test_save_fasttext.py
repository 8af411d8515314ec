"""A trained model written as a fastText ``.bin`` (``train --save-fasttext``,
``convert --to fasttext``; ``w2v.vectorio.as_fasttext``): read back by w2v, fastText
and gensim with w2v's vectors for known and unseen words, w2v's losses mapped onto
fastText's, and refused with one line where the source is not a model."""

import shlex
import struct

import numpy as np
import pytest
from conftest import without_progress

import w2v
from w2v.config import TrainConfig
from w2v.errors import UnwritableOutput
from w2v.vectorio.as_fasttext import fasttext_model, fasttext_settings
from w2v.vectorio.modelfile import TrainState
from w2v.vectors.wordvectors import Vectors

PLAIN = dict(dim=16, min_count=1, epochs=2, threads=1)
SUBWORDS = dict(PLAIN, subwords=True, bucket=2000)
UNSEEN = ["cats", "dogged", "mats", "redder", "xyzzy"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_corpus):
    """A tiny subword model, its model file ``m.npz`` and its fastText ``.bin`` ``m.bin``."""
    folder = tmp_path_factory.mktemp("save_fasttext")
    model, written = folder / "m.npz", folder / "m.bin"
    w2v.train(str(tiny_corpus), save_model=str(model), save_fasttext=str(written), **SUBWORDS)
    return model, written


def assert_close_to(found: np.ndarray, expected: np.ndarray, word: str) -> None:
    """``found`` within 1e-5 of ``expected``'s norm, value by value."""
    gap = float(np.abs(found - expected).max())
    assert gap <= 1e-5 * max(float(np.linalg.norm(expected)), 1e-12), f"{word}: off by {gap}"


def test_convert_writes_what_the_run_wrote(trained, tmp_path, run_w2v):
    model, written = trained
    converted = tmp_path / "c.bin"
    code, out, err = run_w2v("convert", model, converted, "--to", "fasttext")
    assert (code, out) == (0, "")
    assert err.startswith("w2v: wrote ") and "2,000 n-gram rows of 16 values" in err and "loss ns" in err
    assert converted.read_bytes() == written.read_bytes()


def test_w2v_reads_its_vectors_back(trained):
    model, written = trained
    ours, back = Vectors.load(model), Vectors.load(written)
    assert back.words == ours.words
    words = ours.words + UNSEEN
    np.testing.assert_allclose(back[words], ours[words], rtol=0, atol=1e-6)


def test_fasttext_reads_w2vs_vectors(trained):
    fasttext = pytest.importorskip("fasttext")
    model, written = trained
    ours = Vectors.load(model)
    loaded = fasttext.load_model(str(written))
    assert loaded.get_words() == ours.words
    args = loaded.f.getArgs()
    assert (args.model.name, args.loss.name, args.dim) == ("skipgram", "ns", 16)
    assert (args.ws, args.epoch, args.minCount, args.neg) == (5, 2, 1, 5)
    assert (args.minn, args.maxn, args.bucket, args.lrUpdateRate, args.t) == (3, 6, 2000, 10_000, 1e-3)
    for word in ours.words + UNSEEN:
        assert_close_to(loaded.get_word_vector(word), ours[word], word)


def test_gensim_reads_w2vs_vectors(trained):
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext")
    model, written = trained
    ours = Vectors.load(model)
    loaded = gensim_fasttext.load_facebook_model(str(written))
    assert loaded.wv.index_to_key == ours.words and (loaded.sg, loaded.hs, loaded.negative) == (1, 0, 5)
    for word in ours.words + UNSEEN:
        assert_close_to(loaded.wv[word], ours[word], word)


def test_without_subwords_no_ngram_rows_are_written(tiny_corpus, tmp_path):
    """As fastText writes ``-maxn 0``: maxn 0, bucket 0; a known word's vector is its
    row, an unseen word's fastText's zero vector."""
    written = tmp_path / "m.bin"
    vectors = w2v.train(str(tiny_corpus), save_fasttext=str(written), **PLAIN)
    args = struct.unpack_from("<12id", written.read_bytes(), 8)
    assert (args[8], args[9], args[10]) == (0, 3, 0)  # bucket, minn, maxn
    back = Vectors.load(written)
    assert back.subwords is None and back.words == vectors.words
    np.testing.assert_array_equal(back.vectors, vectors.vectors)
    fasttext = pytest.importorskip("fasttext")
    loaded = fasttext.load_model(str(written))
    for word in vectors.words:
        np.testing.assert_array_equal(loaded.get_word_vector(word), vectors[word])
    assert not loaded.get_word_vector("cats").any()


@pytest.mark.parametrize(
    ("settings", "loss", "neg"),
    [
        (dict(), "ns", 5),
        (dict(nce=4), "ns", 4),  # NCE's and sampled softmax's output rows are word vectors too
        (dict(sampled_softmax=6), "ns", 6),
        (dict(softmax=True), "softmax", 0),
        (dict(hs=True), "hs", 0),
        (dict(hs=True, negative=3), "ns", 3),  # one loss a model: negative sampling's, a row per word
        (dict(model="cbow", hs=True), "hs", 0),
    ],
)
def test_losses_map_onto_fasttexts(settings, loss, neg):
    config = TrainConfig(**settings, window=3, epochs=7, min_count=2, sample=1e-4, batch_words=500).resolved()
    ft = fasttext_settings(config)
    assert (ft.loss, ft.neg, ft.model) == (loss, neg, settings.get("model", "skipgram"))
    assert (ft.ws, ft.epoch, ft.min_count, ft.lr_update_rate, ft.t) == (3, 7, 2, 500, 1e-4)


@pytest.mark.parametrize("settings", [dict(negative=3), dict(nce=3), dict(softmax=True), dict(hs=True, negative=3)])
def test_the_output_matrix_of_a_word_loss_is_syn1neg(tiny_corpus, tmp_path, settings):
    path = tmp_path / "m.npz"
    w2v.train(str(tiny_corpus), save_model=str(path), **PLAIN, **settings)
    state = TrainState.load(str(path))
    np.testing.assert_array_equal(fasttext_model(state).output, state.syn1neg)


def fasttext_tree(counts: list[int]) -> tuple[list[list[int]], list[list[bool]]]:
    """fastText's ``HierarchicalSoftmaxLoss::buildTree``, transcribed: each word's
    output rows (its inner nodes less ``osz``) and code bits, leaf to root."""
    osz = len(counts)
    count = counts + [10**15] * (osz - 1)
    parent, binary = [-1] * (2 * osz - 1), [False] * (2 * osz - 1)
    leaf, node = osz - 1, osz
    for i in range(osz, 2 * osz - 1):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j], leaf = leaf, leaf - 1
            else:
                mini[j], node = node, node + 1
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
        binary[mini[1]] = True
    paths, codes = [], []
    for i in range(osz):
        path, code, j = [], [], i
        while parent[j] != -1:
            path.append(parent[j] - osz)
            code.append(binary[j])
            j = parent[j]
        paths.append(path)
        codes.append(code)
    return paths, codes


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def test_hierarchical_softmax_gives_fasttext_w2vs_probabilities(tiny_corpus, tmp_path):
    """fastText's tree over the counts written, with the output matrix written
    (``-syn1``), gives every word the probability w2v's tree and ``syn1`` give it:
    fastText's unit says P(bit 1) = sigma(o . h), word2vec.c's P(bit 0) = sigma(u . h)."""
    path = tmp_path / "m.npz"
    w2v.train(str(tiny_corpus), save_model=str(path), hs=True, **PLAIN)
    state = TrainState.load(str(path))
    output = fasttext_model(state).output.astype(np.float64)
    hidden = np.random.default_rng(0).standard_normal((4, PLAIN["dim"]))
    codes, points, offsets = state.vocab.huffman()
    paths, bits = fasttext_tree(state.vocab.counts.tolist())
    totals = np.zeros(len(hidden))
    for word in range(len(state.vocab)):
        span = slice(offsets[word], offsets[word + 1])
        logits = hidden @ state.syn1[points[span]].T.astype(np.float64)
        ours = log_sigmoid(np.where(codes[span] == 0, logits, -logits)).sum(axis=1)
        logits = hidden @ output[paths[word]].T
        theirs = log_sigmoid(np.where(bits[word], logits, -logits)).sum(axis=1)
        np.testing.assert_allclose(theirs, ours, rtol=1e-9)
        totals += np.exp(theirs)
    np.testing.assert_allclose(totals, 1.0)  # a distribution over the words


def test_train_writes_fasttext_beside_word2vec_binary(tiny_corpus, tmp_path, monkeypatch, run_w2v):
    monkeypatch.chdir(tmp_path)
    line = f"train {tiny_corpus} --dim 8 --min-count 1 --epochs 1 --threads 1 -q -o v.bin --save-fasttext m.bin"
    assert run_w2v(*shlex.split(line)) == (0, "", "")
    vectors = Vectors.load("v.bin")
    assert (tmp_path / "v.bin").read_bytes().startswith(b"%d 8\n" % len(vectors))
    assert Vectors.load("m.bin").words == vectors.words


@pytest.mark.parametrize(
    ("line", "code", "message"),
    [
        ("convert v.bin out.bin --to fasttext", 1, "v.bin holds word2vec vectors, not a w2v model: vectors files have "
         "no output weights to train, score or write to fastText; keep a model with 'w2v train ... --save-model FILE'"),
        ("convert missing.npz out.bin --to fasttext", 1, "model file not found: missing.npz"),
        ("convert m.npz out.bin --to fasttext --limit 3", 2, "--from and --limit do not apply to --to fasttext: "
         "it writes a w2v model whole"),
        ("convert m.npz no/out.bin --to fasttext", 1, None),
        ("train CORPUS -o same.bin --save-fasttext same.bin", 2, "-o and --save-fasttext name the same file: same.bin"),
        ("train CORPUS -q -o v2.bin --save-fasttext no/out.bin", 1, None),
    ],
)  # fmt: skip
def test_mistakes_are_one_line_and_write_nothing(
    trained, tiny_corpus, tmp_path, monkeypatch, line, code, message, run_w2v
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.npz").write_bytes(trained[0].read_bytes())
    Vectors(["a", "b"], np.eye(2, dtype=np.float32)).save("v.bin", binary=True)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    found = run_w2v(*shlex.split(line.replace("CORPUS", str(tiny_corpus))))
    assert found[:2] == (code, "") and found[2].startswith("w2v: error: ") and found[2].count("\n") == 1
    if message is not None:
        assert found[2] == f"w2v: error: {message}\n"
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


NUL_WORD = "a\0b"  # a word as a corpus may hold it, which fastText's dictionary ends at the NUL
NUL_CORPUS = f"the cat sat on the mat {NUL_WORD} dog\n" * 50
REFUSED = "cannot write m.bin as a fastText model: word 6, 'a\\x00b', holds whitespace or a NUL, which ends a word"


def test_a_word_fasttext_cannot_hold_is_named_before_training_and_the_rest_is_written(tmp_path, monkeypatch, run_w2v):
    """``--save-fasttext`` of a vocabulary holding a NUL: a warning once the vocabulary
    is known, before training; then the run writes every other output (the vectors
    hold the word) and ends with the one error line, exit 1, and no ``.bin``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text(NUL_CORPUS)
    options = "--dim 8 --min-count 1 --epochs 1 --threads 1 --subwords --bucket 1000 --save-vocab vocab.txt"
    line = f"train corpus.txt {options} -o v.txt --save-model m.npz --save-fasttext m.bin"
    code, out, err = run_w2v(*shlex.split(line))
    lines = [line for line in without_progress(err).splitlines() if "compiling" not in line]
    assert (code, out) == (1, "")
    assert lines[0] == f"w2v: warning: {REFUSED}; the run writes its other outputs, then fails"
    assert lines[1].startswith("w2v: training skipgram with negative sampling: dim 8, ")  # the run's settings
    assert lines[2].startswith("w2v: 7 words in vocabulary, 400 words trained")  # the summary, after training
    assert lines[3:] == [f"w2v: error: {REFUSED}"]
    assert not (tmp_path / "m.bin").exists()
    assert NUL_WORD in Vectors.load("v.txt").words and NUL_WORD in Vectors.load("m.npz").words
    assert f"{NUL_WORD} 50\n" in (tmp_path / "vocab.txt").read_text()


def test_the_api_hands_over_the_vectors_it_could_not_write_to_fasttext(tmp_path, monkeypatch):
    """``w2v.train(save_fasttext=...)`` raises ``UnwritableOutput`` after writing the
    other outputs; its ``vectors`` are the run's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text(NUL_CORPUS)
    with pytest.raises(UnwritableOutput) as caught:
        w2v.train(str(tmp_path / "corpus.txt"), save_model=str(tmp_path / "m.npz"), save_fasttext="m.bin", **SUBWORDS)
    assert str(caught.value) == REFUSED
    assert caught.value.vectors.words == Vectors.load(tmp_path / "m.npz").words
    assert NUL_WORD in caught.value.vectors.words


# --- training goes on from a .bin (init_model) --------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [SUBWORDS, dict(PLAIN, hs=True, negative=0), dict(PLAIN, model="cbow", softmax=True)],
    ids=["ns-subwords", "hs", "softmax"],
)
def test_training_goes_on_from_a_bin_as_from_the_model_file(tiny_corpus, tmp_path, settings):
    """A .bin w2v wrote holds the output weights: training goes on from it exactly as
    from the model file it was written with (one thread, one seed)."""
    model, written = tmp_path / "m.npz", tmp_path / "m.bin"
    w2v.train(str(tiny_corpus), save_model=str(model), save_fasttext=str(written), **settings)
    again = dict(epochs=1, threads=1, seed=7)
    from_bin = w2v.train(str(tiny_corpus), init_model=str(written), **again)
    from_model = w2v.train(str(tiny_corpus), init_model=str(model), **again)
    assert from_bin.words == from_model.words and from_bin.vectors.tobytes() == from_model.vectors.tobytes()


def test_training_goes_on_from_fasttexts_own_model(tiny_corpus, tmp_path, run_w2v):
    """fastText's .bin: its words, counts, input matrix (n-grams too) and output matrix
    start the run; the command takes it as the library does."""
    fasttext = pytest.importorskip("fasttext")
    from w2v.vectorio.as_fasttext import fasttext_state

    path = tmp_path / "ft.bin"
    ft = fasttext.train_unsupervised(str(tiny_corpus), dim=8, epoch=1, minCount=1, bucket=500, thread=1, verbose=0)
    ft.save_model(str(path))
    state = fasttext_state(str(path))
    assert [word.decode() for word in state.vocab.words] == ft.words and state.config.dim == 8
    assert (state.config.subwords, state.config.bucket, state.config.negative) == (True, 500, 5)
    np.testing.assert_array_equal(state.syn0, ft.get_input_matrix())
    np.testing.assert_array_equal(state.syn1neg, ft.get_output_matrix())
    code, _, err = run_w2v("train", tiny_corpus, "--init-model", path, "--epochs", "1", "-o", tmp_path / "v.bin", "-q")
    assert (code, err) == (0, "")
    assert Vectors.load(tmp_path / "v.bin").words == ft.words
    labels = tmp_path / "labels.txt"
    labels.write_text("__label__a the cat sat\n__label__b the dog ran\n" * 10)
    supervised = tmp_path / "sup.bin"
    fasttext.train_supervised(str(labels), epoch=1, verbose=0).save_model(str(supervised))
    code, _, err = run_w2v("train", tiny_corpus, "--init-model", supervised, "-o", tmp_path / "v.bin", "-q")
    assert (code, err) == (1, f"w2v: error: {supervised} is a supervised fastText model (a classifier): it lacks "
                              "output weights of words to go on training; start from its word vectors alone "
                              "(w2v convert it to a vectors file)\n")  # fmt: skip


def test_a_bin_that_lacks_what_training_needs_is_one_line(tiny_corpus, trained, tmp_path, run_w2v):
    _, written = trained
    data = written.read_bytes()
    output_bytes = 16 * 12 * 4  # the output matrix's values: 12 words of 16 values
    cut = "cut.bin lacks its output matrix (the file ends after the input matrix)"
    cases = {
        "cut.bin": (data[: -output_bytes - 17], cut),
        "short.bin": (data[:-4], "short.bin: damaged fastText model (it ends inside its output matrix)"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        code, _, err = run_w2v("train", tiny_corpus, "--init-model", tmp_path / name, "-o", tmp_path / "v.bin", "-q")
        assert (code, err) == (1, f"w2v: error: {tmp_path / name}" + message[len(name) :] + "\n")
    assert not (tmp_path / "v.bin").exists()
