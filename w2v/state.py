"""Training state on disk: model files (``--save-model``, ``--init-model``) and
checkpoints (``--checkpoint``, ``--resume``).

Both are one numpy ``.npz`` archive (no pickle; ``np.load(path)`` opens it) with:

- ``syn0`` (V, dim) float32: the input vectors, the word vectors;
- ``syn1`` (V - 1, dim) float32: hierarchical-softmax inner nodes, or (0, dim);
- ``syn1neg`` (V, dim) float32: negative-sampling output vectors, or (0, dim);
- ``vocab_words`` uint8 (the words' UTF-8 bytes, concatenated) cut by
  ``vocab_offsets`` (V + 1,) int64, and ``vocab_counts`` (V,) int64: the
  vocabulary, most frequent first;
- ``epoch_loss`` (epochs,) float64 and ``epoch_examples`` (epochs,) int64: the
  summed loss and example count of each epoch so far;
- ``meta``: UTF-8 JSON with ``format`` (``"w2v-model"``), ``version``, the
  resolved training settings (``config``), the progress (``jobs_done`` batches
  finished over all epochs, ``batches`` per epoch, ``stream_words`` per epoch)
  and a fingerprint of the encoded corpus (``corpus_words``, ``corpus_digest``),
  plus ``notes`` the command line keeps (how to rerun it).

A batch's learning rate and random seed are functions of its index and the
settings, so ``jobs_done`` is the whole scheduler and RNG state: resuming runs
batches ``jobs_done`` onwards exactly as the uninterrupted run would have.
"""

import itertools
import json
import os
import zipfile
import zlib
from dataclasses import asdict, dataclass, field

import numpy as np

from w2v.config import TrainConfig
from w2v.errors import ConfigError, FormatError
from w2v.files import atomic_output
from w2v.formats import decode_word
from w2v.vocab import Vocab
from w2v.weights import weight_shapes

FORMAT = "w2v-model"
VERSION = 1
CHECKPOINT_FILE = "checkpoint.npz"
ARRAYS = ("syn0", "syn1", "syn1neg", "vocab_words", "vocab_offsets", "vocab_counts", "epoch_loss", "epoch_examples")


