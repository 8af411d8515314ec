"""The word2vec vectors file formats, and the ``.npy`` export, read and written.

Binary format (word2vec.c): an ASCII header ``"V D\\n"``, then per word its bytes,
one space, D little-endian float32 and a newline. Text format: the same header,
then per line the word and D values separated by single spaces.

Words are ``str``; bytes that are not UTF-8 are kept with ``surrogateescape`` so a
word is written back exactly as it was read from the corpus. A word is any bytes
but ASCII whitespace, control bytes (NUL, ESC) included, as a corpus' words are.

``load_vectors`` reads the files of word2vec.c (binary records end in a newline),
gensim (binary records without it), fastText ``.vec`` and this project, text or
binary (auto-detected), and ``.npy`` exports (the matrix, its words one a line in
``<stem>.vocab.txt`` beside it). Damaged files raise ``FormatError`` naming the
file and the record. The writers refuse (``W2VError``, before writing) an empty word
and one that the file would end early, which no reader (this one, word2vec.c's,
gensim's) reads back whole: holding ASCII whitespace (word2vec files), a line break
(an ``.npy`` export's vocabulary) or a tab or line break (a projector's metadata).
"""

import io
import os
import re
import sys
import warnings
from collections.abc import Sequence

import numpy as np

from w2v.corpus.sources import stream_errors
from w2v.errors import FormatError, W2VError, plural
from w2v.files import COMPRESSED, atomic_output, binary_name, is_url, open_input, skip_bom
from w2v.words import WORD_END, decode_word, encode_word, split_word

WRITE_ROWS = 4096  # rows formatted per write
READ_CHUNK = 1 << 24  # bytes read at a time
# The longest word read: a longer "word" means a damaged record. 16 times the longest corpus
# word (corpus.MAX_WORD_BYTES), so that other tools' files with longer words read too.
READ_WORD_BYTES = 1 << 20
VALUE_BYTES = 64  # a text record longer than READ_WORD_BYTES + this much a value is damaged
HEADER_BYTES = 256
DETECT_BYTES = 1 << 16  # of values read to detect the format, after the first word
_NOT_IN_WORD = re.compile(rb"[\t\n\r\x0b\x0c]")  # ASCII whitespace but the space that ends a binary word
_NEWLINES = re.compile(rb"\n*")
LINE_BREAK = re.compile("[\n\r]")  # ends a word of an .npy export's vocabulary (one word a line)
TSV_BREAK = re.compile("[\t\n\r]")  # ends a projector's metadata field
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\t\r"
GENSIM_PICKLES = (".kv", ".model")  # names gensim saves its pickles under (KeyedVectors.save, Word2Vec.save)


# --- writing -----------------------------------------------------------------------------


def save_vectors(
    path: str | os.PathLike, words: Sequence[str], vectors: np.ndarray, binary: bool | None = None
) -> None:
    """Write ``words`` (V,) and ``vectors`` (V, D) as word2vec binary (``binary=True``) or
    text; ``None`` picks binary for ``.bin`` names. A ``.gz .bz2 .xz .zst`` name is
    compressed (``v.bin.gz``: binary, gzipped). Written beside ``path`` and renamed:
    never half-written."""
    path = os.fspath(path)
    if binary is None:
        binary = binary_name(path)
    check_words(path, words)
    with atomic_output(path, compress=True) as out:
        write_vectors(out, words, vectors, binary)


def write_vectors(out, words: Sequence[str], vectors: np.ndarray, binary: bool) -> None:
    """Write the header and records to the binary file object ``out``."""
    count, dim = vectors.shape
    out.write(b"%d %d\n" % (count, dim))
    for start in range(0, count, WRITE_ROWS):
        block = np.ascontiguousarray(vectors[start : start + WRITE_ROWS], dtype="<f4")
        names = [encode_word(w) for w in words[start : start + WRITE_ROWS]]
        out.write(binary_records(names, block) if binary else text_records(names, block))


def binary_records(names: Sequence[bytes], rows: np.ndarray) -> bytes:
    """Binary-format records, ``word<space><D little-endian float32>\\n``, of the words
    ``names`` and their (n, D) ``<f4`` C-ordered ``rows``. Each row's bytes are copied
    once, from a view of ``rows``, into the joined records."""
    pieces: list[bytes | memoryview] = []
    for name, row in zip(names, rows.view(np.uint8), strict=True):
        pieces += (name, b" ", row.data, b"\n")
    return b"".join(pieces)


