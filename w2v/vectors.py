"""Word vectors: the words, a float32 matrix, and the word2vec file formats.

Binary format (word2vec.c): an ASCII header ``"V D\\n"``, then per word its bytes,
one space, D little-endian float32 and a newline. Text format: the same header,
then per line the word and D values separated by single spaces.

Words are ``str``; bytes that are not UTF-8 are kept with ``surrogateescape`` so a
word is written back exactly as it was read from the corpus.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from w2v.errors import W2VError

WRITE_ROWS = 4096  # rows formatted per write


def encode_word(word: str) -> bytes:
    """A word's bytes as they appear in the corpus and in vector files."""
    return word.encode("utf-8", "surrogateescape")


def decode_word(raw: bytes) -> str:
    """The inverse of ``encode_word``: any bytes give a str that encodes back to them."""
    return raw.decode("utf-8", "surrogateescape")


@dataclass
class TrainReport:
    """What a training run did: per-epoch mean loss (nats per example), sizes, timing."""

    vocab_size: int
    corpus_words: int  # tokens read from the corpus (one epoch, rare words included)
    train_words: int  # in-vocabulary tokens trained over all epochs
    seconds: float  # the whole run: vocabulary, encoding and training
    train_seconds: float  # the epochs alone
    epoch_loss: list[float] = field(default_factory=list)

    @property
    def words_per_second(self) -> float:
        """Trained words per second of training."""
        return self.train_words / max(self.train_seconds, 1e-9)


@dataclass
class Vectors:
    """``words`` (V,) and their ``vectors`` (V, D) float32, most frequent word first."""

    words: list[str]
    vectors: np.ndarray
    report: TrainReport | None = None

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(f"{len(self.words)} words but vectors of shape {self.vectors.shape}")

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def save(self, path: str | os.PathLike, binary: bool | None = None) -> None:
        """Write word2vec binary (``binary=True``) or text; ``None`` picks binary for
        ``.bin`` names. Written beside ``path`` and renamed: never half-written."""
        path = os.fspath(path)
        if binary is None:
            binary = path.endswith(".bin")
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "wb") as out:
                write_vectors(out, self.words, self.vectors, binary)
            os.replace(tmp, path)
        except OSError as err:
            raise W2VError(f"cannot write {path}: {err.strerror}") from None
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def write_vectors(out, words: Sequence[str], vectors: np.ndarray, binary: bool) -> None:
    """Write the header and records to the binary file object ``out``."""
    count, dim = vectors.shape
    out.write(b"%d %d\n" % (count, dim))
    row_format = " ".join(["%.6g"] * dim).encode() + b"\n"
    for start in range(0, count, WRITE_ROWS):
        block = np.ascontiguousarray(vectors[start : start + WRITE_ROWS], dtype="<f4")
        names = [encode_word(w) for w in words[start : start + WRITE_ROWS]]
        if binary:
            out.write(b"".join(name + b" " + row.tobytes() + b"\n" for name, row in zip(names, block, strict=True)))
        else:
            out.write(
                b"".join(name + b" " + row_format % tuple(row) for name, row in zip(names, block.tolist(), strict=True))
            )
