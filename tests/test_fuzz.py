"""Property-based tests (hypothesis): the corpus reader and both vector readers fed arbitrary and damaged bytes.

Each reader gives a correct parse or its documented one-line error (``CorpusError`` for a
corpus, ``FormatError`` for a vectors file), never another exception, a hang, or memory that
grows with the garbage. "Correct" is checked against small reference parsers written here from
the documented formats, not just "no exception".

Budget: each of the six ``@given`` properties runs ``FUZZ_EXAMPLES`` examples (default 300,
1,800 in all, about 15 s for the whole file on a 2-core machine), derandomized (the same
examples on every run: CI cannot go red at random), with no example database.
``W2V_FUZZ_EXAMPLES=2000 python -m pytest -q tests/test_fuzz.py`` runs a bigger budget with fresh
random examples (about 1 minute). The 50 MB inputs and huge headers are plain tests, measured by
the process's peak resident memory. A test running past ``HANG_SECONDS`` fails (SIGALRM)
instead of hanging.
"""

import bz2
import gzip
import io
import lzma
import os
import re
import signal
import struct
import time
import zlib
from itertools import pairwise

import numpy as np
import pytest
import smart_open  # noqa: F401 - imported before any memory is measured
from hypothesis import event, given, settings
from hypothesis import strategies as st
from reference import token_blocks

import w2v.vectorio.word2vec as formats
from w2v.corpus.sources import MAX_SENTENCE_TOKENS, MAX_WORD_BYTES, expand_sources
from w2v.errors import CorpusError, FormatError
from w2v.files import UTF8_BOM
from w2v.vectorio.detect import file_kind
from w2v.vectorio.word2vec import detect_format
from w2v.vectors.wordvectors import Vectors
from w2v.words import decode_word

try:
    from compression import zstd  # Python 3.14
except ImportError:
    from backports import zstd

FUZZ_EXAMPLES = int(os.environ.get("W2V_FUZZ_EXAMPLES") or 300)
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,  # inputs are small; a hang is caught by HANG_SECONDS, not by timing one example
    derandomize="W2V_FUZZ_EXAMPLES" not in os.environ,
    database=None,
)
HANG_SECONDS = 120 + FUZZ_EXAMPLES // 5
MB = 1 << 20
FIFTY_MB = 50 * 10**6


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that no reader's ``except Exception`` hides it."""


@pytest.fixture(autouse=True)
def no_hang():
    def stop(signum, frame):
        raise Hang(f"the test ran over {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(HANG_SECONDS)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A folder whose files each example overwrites."""
    return tmp_path_factory.mktemp("fuzz")


def assert_one_line(err: Exception, path) -> None:
    message = str(err)
    assert "\n" not in message and str(path) in message, message


def peak_rss_growth(fn):
    """``fn()`` and how far (MiB) the process's peak resident memory rose above what it used
    when ``fn`` started (Linux: writing 5 to /proc/self/clear_refs resets the peak)."""

    def status(key: str) -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) // 1024

    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pytest.skip("needs /proc/self/clear_refs (Linux) to measure peak memory")
    before = status("VmRSS")
    result = fn()
    return result, status("VmHWM") - before


# --- damage ----------------------------------------------------------------------------------

BAD_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]
HEADERS = [
    b"999999999999 100",
    b"100000000 100",
    b"1 999999999999",
    b"99999999999999999999999999 1",
    b"-1 3",
    b"3 -1",
    b"0 0",
    b"0 3",
    b"3",
    b"3 2 1",
    b" 3\t 2 ",
    b"+3 2",
    b"3.0 2",
    b"\x003 2",
    b"\xc2\xb3 2",
    b"",
]


