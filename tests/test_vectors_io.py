"""Loading vectors files: every producer's layout, format detection, --limit, damage."""

import bz2
import gzip
import lzma
import struct

import numpy as np
import pytest

import w2v.vectorio.word2vec as formats
from w2v.corpus.sources import MAX_WORD_BYTES
from w2v.errors import FormatError, W2VError
from w2v.vectorio.word2vec import detect_format, load_vectors
from w2v.vectors.wordvectors import Vectors
from w2v.words import decode_word, encode_word

# Values exactly representable in float32 and in short decimal text.
WORDS = ["</s>", "the", "naïve", "日本語", decode_word(b"caf\xc3")]  # the last: cut inside a UTF-8 character
MATRIX = np.array(
    [[0.5, -0.25, 1.0], [0.125, 2.0, -3.5], [0.0, 0.75, 0.25], [-1.0, 1.5, 4.0], [8.0, -0.5, 0.0625]],
    dtype=np.float32,
)


def records(words, matrix, binary, newline=True, trailing_space=False, fmt="%g"):
    """The bytes of a word2vec file in one producer's layout."""
    out = [b"%d %d\n" % matrix.shape]
    for word, row in zip(words, matrix, strict=True):
        if binary:
            out.append(encode_word(word) + b" " + struct.pack(f"<{len(row)}f", *row) + (b"\n" if newline else b""))
        else:
            values = " ".join(fmt % v for v in row.tolist()) + (" " if trailing_space else "")
            out.append(encode_word(word) + b" " + values.encode() + b"\n")
    return b"".join(out)


LAYOUTS = {
    "word2vec.c binary (newline after each record)": ("v.bin", dict(binary=True, newline=True)),
    "gensim binary (no newline)": ("v.bin", dict(binary=True, newline=False)),
    "word2vec.c text (trailing spaces)": ("v.txt", dict(binary=False, trailing_space=True, fmt="%lf")),
    "gensim text (no trailing space)": ("v.txt", dict(binary=False, fmt="%r")),
    "fastText .vec": ("v.vec", dict(binary=False, trailing_space=True, fmt="%.4g")),
    "binary named .txt": ("v.txt", dict(binary=True, newline=True)),
    "text named .bin": ("v.bin", dict(binary=False)),
}


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def assert_same(vectors, words=WORDS, matrix=MATRIX):
    assert vectors.words == words
    assert vectors.vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors.vectors, matrix)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_layout_loads_the_same(tmp_path, layout):
    name, kw = LAYOUTS[layout]
    kw = dict(kw)
    fmt = kw.pop("fmt", "%g")
    data = records(WORDS, MATRIX, fmt=fmt, **kw)
    path = write(tmp_path, name, data)
    assert detect_format(path) == ("binary" if kw["binary"] else "text")
    assert_same(Vectors.load(path))
    assert_same(Vectors.load(path, binary=kw["binary"]))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_limit_reads_the_first_records(tmp_path, layout):
    name, kw = LAYOUTS[layout]
    kw = dict(kw)
    fmt = kw.pop("fmt", "%g")
    data = records(WORDS, MATRIX, fmt=fmt, **kw)
    # Damage after the second record is never reached with limit=2.
    path = write(tmp_path, name, data + b"garbage that would be an error")
    vectors = Vectors.load(path, limit=2)
    assert_same(vectors, WORDS[:2], MATRIX[:2])
    with pytest.raises(FormatError):
        Vectors.load(path)


@pytest.mark.parametrize("binary", [True, False])
def test_small_read_chunks(tmp_path, monkeypatch, binary):
    """Records split across read chunks parse the same."""
    rng = np.random.default_rng(3)
    words = [f"w{i}" * (1 + i % 7) for i in range(200)]
    matrix = rng.standard_normal((200, 7)).astype(np.float32)
    path = str(tmp_path / ("v.bin" if binary else "v.txt"))
    Vectors(words, matrix).save(path)
    for chunk in (5, 64, 1000):
        monkeypatch.setattr(formats, "READ_CHUNK", chunk)
        loaded = Vectors.load(path)
        assert loaded.words == words
        np.testing.assert_allclose(loaded.vectors, matrix, rtol=1e-5 if not binary else 0)


def test_mixed_newlines_in_binary(tmp_path):
    """Records with and without word2vec.c's newline in one file both parse."""
    with_nl = records(WORDS, MATRIX, binary=True, newline=True).split(b"\n", 1)[1]
    body = b""
    for i, (word, row) in enumerate(zip(WORDS, MATRIX, strict=True)):
        body += encode_word(word) + b" " + row.astype("<f4").tobytes() + (b"\n" if i % 2 else b"")
    path = write(tmp_path, "v.bin", b"5 3\n" + body)
    assert_same(Vectors.load(path))
    assert with_nl  # sanity


