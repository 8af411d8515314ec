"""``w2v vocab``: the vocabulary file, its summary and the min-count coverage table."""

import pytest
from click.testing import CliRunner

from w2v.cli import cli as w2v_cli

CORPUS = "a a a b\nb c a\nd\n"  # a 4, b 2, c 1, d 1: 8 tokens


def run_vocab(tmp_path, *args, corpus=CORPUS):
    source = tmp_path / "corpus.txt"
    source.write_text(corpus)
    out = tmp_path / "vocab.txt"
    result = CliRunner().invoke(w2v_cli, ["vocab", str(source), "-o", str(out), "-q", *args])
    assert result.exit_code == 0, result.output
    return result.output, out


def test_vocab_file_summary_and_coverage(tmp_path):
    output, out = run_vocab(tmp_path, "--min-count", "2")
    assert out.read_text() == "a 4\nb 2\n"
    assert output == (
        f"2 words (min-count 2) cover 6 of 8 tokens (75.00%); 4 distinct words counted; wrote {out}\n"
        "min-count\twords\ttokens\tcoverage\n"
        "1\t4\t8\t100.00%\n"
        "2\t2\t6\t75.00%\n"
        "3\t1\t4\t50.00%\n"
        "4\t1\t4\t50.00%\n"
        "5\t0\t0\t0.00%\n"
        "6\t0\t0\t0.00%\n"
        "7\t0\t0\t0.00%\n"
        "8\t0\t0\t0.00%\n"
        "9\t0\t0\t0.00%\n"
        "10\t0\t0\t0.00%\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "vocab.txt"]  # no temporary file left


def test_vocab_ties_keep_first_seen_order_and_max_vocab(tmp_path):
    output, out = run_vocab(tmp_path, "--min-count", "1", "--max-vocab", "3")
    assert out.read_text() == "a 4\nb 2\nc 1\n"  # c before d: seen first
    lines = output.splitlines()
    assert lines[0].startswith("3 words (min-count 1, max-vocab 3) cover 7 of 8 tokens (87.50%)")
    assert lines[2] == "1\t3\t7\t87.50%"  # the table obeys --max-vocab too


def test_vocab_prune_at_follows_reduce_vocab(tmp_path):
    # prune at 2 distinct words: after 'x y z' the words seen once go (ReduceVocab)
    output, out = run_vocab(tmp_path, "--min-count", "1", "--prune-at", "2", corpus="x x y\nz\nx\n")
    assert out.read_text() == "x 3\n"
    assert "note: counting pruned words seen at most 1 time (--prune-at 2)" in output


def test_vocab_is_read_back_by_train(tmp_path):
    from w2v.corpus.vocab import Vocab

    _, out = run_vocab(tmp_path, "--min-count", "1")
    words, counts = Vocab.read_counts(str(out))
    assert words == [b"a", b"b", b"c", b"d"] and counts.tolist() == [4, 2, 1, 1]


@pytest.mark.slow
def test_vocab_errors_are_one_line(cli, tmp_path):
    missing = cli("vocab", tmp_path / "nope.txt", "-o", tmp_path / "v.txt")
    assert missing.returncode == 1
    assert missing.stderr.decode().startswith("w2v: error: corpus not found")
    assert len(missing.stderr.splitlines()) == 1
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n")
    done = cli("vocab", empty, "-o", tmp_path / "v.txt", "-q")  # -q: no progress line before the error
    assert done.returncode == 1 and done.stderr == b"w2v: error: the corpus is empty: it holds no words\n"


def test_vocab_prunes_as_often_as_needed(tmp_path):
    # one ReduceVocab step (count <= 1) leaves x and y: a second one (<= 2) is needed
    output, out = run_vocab(tmp_path, "--min-count", "1", "--prune-at", "1", corpus="x x x y y z w\n")
    assert out.read_text() == "x 3\n"
    assert "note: counting pruned words seen at most 2 times" in output
