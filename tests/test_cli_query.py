"""The ``w2v analogy / similar / eval / convert`` commands, run in-process through ``main``."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import Stdin
from reference import fasttext_bin

from w2v.vectorio.word2vec import text_records
from w2v.vectors.wordvectors import Vectors

FIXTURES = Path(__file__).parent / "fixtures"
ROYAL = Vectors(
    ["man", "woman", "king", "queen", "prince", "apple"],
    np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 0.2, 1], [0, 0, -1]], dtype=np.float32),
)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """A folder holding ``vectors.bin`` (the file ``w2v train`` writes by default)."""
    monkeypatch.chdir(tmp_path)
    ROYAL.save(tmp_path / "vectors.bin")
    return tmp_path


def test_analogy_default_vectors(in_tmp, run_w2v):
    code, out, err = run_w2v("analogy", "king", "man", "woman", "-n", "2")
    assert (code, err) == (0, "")
    assert out == "queen\t0.9586\nprince\t0.3415\n"


def test_analogy_cosmul(in_tmp, run_w2v):
    code, out, _ = run_w2v("analogy", "king", "man", "woman", "-n", "1", "--method", "cosmul")
    assert (code, out) == (0, "queen\t1.2803\n")


def test_analogy_unknown_word(in_tmp, run_w2v):
    code, out, err = run_w2v("analogy", "kings", "man", "woman")
    assert code == 1 and out == ""
    assert err == "w2v: error: word not in vocabulary: 'kings' (did you mean: king?)\n"


def test_analogy_wrong_word_count(in_tmp, run_w2v):
    code, _, err = run_w2v("analogy", "king", "man")
    assert code == 2 and err.startswith("w2v: error: give three words") and err.count("\n") == 1


def test_analogy_stdin(in_tmp, run_w2v):
    stdin = "king man woman\n\nfoo man woman\nking man\nqueen woman man\n"
    code, out, err = run_w2v("analogy", "-n", "1", stdin=stdin)
    assert out == "queen\t0.9586\n\nking\t0.9586\n\n"  # no '#' lines unless asked
    assert err.splitlines() == [
        "w2v: error: word not in vocabulary: 'foo'",
        "w2v: error: need three words A B C, got 2: king man",
        "w2v: error: 2 of 4 analogies could not be answered",
    ]
    assert code == 1
    code, _, err = run_w2v("analogy", stdin="king man woman\n")
    assert (code, err) == (0, "")
    code, out, _ = run_w2v("analogy", "-n", "1", "--headers", stdin=stdin)
    assert out == "# king - man + woman\nqueen\t0.9586\n\n# queen - woman + man\nking\t0.9586\n\n"


def test_similar(in_tmp, run_w2v):
    code, out, _ = run_w2v("similar", "king", "-n", "2")
    assert code == 0 and out == "prince\t0.9901\nman\t0.7071\n"
    code, out, _ = run_w2v("similar", "king", "woman", "--minus", "man", "-n", "1")
    assert code == 0 and out == "queen\t0.9586\n"


def test_similar_stdin(in_tmp, run_w2v):
    """``echo king | w2v similar``: each line is a query (its words' mean), answers
    separated by a blank line; ``--headers`` adds a '# query' line."""
    code, out, err = run_w2v("similar", "-n", "1", stdin="king\n")
    assert (code, out, err) == (0, "prince\t0.9901\n\n", "")
    stdin = "king\n\nkings\nking woman\n"
    code, out, err = run_w2v("similar", "-n", "1", "--headers", stdin=stdin)
    assert out == "# king\nprince\t0.9901\n\n# king + woman\nqueen\t0.8536\n\n"
    assert err.splitlines() == [
        "w2v: error: word not in vocabulary: 'kings' (did you mean: king?)",
        "w2v: error: 1 of 3 queries could not be answered",
    ]
    assert code == 1
    args = ("similar", "-n", "1", "--minus", "man", "--headers")
    code, out, _ = run_w2v(*args, stdin="king woman\n")
    assert (code, out) == (0, "# king + woman - man\nqueen\t0.9586\n\n")
    code, out, err = run_w2v("similar", stdin="")
    assert (code, out, err) == (0, "", "")


def test_similar_interactive(in_tmp, monkeypatch, run_w2v):
    """On a terminal: distance.c's prompt on stderr before each line, EXIT stops, and a
    failed query does not fail the session."""
    monkeypatch.setattr(sys, "stdin", Stdin("king\nfoo\nEXIT\nqueen\n", terminal=True))
    code, out, err = run_w2v("similar", "-n", "1")
    assert (code, out) == (0, "prince\t0.9901\n\n")
    prompt = "Enter word or sentence (EXIT to break): "
    assert err == prompt * 2 + "w2v: error: word not in vocabulary: 'foo'\n" + prompt


def test_vector(in_tmp, run_w2v):
    """``w2v vector WORD...``: fastText's print-word-vectors lines, values as the text
    format's; an unknown word is one error line, the other words are printed."""
    code, out, err = run_w2v("vector", "king", "apple")
    assert (code, out, err) == (0, "king 1 0 1\napple 0 0 -1\n", "")
    code, out, err = run_w2v("vector", stdin="man\nqueen prince\nfoo man\n")
    assert out == "man 1 0 0\nqueen 0 1 1\nprince 1 0.2 1\nman 1 0 0\n"
    assert err.splitlines() == [
        "w2v: error: word not in vocabulary: 'foo'",
        "w2v: error: 1 of 5 words could not be answered",
    ]
    assert code == 1
    code, out, err = run_w2v("vector", "king", "kingz", "queen")
    assert (code, out) == (1, "king 1 0 1\nqueen 0 1 1\n")
    assert err == "w2v: error: word not in vocabulary: 'kingz' (did you mean: king?)\n"


def test_similarity(in_tmp, run_w2v):
    """``w2v similarity A B`` prints the cosine; from stdin, 'A<tab>B<tab>cosine' lines."""
    code, out, err = run_w2v("similarity", "king", "prince")
    assert (code, out, err) == (0, "0.9901\n", "")
    code, out, err = run_w2v("similarity", stdin="king queen\nman\nman apple\n")
    assert out == "king\tqueen\t0.5000\nman\tapple\t0.0000\n"
    assert err.splitlines() == [
        "w2v: error: need two words A B, got 1: man",
        "w2v: error: 1 of 3 pairs could not be answered",
    ]
    code, _, err = run_w2v("similarity", "king")
    assert code == 2 and err.startswith("w2v: error: give two words A B, not 1")


def test_missing_default_vectors(tmp_path, monkeypatch, run_w2v):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_w2v("similar", "king")
    assert code == 1 and "vectors file not found: vectors.bin (train one with 'w2v train CORPUS'" in err


def test_damaged_vectors_file(tmp_path, run_w2v):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"2 3\nking 1 2 3\nqueen 1 x 3\n")
    code, _, err = run_w2v("similar", "king", "-v", str(path))
    assert code == 1 and err == f"w2v: error: {path}: record 2 (line 3): not a number: 'x'\n"


