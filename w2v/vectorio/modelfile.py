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
  plus ``notes`` the command line keeps (how to rerun it), and for a run on a
  cluster ``replicas``: each replica's parts (``[source, start, end]``, end null
  for a whole file), ``jobs_done``, ``batches``, ``words`` and ``digest``, in
  corpus order (``cluster.training``; empty for a run in one process), and for a
  run in blocks (``cluster.blocktraining``; each replica one machine's parts)
  ``blocks``: the ``epoch`` and ``sweep`` it goes on at (empty for any other run);
- ``momentum_syn0``, ``momentum_syn1``, ``momentum_syn1neg``, shaped as the
  weights, float32: only in the checkpoint of a run on a cluster whose replicas are
  combined with block momentum (``rounds``): each row's momentum, for all three
  weights (``momentum``) or the output weights only (``mixed``).

A batch's learning rate and random seed are functions of its index and the
settings, so ``jobs_done`` is the whole scheduler and RNG state: resuming runs
batches ``jobs_done`` onwards exactly as the uninterrupted run would have.

Model files are shared like any download, so ``TrainState.load`` trusts none of
it: arrays are read without pickle, after their ``.npy`` headers are checked
against the settings (shapes, types, sizes, no compression: no more memory than
the file takes), and the weights, losses and progress are checked after.
"""

import dataclasses
import itertools
import json
import math
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.lib import format as npformat

from w2v.config import TrainConfig
from w2v.corpus.ngrams import NgramSettings
from w2v.corpus.sources import FIRST_SPACE
from w2v.corpus.vocab import MAX_TOTAL_COUNT, Vocab
from w2v.errors import ConfigError, FormatError, NotAModelError
from w2v.files import atomic_output
from w2v.words import decode_word, split_reason

FORMAT = "w2v-model"
# 2: the losses' settings (tree, nce, ...) in ``config``; 3: sync_words, combine, ``replicas``; 4: momentum;
# 5: sweeps, rounds, ``blocks``
VERSION = 5
READABLE_VERSIONS = (1, 2, 3, 4, 5)  # older files lack the later settings: their defaults apply
CHECKPOINT_FILE = "checkpoint.npz"
WEIGHTS = ("syn0", "syn1", "syn1neg")  # the weight matrices
VOCAB_ARRAYS = ("vocab_words", "vocab_offsets", "vocab_counts")  # the vocabulary (``checked_vocab``)
EPOCH_ARRAYS = ("epoch_loss", "epoch_examples")  # each epoch's summed loss and examples
ARRAYS = WEIGHTS + VOCAB_ARRAYS + EPOCH_ARRAYS
MOMENTUM = {name: f"momentum_{name}" for name in WEIGHTS}  # by weight: its momentum's array, where saved
OUTPUT_MOMENTUM = {"syn1", "syn1neg"}  # the weights whose momentum a checkpoint with momentum holds, at least


def weight_shapes(size: int, config: TrainConfig) -> dict[str, tuple[int, int]]:
    """The shapes of ``syn0``, ``syn1`` and ``syn1neg`` for ``size`` words."""
    return {
        "syn0": (size + config.ngram_rows, config.dim),
        "syn1": (max(size - 1, 1) if config.hs else 0, config.dim),
        "syn1neg": (size if config.output_loss else 0, config.dim),
    }


def all_finite(weights: np.ndarray) -> bool:
    """Whether no weight is NaN or infinite. ``min`` and ``max`` propagate NaN and
    allocate nothing, where ``np.isfinite(weights).all()`` would take N * D bytes."""
    return not weights.size or (math.isfinite(weights.min()) and math.isfinite(weights.max()))


@dataclass(kw_only=True)
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
    replicas: list[dict] = field(default_factory=list)  # a cluster run's replicas (see the module's docstring)
    blocks: dict = field(default_factory=dict)  # a run in blocks: where it goes on (see the module's docstring)
    momentum: dict[str, np.ndarray] = field(default_factory=dict)  # by weight name: its rows' momentum, or empty

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
            **{MOMENTUM[name]: rows for name, rows in self.momentum.items()},
            "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        }
        with atomic_output(path) as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stubs take ** as allow_pickle

    @classmethod
    def load(cls, path: str) -> "TrainState":
        """Read a model file or checkpoint (a folder means its checkpoint file);
        FormatError if it is missing, damaged or not one of ours. Each array's shape
        and type are checked from its header against the settings before any is read."""
        path = model_file(path)
        with open_archive(path) as archive:
            meta, config = checked_archive(archive, path)
            arrays = {name: read_entry(archive, path, name) for name in ARRAYS + saved_momentum(archive)}
        return cls.from_parts(path, config, arrays, meta)

    @classmethod
    def from_parts(cls, path: str, config: TrainConfig, arrays: dict, meta: dict) -> "TrainState":
        """Assemble and check a state read from ``path``, its arrays shaped as ``config`` says."""
        try:
            vocab = checked_vocab(arrays)
            momentum = {name: arrays[key] for name, key in MOMENTUM.items() if key in arrays}
            if momentum and not momentum.keys() >= OUTPUT_MOMENTUM:
                raise ValueError("the momentum of some weights only")
            weights_and_losses = {k: arrays[k] for k in WEIGHTS + EPOCH_ARRAYS}
            state = cls(config=config, vocab=vocab, **weights_and_losses, **_meta_fields(meta), momentum=momentum)
            state.check_values()
        except (KeyError, TypeError, ValueError) as err:
            raise FormatError(f"{path}: damaged model file ({err})") from None
        return state

    def check_values(self) -> None:
        """ValueError unless the weights and losses are finite and the progress is one a
        run can be at (0 <= ``jobs_done`` <= batches x epochs): a resumed run would
        write NaN vectors, or skip or repeat batches."""
        for name in WEIGHTS:
            if not all_finite(getattr(self, name)):
                raise ValueError(f"non-finite weights in {name}")
            if name in self.momentum and not all_finite(self.momentum[name]):
                raise ValueError(f"non-finite momentum of {name}")
        if not np.isfinite(self.epoch_loss).all() or (self.epoch_examples < 0).any():
            raise ValueError("an epoch's loss or example count is out of range")
        negative = [key for key in SIZES if getattr(self, key) < 0]
        if negative:
            raise ValueError(f"negative {', '.join(negative)}")
        if not 0 <= self.jobs_done <= self.batches * self.config.epochs:
            raise ValueError(
                f"jobs_done {self.jobs_done} is not within 0 to {self.batches} batches x {self.config.epochs} epochs"
            )
        if self.replicas:
            self.check_replicas()
        if self.blocks and not (0 <= self.blocks["epoch"] <= self.config.epochs
                                and 0 <= self.blocks["sweep"] < self.config.sweeps and self.replicas):  # fmt: skip
            raise ValueError("the blocks' epoch or sweep is out of range")

    def check_replicas(self) -> None:
        """ValueError unless the replicas' jobs and batches add up to the run's, each within
        its batches x epochs, and their parts are ``[source, start, end]`` triples."""
        replicas = self.replicas
        if (
            sum(r["jobs_done"] for r in replicas) != self.jobs_done
            or sum(r["batches"] for r in replicas) != self.batches
        ):
            raise ValueError("the replicas' jobs or batches do not add up to the run's")
        for replica in replicas:
            if not 0 <= replica["jobs_done"] <= replica["batches"] * self.config.epochs:
                raise ValueError("a replica's jobs_done is out of range")
            for part in replica["parts"]:
                if not (isinstance(part, list) and len(part) == 3 and isinstance(part[0], str)
                        and isinstance(part[1], int) and (part[2] is None or isinstance(part[2], int))):  # fmt: skip
                    raise ValueError("a replica's part is not [source, start, end]")


def checked_vocab(arrays: dict) -> Vocab:
    """The vocabulary of a model file's ``arrays``; ValueError for damaged words
    (``vocab_words``), a word twice (it would get two vectors), or counts below 1 or
    adding up past ``MAX_TOTAL_COUNT`` (their sum would wrap around)."""
    offsets = arrays["vocab_offsets"]
    words = vocab_words(arrays["vocab_words"].tobytes(), offsets, len(offsets) - 1)
    counts = np.asarray(arrays["vocab_counts"])
    if (counts < 1).any():
        raise ValueError("a word count below 1")
    if counts.sum(dtype=np.float64) > MAX_TOTAL_COUNT:
        raise ValueError(f"word counts adding up to more than {MAX_TOTAL_COUNT:,} (2**60)")
    if len(set(words)) < len(words):
        raise ValueError("a word listed twice")
    return Vocab(words, counts)


class StoredVectors(NamedTuple):
    """What a model file holds for querying words: its first V' ``words`` (as stored,
    UTF-8 bytes), their input rows ``rows`` ((V', D) float32) and ``counts`` ((V',)
    int64); with subwords, the ``ngram_rows`` of ``syn0`` ((B, D) float32,
    memory-mapped from the file) and the ``ngrams`` settings, else None for both."""

    words: list[bytes]
    rows: np.ndarray
    counts: np.ndarray
    ngram_rows: np.ndarray | None
    ngrams: NgramSettings | None


def load_word_vectors(path: str, limit: int | None = None) -> StoredVectors:
    """The words, their rows of ``syn0`` and their counts (``StoredVectors``) of a model
    file or checkpoint (a folder: its checkpoint), without its other arrays; ``limit``:
    only the first ``limit`` words. ``syn0`` is memory-mapped: of a subword model's
    n-gram rows, only the pages a query reads are. FormatError if it is not a w2v
    model file."""
    path = model_file(path)
    with open_archive(path) as archive:
        _, config = checked_archive(archive, path)
        raw, offsets, counts = (
            read_entry(archive, path, name) for name in ("vocab_words", "vocab_offsets", "vocab_counts")
        )
        syn0 = mapped_entry(archive, path, "syn0")
    size = len(counts)
    n = size if limit is None else min(limit, size)
    try:
        words = vocab_words(raw.tobytes(), offsets, n)
    except ValueError as err:
        raise FormatError(f"{path}: damaged model file ({err})") from None
    if not config.subwords:
        return StoredVectors(words, np.array(syn0[:n]), counts[:n], None, None)
    return StoredVectors(words, np.array(syn0[:n]), counts[:n], syn0[size:], NgramSettings.of(config))


class ModelRecord(NamedTuple):
    """What a model file or checkpoint says of its run, read without its weights: the
    settings (``config``), the vocabulary's size (``words``), each epoch's mean loss
    (``epoch_loss``, nats per example; nan for an epoch not trained yet) and the
    metadata's other fields (``progress``: ``META_FIELDS``, checked)."""

    config: TrainConfig
    words: int
    epoch_loss: list[float]
    progress: dict