def text_records(names: Sequence[bytes], rows: np.ndarray) -> bytes:
    """Text-format records, ``word v1 ... vD\\n`` with values as ``%.6g``, of the words
    ``names`` and their (n, D) float32 ``rows``."""
    row_format = " ".join(["%.6g"] * rows.shape[1]).encode() + b"\n"
    return b"".join(name + b" " + row_format % tuple(row) for name, row in zip(names, rows.tolist(), strict=True))


def save_npy(path: str | os.PathLike, words: Sequence[str], vectors: np.ndarray) -> str:
    """Write ``vectors`` (V, D) as ``path`` (``.npy``, float32) and ``words``, one a line,
    beside it as ``<stem>.vocab.txt``; returns the vocabulary's path. Both are written
    beside their names and renamed, the vocabulary first: if it fails, neither is replaced.
    A failure names the file that failed."""
    path = os.fspath(path)
    vocab = npy_vocab_path(path)
    check_words(vocab, words, LINE_BREAK, "a line break")
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    with atomic_output(path) as out:
        np.lib.format.write_array_header_1_0(out, np.lib.format.header_data_from_array_1_0(matrix))
        out.write(matrix.data)  # not np.save: its tofile reports a full disk without the reason
        out.flush()  # the matrix's write errors show here, before the vocabulary is renamed
        with atomic_output(vocab) as words_out:
            words_out.write(b"".join(encode_word(w) + b"\n" for w in words))
    return vocab


def save_projector(prefix: str, words: Sequence[str], vectors: np.ndarray) -> tuple[str, str]:
    """Write the two TSV files TensorBoard's Embedding Projector loads, and return their
    paths: ``PREFIX_vectors.tsv``, one line of D tab-separated values (``%.6g``) per
    word, and ``PREFIX_metadata.tsv``, the words one a line (a single column: no header
    row). Both are written beside their names and renamed, the words first."""
    paths = (f"{prefix}_vectors.tsv", f"{prefix}_metadata.tsv")
    check_words(paths[1], words, TSV_BREAK, "a tab or line break")
    row_format = "\t".join(["%.6g"] * vectors.shape[1]).encode() + b"\n"
    with atomic_output(paths[0]) as out, atomic_output(paths[1]) as words_out:
        words_out.write(b"".join(encode_word(w) + b"\n" for w in words))
        for start in range(0, len(vectors), WRITE_ROWS):
            block = np.asarray(vectors[start : start + WRITE_ROWS], dtype=np.float32).tolist()
            out.write(b"".join(row_format % tuple(row) for row in block))
    return paths


def refuse_pickle_name(path: str, instead: str) -> None:
    """W2VError for a ``.kv`` or ``.model`` name (``GENSIM_PICKLES``, any case), where
    gensim's ``save`` writes a pickle: word2vec vectors there are a file gensim's
    ``load`` cannot read, and w2v writes no pickles. ``instead`` says what to write."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in GENSIM_PICKLES:
        raise W2VError(f"{path}: a {suffix} file is gensim's pickled KeyedVectors, which w2v does not write: {instead}")


def check_words(path: str, words: Sequence[str], ends: re.Pattern[str] = WORD_END, what: str = "whitespace") -> None:
    """W2VError, before ``path`` is written, if a word is empty or holds a character of
    ``ends`` (``what`` names them; ``split_word``), which would end it when the file is read
    back: ASCII whitespace in word2vec files, a line break in an ``.npy`` export's
    vocabulary, a tab or line break in a projector's TSV metadata."""
    split = split_word(words, ends, what)
    if split:
        raise W2VError(f"cannot write {path}: {split}")


def npy_vocab_path(path: str) -> str:
    """The vocabulary file beside an ``.npy`` export: ``X.npy`` -> ``X.vocab.txt``."""
    stem = path[:-4] if path.endswith(".npy") else path
    return stem + ".vocab.txt"


# --- reading -----------------------------------------------------------------------------


