"""Every common vectors file loads, or says what it is: w2v's model files and
checkpoints, GloVe's headerless text, fastText's .bin models (against fastText's own
vectors, where fastText is installed), gensim's pickles (named, with the command that
converts them, never unpickled); and the query commands' --limit and convert's --to."""

import gzip
import pickle
import re
import shlex
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from reference import fasttext_bin, train_fasttext

import w2v
from w2v.errors import FormatError
from w2v.vectorio.subwords import SubwordVectors
from w2v.vectors.wordvectors import Vectors

SENTENCES = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "sat", "on", "a", "log"]] * 50


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model file, a checkpoint folder and the vectors of the run that wrote them."""
    folder = tmp_path_factory.mktemp("model")
    model, checkpoint = folder / "model.npz", folder / "ck"
    vectors = w2v.train(
        SENTENCES, min_count=1, dim=8, epochs=2, threads=1, save_model=str(model), checkpoint=str(checkpoint)
    )
    return vectors, model, checkpoint


def test_model_file_and_checkpoint_load_as_vectors(trained):
    vectors, model, checkpoint = trained
    for path in (model, checkpoint, checkpoint / "checkpoint.npz"):
        loaded = Vectors.load(path)
        assert loaded.words == vectors.words
        np.testing.assert_array_equal(loaded.vectors, vectors.vectors)
    limited = Vectors.load(model, limit=3)
    assert limited.words == vectors.words[:3] and limited.vectors.shape == (3, 8)


@pytest.mark.slow
def test_query_commands_read_model_files(trained, cli, tmp_path):
    vectors, model, checkpoint = trained
    for path in (model, checkpoint, checkpoint / "checkpoint.npz"):
        done = cli("similar", "-v", path, "cat", "-n", "2")
        assert done.returncode == 0, done.stderr
        expected = "".join(f"{w}\t{s:.4f}\n" for w, s in vectors.most_similar("cat", topn=2))
        assert done.stdout.decode() == expected
    done = cli("convert", model, tmp_path / "v.txt")
    assert done.returncode == 0 and Vectors.load(tmp_path / "v.txt").words == vectors.words


def test_other_zip_files_are_not_model_files(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, a=np.zeros(3))
    with pytest.raises(FormatError, match=r"other\.npz is not a w2v model file or is damaged"):
        Vectors.load(path)


GLOVE = "the 0.418 0.24968 -0.41242\n, 0.013441 0.23682 -0.16899\n\n. 0.15164 0.30177 -0.16763\nnaïve 1 2 3.5e-1"


def test_glove_files_are_detected(tmp_path):
    path = tmp_path / "glove.6B.3d.txt"
    path.write_text(GLOVE)  # a blank line, and no final newline
    loaded = Vectors.load(path)
    assert loaded.words == ["the", ",", ".", "naïve"]
    np.testing.assert_array_equal(loaded.vectors[3], np.float32([1, 2, 0.35]))
    assert Vectors.load(path, limit=2).words == ["the", ","]
    assert Vectors.load(path, no_header=True).words == loaded.words
    packed = tmp_path / "glove.txt.gz"
    packed.write_bytes(gzip.compress(GLOVE.encode()))
    np.testing.assert_array_equal(Vectors.load(packed).vectors, loaded.vectors)


def test_glove_as_gensim_reads_it(tmp_path):
    keyedvectors = pytest.importorskip("gensim.models.keyedvectors")
    path = tmp_path / "glove.txt"
    path.write_text(GLOVE.replace("\n\n", "\n") + "\n")
    theirs = keyedvectors.KeyedVectors.load_word2vec_format(str(path), no_header=True)
    ours = Vectors.load_word2vec_format(path, no_header=True)
    assert ours.words == theirs.index_to_key
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)


@pytest.mark.slow
def test_one_value_a_word_needs_format_glove(tmp_path, cli):
    path = tmp_path / "one.txt"
    path.write_text("a 0.5\nb -0.5\n")  # "a 0.5" could be a damaged header: not detected
    with pytest.raises(FormatError, match=r"bad header 'a 0\.5'"):
        Vectors.load(path)
    assert Vectors.load(path, no_header=True).words == ["a", "b"]
    done = cli("similar", "-v", path, "--format", "glove", "a")
    assert done.returncode == 0 and done.stdout == b"b\t-1.0000\n"


def test_damaged_glove_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("the 0.1 0.2\nof 0.3\nand 0.5 0.6\n")
    with pytest.raises(FormatError, match=r"bad.txt: line 2: not a word and 2 numbers \(as the first line\)$"):
        Vectors.load(path, no_header=True)
    path.write_text("the 0.1 0.2\n\nof 0.3 x\n")
    with pytest.raises(FormatError, match=r"bad.txt: line 3: not a word and 2 numbers"):
        Vectors.load(path, no_header=True)


# --- gensim's pickles ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def gensim_files(tmp_path_factory):
    models = pytest.importorskip("gensim.models")
    folder = tmp_path_factory.mktemp("gensim")
    sentences = [["a", "b", "c", "d"], ["b", "c", "d", "a"]] * 20
    word2vec = models.Word2Vec(sentences, vector_size=4, min_count=1, workers=1, seed=1)
    fasttext = models.FastText(sentences, vector_size=4, min_count=1, workers=1, seed=1)
    files = {"w.model": word2vec, "w.kv": word2vec.wv, "f.model": fasttext, "f.kv": fasttext.wv}
    for name, saved in files.items():
        saved.save(str(folder / name))
    return folder, {name: getattr(saved, "wv", saved) for name, saved in files.items()}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "module", "cls", "wv"),
    [
        ("w.kv", "gensim.models.keyedvectors", "KeyedVectors", ""),
        ("w.model", "gensim.models.word2vec", "Word2Vec", ".wv"),
        ("f.kv", "gensim.models.fasttext", "FastTextKeyedVectors", ""),
        ("f.model", "gensim.models.fasttext", "FastText", ".wv"),
    ],
)
def test_gensim_pickles_are_named_with_the_command_that_converts_them(gensim_files, cli, name, module, cls, wv):
    folder, saved = gensim_files
    done = cli("similar", "-v", name, "a", cwd=folder)
    assert done.returncode == 1
    stem = name.split(".")[0]
    code = f'from {module} import {cls}; {cls}.load("{name}"){wv}.save_word2vec_format("{stem}.bin", binary=True)'
    assert done.stderr.decode() == (
        f"w2v: error: {name} is a gensim {cls} file (a Python pickle, which w2v does not load: unpickling runs "
        f"code); write its vectors with gensim: python -c {shlex.quote(code)}\n"
    )
    command = shlex.split(done.stderr.decode().split("write its vectors with gensim: ")[1])
    subprocess.run([sys.executable, *command[1:]], cwd=folder, check=True)  # the command works
    converted = Vectors.load(folder / f"{stem}.bin")
    assert converted.words == saved[name].index_to_key
    np.testing.assert_array_equal(converted.vectors, saved[name].vectors)


def test_other_pickles_are_never_loaded(tmp_path):
    path = tmp_path / "vectors.bin"
    path.write_bytes(pickle.dumps(Fraction(1, 3), protocol=4))
    with pytest.raises(FormatError) as caught:
        Vectors.load(path)
    assert str(caught.value) == (
        f"{path} is a Python pickle (fractions.Fraction), not a vectors file: "
        "w2v does not unpickle files (it runs their code)"
    )
    path.write_bytes(pickle.dumps({"a": [1.0]}, protocol=2))
    with pytest.raises(FormatError, match=r"vectors.bin is a Python pickle, not a vectors file"):
        Vectors.load(path)


# --- fastText's .bin models ----------------------------------------------------------------


@pytest.mark.parametrize("settings", [{}, {"minn": 2, "maxn": 4, "model": "cbow"}, {"maxn": 0}])
def test_fasttext_bin_gives_fasttexts_word_vectors(tmp_path, settings):
    model, path = train_fasttext(tmp_path, **settings)
    loaded = Vectors.load(path)
    assert loaded.words == model.words  # </s> included, as in fastText's .vec
    expected = np.array([model.get_word_vector(word) for word in model.words])
    np.testing.assert_allclose(loaded.vectors, expected, rtol=1e-6, atol=1e-7)
    assert Vectors.load(path, limit=3).words == model.words[:3]


def test_fasttext_supervised_model_gives_its_words_not_labels(tmp_path):
    fasttext = pytest.importorskip("fasttext")
    data = tmp_path / "train.txt"
    data.write_text("__label__a the cat sat\n__label__b a dog ran\n" * 20)
    model = fasttext.train_supervised(str(data), dim=4, epoch=1, thread=1, verbose=0, bucket=300, wordNgrams=2)
    path = tmp_path / "sup.bin"
    model.save_model(str(path))
    loaded = Vectors.load(path)
    assert loaded.words == model.words and not any(w.startswith("__label__") for w in loaded.words)
    expected = np.array([model.get_word_vector(word) for word in model.words])
    np.testing.assert_allclose(loaded.vectors, expected, rtol=1e-6, atol=1e-7)
    model.quantize(input=str(data), retrain=False, cutoff=0)
    quantized = tmp_path / "sup.ftz"
    model.save_model(str(quantized))
    with pytest.raises(FormatError, match=r"sup.ftz is a quantized fastText model: its vectors cannot be read; "):
        Vectors.load(quantized)


def test_damaged_or_compressed_fasttext_models(tmp_path):
    _, path = train_fasttext(tmp_path)
    cut = tmp_path / "cut.bin"
    cut.write_bytes(path.read_bytes()[:300])
    with pytest.raises(FormatError, match=r"cut\.bin: damaged fastText model"):
        Vectors.load(cut)
    packed = tmp_path / "model.bin.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()[:4096]))
    with pytest.raises(FormatError, match=r"model.bin.gz is a fastText model: decompress it first"):
        Vectors.load(packed)


DAMAGED_FASTTEXT = {  # settings of a crafted model: what the error says of them
    "maxn 2^31 - 1": ({"maxn": 2**31 - 1}, "maxn 2147483647: n-grams are 0 to 100 characters long"),
    "maxn 101": ({"maxn": 101}, "maxn 101: n-grams are 0 to 100 characters long"),
    "minn -1": ({"minn": -1}, "minn -1: n-grams are 0 to 100 characters long"),
    "dim 0": ({"dim": 0}, "dim 0"),
    "bucket 0": ({"bucket": 0}, "bucket 0, where minn 3 and maxn 6 make n-grams, hashed into buckets"),
    "bucket -3": ({"bucket": -3}, "bucket -3"),
    "buckets past the matrix": (
        {"bucket": 100, "rows": 6},
        "input matrix of 6 x 2 values, where its 2 words and 100 buckets make 102 x 2",
    ),
    "a matrix past its buckets": (
        {"bucket": 4, "rows": 7},
        "input matrix of 7 x 2 values, where its 2 words and 4 buckets make 6 x 2",
    ),
}


@pytest.mark.parametrize(("settings", "why"), DAMAGED_FASTTEXT.values(), ids=DAMAGED_FASTTEXT)
def test_fasttext_settings_out_of_bounds_are_one_line(tmp_path, settings, why):
    """A huge maxn was a loop of maxn steps (memory growing without end); a bucket out of
    the matrix an IndexError hidden by a BufferError."""
    path = tmp_path / "crafted.bin"
    path.write_bytes(fasttext_bin([b"the", b"cat"], **settings))
    with pytest.raises(FormatError) as caught:
        Vectors.load(path)
    assert str(caught.value) == f"{path}: damaged fastText model ({why})"


def test_fasttext_settings_at_their_bounds_load(tmp_path):
    """maxn 100 (its bound) reads, and a model without n-grams needs no bucket: each
    word's vector is its own row."""
    path = tmp_path / "bounds.bin"
    path.write_bytes(fasttext_bin([b"the", b"cat"], minn=100, maxn=100))
    np.testing.assert_allclose(Vectors.load(path).vectors, [[0.0, 0.1], [0.2, 0.3]])
    path.write_bytes(fasttext_bin([b"the", b"cat"], bucket=0, maxn=0))
    np.testing.assert_allclose(Vectors.load(path).vectors, [[0.0, 0.1], [0.2, 0.3]])
    path.write_bytes(fasttext_bin([b"a" * 300], minn=1, maxn=100, bucket=1))  # every n-gram in row 1
    ngrams = sum(min(100, 302 - start) for start in range(302)) - 2  # of "<a...a>", but "<" and ">" alone
    expected = (np.array([0.0, 0.1]) + ngrams * np.array([0.2, 0.3])) / (ngrams + 1)
    np.testing.assert_allclose(Vectors.load(path).vectors, [expected], rtol=1e-3)  # summed in float32, as fastText


