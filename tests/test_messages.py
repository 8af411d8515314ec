"""Counts in messages: "1 word", never "1 words"; and the order of train's closing lines."""

import numpy as np
import pytest
from conftest import without_progress

from w2v.corpus.vocab import Vocab
from w2v.errors import ConfigError, CorpusError, FormatError, plural
from w2v.vectorio.modelfile import describe_progress
from w2v.vectors.classes import kmeans
from w2v.vectors.wordvectors import Vectors


def test_plural():
    assert [plural(n, "word") for n in (0, 1, 2, 1234)] == ["0 words", "1 word", "2 words", "1,234 words"]
    assert (plural(1, "class", "classes"), plural(3, "class", "classes")) == ("1 class", "3 classes")


def test_convert_one_vector_of_one_value(tmp_path, run_w2v):
    Vectors(["only"], np.ones((1, 1), dtype=np.float32)).save(tmp_path / "one.bin")
    code, _, err = run_w2v("convert", tmp_path / "one.bin", tmp_path / "one.txt")
    assert code == 0 and f"wrote 1 vector of 1 value to {tmp_path / 'one.txt'} (text)" in err


def test_classes_one_class(tmp_path, run_w2v):
    Vectors(["a", "b", "c"], np.eye(3, dtype=np.float32)).save(tmp_path / "v.bin")
    code, _, err = run_w2v("classes", "-v", tmp_path / "v.bin", "-k", "1", "-o", tmp_path / "c.txt", "--iter", "1")
    want = f"w2v: 3 words in 1 class after 1 iteration (mean cosine to centroid 0.5774); wrote {tmp_path / 'c.txt'}\n"
    assert (code, without_progress(err)) == (0, want)


def test_phrases_one_line(tmp_path, run_w2v):
    (tmp_path / "c.txt").write_text("new york is new\n")
    code, _, err = run_w2v("phrases", tmp_path / "c.txt", "-o", tmp_path / "p.txt", "--min-count", "1")
    assert code == 0 and "1 line, 4 tokens in, 4 out" in err and "pass 1: 0 phrases" in err


def test_vocab_one_word(tmp_path, run_w2v):
    (tmp_path / "c.txt").write_text("hello\n")
    code, out, _ = run_w2v("vocab", tmp_path / "c.txt", "-o", tmp_path / "v.txt", "--min-count", "1")
    assert code == 0
    assert out.splitlines()[0] == "1 word (min-count 1) cover 1 of 1 token (100.00%); 1 distinct word counted; " + (
        f"wrote {tmp_path / 'v.txt'}"
    )


def test_eval_one_question_and_one_pair(tmp_path, run_w2v):
    vectors = tmp_path / "v.txt"
    Vectors(["a", "b", "c", "d"], np.eye(4, dtype=np.float32)).save(vectors)
    (tmp_path / "q.txt").write_text(": s\na b c d\nbroken line\n")
    (tmp_path / "p.txt").write_text("a b 1.0\n")
    code, out, _ = run_w2v("eval", "-v", vectors, "--analogies", tmp_path / "q.txt", "--similarity", tmp_path / "p.txt")
    assert code == 0
    assert "; 1 question, 0 skipped (a word outside the 4 most frequent), 1 invalid line" in out
    assert " on 1 pair, 0 missing" in out


def test_library_messages_with_counts_of_one():
    assert describe_progress(jobs_done=4, batches=4, epochs=1) == "its one epoch done"
    assert describe_progress(jobs_done=8, batches=4, epochs=2) == "all 2 epochs done"
    with pytest.raises(CorpusError, match=r"at least 5 times \(min_count; the most frequent occurs 1 time\)$"):
        Vocab.choose([b"a", b"b"], np.array([1, 1]), min_count=5, max_size=None)
    with pytest.raises(ConfigError, match=r"^2 classes for 1 word: "):
        kmeans(np.ones((1, 3), dtype=np.float32), 2)


def test_vector_files_damaged_by_one(tmp_path):
    (tmp_path / "v.txt").write_bytes(b"1 3\nword 0.5\n")
    with pytest.raises(FormatError, match=r"has 1 value; the header says 3 a record"):
        Vectors.load(tmp_path / "v.txt", binary=False)
    (tmp_path / "v.bin").write_bytes(b"1 1\nx")
    with pytest.raises(FormatError, match=r"promises 1 record of 1 value \(binary\), but the file holds only 1 byte"):
        Vectors.load(tmp_path / "v.bin", binary=True)


def test_train_prints_phrases_then_summary_then_classes(tiny_corpus, tmp_path, run_w2v):
    """The classes line comes after the training summary it belongs to."""
    args = ["train", tiny_corpus, "-o", tmp_path / "v.bin", "--min-count", "1", "--dim", "8", "--epochs", "1"]
    args += ["--threads", "1", "--phrases", "--classes", "1", "--classes-output", tmp_path / "classes.txt"]
    code, _, err = run_w2v(*args)
    lines = [line for line in without_progress(err).splitlines() if line.startswith("w2v: ")]
    assert code == 0
    assert lines.pop(1).startswith("w2v: training skipgram with negative sampling: dim 8, ")  # the run's settings
    assert lines[0].startswith("w2v: phrases found in 1 pass: ")
    assert " in vocabulary, " in lines[1] and lines[1].endswith(f"writing {tmp_path / 'v.bin'}")
    assert lines[2] == f"w2v: {lines[1].split()[1]} words in 1 class; wrote {tmp_path / 'classes.txt'}"


def test_score_one_token_out_of_vocabulary(tiny_corpus, tmp_path, run_w2v):
    import w2v

    model = tmp_path / "m.npz"
    w2v.train(str(tiny_corpus), min_count=1, dim=8, epochs=1, threads=1, save_model=str(model))
    (tmp_path / "held.txt").write_text("the cat sat on the zebra\n")
    code, out, _ = run_w2v("score", model, tmp_path / "held.txt")
    assert code == 0 and "; 1 token out of vocabulary" in out