def read_record(path: str) -> ModelRecord:
    """The ``ModelRecord`` of a model file or checkpoint (a folder: its checkpoint
    file); FormatError if it is not a w2v model file or is damaged."""
    path = model_file(path)
    with open_archive(path) as archive:
        meta, config = checked_archive(archive, path)  # vocab_counts is then (V,)
        (words,), _ = entry_header(archive, path, "vocab_counts")
        loss, examples = (read_entry(archive, path, name) for name in EPOCH_ARRAYS)
    try:
        progress = _meta_fields(meta)
    except (KeyError, TypeError, ValueError) as err:
        raise FormatError(f"{path}: damaged model file ({err})") from None
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_loss = np.where(examples > 0, loss / examples, math.nan)
    return ModelRecord(config, words, mean_loss.tolist(), progress)


def mapped_entry(archive: zipfile.ZipFile, path: str, name: str) -> np.ndarray:
    """Array ``name`` of ``archive`` (its header checked, ``entry_header``) memory-mapped
    read-only from the file: ``np.savez`` stores it uncompressed, after the zip entry's
    local header and the array's ``.npy`` header."""
    shape, dtype = entry_header(archive, path, name)
    info = archive.getinfo(f"{name}.npy")
    with open(path, "rb") as raw:
        raw.seek(info.header_offset)
        local = raw.read(ZIP_LOCAL_HEADER.size)
        _, name_bytes, extra_bytes = ZIP_LOCAL_HEADER.unpack(local)
        entry_start = info.header_offset + ZIP_LOCAL_HEADER.size + name_bytes + extra_bytes
    with archive.open(info) as entry:
        HEADER_READERS[npformat.read_magic(entry)](entry)
        data_start = entry_start + entry.tell()
    if not math.prod(shape):
        return np.empty(shape, dtype=dtype)  # numpy cannot map 0 bytes
    return np.memmap(path, dtype=dtype, mode="r", offset=data_start, shape=shape)


