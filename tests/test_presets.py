"""Every preset in configs/ loads through the CLI's preset loader and trains."""

import dataclasses
from pathlib import Path

import pytest

import w2v.weights
from w2v.cli import main
from w2v.config import TrainConfig, load_preset
from w2v.train import train

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
PRESETS = sorted(CONFIGS.glob("*.toml"))
WORDS = ["the", "cat", "sat", "on", "the", "mat", "and", "a", "dog", "met", "the", "red", "cat", "on", "a", "log"]


def test_presets_exist():
    assert {p.name for p in PRESETS} >= {"sg-ns.toml", "cbow-ns.toml", "sg-hs.toml", "cbow-hs.toml"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("presets") / "corpus.txt"
    lines = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))] * 3
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_preset_trains_through_the_cli(preset, corpus, tmp_path):
    out = tmp_path / "vectors.txt"
    args = ["train", str(corpus), "--config", str(preset), "-o", str(out)]
    args += ["--epochs", "1", "--min-count", "1", "--dim", "8", "--threads", "1", "-q"]
    try:
        main(args)
    except SystemExit as exit_:  # main() exits only on an error
        pytest.fail(f"w2v train --config {preset.name} exited with {exit_.code}")
    header = out.read_text().splitlines()[0].split()
    assert header == [str(len(set(WORDS))), "8"]


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_preset_keys_are_train_options(preset):
    from w2v.cli import PRESET_ALIASES, train

    allowed = {p.name for p in train.params} | set(PRESET_ALIASES)
    assert load_preset(str(preset), allowed)


@pytest.mark.parametrize(
    "preset", [*PRESETS, "skipgram", "cbow"], ids=lambda p: p.name if isinstance(p, Path) else f"default-{p}"
)
def test_no_false_divergence_alarm_on_real_text(preset, wiki6, monkeypatch):
    """The presets and the defaults (one epoch on the 6 MB Wikipedia slice) keep every
    weight row far below the norm that counts as divergence (``weights.MAX_ROW_NORM``)."""
    if isinstance(preset, Path):
        settings = load_preset(str(preset), {field.name for field in dataclasses.fields(TrainConfig)})
    else:
        settings = {"model": preset}
    norms = []
    measure = w2v.weights.largest_row_norm

    def measured(weights):
        norms.append(measure(weights))
        return norms[-1]

    monkeypatch.setattr(w2v.weights, "largest_row_norm", measured)
    train(str(wiki6), **{**settings, "epochs": 1, "threads": 1})
    assert len(norms) == 3  # syn0, syn1 and syn1neg, checked once
    assert 1 < max(norms) < w2v.weights.MAX_ROW_NORM / 10
