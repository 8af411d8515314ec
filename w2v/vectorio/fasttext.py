"""fastText's ``.bin`` models, read for their word vectors without fastText.

The layout (fastText's ``FastText::saveModel``, format versions 11 and 12), all
little-endian: the int32 magic 793712314 and the version; the arguments (12 int32:
dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn,
lrUpdateRate; a float64 t); the dictionary (int32 size, nwords, nlabels; int64
ntokens, pruneidx_size; per entry its bytes, a NUL, an int64 count and an int8
type, words before labels; pruneidx_size int32 pairs); a quantization flag byte;
the input matrix (int64 rows, int64 columns, float32 values): the nwords words'
rows, then ``bucket`` rows of character n-grams; then the output matrix, not read.

A word's vector is, as fastText's ``getWordVector`` computes it, the mean of its
row and the rows of its character n-grams: the ``minn`` to ``maxn`` characters
(UTF-8 sequences) long substrings of ``<word>``, but not ``<`` or ``>`` alone,
each hashed by 32-bit FNV-1a over its bytes taken as signed chars, modulo
``bucket``. ``</s>`` has no n-grams. The file is memory-mapped: a 7 GB model
costs only the pages of the rows used.

fastText checks none of its settings when it loads a model; this reader refuses
(``FormatError``, one line) the values no model fastText trains can hold:

- ``minn`` and ``maxn`` outside 0 to ``MAX_NGRAM`` characters. fastText's n-grams
  are 3 to 6 characters by default and tuned within a few characters of that;
  ``maxn`` 0 (or ``minn > maxn``) means no n-grams. An n-gram never runs past its
  word, so a longer ``maxn`` changes nothing but the work: 100 characters is far
  beyond any in use, and as long as word2vec.c's longest word (``MAX_STRING``).
- ``dim`` below 1, and ``bucket`` below 0, or 0 where ``minn`` and ``maxn`` make
  n-grams: fastText would hash them modulo 0 (it writes ``bucket`` 0 only for
  supervised models without n-grams).
- a word that is empty or holds ASCII whitespace (fastText ends a word there, as
  w2v does): written to a vectors file, it would read back as several words.
- an input matrix of other than ``nwords + bucket`` rows of ``dim`` columns (the
  shape fastText gives it), or one the file is too short to hold: every n-gram's
  bucket is then a row of the matrix.
"""

import mmap
import struct
from contextlib import suppress
from dataclasses import dataclass

import numpy as np

from w2v.corpus.vocab import decode_word, split_word
from w2v.errors import FormatError

MAGIC = 793712314
VERSIONS = (11, 12)
ARGS = struct.Struct("<12id")  # dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate t
DICTIONARY = struct.Struct("<3i2q")  # size nwords nlabels ntokens pruneidx_size
MATRIX = struct.Struct("<2q")  # rows columns
SUPERVISED = 3  # fastText's model_name::sup
EOS = b"</s>"
FNV_OFFSET = np.uint32(2166136261)
FNV_PRIME = np.uint32(16777619)
BLOCK_WORDS = 1024  # words whose n-gram rows are gathered at once
MAX_NGRAM = 100  # the longest n-gram, in characters, that minn and maxn may name (see above)


@dataclass
class Model:
    """What a ``.bin`` says of its word vectors: the words (bytes), the n-gram settings
    and where the input matrix starts."""

    words: list[bytes]
    dim: int
    bucket: int
    minn: int
    maxn: int
    rows: int
    matrix_at: int  # byte offset of the input matrix's values


def is_fasttext(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a fastText model (its magic number)."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") == MAGIC