def read_header(fin, path: str) -> tuple[int, int]:
    """Parse the ``"COUNT DIM"`` first line."""
    line = fin.readline(HEADER_BYTES)
    parts = line.split()
    ok = line.endswith(b"\n") and len(parts) == 2 and all(p.isdigit() for p in parts)
    if not ok or int(parts[1]) < 1:
        shown = line[:40].decode("utf-8", "replace").rstrip("\n")
        if not line:
            raise FormatError(f"{path}: empty file, not a word2vec vectors file")
        raise FormatError(
            f"{path}: bad header {shown!r}: a word2vec file starts with a line 'COUNT DIM' (e.g. '71290 100')"
        )
    return int(parts[0]), int(parts[1])


def looks_binary(sample: bytes, dim: int) -> bool:
    """Whether the bytes after the header hold binary records: after the first word's
    space, a text record has printable ASCII for at least the ``2*dim - 1`` characters
    of its values; raw float32 almost never does."""
    sample = sample.lstrip(b"\n")
    space = sample.find(b" ")
    if space < 0:
        return False
    values = sample[space + 1 : space + 1 + 4 * dim]
    values = values.split(b"\n", 1)[0]
    if len(values) < min(2 * dim - 1, len(sample) - space - 1):
        return True
    return bool(values.translate(None, _PRINTABLE))


def detect_format(path: str | os.PathLike) -> str:
    """``"binary"``, ``"text"`` or ``"npy"`` for the vectors file at ``path``."""
    path = os.fspath(path)
    if path.endswith(".npy"):
        return "npy"
    return header_of(path)[0]


def header_of(path: str) -> tuple[str, int, int]:
    """The format (``"binary"`` or ``"text"``) of the word2vec file at ``path``, and
    the records and values a record its ``COUNT DIM`` line promises."""
    with _opened(path) as fin:
        try:
            count, dim = read_header(fin, path)
            sample = fin.read(2 + READ_WORD_BYTES + min(4 * dim, DETECT_BYTES))  # a newline, the word, a space
        except stream_errors() as err:
            raise FormatError(f"{path}: cannot read: {err}") from None
    return ("binary" if looks_binary(sample, dim) else "text"), count, dim


class _opened:
    """``open`` for reading that turns OS errors into one-line ``W2VError``s, past the
    UTF-8 byte-order mark a text file may start with (``files.skip_bom``)."""

    def __init__(self, path: str):
        self.path = path

    def __enter__(self):
        if os.path.isdir(self.path):
            raise W2VError(f"vectors path is a folder: {self.path}")
        if not is_url(self.path) and not os.path.exists(self.path):
            raise W2VError(f"vectors file not found: {self.path}")
        try:
            self.fin = open_input(self.path)
        except OSError as err:
            raise W2VError(f"cannot read {self.path}: {err.strerror or err}") from None
        try:
            return skip_bom(self.fin)
        except stream_errors() as err:  # its first read: as the readers' own (damaged, cut, stalled)
            self.fin.close()
            raise FormatError(f"{self.path}: cannot read: {err}") from None

    def __exit__(self, *exc):
        self.fin.close()


def load_vectors(
    path: str | os.PathLike, binary: bool | None = None, limit: int | None = None
) -> tuple[list[str], np.ndarray]:
    """The words (V,) and float32 vectors (V, D) of a word2vec text or binary file
    (``binary=None``: detect it), or of an ``.npy`` export beside its ``.vocab.txt``.
    ``limit``: only the first ``limit`` records."""
    path = os.fspath(path)
    if limit is not None and limit < 0:
        raise W2VError(f"limit must be >= 0, not {limit}")
    fmt = detect_format(path) if binary is None else ("binary" if binary else "text")
    if fmt == "npy":
        return _load_npy(path, limit)
    with _opened(path) as fin:
        try:
            count, dim = read_header(fin, path)
            n = count if limit is None else min(count, limit)
            if not path.endswith(COMPRESSED) and not is_url(path):
                _check_size(fin, path, fmt, count, dim, n)
            try:
                vectors = np.empty((n, dim), dtype=np.float32)
            except (MemoryError, ValueError):
                raise FormatError(f"{path}: header promises {count:,} x {dim} values: too large") from None
            reader = _read_binary if fmt == "binary" else _read_text
            words = reader(fin, path, count, vectors, check_end=n == count)
        except stream_errors() as err:  # damaged or cut compressed streams, disk errors
            raise FormatError(f"{path}: cannot read: {err}") from None
    if sys.byteorder == "big":
        vectors = vectors.byteswap().view(vectors.dtype.newbyteorder())
    return words, vectors