def vocab_words(raw: bytes, offsets: np.ndarray, count: int) -> list[bytes]:
    """The first ``count`` words of a model file's vocabulary: ``raw``, the words' bytes,
    cut at ``offsets`` ((V + 1,) int64). ValueError for offsets out of order (words would
    come out empty or merged) or a word holding ASCII whitespace: w2v's words are a
    corpus', which whitespace ends, so the file is damaged, and its word would be
    written to vectors files as several."""
    if offsets[0] != 0 or offsets[-1] != len(raw) or (np.diff(offsets) <= 0).any():
        raise ValueError("vocabulary offsets out of order")
    end = int(offsets[count])
    space = FIRST_SPACE.search(raw, 0, end)
    if space:
        index = int(np.searchsorted(offsets, space.start(), side="right")) - 1
        raise ValueError(split_reason(index, decode_word(raw[offsets[index] : offsets[index + 1]])))
    return [raw[a:b] for a, b in itertools.pairwise(offsets[: count + 1].tolist())]


def checked_archive(archive: zipfile.ZipFile, path: str) -> tuple[dict, TrainConfig]:
    """The metadata and settings of the model file ``archive``, once every array's header
    is checked against them (``check_entries``); FormatError if damaged."""
    meta = parse_meta(path, read_entry(archive, path, "meta"))
    try:
        config = TrainConfig(**meta["config"])
        if meta["version"] < 5 and meta.get("replicas"):  # a cluster's run before blocks: in rounds
            config = dataclasses.replace(config, rounds=True)
        config.validate()
    except (KeyError, TypeError, ValueError, ConfigError) as err:  # ConfigError: damaged settings
        raise FormatError(f"{path}: damaged model file ({err})") from None
    check_entries(archive, path, config)
    return meta, config


