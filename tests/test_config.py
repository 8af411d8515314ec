"""TrainConfig defaults, resolution and validation; TOML presets; the CLI's use of them."""

import dataclasses
import os

import numpy as np
import pytest

from w2v.cli import main as cli_main
from w2v.cli import training as cli_training
from w2v.config import TRAIN_FIELDS, TrainConfig, load_preset
from w2v.errors import ConfigError
from w2v.vectors.wordvectors import Vectors


def test_defaults_are_word2vec_c():
    config = TrainConfig().resolved()
    assert (config.model, config.dim, config.window, config.sample) == ("skipgram", 100, 5, 1e-3)
    assert (config.negative, config.hs, config.epochs, config.min_count) == (5, False, 5, 5)
    assert config.alpha == 0.025
    assert config.min_alpha == pytest.approx(0.025 * 1e-4)
    assert config.cbow_mean is True
    assert config.ns_exponent == 0.75
    assert config.threads == config.streams == (os.cpu_count() or 1)  # word2vec.c's layout: a part a thread
    cbow = TrainConfig(model="cbow").resolved()
    assert cbow.alpha == 0.05 and cbow.min_alpha == pytest.approx(0.05 * 1e-4)
    assert TrainConfig(alpha=0.1).resolved().min_alpha == pytest.approx(1e-5)


def test_streams_default_to_one_per_thread():
    """word2vec.c's layout unless asked: each thread's own part of the file; one thread,
    the file's order."""
    assert TrainConfig(threads=3).resolved().streams == 3
    assert TrainConfig(threads=1).resolved().streams == 1
    assert TrainConfig(threads=4, streams=1).resolved().streams == 1
    with pytest.raises(ConfigError, match="streams"):
        TrainConfig(streams=0).resolved()


def test_hs_alone_turns_negative_sampling_off():
    assert TrainConfig(hs=True).resolved().negative == 0
    both = TrainConfig(hs=True, negative=5).resolved()
    assert (both.hs, both.negative) == (True, 5)
    assert TrainConfig(hs=False).resolved().negative == 5


def test_resolved_is_a_copy():
    config = TrainConfig(dim=7)
    resolved = config.resolved()
    assert config.negative is None and resolved.negative == 5
    assert resolved.dim == 7
    with pytest.raises(AttributeError):
        resolved.dim = 3  # frozen


@pytest.mark.parametrize(
    "settings,message",
    [
        (dict(model="glove"), "model"),
        (dict(dim=0), "dim"),
        (dict(dim=-3), "dim"),
        (dict(dim=2.5), "dim"),
        (dict(window=0), "window"),
        (dict(epochs=0), "epochs"),
        (dict(epochs=-1), "epochs"),
        (dict(min_count=0), "min_count"),
        (dict(batch_words=0), "batch_words"),
        (dict(threads=0), "threads"),
        (dict(prune_at=0), "prune_at"),
        (dict(max_vocab=0), "max_vocab"),
        (dict(negative=-1), "negative"),
        (dict(negative=0), r"nothing to train: negative=0 and hs=False \(give hs=True, or negative=N > 0\)"),
        (dict(sample=-1e-3), "sample"),
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=-0.1), "alpha"),
        (dict(alpha=0.01, min_alpha=0.02), "min_alpha"),
        (dict(seed=-1), "seed"),
        (dict(seed=2**64), "seed"),
        (dict(epochs=10_001), r"^epochs must be at most 10,000, not 10,001$"),
        (dict(epochs=2**31 - 1), r"^epochs must be at most 10,000, not 2,147,483,647$"),
        (dict(epochs=None), r"^epochs must be a positive integer, not None$"),
        (dict(dim=True), r"^dim must be a positive integer, not True$"),
        (dict(window=10_001), "^window must be at most 10,000, not 10,001: no context reaches past a sentence piece"),
        (dict(window=2**31 - 1), "window must be at most 10,000"),
        (dict(negative=2.5), r"^negative must be an integer, not 2\.5$"),
        (dict(threads=[1]), r"^threads must be a positive integer, not \[1\]$"),
        (dict(hs="yes"), "^hs must be true or false, not 'yes'$"),
        (dict(sample=10**400), "^sample must be a number, not 1000"),
        (dict(ns_exponent="0.75"), "^ns_exponent must be a number, not '0.75'$"),
        (dict(model=["cbow"]), r"^model must be one of skipgram, cbow, not \['cbow'\]$"),
        (dict(tree=5, hs=True), r"^tree must be a string, not 5$"),
        (dict(max_vocab=2.0), "^max_vocab must be an integer, not 2.0$"),
    ],
)
def test_invalid_settings(settings, message):
    with pytest.raises(ConfigError, match=message):
        TrainConfig(**settings).resolved()


def test_valid_edge_settings():
    TrainConfig(negative=0, hs=True, sample=0.0, seed=0, min_count=1, max_vocab=1).resolved()
    TrainConfig(seed=2**64 - 1, window=1, dim=1).resolved()
    TrainConfig(epochs=10_000).resolved()
    TrainConfig(window=10_000, hs=1, negative=0, sample=0, alpha=1, ns_exponent=1e300).resolved()  # gensim's hs=1