def damage(draw, blob: bytes, kinds: list[str]) -> bytes:
    """``blob`` with one to three kinds of damage drawn from ``kinds``."""
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=3)):
        at = draw(st.integers(0, len(blob)))
        if kind == "truncate":
            blob = blob[:at]
        elif kind == "flip" and blob:
            at = min(at, len(blob) - 1)
            blob = blob[:at] + bytes([blob[at] ^ draw(st.integers(1, 255))]) + blob[at + 1 :]
        elif kind == "nul":
            blob = blob[:at] + b"\x00" * draw(st.integers(1, 3)) + blob[at:]
        elif kind == "utf8":
            blob = blob[:at] + draw(st.sampled_from(BAD_UTF8)) + blob[at:]
        elif kind == "insert":
            blob = blob[:at] + draw(st.binary(min_size=1, max_size=12)) + blob[at:]
        elif kind == "delete":
            blob = blob[:at] + blob[at + draw(st.integers(1, 8)) :]
        elif kind == "repeat":
            blob = blob[:at] + blob[at : at + draw(st.integers(1, 40))] + blob[at:]
        elif kind == "no final newline":
            blob = blob[:-1] if blob.endswith(b"\n") else blob
        elif kind == "header":
            numbers = st.tuples(st.integers(-2, 9), st.integers(-2, 9)).map(lambda t: b"%d %d" % t)
            header = draw(st.one_of(numbers, st.sampled_from(HEADERS), st.binary(max_size=12)))
            blob = header + (b"\n" if draw(st.booleans()) else b"") + blob.partition(b"\n")[2]
    return blob


# --- the corpus reader -----------------------------------------------------------------------

PIECES = [b"a", b"bc", b"word", b"xyzxyzxyzxyz", b" ", b"  ", b"\t", b"\n", b"\n\n", b"\r\n", b"\r", b"\x0b", b"\x0c"]
PIECES += [b"\x00", b"\x1c", b"\x85", b"\xa0", b"\xc3\xa9", UTF8_BOM, *BAD_UTF8]
CORPUS_BYTES = st.one_of(st.binary(max_size=300), st.lists(st.sampled_from(PIECES), max_size=120).map(b"".join))
CODECS = {".gz": (gzip.compress, gzip.open), ".bz2": (bz2.compress, bz2.open), ".xz": (lzma.compress, lzma.open)}
CODECS[".zst"] = (zstd.compress, zstd.open)


def expected_sentences(data: bytes, max_word: int, max_tokens: int) -> list[list[bytes]]:
    """The documented tokenisation: words between ASCII whitespace, each cut to its first
    ``max_word`` bytes, a sentence per line, cut every ``max_tokens`` tokens; a UTF-8
    byte-order mark at the start is no part of the first word."""
    sentences = []
    for line in data.removeprefix(UTF8_BOM).split(b"\n"):
        tokens = [word[:max_word] for word in line.split()]
        sentences += [tokens[k : k + max_tokens] for k in range(0, len(tokens), max_tokens)]
    return sentences


def read_sentences(
    path: str, block_bytes: int, max_tokens: int = MAX_SENTENCE_TOKENS, max_word: int = MAX_WORD_BYTES
) -> list[list[bytes]]:
    """The sentences ``token_blocks`` reads from ``path``, checking each block's ends."""
    tokens: list[bytes] = []
    ends: list[int] = []
    for block in token_blocks(expand_sources([path]), block_bytes, max_tokens, max_word):
        assert block.ends == sorted(set(block.ends))
        assert all(-1 <= end < len(block.tokens) for end in block.ends)  # -1: ends the previous block's
        ends += [len(tokens) + end for end in block.ends]
        tokens += block.tokens
    assert ends == sorted(set(ends)) and all(end >= 0 for end in ends), "an empty sentence"
    assert not tokens or ends[-1] == len(tokens) - 1, "the last sentence was not ended"
    bounds = [0] + [end + 1 for end in ends]
    return [tokens[a:b] for a, b in pairwise(bounds)]


