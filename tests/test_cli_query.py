"""The ``w2v analogy / similar / eval / convert`` commands, run in-process through ``main``."""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from w2v.cli import main
from w2v.vectors import Vectors

FIXTURES = Path(__file__).parent / "fixtures"
ROYAL = Vectors(
    ["man", "woman", "king", "queen", "prince", "apple"],
    np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 0.2, 1], [0, 0, -1]], dtype=np.float32),
)


def run(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        main(list(argv))
        code = 0
    except SystemExit as exit:
        code = exit.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """A folder holding ``vectors.bin`` (the file ``w2v train`` writes by default)."""
    monkeypatch.chdir(tmp_path)
    ROYAL.save(tmp_path / "vectors.bin")
    return tmp_path


def test_analogy_default_vectors(in_tmp, capsys):
    code, out, err = run(capsys, "analogy", "king", "man", "woman", "-n", "2")
    assert (code, err) == (0, "")
    assert out == "queen\t0.9586\nprince\t0.3415\n"


def test_analogy_cosmul(in_tmp, capsys):
    code, out, _ = run(capsys, "analogy", "king", "man", "woman", "-n", "1", "--method", "cosmul")
    assert (code, out) == (0, "queen\t1.2803\n")


def test_analogy_unknown_word(in_tmp, capsys):
    code, out, err = run(capsys, "analogy", "kings", "man", "woman")
    assert code == 1 and out == ""
    assert err == "w2v: error: word not in vocabulary: 'kings' (did you mean: king?)\n"


def test_analogy_wrong_word_count(in_tmp, capsys):
    code, _, err = run(capsys, "analogy", "king", "man")
    assert code == 2 and err.startswith("w2v: error: give three words") and err.count("\n") == 1


def test_analogy_stdin(in_tmp, capsys, monkeypatch):
    stdin = "king man woman\n\nfoo man woman\nking man\nqueen woman man\n"
    code, out, err = run(capsys, "analogy", "-n", "1", stdin=stdin, monkeypatch=monkeypatch)
    assert out == "# king - man + woman\nqueen\t0.9586\n\n# queen - woman + man\nking\t0.9586\n\n"
    assert err.splitlines() == [
        "w2v: error: word not in vocabulary: 'foo'",
        "w2v: error: need three words A B C, got 2: king man",
        "w2v: error: 2 of 4 analogies could not be answered",
    ]
    assert code == 1
    code, _, err = run(capsys, "analogy", stdin="king man woman\n", monkeypatch=monkeypatch)
    assert (code, err) == (0, "")


def test_similar(in_tmp, capsys):
    code, out, _ = run(capsys, "similar", "king", "-n", "2")
    assert code == 0 and out == "prince\t0.9901\nman\t0.7071\n"
    code, out, _ = run(capsys, "similar", "king", "woman", "--minus", "man", "-n", "1")
    assert code == 0 and out == "queen\t0.9586\n"
    code, _, err = run(capsys, "similar")
    assert code == 2 and "give at least one word" in err


def test_missing_default_vectors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "similar", "king")
    assert code == 1 and "vectors file not found: vectors.bin (train one with 'w2v train CORPUS'" in err


def test_damaged_vectors_file(tmp_path, capsys):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"2 3\nking 1 2 3\nqueen 1 x 3\n")
    code, _, err = run(capsys, "similar", "king", "-v", str(path))
    assert code == 1 and err == f"w2v: error: {path}: record 2 (line 3): not a number: 'x'\n"


def test_limit_and_format(in_tmp, capsys):
    code, out, _ = run(capsys, "similar", "man", "--limit", "3", "-n", "5", "--format", "binary")
    assert code == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["king", "woman"]


def test_eval_text_and_json(tmp_path, capsys):
    from test_evaluate import MATRIX, WORDS

    Vectors(WORDS, MATRIX).save(tmp_path / "v.txt")
    args = ["eval", "-v", str(tmp_path / "v.txt"), "--analogies", str(FIXTURES / "analogies.txt")]
    args += ["--similarity", str(FIXTURES / "pairs.tsv")]
    code, out, err = run(capsys, *args)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].endswith(
        "analogy accuracy 83.33% (5/6); 7 questions, 1 skipped (a word outside the 30,000 most frequent), "
        "1 invalid line"
    )
    assert lines[1].split() == ["gender", "100.00%", "(3/3)"]
    assert lines[2].split() == ["capitals", "66.67%", "(2/3)"]
    assert lines[3].endswith("Spearman 0.2052 (Pearson 0.8931) on 5 pairs, 1 missing, 1 invalid line")
    code, out, _ = run(capsys, *args, "--json", "--restrict", "12")
    result = json.loads(out)
    assert code == 0
    assert result["analogies"][0]["correct"] == 3 and result["analogies"][0]["skipped"] == 4
    assert result["similarity"][0]["spearman"] == pytest.approx(0.2051956704, abs=1e-9)