def write(tmp_path, text, name="preset.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_load_preset_top_level_and_train_table(tmp_path):
    allowed = TRAIN_FIELDS
    assert load_preset(write(tmp_path, 'model = "cbow"\ndim = 300\nmin-count = 2\n'), allowed) == {
        "model": "cbow",
        "dim": 300,
        "min_count": 2,
    }
    text = "[train]\nhs = true\nns-exponent = 0.5\n"
    assert load_preset(write(tmp_path, text), allowed) == {"hs": True, "ns_exponent": 0.5}
    assert load_preset(write(tmp_path, ""), allowed) == {}


def test_load_preset_errors(tmp_path):
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_preset(write(tmp_path, "dim = = 3\n"), TRAIN_FIELDS)
    with pytest.raises(ConfigError, match=r"unknown setting.*colour"):
        load_preset(write(tmp_path, 'dim = 3\ncolour = "red"\n'), TRAIN_FIELDS)
    with pytest.raises(ConfigError, match="cannot read"):
        load_preset(str(tmp_path / "missing.toml"), TRAIN_FIELDS)


def test_load_preset_refuses_what_tomllib_would_raise_on(tmp_path):
    """Not UTF-8 (UnicodeDecodeError), arrays nested past the recursion limit (RecursionError),
    and a file no preset is near the size of (/dev/zero would fill the memory)."""
    (tmp_path / "latin1.toml").write_bytes(b"model = 'caf\xe9'\n")
    with pytest.raises(
        ConfigError, match=r"latin1.toml is not UTF-8 text \(byte 0xe9 at offset 12\), as TOML must be$"
    ):
        load_preset(str(tmp_path / "latin1.toml"), TRAIN_FIELDS)
    deep = write(tmp_path, "dim = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match=r"preset.toml: arrays or tables nested too deeply$"):
        load_preset(deep, TRAIN_FIELDS)
    big = write(tmp_path, "# " + "x" * (1 << 20) + "\ndim = 8\n")
    with pytest.raises(ConfigError, match=r"preset.toml is larger than 1,048,576 bytes: not a preset$"):
        load_preset(big, TRAIN_FIELDS)


# ---- the CLI's settings (in-process, training replaced by a recorder) ---------------------


@pytest.fixture
def recorded(monkeypatch, tmp_path):
    """Run ``w2v train`` in-process with a fake trainer; returns (settings) of the call."""
    calls = []

    def fake_train(corpus, **settings):
        calls.append(settings)
        return Vectors(["a"], np.zeros((1, 2), np.float32))

    monkeypatch.setattr(cli_training, "train_vectors", fake_train)
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b\n")

    def run(*args):
        calls.clear()
        cli_main(["train", str(corpus), "-q", "-o", str(tmp_path / "out.bin"), *map(str, args)])
        assert len(calls) == 1
        settings = dict(calls[0])
        for key in (
            "read_vocab",
            "save_vocab",
            "progress",
            "on_start",
            "on_epoch_end",
            "notes",
            "cluster",
            *(field.name for field in dataclasses.fields(cli_training.HeldOutText)),
            *(field.name for field in dataclasses.fields(cli_training.LongRun)),
        ):
            settings.pop(key)
        return settings

    return run


def resolved(settings) -> TrainConfig:
    return TrainConfig(**settings).resolved()


def test_cli_defaults_are_the_config_defaults(recorded):
    settings = recorded()
    assert set(settings) <= TRAIN_FIELDS
    assert resolved(settings) == TrainConfig().resolved()


def test_cli_hs_alone_means_negative_zero(recorded):
    config = resolved(recorded("--hs"))
    assert (config.hs, config.negative) == (True, 0)
    config = resolved(recorded("--hs", "--negative", 5))
    assert (config.hs, config.negative) == (True, 5)
    config = resolved(recorded("--negative", 3))
    assert (config.hs, config.negative) == (False, 3)


def test_cli_options_map_to_settings(recorded):
    settings = recorded(
        *("--model", "cbow", "--size", 30, "--window", 3, "--iter", 2, "--min-count", 1, "--sample", 0),
        *("--alpha", 0.03, "--min-alpha", 0.0001, "--cbow-sum", "--threads", 1, "--seed", 9, "--max-vocab", 50),
    )
    config = resolved(settings)
    assert (config.model, config.dim, config.window, config.epochs, config.min_count) == ("cbow", 30, 3, 2, 1)
    assert (config.sample, config.alpha, config.min_alpha, config.cbow_mean) == (0.0, 0.03, 0.0001, False)
    assert (config.threads, config.seed, config.max_vocab) == (1, 9, 50)


def test_cli_preset_sets_options_and_flags_win(recorded, tmp_path):
    preset = write(tmp_path, 'model = "cbow"\nwindow = 8\nhs = true\nmin-count = 2\nsize = 40\nepochs = 7\n')
    config = resolved(recorded("--config", preset))
    assert (config.model, config.dim, config.window, config.hs, config.min_count, config.epochs) == (
        "cbow",
        40,
        8,
        True,
        2,
        7,
    )
    assert config.negative == 0  # hs from the preset, negative unset: HS alone
    config = resolved(recorded("--config", preset, "--dim", 20, "--model", "skipgram", "--negative", 4))
    assert (config.model, config.dim, config.window, config.negative, config.hs) == ("skipgram", 20, 8, 4, True)
    # the flag wins wherever it is given
    config = resolved(recorded("--window", 2, "--config", preset, "--no-hs"))
    assert (config.window, config.hs, config.negative) == (2, False, 5)


def test_cli_preset_under_train_table(recorded, tmp_path):
    preset = write(tmp_path, "[train]\nnegative = 9\nns-exponent = 0.5\n")
    config = resolved(recorded("--config", preset))
    assert (config.negative, config.ns_exponent) == (9, 0.5)
