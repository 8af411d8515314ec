"""Long runs: checkpoints, resume, interruption, saved models and continued training."""

import dataclasses
import fcntl
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npformat

import w2v.vectorio.modelfile
from w2v.corpus.vocab import Vocab
from w2v.engine import kernels
from w2v.engine.weights import Model, carry_weights
from w2v.errors import ConfigError, CorpusError, DivergedError, FormatError, W2VError
from w2v.locks import checkpoint_lock
from w2v.train import train
from w2v.vectorio.modelfile import TrainState, checkpoint_path, describe_progress
from w2v.vectors.wordvectors import Vectors

SETTINGS = {"dim": 12, "epochs": 3, "threads": 1, "min_count": 2, "batch_words": 500, "seed": 7}
WORDS = "the a cat dog sat on mat log red and met were blue fox ran far".split()  # noqa: SIM905


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 20,000 words of random sentences over 16 words (40 batches of 500)."""
    rng = np.random.default_rng(3)
    lines = [" ".join(rng.choice(WORDS, size=rng.integers(3, 12))) for _ in range(2600)]
    path = tmp_path_factory.mktemp("long") / "corpus.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def uninterrupted(corpus):
    return train(str(corpus), **SETTINGS)


def interrupt_at(fraction: float):
    """An ``on_progress`` callback raising KeyboardInterrupt past ``fraction`` of the run."""

    def callback(done, total, _alpha, _loss):
        if done >= fraction * total and done < total:
            raise KeyboardInterrupt

    return callback


def interrupted_run(corpus, folder, monkeypatch, settings: dict) -> TrainState:
    """The checkpoint in ``folder`` of a run of ``settings`` on ``corpus`` interrupted at
    40%, each of its batches slowed (``slow_down``) until it stops."""
    slow_down(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(str(corpus), checkpoint=str(folder), on_progress=interrupt_at(0.4), **settings)
    monkeypatch.undo()
    return TrainState.load(str(folder))


def slow_down(monkeypatch):
    """Make every batch take a while, so the main thread sees the run in progress."""
    kernel = kernels.train_batch  # run_epochs imports it from there when called

    def slowed(*args):
        time.sleep(0.01)
        return kernel(*args)

    monkeypatch.setattr(kernels, "train_batch", slowed)


def test_resume_after_interrupt_is_byte_identical(corpus, uninterrupted, tmp_path, monkeypatch):
    folder = tmp_path / "ck"
    state = interrupted_run(corpus, folder, monkeypatch, SETTINGS)
    assert 0 < state.jobs_done < state.batches * state.config.epochs  # stopped mid-run
    resumed = train(str(corpus), resume=str(folder), threads=1)
    assert resumed.vectors.tobytes() == uninterrupted.vectors.tobytes()
    assert resumed.report.epoch_loss == pytest.approx(uninterrupted.report.epoch_loss, rel=1e-9)
    state = TrainState.load(str(folder))
    assert state.jobs_done == state.batches * state.config.epochs  # every batch of every epoch


def test_a_resumed_run_keeps_its_streams_whatever_its_threads(corpus, tmp_path, monkeypatch):
    """The default streams (one a thread) are resolved once and stored with the run: a run
    of 2 threads resumed with 1 keeps its 2 streams, so each batch is trained once."""
    folder = tmp_path / "ck"
    assert interrupted_run(corpus, folder, monkeypatch, {**SETTINGS, "threads": 2}).config.streams == 2
    train(str(corpus), resume=str(folder), threads=1)
    state = TrainState.load(str(folder))
    assert state.config.streams == 2 and state.jobs_done == state.batches * state.config.epochs


def test_resume_with_evenly_spaced_streams_is_byte_identical(corpus, tmp_path, monkeypatch):
    """``streams=4``: the batches' order is stored with the run, so an interrupted run
    resumes it and ends byte-identical to an uninterrupted one."""
    settings = {**SETTINGS, "streams": 4}
    whole = train(str(corpus), **settings)
    folder = tmp_path / "ck"
    assert interrupted_run(corpus, folder, monkeypatch, settings).config.streams == 4
    resumed = train(str(corpus), resume=str(folder), threads=1)
    assert resumed.vectors.tobytes() == whole.vectors.tobytes()


class Gate:
    """Wraps the kernel: batches after the first ``free`` ones wait (in the worker
    thread) until ``release`` is set, so the main thread sees a run under way at a
    known point, with no timing involved. Records, per batch, whether it began
    after ``release`` was set."""

    def __init__(self, monkeypatch, free: int):
        self.kernel, self.free = kernels.train_batch, free  # run_epochs imports it when called
        self.release, self.lock, self.began_after = threading.Event(), threading.Lock(), []
        monkeypatch.setattr(kernels, "train_batch", self.gated)

    def gated(self, *args):
        if len(args[0]) == 0:  # run_epochs loading the kernel on no tokens: not a batch
            return self.kernel(*args)
        with self.lock:
            self.began_after.append(self.release.is_set())
            waits = len(self.began_after) > self.free
        if waits and not self.release.wait(60):
            raise AssertionError("the main thread never released the workers")
        self.while_held()
        return self.kernel(*args)

    def while_held(self) -> None:
        """Runs in a worker, in its batch, after the release (a hook for subclasses)."""


def test_workers_stop_after_the_batch_under_way(corpus, tmp_path, monkeypatch):
    """Ctrl-C: each worker finishes the batch it is on and takes at most one more (one it
    took before it could see the stop), not the rest of the epoch; the checkpoint holds
    every batch begun. So the stop takes a batch or two of time (--batch-words)."""
    gate = Gate(monkeypatch, free=4)

    def interrupt(done, _total, _alpha, _loss):
        if done > 0:
            gate.release.set()
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(str(corpus), checkpoint=str(tmp_path), on_progress=interrupt, **{**SETTINGS, "threads": 2})
    state = TrainState.load(str(tmp_path))
    assert sum(gate.began_after) <= 2  # at most one a thread
    assert state.jobs_done == len(gate.began_after) < state.batches // 2


def main_thread_in(function: str) -> bool:
    """Whether the main thread is running ``function`` (by name) right now."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None and frame.f_code.co_name != function:
        frame = frame.f_back
    return frame is not None