@dataclass
class TrainState:
    """Weights, vocabulary, settings and progress of a (possibly unfinished) run."""

    config: TrainConfig  # resolved
    vocab: Vocab
    syn0: np.ndarray
    syn1: np.ndarray
    syn1neg: np.ndarray
    epoch_loss: np.ndarray  # (epochs,) float64, summed over examples
    epoch_examples: np.ndarray  # (epochs,) int64
    jobs_done: int = 0  # batches finished, over all epochs
    batches: int = 0  # batches per epoch
    stream_words: int = 0  # in-vocabulary words per epoch
    corpus_words: int = 0  # corpus tokens per epoch (rare words included)
    corpus_digest: int = 0  # CRC-32 of the encoded corpus
    notes: dict = field(default_factory=dict)

    def save(self, path: str) -> None:
        """Write the archive atomically (beside ``path``, then renamed over it, so the
        previous file stays whole until the new one is)."""
        words = self.vocab.words
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(w) for w in words])
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "config": asdict(self.config),
            **{key: getattr(self, key) for key in META_FIELDS},
        }
        arrays = {
            "syn0": self.syn0,
            "syn1": self.syn1,
            "syn1neg": self.syn1neg,
            "vocab_words": np.frombuffer(b"".join(words), dtype=np.uint8),
            "vocab_offsets": offsets,
            "vocab_counts": self.vocab.counts,
            "epoch_loss": self.epoch_loss,
            "epoch_examples": self.epoch_examples,
            "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        }
        with atomic_output(path) as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stubs take ** as allow_pickle

    @classmethod
    def load(cls, path: str) -> "TrainState":
        """Read a model file or checkpoint (a folder means its checkpoint file);
        FormatError if it is missing, damaged or not one of ours."""
        path = model_file(path)
        arrays = read_archive(path, (*ARRAYS, "meta"))
        return cls.from_parts(path, arrays, parse_meta(path, arrays.pop("meta")))

    @classmethod
    def from_parts(cls, path: str, arrays: dict, meta: dict) -> "TrainState":
        """Assemble and check a state read from ``path``."""
        try:
            config = TrainConfig(**meta["config"])
            config.validate()
            raw, offsets = arrays["vocab_words"].tobytes(), arrays["vocab_offsets"].tolist()
            if offsets[:1] != [0] or offsets[-1:] != [len(raw)] or (np.diff(arrays["vocab_offsets"]) <= 0).any():
                raise ValueError("vocabulary offsets out of order")  # else words would come out empty or merged
            if (np.asarray(arrays["vocab_counts"]) < 1).any():
                raise ValueError("a word count below 1")
            vocab = Vocab([raw[a:b] for a, b in itertools.pairwise(offsets)], arrays["vocab_counts"])
            state = cls(config, vocab, **{k: arrays[k] for k in ARRAYS[:3] + ARRAYS[6:]}, **_meta_fields(meta))
        except (KeyError, TypeError, ValueError, ConfigError) as err:  # ConfigError: damaged settings
            raise FormatError(f"{path}: damaged model file ({err})") from None
        size = len(vocab)
        shapes = {**weight_shapes(size, config), "epoch_loss": (config.epochs,), "epoch_examples": (config.epochs,)}
        for name, shape in shapes.items():
            array = getattr(state, name)
            if array.shape != shape or (name.startswith("syn") and array.dtype != np.float32):
                raise FormatError(f"{path}: damaged model file ({name} is {array.dtype} {array.shape})")
        if len(vocab.counts) != size or len(offsets) != size + 1:
            raise FormatError(f"{path}: damaged model file (vocabulary sizes disagree)")
        return state


def load_word_vectors(path: str, limit: int | None = None) -> tuple[list[str], np.ndarray]:
    """The words (V,) and word vectors (``syn0``, (V, D) float32) of a model file or
    checkpoint (a folder: its checkpoint), without its other arrays; ``limit``: only
    the first ``limit`` words. FormatError if it is not a w2v model file."""
    path = model_file(path)
    arrays = read_archive(path, ("syn0", "vocab_words", "vocab_offsets", "meta"))
    parse_meta(path, arrays["meta"])
    raw, offsets, syn0 = arrays["vocab_words"].tobytes(), arrays["vocab_offsets"], arrays["syn0"]
    if syn0.ndim != 2 or syn0.dtype != np.float32 or len(offsets) != len(syn0) + 1:
        raise FormatError(f"{path}: damaged model file (syn0 is {syn0.dtype} {syn0.shape}, {len(offsets) - 1} words)")
    n = len(syn0) if limit is None else min(limit, len(syn0))
    bounds = offsets[: n + 1].tolist()
    return [decode_word(raw[a:b]) for a, b in itertools.pairwise(bounds)], syn0[:n]


META_FIELDS = ("jobs_done", "batches", "stream_words", "corpus_words", "corpus_digest", "notes")


def _meta_fields(meta: dict) -> dict:
    values = {key: meta[key] for key in META_FIELDS}
    if not isinstance(values["notes"], dict) or not all(isinstance(values[k], int) for k in META_FIELDS[:-1]):
        raise ValueError("bad progress fields")
    return values


def describe_progress(jobs_done: int, batches: int, epochs: int) -> str:
    """Where a run stands, e.g. ``epoch 2 of 5, 43% done``, from its ``meta`` progress
    fields (so a checkpoint can be described without reading its weights)."""
    total = batches * epochs
    if jobs_done >= total:
        return f"all {epochs} epochs done"
    return f"epoch {jobs_done // max(batches, 1) + 1} of {epochs}, {100 * jobs_done / max(total, 1):.0f}% done"


def checkpoint_path(folder: str) -> str:
    """The checkpoint file kept in ``folder``."""
    return os.path.join(folder, CHECKPOINT_FILE)


def model_file(path: str) -> str:
    """``path``, or the checkpoint file in it when it is a folder."""
    return checkpoint_path(path) if os.path.isdir(path) else path


def read_meta(path: str) -> dict:
    """The JSON metadata of a model file or checkpoint, without reading its arrays."""
    path = model_file(path)
    return parse_meta(path, read_archive(path, ("meta",))["meta"])


def parse_meta(path: str, raw: np.ndarray) -> dict:
    """The metadata dict from its archive entry (UTF-8 JSON bytes); FormatError if
    it is not a w2v model file of this version."""
    try:
        meta = json.loads(raw.tobytes())
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise FormatError(f"{path} is not a w2v model file")
    if meta.get("version") != VERSION:
        raise FormatError(f"{path}: model file version {meta.get('version')} is not supported (this is {VERSION})")
    return meta


# What reading a damaged archive raises; zipfile: RuntimeError for an entry flagged
# encrypted, NotImplementedError for an unknown compression method.
DAMAGED_ARCHIVE = (
    *(ValueError, KeyError, TypeError, AttributeError, EOFError, RuntimeError, NotImplementedError),
    *(zipfile.BadZipFile, zlib.error),
)


def read_archive(path: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The named arrays of the ``.npz`` at ``path``; FormatError if it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in names}
    except FileNotFoundError:
        raise FormatError(f"model file not found: {path}") from None
    except IsADirectoryError:
        raise FormatError(f"no checkpoint in folder {os.path.dirname(path)}") from None
    except OSError as err:
        raise FormatError(f"cannot read model file {path}: {err.strerror or err}") from None
    except DAMAGED_ARCHIVE as err:
        raise FormatError(f"{path} is not a w2v model file or is damaged ({err})") from None