def test_eval_without_sets_scores_the_shipped_ones(in_tmp, capsys):
    from w2v.evaluate import DEFAULT_ANALOGIES, DEFAULT_SIMILARITY

    code, out, err = run(capsys, "eval", "--json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    [analogies], [pairs] = result["analogies"], result["similarity"]
    assert (analogies["path"], analogies["questions"], len(analogies["sections"])) == (DEFAULT_ANALOGIES, 19544, 14)
    assert (pairs["path"], pairs["pairs"] + pairs["missing"], pairs["invalid"]) == (DEFAULT_SIMILARITY, 353, 0)
    code, out, _ = run(capsys, "eval", "--similarity", str(FIXTURES / "pairs.tsv"), "--json")
    assert code == 0 and json.loads(out)["analogies"] == []  # one set given: only that one


def test_eval_missing_file(in_tmp, capsys):
    code, _, err = run(capsys, "eval", "--analogies", "nope.txt")
    assert code == 1 and err == "w2v: error: evaluation file not found: nope.txt\n"


def test_convert_roundtrip(in_tmp, capsys):
    code, _, err = run(capsys, "convert", "vectors.bin", "v.txt")
    assert code == 0 and "wrote 6 vectors of 3 values to v.txt (text)" in err
    assert (in_tmp / "v.txt").read_text().startswith("6 3\nman 1 0 0\n")
    code, _, _ = run(capsys, "convert", "v.txt", "again.bin")
    assert code == 0 and (in_tmp / "again.bin").read_bytes() == (in_tmp / "vectors.bin").read_bytes()
    code, _, err = run(capsys, "convert", "vectors.bin", "m.npy", "--limit", "4")
    assert code == 0 and "m.vocab.txt" in err
    assert np.load(in_tmp / "m.npy").shape == (4, 3)
    assert (in_tmp / "m.vocab.txt").read_text() == "man\nwoman\nking\nqueen\n"
    code, _, _ = run(capsys, "convert", "m.npy", "back.txt", "-q")
    assert code == 0 and Vectors.load(in_tmp / "back.txt").words == ROYAL.words[:4]
    code, _, _ = run(capsys, "convert", "vectors.bin", "t.vec", "--to", "binary")
    assert code == 0 and (in_tmp / "t.vec").read_bytes() == (in_tmp / "vectors.bin").read_bytes()


def test_broken_pipe_is_quiet(tmp_path):
    """``w2v similar ... | head -1`` ends without a traceback."""
    words = [f"w{i}" for i in range(20000)]
    matrix = np.random.default_rng(0).standard_normal((20000, 2)).astype(np.float32)
    Vectors(words, matrix).save(tmp_path / "v.bin")
    root = Path(__file__).resolve().parents[1]
    w2v = subprocess.Popen(
        [sys.executable, "-m", "w2v", "similar", "w1", "-n", "20000", "-v", str(tmp_path / "v.bin")],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert w2v.stdout.readline()
    w2v.stdout.close()
    _, err = w2v.communicate(timeout=120)
    assert b"Traceback" not in err and w2v.returncode == 0


def test_convert_to_projector_tsv(tmp_path, capsys):
    words = ["king", "queen", "caf\udce9"]  # the last: a word whose bytes are not UTF-8
    matrix = np.array([[1.5, -2.0, 0.25, 1e-7], [0, 1, 2, 3], [-1, -1, -1, 123456789]], dtype=np.float32)
    Vectors(words, matrix).save(tmp_path / "v.bin")
    code, _, err = run(capsys, "convert", str(tmp_path / "v.bin"), str(tmp_path / "emb"), "--to", "projector")
    vectors_tsv, metadata_tsv = tmp_path / "emb_vectors.tsv", tmp_path / "emb_metadata.tsv"
    assert code == 0 and err == f"w2v: wrote 3 vectors of 4 values to {vectors_tsv} and {metadata_tsv} (projector)\n"
    loaded = np.loadtxt(vectors_tsv, delimiter="\t", dtype=np.float32)
    assert loaded.shape == (3, 4)
    np.testing.assert_allclose(loaded, matrix, rtol=1e-5)
    assert all(line.count(b"\t") == 3 for line in vectors_tsv.read_bytes().splitlines())
    assert metadata_tsv.read_bytes() == b"king\nqueen\ncaf\xe9\n"  # one column: no header row


def test_convert_to_projector_checks_both_outputs_first(tmp_path, capsys):
    Vectors(["a", "b"], np.eye(2, dtype=np.float32)).save(tmp_path / "v.bin")
    (tmp_path / "emb_metadata.tsv").mkdir()
    code, _, err = run(capsys, "convert", str(tmp_path / "v.bin"), str(tmp_path / "emb"), "--to", "projector")
    assert (code, err) == (1, f"w2v: error: output path is a folder: {tmp_path / 'emb_metadata.tsv'}\n")
    assert not (tmp_path / "emb_vectors.tsv").exists()