def _check_size(fin, path: str, fmt: str, count: int, dim: int, n: int) -> None:
    """FormatError if the bytes after the header are too few for ``n`` records of ``dim``
    values: a truncated file is reported before a matrix of its promised size is allocated."""
    least = (4 * dim + 2) * n if fmt == "binary" else 2 * dim * n
    size = os.path.getsize(path) - fin.tell()
    if size < least:
        raise FormatError(
            f"{path}: truncated: the header promises {plural(count, 'record')} of {plural(dim, 'value')} "
            f"({fmt}), but the file holds only {plural(size, 'byte')} after it"
        )


def _read_binary(fin, path: str, count: int, out: np.ndarray, check_end: bool) -> list[str]:
    """Fill ``out`` from binary records: word bytes (after any newlines, which word2vec.c
    writes after each record and gensim does not), a space, ``4*dim`` bytes of float32.
    A word is 1 to ``READ_WORD_BYTES`` bytes without ASCII whitespace; anything else is
    the sign of a damaged file."""
    n, dim = out.shape
    size = 4 * dim
    target = out.data.cast("B") if n else None  # (an empty view cannot be cast)
    words: list[str] = []
    buf = b""
    pos = 0
    eof = False
    i = 0
    while i < n:
        if buf.startswith(b"\n", pos):
            pos = _NEWLINES.match(buf, pos).end()  # type: ignore[union-attr]  # it matches here
        space = buf.find(b" ", pos, pos + READ_WORD_BYTES + 1)
        if space < 0 or space + 1 + size > len(buf):
            if space < 0 and len(buf) - pos > READ_WORD_BYTES:
                raise _bad_word(path, i, buf[pos : pos + 40])
            if eof:
                if pos == len(buf):
                    raise FormatError(f"{path}: file ends after record {i:,}; the header promises {count:,}")
                raise FormatError(
                    f"{path}: record {i + 1:,} is truncated: the file ends inside it "
                    f"(the header promises {plural(count, 'record')} of {plural(dim, 'float32 value')})"
                )
            chunk = fin.read(READ_CHUNK)
            eof = not chunk
            buf = buf[pos:] + chunk
            pos = 0
            source = memoryview(buf)
            continue
        raw = buf[pos:space]
        if not raw or _NOT_IN_WORD.search(raw):
            raise _bad_word(path, i, raw)
        words.append(decode_word(raw))
        assert target is not None  # n > 0 here: a record was read
        target[i * size : (i + 1) * size] = source[space + 1 : space + 1 + size]
        pos = space + 1 + size
        i += 1
    if check_end:
        rest = buf[pos:] + fin.read(64)
        if rest.strip():
            raise FormatError(
                f"{path}: data after the last of the {plural(count, 'record')} the header promises: "
                f"a wrong header, or records longer than {plural(dim, 'float32 value')}"
            )
    return words


def _bad_word(path: str, i: int, raw: bytes) -> FormatError:
    shown = raw[:40].decode("utf-8", "replace")
    return FormatError(
        f"{path}: record {i + 1:,}: no valid word ({shown!r}): the file is damaged, or a record before "
        "it is shorter than the header's dimension says"
    )


