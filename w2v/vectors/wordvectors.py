"""Word vectors to query: the words, a float32 matrix, nearest neighbours and analogies.

``Vectors`` holds the words, most frequent first, and their (V, D) float32 matrix;
it reads and writes them through ``w2v.vectorio.word2vec`` and searches the matrix's unit rows
through ``w2v.vectors.search``. A query word outside the vocabulary raises
``UnknownWordError`` (a ``KeyError`` too) with close spellings.

Loaded from a subword model (a fastText ``.bin``), it also holds the model's
``subwords`` (``w2v.vectorio.subwords``) and answers as gensim's
``FastTextKeyedVectors``: a word outside the vocabulary gets the vector its
character n-grams build (``v["kingdomz"]``, ``most_similar("kingdomz")``,
``similarity``), ``"kingdomz" in v`` is True when it has an n-gram, while
``key_to_index``, ``has_index_for`` and the searched rows hold the words alone. A
word with no n-gram either gets fastText's zero vector from ``get_vector``; the
queries that need its direction raise ``UnknownWordError``.

It answers gensim's ``KeyedVectors`` calls where the names mean the same thing
(``v["king"]``, ``key_to_index``, ``index_to_key``, ``get_vector``,
``most_similar(positive, negative, topn, restrict_vocab)``, ``most_similar_cosmul``,
``similar_by_word``, ``similar_by_vector``, ``similarity``, ``n_similarity``,
``doesnt_match``, ``rank``, ``evaluate_word_analogies``, ``evaluate_word_pairs``,
``load_word2vec_format``, ``save_word2vec_format`` with ``fvocab``, ``get_vecattr(word,
"count")``) with the same results, and
converts to and from gensim's class (``to_gensim``, ``from_gensim``).
"""

import difflib
import os
import unicodedata
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from w2v.errors import FormatError, W2VError, plural
from w2v.files import write_atomic
from w2v.report import TrainReport
from w2v.vectorio.detect import load_any
from w2v.vectorio.subwords import SubwordVectors
from w2v.vectorio.word2vec import refuse_pickle_name, save_npy, save_projector, save_vectors
from w2v.vectors.evaluate import (
    DEFAULT_ANALOGIES,
    DEFAULT_SIMILARITY,
    Correlation,
    evaluate_analogies,
    evaluate_similarity,
)
from w2v.vectors.search import analogy_method, cosmul_of, nearest, nonfinite_rows, unit_rows
from w2v.words import display_word, encodable, encode_word, quoted_word

SUGGEST_CANDIDATES = 50_000  # spelling suggestions look among this many most frequent words
Key = str | int | np.integer  # a word, or a row number
Query = Key | np.ndarray | tuple  # also a (D,) vector, or a (word or vector, weight) pair
QueryTerms = Query | Sequence[Query] | None
BYTE_STRINGS = (bytes, bytearray, memoryview)  # not words: a sequence of ints, which read as row numbers