def test_roundtrip_project_writer(tmp_path):
    vectors = Vectors(WORDS, MATRIX)
    for name in ("a.bin", "a.txt"):
        vectors.save(tmp_path / name)
        loaded = Vectors.load(tmp_path / name)
        assert_same(loaded)
        loaded.save(tmp_path / ("again-" + name))
        assert (tmp_path / name).read_bytes() == (tmp_path / ("again-" + name)).read_bytes()
    # the word cut inside a UTF-8 character is kept byte for byte
    assert encode_word(Vectors.load(tmp_path / "a.bin").words[4]) == b"caf\xc3"


def test_binary_writer_writes_word2vec_c_layout_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "WRITE_ROWS", 2)  # 5 records: blocks of 2, 2 and 1
    matrix = MATRIX.astype(np.float64)  # converted to little-endian float32 as it is written
    Vectors(WORDS, matrix).save(tmp_path / "a.bin")
    assert (tmp_path / "a.bin").read_bytes() == records(WORDS, MATRIX, binary=True)


ODD_WORDS = [
    "q" * MAX_WORD_BYTES,  # the longest corpus word, first: the format is detected from it
    "cat\x00sat",  # NUL
    "\x1b[31mred\x1b[0m",  # ESC: a terminal escape sequence
    "\x01\x1f\x7f\x1c\x85",  # other control bytes, and characters str.split() but not bytes.split() splits at
    decode_word(b"\xff\x00\xfe"),  # not UTF-8
    decode_word(("é" * MAX_WORD_BYTES).encode()[:MAX_WORD_BYTES]),  # the longest, cut inside a character
]


@pytest.mark.parametrize("name", ["v.bin", "v.txt", "v.bin.gz"])
def test_every_word_a_corpus_can_hold_round_trips(tmp_path, name):
    """What w2v writes it reads back: words with control bytes, invalid UTF-8, MAX_WORD_BYTES long."""
    matrix = np.arange(3 * len(ODD_WORDS), dtype=np.float32).reshape(-1, 3)
    Vectors(ODD_WORDS, matrix).save(tmp_path / name)
    loaded = Vectors.load(tmp_path / name)
    assert loaded.words == ODD_WORDS
    np.testing.assert_array_equal(loaded.vectors, matrix)


def test_gensim_reads_words_with_control_bytes(tmp_path):
    """gensim reads them too; a word that is not UTF-8 needs its unicode_errors."""
    gensim_kv = pytest.importorskip("gensim.models.keyedvectors")
    matrix = np.ones((len(ODD_WORDS), 3), dtype=np.float32)
    for binary in (True, False):
        path = tmp_path / f"v{binary}.w2v"
        Vectors(ODD_WORDS, matrix).save(path, binary=binary)
        with pytest.raises(UnicodeDecodeError):
            gensim_kv.KeyedVectors.load_word2vec_format(str(path), binary=binary)
        back = gensim_kv.KeyedVectors.load_word2vec_format(str(path), binary=binary, unicode_errors="surrogateescape")
        assert back.index_to_key == ODD_WORDS


@pytest.mark.slow
def test_vectors_trained_on_a_corpus_with_nul_bytes_load_back(tmp_path, cli):
    """The issue's corpus: NUL bytes inside words and after them; both formats load and query."""
    corpus = tmp_path / "nul.txt"
    corpus.write_bytes(b"the cat\x00sat on\x00 the mat dog\n" * 2000)
    loaded = {}
    for name in ("nul.bin", "nul.txt.vec"):
        done = cli("train", corpus, "-o", tmp_path / name, "--min-count", "1", "--epochs", "1", "--threads", "1", "-q")
        assert done.returncode == 0, done.stderr.decode()
        done = cli("similar", "the", "-v", tmp_path / name, "-n", "2")
        assert done.returncode == 0 and len(done.stdout.splitlines()) == 2, done.stderr.decode()
        loaded[name] = Vectors.load(tmp_path / name)
    assert sorted(loaded["nul.bin"].words) == ["cat\x00sat", "dog", "mat", "on\x00", "the"]
    assert loaded["nul.txt.vec"].words == loaded["nul.bin"].words
    np.testing.assert_allclose(loaded["nul.txt.vec"].vectors, loaded["nul.bin"].vectors, rtol=1e-5)