def _read_text(fin, path: str, count: int, out: np.ndarray, check_end: bool) -> list[str]:
    """Fill ``out`` from text lines ``word v1 ... vD`` (trailing spaces allowed), read in
    chunks of lines and converted by numpy a chunk at a time."""
    n, dim = out.shape
    longest = READ_WORD_BYTES + VALUE_BYTES * dim
    words: list[str] = []
    extra: list[bytes] = []
    i = 0
    while i < n:
        lines = _read_lines(fin, min(READ_CHUNK, max(1 << 16, (n - i) * (12 * dim + 32))), longest)
        if not lines:
            raise FormatError(f"{path}: file ends after record {i:,}; the header promises {count:,}")
        if len(lines) > n - i:
            extra, lines = lines[n - i :], lines[: n - i]
        else:
            extra = []
        if max(map(len, lines)) > longest:
            record = i + next(j for j, line in enumerate(lines) if len(line) > longest) + 1
            raise FormatError(
                f"{path}: record {record:,} (line {record + 1:,}) is longer than {longest:,} bytes: "
                f"not a word and {plural(dim, 'value')}"
            )
        parts = [line.split(None, 1) for line in lines]
        if not lines[-1].endswith(b"\n") or any(len(p) != 2 for p in parts):
            _text_shape_error(path, parts, lines, i, count, dim)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)  # numpy's "could not be read to its end"
                values = np.fromstring(b" ".join(p[1] for p in parts), dtype=np.float32, sep=" ")
        except (ValueError, DeprecationWarning):
            _text_value_error(path, parts, i)
            _text_shape_error(path, parts, lines, i, count, dim)
            raise FormatError(f"{path}: records {i + 1:,} to {i + len(lines):,}: unreadable values") from None
        if values.size != len(lines) * dim:
            _text_shape_error(path, parts, lines, i, count, dim)
            raise FormatError(f"{path}: records {i + 1:,} to {i + len(lines):,}: unreadable values")
        out[i : i + len(lines)] = values.reshape(len(lines), dim)
        words.extend(decode_word(p[0]) for p in parts)
        i += len(lines)
    if check_end:
        rest = b"".join(extra) + fin.read(4096)
        if rest.strip():
            raise FormatError(
                f"{path}: more records than the {count:,} the header promises (record {count + 1:,} and on)"
            )
    return words


def _read_lines(fin, size: int, longest: int) -> list[bytes]:
    """``fin.readlines(size)``, but reading at most ``longest + 1`` bytes past ``size`` to end
    the last line, so that a line with no end is not read whole into memory."""
    data = fin.read(size)
    if data and not data.endswith(b"\n"):
        data += fin.readline(longest + 1)
    return io.BytesIO(data).readlines()


def _text_shape_error(path, parts, lines, first, count, dim) -> None:
    for j, (p, line) in enumerate(zip(parts, lines, strict=True)):
        got = len(p[1].split()) if len(p) == 2 else 0
        record = first + j + 1
        if not p and not b"".join(lines[j:]).strip():
            raise FormatError(
                f"{path}: file ends after record {record - 1:,} (blank lines); the header promises {count:,}"
            )
        if not p:
            raise FormatError(f"{path}: record {record:,} (line {record + 1:,}) is empty")
        if not line.endswith(b"\n") and got <= dim:
            raise FormatError(
                f"{path}: record {record:,} (line {record + 1:,}) is truncated: the file ends inside it "
                f"(no final newline; the header promises {plural(count, 'record')} of {plural(dim, 'value')})"
            )
        if got != dim:
            raise FormatError(
                f"{path}: record {record:,} (line {record + 1:,}) has {plural(got, 'value')}; "
                f"the header says {dim} a record"
            )


def _text_value_error(path, parts, first) -> None:
    for j, p in enumerate(parts):
        for token in p[1].split():
            try:
                float(token)
            except ValueError:
                shown = token[:30].decode("utf-8", "replace")
                record = first + j + 1
                raise FormatError(f"{path}: record {record:,} (line {record + 1:,}): not a number: {shown!r}") from None


def _load_npy(path: str, limit: int | None) -> tuple[list[str], np.ndarray]:
    """The words and matrix of an ``.npy`` export (read through a memory map, so that
    ``limit`` rows are all that is copied)."""
    words, matrix = open_npy(path)
    n = len(words) if limit is None else min(limit, len(words))
    with np.errstate(over="ignore"):  # a float64 past float32's range reads as infinite, as in a text file
        return words[:n], np.array(matrix[:n], dtype=np.float32)


def open_npy(path: str) -> tuple[list[str], np.ndarray]:
    """The words (V,) of an ``.npy`` export and its (V, D) matrix, memory-mapped.
    FormatError for a damaged header, a matrix that does not hold numbers, or one of
    another number of rows than its vocabulary file has words."""
    vocab = npy_vocab_path(path)
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
        with open(vocab, "rb") as fin:
            words = [decode_word(line.rstrip(b"\r\n")) for line in skip_bom(fin)]
    except FileNotFoundError as err:
        raise W2VError(f"file not found: {err.filename}") from None
    except OSError as err:
        raise FormatError(f"{path}: not a readable .npy matrix: {err.strerror or err}") from None
    except Exception as err:  # numpy's header parser raises many types (SyntaxError, OverflowError ...)
        raise FormatError(f"{path}: not a readable .npy matrix: {str(err).splitlines()[0][:200]}") from None
    if matrix.dtype.kind not in "fiu":
        raise FormatError(f"{path}: the matrix holds {matrix.dtype} values, not real numbers")
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise FormatError(f"{path}: matrix of shape {matrix.shape} but {plural(len(words), 'word')} in {vocab}")
    return words, matrix


