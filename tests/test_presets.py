"""Every preset in configs/ loads through the CLI's preset loader and trains."""

from pathlib import Path

import pytest

from w2v.cli import main
from w2v.config import load_preset

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