@dataclass
class Vectors:
    """``words`` (V,) and their ``vectors`` (V, D) float32, most frequent word first;
    their corpus ``counts`` ((V,) int64) where known: after training, or read from a
    model file (gensim's ``get_vecattr(word, "count")``); the ``subwords`` of a model
    with character n-grams, which build the vector of a word outside ``words``."""

    words: list[str]
    vectors: np.ndarray
    report: TrainReport | None = None
    counts: np.ndarray | None = None
    subwords: SubwordVectors | None = field(default=None, repr=False, compare=False)
    _unit: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _index: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(f"{len(self.words)} words but vectors of shape {self.vectors.shape}")
        if self.counts is not None and np.shape(self.counts) != (len(self.words),):
            raise ValueError(f"{len(self.words)} words but counts of shape {np.shape(self.counts)}")
        if self.subwords is not None and self.subwords.dim != self.dim:
            raise ValueError(f"vectors of {self.dim} values but subwords of {self.subwords.dim}")

    def __len__(self) -> int:
        return len(self.words)

    def __repr__(self) -> str:
        """``Vectors(71,290 words x 100 dims: 'the', 'of', 'and', ...)``: the size and the
        first words, never the whole vocabulary."""
        first = ", ".join(repr(word) for word in self.words[:3])
        more = ", ..." if len(self.words) > 3 else ""
        return f"Vectors({plural(len(self.words), 'word')} x {plural(self.dim, 'dim')}: {first}{more})"

    def copy(self) -> "Vectors":
        """A copy of the words, vectors, counts and subwords: the vectors an ``on_epoch_end``
        callback is given are a view of weights that training goes on changing."""
        subwords = self.subwords
        if subwords is not None:
            subwords = SubwordVectors(
                list(subwords.words), subwords.word_rows.copy(), subwords.buckets.copy(), subwords.settings
            )
        counts = None if self.counts is None else self.counts.copy()
        return Vectors(list(self.words), self.vectors.copy(), self.report, counts, subwords)

    @property
    def dim(self) -> int:
        """D, the number of values a vector."""
        return self.vectors.shape[1]

    # --- reading and writing ---------------------------------------------------------

    @classmethod
    def load(
        cls, path: str | os.PathLike, binary: bool | None = None, limit: int | None = None, no_header: bool = False
    ) -> "Vectors":
        """Read a vectors file, its kind recognised by its first bytes (``vectorio.detect``):
        word2vec text or binary (``binary=None``: detect which) and fastText's ``.vec``;
        text without the ``COUNT DIM`` line (GloVe; ``no_header=True`` says so); an
        ``.npy`` export beside its ``.vocab.txt``; a w2v model file or checkpoint (or
        its folder); a fastText ``.bin`` model (with its ``subwords``). gensim's pickles
        raise FormatError with the command that converts them. ``limit``: only the first
        ``limit`` words."""
        loaded = load_any(path, binary=binary, limit=limit, no_header=no_header)
        return cls(loaded.words, loaded.vectors, counts=loaded.counts, subwords=loaded.subwords)

    def save(self, path: str | os.PathLike, binary: bool | None = None) -> None:
        """Write word2vec binary (``binary=True``) or text; ``None`` picks binary for
        ``.bin`` names. A ``.gz .bz2 .xz .zst`` name is compressed (``v.bin.gz``: binary,
        gzipped). Written beside ``path`` and renamed: never half-written. A ``.kv`` or
        ``.model`` name with the format left to it is refused (W2VError): gensim's
        ``save`` writes a pickle there, which w2v does not write."""
        if binary is None:
            refuse_pickle_name(
                os.fspath(path),
                "save word2vec binary (.bin), text (.txt, .vec) or .npy (save_npy), or to_gensim().save(...)",
            )
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

    @classmethod
    def load_word2vec_format(
        cls,
        fname: str | os.PathLike,
        binary: bool | None = None,
        limit: int | None = None,
        encoding: str = "utf-8",
        unicode_errors: str | None = None,
        no_header: bool = False,
    ) -> "Vectors":
        """``load`` under gensim's name and keywords. ``binary=None`` detects the format
        (gensim reads text unless told). Words are decoded from ``encoding`` with
        ``unicode_errors`` (``"strict"``, ``"replace"``, ``"ignore"``...) when either is
        given; by default as ``load`` does (UTF-8, other bytes kept as they are)."""
        vectors = cls.load(fname, binary=binary, limit=limit, no_header=no_header)
        if unicode_errors is not None or encoding.lower().replace("-", "") != "utf8":
            try:
                vectors.words = [encode_word(w).decode(encoding, unicode_errors or "strict") for w in vectors.words]
            except UnicodeDecodeError as err:
                raise FormatError(f"{os.fspath(fname)}: a word is not {encoding} ({err.reason})") from None
        return vectors

    def save_word2vec_format(
        self, fname: str | os.PathLike, fvocab: str | os.PathLike | None = None, binary: bool = False
    ) -> None:
        """``save`` under gensim's name: text unless ``binary`` (as gensim), whatever the
        name; ``fvocab``: also write the word counts there, ``word count`` lines (as
        gensim and word2vec.c's -save-vocab), which needs ``counts``."""
        if fvocab is not None:
            counts = self.require_counts("fvocab")
            lines = (
                b"%s %d\n" % (encode_word(word), count) for word, count in zip(self.words, counts.tolist(), strict=True)
            )
            write_atomic(os.fspath(fvocab), b"".join(lines))
        self.save(fname, binary=binary)

    def require_counts(self, needed_by: str) -> np.ndarray:
        """The word counts; W2VError naming ``needed_by`` where they are not known."""
        if self.counts is None:
            raise W2VError(f"{needed_by} needs the word counts, which a vectors file does not hold: "
                           "they come with training or a w2v model file")  # fmt: skip
        return self.counts

    def get_vecattr(self, key: Key, attr: str) -> int:
        """gensim's per-word attribute: ``"count"``, the word's corpus count, is the one
        w2v keeps (KeyError for another; W2VError where the counts are not known)."""
        if attr != "count":
            raise KeyError(f"no attribute {attr!r}: w2v keeps the word counts only ('count')")
        return int(self.require_counts("get_vecattr")[self.get_index(key)])

    def to_gensim(self):
        """A gensim ``KeyedVectors`` of the same words and vectors (a copy), their counts
        where known; of a subword model, gensim's ``FastTextKeyedVectors`` with its
        n-gram rows, which answers words never seen as w2v and fastText do (``kv["kingdomz"]``).
        W2VError when gensim is not installed."""
        try:
            from gensim.models import KeyedVectors
            from gensim.models.fasttext import FastTextKeyedVectors
        except ImportError:
            raise W2VError("to_gensim needs gensim: pip install gensim") from None
        subwords = self.subwords
        if subwords is None:
            keyed = KeyedVectors(self.dim, dtype=np.float32)
        else:
            minn, maxn, bucket = subwords.settings
            keyed = FastTextKeyedVectors(self.dim, minn, maxn, bucket)
        keyed.add_vectors(self.words, self.vectors)
        if subwords is not None:  # the rows gensim builds a word from: each word's own, the n-grams'
            rows = [subwords.index.get(encode_word(word), -1) for word in self.words]
            keyed.vectors_vocab = np.where(np.array(rows)[:, None] >= 0, subwords.word_rows[rows], self.vectors)
            keyed.vectors_ngrams = np.array(subwords.buckets)
            keyed.recalc_char_ngram_buckets()
        if self.counts is not None:
            keyed.allocate_vecattrs(["count"], [np.int64])
            keyed.expandos["count"][:] = self.counts
        return keyed

    @classmethod
    def from_gensim(cls, keyed) -> "Vectors":
        """The words and vectors of a gensim ``KeyedVectors``, or of a model that holds
        one (``Word2Vec``, ``FastText``: its ``wv``), copied as float32."""
        keyed = getattr(keyed, "wv", keyed)
        if not hasattr(keyed, "index_to_key") or not hasattr(keyed, "vectors"):
            raise W2VError(f"not gensim KeyedVectors: {type(keyed).__name__}")
        counts = getattr(keyed, "expandos", {}).get("count")
        counts = None if counts is None else np.array(counts, dtype=np.int64)
        return cls([str(key) for key in keyed.index_to_key], np.array(keyed.vectors, dtype=np.float32), counts=counts)

    # --- evaluation (gensim's names and results) ------------------------------------

    def evaluate_word_analogies(
        self,
        analogies: str | os.PathLike = DEFAULT_ANALOGIES,
        restrict_vocab: int = 300_000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        similarity_function: str = "most_similar",
    ) -> tuple[float, list[dict]]:
        """gensim's ``evaluate_word_analogies``: ``(accuracy, sections)``, each section a
        dict of its ``section`` name and its ``correct`` and ``incorrect`` questions
        (4-tuples, upper-cased when case-insensitive), the last one ``Total accuracy``;
        of the Google analogy set (``w2v eval``'s, shipped with w2v) unless given ``analogies``.
        ``dummy4unknown``: questions with a word outside the first ``restrict_vocab``
        count as incorrect instead of being left out. ``similarity_function``:
        ``"most_similar"`` (3CosAdd) or ``"most_similar_cosmul"`` (3CosMul).
        ``w2v.vectors.evaluate.evaluate_analogies`` gives the same with counts."""
        methods = {"most_similar": "add", "most_similar_cosmul": "cosmul"}
        if similarity_function not in methods:
            raise W2VError(f"similarity_function must be one of {', '.join(methods)}, not {similarity_function!r}")
        result = evaluate_analogies(self, analogies, restrict_vocab, case_insensitive, methods[similarity_function])
        wrong = (False, None) if dummy4unknown else (False,)
        sections = [
            {"section": s.name, "correct": s.with_answer(True), "incorrect": s.with_answer(*wrong)}
            for s in result.sections
        ]
        correct = [q for s in sections for q in s["correct"]]
        incorrect = [q for s in sections for q in s["incorrect"]]
        sections.append({"section": "Total accuracy", "correct": correct, "incorrect": incorrect})
        answered = len(correct) + len(incorrect)
        return (len(correct) / answered if answered else 0.0), sections

    def evaluate_word_pairs(
        self,
        pairs: str | os.PathLike = DEFAULT_SIMILARITY,
        delimiter: str = "\t",
        encoding: str = "utf-8",
        restrict_vocab: int = 300_000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
    ):
        """gensim's ``evaluate_word_pairs``: ``((pearson, p-value), (spearman, p-value),
        oov_ratio)``, the correlations between the file's human scores and the cosines
        (``w2v.vectors.evaluate.Correlation`` pairs, also ``.statistic`` and ``.pvalue``) and
        the percentage of pairs with a word outside the first ``restrict_vocab`` (left
        out, or scored 0 with ``dummy4unknown``); of WordSim-353 (``w2v eval``'s, shipped
        with w2v) unless given ``pairs``."""
        found = evaluate_similarity(self, pairs, restrict_vocab, case_insensitive, dummy4unknown, delimiter, encoding)
        oov_ratio = 100 * found.missing / (found.pairs + found.missing)
        return Correlation(found.pearson, found.pearson_p), Correlation(found.spearman, found.spearman_p), oov_ratio

    # --- lookups (gensim's KeyedVectors names) ------------------------------------------

    @property
    def unit(self) -> np.ndarray:
        """The rows scaled to unit length (zero rows stay zero), float32, computed once.
        Stale if ``vectors`` is changed in place afterwards."""
        if self._unit is None:
            self._unit = unit_rows(self.vectors)
        return self._unit

    def nonfinite_rows(self) -> np.ndarray:
        """The rows (ascending, int64) whose vector holds NaN or an infinite value (as a
        value past float32's range reads): it has no direction, so its cosine with any
        vector is NaN. ``without_rows`` leaves them out; the command line's queries do."""
        return nonfinite_rows(self.vectors)

    def without_rows(self, rows: Sequence[int] | np.ndarray) -> "Vectors":
        """A copy without the given ``rows``: their words, vectors and counts (the
        subwords, which build any word, are kept)."""
        keep = np.ones(len(self), dtype=bool)
        keep[np.asarray(rows, dtype=np.int64)] = False
        words = [self.words[i] for i in np.flatnonzero(keep).tolist()]
        counts = None if self.counts is None else self.counts[keep]
        return Vectors(words, self.vectors[keep], self.report, counts, self.subwords)

    def get_normed_vectors(self) -> np.ndarray:
        """``unit``: the (V, D) rows at unit length (gensim's name)."""
        return self.unit

    @property
    def index_to_key(self) -> list[str]:
        """The words, row by row (gensim's name for ``words``)."""
        return self.words

    @property
    def key_to_index(self) -> dict[str, int]:
        """Word to row; a word listed twice maps to its first (most frequent) row."""
        if self._index is None:
            index: dict[str, int] = {}
            for i in range(len(self.words) - 1, -1, -1):
                index[self.words[i]] = i
            self._index = index
        return self._index

    @property
    def vector_size(self) -> int:
        """D (gensim's name for ``dim``)."""
        return self.dim

    def get_index(self, key: Key, default: int | None = None) -> int:
        """The row of ``key``: a word, or (as gensim) a row number below ``len(self)``;
        ``default`` if given, else ``UnknownWordError`` (a ``KeyError``, with close spellings).
        TypeError for bytes (``refuse_bytes``)."""
        refuse_bytes(key)
        if isinstance(key, str) and key in self.key_to_index:
            return self.key_to_index[key]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < len(self.words):
            return int(key)
        if default is not None:
            return default
        raise UnknownWordError(str(key), self.suggest(key) if isinstance(key, str) else ())

    def index(self, word: str) -> int:
        """The row of ``word`` (``get_index``)."""
        return self.get_index(word)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` (a word, or a row number) has a vector: a row, or, for a
        subword model, a character n-gram to build it from (gensim's ``FastTextKeyedVectors``)."""
        if self.has_index_for(key):
            return True
        return (
            isinstance(key, str) and self.subwords is not None and encodable(key) and self.subwords.ngram_count(key) > 0
        )

    def has_index_for(self, key: object) -> bool:
        """Whether ``key`` (a word, or a row number) has a row here (gensim's name)."""
        return isinstance(key, (str, int, np.integer)) and self.get_index(key, -1) >= 0

    @property
    def wv(self) -> "Vectors":
        """The vectors themselves, so that code written for a gensim model
        (``model.wv.most_similar(...)``) runs on a ``Vectors`` as it is."""
        return self

    def get_vector(self, key: Key, norm: bool = False) -> np.ndarray:
        """The (D,) float32 row of ``key`` (``norm``: at unit length), a view; for a word
        a subword model builds, a new array (see ``built_vector``)."""
        row = self.known_row(key)
        if row is None:
            return self.built_vector(str(key), norm)
        return (self.unit if norm else self.vectors)[row]

    def known_row(self, key: Key) -> int | None:
        """The row of ``key``; None for a word outside the vocabulary that ``subwords``
        builds (one with bytes: ``encodable``); else ``UnknownWordError`` (a ``KeyError``,
        with close spellings)."""
        if self.subwords is not None and isinstance(key, str) and key not in self.key_to_index and encodable(key):
            return None
        return self.get_index(key)

    def built_vector(self, word: str, norm: bool = False) -> np.ndarray:
        """The (D,) float32 vector the subwords build for ``word`` (``norm``: at unit
        length): the mean of its n-grams' rows, or fastText's zero vector where it has
        none, which ``norm`` refuses (``UnknownWordError``: it has no direction)."""
        if self.subwords is None:
            raise UnknownWordError(word, self.suggest(word))
        vector, ngrams = self.subwords.compose([word])
        if not norm:
            return vector[0]
        if not ngrams[0]:
            why = f"nor has it a character n-gram of {self.subwords.settings.lengths()} to build a vector from"
            raise UnknownWordError(word, self.suggest(word), why)
        return unit_rows(vector)[0]

    def vector(self, word: str) -> np.ndarray:
        """The (D,) row of ``word`` (``get_vector``)."""
        return self.get_vector(word)

    def __getitem__(self, keys: Key | Sequence[Key]) -> np.ndarray:
        """``vectors["king"]``: the (D,) row; ``vectors[["king", "queen"]]``: (2, D)."""
        refuse_bytes(keys)
        if isinstance(keys, (str, int, np.integer)):
            return self.get_vector(keys)
        if self.subwords is None or all(self.has_index_for(key) for key in keys):
            return self.vectors[[self.get_index(key) for key in keys]]
        return np.stack([self.get_vector(key) for key in keys])

    def suggest(self, word: str, n: int = 3) -> list[str]:
        """Close spellings of ``word`` among the most frequent words (first its other Unicode
        normalisation, NFC or NFD, then case variants)."""
        index = self.key_to_index
        forms = (unicodedata.normalize("NFC", word), unicodedata.normalize("NFD", word))  # the same text
        found = [w for w in (*forms, word.lower(), word.capitalize(), word.upper()) if w != word and w in index]
        candidates = self.words[:SUGGEST_CANDIDATES]
        found += difflib.get_close_matches(word, candidates, n=n, cutoff=0.75)
        return list(dict.fromkeys(found))[:n]

    # --- similarities ------------------------------------------------------------------

    def similarity(self, w1: Key, w2: Key) -> float:
        """Cosine of the two words' vectors."""
        return float(self.get_vector(w1, norm=True) @ self.get_vector(w2, norm=True))

    def distance(self, w1: Key, w2: Key) -> float:
        """1 - ``similarity``."""
        return 1 - self.similarity(w1, w2)

    def distances(self, word_or_vector: Key | np.ndarray, other_words: Sequence[Key] = ()) -> np.ndarray:
        """1 - the cosines of ``word_or_vector`` to ``other_words`` (all words if none), (n,) float32."""
        refuse_bytes(other_words)
        query = self._unit_query(word_or_vector)
        rows = self.unit if not other_words else self.unit[[self.get_index(w) for w in other_words]]
        return 1 - rows @ query

    def n_similarity(self, ws1: Sequence[Key], ws2: Sequence[Key]) -> float:
        """Cosine of the means of the two sets' vectors (gensim: ZeroDivisionError if one is empty)."""
        refuse_bytes(ws1)
        refuse_bytes(ws2)
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        means = unit_rows(np.stack([self[list(ws1)].mean(axis=0), self[list(ws2)].mean(axis=0)]))
        return float(means[0] @ means[1])

    def closer_than(self, key1: Key, key2: Key) -> list[str]:
        """The words closer to ``key1`` than ``key2`` is (by cosine), ``key1`` left out."""
        first = self.get_index(key1)
        sims = self.unit @ self.unit[first]
        closer = np.flatnonzero(sims > sims[self.get_index(key2)])
        return [self.words[i] for i in closer.tolist() if i != first]

    def rank(self, key1: Key, key2: Key) -> int:
        """1 + the number of words closer to ``key1`` than ``key2`` is."""
        return len(self.closer_than(key1, key2)) + 1

    def doesnt_match(self, words: Sequence[str]) -> str:
        """The word of ``words`` farthest (by cosine) from the mean of their unit vectors;
        words outside the vocabulary are left out, with a warning (as gensim)."""
        refuse_bytes(words)
        used = [w for w in words if w in self]
        if len(used) != len(words):
            warnings.warn(f"not in the vocabulary, left out: {sorted(set(words) - set(used))}", stacklevel=2)
        if not used:
            raise W2VError("no word of the list is in the vocabulary")
        rows = np.stack([self.get_vector(w, norm=True) for w in used])
        sims = rows @ unit_rows(rows.mean(axis=0, keepdims=True))[0]
        return sorted(zip(sims.tolist(), used, strict=True), reverse=True)[-1][1]

    # --- nearest neighbours ------------------------------------------------------------

    @overload
    def most_similar(
        self,
        positive: QueryTerms = None,
        negative: QueryTerms = None,
        topn: int = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]]: ...

    @overload
    def most_similar(
        self, positive: QueryTerms = None, negative: QueryTerms = None, *, topn: None, restrict_vocab: int | None = None
    ) -> np.ndarray: ...

    def most_similar(
        self,
        positive: QueryTerms = None,
        negative: QueryTerms = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]] | np.ndarray:
        """Words closest in cosine to the normalised weighted sum of the unit vectors
        of ``positive`` (weight 1) and ``negative`` (weight -1), the query words left
        out, best first, as gensim's ``most_similar``. Each may be a word (or a list of
        them), a row number, a (D,) vector (used as given, not normalised, and not
        left out) or a ``(word or vector, weight)`` pair. ``restrict_vocab``: search
        only the first N words. ``topn=None``: the cosines of all (searched) words."""
        terms = self._terms(positive, 1.0) + self._terms(negative, -1.0)
        if not terms:
            raise W2VError("no query words given")
        total = sum(weight * vector for vector, weight, _ in terms)
        query = unit_rows(np.asarray(total, dtype=np.float32)[None, :])[0]
        exclude = {row for _, _, row in terms if row is not None}
        return self._best(query[:, None], topn, exclude, restrict_vocab)

    @overload
    def most_similar_cosmul(
        self,
        positive: QueryTerms = None,
        negative: QueryTerms = None,
        topn: int = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]]: ...

    @overload
    def most_similar_cosmul(
        self, positive: QueryTerms = None, negative: QueryTerms = None, *, topn: None, restrict_vocab: int | None = None
    ) -> np.ndarray: ...

    def most_similar_cosmul(
        self,
        positive: QueryTerms = None,
        negative: QueryTerms = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]] | np.ndarray:
        """Words ranked by 3CosMul (Levy & Goldberg 2014), as gensim's
        ``most_similar_cosmul``: the product of the shifted cosines (1 + cos) / 2 to the
        ``positive`` words over (that to the ``negative`` ones + 1e-6), the query words
        left out. Words, row numbers or (D,) vectors, as for ``most_similar``."""
        ups, downs = self._terms(positive, 1.0), self._terms(negative, -1.0)
        if not ups:
            raise W2VError("no positive query words given")
        columns = np.stack([vector for vector, _, _ in ups + downs], axis=1).astype(np.float32)
        exclude = {row for _, _, row in ups + downs if row is not None}
        return self._best(columns, topn, exclude, restrict_vocab, cosmul_of(len(ups)))

    def similar_by_word(self, word: Key, topn: int | None = 10, restrict_vocab: int | None = None):
        """``most_similar(word)``."""
        return self.most_similar([word], topn=topn, restrict_vocab=restrict_vocab)

    similar_by_key = similar_by_word

    def similar_by_vector(self, vector: np.ndarray, topn: int | None = 10, restrict_vocab: int | None = None):
        """The words closest in cosine to the (D,) ``vector``."""
        return self.most_similar([np.asarray(vector)], topn=topn, restrict_vocab=restrict_vocab)

    def analogy(
        self, a: str, b: str, c: str, topn: int = 10, method: str = "add", restrict_vocab: int | None = None
    ) -> list[tuple[str, float]]:
        """Words closest to ``a - b + c`` (``king man woman`` gives queen), the three
        excluded. ``method="add"``: 3CosAdd, ``most_similar([a, c], [b])``; ``"cosmul"``
        (or its alias ``"mul"``): 3CosMul, ``most_similar_cosmul([a, c], [b])``."""
        search = self.most_similar if analogy_method(method) == "add" else self.most_similar_cosmul
        return search([a, c], [b], topn=topn, restrict_vocab=restrict_vocab)  # type: ignore[return-value]

    def _terms(self, items, weight: float) -> list[tuple[np.ndarray, float, int | None]]:
        """The query terms of ``most_similar``'s ``positive`` or ``negative``, as gensim
        reads them: ``(vector, weight, row or None)``, a word's vector at unit length."""
        if items is None:
            return []
        refuse_bytes(items)
        if isinstance(items, (str, int, np.integer)) or (isinstance(items, np.ndarray) and items.ndim == 1):
            items = [items]
        terms: list[tuple[np.ndarray, float, int | None]] = []
        for item in items:
            refuse_bytes(item)
            key, given = (item, weight) if isinstance(item, (str, int, np.integer, np.ndarray)) else item
            if isinstance(key, np.ndarray):
                terms.append((np.asarray(key, dtype=np.float32), float(given), None))
            else:
                row = self.known_row(key)
                vector = self.unit[row] if row is not None else self.built_vector(str(key), norm=True)
                terms.append((vector, float(given), row))
        return terms

    def _unit_query(self, word_or_vector: Key | np.ndarray) -> np.ndarray:
        """A word's unit vector, or a (D,) vector scaled to unit length."""
        if isinstance(word_or_vector, np.ndarray):
            return unit_rows(word_or_vector[None, :])[0]
        return self.get_vector(word_or_vector, norm=True)

    def _best(self, queries: np.ndarray, topn: int | None, exclude: set[int], restrict: int | None, combine=None):
        """The ``topn`` best words for the (D, k) ``queries`` as ``(word, score)`` (see
        ``search.nearest``), or with ``topn=None`` the scores of all searched words."""
        if topn is None:
            sims = self.unit[:restrict] @ queries
            return combine(sims) if combine is not None else sims[:, 0]
        found = nearest(self.unit, queries, topn, exclude=exclude, restrict=restrict, combine=combine)
        return [(self.words[i], score) for i, score in found]


def refuse_bytes(keys: object) -> None:
    """TypeError for a word, or words, given as bytes: Python reads ``b"the"`` as the
    row numbers 116, 104 and 101, gensim as a key it does not hold."""
    if isinstance(keys, BYTE_STRINGS):
        shown = bytes(keys[:40])
        raise TypeError(f"words are str, not {type(keys).__name__} ({shown!r}): decode them first (.decode())")


class UnknownWordError(W2VError, KeyError):
    """A query word is not in the vocabulary; ``suggestions`` holds close spellings,
    ``why`` (if given) what else failed. Also a ``KeyError``, as gensim raises for an
    unknown key."""

    def __init__(self, word: str, suggestions: Sequence[str] = (), why: str = ""):
        self.word = word
        self.suggestions = list(suggestions)
        alike = any(normalised(s) == normalised(word) for s in self.suggestions)  # they print alike
        show = code_points if alike else display_word
        message = f"word not in vocabulary: {quoted_word(word, show)}" + (f", {why}" if why else "")
        if self.suggestions:
            same_text = " the same text in other Unicode code points, NFC or NFD" if alike else ""
            message += f" (did you mean: {', '.join(show(w) for w in self.suggestions)}?{same_text})"
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])  # the message itself, not KeyError's repr of it


def normalised(word: str) -> str:
    """``word`` in Unicode's NFC form, as ``café`` written with ``e`` and a combining accent
    (NFD) is written as one character."""
    return unicodedata.normalize("NFC", word)


def code_points(word: str) -> str:
    """``display_word(word)`` with each character outside ASCII written as its code point,
    ``\\u00e9`` (``\\U0001f600`` past U+FFFF): two words that print alike, differing
    only in Unicode normalisation, then read apart."""
    return "".join(
        c if c.isascii() else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in display_word(word)
    )