PROGRESS = ("jobs_done",)  # batches trained over all epochs
SIZES = ("batches", "stream_words", "corpus_words", "corpus_digest")  # of the corpus as encoded (>= 0)
META_FIELDS = (*PROGRESS, *SIZES, "notes", "replicas", "blocks")  # absent from older files: < 3, < 5
BLOCK_FIELDS = ("epoch", "sweep")  # a run in blocks goes on at this epoch's sweep
REPLICA_FIELDS = {"parts": list, "jobs_done": int, "batches": int, "words": int, "digest": int}


def _meta_fields(meta: dict) -> dict:
    values = {key: meta[key] for key in (*PROGRESS, *SIZES, "notes")}
    values["replicas"] = meta.get("replicas", [])
    values["blocks"] = meta.get("blocks", {})
    if values["blocks"] and not (
        isinstance(values["blocks"], dict) and all(isinstance(values["blocks"].get(k), int) for k in BLOCK_FIELDS)
    ):
        raise ValueError("bad blocks")
    if not isinstance(values["notes"], dict) or not all(isinstance(values[k], int) for k in PROGRESS + SIZES):
        raise ValueError("bad progress fields")
    replicas = values["replicas"]
    if not isinstance(replicas, list) or not all(
        isinstance(r, dict) and all(isinstance(r.get(k), kind) for k, kind in REPLICA_FIELDS.items()) for r in replicas
    ):
        raise ValueError("bad replicas")
    return values


