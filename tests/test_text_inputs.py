"""The text files and streams w2v reads besides a corpus (vocabularies, vectors files,
evaluation sets, query words on stdin, presets, phrase tables, word lists) read as a
corpus is: compressed as their names say, a UTF-8 byte-order mark at the start
skipped, words split at ASCII whitespace alone."""

import bz2
import gzip
import itertools
import json
import lzma
from pathlib import Path

import numpy as np
import pytest
from reference import read_word2vec
from test_cli_train import FAST, train_ok

from w2v.cli.tools import read_word_list
from w2v.config import load_preset
from w2v.corpus.parts import Part
from w2v.corpus.phrases import PhraseTable
from w2v.corpus.sources import read_chunks
from w2v.files import zstd
from w2v.vectors.wordvectors import Vectors

FIXTURES = Path(__file__).parent / "fixtures"
BOM = b"\xef\xbb\xbf"
# words a corpus holds whole (only ASCII whitespace ends a word) that str.split() and
# str.splitlines() would cut: NBSP, ideographic space, line separator, NEL, file separator
UNICODE_SPACED = ["a\u00a0b", "x\u3000y", "p\u2028q", "r\u0085s", "t\u001cu"]
COMPRESSORS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstd().compress(data),
}


@pytest.fixture
def eval_vectors(tmp_path) -> Path:
    from test_evaluate import MATRIX, WORDS

    Vectors(WORDS, MATRIX).save(tmp_path / "v.txt")
    return tmp_path / "v.txt"


def eval_lines(run_w2v, vectors: Path, analogies: Path, pairs: Path) -> list[str]:
    """``w2v eval``'s lines for the two sets, each without the set's path."""
    code, out, err = run_w2v("eval", "-v", vectors, "--analogies", analogies, "--similarity", pairs)
    assert (code, err) == (0, "")
    return [line.replace(str(analogies), "A").replace(str(pairs), "P") for line in out.splitlines()]


@pytest.mark.parametrize("extension", list(COMPRESSORS))
def test_eval_reads_compressed_sets(eval_vectors, tmp_path, run_w2v, extension):
    """``--analogies q.txt.gz``: decompressed as a corpus is, not read as text (which
    found no question in the gzip bytes, or 1,748 invalid lines and junk sections)."""
    expected = eval_lines(run_w2v, eval_vectors, FIXTURES / "analogies.txt", FIXTURES / "pairs.tsv")
    assert expected[0].endswith("analogy accuracy 83.33% (5/6); 7 questions, 1 skipped (a word outside the "
                                "17 most frequent), 1 invalid line")  # fmt: skip
    packed = []
    for name in ("analogies.txt", "pairs.tsv"):
        path = tmp_path / (name + extension)
        path.write_bytes(COMPRESSORS[extension]((FIXTURES / name).read_bytes()))
        packed.append(path)
    assert eval_lines(run_w2v, eval_vectors, *packed) == expected


def test_a_byte_order_mark_starts_no_line_of_an_evaluation_set(eval_vectors, tmp_path, run_w2v):
    """Before: the first line read '\\ufeff: gender', two words, an invalid line, and the
    header row of a pair file became a pair to skip."""
    expected = eval_lines(run_w2v, eval_vectors, FIXTURES / "analogies.txt", FIXTURES / "pairs.tsv")
    marked = []
    for name in ("analogies.txt", "pairs.tsv"):
        (tmp_path / name).write_bytes(BOM + (FIXTURES / name).read_bytes())
        marked.append(tmp_path / name)
    assert eval_lines(run_w2v, eval_vectors, *marked) == expected


@pytest.fixture
def spaced_vectors(tmp_path) -> Path:
    """A text vectors file whose words hold Unicode spaces, and their first letters."""
    words = [*UNICODE_SPACED, "a", "b", "x", "y"]
    matrix = np.arange(len(words) * 2, dtype=np.float32).reshape(-1, 2) + 1
    Vectors(words, matrix).save(tmp_path / "v.txt")
    return tmp_path / "v.txt"


def test_query_words_on_stdin_are_split_at_ascii_whitespace_only(spaced_vectors, run_w2v):
    """Before: 'a\\u00a0b' on stdin asked for 'a' and 'b', and 'x\\u3000y y' answered
    for 'x' first; a word holding U+2028 or U+0085 could not be asked for at all."""
    stdin = "\n".join(UNICODE_SPACED) + "\nx\u3000y\ty\n"
    code, out, err = run_w2v("vector", "-v", spaced_vectors, stdin=stdin)
    assert (code, err) == (0, "")
    assert [line.rsplit(" ", 2)[0] for line in out.split("\n")[:-1]] == [*UNICODE_SPACED, "x\u3000y", "y"]
    code, out, err = run_w2v("similarity", "-v", spaced_vectors, stdin="a\u00a0b x\u3000y\n")
    assert (code, err) == (0, "") and out.startswith("a\u00a0b\tx\u3000y\t")
    code, out, err = run_w2v("distance", spaced_vectors, stdin="p\u2028q\nEXIT\n")
    assert (code, err) == (0, "") and "Word: p\u2028q  Position in vocabulary: 2\n" in out