@FUZZ
@given(
    data=CORPUS_BYTES,
    block_bytes=st.integers(1, 40),
    max_tokens=st.sampled_from([1, 2, 3, MAX_SENTENCE_TOKENS]),
    max_word=st.integers(1, 50),
)
def test_corpus_of_any_bytes(scratch, data, block_bytes, max_tokens, max_word):
    path = scratch / "corpus.txt"
    path.write_bytes(data)
    got = read_sentences(str(path), block_bytes, max_tokens, max_word)
    assert got == expected_sentences(data, max_word, max_tokens)


@pytest.mark.slow
@FUZZ
@given(text=CORPUS_BYTES, suffix=st.sampled_from(sorted(CODECS)), draw=st.data())
def test_compressed_corpus_damaged_or_not(scratch, text, suffix, draw):
    """A damaged compressed file reads as its decompressor reads it, or gives one CorpusError."""
    compress, open_compressed = CODECS[suffix]
    blob = compress(text)
    if draw.draw(st.booleans()):
        blob = damage(draw.draw, blob, ["truncate", "flip", "insert", "delete", "nul"])
    path = scratch / f"corpus.txt{suffix}"
    path.write_bytes(blob)
    try:
        with open_compressed(io.BytesIO(blob), "rb") as stream:
            expected = expected_sentences(stream.read(), MAX_WORD_BYTES, MAX_SENTENCE_TOKENS)
    except Exception:  # the decompressor rejects it: so must the reader, with a CorpusError
        expected = None
    try:
        got = read_sentences(str(path), 16)
    except CorpusError as err:
        assert_one_line(err, path)
        assert expected is None, "a CorpusError for a file the decompressor reads"
        event("CorpusError")
    else:
        assert got == expected
        event("read")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["run", "run.gz", "words"])
def test_a_50mb_line_streams_in_bounded_memory(tmp_path, kind):
    """One 50 MB run without whitespace (one token, cut to MAX_WORD_BYTES), or 50 MB of words
    with no newline (cut into sentences of MAX_SENTENCE_TOKENS): memory stays a few blocks."""
    data = b"abcdefghi " * (FIFTY_MB // 10) if kind == "words" else b"x" * FIFTY_MB
    path = tmp_path / ("c.txt.gz" if kind.endswith(".gz") else "c.txt")
    path.write_bytes(gzip.compress(data, 1) if kind.endswith(".gz") else data)
    del data

    def read():
        tokens = sentences = longest = 0
        for block in token_blocks(expand_sources([str(path)])):
            tokens += len(block.tokens)
            sentences += len(block.ends)
            longest = max([longest, *map(len, block.tokens)])
        return tokens, sentences, longest

    (tokens, sentences, longest), growth = peak_rss_growth(read)
    if kind == "words":
        assert (tokens, sentences, longest) == (FIFTY_MB // 10, FIFTY_MB // 10 // MAX_SENTENCE_TOKENS, 9)
    else:
        assert (tokens, sentences, longest) == (1, 1, MAX_WORD_BYTES)
    assert growth < 40, f"peak memory rose {growth} MiB reading a 50 MB line"


# --- the vector readers ----------------------------------------------------------------------

WORD_BYTES = [b for b in range(0x100) if b not in b" \t\n\r\x0b\x0c"]  # what a corpus word holds: no whitespace
WORD = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters=" \t\n\r\x0b\x0c"), min_size=1, max_size=6),
    st.lists(st.sampled_from(WORD_BYTES), min_size=1, max_size=6).map(bytes).map(decode_word),  # not UTF-8
    st.integers(4000, 9000).map(lambda k: "é" * k),  # 8 to 18 KB: longer than a word2vec.c word
)


@st.composite
def vectors(draw) -> Vectors:
    words = draw(st.lists(WORD, max_size=5))
    dim = draw(st.integers(1, 6))
    values = draw(st.lists(st.floats(width=32), min_size=len(words) * dim, max_size=len(words) * dim))
    return Vectors(words, np.array(values, dtype=np.float32).reshape(len(words), dim))


def saved(path, v: Vectors, binary: bool) -> bytes:
    v.save(path, binary=binary)
    return path.read_bytes()