class SecondInterrupt(Gate):
    """Once released, one worker waits until the main thread is inside
    ``stop_segment`` (waiting for the batches under way), sends the process a SIGINT
    and holds its batch until the main thread has handled it."""

    def __init__(self, monkeypatch, free: int):
        super().__init__(monkeypatch, free)
        self.sent, self.handled = threading.Event(), threading.Event()

    def while_held(self) -> None:
        with self.lock:
            if not self.release.is_set() or self.sent.is_set():
                return
            self.sent.set()
        deadline = time.monotonic() + 60
        while not main_thread_in("stop_segment"):
            assert time.monotonic() < deadline, "the main thread never waited for the workers"
            os.sched_yield()
        os.kill(os.getpid(), signal.SIGINT)
        assert self.handled.wait(60), "the second interrupt was never handled"

    def handler(self, signum, frame):
        self.handled.set()
        signal.default_int_handler(signum, frame)


def test_a_second_interrupt_while_workers_stop_keeps_the_checkpoint_exact(corpus, uninterrupted, tmp_path, monkeypatch):
    """Ctrl-C twice: the second arrives while the main thread waits for the batch under way;
    the checkpoint still records exactly the batches done, so resuming is byte-identical."""
    gate = SecondInterrupt(monkeypatch, free=4)

    def interrupt(done, _total, _alpha, _loss):
        if done > 0 and not gate.release.is_set():
            gate.release.set()
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, gate.handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            train(str(corpus), checkpoint=str(tmp_path), on_progress=interrupt, **SETTINGS)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert gate.handled.is_set()
    assert TrainState.load(str(tmp_path)).jobs_done == len(gate.began_after)
    monkeypatch.undo()
    resumed = train(str(corpus), resume=str(tmp_path), threads=1)
    assert resumed.vectors.tobytes() == uninterrupted.vectors.tobytes()


def test_checkpoints_every_few_ms_change_nothing(corpus, uninterrupted, tmp_path, monkeypatch):
    slow_down(monkeypatch)
    saved: list[int] = []
    save = TrainState.save
    monkeypatch.setattr(TrainState, "save", lambda self, path: (saved.append(self.jobs_done), save(self, path))[1])
    result = train(str(corpus), checkpoint=str(tmp_path), checkpoint_every=0.05 / 60, **SETTINGS)
    assert result.vectors.tobytes() == uninterrupted.vectors.tobytes()
    state = TrainState.load(str(tmp_path))
    batches = state.batches
    assert saved == sorted(saved) and saved[-1] == 3 * batches
    assert {batches, 2 * batches} <= set(saved)  # every epoch's end
    assert any(jobs % batches for jobs in saved)  # and mid-epoch, by the clock
    np.testing.assert_array_equal(state.syn0, result.vectors)
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.npz"]


def test_a_checkpoint_folder_serves_one_run_at_a_time(corpus, tmp_path):
    """Two runs sharing a --checkpoint folder would overwrite each other's checkpoint:
    the second fails at once, naming the first's process; the first holds the folder
    while it runs and leaves nothing but its checkpoint."""
    folder = tmp_path / "ck"
    held_by_run = []

    def try_to_take(_epoch, _loss):
        with pytest.raises(ConfigError) as refused, checkpoint_lock(str(folder)):
            pass
        held_by_run.append(str(refused.value))

    settings = {**SETTINGS, "epochs": 1}
    train(str(corpus), checkpoint=str(folder), on_epoch_end=try_to_take, **settings)
    busy = f"checkpoint folder {folder} is in use by another run (pid {os.getpid()})"
    assert held_by_run == [busy]
    assert [p.name for p in folder.iterdir()] == ["checkpoint.npz"]
    before = (folder / "checkpoint.npz").read_bytes()
    with checkpoint_lock(str(folder)):  # another run's, here this process's
        assert (folder / ".lock").read_text() == f"{os.getpid()}\n"
        with pytest.raises(ConfigError, match=re.escape(busy)):
            train(str(corpus), checkpoint=str(folder), **settings)
        with pytest.raises(ConfigError, match=re.escape(busy)):
            train(str(corpus), resume=str(folder))
    assert (folder / "checkpoint.npz").read_bytes() == before
    assert [p.name for p in folder.iterdir()] == ["checkpoint.npz"]


def test_a_lock_file_removed_while_it_is_locked_is_made_anew(tmp_path, monkeypatch):
    """The run holding the folder ends (removing its lock file) between this run's open
    and its lock: a lock on the removed file would lock nothing, so it starts over."""
    flock, calls = fcntl.flock, []

    def late(fd, operation):
        if not calls:
            os.unlink(tmp_path / ".lock")  # the holder ends here
        calls.append(fd)
        return flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", late)
    with checkpoint_lock(str(tmp_path)):
        assert len(calls) == 2
        assert (tmp_path / ".lock").read_text() == f"{os.getpid()}\n"
        monkeypatch.setattr(fcntl, "flock", flock)
        with pytest.raises(ConfigError, match="in use by another run"), checkpoint_lock(str(tmp_path)):
            pass
    assert list(tmp_path.iterdir()) == []