def describe_progress(jobs_done: int, batches: int, epochs: int) -> str:
    """Where a run stands, e.g. ``epoch 2 of 5, 43% done``, from its ``meta`` progress
    fields (so a checkpoint can be described without reading its weights)."""
    total = batches * epochs
    if jobs_done >= total:
        return "its one epoch done" if epochs == 1 else f"all {epochs} epochs done"
    return f"epoch {jobs_done // max(batches, 1) + 1} of {epochs}, {100 * jobs_done / max(total, 1):.0f}% done"


def check_replaceable(folder: str, resume: str | None) -> None:
    """ConfigError if the checkpoint folder ``folder`` holds a checkpoint that a run
    resuming ``resume`` (a checkpoint or its folder; None for a fresh run) must not
    replace: one it does not resume that is of an unfinished run (its epochs left
    would be lost) or that cannot be read. A finished run's checkpoint may be
    replaced: its vectors and model were written when it ended, and a rerun of the
    same command (a script, a Makefile) would otherwise fail."""
    path = checkpoint_path(folder)
    if not os.path.isfile(path) or (resume is not None and os.path.samefile(model_file(resume), path)):
        return
    try:
        meta = read_meta(folder)
        done, batches, epochs = meta["jobs_done"], meta["batches"], meta["config"]["epochs"]
        finished = done >= batches * epochs
    except (FormatError, KeyError, TypeError) as err:
        reason = str(err) if isinstance(err, FormatError) else f"{path}: damaged model file (bad progress fields)"
        raise ConfigError(f"{reason}: start afresh in another folder or after deleting {path}") from None
    if not finished:
        held = f"checkpoint folder {folder} holds an unfinished run ({describe_progress(done, batches, epochs)})"
        raise ConfigError(
            f"{held}: continue it with resume={folder!r}, or start afresh in another folder or after deleting {path}",
            f"{held}: continue it with 'w2v train --resume {folder}', or start afresh with another --checkpoint "
            f"folder or after deleting {path}",
        )


def checkpoint_path(folder: str) -> str:
    """The checkpoint file kept in ``folder``."""
    return os.path.join(folder, CHECKPOINT_FILE)


def model_file(path: str) -> str:
    """``path``, or the checkpoint file in it when it is a folder."""
    return checkpoint_path(path) if os.path.isdir(path) else path


def read_meta(path: str) -> dict:
    """The JSON metadata of a model file or checkpoint, without reading its arrays."""
    path = model_file(path)
    with open_archive(path) as archive:
        return parse_meta(path, read_entry(archive, path, "meta"))


def parse_meta(path: str, raw: np.ndarray) -> dict:
    """The metadata dict from its archive entry (UTF-8 JSON bytes); FormatError if
    it is not a w2v model file of this version."""
    try:
        meta = json.loads(raw.tobytes())
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise FormatError(f"{path} is not a w2v model file")
    if meta.get("version") not in READABLE_VERSIONS:
        raise FormatError(
            f"{path}: model file version {meta.get('version')} is not supported "
            f"(this w2v reads versions {', '.join(map(str, READABLE_VERSIONS))})"
        )
    return meta


# What reading a damaged archive raises; zipfile: RuntimeError for an entry flagged
# encrypted, NotImplementedError for an unknown compression method.
DAMAGED_ARCHIVE = (
    *(ValueError, KeyError, TypeError, AttributeError, EOFError, RuntimeError, NotImplementedError),
    *(zipfile.BadZipFile, zlib.error),
)


@contextmanager
def open_archive(path: str) -> Iterator[zipfile.ZipFile]:
    """The ``.npz`` (zip) archive at ``path``, open for the block; what goes wrong
    reading it there (a missing file, a damaged archive) is a FormatError."""
    try:
        with zipfile.ZipFile(path) as archive:
            yield archive
    except FileNotFoundError:
        raise FormatError(f"model file not found: {path}") from None
    except IsADirectoryError:
        raise FormatError(f"no checkpoint in folder {os.path.dirname(path)}") from None
    except OSError as err:
        raise FormatError(f"cannot read model file {path}: {err.strerror or err}") from None
    except DAMAGED_ARCHIVE as err:
        raise NotAModelError(f"{path} is not a w2v model file or is damaged ({err})", path) from None