def parse_header(content: bytes) -> tuple[int, int, bytes]:
    line, newline, body = content.partition(b"\n")
    parts = line.split()
    assert newline and len(line) < 256 and len(parts) == 2 and all(p.isdigit() for p in parts), line[:60]
    assert int(parts[1]) >= 1
    return int(parts[0]), int(parts[1]), body


def parse_text(body: bytes, n: int, dim: int, check_end: bool) -> tuple[list[bytes], np.ndarray]:
    """Reference text reader: ``n`` lines ``word v1 .. vD`` (each ending in a newline), then
    only whitespace if ``check_end``."""
    lines = body.split(b"\n")
    assert len(lines) > n, "a record without its newline"
    words, rows = [], []
    for line in lines[:n]:
        word, *values = line.split()
        assert len(values) == dim
        words.append(word)
        rows.append([float(v) for v in values])
    assert not check_end or not b"\n".join(lines[n:]).strip()
    return words, np.array(rows, dtype=np.float32).reshape(n, dim)


def parse_headerless(content: bytes, limit: int | None) -> tuple[list[bytes], np.ndarray]:
    """Reference reader of text without a header: the non-blank lines (the first ``limit``),
    each a word and as many numbers as the first."""
    lines = [line.split() for line in content.split(b"\n") if line.strip()][:limit]
    assert all(len(line) == len(lines[0]) for line in lines)
    matrix = np.array([[float(v) for v in line[1:]] for line in lines], dtype=np.float32)
    return [line[0] for line in lines], matrix.reshape(len(lines), len(lines[0]) - 1)


def parse_binary(body: bytes, n: int, dim: int, check_end: bool) -> tuple[list[bytes], np.ndarray]:
    """Reference binary reader: ``n`` records of newlines, a word (1 to READ_WORD_BYTES bytes, no
    ASCII whitespace), a space and ``4*dim`` bytes."""
    words, rows, pos = [], [], 0
    for _ in range(n):
        while body[pos : pos + 1] == b"\n":
            pos += 1
        space = body.find(b" ", pos)
        assert 0 < space - pos <= formats.READ_WORD_BYTES and not re.search(rb"[\t\n\r\x0b\x0c]", body[pos:space])
        words.append(body[pos:space])
        rows.append(body[space + 1 : space + 1 + 4 * dim])
        assert len(rows[-1]) == 4 * dim
        pos = space + 1 + 4 * dim
    assert not check_end or not body[pos:].strip()
    return words, np.frombuffer(b"".join(rows), dtype="<f4").reshape(n, dim)


def gunzip_prefix(blob: bytes) -> bytes:
    """What gzip gives of ``blob`` before any error: a reader given a limit may stop before
    the damage. A byte at a time: a read that fails returns nothing of what it had decoded."""
    pieces = []
    try:
        with gzip.open(io.BytesIO(blob)) as stream:
            while piece := stream.read(1):
                pieces.append(piece)
    except (OSError, EOFError, zlib.error):
        pass
    return b"".join(pieces)


def check_load(path, binary: bool | None, limit: int | None) -> Vectors | None:
    """Load ``path``: a FormatError (one line, naming the file), or vectors that a reference
    reader finds in the (decompressed) bytes, as many as the header promises."""
    try:
        got = Vectors.load(path, binary=binary, limit=limit)
    except FormatError as err:
        assert_one_line(err, path)
        event("FormatError")
        return None
    content = path.read_bytes()
    if path.name.endswith(".gz"):
        content = gunzip_prefix(content)
    if binary is None and file_kind(str(path)) == "headerless":  # a damaged header may leave GloVe's layout
        words, matrix = parse_headerless(content, limit)
        assert got.words == [decode_word(w) for w in words]
        np.testing.assert_array_equal(got.vectors, matrix)
        event("read headerless")
        return got
    count, dim, body = parse_header(content)
    n = count if limit is None else min(count, limit)
    is_binary = binary if binary is not None else detect_format(path) == "binary"
    words, matrix = (parse_binary if is_binary else parse_text)(body, n, dim, check_end=n == count)
    assert got.vectors.dtype == np.float32 and got.vectors.shape == (n, dim)
    assert got.words == [decode_word(w) for w in words]
    np.testing.assert_array_equal(got.vectors, matrix)
    event(f"read {'binary' if is_binary else 'text'}")
    return got