def test_failed_checkpoint_write_keeps_the_previous_one(corpus, tmp_path, monkeypatch):
    train(str(corpus), checkpoint=str(tmp_path), **{**SETTINGS, "epochs": 1})
    before = (tmp_path / "checkpoint.npz").read_bytes()

    def broken(out, **arrays):
        out.write(b"PK\x03\x04 half an archive")
        raise KeyboardInterrupt

    monkeypatch.setattr(w2v.vectorio.modelfile.np, "savez", broken)
    with pytest.raises(KeyboardInterrupt):
        train(str(corpus), checkpoint=str(tmp_path), **{**SETTINGS, "epochs": 1})
    assert (tmp_path / "checkpoint.npz").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.npz"]


def test_non_finite_weights_stop_training_before_a_checkpoint(corpus, tmp_path, monkeypatch):
    """A weight gone infinite that no batch reads afterwards (so every loss is finite) is
    found at the epoch's end: no checkpoint holds it, the message names --alpha."""
    kernel = kernels.train_batch

    kept = {}

    def corrupting(tokens, syn0, *args):
        syn0[-1, 0] = kept.get("value", syn0[-1, 0])  # each batch reads finite weights
        result = kernel(tokens, syn0, *args)
        kept["value"], syn0[-1, 0] = syn0[-1, 0], np.inf  # and leaves one infinite
        return result

    monkeypatch.setattr(kernels, "train_batch", corrupting)
    folder = tmp_path / "ck"
    with pytest.raises(DivergedError, match=r"epoch 1 \(non-finite weights in syn0\): lower .* \(--alpha"):
        train(str(corpus), checkpoint=str(folder), **SETTINGS)
    assert list(folder.iterdir()) == []


def test_resume_checks_corpus_and_settings(corpus, tmp_path):
    train(str(corpus), checkpoint=str(tmp_path), **{**SETTINGS, "epochs": 1})
    other = tmp_path / "other.txt"
    other.write_text(corpus.read_text().replace("cat dog", "dog cat"))
    with pytest.raises(CorpusError, match="not the one checkpointed"):
        train(str(other), resume=str(tmp_path))
    with pytest.raises(ConfigError, match="cannot change dim, window"):
        train(str(corpus), resume=str(tmp_path), dim=5, window=2)
    with pytest.raises(FormatError, match="model file not found"):
        train(str(corpus), resume=str(tmp_path / "nothing"))


def test_model_file_layout(corpus, tmp_path):
    path = tmp_path / "model.npz"
    vectors = train(str(corpus), save_model=str(path), hs=True, **SETTINGS)
    with np.load(path, allow_pickle=False) as archive:
        names = set(archive.files)
        np.testing.assert_array_equal(archive["syn0"], vectors.vectors)
        assert archive["syn1"].shape == (len(vectors) - 1, 12) and archive["syn1neg"].shape == (0, 12)
        words = archive["vocab_words"].tobytes()
        offsets = archive["vocab_offsets"]
        assert [words[a:b].decode() for a, b in itertools.pairwise(offsets)] == vectors.words
        assert archive["vocab_counts"].sum() == len(corpus.read_text().split())
    assert names == {*w2v.vectorio.modelfile.ARRAYS, "meta"}
    state = TrainState.load(str(path))
    assert state.jobs_done == state.batches * state.config.epochs
    assert state.config.hs and state.config.negative == 0


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a zip file at all", b"PK\x03\x04truncated"],
)
def test_damaged_model_file(tmp_path, damage):
    path = tmp_path / "model.npz"
    path.write_bytes(damage)
    with pytest.raises(FormatError, match=r"model\.npz"):
        TrainState.load(str(path))