def test_an_error_while_reading_a_fasttext_model_is_not_hidden(tmp_path, monkeypatch):
    """What stops the reading (here Ctrl-C) is raised as it is, not as a BufferError from
    closing a map that the traceback's arrays still use."""
    path = tmp_path / "model.bin"
    path.write_bytes(fasttext_bin([b"the", b"cat"]))

    def interrupted(subwords):
        raise KeyboardInterrupt

    monkeypatch.setattr(SubwordVectors, "vocabulary_vectors", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Vectors.load(path)


WRITERS = {  # the file each writer names: Vectors -> folder -> None
    "v.txt": lambda vectors, folder: vectors.save(folder / "v.txt"),
    "v.bin": lambda vectors, folder: vectors.save(folder / "v.bin"),
    "v.vocab.txt": lambda vectors, folder: vectors.save_npy(folder / "v.npy"),
    "emb_metadata.tsv": lambda vectors, folder: vectors.save_projector(str(folder / "emb")),
}
SPACE = "holds whitespace, which ends a word"
SPLIT_WORDS = {  # a second word: what each writer refusing it says (the others write it, and it reads back)
    "new york": {"v.txt": f"'new york', {SPACE}", "v.bin": f"'new york', {SPACE}"},
    "tab\there": {
        "v.txt": f"'tab\\x09here', {SPACE}",
        "v.bin": f"'tab\\x09here', {SPACE}",
        "emb_metadata.tsv": "'tab\\x09here', holds a tab or line break, which ends a word",
    },
    "cr\rlf": {
        "v.txt": f"'cr\\x0dlf', {SPACE}",
        "v.bin": f"'cr\\x0dlf', {SPACE}",
        "v.vocab.txt": "'cr\\x0dlf', holds a line break, which ends a word",
        "emb_metadata.tsv": "'cr\\x0dlf', holds a tab or line break, which ends a word",
    },
}


@pytest.mark.parametrize(("word", "refused"), SPLIT_WORDS.items(), ids=["space", "tab", "carriage return"])
def test_a_word_the_file_would_end_early_is_not_written(tmp_path, word, refused):
    """Whitespace ends a word in a word2vec file (and in a corpus), a line break in an
    .npy export's vocabulary, a tab or line break in the projector's TSV metadata: such a
    word would read back as other words (or the metadata as more lines than vectors).
    Nothing is written; the other files take the word and read it back."""
    vectors = Vectors(["the", word], np.ones((2, 3), dtype=np.float32))
    for name, write in WRITERS.items():
        folder = tmp_path / name
        folder.mkdir()
        if name in refused:
            with pytest.raises(w2v.W2VError) as caught:
                write(vectors, folder)
            assert str(caught.value) == f"cannot write {folder / name}: word 2, {refused[name]}"
            assert list(folder.iterdir()) == []
        else:
            write(vectors, folder)
            if name != "emb_metadata.tsv":  # w2v does not read the projector's files
                assert Vectors.load(next(folder.glob("v.[tbn]*"))).words == ["the", word]


def test_an_empty_word_is_not_written(tmp_path):
    vectors = Vectors(["the", ""], np.ones((2, 3), dtype=np.float32))
    for name, write in WRITERS.items():
        with pytest.raises(w2v.W2VError, match=f"^cannot write {re.escape(str(tmp_path / name))}: word 2 is empty$"):
            write(vectors, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_values_past_float32_read_as_infinite_without_a_warning(tmp_path):
    """1e39 in text, a float64 .npy's 1e300, fastText rows whose mean passes float32's
    largest: each row reads as infinite, which the queries leave out, and numpy's
    RuntimeWarning (an overflow in a cast or a sum) reaches no one."""
    (tmp_path / "v.txt").write_text("2 2\nthe 1 2\ncat 1e39 1\n")
    (tmp_path / "glove.txt").write_text("the 0.5 2\ncat -1e39 1\n")
    np.save(tmp_path / "v.npy", np.array([[1, 2], [1e300, 1]]))
    (tmp_path / "v.vocab.txt").write_text("the\ncat\n")
    rows = np.array([[-6e37, 1], [3e38, 1], [1e37, 1]])  # the, cat, and the bucket of all 6 n-grams of each
    (tmp_path / "v.bin").write_bytes(fasttext_bin([b"the", b"cat"], values=rows, bucket=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("v.txt", "glove.txt", "v.npy", "v.bin"):
            loaded = Vectors.load(tmp_path / name)
            assert loaded.words == ["the", "cat"] and loaded.nonfinite_rows().tolist() == [1], name


# --- the commands: --limit, --to npy ---------------------------------------------------------


@pytest.mark.slow
def test_unknown_word_under_limit_names_it(trained, cli):
    _, model, _ = trained
    done = cli("similar", "-v", model, "log", "--limit", "2")
    assert done.returncode == 1
    assert done.stderr.decode().endswith("; only the 2 most frequent words were read (--limit 2)\n")
    assert done.stderr.decode().startswith("w2v: error: word not in vocabulary: 'log'")
    done = cli("analogy", "-v", model, "log", "dog", "cat", "--limit", "2")
    assert done.returncode == 1 and b"(--limit 2)\n" in done.stderr
    done = cli("analogy", "-v", model, "--limit", "2", input=b"log dog cat\n")
    assert b"only the 2 most frequent words were read (--limit 2)" in done.stderr
    done = cli("similar", "-v", model, "lgo")
    assert done.returncode == 1 and b"--limit" not in done.stderr  # no --limit given: not mentioned


@pytest.mark.slow
def test_convert_to_npy_needs_an_npy_name(trained, cli, tmp_path):
    _, model, _ = trained
    done = cli("convert", model, tmp_path / "out.txt", "--to", "npy")
    assert done.returncode == 2
    assert done.stderr.decode().endswith(f"--to npy needs a name ending in .npy, not {tmp_path / 'out.txt'}\n")
    assert list(tmp_path.iterdir()) == []
    assert cli("convert", model, tmp_path / "out.npy", "--to", "npy").returncode == 0


@pytest.mark.parametrize("name", ["out.kv", "out.model"])
def test_convert_refuses_a_gensim_pickle_name(trained, cli, tmp_path, name):
    """gensim's load reads a pickle from a .kv or .model file, not the word2vec text such a name got."""
    _, model, _ = trained
    dest = tmp_path / name
    done = cli("convert", model, dest)
    assert done.returncode == 1 and done.stderr.decode() == (
        f"w2v: error: {dest}: a .{name.split('.')[1]} file is gensim's pickled KeyedVectors, which w2v does not "
        "write: give DEST a .bin name: word2vec binary, which gensim reads with "
        "KeyedVectors.load_word2vec_format(FILE, binary=True)\n"
    )
    assert list(tmp_path.iterdir()) == []
