"""Every common vectors file, recognised by its first bytes: read, or named with the
command that converts it.

- word2vec text or binary (``"COUNT DIM"`` first line; fastText's ``.vec`` too) and
  ``.npy`` exports: ``vectorio.word2vec``;
- text without that line, ``word v1 ... vD`` from the first line (GloVe's files,
  fastText's ``print-word-vectors``): ``word2vec.load_headerless``;
- w2v's own model files and checkpoints (a zip: numpy's ``.npz``; a checkpoint
  folder too): their words and ``syn0``, ``state.load_word_vectors``;
- fastText's ``.bin`` models (magic 793712314): ``vectorio.fasttext``;
- Python pickles (gensim's ``KeyedVectors.save`` and ``Word2Vec.save`` files, ``.kv``,
  ``.model``): never unpickled, which would run their code; the error names the
  class the pickle holds, read from its opcodes without executing them, and gives the
  one gensim command that writes it as word2vec binary.
"""

import json
import os
import pickletools
import shlex
from typing import NamedTuple

import numpy as np

from w2v.corpus.sources import stream_errors
from w2v.errors import FormatError, W2VError
from w2v.files import COMPRESSED, is_url, open_input, without_bom
from w2v.vectorio.fasttext import is_fasttext, load_fasttext
from w2v.vectorio.modelfile import CHECKPOINT_FILE, StoredVectors, load_word_vectors
from w2v.vectorio.subwords import SubwordVectors
from w2v.vectorio.word2vec import is_number, load_headerless, load_vectors
from w2v.words import decode_word

HEAD_BYTES = 1 << 16  # bytes read to recognise a file
ZIP_MAGIC = b"PK\x03\x04"
PICKLE_PROTOCOLS = range(2, 6)  # protocol 2 and later start with PROTO (0x80) and the protocol


class Loaded(NamedTuple):
    """What a vectors file holds: its ``words`` (V,) and float32 ``vectors`` (V, D);
    the word ``counts`` ((V,) int64) of a model file; the ``subwords`` of a model with
    character n-grams, which build a vector for any word."""

    words: list[str]
    vectors: np.ndarray
    counts: np.ndarray | None = None
    subwords: SubwordVectors | None = None


def load_any(
    path: str | os.PathLike, binary: bool | None = None, limit: int | None = None, no_header: bool = False
) -> Loaded:
    """The words, vectors, counts and subwords (``Loaded``) of any file above; ``binary``
    says which word2vec format (None: detect it), ``no_header`` that the file is text
    without the ``COUNT DIM`` line (else detected from its first line). ``limit``: the
    first ``limit`` words only. FormatError naming what a file is when it cannot be read."""
    path = os.fspath(path)
    if limit is not None and limit < 0:
        raise W2VError(f"limit must be >= 0, not {limit}")
    kind = file_kind(path) if not os.path.isdir(path) and (is_url(path) or os.path.exists(path)) else "word2vec"
    if kind == "model" or (os.path.isdir(path) and os.path.isfile(os.path.join(path, CHECKPOINT_FILE))):
        return model_vectors(load_word_vectors(path, limit))
    if kind == "fasttext":
        check_mappable(path)
        words, vectors, subwords = load_fasttext(path, limit)
        return Loaded(words, vectors, subwords=subwords)
    if no_header or (kind == "headerless" and binary is None):
        return Loaded(*load_headerless(path, limit))
    return Loaded(*load_vectors(path, binary=binary, limit=limit))


def check_mappable(path: str) -> None:
    """FormatError for the fastText model ``path`` compressed or at a URL: w2v maps a
    ``.bin`` file itself, where a query reads only the rows it needs."""
    if path.endswith(COMPRESSED) or is_url(path):
        raise FormatError(f"{path} is a fastText model: decompress it first (w2v maps the .bin file itself)")


def model_vectors(stored: StoredVectors) -> Loaded:
    """``Loaded`` from a w2v model file's ``StoredVectors``: a subword model's vectors
    are its words' composed ones (each the mean of its row and its n-grams'), as its
    ``-o`` file holds them, and its ``subwords`` build any other word."""
    words = [decode_word(word) for word in stored.words]
    if stored.ngrams is None or stored.ngram_rows is None:
        return Loaded(words, stored.rows, stored.counts)
    subwords = SubwordVectors(stored.words, stored.rows, stored.ngram_rows, stored.ngrams)
    return Loaded(words, subwords.vocabulary_vectors(), stored.counts, subwords)


