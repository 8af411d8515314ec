"""fastText's ``.bin`` models, read for their word vectors and written, without fastText.

The layout (fastText's ``FastText::saveModel``, format versions 11 and 12), all
little-endian: the int32 magic 793712314 and the version; the arguments (12 int32:
dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn,
lrUpdateRate; a float64 t); the dictionary (int32 size, nwords, nlabels; int64
ntokens, pruneidx_size; per entry its bytes, a NUL, an int64 count and an int8
type, words before labels; pruneidx_size int32 pairs); a quantization flag byte;
the input matrix (int64 rows, int64 columns, float32 values): the nwords words'
rows, then ``bucket`` rows of character n-grams; then the output's quantization
flag and matrix (nwords rows for the unsupervised models), not read.

A word's vector is, as fastText's ``getWordVector`` computes it, the mean of its
row and the rows of its character n-grams (``w2v.corpus.ngrams``, composed by
``w2v.vectorio.subwords``). The input matrix is memory-mapped: a 7 GB model costs
only the pages of the rows used, and the n-gram rows stay mapped for building the
vectors of words the model has never seen.

fastText checks none of its settings when it loads a model; this reader refuses
(``FormatError``, one line) the values no model fastText trains can hold, and the
writer refuses to write them (``W2VError``):

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

``save_fasttext`` writes format version 12 as ``FastText::saveModel`` does, an
unsupervised model (``FastTextModel``: the words, their counts, both matrices and
the ``FastTextSettings``), which ``fasttext.load_model`` and gensim's
``load_facebook_model`` read; ``w2v.vectorio.as_fasttext`` makes one of a w2v model.
"""

import mmap
import os
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO, NamedTuple

import numpy as np

from w2v.corpus.ngrams import NgramSettings
from w2v.errors import FormatError, W2VError
from w2v.files import atomic_output
from w2v.vectorio.subwords import SubwordVectors
from w2v.words import decode_word, encode_word, split_word

MAGIC = 793712314
VERSIONS = (11, 12)
VERSION = 12  # the version written
ARGS = struct.Struct("<12id")  # dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate t
ARG_NAMES = (  # ARGS' fields, by fastText's names
    *("dim", "ws", "epoch", "minCount", "neg", "wordNgrams", "loss", "model", "bucket", "minn", "maxn"),
    *("lrUpdateRate", "t"),
)
DICTIONARY = struct.Struct("<3i2q")  # size nwords nlabels ntokens pruneidx_size
ENTRY_END = struct.Struct("<qb")  # after a word's bytes and its NUL: its count and type
MATRIX = struct.Struct("<2q")  # rows columns
SUPERVISED = 3  # fastText's model_name::sup
MODELS = {"cbow": 1, "skipgram": 2}  # fastText's model_name
LOSSES = {"hs": 1, "ns": 2, "softmax": 3}  # fastText's loss_name
MODEL_NAMES = {code: name for name, code in MODELS.items()} | {SUPERVISED: "supervised"}
LOSS_NAMES = {code: name for name, code in LOSSES.items()} | {4: "ova"}  # one-vs-all, of supervised models
WORD_TYPE = 0  # fastText's entry_type::word
NO_PRUNING = -1  # pruneidx_size of a model that was never pruned (quantized)
MAX_NGRAM = 100  # the longest n-gram, in characters, that minn and maxn may name (see above)
WRITE_ROWS = 65536  # matrix rows written at once
FASTTEXT_WORD_END = re.compile("[ \t\n\r\x0b\x0c\x00]")  # what ends a word in fastText's input and dictionary


@dataclass
class FastTextHeader:
    """What a ``.bin`` says of its word vectors: the words (bytes), the n-gram settings
    and where the input matrix starts; and of its training: its arguments (``args``,
    by fastText's names, ``model`` and ``loss`` named, an unknown one by its number),
    the tokens it read (``ntokens``) and its words' corpus ``counts``."""

    words: list[bytes]
    dim: int
    ngrams: NgramSettings
    rows: int
    matrix_at: int  # byte offset of the input matrix's values
    args: dict[str, int | float | str]
    ntokens: int
    counts: list[int]


def output_at(model: FastTextHeader) -> int:
    """The byte offset of the output matrix's quantization flag: past the input matrix."""
    return model.matrix_at + 4 * model.rows * model.dim


def is_fasttext(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a fastText model (its magic number)."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") == MAGIC


