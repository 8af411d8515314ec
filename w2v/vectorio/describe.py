"""What a vectors or model file holds (``w2v info``), told from its headers: its format,
words and dimension; for a w2v model file or checkpoint its settings and training
record, for a fastText model its arguments.

The file is recognised as ``detect.load_any`` recognises it, by its first bytes
(``detect.file_kind``), and only what says what it holds is read, never its vectors:
a word2vec file's ``COUNT DIM`` line (the count it promises), an ``.npy`` export's
header and vocabulary, a model's metadata and epoch losses, a fastText model's
arguments and dictionary. A text file without a header (GloVe's) is counted by its
lines, blank ones included.
"""

import math
import os
from dataclasses import dataclass

from w2v.config import named_values
from w2v.errors import W2VError
from w2v.files import is_url
from w2v.vectorio.detect import check_mappable, file_kind
from w2v.vectorio.fasttext import read_header as read_fasttext_header
from w2v.vectorio.modelfile import CHECKPOINT_FILE, checkpoint_path, describe_progress, read_record
from w2v.vectorio.word2vec import header_of, headerless_shape, open_npy


@dataclass
class FileInfo:
    """What the file at ``path`` holds: its ``format`` in words, its ``words`` and the
    values of a vector (``dim``); for a model, its ``settings`` (w2v's
    ``TrainConfig.record``, fastText's arguments by fastText's names), those in a line
    (``summary``) and what its training did (``record``); None for vectors files."""

    path: str
    format: str
    words: int
    dim: int
    settings: dict | None = None
    summary: str | None = None
    record: dict | None = None


def describe_file(path: str | os.PathLike) -> FileInfo:
    """``FileInfo`` of the vectors file, w2v model file, checkpoint (file or folder) or
    fastText ``.bin`` at ``path``. FormatError for a file of none of those (a gensim
    pickle is named, with the command that converts it), W2VError for a missing one
    or a folder that holds no checkpoint."""
    path = os.fspath(path)
    if os.path.isdir(path):
        if not os.path.isfile(checkpoint_path(path)):
            raise W2VError(f"{path} is a folder without a checkpoint ({CHECKPOINT_FILE}): give a file")
        return model_info(path)
    if not is_url(path) and not os.path.exists(path):
        raise W2VError(f"file not found: {path}")
    kind = file_kind(path)
    if kind == "model":
        return model_info(path)
    if kind == "fasttext":
        return fasttext_info(path)
    if kind == "headerless":
        lines, dim = headerless_shape(path)
        return FileInfo(path, "text vectors without a header line (GloVe's format)", lines, dim)
    if path.endswith(".npy"):
        words, matrix = open_npy(path)
        return FileInfo(path, ".npy export (its words in a .vocab.txt beside it)", len(words), matrix.shape[1])
    fmt, count, dim = header_of(path)
    return FileInfo(path, f"word2vec {fmt}", count, dim)


def model_info(path: str) -> FileInfo:
    """``FileInfo`` of a w2v model file or checkpoint: ``read_record``'s settings and its
    training record: progress, the corpus read an epoch (tokens, and those in the
    vocabulary), each epoch's mean loss (None for one not trained yet), the replicas
    (or, in blocks, the machines) of a run on a cluster and the corpus its command
    named (None if not known)."""
    found = read_record(path)
    config, progress = found.config, found.progress
    checkpoint = os.path.isdir(path) or os.path.basename(path) == CHECKPOINT_FILE
    command = progress["notes"].get("command")
    record = {
        "progress": describe_progress(progress["jobs_done"], progress["batches"], config.epochs),
        "corpus_words": progress["corpus_words"],
        "stream_words": progress["stream_words"],
        "epoch_loss": [None if math.isnan(loss) else loss for loss in found.epoch_loss],  # None: not trained yet
        "replicas": len(progress["replicas"]),
        "blocks": bool(progress.get("blocks")),  # the replicas are a run in blocks' machines
        "corpus": command.get("corpus") if isinstance(command, dict) else None,
    }
    kind = "w2v checkpoint" if checkpoint else "w2v model file"
    return FileInfo(path, kind, found.words, config.dim, config.record(), config.summary(), record)


def fasttext_info(path: str) -> FileInfo:
    """``FileInfo`` of a fastText ``.bin``: its arguments and the tokens it was trained on."""
    check_mappable(path)
    model = read_fasttext_header(path)
    args = model.args
    numbers = {name: value for name, value in args.items() if not isinstance(value, str)}  # all but model, loss
    summary = f"{args['model']} with loss {args['loss']}: {named_values(numbers)}"
    return FileInfo(
        path, "fastText model", len(model.words), model.dim, dict(args), summary, {"ntokens": model.ntokens}
    )