def load_fasttext(path: str, limit: int | None = None) -> tuple[list[str], np.ndarray]:
    """The words (V,) and vectors (V, D) float32 of the fastText model at ``path`` (a
    local, uncompressed file); ``limit``: the first ``limit`` words only."""
    try:
        with open(path, "rb") as fin:
            data = mmap.mmap(fin.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as err:  # ValueError: an empty file
        raise FormatError(f"{path}: cannot read the fastText model: {err}") from None
    try:
        model = parsed_model(data, path)
        n = len(model.words) if limit is None else min(limit, len(model.words))
        words = [decode_word(word) for word in model.words[:n]]
        split = split_word(words)  # fastText ends its words at whitespace too
        if split:
            raise damaged(path, split)
        vectors = word_vectors(input_matrix(data, model), model, n)
    finally:
        with suppress(BufferError):  # arrays a traceback still holds use the map: it closes as they go
            data.close()
    return words, vectors


def parsed_model(data: mmap.mmap, path: str) -> Model:
    """``read_model``, a file cut short inside its header or dictionary a FormatError."""
    try:
        return read_model(data, path)
    except (struct.error, IndexError):
        raise damaged(path, "it ends inside its header or dictionary") from None


def input_matrix(data: mmap.mmap, model: Model) -> np.ndarray:
    """The (rows, D) float32 input matrix of ``model``, a view of the mapped file ``data``."""
    matrix = np.frombuffer(data, dtype="<f4", count=model.rows * model.dim, offset=model.matrix_at)
    return matrix.reshape(model.rows, model.dim)


def read_model(data, path: str) -> Model:
    """Parse the header, arguments and dictionary of the model in ``data`` (bytes-like);
    FormatError for settings out of the bounds above."""
    magic, version = struct.unpack_from("<2i", data, 0)
    if magic != MAGIC or version not in VERSIONS:
        raise FormatError(f"{path}: fastText model version {version} is not supported (only {VERSIONS})")
    args = ARGS.unpack_from(data, 8)
    dim, model_kind, bucket, minn, maxn = args[0], args[7], args[8], args[9], args[10]
    if version == 11 and model_kind == SUPERVISED:
        maxn = 0  # fastText's own rule for old supervised models
    check_settings(path, dim, bucket, minn, maxn)
    at = 8 + ARGS.size
    size, nwords, _labels, _tokens, pruned = DICTIONARY.unpack_from(data, at)
    if not 0 <= nwords <= size:
        raise damaged(path, f"{nwords:,} words in a dictionary of {size:,} entries")
    at += DICTIONARY.size
    words = []
    for i in range(size):
        end = data.find(b"\0", at)
        if end < 0:
            raise damaged(path, f"dictionary entry {i + 1:,} has no end")
        if i < nwords:
            words.append(bytes(data[at:end]))
        at = end + 10  # the NUL, the int64 count and the int8 type
    at += 8 * max(pruned, 0)
    if data[at]:
        raise quantized(path)
    rows, columns = MATRIX.unpack_from(data, at + 1)
    at += 1 + MATRIX.size
    if columns != dim or rows != nwords + bucket:
        raise damaged(
            path,
            f"input matrix of {rows:,} x {columns} values, where its {nwords:,} words and {bucket:,} buckets "
            f"make {nwords + bucket:,} x {dim}",
        )
    if at + 4 * rows * columns > len(data):
        raise damaged(path, "it ends inside its input matrix")
    return Model(words, dim, bucket, minn, maxn, rows, at)


def check_settings(path: str, dim: int, bucket: int, minn: int, maxn: int) -> None:
    """FormatError unless ``dim``, ``bucket`` and the n-gram lengths ``minn`` and ``maxn``
    (characters) are within the bounds the module's docstring gives."""
    for name, length in (("minn", minn), ("maxn", maxn)):
        if not 0 <= length <= MAX_NGRAM:
            raise damaged(path, f"{name} {length}: n-grams are 0 to {MAX_NGRAM} characters long")
    if dim < 1:
        raise damaged(path, f"dim {dim}")
    if bucket < 0:
        raise damaged(path, f"bucket {bucket}")
    if bucket == 0 and has_ngrams(minn, maxn):
        raise damaged(path, f"bucket 0, where minn {minn} and maxn {maxn} make n-grams, hashed into buckets")


def damaged(path: str, why: str) -> FormatError:
    """The error for a model whose header, dictionary or matrix is damaged: ``why``."""
    return FormatError(f"{path}: damaged fastText model ({why})")


def has_ngrams(minn: int, maxn: int) -> bool:
    """Whether n-gram lengths ``minn`` to ``maxn`` give a word any n-gram."""
    return maxn >= max(minn, 1)


def quantized(path: str) -> FormatError:
    """The error for a quantized model (``.ftz``), whose rows are codes, not vectors."""
    return FormatError(
        f"{path} is a quantized fastText model: its vectors cannot be read; write them with fastText: "
        f"fasttext print-word-vectors {path} < words.txt > vectors.txt (one word a line; w2v reads vectors.txt)"
    )


def word_vectors(matrix: np.ndarray, model: Model, n: int) -> np.ndarray:
    """The vectors (n, D) float32 of the first ``n`` words: each the mean of its row
    and its n-grams' rows of the (rows, D) input ``matrix``."""
    out = np.empty((n, model.dim), dtype=np.float32)
    nwords = len(model.words)
    for start in range(0, n, BLOCK_WORDS):
        block = model.words[start : min(start + BLOCK_WORDS, n)]
        owners, buckets = ngram_buckets(block, model.minn, model.maxn, model.bucket)
        sums = matrix[start : start + len(block)].astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # past float32's range: inf or NaN, as fastText's sums
            np.add.at(sums, owners, matrix[nwords + buckets])
        counts = 1 + np.bincount(owners, minlength=len(block))
        out[start : start + len(block)] = sums * (np.float32(1) / counts.astype(np.float32))[:, None]
    return out


def ngram_buckets(words: list[bytes], minn: int, maxn: int, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """fastText's ``computeSubwords`` for a block of words: the index in ``words`` of
    each character n-gram's word and its bucket (int64 arrays), n-gram by n-gram,
    vectorised over the words: at each start byte of a character, n grows one
    character (a byte and its UTF-8 continuation bytes) at a time."""
    padded = [b"<" + word + b">" for word in words]
    lengths = np.array([0 if word == EOS else len(p) for word, p in zip(words, padded, strict=True)])
    width = int(lengths.max(initial=0))
    if not has_ngrams(minn, maxn) or width == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    text = np.zeros((len(words), width + 1), dtype=np.uint8)  # a zero byte past every word
    for i, p in enumerate(padded):
        text[i, : lengths[i]] = np.frombuffer(p, dtype=np.uint8)[: lengths[i]]
    signed = text.view(np.int8).astype(np.int32).view(np.uint32)  # a byte as fastText hashes it
    continuation = (text & 0xC0) == 0x80
    owners, buckets = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]  # n-grams may all be too short
    for start in range(width):
        rows = np.flatnonzero((start < lengths) & ~continuation[:, start])
        hashes = np.full(len(rows), FNV_OFFSET, dtype=np.uint32)
        ends = np.full(len(rows), start)
        for size in range(1, maxn + 1):
            left = ends < lengths[rows]
            rows, hashes, ends = rows[left], hashes[left], ends[left]
            if not len(rows):
                break  # every word ended: no longer n-gram starts here
            more = np.ones(len(rows), dtype=bool)  # the first byte of the character, then its continuations
            while more.any():
                hashes[more] = (hashes[more] ^ signed[rows[more], ends[more]]) * FNV_PRIME
                ends[more] += 1
                more &= continuation[rows, ends] & (ends < lengths[rows])
            if size >= minn:
                kept = ~((size == 1) & ((start == 0) | (ends == lengths[rows])))  # not "<" or ">" alone
                owners.append(rows[kept])
                buckets.append((hashes[kept] % np.uint32(bucket)).astype(np.int64))
    return np.concatenate(owners), np.concatenate(buckets)