@pytest.mark.parametrize(
    ("field", "value"),
    [(8, 0x01), (10, 99), (10, 8)],  # in each entry: the encrypted flag; compression: unknown, deflate
    ids=["encrypted", "unknown method", "deflate"],
)
def test_model_file_with_damaged_zip_entries(saved_model, tmp_path, field, value):
    blob = bytearray(saved_model[1].read_bytes())
    for entry in re.finditer(b"PK\x01\x02", blob):  # the central directory's entries
        blob[entry.start() + field] |= value
    path = tmp_path / "model.npz"
    path.write_bytes(bytes(blob))
    with pytest.raises(FormatError, match=r"model\.npz"):
        TrainState.load(str(path))


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("vocab_offsets", lambda a: a[::-1].copy(), "offsets out of order"),  # words would come out empty
        ("vocab_offsets", lambda a: a - 3, "offsets out of order"),
        ("vocab_counts", lambda a: -a, "count below 1"),
    ],
)
def test_model_file_with_a_damaged_vocabulary(saved_model, tmp_path, name, change, message):
    with np.load(saved_model[1], allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    arrays[name] = change(arrays[name])
    path = tmp_path / "model.npz"
    np.savez(path, **arrays)
    with pytest.raises(FormatError, match=message):
        TrainState.load(str(path))


def rewritten(source, target, change_arrays=None, change_meta=None):
    """Write to ``target`` the model file ``source`` with its arrays and meta changed in place
    by ``change_arrays(arrays)`` and ``change_meta(meta)``, as np.savez writes a model."""
    with np.load(source, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    meta = json.loads(arrays["meta"].tobytes())
    if change_meta is not None:
        change_meta(meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    if change_arrays is not None:
        change_arrays(arrays)
    np.savez(target, **arrays)
    return target


def poisoned(arrays):
    arrays["syn0"] = arrays["syn0"].copy()
    arrays["syn0"][3, 5] = np.nan


def with_momentum(*names, poison=False, shape=None):
    """A change of a model's arrays that adds the momentum of the weights ``names``:
    zeros, shaped as the weight (or ``shape``), with a NaN if ``poison``."""

    def change(arrays):
        for name in names:
            momentum = np.zeros(shape or arrays[name].shape, np.float32)
            if poison and momentum.size:
                momentum[2, 1] = np.nan
            arrays[f"momentum_{name}"] = momentum

    return change


def with_a_word_twice(arrays):
    """Spell the second word of the vocabulary as the first: both would get a vector."""
    raw, offsets = arrays["vocab_words"].tobytes(), arrays["vocab_offsets"].tolist()
    words = [raw[a:b] for a, b in itertools.pairwise(offsets)]
    words[1] = words[0]
    arrays["vocab_words"] = np.frombuffer(b"".join(words), np.uint8)
    arrays["vocab_offsets"] = np.concatenate([[0], np.cumsum([len(w) for w in words])]).astype(np.int64)


@pytest.mark.parametrize("names", [("syn0", "syn1", "syn1neg"), ("syn1", "syn1neg")], ids=["momentum", "mixed"])
def test_a_checkpoint_keeps_the_rows_momentum(saved_model, tmp_path, names):
    state, _ = saved_model
    momentum = {name: np.full_like(getattr(state, name), 0.5) for name in names}
    dataclasses.replace(state, momentum=momentum).save(str(tmp_path / "model.npz"))
    loaded = TrainState.load(str(tmp_path / "model.npz"))
    assert loaded.momentum.keys() == momentum.keys()
    for name, rows in momentum.items():
        np.testing.assert_array_equal(loaded.momentum[name], rows)
    assert TrainState.load(str(saved_model[1])).momentum == {}  # a run in one process has none


@pytest.mark.parametrize(
    ("change_arrays", "change_meta", "message"),
    [
        (poisoned, None, r"non-finite weights in syn0"),
        (lambda a: a.update(epoch_loss=np.array([1.0, np.inf, 0.0])), None, "an epoch's loss"),
        (lambda a: a.update(epoch_examples=-a["epoch_examples"] - 1), None, "an epoch's loss or example count"),
        (None, lambda m: m.update(jobs_done=-1), r"jobs_done -1 is not within 0 to 42 batches x 3 epochs"),
        (None, lambda m: m.update(jobs_done=127), r"jobs_done 127 is not within 0 to 42"),
        (None, lambda m: m.update(batches=-40, jobs_done=0), r"negative batches\)"),
        (with_momentum("syn0", "syn1", "syn1neg", poison=True), None, r"non-finite momentum of syn0"),
        (with_momentum("syn0"), None, r"the momentum of some weights only"),
        (with_momentum("syn0", "syn1neg"), None, r"the momentum of some weights only"),
        (None, lambda m: m["config"].update(window=2**31 - 1), r"window must be at most 10,000, not 2,147,483,647"),
        (None, lambda m: m["config"].update(negative=2.5), r"negative must be an integer, not 2\.5\)"),
        (None, lambda m: m["config"].update(threads=[1]), r"threads must be a positive integer, not \[1\]\)"),
        (lambda a: a.update(vocab_counts=a["vocab_counts"] + 2**62), None, "word counts adding up to more than 1,152,"),
        (with_a_word_twice, None, r"a word listed twice\)"),
    ],
    ids=[
        "NaN weight",
        "infinite loss",
        "negative examples",
        "negative jobs_done",
        "jobs_done past the end",
        "batches",
        "NaN momentum",
        "some momentum",
        "no output momentum",
        "enormous window",
        "fractional negative",
        "a list of threads",
        "counts near int64's maximum",
        "a word twice",
    ],
)
def test_model_file_with_values_no_run_has_is_refused(saved_model, tmp_path, change_arrays, change_meta, message):
    """A checkpoint is a file people share: NaN weights would resume into NaN vectors
    (exit 0), a jobs_done out of range would skip or repeat batches."""
    path = rewritten(saved_model[1], tmp_path / "model.npz", change_arrays, change_meta)
    with pytest.raises(FormatError, match=rf"model\.npz: damaged model file \({message}"):
        TrainState.load(str(path))


PAST_A_PIECE = "no context reaches past a sentence piece of 10,000 tokens"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"negative": 2.5}, "negative must be an integer, not 2.5"),  # compiled for minutes, then a TypingError
        ({"window": 10_001}, f"window must be at most 10,000, not 10,001: {PAST_A_PIECE}"),  # 2**31 - 1: a hang
    ],
)
def test_cli_refuses_a_model_files_impossible_settings(saved_model, corpus, tmp_path, settings, message, run_w2v):
    path = rewritten(saved_model[1], tmp_path / "model.npz", change_meta=lambda meta: meta["config"].update(settings))
    for argv in (["score", str(path), str(corpus)], ["train", str(corpus), "--init-model", str(path), "-q"]):
        code, _, err = run_w2v(*argv)
        assert (code, err) == (1, f"w2v: error: {path}: damaged model file ({message})\n")


