"""Word vectors to query: the words, a float32 matrix, nearest neighbours and analogies.

``Vectors`` holds the words, most frequent first, and their (V, D) float32 matrix;
it reads and writes them through ``w2v.formats`` and searches the matrix's unit rows
through ``w2v.query``. A query word outside the vocabulary raises
``UnknownWordError`` with close spellings.
"""

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from w2v.errors import W2VError
from w2v.formats import encode_word, load_vectors, save_npy, save_projector, save_vectors
from w2v.query import analogy_method, cosmul, nearest, unit_rows
from w2v.report import TrainReport

SUGGEST_CANDIDATES = 50_000  # spelling suggestions look among this many most frequent words


@dataclass
class Vectors:
    """``words`` (V,) and their ``vectors`` (V, D) float32, most frequent word first."""

    words: list[str]
    vectors: np.ndarray
    report: TrainReport | None = None
    _unit: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _index: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(f"{len(self.words)} words but vectors of shape {self.vectors.shape}")

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        """D, the number of values a vector."""
        return self.vectors.shape[1]

    # --- reading and writing ---------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike, binary: bool | None = None, limit: int | None = None) -> "Vectors":
        """Read a word2vec text or binary file (``binary=None``: detect it), or an ``.npy``
        export beside its ``.vocab.txt``. ``limit``: only the first ``limit`` records."""
        return cls(*load_vectors(path, binary=binary, limit=limit))

    def save(self, path: str | os.PathLike, binary: bool | None = None) -> None:
        """Write word2vec binary (``binary=True``) or text; ``None`` picks binary for
        ``.bin`` names. A ``.gz .bz2 .xz .zst`` name is compressed (``v.bin.gz``: binary,
        gzipped). Written beside ``path`` and renamed: never half-written."""
        save_vectors(path, self.words, self.vectors, binary)

    def save_npy(self, path: str | os.PathLike) -> str:
        """Write the matrix as ``path`` (``.npy``) and the words, one a line, beside it
        as ``<stem>.vocab.txt``; returns the vocabulary's path. Both are written beside
        their names and renamed, the vocabulary first: if it fails, neither is replaced."""
        return save_npy(path, self.words, self.vectors)

    def save_projector(self, prefix: str) -> tuple[str, str]:
        """Write ``PREFIX_vectors.tsv`` and ``PREFIX_metadata.tsv``, the files TensorBoard's
        Embedding Projector (projector.tensorflow.org, "Load") reads; returns their paths."""
        return save_projector(prefix, self.words, self.vectors)

    # --- lookups ---------------------------------------------------------------------------

    @property
    def unit(self) -> np.ndarray:
        """The rows scaled to unit length (zero rows stay zero), float32, computed once.
        Stale if ``vectors`` is changed in place afterwards."""
        if self._unit is None:
            self._unit = unit_rows(self.vectors)
        return self._unit

    @property
    def word_index(self) -> dict[str, int]:
        """Word to row; a word listed twice maps to its first (most frequent) row."""
        if self._index is None:
            index: dict[str, int] = {}
            for i in range(len(self.words) - 1, -1, -1):
                index[self.words[i]] = i
            self._index = index
        return self._index

    def __contains__(self, word: object) -> bool:
        return word in self.word_index

    def index(self, word: str) -> int:
        """The row of ``word``; ``UnknownWordError`` (with close spellings) if absent."""
        try:
            return self.word_index[word]
        except KeyError:
            raise UnknownWordError(word, self.suggest(word)) from None

    def vector(self, word: str) -> np.ndarray:
        """The (D,) row of ``word``, a view into ``vectors``."""
        return self.vectors[self.index(word)]

    def suggest(self, word: str, n: int = 3) -> list[str]:
        """Close spellings of ``word`` among the most frequent words (case variants first)."""
        found = [w for w in (word.lower(), word.capitalize(), word.upper()) if w != word and w in self.word_index]
        candidates = self.words[:SUGGEST_CANDIDATES]
        found += difflib.get_close_matches(word, candidates, n=n, cutoff=0.75)
        return list(dict.fromkeys(found))[:n]

    def similarity(self, a: str, b: str) -> float:
        """Cosine of the two words' vectors."""
        u = self.unit
        return float(u[self.index(a)] @ u[self.index(b)])

    def most_similar(
        self, positive: Sequence[str], negative: Sequence[str] = (), n: int = 10, restrict: int | None = None
    ) -> list[tuple[str, float]]:
        """Words closest in cosine to the mean of the unit vectors of ``positive`` minus
        those of ``negative`` (as gensim's ``most_similar``), the query words excluded.
        ``restrict``: search only the first ``restrict`` words."""
        if isinstance(positive, str):
            positive = [positive]
        if isinstance(negative, str):
            negative = [negative]
        if not positive and not negative:
            raise W2VError("no query words given")
        rows = [self.index(w) for w in positive] + [self.index(w) for w in negative]
        weights = np.array([1.0] * len(positive) + [-1.0] * len(negative), dtype=np.float32)
        query = unit_rows((weights[:, None] * self.unit[rows]).sum(axis=0, keepdims=True))[0]
        found = nearest(self.unit, query[:, None], n, exclude=set(rows), restrict=restrict)
        return [(self.words[i], score) for i, score in found]

    def analogy(
        self, a: str, b: str, c: str, n: int = 10, method: str = "add", restrict: int | None = None
    ) -> list[tuple[str, float]]:
        """Words closest to ``a - b + c`` (``king man woman`` gives queen), the three
        excluded. ``method="add"``: 3CosAdd, cosine to the normalised sum of unit vectors;
        ``"cosmul"`` (or its alias ``"mul"``): 3CosMul of Levy & Goldberg (2014) as gensim's
        ``most_similar_cosmul``, cos(x,a)·cos(x,c) / (cos(x,b) + 1e-6) with cosines shifted
        to [0, 1]."""
        if analogy_method(method) == "add":
            return self.most_similar([a, c], [b], n=n, restrict=restrict)
        rows = [self.index(a), self.index(b), self.index(c)]
        found = nearest(self.unit, self.unit[rows].T, n, exclude=set(rows), restrict=restrict, combine=cosmul)
        return [(self.words[i], score) for i, score in found]


class UnknownWordError(W2VError):
    """A query word is not in the vocabulary; ``suggestions`` holds close spellings."""

    def __init__(self, word: str, suggestions: Sequence[str] = ()):
        self.word = word
        self.suggestions = list(suggestions)
        message = f"word not in vocabulary: '{display_word(word)}'"
        if self.suggestions:
            message += " (did you mean: " + ", ".join(display_word(w) for w in self.suggestions) + "?)"
        super().__init__(message)


CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1


def display_word(word: str) -> str:
    """``word`` (or any text from a file) safe to print on a terminal: bytes that are not
    UTF-8 become U+FFFD, and control characters, which could move the cursor, set the
    window's title or start a terminal's escape sequence, become ``\\xHH``."""
    shown = encode_word(word).decode("utf-8", "replace")
    return CONTROL_CHARACTERS.sub(lambda control: f"\\x{ord(control.group()):02x}", shown)