def test_limit_and_format(in_tmp, run_w2v):
    code, out, _ = run_w2v("similar", "man", "--limit", "3", "-n", "5", "--format", "binary")
    assert code == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["king", "woman"]


def test_eval_text_and_json(tmp_path, run_w2v):
    from test_evaluate import MATRIX, WORDS

    Vectors(WORDS, MATRIX).save(tmp_path / "v.txt")
    args = ["eval", "-v", str(tmp_path / "v.txt"), "--analogies", str(FIXTURES / "analogies.txt")]
    args += ["--similarity", str(FIXTURES / "pairs.tsv")]
    code, out, err = run_w2v(*args)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].endswith(
        "analogy accuracy 83.33% (5/6); 7 questions, 1 skipped (a word outside the 17 most frequent), 1 invalid line"
    )
    assert lines[1].split() == ["gender", "100.00%", "(3/3)"]
    assert lines[2].split() == ["capitals", "66.67%", "(2/3)"]
    assert lines[3].endswith("Spearman 0.2052 (Pearson 0.8931) on 5 pairs, 1 missing, 1 invalid line")
    code, out, _ = run_w2v(*args, "--json", "--restrict", "12")
    result = json.loads(out)
    assert code == 0
    assert result["analogies"][0]["correct"] == 3 and result["analogies"][0]["skipped"] == 4
    assert result["similarity"][0]["spearman"] == pytest.approx(0.2051956704, abs=1e-9)


