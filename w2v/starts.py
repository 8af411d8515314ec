"""What ``init_model`` (``--init-model``) starts a run from: a w2v model file or
checkpoint, or a fastText ``.bin`` (fastText's own, or one w2v wrote), each with its
output weights, which training goes on from; or vectors alone (any file
``Vectors.load`` reads but those, or a ``w2v.Vectors``), whose rows start the input
vectors of the corpus words they hold, as fastText's ``-pretrainedVectors`` does.
"""

import os
from typing import NamedTuple

import numpy as np

from w2v.errors import FormatError
from w2v.vectorio.as_fasttext import UNRECORDED, fasttext_state
from w2v.vectorio.detect import check_mappable, file_kind
from w2v.vectorio.modelfile import TrainState
from w2v.vectors.wordvectors import Vectors
from w2v.words import encode_word


class InputVectors(NamedTuple):
    """Vectors a run's input rows start from: their ``words`` (UTF-8 bytes, as the
    corpus's) and ``vectors`` (n, D) float32; ``source`` names them in messages."""

    source: str
    words: list[bytes]
    vectors: np.ndarray


class Start(NamedTuple):
    """What ``init_model`` names: ``base``, a model's whole state or input vectors;
    ``source``, its name in messages; ``unrecorded``, the settings its weights fix
    that its file does not record (a fastText ``.bin``'s), the caller's to give."""

    base: TrainState | InputVectors
    source: str
    unrecorded: tuple[str, ...] = ()


def starting_point(init_model) -> Start:
    """The ``Start`` of ``init_model``: a ``Vectors``, or a path to a model file or
    checkpoint (a folder too), a fastText ``.bin`` or a vectors file, recognised by
    its first bytes (``detect.file_kind``). FormatError, one line, for a file that is
    none of them or is damaged."""
    if isinstance(init_model, Vectors):
        return Start(input_vectors("the Vectors given", init_model), "the Vectors given")
    path = os.fspath(init_model)
    if holds_vectors_alone(path):
        try:
            return Start(input_vectors(path, Vectors.load(path)), path)
        except FormatError as err:
            why = f"{path} is no model (w2v's or fastText's) and cannot be read as vectors ({err})"
            raise FormatError(why) from None
    if os.path.isfile(path) and file_kind(path) == "fasttext":
        check_mappable(path)
        return Start(fasttext_state(path), path, UNRECORDED)
    return Start(TrainState.load(path), path)  # also a checkpoint folder, and the error for a missing file


def holds_vectors_alone(path: str) -> bool:
    """Whether the file at ``path`` is vectors without a model's output weights: a run
    started from it takes the corpus's vocabulary (``starting_point``)."""
    return os.path.isfile(path) and file_kind(path) not in ("model", "fasttext")


def input_vectors(source: str, vectors: Vectors) -> InputVectors:
    """``vectors`` as the rows a run's input vectors start from."""
    return InputVectors(source, [encode_word(word) for word in vectors.words], vectors.vectors)