@pytest.mark.slow
@FUZZ
@given(v=vectors(), binary=st.booleans(), gz=st.booleans())
def test_saved_vectors_load_back(scratch, v, binary, gz):
    path = scratch / "v.vec"
    blob = saved(path, v, binary)
    if gz:
        path = scratch / "v.vec.gz"
        path.write_bytes(gzip.compress(blob))
    got = check_load(path, binary, None)
    assert got is not None and got.words == v.words
    expected = v.vectors if binary else np.float32([[float(f"{x:.6g}") for x in row] for row in v.vectors.tolist()])
    np.testing.assert_array_equal(got.vectors, expected.reshape(v.vectors.shape))


VECTOR_DAMAGE = ["truncate", "flip", "nul", "utf8", "insert", "delete", "repeat", "no final newline", "header"]


@pytest.mark.slow
@FUZZ
@given(v=vectors(), saved_binary=st.booleans(), draw=st.data())
def test_damaged_vectors_file(scratch, v, saved_binary, draw):
    """Damage a valid file (then maybe compress it, or damage the compressed bytes) and read it
    as binary, as text, or detected, with or without a limit."""
    blob = damage(draw.draw, saved(scratch / "v.vec", v, saved_binary), VECTOR_DAMAGE)
    path = scratch / "damaged.vec"
    packing = draw.draw(st.sampled_from(["plain", "gz", "gz damaged"]))
    if packing != "plain":
        path = scratch / "damaged.vec.gz"
        blob = gzip.compress(blob)
        if packing == "gz damaged":
            blob = damage(draw.draw, blob, ["truncate", "flip", "insert", "delete"])
    path.write_bytes(blob)
    check_load(path, draw.draw(st.sampled_from([None, True, False])), draw.draw(st.sampled_from([None, 0, 1, 2, 5])))


@FUZZ
@given(
    header=st.one_of(
        st.tuples(st.integers(0, 6), st.integers(1, 6)).map(lambda t: b"%d %d\n" % t), st.sampled_from(HEADERS)
    ),
    body=st.one_of(
        st.binary(max_size=200),
        st.lists(st.sampled_from([*PIECES, b"1", b"-0.5", b"1e3", b"nan", b"inf", b"1e999"]), max_size=60).map(
            b"".join
        ),
    ),
    binary=st.sampled_from([None, True, False]),
)
def test_arbitrary_bytes_as_vectors(scratch, header, body, binary):
    path = scratch / "any.vec"
    path.write_bytes(header + body)
    check_load(path, binary, None)


NPY_GOOD_DESCRS = ["<f4", ">f8", "<f2", "<i4", "|u1"]
NPY_BAD = {  # one part of an .npy export damaged at a time
    "descr": ["|b1", "<c8", "<U3", "|S2", "|O", "<M8[s]", "|V4", "xyz", "", 3, [("a", "<f4")]],
    "shape": ["(3,)", "(3, 2, 1)", "()", "'ab'", "(3, 99999999999999999999)", "(3, 2.5)", "(-1, 2)", "[3, 2]"],
    "fortran_order": ["3", "'x'", "None"],
}


def npy_bytes(header: bytes, body: bytes) -> bytes:
    """An ``.npy`` file (format 1.0) whose header dict is ``header`` as written (padded)."""
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + body