def test_eval_without_sets_scores_the_shipped_ones(in_tmp, run_w2v):
    from w2v.vectors.evaluate import DEFAULT_ANALOGIES, DEFAULT_SIMILARITY

    code, out, err = run_w2v("eval", "--json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    [analogies], [pairs] = result["analogies"], result["similarity"]
    assert (analogies["path"], analogies["questions"], len(analogies["sections"])) == (DEFAULT_ANALOGIES, 19544, 14)
    assert (pairs["path"], pairs["pairs"] + pairs["missing"], pairs["invalid"]) == (DEFAULT_SIMILARITY, 353, 0)
    code, out, _ = run_w2v("eval", "--similarity", str(FIXTURES / "pairs.tsv"), "--json")
    assert code == 0 and json.loads(out)["analogies"] == []  # one set given: only that one


def test_eval_missing_file(in_tmp, run_w2v):
    code, _, err = run_w2v("eval", "--analogies", "nope.txt")
    assert code == 1 and err == "w2v: error: evaluation file not found: nope.txt\n"


def test_convert_roundtrip(in_tmp, run_w2v):
    code, _, err = run_w2v("convert", "vectors.bin", "v.txt")
    assert code == 0 and "wrote 6 vectors of 3 values to v.txt (text)" in err
    assert (in_tmp / "v.txt").read_text().startswith("6 3\nman 1 0 0\n")
    code, _, _ = run_w2v("convert", "v.txt", "again.bin")
    assert code == 0 and (in_tmp / "again.bin").read_bytes() == (in_tmp / "vectors.bin").read_bytes()
    code, _, err = run_w2v("convert", "vectors.bin", "m.npy", "--limit", "4")
    assert code == 0 and "m.vocab.txt" in err
    assert np.load(in_tmp / "m.npy").shape == (4, 3)
    assert (in_tmp / "m.vocab.txt").read_text() == "man\nwoman\nking\nqueen\n"
    code, _, _ = run_w2v("convert", "m.npy", "back.txt", "-q")
    assert code == 0 and Vectors.load(in_tmp / "back.txt").words == ROYAL.words[:4]
    code, _, _ = run_w2v("convert", "vectors.bin", "t.vec", "--to", "binary")
    assert code == 0 and (in_tmp / "t.vec").read_bytes() == (in_tmp / "vectors.bin").read_bytes()


TITLE = "\x1b]0;pwned\x07"  # an escape sequence that sets a terminal's title
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # control characters but tab and newline


def test_control_characters_in_words_are_printed_escaped(tmp_path, monkeypatch, run_w2v):
    """Words from a vectors file (here an .npy export, whose words may hold any byte but a
    newline) or from stdin are printed with C0, DEL and C1 control characters as \\xHH."""
    monkeypatch.chdir(tmp_path)
    hostile = [f"x{TITLE}", "c1\x9b31m", "tab\tword", "del\x7f"]
    Vectors(ROYAL.words + hostile, np.vstack([ROYAL.vectors, np.ones((4, 3), np.float32)])).save_npy("v.npy")
    (tmp_path / "q.txt").write_text(f": sec{TITLE}\nking man woman queen\n")
    runs = {
        "similar": run_w2v("similar", "king", "-n", "10", "-v", "v.npy"),
        "analogy": run_w2v("analogy", "king", "man", "woman", "-n", "10", "-v", "v.npy"),
        "stdin": run_w2v("analogy", "-v", "v.npy", "--headers", stdin=f"{hostile[0]} king man\n"),
        "unknown": run_w2v("similar", f"x{TITLE}y", "-v", "v.npy"),  # suggests x{TITLE}
        "eval": run_w2v("eval", "-v", "v.npy", "--analogies", "q.txt"),
    }
    for name, (_code, out, err) in runs.items():
        assert not UNPRINTABLE.search(out + err), (name, out, err)
    escaped = ["x\\x1b]0;pwned\\x07", "c1\\x9b31m", "tab\\x09word", "del\\x7f"]
    assert set(escaped) <= {line.split("\t")[0] for line in runs["similar"][1].splitlines()}
    assert runs["stdin"][1].startswith(f"# {escaped[0]} - king + man\n")
    assert "did you mean: x\\x1b]0;pwned\\x07" in runs["unknown"][2]
    assert "sec\\x1b]0;pwned\\x07" in runs["eval"][1]


CLOSED_PIPE_COMMANDS = {  # -q: no progress lines on stderr, which must stay empty
    "vocab": ["vocab", "corpus.txt", "-o", "vocab.txt", "-q"],
    "similar": ["similar", "king", "-v", "v.bin"],
    "analogy": ["analogy", "king", "man", "woman", "-v", "v.bin"],
    "analogy stdin": ["analogy", "-v", "v.bin"],
    "eval": ["eval", "-v", "v.bin", "--analogies", "q.txt"],
    "convert to stdout": ["convert", "v.bin", "-", "--to", "text"],
    "phrases to stdout": ["phrases", "corpus.txt", "-o", "-", "-q"],
    "help": ["--help"],
    "version": ["--version"],
}


def run_buffered(argv: list[str], cwd: Path, **popen) -> subprocess.Popen:
    """``python -m w2v ARGV`` with its standard output buffered as it is by default
    (PYTHONUNBUFFERED makes a write to a closed pipe lose its data without an error)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.Popen([sys.executable, "-m", "w2v", *argv], cwd=cwd, env=env, stderr=subprocess.PIPE, **popen)


@pytest.mark.slow
@pytest.mark.parametrize("command", CLOSED_PIPE_COMMANDS)
def test_a_closed_pipe_ends_every_command_quietly(tmp_path, tiny_corpus, command):
    """Output into a pipe nobody reads any more (its reader gone before the first write, so
    that every write fails): no message, exit 141 as a Unix tool killed by SIGPIPE."""
    (tmp_path / "corpus.txt").write_bytes(tiny_corpus.read_bytes())
    (tmp_path / "q.txt").write_text(": royals\nking man woman queen\n")
    ROYAL.save(tmp_path / "v.bin")
    read_end, write_end = os.pipe()
    os.close(read_end)
    w2v = run_buffered(CLOSED_PIPE_COMMANDS[command], tmp_path, stdout=write_end, stdin=subprocess.PIPE)
    os.close(write_end)
    _, err = w2v.communicate(b"king man woman\n" * 3, timeout=300)
    assert (w2v.returncode, err.decode()) == (141, "")


@pytest.mark.slow
def test_a_pipe_closed_after_the_first_line(tmp_path):
    """``w2v similar ... | head -1``: the reader takes one line and goes; the rest (far more
    than a pipe holds) fails to be written, quietly."""
    words = [f"w{i}" for i in range(20000)]
    matrix = np.random.default_rng(0).standard_normal((20000, 2)).astype(np.float32)
    Vectors(words, matrix).save(tmp_path / "v.bin")
    w2v = run_buffered(["similar", "w1", "-n", "20000", "-v", "v.bin"], tmp_path, stdout=subprocess.PIPE)
    assert w2v.stdout.readline()
    w2v.stdout.close()
    _, err = w2v.communicate(timeout=120)
    assert (w2v.returncode, err.decode()) == (141, "")


def test_convert_to_projector_tsv(tmp_path, run_w2v):
    words = ["king", "queen", "caf\udce9"]  # the last: a word whose bytes are not UTF-8
    matrix = np.array([[1.5, -2.0, 0.25, 1e-7], [0, 1, 2, 3], [-1, -1, -1, 123456789]], dtype=np.float32)
    Vectors(words, matrix).save(tmp_path / "v.bin")
    code, _, err = run_w2v("convert", str(tmp_path / "v.bin"), str(tmp_path / "emb"), "--to", "projector")
    vectors_tsv, metadata_tsv = tmp_path / "emb_vectors.tsv", tmp_path / "emb_metadata.tsv"
    assert code == 0 and err == f"w2v: wrote 3 vectors of 4 values to {vectors_tsv} and {metadata_tsv} (projector)\n"
    loaded = np.loadtxt(vectors_tsv, delimiter="\t", dtype=np.float32)
    assert loaded.shape == (3, 4)
    np.testing.assert_allclose(loaded, matrix, rtol=1e-5)
    assert all(line.count(b"\t") == 3 for line in vectors_tsv.read_bytes().splitlines())
    assert metadata_tsv.read_bytes() == b"king\nqueen\ncaf\xe9\n"  # one column: no header row


def test_convert_to_projector_checks_both_outputs_first(tmp_path, run_w2v):
    Vectors(["a", "b"], np.eye(2, dtype=np.float32)).save(tmp_path / "v.bin")
    (tmp_path / "emb_metadata.tsv").mkdir()
    code, _, err = run_w2v("convert", str(tmp_path / "v.bin"), str(tmp_path / "emb"), "--to", "projector")
    assert (code, err) == (1, f"w2v: error: output path is a folder: {tmp_path / 'emb_metadata.tsv'}\n")
    assert not (tmp_path / "emb_vectors.tsv").exists()


# --- subword models: words outside the vocabulary built from their n-grams ----------------

SUBWORD_NOTE = "w2v: note: 'kingdomz' is not in the vocabulary: built from 26 character n-grams\n"


@pytest.fixture
def subword_model(tmp_path, monkeypatch):
    """A fastText ``.bin`` of ROYAL's words (minn 3, maxn 6), and one whose n-grams
    are 4 to 6 characters (``a`` has none), in the current folder."""
    monkeypatch.chdir(tmp_path)
    rows = np.random.default_rng(5).standard_normal((len(ROYAL.words) + 50, 4))
    words = [w.encode() for w in ROYAL.words]
    Path("ft.bin").write_bytes(fasttext_bin(words, dim=4, bucket=50, values=rows))
    Path("long.bin").write_bytes(fasttext_bin(words, dim=4, bucket=50, minn=4, values=rows))
    return Vectors.load("ft.bin")


def test_vector_builds_unseen_words(subword_model, run_w2v):
    """The issue's case: ``w2v vector king kingdomz queen`` printed nothing; now every
    word is printed, the unseen one built from its n-grams, with one note."""
    code, out, err = run_w2v("vector", "king", "kingdomz", "queen", "kingdomz", "-v", "ft.bin")
    words = ["king", "kingdomz", "queen", "kingdomz"]
    assert (code, err) == (0, SUBWORD_NOTE)  # once, though asked twice
    assert out.encode() == text_records([w.encode() for w in words], subword_model[words])


def test_vector_gives_a_word_without_ngrams_the_zero_vector(subword_model, run_w2v):
    code, out, err = run_w2v("vector", "a", "king", "-v", "long.bin")
    assert code == 0 and out.splitlines()[0] == "a 0 0 0 0"
    assert err == (
        "w2v: note: 'a' is not in the vocabulary and has no character n-gram of 4 to 6 characters: "
        "its vector is zero, as fastText gives it\n"
    )


def test_queries_build_unseen_words(subword_model, run_w2v):
    code, out, err = run_w2v("similar", "kingdomz", "-n", "2", "-v", "ft.bin")
    assert (code, err) == (0, SUBWORD_NOTE)
    assert out == "".join(f"{w}\t{s:.4f}\n" for w, s in subword_model.most_similar("kingdomz", topn=2))
    code, out, err = run_w2v("similarity", "kingdomz", "king", "-v", "ft.bin")
    assert (code, err, out) == (0, SUBWORD_NOTE, f"{subword_model.similarity('kingdomz', 'king'):.4f}\n")
    code, out, err = run_w2v("analogy", "king", "man", "kingdomz", "-n", "1", "-v", "ft.bin")
    assert (code, err) == (0, SUBWORD_NOTE)
    assert out == "".join(f"{w}\t{s:.4f}\n" for w, s in subword_model.analogy("king", "man", "kingdomz", topn=1))


NO_NGRAM = (
    "w2v: error: word not in vocabulary: 'a', nor has it a character n-gram of 4 to 6 characters to build a vector from"
)


def test_a_word_without_ngrams_fails_its_query_alone(subword_model, run_w2v):
    code, out, err = run_w2v("similar", "a", "-v", "long.bin")
    assert (code, out, err) == (1, "", NO_NGRAM + "\n")
    stdin = "kingdomz\na\nkingdomz king\n"
    code, out, err = run_w2v("similar", "-n", "1", "-v", "long.bin", stdin=stdin)
    assert code == 1 and out.count("\n\n") == 2
    assert err.splitlines() == [
        "w2v: note: 'kingdomz' is not in the vocabulary: built from 18 character n-grams",  # 4 to 6 characters
        NO_NGRAM,
        "w2v: error: 1 of 3 queries could not be answered",
    ]


def test_eval_scores_known_words_only(subword_model, run_w2v):
    """As gensim's: a pair with a word outside the vocabulary is missing, not built."""
    pairs = Path("pairs.txt")
    pairs.write_text("king\tqueen\t8\nman\twoman\t7\nking\tapple\t1\nkingdomz\tking\t9\n")
    code, out, err = run_w2v("eval", "ft.bin", "--similarity", str(pairs), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["similarity"][0]["missing"] == 1


def test_vector_refuses_an_empty_word_or_one_holding_whitespace(subword_model, run_w2v):
    """A subword model built them ('' from no n-gram, 'a<tab>b' from its own): their lines
    began with a space (no word) or held a raw tab (two fields for one word)."""
    code, out, err = run_w2v("vector", "king", "", "a\tb", "-v", "ft.bin")
    assert (code, out) == (1, text_records([b"king"], subword_model[["king"]]).decode())
    assert err.splitlines() == [
        "w2v: error: '' is not a word: it is empty; no 'word v1 ... vD' line can hold it",
        "w2v: error: 'a\\x09b' is not a word: whitespace ends a word; no 'word v1 ... vD' line can hold it",
    ]


@pytest.fixture
def vectors_txt(subword_model):
    """ROYAL's words and 'Zürich' (NFC), as word2vec text in the current folder."""
    words = [*ROYAL.words, "Z\u00fcrich"]
    Vectors(words, np.eye(len(words), 3, dtype=np.float32)).save("vectors.txt")


def test_a_long_unknown_word_is_quoted_cut(vectors_txt, run_w2v):
    """The note and the error echoed every one of its 100,000 characters."""
    word = "k" * 100_000
    shown = f"'{'k' * 60}...' (100,000 characters)"
    code, _, err = run_w2v("vector", word, "-v", "ft.bin")
    assert code == 0 and err.startswith(f"w2v: note: {shown} is not in the vocabulary: built from ")
    code, _, err = run_w2v("similar", word, "-v", "vectors.txt")
    assert (code, err) == (1, f"w2v: error: word not in vocabulary: {shown}\n")


def test_a_query_in_another_unicode_normalisation_shows_the_code_points(vectors_txt, run_w2v):
    """'Zu' + U+0308 (NFD) for the vocabulary's 'Zürich' (NFC): both printed 'Zürich'."""
    code, out, err = run_w2v("vector", "Zu\u0308rich", "-v", "vectors.txt")
    assert (code, out) == (1, "")
    assert err == (
        "w2v: error: word not in vocabulary: 'Zu\\u0308rich' (did you mean: Z\\u00fcrich? "
        "the same text in other Unicode code points, NFC or NFD)\n"
    )