def test_npy_export(tmp_path):
    vocab = Vectors(WORDS, MATRIX).save_npy(tmp_path / "m.npy")
    assert vocab.endswith("m.vocab.txt")
    np.testing.assert_array_equal(np.load(tmp_path / "m.npy"), MATRIX)
    assert (tmp_path / "m.vocab.txt").read_bytes().split(b"\n")[:5] == [encode_word(w) for w in WORDS]
    assert_same(Vectors.load(tmp_path / "m.npy"))
    assert_same(Vectors.load(tmp_path / "m.npy", limit=3), WORDS[:3], MATRIX[:3])


def test_gzip(tmp_path):
    path = tmp_path / "v.bin.gz"
    path.write_bytes(gzip.compress(records(WORDS, MATRIX, binary=True)))
    assert_same(Vectors.load(path))


@pytest.mark.parametrize(
    ("suffix", "unpack"), [(".gz", gzip.decompress), (".bz2", bz2.decompress), (".xz", lzma.decompress)]
)
def test_compressed_names_are_written_compressed(tmp_path, suffix, unpack):
    """As gensim does: ``v.bin.gz`` is binary, gzipped; ``v.txt.xz`` text, xz-compressed."""
    vectors = Vectors(WORDS, MATRIX)
    for name in ("v.bin", "v.txt"):
        vectors.save(tmp_path / name)
        vectors.save(tmp_path / (name + suffix))
        packed = (tmp_path / (name + suffix)).read_bytes()
        assert unpack(packed) == (tmp_path / name).read_bytes() != packed
        assert_same(Vectors.load(tmp_path / (name + suffix)))


def test_crlf_text(tmp_path):
    path = write(tmp_path, "v.txt", records(WORDS, MATRIX, binary=False).replace(b"\n", b"\r\n"))
    assert_same(Vectors.load(path))


def test_duplicate_words_index_first(tmp_path):
    vectors = Vectors(["a", "b", "a"], np.eye(3, dtype=np.float32))
    assert vectors.index("a") == 0
    assert len(vectors) == 3


def test_gensim_files(tmp_path):
    gensim_kv = pytest.importorskip("gensim.models.keyedvectors")
    rng = np.random.default_rng(0)
    words = [f"word{i}" for i in range(300)] + ["naïve", "日本語"]
    matrix = rng.standard_normal((len(words), 16)).astype(np.float32)
    kv = gensim_kv.KeyedVectors(16)
    kv.add_vectors(words, matrix)
    for binary in (True, False):
        path = str(tmp_path / f"g{binary}.w2v")
        kv.save_word2vec_format(path, binary=binary)
        loaded = Vectors.load(path)
        assert detect_format(path) == ("binary" if binary else "text")
        assert loaded.words == words
        np.testing.assert_allclose(loaded.vectors, matrix, rtol=1e-6)
    # and gensim reads ours
    Vectors(words, matrix).save(tmp_path / "ours.bin")
    back = gensim_kv.KeyedVectors.load_word2vec_format(str(tmp_path / "ours.bin"), binary=True)
    assert back.index_to_key == words
    np.testing.assert_array_equal(back.vectors, matrix)


# --- damaged files -------------------------------------------------------------------------

BIN = records(WORDS, MATRIX, binary=True)
TXT = records(WORDS, MATRIX, binary=False)


def damaged(tmp_path, name, data, match, binary=None):
    path = write(tmp_path, name, data)
    with pytest.raises(FormatError, match=match) as err:
        load_vectors(path, binary=binary)
    message = str(err.value)
    assert path in message and "\n" not in message
    return message


def test_empty_file(tmp_path):
    damaged(tmp_path, "v.bin", b"", "empty file")


@pytest.mark.parametrize("header", [b"hello world\n", b"5\n", b"5 3 2\n", b"-5 3\n", b"5 0\n", b"5 x\n"])
def test_bad_header(tmp_path, header):
    damaged(tmp_path, "v.txt", header + TXT.split(b"\n", 1)[1], "bad header")


def test_missing_header(tmp_path):
    damaged(tmp_path, "v.txt", TXT.split(b"\n", 1)[1], "bad header")


def test_header_without_newline(tmp_path):
    damaged(tmp_path, "v.txt", b"5 3", "bad header")


def test_binary_without_header_is_bad_header(tmp_path):
    damaged(tmp_path, "v.bin", BIN.split(b"\n", 1)[1], "bad header")


def test_binary_truncated_final_record(tmp_path):
    damaged(tmp_path, "v.bin", BIN[:-6], r"record 5 is truncated")