@pytest.mark.slow
@FUZZ
@given(draw=st.data())
def test_arbitrary_npy_exports(scratch, draw):
    """An ``.npy`` export with one part damaged (or none): a header field, the header's text,
    the body, the words beside it. The matrix numpy reads, as float32, or a FormatError."""
    damaged = draw.draw(st.sampled_from([None, "descr", "shape", "fortran_order", "header", "body", "words"]))
    rows, cols = draw.draw(st.integers(0, 4)), draw.draw(st.integers(0, 4))
    fields = {
        "descr": draw.draw(st.sampled_from(NPY_GOOD_DESCRS)),
        "fortran_order": draw.draw(st.sampled_from(["False", "True"])),
        "shape": repr((rows, cols)),
    }
    if damaged in NPY_BAD:
        fields[damaged] = draw.draw(st.sampled_from(NPY_BAD[damaged]))
    header = (
        f"{{'descr': {fields['descr']!r}, 'fortran_order': {fields['fortran_order']}, 'shape': {fields['shape']}, }}"
    )
    if damaged == "header":
        noise = draw.draw(st.text(st.characters(max_codepoint=255), max_size=80))
        header = draw.draw(st.sampled_from([noise, header[: len(noise)], "[" * len(noise) + header, ""]))
    body = draw.draw(st.binary(max_size=100)) if damaged == "body" else bytes(8 * rows * cols)
    words = draw.draw(st.integers(0, 5)) if damaged == "words" else rows
    limit = draw.draw(st.sampled_from([None, 1]))
    path = scratch / "x.npy"
    path.write_bytes(npy_bytes(header.encode("latin1"), body) if header else body)
    (scratch / "x.vocab.txt").write_text("".join(f"w{i}\n" for i in range(words)))
    try:
        got = Vectors.load(path, limit=limit)
    except FormatError as err:
        assert_one_line(err, path)
        event(f"FormatError ({damaged} damaged)")
        return
    expected = np.load(path, allow_pickle=False)
    n = words if limit is None else min(limit, words)
    assert got.words == [f"w{i}" for i in range(n)] and got.vectors.dtype == np.float32
    np.testing.assert_array_equal(got.vectors, expected[:n].astype(np.float32))
    event(f"read ({damaged} damaged)")


def format_error(path, **load_args) -> FormatError:
    with pytest.raises(FormatError) as err:
        Vectors.load(path, **load_args)
    return err.value


@pytest.mark.parametrize("header", [b"999999999999 100", b"100000000 100", b"10000000 100", b"1 999999999999"])
@pytest.mark.parametrize("name", ["v.bin", "v.txt", "v.bin.gz", "v.txt.gz"])
def test_huge_header_counts_are_quick_errors(tmp_path, header, name):
    """A header promising terabytes: a FormatError at once, without touching that memory (a
    plain file is checked against its size; a compressed one fails to allocate, or reads the
    records there are into untouched memory)."""
    v = Vectors(["a", "b", "c"], np.ones((3, 100), dtype=np.float32))
    blob = header + b"\n" + saved(tmp_path / "good", v, name.startswith("v.bin")).partition(b"\n")[2]
    path = tmp_path / name
    path.write_bytes(gzip.compress(blob) if name.endswith(".gz") else blob)
    start = time.perf_counter()
    err, growth = peak_rss_growth(lambda: format_error(path))
    assert time.perf_counter() - start < 10
    assert_one_line(err, path)
    assert growth < 40, f"peak memory rose {growth} MiB for a file of {len(blob)} bytes"


@pytest.mark.slow
@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("ending", [b"", b"\n"])
def test_a_50mb_line_in_a_vectors_file(tmp_path, monkeypatch, binary, ending):
    """A record line of 50 MB under a '1 100' header: a FormatError, reading a part of it bounded
    by the read size (1 MiB here, so that memory in proportion to the line would show)."""
    monkeypatch.setattr(formats, "READ_CHUNK", MB)
    path = tmp_path / "v.vec"
    path.write_bytes(b"1 100\nw " + b"1 " * (FIFTY_MB // 2) + ending)
    err, growth = peak_rss_growth(lambda: format_error(path, binary=binary))
    assert_one_line(err, path)
    assert growth < 40, f"peak memory rose {growth} MiB for a 50 MB line"