@pytest.mark.parametrize(
    ("notes", "message"),
    [
        ({"command": "w2v train corpus.txt"}, "notes.command is not a table of options"),
        ({"command": ["train", "corpus.txt"]}, "notes.command is not a table of options"),
        ("w2v train corpus.txt", "notes.command is not a table of options"),
        ({"command": {"threads": [1]}}, "notes.command.threads must be an integer, not [1]"),
        ({"command": {"output": "v\x00.bin"}}, "notes.command.output must be a string, not 'v\\x00.bin'"),
        ({"command": {"corpus": "corpus.txt"}}, "notes.command.corpus must be a list of strings, not 'corpus.txt'"),
        ({"command": {"hs": None}}, "notes.command.hs must be true or false, not None"),
    ],
    ids=["command a string", "command a list", "notes a string", "threads a list", "a NUL", "corpus a string", "None"],
)
def test_cli_resume_refuses_a_damaged_recorded_command(saved_model, corpus, tmp_path, notes, message, run_w2v):
    """--resume takes the options the checkpoint's command recorded: a value of another
    type would reach the command (TypeError, AttributeError; a NUL in a path: ValueError)."""
    folder = tmp_path / "ck"
    folder.mkdir()
    rewritten(saved_model[1], checkpoint_path(folder), change_meta=lambda meta: meta.update(notes=notes))
    code, _, err = run_w2v("train", str(corpus), "--resume", str(folder), "-o", str(tmp_path / "v.bin"), "-q")
    damaged = f"{checkpoint_path(folder)}: damaged model file ({message})"
    assert (code, err) == (2, f"w2v: error: Invalid value for --resume: {damaged}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]


def npy_entry(array, shape=None) -> bytes:
    """An .npy file of ``array``'s data whose header declares ``shape`` (default: its own)."""
    out = io.BytesIO()
    header = {"descr": npformat.dtype_to_descr(array.dtype), "fortran_order": False, "shape": shape or array.shape}
    npformat.write_array_header_1_0(out, header)
    return out.getvalue() + array.tobytes()


def lying_header(source, target):
    """``source`` with syn0's header claiming 4.8 GB (10**8 rows) over the data it holds."""
    with np.load(source, allow_pickle=False) as archive, zipfile.ZipFile(target, "w") as out:
        for name in archive.files:
            array = archive[name]
            out.writestr(f"{name}.npy", npy_entry(array, (10**8, 12) if name == "syn0" else None))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda source, target: np.savez_compressed(target, **np.load(source)), r"meta is compressed"),
        (lying_header, r"syn0 holds 768 bytes for float32 \(100000000, 12\)"),
        (
            lambda source, target: rewritten(source, target, lambda a: a.update(syn0=np.zeros((16, 13), np.float32))),
            r"syn0 is float32 \(16, 13\) where the settings and the vocabulary's 16 words make float32 \(16, 12\)",
        ),
        (
            lambda source, target: rewritten(source, target, with_momentum("syn0", shape=(16, 13))),
            r"momentum_syn0 is float32 \(16, 13\) where .* make float32 \(16, 12\)",
        ),
        (
            lambda source, target: rewritten(source, target, lambda a: a.update(epoch_loss=np.array(["a", "b", "c"]))),
            r"epoch_loss is <U1 \(3,\) where .* make float64 \(3,\)",
        ),
        (
            lambda source, target: rewritten(source, target, lambda a: a.update(vocab_words=a["vocab_words"][:10])),
            r"vocab_words is uint8 \(10,\) where .* 16 words make uint8 \(16,\)",
        ),
    ],
    ids=[
        "compressed",
        "header larger than its data",
        "shape unlike the settings",
        "momentum unlike its weight",
        "strings",
        "words too short",
    ],
)
def test_model_file_arrays_are_checked_before_any_is_read(saved_model, tmp_path, monkeypatch, make, message):
    """A small file must not make w2v allocate gigabytes: every array's shape and type
    come from its .npy header, checked against the settings before any data is read,
    and an entry must be stored as np.savez stores it, no larger than the file."""
    path = tmp_path / "model.npz"
    make(saved_model[1], path)
    read, read_array = [], npformat.read_array
    monkeypatch.setattr(npformat, "read_array", lambda entry, **kw: read.append(entry.name) or read_array(entry, **kw))
    with pytest.raises(FormatError, match=rf"model\.npz: damaged model file \({message}"):
        TrainState.load(str(path))
    assert set(read) <= {"meta.npy"}


def test_other_npz_is_not_a_model(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, meta=np.frombuffer(b'{"format": "something"}', np.uint8), syn0=np.zeros(3))
    with pytest.raises(FormatError, match="not a w2v model file"):
        TrainState.load(str(path))


def test_truncated_model_file(corpus, tmp_path):
    path = tmp_path / "model.npz"
    train(str(corpus), save_model=str(path), **SETTINGS)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError, match=r"model\.npz"):
        TrainState.load(str(path))