# --- text without a header line: GloVe, fastText's print-word-vectors ---------------------


def load_headerless(path: str | os.PathLike, limit: int | None = None) -> tuple[list[str], np.ndarray]:
    """The words (V,) and float32 vectors (V, D) of a text file of ``word v1 ... vD``
    lines without word2vec's ``COUNT DIM`` line (GloVe's files, fastText's
    ``print-word-vectors``), D given by the first line; blank lines are skipped.
    ``limit``: only the first ``limit`` lines. Read twice: once to count the lines,
    so that the matrix is allocated once."""
    path = os.fspath(path)
    lines, dim = headerless_shape(path, None if limit is None else max(limit, 1))
    with _opened(path) as fin:
        try:
            return _read_headerless(fin, path, lines if limit is None else min(lines, limit), dim)
        except stream_errors() as err:
            raise FormatError(f"{path}: cannot read: {err}") from None


def headerless_shape(path: str, most: int | None = None) -> tuple[int, int]:
    """The lines (blank ones included; at most ``most``) and values a line (D, from the
    first line) of a text file of ``word v1 ... vD`` lines without a header."""
    with _opened(path) as fin:
        try:
            first = fin.readline(READ_CHUNK)
            dim = len(first.split()) - 1
            if dim < 1:
                raise FormatError(f"{path}: first line {first[:40]!r} is not a word and its values")
            return _count_lines(fin, None if most is None else most - 1) + 1, dim
        except stream_errors() as err:
            raise FormatError(f"{path}: cannot read: {err}") from None


def _count_lines(fin, most: int | None) -> int:
    """The lines left in ``fin`` (a last one without a newline counts), at most ``most``."""
    lines, last = 0, b"\n"
    while most is None or lines < most:
        chunk = fin.read(READ_CHUNK)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    lines += last != b"\n"
    return lines if most is None else min(lines, most)


def _read_headerless(fin, path: str, most: int, dim: int) -> tuple[list[str], np.ndarray]:
    """Up to ``most`` non-blank ``word v1 ... vD`` lines of ``fin``, converted by numpy a
    chunk of lines at a time; FormatError naming the line of a malformed one."""
    out = np.empty((most, dim), dtype=np.float32)
    words: list[str] = []
    seen = 0  # lines read, blank ones included
    while len(words) < most:
        lines = _read_lines(fin, READ_CHUNK, READ_WORD_BYTES + VALUE_BYTES * dim)
        if not lines:
            break
        kept = [(seen + j + 1, line.split(None, 1)) for j, line in enumerate(lines) if line.strip()]
        kept = kept[: most - len(words)]
        seen += len(lines)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)  # numpy's "could not be read to its end"
                joined = b" ".join(p[1] if len(p) == 2 else b"" for _, p in kept)
                values = np.fromstring(joined, dtype=np.float32, sep=" ")
        except (ValueError, DeprecationWarning):
            values = np.empty(0, dtype=np.float32)
        if values.size != len(kept) * dim:
            for number, parts in kept:
                got = parts[1].split() if len(parts) == 2 else []
                if len(got) != dim or not all(is_number(v) for v in got):
                    raise FormatError(f"{path}: line {number:,}: not a word and {dim} numbers (as the first line)")
            raise FormatError(f"{path}: lines {kept[0][0]:,} to {kept[-1][0]:,}: unreadable values")
        out[len(words) : len(words) + len(kept)] = values.reshape(len(kept), dim)
        words.extend(decode_word(p[0]) for _, p in kept)
    if sys.byteorder == "big":
        out = out.byteswap().view(out.dtype.newbyteorder())
    return words, out[: len(words)]


NUMBER = re.compile(rb"[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|nan|inf(inity)?)", re.IGNORECASE)


def is_number(token: bytes) -> bool:
    """Whether ``token`` is a decimal number (``-0.5``, ``1e-3``, ``nan``, ``inf``)."""
    return NUMBER.fullmatch(token) is not None