def load_fasttext(path: str, limit: int | None = None) -> tuple[list[str], np.ndarray, SubwordVectors | None]:
    """The words (V,) and vectors (V, D) float32 of the fastText model at ``path`` (a
    local, uncompressed file), and its ``SubwordVectors`` (its matrix memory-mapped)
    where the model has n-grams, else None; ``limit``: the first ``limit`` words only
    (a later word is then built from its n-grams, as one the model never saw)."""
    model = read_header(path)
    n = len(model.words) if limit is None else min(limit, len(model.words))
    words = [decode_word(word) for word in model.words[:n]]
    split = split_word(words)  # fastText ends its words at whitespace too
    if split:
        raise damaged(path, split)
    matrix = input_matrix(path, model)
    nwords = len(model.words)
    subwords = SubwordVectors(model.words[:n], matrix[:n], matrix[nwords:], model.ngrams)
    return words, subwords.vocabulary_vectors(), subwords if model.ngrams.has_ngrams() else None


def read_header(path: str) -> FastTextHeader:
    """The header and dictionary of the model at ``path``, read through a map closed at once."""
    try:
        with open(path, "rb") as fin:
            data = mmap.mmap(fin.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as err:  # ValueError: an empty file
        raise FormatError(f"{path}: cannot read the fastText model: {err}") from None
    with data:  # parsing copies what it keeps: no view of the map outlives it
        return parsed_model(data, path)


def input_matrix(path: str, model: FastTextHeader) -> np.ndarray:
    """The (rows, D) float32 input matrix of ``model``, memory-mapped from ``path``."""
    if model.rows == 0:  # no words and no buckets: nothing to map
        return np.zeros((0, model.dim), dtype=np.float32)
    try:
        return np.memmap(path, dtype="<f4", mode="r", offset=model.matrix_at, shape=(model.rows, model.dim))
    except (OSError, ValueError) as err:
        raise FormatError(f"{path}: cannot read the fastText model: {err}") from None


def parsed_model(data: mmap.mmap, path: str) -> FastTextHeader:
    """``read_model``, a file cut short inside its header or dictionary a FormatError."""
    try:
        return read_model(data, path)
    except (struct.error, IndexError):
        raise damaged(path, "it ends inside its header or dictionary") from None


def read_model(data, path: str) -> FastTextHeader:
    """Parse the header, arguments and dictionary of the model in ``data`` (bytes-like);
    FormatError for settings out of the bounds above."""
    magic, version = struct.unpack_from("<2i", data, 0)
    if magic != MAGIC or version not in VERSIONS:
        raise FormatError(f"{path}: fastText model version {version} is not supported (only {VERSIONS})")
    args: dict[str, int | float | str] = dict(zip(ARG_NAMES, ARGS.unpack_from(data, 8), strict=True))
    dim, bucket, minn, maxn = (int(args[name]) for name in ("dim", "bucket", "minn", "maxn"))
    if version == 11 and args["model"] == SUPERVISED:
        maxn = args["maxn"] = 0  # fastText's own rule for old supervised models
    problem = settings_problem(dim, NgramSettings(minn, maxn, bucket))
    if problem:
        raise damaged(path, problem)
    args["model"] = MODEL_NAMES.get(int(args["model"]), str(args["model"]))
    args["loss"] = LOSS_NAMES.get(int(args["loss"]), str(args["loss"]))
    at = 8 + ARGS.size
    size, nwords, _labels, ntokens, pruned = DICTIONARY.unpack_from(data, at)
    if not 0 <= nwords <= size:
        raise damaged(path, f"{nwords:,} words in a dictionary of {size:,} entries")
    at += DICTIONARY.size
    words, counts = [], []
    for i in range(size):
        end = data.find(b"\0", at)
        if end < 0:
            raise damaged(path, f"dictionary entry {i + 1:,} has no end")
        if i < nwords:
            words.append(bytes(data[at:end]))
            counts.append(ENTRY_END.unpack_from(data, end + 1)[0])
        at = end + 1 + ENTRY_END.size  # the NUL, the int64 count and the int8 type
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
    return FastTextHeader(words, dim, NgramSettings(minn, maxn, bucket), rows, at, args, ntokens, counts)


def read_fasttext(path: str) -> "FastTextModel":
    """The whole unsupervised model at ``path``, to go on training it: its words, counts,
    both matrices (memory-mapped) and settings. FormatError, naming what the file
    lacks, for a supervised model (its outputs are labels, not words), a loss w2v does
    not train, a quantized output matrix, or none."""
    model = read_header(path)
    args = model.args
    if args["model"] not in MODELS:
        raise FormatError(
            f"{path} is a supervised fastText model (a classifier): it lacks output weights of words "
            "to go on training; start from its word vectors alone (w2v convert it to a vectors file)"
        )
    if args["loss"] not in LOSSES:
        raise damaged(path, f"loss {args['loss']}, none of an unsupervised model's: {', '.join(LOSSES)}")
    ints = {name: int(args[name]) for name in ("ws", "epoch", "minCount", "neg", "lrUpdateRate")}
    settings = FastTextSettings(
        str(args["model"]), str(args["loss"]), ints["ws"], ints["epoch"], ints["minCount"], ints["neg"],
        ints["lrUpdateRate"], float(args["t"]), model.ngrams,
    )  # fmt: skip
    output = output_matrix(path, output_at(model), (len(model.words), model.dim))
    counts = np.array(model.counts, dtype=np.int64)
    words = [decode_word(word) for word in model.words]
    return FastTextModel(words, counts, input_matrix(path, model), output, settings, model.ntokens)


def output_matrix(path: str, at: int, shape: tuple[int, int]) -> np.ndarray:
    """The (V, D) float32 output matrix whose quantization flag is at byte ``at`` of
    ``path``, memory-mapped; FormatError where the file lacks it or quantized it."""
    try:
        with open(path, "rb") as fin:
            fin.seek(at)
            head = fin.read(1 + MATRIX.size)
    except OSError as err:
        raise FormatError(f"{path}: cannot read the fastText model: {err}") from None
    if len(head) < 1 + MATRIX.size:
        raise FormatError(f"{path} lacks its output matrix (the file ends after the input matrix)")
    if head[0]:
        raise quantized(path)
    rows, columns = MATRIX.unpack_from(head, 1)
    if (rows, columns) != shape:
        words = f"{shape[0]:,} x {shape[1]}"
        raise damaged(path, f"output matrix of {rows:,} x {columns} values, where its words make {words}")
    values_at = at + len(head)
    if values_at + 4 * rows * columns > os.path.getsize(path):
        raise damaged(path, "it ends inside its output matrix")
    if rows == 0:
        return np.zeros(shape, dtype=np.float32)
    return np.memmap(path, dtype="<f4", mode="r", offset=values_at, shape=shape)


def settings_problem(dim: int, ngrams: NgramSettings) -> str | None:
    """What is out of the bounds the module's docstring gives in ``dim`` and the n-gram
    ``settings``, for an error message; None when nothing is."""
    for name, length in (("minn", ngrams.minn), ("maxn", ngrams.maxn)):
        if not 0 <= length <= MAX_NGRAM:
            return f"{name} {length}: n-grams are 0 to {MAX_NGRAM} characters long"
    if dim < 1:
        return f"dim {dim}"
    if ngrams.bucket < 0:
        return f"bucket {ngrams.bucket}"
    if ngrams.bucket == 0 and ngrams.has_ngrams():
        return f"bucket 0, where minn {ngrams.minn} and maxn {ngrams.maxn} make n-grams, hashed into buckets"
    return None


def damaged(path: str, why: str) -> FormatError:
    """The error for a model whose header, dictionary or matrix is damaged: ``why``."""
    return FormatError(f"{path}: damaged fastText model ({why})")


def quantized(path: str) -> FormatError:
    """The error for a quantized model (``.ftz``), whose rows are codes, not vectors."""
    return FormatError(
        f"{path} is a quantized fastText model: its vectors cannot be read; write them with fastText: "
        f"fasttext print-word-vectors {path} < words.txt > vectors.txt (one word a line; w2v reads vectors.txt)"
    )


# --- writing ------------------------------------------------------------------------


class FastTextSettings(NamedTuple):
    """fastText's arguments a model file keeps, besides its dimension: the ``model``
    ("cbow" or "skipgram"), the ``loss`` ("hs", "ns" or "softmax"), the window ``ws``,
    ``epoch``, ``min_count``, ``neg`` (noise words a pair), ``lr_update_rate``,
    the subsampling threshold ``t`` and the character ``ngrams``. The defaults are
    fastText's unsupervised ones."""

    model: str = "skipgram"
    loss: str = "ns"
    ws: int = 5
    epoch: int = 5
    min_count: int = 5
    neg: int = 5
    lr_update_rate: int = 100
    t: float = 1e-4
    ngrams: NgramSettings = NgramSettings()


class FastTextModel(NamedTuple):
    """An unsupervised model to write: its ``words`` (V,), their corpus ``counts`` (V,)
    int64, the ``input`` matrix (V + bucket, D) float32 (the words' rows, then the
    n-gram buckets'), the ``output`` matrix (V, D) float32 and its ``settings``;
    ``ntokens``, the tokens training read (None: the counts' sum)."""

    words: Sequence[str]
    counts: np.ndarray
    input: np.ndarray
    output: np.ndarray
    settings: FastTextSettings = FastTextSettings()
    ntokens: int | None = None


def save_fasttext(path: str | os.PathLike, model: FastTextModel) -> None:
    """Write ``model`` to ``path`` as fastText's ``saveModel`` does (format version 12),
    through a temporary file renamed when complete: a failure never leaves a
    half-written file. W2VError (one line) for a model fastText could not hold."""
    path = os.fspath(path)
    problem = model_problem(model)
    if problem:
        raise W2VError(refusal(path, problem))
    with atomic_output(path) as out:
        out.write(header_bytes(model))
        out.write(dictionary_bytes(model))
        out.write(b"\0")  # the input matrix is not quantized
        write_matrix(out, model.input)
        out.write(b"\0")  # nor is the output matrix
        write_matrix(out, model.output)


def model_problem(model: FastTextModel) -> str | None:
    """What in ``model`` fastText could not hold or would read otherwise; None if nothing."""
    settings, words = model.settings, len(model.words)
    if settings.model not in MODELS:
        return f"model {settings.model!r} (fastText's are {', '.join(MODELS)})"
    if settings.loss not in LOSSES:
        return f"loss {settings.loss!r} (fastText's are {', '.join(LOSSES)})"
    dim = model.input.shape[1] if model.input.ndim == 2 else 0
    problem = settings_problem(dim, settings.ngrams)
    if problem:
        return problem
    expected = {
        "counts": (np.shape(model.counts), (words,)),
        "input matrix": (model.input.shape, (words + settings.ngrams.bucket, dim)),
        "output matrix": (model.output.shape, (words, dim)),
    }
    for name, (shape, wanted) in expected.items():
        if shape != wanted:
            return f"{name} of shape {shape}, not {wanted} ({words:,} words, {settings.ngrams.bucket:,} buckets)"
    return dictionary_problem(model.words)


def dictionary_problem(words: Sequence[str]) -> str | None:
    """Why fastText's dictionary cannot hold ``words``: one is empty, or holds whitespace
    or a NUL, which end a word there (a corpus word may hold a NUL); None if it can."""
    return split_word(list(words), FASTTEXT_WORD_END, "whitespace or a NUL")


def refusal(path: str, problem: str) -> str:
    """The one line refusing to write a fastText model to ``path``, for ``problem``."""
    return f"cannot write {path} as a fastText model: {problem}"


def header_bytes(model: FastTextModel) -> bytes:
    """The magic number, the version and fastText's ``Args::save``."""
    s, ngrams = model.settings, model.settings.ngrams
    word_ngrams = 1  # no word n-grams: an unsupervised model's
    args = ARGS.pack(
        *(model.input.shape[1], s.ws, s.epoch, s.min_count, s.neg, word_ngrams, LOSSES[s.loss], MODELS[s.model]),
        *(ngrams.bucket, ngrams.minn, ngrams.maxn, s.lr_update_rate, s.t),
    )
    return struct.pack("<2i", MAGIC, VERSION) + args


def dictionary_bytes(model: FastTextModel) -> bytes:
    """fastText's ``Dictionary::save``: the sizes, then each word's bytes, a NUL, its count
    and its type (a word); no labels, never pruned."""
    counts = np.asarray(model.counts, dtype=np.int64).tolist()
    ntokens = int(sum(counts)) if model.ntokens is None else model.ntokens
    words = len(model.words)
    head = DICTIONARY.pack(words, words, 0, ntokens, NO_PRUNING)
    entries = (
        encode_word(word) + b"\0" + ENTRY_END.pack(count, WORD_TYPE)
        for word, count in zip(model.words, counts, strict=True)
    )
    return head + b"".join(entries)


def write_matrix(out: BinaryIO, matrix: np.ndarray) -> None:
    """fastText's ``DenseMatrix::save``: rows and columns (int64), then the float32
    values row by row, ``WRITE_ROWS`` rows at a time."""
    out.write(MATRIX.pack(*matrix.shape))
    for start in range(0, matrix.shape[0], WRITE_ROWS):
        out.write(np.ascontiguousarray(matrix[start : start + WRITE_ROWS], dtype="<f4").data)