@pytest.fixture(scope="module")
def saved_model(corpus, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.npz"
    train(str(corpus), save_model=str(path), **SETTINGS)
    return TrainState.load(str(path)), path


def test_continued_training_keeps_vocabulary(saved_model, tmp_path):
    base, path = saved_model
    new = tmp_path / "new.txt"
    new.write_text("cat dog sat zebra zebra zebra zebra\n" * 50)
    result = train(str(new), init_model=str(path), epochs=1, threads=1)
    assert result.words == [w.decode() for w in base.vocab.words]  # zebra is not added
    unseen = [i for i, w in enumerate(base.vocab.words) if w not in (b"cat", b"dog", b"sat")]
    np.testing.assert_array_equal(result.vectors[unseen], base.syn0[unseen])  # untouched input rows
    seen = result.words.index("cat")
    assert not np.array_equal(result.vectors[seen], base.syn0[seen])


def test_update_vocab_adds_frequent_new_words(saved_model, tmp_path):
    base, path = saved_model
    new = tmp_path / "new.txt"
    new.write_text("cat zebra zebra yak\n" * 30 + "okapi\n")
    result = train(str(new), init_model=str(path), update_vocab=True, epochs=1, threads=1, min_count=2)
    assert set(result.words) == {w.decode() for w in base.vocab.words} | {"zebra", "yak"}
    state_words = dict(zip(base.vocab.words, base.vocab.counts.tolist(), strict=True))
    counts = {**state_words, b"zebra": 60, b"yak": 30, b"cat": state_words[b"cat"] + 30}
    expected = sorted(counts, key=lambda w: -counts[w])
    assert [w.encode() for w in result.words] == expected  # sorted by the merged counts
    old_index = {w.decode(): i for i, w in enumerate(base.vocab.words)}
    for word in ("red", "fox", "mat"):  # not in the new corpus: input vectors carried unchanged
        np.testing.assert_array_equal(result.vectors[result.words.index(word)], base.syn0[old_index[word]])


def test_update_vocab_with_hierarchical_softmax(corpus, tmp_path):
    """New words get Huffman codes (the tree is rebuilt) and train; syn1 grows to V - 1 rows."""
    path, updated = tmp_path / "hs.npz", tmp_path / "updated.npz"
    train(str(corpus), save_model=str(path), **{**SETTINGS, "hs": True, "negative": 0, "epochs": 1})
    new = tmp_path / "new.txt"
    new.write_text("cat zebra zebra yak\n" * 30)
    result = train(str(new), init_model=str(path), update_vocab=True, epochs=1, threads=1, save_model=str(updated))
    state = TrainState.load(str(updated))
    assert {"zebra", "yak"} <= set(result.words) and state.syn1.shape == (len(result) - 1, 12)
    start = Model.build(state.vocab, state.config).syn0  # new rows start as in a fresh run
    for word in ("zebra", "yak"):
        row = result.words.index(word)
        assert np.isfinite(result.vectors[row]).all() and not np.array_equal(result.vectors[row], start[row])


def test_carried_weights_start_new_words_as_a_fresh_run(saved_model):
    base, _ = saved_model
    config = base.config
    vocab = Vocab([b"zebra", *base.vocab.words[:3]], np.array([10**6, *base.vocab.counts[:3]]))
    syn0, syn1, syn1neg = carry_weights(base.vocab, (base.syn0, base.syn1, base.syn1neg), vocab, config)
    np.testing.assert_array_equal(syn0[0], Model.build(vocab, config).syn0[0])  # as a fresh run's row 0
    np.testing.assert_array_equal(syn0[1:], base.syn0[:3])
    np.testing.assert_array_equal(syn1neg[1:], base.syn1neg[:3])
    assert not syn1neg[0].any() and syn1.shape == (0, config.dim)


def test_continued_training_cannot_change_the_architecture(saved_model, corpus):
    _, path = saved_model
    with pytest.raises(ConfigError, match="dim=12"):
        train(str(corpus), init_model=str(path), dim=20)
    with pytest.raises(ConfigError, match="hs"):
        train(str(corpus), init_model=str(path), hs=True)
    with pytest.raises(ConfigError, match="update_vocab needs init_model"):
        train(str(corpus), update_vocab=True)
    with pytest.raises(ConfigError, match="exclude each other"):
        train(str(corpus), init_model=str(path), resume=str(path))


# --- the command line -------------------------------------------------------------------

# 10 epochs: about 5 s of training after the progress bar shows, for the signal to land in
CLI_SETTINGS = ["--dim", "12", "--epochs", "10", "--threads", "1", "--min-count", "2", "--batch-words", "500"]


def start_training(args, sigint=signal.SIG_DFL) -> subprocess.Popen:
    """Start ``w2v train ARGS`` and return once its progress line shows the learning
    rate: the workers are training and the main thread is reporting.

    The child starts with SIGINT set to ``sigint``, not to what this process
    inherited: a job that a script starts with ``&`` has SIGINT ignored (POSIX),
    Python keeps it ignored, and so did ``w2v train`` children of a test run
    started that way; a Ctrl-C test then failed there and only there."""
    child = subprocess.Popen(
        [sys.executable, "-m", "w2v", "train", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
    )
    assert child.stderr is not None
    seen = b""
    for line in child.stderr:  # progress lines, stderr not being a terminal
        seen += line
        if line.startswith(b"w2v: training: ") and b"lr=" in line:
            return child
    raise AssertionError(f"the run ended before training: {seen[-500:]!r}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_cli_signal_saves_a_checkpoint_and_resume_finishes_the_run(wiki6, tmp_path, cli, signum, code, word):
    expected = tmp_path / "expected.bin"
    assert cli("train", wiki6, "-o", expected, *CLI_SETTINGS, "-q").returncode == 0
    out, folder = tmp_path / "v.bin", tmp_path / "ck"
    out.write_bytes(b"old vectors")
    child = start_training([wiki6, "-o", out, *CLI_SETTINGS, "--checkpoint", folder])
    assert child.poll() is None, "the run ended before the signal could be sent"
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert child.returncode == code, err.decode()[-3000:]
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith(f"w2v: error: {word}; checkpoint saved in {folder} (epoch ")
    assert last.endswith(f"continue with 'w2v train --resume {folder}'")
    assert out.read_bytes() == b"old vectors"
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint.npz"]
    done = cli("train", "--resume", folder, "-q", cwd=tmp_path.parent)  # paths were kept absolute
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == expected.read_bytes()


@pytest.mark.slow
def test_cli_started_with_sigint_ignored_keeps_ignoring_it(wiki6, tmp_path):
    """As any Unix tool: a run started with SIGINT ignored (a script's
    ``&`` job) is not stopped by it, here while its workers train and the main
    thread swaps handlers at each segment."""
    out = tmp_path / "v.bin"
    child = start_training([wiki6, "-o", out, *CLI_SETTINGS, "--epochs", "3"], sigint=signal.SIG_IGN)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()[-3000:]
    assert Vectors.load(out).vectors.shape[1] == 12


@pytest.mark.slow
def test_cli_resume_refuses_new_training_settings(tiny_corpus, tmp_path, cli):
    folder = tmp_path / "ck"
    assert (
        cli("train", tiny_corpus, "-o", tmp_path / "v.txt", "--checkpoint", folder, "--epochs", "1", "-q").returncode
        == 0
    )
    result = cli("train", "--resume", folder, "--dim", "50", "--hs")
    assert result.returncode == 1
    assert result.stderr.decode().strip().splitlines()[-1] == (
        "w2v: error: a resumed run keeps the checkpoint's settings; cannot change dim, hs, negative"
    )
    result = cli("train", "--resume", folder, "--save-vocab", tmp_path / "vocab.txt")
    assert result.returncode == 2 and b"--save-vocab: no effect with --resume" in result.stderr
    result = cli("train", "--resume", tmp_path / "missing")
    assert result.returncode == 2 and b"no checkpoint in " in result.stderr
    assert cli("train", "--resume", folder, "--threads", "2", "-o", tmp_path / "w.txt", "-q").returncode == 0
    assert Vectors.load(tmp_path / "w.txt").words == Vectors.load(tmp_path / "v.txt").words


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--checkpoint-every", "5"], "--checkpoint-every needs --checkpoint FOLDER"),
        (["--update-vocab"], "update_vocab needs init_model"),
    ],
)
def test_cli_long_run_mistakes(tiny_corpus, tmp_path, cli, args, message):
    result = cli("train", tiny_corpus, "-o", tmp_path / "v.txt", *args)
    assert result.returncode != 0
    assert message in result.stderr.decode()
    assert not (tmp_path / "v.txt").exists()


@pytest.mark.slow
@pytest.mark.parametrize("minutes", ["nan", "inf"])
def test_cli_checkpoint_every_must_be_finite(tiny_corpus, tmp_path, cli, minutes):
    """NaN minutes passed --checkpoint-every's range (x>0) and never checkpointed."""
    folder, out = tmp_path / "ck", tmp_path / "v.txt"
    result = cli("train", tiny_corpus, "-o", out, "--checkpoint", folder, "--checkpoint-every", minutes)
    assert (result.returncode, result.stderr.decode()) == (
        1,
        f"w2v: error: --checkpoint-every must be a positive, finite number of minutes, not {minutes}\n",
    )
    assert not out.exists() and not folder.exists()
    with pytest.raises(ConfigError, match="checkpoint_every must be a positive, finite number of minutes, not nan"):
        train(str(tiny_corpus), checkpoint=str(folder), checkpoint_every=float("nan"))


@pytest.mark.slow
def test_cli_no_corpus(cli):
    result = cli("train")
    assert result.returncode == 2
    assert result.stderr.decode().strip() == "w2v: error: give a CORPUS (or --resume FOLDER)"


@pytest.mark.slow
def test_cli_save_model_then_continue_with_new_words(tiny_corpus, tmp_path, cli):
    model = tmp_path / "model.npz"
    args = ["--dim", "8", "--min-count", "1", "--epochs", "1", "-q"]
    assert cli("train", tiny_corpus, "-o", tmp_path / "v.txt", "--save-model", model, *args).returncode == 0
    new = tmp_path / "new.txt"
    new.write_text("the zebra sat on the yak\n" * 10)
    result = cli("train", new, "-o", tmp_path / "w.txt", "--init-model", model, "--update-vocab", *args[2:])
    assert result.returncode == 0, result.stderr
    old, updated = Vectors.load(tmp_path / "v.txt"), Vectors.load(tmp_path / "w.txt")
    assert set(updated.words) == set(old.words) | {"zebra", "yak"}
    assert updated.dim == 8
    result = cli("train", new, "-o", tmp_path / "w.txt", "--init-model", model, "--dim", "9")
    assert result.returncode == 1
    assert "trained with dim=8" in result.stderr.decode()
    assert os.path.getsize(tmp_path / "w.txt") > 0 and checkpoint_path("x") == os.path.join("x", "checkpoint.npz")


@pytest.mark.slow
def test_cli_resumes_a_checkpoint_made_by_the_api(corpus, uninterrupted, tmp_path, cli, monkeypatch):
    slow_down(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(str(corpus), checkpoint=str(tmp_path), on_progress=interrupt_at(0.5), **SETTINGS)
    result = cli("train", "--resume", tmp_path, "-q")
    assert result.returncode == 2
    assert (
        result.stderr.decode().strip() == f"w2v: error: the checkpoint in {tmp_path} does not name its corpus: give it"
    )
    out = tmp_path / "v.bin"
    assert cli("train", corpus, "--resume", tmp_path, "-o", out, "--threads", "1", "-q").returncode == 0
    np.testing.assert_array_equal(Vectors.load(out).vectors, uninterrupted.vectors)


@pytest.mark.slow
def test_cli_checkpoint_folder_in_use_fails_at_once(tiny_corpus, tmp_path, cli):
    folder, out = tmp_path / "ck", tmp_path / "v.bin"
    folder.mkdir()
    with checkpoint_lock(str(folder)):
        result = cli("train", tiny_corpus, "-o", out, "--checkpoint", folder, "--epochs", "1", "-q")
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        f"w2v: error: checkpoint folder {folder} is in use by another run (pid {os.getpid()})"
    ]
    assert not out.exists() and list(folder.iterdir()) == []


@pytest.fixture
def finished_checkpoint(tiny_corpus, tmp_path, cli):
    """A checkpoint folder of a finished one-epoch run of ``w2v train`` (its output removed)."""
    folder, out = tmp_path / "ck", tmp_path / "v.txt"
    done = cli("train", tiny_corpus, "-o", out, "--checkpoint", folder, "--epochs", "1", "--dim", "8", "-q")
    assert done.returncode == 0, done.stderr
    out.unlink()
    return folder


@pytest.mark.slow
def test_cli_resume_names_the_files_it_writes(finished_checkpoint, tmp_path, cli):
    """A checkpoint names its outputs like a script: a resumed run says where it
    writes before it starts, even with -q, also where a crafted checkpoint points."""
    folder, elsewhere = finished_checkpoint, tmp_path / "elsewhere.bin"

    def redirect(meta):
        meta["notes"]["command"].update(output=str(elsewhere), classes=2, classes_output=str(tmp_path / "c.txt"))

    rewritten(checkpoint_path(folder), checkpoint_path(folder), change_meta=redirect)
    done = cli("train", "--resume", folder, "--save-model", tmp_path / "m.npz", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().splitlines() == [
        f"w2v: resuming {folder}; writing -o {elsewhere}, --save-model {tmp_path / 'm.npz'}, "
        f"--classes-output {tmp_path / 'c.txt'}, checkpoints in {folder}"
    ]
    assert elsewhere.exists() and (tmp_path / "m.npz").exists() and (tmp_path / "c.txt").exists()


@pytest.mark.slow
def test_cli_resume_refuses_a_checkpoint_with_nan_weights(finished_checkpoint, tmp_path, cli):
    rewritten(checkpoint_path(finished_checkpoint), checkpoint_path(finished_checkpoint), poisoned)
    done = cli("train", "--resume", finished_checkpoint, "-q")
    assert done.returncode == 1
    assert done.stderr.decode().splitlines()[-1] == (
        f"w2v: error: {checkpoint_path(finished_checkpoint)}: damaged model file (non-finite weights in syn0)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]


@pytest.mark.slow
def test_a_fresh_run_refuses_a_checkpoint_folder_holding_an_unfinished_run(corpus, tmp_path, cli, monkeypatch):
    """--checkpoint FOLDER holding a run stopped at epoch 2 of 3 replaced it with a new run
    (its epochs left lost): refused, naming --resume and how to start afresh; resuming it
    there, or a finished run's folder, is fine."""
    folder, out = tmp_path / "ck", tmp_path / "v.txt"
    state = interrupted_run(corpus, folder, monkeypatch, SETTINGS)
    where = describe_progress(state.jobs_done, state.batches, state.config.epochs)
    assert where.startswith("epoch 2 of 3, ")
    before = (folder / "checkpoint.npz").read_bytes()
    args = ["-o", out, "--dim", "12", "--epochs", "3", "--min-count", "2", "--threads", "1", "-q"]
    result = cli("train", corpus, *args, "--checkpoint", folder)
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        f"w2v: error: checkpoint folder {folder} holds an unfinished run ({where}): continue it "
        f"with 'w2v train --resume {folder}', or start afresh with another --checkpoint folder or after deleting "
        f"{folder / 'checkpoint.npz'}"
    ]
    with pytest.raises(ConfigError, match=re.escape(f"continue it with resume='{folder}', or start afresh in another")):
        train(str(corpus), checkpoint=str(folder), **SETTINGS)
    assert (folder / "checkpoint.npz").read_bytes() == before and not out.exists()
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint.npz"]
    resumed = ["--resume", folder / "checkpoint.npz", "--checkpoint", f"{folder}/", "-q"]
    assert cli("train", corpus, "-o", out, *resumed).returncode == 0  # the run it holds, resumed there
    assert cli("train", corpus, *args, "--checkpoint", folder).returncode == 0  # a finished run's folder


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"junk", "{path} is not a w2v model file or is damaged (File is not a zip file)"),
        (None, "{path}: damaged model file (bad progress fields)"),  # a model file without jobs_done
    ],
)
def test_a_fresh_run_refuses_a_checkpoint_folder_holding_an_unreadable_checkpoint(
    saved_model, corpus, tmp_path, content, reason
):
    """A checkpoint.npz that a run cannot read may still be one it must not replace:
    refused, saying how to start afresh, and kept."""
    folder = tmp_path / "ck"
    folder.mkdir()
    path = folder / "checkpoint.npz"
    if content is None:
        rewritten(saved_model[1], path, change_meta=lambda meta: meta.pop("jobs_done"))
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    message = f"{reason.format(path=path)}: start afresh in another folder or after deleting {path}"
    with pytest.raises(ConfigError, match=re.escape(message)):
        train(str(corpus), checkpoint=str(folder), **SETTINGS)
    assert path.read_bytes() == before


