"""The text w2v reads besides a corpus (evaluation sets, query words on stdin) read as
a corpus is: compressed as their names say, words split at ASCII whitespace alone."""

import bz2
import gzip
import itertools
import json
import lzma
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import Stdin

from w2v.cli import main
from w2v.files import zstd
from w2v.vectors.wordvectors import Vectors

FIXTURES = Path(__file__).parent / "fixtures"
# words a corpus holds whole (only ASCII whitespace ends a word) that str.split() and
# str.splitlines() would cut: NBSP, ideographic space, line separator, NEL, file separator
UNICODE_SPACED = ["a\u00a0b", "x\u3000y", "p\u2028q", "r\u0085s", "t\u001cu"]
COMPRESSORS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstd().compress(data),
}


def run(capsys, *argv, stdin: str | bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", Stdin(stdin))
    try:
        main([str(arg) for arg in argv])
        code = 0
    except SystemExit as exit:
        code = exit.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def eval_vectors(tmp_path) -> Path:
    from test_evaluate import MATRIX, WORDS

    Vectors(WORDS, MATRIX).save(tmp_path / "v.txt")
    return tmp_path / "v.txt"


def eval_lines(capsys, vectors: Path, analogies: Path, pairs: Path) -> list[str]:
    """``w2v eval``'s lines for the two sets, each without the set's path."""
    code, out, err = run(capsys, "eval", "-v", vectors, "--analogies", analogies, "--similarity", pairs)
    assert (code, err) == (0, "")
    return [line.replace(str(analogies), "A").replace(str(pairs), "P") for line in out.splitlines()]


@pytest.mark.parametrize("extension", list(COMPRESSORS))
def test_eval_reads_compressed_sets(eval_vectors, tmp_path, capsys, extension):
    """``--analogies q.txt.gz``: decompressed as a corpus is, not read as text (which
    found no question in the gzip bytes, or 1,748 invalid lines and junk sections)."""
    expected = eval_lines(capsys, eval_vectors, FIXTURES / "analogies.txt", FIXTURES / "pairs.tsv")
    assert expected[0].endswith("analogy accuracy 83.33% (5/6); 7 questions, 1 skipped (a word outside the "
                                "17 most frequent), 1 invalid line")  # fmt: skip
    packed = []
    for name in ("analogies.txt", "pairs.tsv"):
        path = tmp_path / (name + extension)
        path.write_bytes(COMPRESSORS[extension]((FIXTURES / name).read_bytes()))
        packed.append(path)
    assert eval_lines(capsys, eval_vectors, *packed) == expected


@pytest.fixture
def spaced_vectors(tmp_path) -> Path:
    """A text vectors file whose words hold Unicode spaces, and their first letters."""
    words = [*UNICODE_SPACED, "a", "b", "x", "y"]
    matrix = np.arange(len(words) * 2, dtype=np.float32).reshape(-1, 2) + 1
    Vectors(words, matrix).save(tmp_path / "v.txt")
    return tmp_path / "v.txt"


def test_query_words_on_stdin_are_split_at_ascii_whitespace_only(spaced_vectors, capsys, monkeypatch):
    """Before: 'a\\u00a0b' on stdin asked for 'a' and 'b', and 'x\\u3000y y' answered
    for 'x' first; a word holding U+2028 or U+0085 could not be asked for at all."""
    stdin = "\n".join(UNICODE_SPACED) + "\nx\u3000y\ty\n"
    code, out, err = run(capsys, "vector", "-v", spaced_vectors, stdin=stdin, monkeypatch=monkeypatch)
    assert (code, err) == (0, "")
    assert [line.rsplit(" ", 2)[0] for line in out.split("\n")[:-1]] == [*UNICODE_SPACED, "x\u3000y", "y"]
    code, out, err = run(
        capsys, "similarity", "-v", spaced_vectors, stdin="a\u00a0b x\u3000y\n", monkeypatch=monkeypatch
    )
    assert (code, err) == (0, "") and out.startswith("a\u00a0b\tx\u3000y\t")
    code, out, err = run(capsys, "distance", spaced_vectors, stdin="p\u2028q\nEXIT\n", monkeypatch=monkeypatch)
    assert (code, err) == (0, "") and "Word: p\u2028q  Position in vocabulary: 2\n" in out


def test_evaluation_sets_split_words_at_ascii_whitespace_only(spaced_vectors, tmp_path, capsys):
    """Before: each line below was one invalid line (str.split found 8 words or 2 lines)."""
    analogies = tmp_path / "q.txt"
    analogies.write_text(": spaced\n" + " ".join(UNICODE_SPACED[:4]) + "\n" + " ".join(UNICODE_SPACED[1:]) + "\n")
    pairs = tmp_path / "p.txt"
    pairs.write_text("".join(f"{a} {b} {i}\n" for i, (a, b) in enumerate(itertools.pairwise(UNICODE_SPACED))))
    argv = ["eval", "-v", spaced_vectors, "--analogies", analogies, "--similarity", pairs, "--json"]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    result = json.loads(out)
    [questions], [scored] = result["analogies"], result["similarity"]
    assert (questions["questions"], questions["invalid"], questions["answered"]) == (2, 0, 2)
    assert (scored["pairs"], scored["missing"], scored["invalid"]) == (4, 0, 0)