# A zip entry's local header: its signature and the lengths of the name and the extra
# field that come between it and the data (the other 22 bytes skipped).
ZIP_LOCAL_HEADER = struct.Struct("<I22xHH")
MAX_META_BYTES = 1 << 20  # the JSON metadata: settings, progress, a command line (a few KB)
HEADER_READERS = {(1, 0): npformat.read_array_header_1_0, (2, 0): npformat.read_array_header_2_0}


def entry_header(archive: zipfile.ZipFile, path: str, name: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and type of array ``name`` in ``archive`` from its ``.npy`` header,
    without reading its data. FormatError unless the entry is stored uncompressed
    (as ``np.savez`` writes it) and holds as many bytes as its header declares: an
    array then takes no more memory than it takes in the file (a compressed entry
    of a few MB could expand to gigabytes)."""
    info = archive.getinfo(f"{name}.npy")
    if info.compress_type != zipfile.ZIP_STORED:
        raise FormatError(f"{path}: damaged model file ({name} is compressed; w2v stores arrays uncompressed)")
    with archive.open(info) as entry:
        shape, fortran_order, dtype = HEADER_READERS[npformat.read_magic(entry)](entry)
        data_bytes = info.file_size - entry.tell()
    if fortran_order or data_bytes != math.prod(shape) * dtype.itemsize:
        raise FormatError(f"{path}: damaged model file ({name} holds {data_bytes:,} bytes for {dtype} {shape})")
    return shape, dtype


def saved_momentum(archive: zipfile.ZipFile) -> tuple[str, ...]:
    """The names of ``MOMENTUM``'s arrays that ``archive`` holds (a checkpoint of a run
    combined with block momentum holds the output weights' or all three;
    ``TrainState.from_parts`` refuses others)."""
    names = set(archive.namelist())
    return tuple(key for key in MOMENTUM.values() if f"{key}.npy" in names)


def check_entries(archive: zipfile.ZipFile, path: str, config: TrainConfig) -> None:
    """FormatError unless every array's header gives the shape and type that the
    settings ``config`` and the vocabulary's size (``vocab_counts``' length) make."""
    counts_shape, _ = entry_header(archive, path, "vocab_counts")
    size = counts_shape[0] if len(counts_shape) == 1 else 0
    words_shape, words_dtype = entry_header(archive, path, "vocab_words")
    weights, momentum = weight_shapes(size, config), saved_momentum(archive)
    expected = {
        "vocab_counts": ((size,), np.dtype(np.int64)),
        "vocab_offsets": ((size + 1,), np.dtype(np.int64)),
        "vocab_words": ((max(words_shape[0], size),) if len(words_shape) == 1 else (size,), np.dtype(np.uint8)),
        **{name: (shape, np.dtype(np.float32)) for name, shape in weights.items()},
        **{key: (weights[name], np.dtype(np.float32)) for name, key in MOMENTUM.items() if key in momentum},
        "epoch_loss": ((config.epochs,), np.dtype(np.float64)),
        "epoch_examples": ((config.epochs,), np.dtype(np.int64)),
    }  # vocab_words: the words' bytes, at least one per word
    for name, (shape, dtype) in expected.items():
        found = (words_shape, words_dtype) if name == "vocab_words" else entry_header(archive, path, name)
        if found != (shape, dtype):
            raise FormatError(
                f"{path}: damaged model file ({name} is {found[1]} {found[0]} where the settings "
                f"and the vocabulary's {size:,} words make {dtype} {shape})"
            )


def read_entry(archive: zipfile.ZipFile, path: str, name: str) -> np.ndarray:
    """Array ``name`` of ``archive``, its header checked first (``entry_header``);
    ``meta`` must be at most ``MAX_META_BYTES`` of uint8."""
    shape, dtype = entry_header(archive, path, name)
    if name == "meta" and (len(shape) != 1 or dtype != np.uint8 or shape[0] > MAX_META_BYTES):
        raise FormatError(f"{path}: damaged model file (meta is {dtype} {shape})")
    with archive.open(f"{name}.npy") as entry:
        return npformat.read_array(entry, allow_pickle=False)
