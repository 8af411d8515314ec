"""Word classes: spherical k-means on separable clusters, and ``w2v classes``."""

import numpy as np
import pytest
from click.testing import CliRunner

from w2v.cli import cli as w2v_cli
from w2v.errors import ConfigError
from w2v.vectors.classes import kmeans, write_classes
from w2v.vectors.wordvectors import Vectors

# three directions (animals, numbers, colours), words interleaved, lengths very different
WORDS = ["dog", "cat", "one", "red", "two", "mouse", "blue", "three", "green"]
AXIS = {"dog": 0, "cat": 0, "mouse": 0, "one": 1, "two": 1, "three": 1, "red": 2, "blue": 2, "green": 2}
EXPECTED = "dog 0\ncat 0\nmouse 0\none 1\ntwo 1\nthree 1\nred 2\nblue 2\ngreen 2\n"


def clustered_vectors() -> np.ndarray:
    rng = np.random.default_rng(0)
    rows = []
    for index, word in enumerate(WORDS):
        row = rng.normal(0, 0.1, 4)
        row[AXIS[word]] += 1.0
        rows.append(row * (1 + 10 * index))  # lengths must not matter: cosine only
    return np.asarray(rows, dtype=np.float32)


@pytest.mark.parametrize("init", ["kmeans++", "word2vec"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_separable_clusters_are_found(init, seed):
    found = kmeans(clustered_vectors(), 3, iterations=10, seed=seed, init=init)
    assert found.labels.tolist() == [0, 0, 1, 2, 1, 0, 2, 1, 2]  # numbered by first word
    assert found.labels.dtype == np.int32
    assert np.allclose(np.linalg.norm(found.centroids, axis=1), 1, atol=1e-6)
    assert found.mean_similarity > 0.95
    assert found.iterations <= 10


def test_word2vec_init_first_iteration_matches_word2vec_c():
    # word2vec.c: word i starts in class i mod k; one iteration assigns each word to
    # the unit mean of those starting classes with the largest dot product
    unit = np.array([[1, 0], [0, 1], [1, 0.2], [0.2, 1]], dtype=np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    found = kmeans(unit, 2, iterations=1, init="word2vec")
    # classes 0 = {0, 2} and 1 = {1, 3}: already separated, numbered by first word
    assert found.labels.tolist() == [0, 1, 0, 1]
    assert found.iterations == 1


def test_one_class_per_word_and_one_class():
    vectors = clustered_vectors()
    assert kmeans(vectors, 9).labels.tolist() == list(range(9))
    assert kmeans(vectors, 1).labels.tolist() == [0] * 9


def test_no_empty_class_with_duplicate_points():
    points = np.array([[1, 0], [1, 0], [1, 0], [0, 1]], dtype=np.float32)
    found = kmeans(points, 3, init="word2vec")
    assert sorted(set(found.labels.tolist())) == [0, 1, 2]


def test_bad_settings_raise_config_error():
    with pytest.raises(ConfigError, match="at most one class per word"):
        kmeans(clustered_vectors(), 10)
    with pytest.raises(ConfigError, match="unknown k-means init"):
        kmeans(clustered_vectors(), 2, init="random")


def test_write_classes_orders(tmp_path):
    labels = np.array([1, 0, 1], dtype=np.int32)
    path = tmp_path / "c.txt"
    write_classes(str(path), ["a", "b", "c"], labels)
    assert path.read_text() == "b 0\na 1\nc 1\n"
    write_classes(str(path), ["a", "b", "c"], labels, order="vocab")
    assert path.read_text() == "a 1\nb 0\nc 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]


def test_classes_cli_exact_output(tmp_path):
    vectors = tmp_path / "v.txt"
    Vectors(WORDS, clustered_vectors()).save(vectors)
    out = tmp_path / "classes.txt"
    result = CliRunner().invoke(w2v_cli, ["classes", "-v", str(vectors), "-k", "3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == EXPECTED
    assert "9 words in 3 classes" in result.output
    vocab_order = tmp_path / "vocab-order.txt"
    args = ["classes", "-v", str(vectors), "-k", "3", "-o", str(vocab_order), "--order", "vocab", "-q"]
    args += ["--init", "word2vec", "--iter", "5"]
    result = CliRunner().invoke(w2v_cli, args)
    assert result.exit_code == 0 and result.output == ""
    assert vocab_order.read_text() == "dog 0\ncat 0\none 1\nred 2\ntwo 1\nmouse 0\nblue 2\nthree 1\ngreen 2\n"


@pytest.mark.slow
def test_classes_cli_errors(cli, tmp_path):
    vectors = tmp_path / "v.txt"
    Vectors(WORDS, clustered_vectors()).save(vectors)
    done = cli("classes", "-v", vectors, "-k", "20", "-o", tmp_path / "c.txt")
    assert done.returncode == 1
    assert done.stderr == b"w2v: error: 20 classes for 9 words: give at most one class per word\n"
    assert not (tmp_path / "c.txt").exists()


def test_train_with_classes_writes_them(tiny_corpus, tmp_path):
    out, classes = tmp_path / "v.txt", tmp_path / "classes.txt"
    args = ["train", str(tiny_corpus), "-o", str(out), "--min-count", "1", "--dim", "8", "--epochs", "1"]
    args += ["--threads", "1", "-q", "--classes", "3", "--classes-output", str(classes)]
    result = CliRunner().invoke(w2v_cli, args)
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in classes.read_text().splitlines()]
    assert sorted(word for word, _ in lines) == sorted(Vectors.load(out).words)
    labels = [int(label) for _, label in lines]
    assert labels == sorted(labels) and set(labels) == {0, 1, 2} and lines[0][0] == "the"  # 'the': most frequent