def test_binary_fewer_records_than_header(tmp_path):
    data = b"6 3\n" + BIN.split(b"\n", 1)[1] + b"extra"  # room for the size check, no record 6 space
    damaged(tmp_path, "v.bin", data, r"record 6 is truncated")
    data = b"6 3\n" + BIN.split(b"\n", 1)[1] + b"\n" * 20
    damaged(tmp_path, "v.bin", data, r"file ends after record 5; the header promises 6")


def test_binary_much_shorter_than_header(tmp_path):
    damaged(tmp_path, "v.bin", b"500 3\n" + BIN.split(b"\n", 1)[1], "truncated: the header promises 500 records")


def test_binary_records_shorter_than_header_dim(tmp_path):
    data = b"5 4\n" + BIN.split(b"\n", 1)[1] + b"\x00" * 40  # records of 3 floats, header says 4
    damaged(tmp_path, "v.bin", data, "record", binary=True)


def test_binary_more_data_than_header(tmp_path):
    damaged(tmp_path, "v.bin", b"4 3\n" + BIN.split(b"\n", 1)[1], "data after the last of the 4 records")


def test_binary_whitespace_in_word(tmp_path):
    """A corpus word holds no whitespace: a tab or newline inside a binary "word" (after the
    newlines that may start a record) is damage, as is an empty word."""
    damaged(tmp_path, "v.bin", BIN.replace(b"the ", b"t\te "), r"record 2: no valid word")
    damaged(tmp_path, "v.bin", BIN.replace(b"the ", b"t\ne "), r"record 2: no valid word")
    damaged(tmp_path, "v.bin", BIN.replace(b"the ", b"\n "), r"record 2: no valid word")


def test_binary_word_longer_than_the_reader_takes(tmp_path):
    """A word of READ_WORD_BYTES reads; one byte more is a damaged record."""
    longest = b"w" * formats.READ_WORD_BYTES
    row = np.float32([1, 2, 3]).tobytes()
    for word in (longest, b"\n" + longest):
        assert load_vectors(write(tmp_path, "v.bin", b"1 3\n" + word + b" " + row + b"\n"))[0] == [longest.decode()]
    damaged(tmp_path, "v.bin", b"1 3\n" + longest + b"w " + row + b"\n", r"record 1: no valid word")


def test_text_truncated_final_record(tmp_path):
    damaged(tmp_path, "v.txt", TXT[:-4], r"record 5 \(line 6\) is truncated")
    damaged(tmp_path, "v.txt", TXT[:-1], r"record 5 \(line 6\) is truncated")  # no final newline


def test_text_fewer_records_than_header(tmp_path):
    damaged(tmp_path, "v.txt", b"9 3\n" + TXT.split(b"\n", 1)[1] + b" " * 30, "file ends after record 5")


def test_text_record_too_short(tmp_path):
    lines = TXT.split(b"\n")
    lines[2] = b"the 0.125 2"
    damaged(tmp_path, "v.txt", b"\n".join(lines), r"record 2 \(line 3\) has 2 values; the header says 3")


def test_text_record_too_long(tmp_path):
    lines = TXT.split(b"\n")
    lines[3] += b" 7"
    damaged(tmp_path, "v.txt", b"\n".join(lines), r"record 3 \(line 4\) has 4 values")


def test_text_empty_line(tmp_path):
    lines = TXT.split(b"\n")
    lines[2] = b""
    damaged(tmp_path, "v.txt", b"\n".join(lines), r"record 2 \(line 3\) is empty")


@pytest.mark.parametrize("bad", [b"abc", b"1,5", b"0.1.2", b"--1"])
def test_text_non_numeric(tmp_path, bad):
    lines = TXT.split(b"\n")
    lines[4] = b"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e -1 " + bad + b" 4"
    message = damaged(tmp_path, "v.txt", b"\n".join(lines), r"record 4 \(line 5\): not a number")
    assert repr(bad.decode()) in message


def test_text_more_records_than_header(tmp_path):
    damaged(tmp_path, "v.txt", b"4 3\n" + TXT.split(b"\n", 1)[1], "more records than the 4")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(W2VError, match="not found"):
        Vectors.load(tmp_path / "nope.bin")
    with pytest.raises(W2VError, match="folder"):
        Vectors.load(tmp_path)


def test_npy_without_vocab(tmp_path):
    np.save(tmp_path / "m.npy", MATRIX)
    with pytest.raises(W2VError, match="not found"):
        Vectors.load(tmp_path / "m.npy")
    (tmp_path / "m.vocab.txt").write_text("a\nb\n")
    with pytest.raises(FormatError, match="shape"):
        Vectors.load(tmp_path / "m.npy")
