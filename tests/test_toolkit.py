"""The tools as library calls (``w2v.count_vocab``, ``w2v.phrases``, ``w2v.learn_phrases``,
``w2v.word_classes``): what they return, and that it is what the commands write."""

import doctest

import numpy as np
import pytest
from click.testing import CliRunner
from test_classes import AXIS, WORDS, clustered_vectors
from test_phrases import CORPUS as PHRASE_CORPUS  # 21 tokens: n(new york) 4, n(york city) 2
from test_phrases import JOINED, JOINED_TWICE
from test_vocab_cli import CORPUS as VOCAB_CORPUS  # a 4, b 2, c 1, d 1: 8 tokens

import w2v
import w2v.toolkit
from w2v.cli import cli as w2v_cli
from w2v.corpus.phrases import PhraseTable
from w2v.errors import ConfigError, CorpusError

TABLE = [{(b"new", b"york"): 2.52, (b"york", b"city"): 2.1}]  # scores of PHRASE_CORPUS at min-count 1


def command(*args: str) -> str:
    """Run ``w2v ARGS`` in this process; its standard output."""
    result = CliRunner().invoke(w2v_cli, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def vocab_corpus(tmp_path):
    (tmp_path / "vocab-corpus.txt").write_text(VOCAB_CORPUS)
    return tmp_path / "vocab-corpus.txt"


@pytest.fixture
def phrase_corpus(tmp_path):
    (tmp_path / "phrase-corpus.txt").write_text(PHRASE_CORPUS)
    return tmp_path / "phrase-corpus.txt"


def test_doctests():
    assert doctest.testmod(w2v.toolkit).failed == 0


# --- count_vocab ---------------------------------------------------------------------------


def test_count_vocab_counts_and_writes_what_the_command_writes(vocab_corpus, tmp_path):
    counted = w2v.count_vocab(str(vocab_corpus), min_count=2)
    assert counted.vocab.words == [b"a", b"b"] and counted.vocab.counts.tolist() == [4, 2]
    assert (counted.tokens, counted.distinct_words, counted.pruned_up_to) == (8, 4, 0)
    assert counted.coverage(4) == [(1, 4, 8), (2, 2, 6), (3, 1, 4), (4, 1, 4)]
    assert list(tmp_path.iterdir()) == [vocab_corpus]  # nothing written
    counted.save(str(tmp_path / "library.txt"))
    printed = command("vocab", vocab_corpus, "-o", tmp_path / "command.txt", "--min-count", "2", "-q")
    assert (tmp_path / "library.txt").read_bytes() == (tmp_path / "command.txt").read_bytes() == b"a 4\nb 2\n"
    assert printed.splitlines()[2:] == [f"{m}\t{w}\t{t}\t{100 * t / 8:.2f}%" for m, w, t in counted.coverage()]


def test_count_vocab_of_sentences_max_vocab_and_pruning():
    sentences = [["a", "a", "a", "b"], ["b", "c", "a"], ["d"]]
    capped = w2v.count_vocab(sentences, min_count=1, max_vocab=3)
    assert capped.vocab.words == [b"a", b"b", b"c"]  # c before d: seen first
    assert capped.coverage(2) == [(1, 3, 7), (2, 2, 6)]  # max_vocab caps the table too
    pruned = w2v.count_vocab([["x", "x", "y"], ["z"], ["x"]], min_count=1, prune_at=2)
    assert pruned.vocab.words == [b"x"] and pruned.vocab.counts.tolist() == [3]
    assert (pruned.tokens, pruned.pruned_up_to) == (5, 1)


def test_count_vocab_errors():
    with pytest.raises(CorpusError, match="the corpus is empty"):
        w2v.count_vocab([[]])
    with pytest.raises(CorpusError, match="no word occurs at least 5 times"):
        w2v.count_vocab([["a", "b"]])
    with pytest.raises(ConfigError, match="give files or URLs, not sentences"):
        w2v.count_vocab([["a", "b"]], cluster="local:1")


@pytest.mark.slow
def test_count_vocab_on_a_cluster_is_the_count_of_one_process(vocab_corpus):
    pytest.importorskip("distributed")
    here = w2v.count_vocab(str(vocab_corpus), min_count=1)
    there = w2v.count_vocab(str(vocab_corpus), min_count=1, cluster="local:1")
    assert there.vocab.words == here.vocab.words == [b"a", b"b", b"c", b"d"]
    assert there.vocab.counts.tolist() == here.vocab.counts.tolist() == [4, 2, 1, 1]
    assert (there.tokens, there.distinct_words, there.coverage()) == (8, 4, here.coverage())


# --- phrases -------------------------------------------------------------------------------


def test_phrases_joins_and_writes_what_the_command_writes(phrase_corpus, tmp_path):
    out, table_file = tmp_path / "library.txt", tmp_path / "library-table.txt"
    done = w2v.phrases(str(phrase_corpus), str(out), min_count=1, threshold=1, save_phrases=str(table_file))
    assert done.table.passes == TABLE
    assert (done.written.tokens_in, done.written.tokens_out, done.written.lines) == (21, 17, 7)
    assert out.read_text() == JOINED
    command("phrases", phrase_corpus, "-o", tmp_path / "command.txt", "--min-count", "1", "--threshold", "1",
            "--save-phrases", tmp_path / "command-table.txt", "-q")  # fmt: skip
    assert (tmp_path / "command.txt").read_text() == JOINED
    assert (tmp_path / "command-table.txt").read_bytes() == table_file.read_bytes()


def test_phrases_passes_and_a_given_table(phrase_corpus, tmp_path):
    twice = w2v.phrases(str(phrase_corpus), str(tmp_path / "twice.txt"), min_count=1, threshold=1, passes=2)
    assert (tmp_path / "twice.txt").read_text() == JOINED_TWICE
    assert twice.table.passes == [*TABLE, {(b"new_york", b"city"): (2 - 1) * 17 / (4 * 2)}]  # 17 tokens joined once
    table = PhraseTable(TABLE)
    applied = w2v.phrases(str(phrase_corpus), str(tmp_path / "applied.txt"), apply_phrases=table)
    assert applied.table is table and (tmp_path / "applied.txt").read_text() == JOINED
    table.save(str(tmp_path / "table.txt"))
    loaded = w2v.phrases(str(phrase_corpus), str(tmp_path / "loaded.txt"), apply_phrases=str(tmp_path / "table.txt"))
    assert loaded.table.passes == TABLE and (tmp_path / "loaded.txt").read_text() == JOINED


def test_learn_phrases_of_sentences():
    sentences = [line.split() for line in PHRASE_CORPUS.splitlines()]
    table = w2v.learn_phrases(sentences, min_count=1, threshold=1)
    assert table.passes == TABLE
    assert table.apply(["in", "new", "york", "city"]) == ["in", "new_york", "city"]
    npmi = w2v.learn_phrases(sentences, min_count=1, scoring="npmi")  # threshold 0.5 when not given
    assert npmi.threshold == 0.5
    assert npmi.passes[0][(b"new", b"york")] == pytest.approx(np.log(4 * 21 / 25) / -np.log(4 / 21))
    assert sorted(npmi.passes[0]) == [(b"apple", b"is"), (b"big", b"apple"), (b"is", b"big"), (b"new", b"york"),
                                      (b"the", b"big"), (b"york", b"city")]  # fmt: skip
    with pytest.raises(ConfigError, match="npmi threshold must be in"):
        w2v.learn_phrases(sentences, scoring="npmi", threshold=2)


@pytest.mark.slow
def test_phrases_on_a_cluster_write_the_text_of_one_process(phrase_corpus, tmp_path):
    pytest.importorskip("distributed")
    folder = tmp_path / "phrased"
    done = w2v.phrases(str(phrase_corpus), str(folder), min_count=1, threshold=1, passes=2, cluster="local:1")
    assert done.table.passes == w2v.learn_phrases(str(phrase_corpus), min_count=1, threshold=1, passes=2).passes
    assert "".join(part.read_text() for part in sorted(folder.iterdir())) == JOINED_TWICE
    assert (done.written.tokens_in, done.written.lines) == (21, 7)
    with pytest.raises(ConfigError, match="exists: w2v phrases --cluster writes a new folder"):
        w2v.phrases(str(phrase_corpus), str(folder), cluster="local:1")
    with pytest.raises(ConfigError, match="give -o FOLDER, not -"):
        w2v.phrases(str(phrase_corpus), "-", cluster="local:1")


# --- word_classes --------------------------------------------------------------------------


@pytest.fixture
def vectors() -> w2v.Vectors:
    return w2v.Vectors(WORDS, clustered_vectors())  # three directions, words interleaved


@pytest.mark.parametrize("order", ["class", "vocab"])
def test_word_classes_are_what_the_command_writes(vectors, tmp_path, order):
    found = w2v.word_classes(vectors, 3, seed=2)
    assert found.labels.tolist() == [0, 0, 1, 2, 1, 0, 2, 1, 2]  # numbered by first word
    assert dict(found) == AXIS  # dog, one and red come first: the classes are their axes
    assert found.clustering.mean_similarity > 0.95 and found.clustering.iterations <= 10
    found.save(str(tmp_path / "library.txt"), order=order)
    vectors.save(str(tmp_path / "vectors.txt"))
    command("classes", "-v", tmp_path / "vectors.txt", "-k", "3", "--seed", "2", "--order", order,
            "-o", tmp_path / "command.txt", "-q")  # fmt: skip
    assert (tmp_path / "library.txt").read_bytes() == (tmp_path / "command.txt").read_bytes()
    words = {"class": ["dog", "cat", "mouse", "one", "two", "three", "red", "blue", "green"], "vocab": WORDS}[order]
    assert (tmp_path / "library.txt").read_text() == "".join(f"{word} {AXIS[word]}\n" for word in words)


def test_word_classes_word2vec_init_and_errors(vectors):
    found = w2v.word_classes(vectors, 3, init="word2vec")
    assert found.labels.tolist() == [0, 0, 1, 2, 1, 0, 2, 1, 2]
    with pytest.raises(ConfigError, match="10 classes for 9 words"):
        w2v.word_classes(vectors, 10)
