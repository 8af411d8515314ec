"""w2v: word2vec in Python and Numba, faithful to word2vec.c and faster.

Skip-gram and CBOW with negative sampling and/or hierarchical softmax, trained by
lock-free threads over a corpus that is never held in memory; the vectors are
written and read in word2vec.c's text and binary formats. ``w2v.train`` returns
a ``w2v.Vectors``, which answers gensim's ``KeyedVectors`` calls::

    import w2v

    vectors = w2v.train("corpus.txt.gz", dim=100, epochs=5, progress=True)
    vectors = w2v.train([["the", "cat", "sat"], ["a", "dog", "ran"]] * 100, min_count=1)
    vectors["cat"]                                  # (D,) float32
    vectors.most_similar("cat", topn=3)             # [(word, cosine), ...]
    vectors.most_similar(positive=["king", "woman"], negative=["man"])
    vectors.save("vectors.bin")                     # word2vec.c binary (text for other names)
    vectors = w2v.Vectors.load("vectors.bin")       # also .txt, .vec, GloVe, .npy, model files
    kv = vectors.to_gensim()                        # a gensim KeyedVectors, where gensim is installed
    w2v.describe_file("model.npz")                  # a file's format, words, dim; a model's settings

The word2vec distribution's other tools (``w2v.toolkit``) return what they find::

    counted = w2v.count_vocab("corpus.txt.gz", min_count=5)       # words kept, counts, coverage
    counted.save("vocab.txt")                                      # word2vec.c's -save-vocab file
    done = w2v.phrases("corpus.txt.gz", "phrased.txt")             # word2phrase: the table, lines written
    table = w2v.learn_phrases(sentences, min_count=1)              # a PhraseTable; table.apply(sentence)
    classes = w2v.word_classes(vectors, 500)                       # k-means on the unit vectors
    classes.save("classes.txt")                                    # 'word class' lines
    scored = w2v.score("model.npz", "heldout.txt")                 # held-out bits per word, by loss

``count_vocab`` and ``phrases`` also run on a Dask cluster (``cluster="local:4"``).

Training settings are ``w2v.TrainConfig``'s fields (``model``, ``dim``, ``window``,
``negative``, ``hs``, ``sample``, ``min_count``, ``epochs``, ``threads``...); gensim's
names for them raise an error naming w2v's. Errors users can cause are
``w2v.W2VError``, with one-line messages.

More: ``help(w2v.train)``, ``help(w2v.Vectors)``, ``help(w2v.toolkit)``; the command line, ``w2v --help``;
README.md and docs/ (vectors.md: formats, queries, evaluation; toolkit.md:
vocab, phrases, classes; parity.md: word2vec.c detail by detail).
"""

# ``import w2v`` imports nothing but this file: the public names are imported on first use
# (``Package.__getattr__``), so the command (``w2v.cli``, whose own imports turn Ctrl-C into its
# one line) starts at once, not after the quarter of a second numpy, click and the rest take.

import sys
from importlib import import_module
from types import ModuleType

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy takes it as True
if TYPE_CHECKING:
    from w2v.config import TrainConfig
    from w2v.corpus.phrases import learn_phrases
    from w2v.engine.callbacks import EpochEnd, StopTraining
    from w2v.errors import W2VError
    from w2v.toolkit import count_vocab, phrases, score, word_classes
    from w2v.train import train
    from w2v.vectorio.describe import describe_file
    from w2v.vectors.wordvectors import Vectors
    from w2v.version import __version__

__all__ = [
    "EpochEnd",
    "StopTraining",
    "TrainConfig",
    "Vectors",
    "W2VError",
    "__version__",
    "count_vocab",
    "describe_file",
    "learn_phrases",
    "phrases",
    "score",
    "train",
    "word_classes",
]
HOMES = {  # each name of ``__all__``: the module that defines it
    "EpochEnd": "w2v.engine.callbacks",
    "StopTraining": "w2v.engine.callbacks",
    "TrainConfig": "w2v.config",
    "Vectors": "w2v.vectors.wordvectors",
    "W2VError": "w2v.errors",
    "__version__": "w2v.version",
    "count_vocab": "w2v.toolkit",
    "describe_file": "w2v.vectorio.describe",
    "learn_phrases": "w2v.corpus.phrases",
    "phrases": "w2v.toolkit",
    "score": "w2v.toolkit",
    "train": "w2v.train",
    "word_classes": "w2v.toolkit",
}


class Package(ModuleType):
    """``w2v`` itself, whose names are imported when first asked for (as PEP 562's
    module ``__getattr__``, but out of ``help(w2v)``)."""

    def __getattr__(self, name: str) -> object:
        """A public name, imported from its module and kept; else the submodule of that
        name (``w2v.errors``, ``help(w2v.toolkit)``), imported as ``import w2v.errors`` would."""
        if name in HOMES:
            value = getattr(import_module(HOMES[name]), name)
            super().__setattr__(name, value)
            return value
        if not name.startswith("__"):
            try:
                return import_module(f"{self.__name__}.{name}")
            except ModuleNotFoundError as missing:
                if missing.name != f"{self.__name__}.{name}":  # one it imports is missing (an extra's package)
                    raise
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *__all__})

    def __setattr__(self, name: str, value: object) -> None:
        """Importing the submodule ``w2v.train`` binds it as the package's ``train``: the
        name stays the function ``w2v.train``, as the package's API has it."""
        if not (name == "train" and isinstance(value, ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = Package