def test_init_model_from_vectors_alone_starts_the_input_vectors(corpus, tmp_path, cli):
    """fastText's -pretrainedVectors: vectors alone (a file, or a ``Vectors``) start the
    input rows of the corpus's words they hold, the others and the output weights as in
    a fresh run; the vocabulary is the corpus's, ``dim`` theirs."""
    given = ["cat", "dog", "zebra"]  # zebra: not in the corpus
    rows = np.arange(3 * 12, dtype=np.float32).reshape(3, 12) / 100
    Vectors(given, rows).save(tmp_path / "v.txt")
    still = {k: v for k, v in SETTINGS.items() if k != "dim"}
    still.update(epochs=1, alpha=1e-30, min_alpha=1e-31)  # updates too small to change a float32
    fresh = train(str(corpus), dim=12, **still)
    for init_model in (str(tmp_path / "v.txt"), Vectors(given, rows)):
        started = train(str(corpus), init_model=init_model, **still)
        assert started.words == fresh.words and started.vectors.shape == (len(fresh.words), 12)
        for word, row in zip(given[:2], rows[:2], strict=True):
            np.testing.assert_array_equal(started[word], row)
        others = [i for i, word in enumerate(fresh.words) if word not in given]
        np.testing.assert_array_equal(started.vectors[others], fresh.vectors[others])
    done = cli("train", corpus, "--init-model", tmp_path / "v.txt", "-o", tmp_path / "out.txt", "--max-vocab", "5",
               "--epochs", "1", "--threads", "1", "-q")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, b"")
    assert Vectors.load(tmp_path / "out.txt").vectors.shape == (5, 12)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"dim": 30}, "v.txt holds vectors of 12 values, not 30: leave dim out to take theirs"),
        (
            {"update_vocab": True},
            "update_vocab adds words to a model's vocabulary; v.txt holds vectors alone, and the run's vocabulary "
            "is the corpus's",
        ),
        (
            {"init_model": "none.txt"},
            "none.txt has no word of the run's vocabulary (16 words): its vectors would start none of theirs",
        ),
    ],
)
def test_vectors_that_cannot_start_the_run_are_one_line(corpus, tmp_path, monkeypatch, settings, message):
    monkeypatch.chdir(tmp_path)
    Vectors(["cat", "dog"], np.ones((2, 12), dtype=np.float32)).save("v.txt")
    Vectors(["zebra", "yak"], np.ones((2, 12), dtype=np.float32)).save("none.txt")
    with pytest.raises(W2VError) as refused:
        train(str(corpus), **{"init_model": "v.txt", "epochs": 1, "threads": 1, **settings})
    assert str(refused.value) == message
