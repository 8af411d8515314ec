"""Long runs: checkpoints, resume, interruption, saved models and continued training."""

import importlib
import itertools
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import w2v.state
from w2v.errors import ConfigError, CorpusError, FormatError
from w2v.state import TrainState, checkpoint_path
from w2v.train import Model, carry_weights, train
from w2v.vectors import Vectors
from w2v.vocab import Vocab

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


def slow_down(monkeypatch):
    """Make every batch take a while, so the main thread sees the run in progress."""
    module = importlib.import_module("w2v.train")  # the package's ``train`` is the function
    kernel = module.train_batch_kernel

    def slowed(dim):
        inner = kernel(dim)

        def run(*args):
            time.sleep(0.01)
            return inner(*args)

        return run

    monkeypatch.setattr(module, "train_batch_kernel", slowed)


def test_resume_after_interrupt_is_byte_identical(corpus, uninterrupted, tmp_path, monkeypatch):
    slow_down(monkeypatch)
    folder = tmp_path / "ck"
    with pytest.raises(KeyboardInterrupt):
        train(str(corpus), checkpoint=str(folder), on_progress=interrupt_at(0.4), **SETTINGS)
    state = TrainState.load(str(folder))
    assert 0 < state.jobs_done < state.total_jobs  # stopped mid-run
    monkeypatch.undo()
    resumed = train(str(corpus), resume=str(folder), threads=1)
    assert resumed.vectors.tobytes() == uninterrupted.vectors.tobytes()
    assert resumed.report.epoch_loss == pytest.approx(uninterrupted.report.epoch_loss, rel=1e-9)
    assert TrainState.load(str(folder)).finished


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


def test_failed_checkpoint_write_keeps_the_previous_one(corpus, tmp_path, monkeypatch):
    train(str(corpus), checkpoint=str(tmp_path), **{**SETTINGS, "epochs": 1})
    before = (tmp_path / "checkpoint.npz").read_bytes()

    def broken(out, **arrays):
        out.write(b"PK\x03\x04 half an archive")
        raise KeyboardInterrupt

    monkeypatch.setattr(w2v.state.np, "savez", broken)
    with pytest.raises(KeyboardInterrupt):
        train(str(corpus), checkpoint=str(tmp_path), **{**SETTINGS, "epochs": 1})
    assert (tmp_path / "checkpoint.npz").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.npz"]


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
    assert names == {*w2v.state.ARRAYS, "meta"}
    state = TrainState.load(str(path))
    assert state.finished and state.config.hs and state.config.negative == 0


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a zip file at all", b"PK\x03\x04truncated"],
)
def test_damaged_model_file(tmp_path, damage):
    path = tmp_path / "model.npz"
    path.write_bytes(damage)
    with pytest.raises(FormatError, match=r"model\.npz"):
        TrainState.load(str(path))


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


def test_carried_weights_start_new_words_as_a_fresh_run(saved_model):
    base, _ = saved_model
    config = base.config
    vocab = Vocab([b"zebra", *base.vocab.words[:3]], np.array([10**6, *base.vocab.counts[:3]]))
    syn0, syn1, syn1neg = carry_weights(base, vocab, config)
    np.testing.assert_array_equal(syn0[0], Model.create(vocab, config).syn0[0])  # as a fresh run's row 0
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

CLI_SETTINGS = ["--dim", "12", "--epochs", "3", "--threads", "1", "--min-count", "2", "--batch-words", "500"]


def start_training(args) -> subprocess.Popen:
    """Start ``w2v train ARGS`` and return once its progress bar shows."""
    child = subprocess.Popen(
        [sys.executable, "-m", "w2v", "train", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stderr is not None
    assert child.stderr.read(10) == b"\rtraining:"
    return child


@pytest.mark.parametrize(
    ("signum", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_cli_signal_saves_a_checkpoint_and_resume_finishes_the_run(wiki6, tmp_path, cli, signum, code, word):
    expected = tmp_path / "expected.bin"
    assert cli("train", wiki6, "-o", expected, *CLI_SETTINGS, "-q").returncode == 0
    out, folder = tmp_path / "v.bin", tmp_path / "ck"
    out.write_bytes(b"old vectors")
    child = start_training([wiki6, "-o", out, *CLI_SETTINGS, "--checkpoint", folder])
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert child.returncode == code
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith(f"w2v: error: {word}; checkpoint saved in {folder} (epoch ")
    assert last.endswith(f"continue with 'w2v train --resume {folder}'")
    assert out.read_bytes() == b"old vectors"
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint.npz"]
    done = cli("train", "--resume", folder, "-q", cwd=tmp_path.parent)  # paths were kept absolute
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == expected.read_bytes()


def test_cli_resume_refuses_new_training_settings(tiny_corpus, tmp_path, cli):
    folder = tmp_path / "ck"
    assert (
        cli("train", tiny_corpus, "-o", tmp_path / "v.txt", "--checkpoint", folder, "--epochs", "1", "-q").returncode
        == 0
    )
    result = cli("train", "--resume", folder, "--dim", "50", "--hs")
    assert result.returncode == 2
    assert result.stderr.decode().strip() == (
        "w2v: error: --resume continues with the checkpoint's settings; drop --dim, --hs"
    )
    result = cli("train", "--resume", tmp_path / "missing")
    assert result.returncode == 2 and b"model file not found" in result.stderr
    assert cli("train", "--resume", folder, "--threads", "2", "-o", tmp_path / "w.txt", "-q").returncode == 0
    assert Vectors.load(tmp_path / "w.txt").words == Vectors.load(tmp_path / "v.txt").words


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


def test_cli_no_corpus(cli):
    result = cli("train")
    assert result.returncode == 2
    assert result.stderr.decode().strip() == "w2v: error: give a CORPUS (or --resume FOLDER)"


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