def file_head(path: str) -> bytes | None:
    """The first ``HEAD_BYTES`` of the file at ``path`` (decompressed, without the UTF-8
    byte-order mark a text file may start with), which tell what it is; None where it
    cannot be read."""
    try:
        with open_input(path) as fin:
            return without_bom(fin.read(HEAD_BYTES))
    except (ValueError, *stream_errors()):  # type: ignore[misc]  # a tuple built at run time
        return None


def file_kind(path: str) -> str:
    """What the file at ``path`` is: ``"model"`` (a zip: w2v's ``.npz``), ``"fasttext"``,
    ``"headerless"`` (text whose first line is a word and numbers) or ``"word2vec"``
    (anything else, left to ``vectorio.word2vec``); FormatError for a pickle."""
    if path.endswith(".npy"):
        return "word2vec"
    head = file_head(path)
    if head is None:
        return "word2vec"  # unreadable or damaged: formats says why
    if head.startswith(ZIP_MAGIC):
        return "model"
    if is_fasttext(head):
        return "fasttext"
    if head[:1] == b"\x80" and head[1:2] and head[1] in PICKLE_PROTOCOLS:
        raise FormatError(pickle_message(path, head))
    return "headerless" if is_headerless(head) else "word2vec"


def is_headerless(head: bytes) -> bool:
    """Whether ``head`` starts with ``word v1 ... vD`` lines (D >= 2; a file of one value a
    word needs ``no_header``) rather than ``COUNT DIM``: the first line a word and numbers,
    not integers alone, the second, if ``head`` holds it whole, as many fields."""
    lines = head.split(b"\n", 2)
    first = lines[0].split()
    if len(first) < 3 or not all(is_number(value) for value in first[1:]):
        return False
    if all(value.lstrip(b"+-").isdigit() for value in first[1:]):
        return False  # integers alone: a damaged "COUNT DIM" line more likely than vectors
    return len(lines) < 3 or not lines[1].strip() or len(lines[1].split()) == len(first)


def pickle_message(path: str, head: bytes) -> str:
    """What the pickle at ``path`` holds and how to convert it (for gensim's classes)."""
    module, name = pickled_class(head)
    if not module.startswith("gensim."):
        shown = f" ({module}.{name})" if module else ""
        return f"{path} is a Python pickle{shown}, not a vectors file: w2v does not unpickle files (it runs their code)"
    target = converted_name(path)
    keyed = name.endswith("KeyedVectors")
    code = (
        f"from {module} import {name}; {name}.load({json.dumps(path)})"
        f"{'' if keyed else '.wv'}.save_word2vec_format({json.dumps(target)}, binary=True)"
    )
    return (
        f"{path} is a gensim {name} file (a Python pickle, which w2v does not load: unpickling runs code); "
        f"write its vectors with gensim: python -c {shlex.quote(code)}"
    )


def pickled_class(head: bytes) -> tuple[str, str]:
    """The module and name of the first class a pickle refers to (the saved object's),
    read from its opcodes (``pickletools.genops`` parses, it runs nothing); ``("", "")``
    if none is found in ``head``."""
    strings: list[str] = []
    try:
        for opcode, arg, _ in pickletools.genops(head):
            if opcode.name == "GLOBAL" and isinstance(arg, str):
                module, _, name = arg.partition(" ")
                return module, name
            if opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                return strings[-2], strings[-1]
            if isinstance(arg, str) and "UNICODE" in opcode.name:
                strings.append(arg)
    except (ValueError, EOFError):  # the head ends inside an opcode
        pass
    return "", ""


def converted_name(path: str) -> str:
    """Where to write a converted pickle: ``X.kv`` -> ``X.bin`` (``X.w2v.bin`` for ``X.bin``)."""
    stem, extension = os.path.splitext(path)
    return f"{stem}.w2v.bin" if extension == ".bin" else f"{stem}.bin"


def vectors_kind(path: str) -> str | None:
    """What the file at ``path`` holds if it is vectors another tool reads: "a fastText
    model", "GloVe vectors" (no header), "word2vec vectors" (a ``COUNT DIM`` first
    line), else None: for the error where a model file is needed."""
    head = file_head(path)
    if head is None:
        return None
    if is_fasttext(head):
        return "a fastText model"
    if is_headerless(head):
        return "GloVe vectors"
    first = head.split(b"\n", 1)[0].split()
    return "word2vec vectors" if len(first) == 2 and all(value.isdigit() for value in first) else None