def test_evaluation_sets_split_words_at_ascii_whitespace_only(spaced_vectors, tmp_path, run_w2v):
    """Before: each line below was one invalid line (str.split found 8 words or 2 lines)."""
    analogies = tmp_path / "q.txt"
    analogies.write_text(": spaced\n" + " ".join(UNICODE_SPACED[:4]) + "\n" + " ".join(UNICODE_SPACED[1:]) + "\n")
    pairs = tmp_path / "p.txt"
    pairs.write_text("".join(f"{a} {b} {i}\n" for i, (a, b) in enumerate(itertools.pairwise(UNICODE_SPACED))))
    argv = ["eval", "-v", spaced_vectors, "--analogies", analogies, "--similarity", pairs, "--json"]
    code, out, err = run_w2v(*argv)
    assert (code, err) == (0, "")
    result = json.loads(out)
    [questions], [scored] = result["analogies"], result["similarity"]
    assert (questions["questions"], questions["invalid"], questions["answered"]) == (2, 0, 2)
    assert (scored["pairs"], scored["missing"], scored["invalid"]) == (4, 0, 0)


def test_a_byte_order_mark_on_stdin_starts_no_query(spaced_vectors, run_w2v):
    code, out, err = run_w2v("vector", "-v", spaced_vectors, stdin=BOM + b"a b\n")
    assert (code, err) == (0, "") and out.startswith("a ") and "\nb " in out


@pytest.mark.parametrize("kind", ["word2vec text", "headerless", "npy"])
def test_a_byte_order_mark_starts_no_vectors_file(tmp_path, kind, run_w2v):
    """Before: 'bad header' for a word2vec file; the first word '\\ufeffking' of a
    headerless file, so 'king' was not in the vocabulary (did you mean: \\ufeffking?)."""
    vectors = Vectors(["king", "queen", "man"], np.eye(3, dtype=np.float32) / 2 + 1)  # not integers: GloVe's
    path = tmp_path / ("v.npy" if kind == "npy" else "v.txt")
    if kind == "npy":
        vectors.save_npy(path)
        marked = tmp_path / "v.vocab.txt"
    else:
        vectors.save(path)
        marked = path
        if kind == "headerless":
            path.write_bytes(path.read_bytes().split(b"\n", 1)[1])
    marked.write_bytes(BOM + marked.read_bytes())
    code, out, err = run_w2v("vector", "-v", path, "king")
    assert (code, out, err) == (0, "king 1.5 1 1\n", "")
    assert Vectors.load(path).words == ["king", "queen", "man"]


@pytest.mark.slow
def test_a_byte_order_mark_starts_no_word_of_a_corpus_or_vocabulary(cli, tiny_corpus, tmp_path):
    """Before: '--read-vocab' took '\\ufeffthe' for a word (and trained no 'the'), and a
    corpus counted '\\ufeffthe' apart from 'the'."""
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    train_ok(cli, tiny_corpus, "-o", plain, *FAST)
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(BOM + tiny_corpus.read_bytes())
    train_ok(cli, corpus, "-o", marked, *FAST)
    assert marked.read_bytes() == plain.read_bytes()
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(BOM + b"the 140\ncat 60\n")
    train_ok(cli, tiny_corpus, "-o", tmp_path / "v.bin", "--read-vocab", vocab, *FAST)
    assert read_word2vec(tmp_path / "v.bin", True)[0] == [b"the", b"cat"]


def test_a_byte_order_mark_is_skipped_in_the_first_part_of_a_file_only(tmp_path):
    """A file cut into parts (a cluster's workers) reads as the whole file does: the mark
    at its start is skipped, one after a newline inside it (files joined) is not."""
    path = tmp_path / "joined.txt"
    path.write_bytes(BOM + b"the cat sat\n" * 50 + BOM + b"the dog\n" + b"a mat\n" * 50)
    whole = b"".join(read_chunks(str(path))).split()
    assert b"".join(read_chunks(str(path), block_bytes=1)).split() == whole  # the mark read whole all the same
    # the first part ends at the newline (byte 602) after its bound, the second starts at the mark after it
    parts = [Part(str(path), 0, 600), Part(str(path), 600, path.stat().st_size)]
    assert b"".join(read_chunks(parts[1])).startswith(BOM + b"the dog\n")
    assert b"".join(chunk for part in parts for chunk in read_chunks(part)).split() == whole
    assert whole[:2] == [b"the", b"cat"] and whole.count(BOM + b"the") == 1


def test_a_byte_order_mark_starts_no_preset_phrase_table_or_word_list(tmp_path):
    """Before: 'invalid TOML in preset', 'not a w2v phrase table', and '\\ufeffking' listed."""
    preset = tmp_path / "p.toml"
    preset.write_bytes(BOM + b"[train]\ndim = 10\n")
    assert load_preset(str(preset), {"dim"}) == {"dim": 10}
    table = tmp_path / "phrases.txt"
    PhraseTable([{(b"new", b"york"): 150.0}]).save(str(table))
    table.write_bytes(BOM + table.read_bytes())
    assert PhraseTable.load(str(table)).apply(["new", "york"]) == ["new_york"]
    words = tmp_path / "words.txt"
    words.write_bytes(BOM + b"king\nqueen\n")
    assert read_word_list(str(words)) == ["king", "queen"]
