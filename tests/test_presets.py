"""The presets of configs/ (shipped in the wheel as w2v/configs/): each loads by name through the CLI's preset loader
and trains; a path is read as a file; an unknown name or a missing file is one clear line."""

import dataclasses

import pytest

import w2v
import w2v.engine.weights
from w2v.cli import main
from w2v.config import PRESETS, TrainConfig, load_preset, preset_names, preset_path
from w2v.errors import ConfigError
from w2v.train import train
from w2v.vectorio.modelfile import TrainState

WORDS = ["the", "cat", "sat", "on", "the", "mat", "and", "a", "dog", "met", "the", "red", "cat", "on", "a", "log"]
NAMES = preset_names()


def test_presets_ship_with_the_package():
    assert NAMES == ["cbow-hs", "cbow-ns", "sg-hs", "sg-ns"]
    assert PRESETS.name == "configs" and PRESETS.is_dir()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("presets") / "corpus.txt"
    lines = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))] * 3
    path.write_text("\n".join(lines) + "\n")
    return path


def train_args(corpus, out, preset):
    quick = ["--epochs", "1", "--min-count", "1", "--dim", "8", "--threads", "1", "-q"]
    return ["train", str(corpus), "--config", preset, "-o", str(out), *quick]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_preset_trains_through_the_cli_by_name(name, corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the name is looked up in the package, not in the working folder
    out = tmp_path / "vectors.txt"
    try:
        main(train_args(corpus, out, name))
    except SystemExit as exit_:  # main() exits only on an error
        pytest.fail(f"w2v train --config {name} exited with {exit_.code}")
    header = out.read_text().splitlines()[0].split()
    assert header == [str(len(set(WORDS))), "8"]


def test_a_path_is_read_as_a_file(corpus, tmp_path, capsys):
    preset = tmp_path / "mine.toml"
    preset.write_text('[train]\nmodel = "cbow"\nwindow = 3\n')
    assert load_preset(str(preset), {"model", "window"}) == {"model": "cbow", "window": 3}
    main(train_args(corpus, tmp_path / "v.txt", str(preset)))
    assert capsys.readouterr().err == ""


def test_unknown_preset_name_lists_the_shipped_ones(corpus, run_w2v):
    code, _, err = run_w2v("train", str(corpus), "--config", "cbow")
    assert code == 2
    assert err.endswith(
        "Invalid value for --config: no preset named 'cbow': "
        "use one of cbow-hs, cbow-ns, sg-hs, sg-ns, or a FILE.toml\n"
    )


def test_the_old_configs_path_points_to_the_name(corpus, tmp_path, monkeypatch, run_w2v):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_w2v("train", str(corpus), "--config", "configs/cbow-ns.toml")
    assert code == 2
    assert err.endswith(
        "cannot read preset configs/cbow-ns.toml: No such file or directory "
        "(the preset shipped with w2v: --config cbow-ns)\n"
    )


@pytest.mark.parametrize(
    ("text", "twice"),
    [
        ("dim = 10\nsize = 20\n", "dim twice (dim and size)"),  # size is dim's other name
        ("min-count = 1\nmin_count = 3\n", "min_count twice (min-count and min_count)"),
        ("dim = 10\n[train]\ndim = 20\n", "dim twice (dim and train.dim)"),
        ("epochs = 2\n[train]\niter = 3\n", "epochs twice (epochs and train.iter)"),
    ],
)
def test_a_setting_given_twice_in_a_preset_is_refused(corpus, tmp_path, text, twice, run_w2v):
    """Either of the two values silently won (the [train] table's, or the later key)."""
    preset = tmp_path / "twice.toml"
    preset.write_text(text)
    code, _, err = run_w2v(*train_args(corpus, tmp_path / "v.txt", str(preset)))
    assert (code, err) == (2, f"w2v: error: Invalid value for --config: preset {preset} sets {twice}: keep one\n")
    assert not (tmp_path / "v.txt").exists()


def test_a_preset_sets_keys_at_the_top_and_under_train(corpus, tmp_path):
    """Keys at the top beside a [train] table were ignored: both apply."""
    preset = tmp_path / "both.toml"
    preset.write_text('window = 3\n[train]\nmodel = "cbow"\n')
    assert load_preset(str(preset), {"model", "window"}) == {"window": 3, "model": "cbow"}


def test_preset_path_rules(tmp_path):
    assert preset_path("sg-ns") == str(PRESETS / "sg-ns.toml")
    assert preset_path("sg-ns.toml") == "sg-ns.toml"  # a file name: read as given
    assert preset_path("./sg-ns") == "./sg-ns"
    with pytest.raises(ConfigError, match="no preset named 'nope'"):
        preset_path("nope")


def test_presets_are_listed_in_train_help(capsys):
    main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--config NAME|FILE A preset shipped with w2v (cbow-hs, cbow-ns, sg-hs, sg-ns:" in help_text


@pytest.mark.parametrize("name", NAMES)
def test_preset_keys_are_train_options(name):
    from w2v.cli.training import PRESET_ALIASES, train

    allowed = {p.name for p in train.params} | set(PRESET_ALIASES)
    assert load_preset(name, allowed)


@pytest.mark.slow
@pytest.mark.parametrize("preset", [*NAMES, "default-skipgram", "default-cbow"])
def test_no_false_divergence_alarm_on_real_text(preset, wiki6, monkeypatch):
    """The presets and the defaults (one epoch on the 6 MB Wikipedia slice) keep every
    weight row far below the norm that counts as divergence (``weights.MAX_ROW_NORM``)."""
    if preset in NAMES:
        settings = load_preset(preset, {field.name for field in dataclasses.fields(TrainConfig)})
    else:
        settings = {"model": preset.removeprefix("default-")}
    norms = []
    measure = w2v.engine.weights.largest_row_norm

    def measured(weights):
        norms.append(measure(weights))
        return norms[-1]

    monkeypatch.setattr(w2v.engine.weights, "largest_row_norm", measured)
    train(str(wiki6), **{**settings, "epochs": 1, "threads": 1})
    assert len(norms) == 3  # syn0, syn1 and syn1neg, checked once
    assert 1 < max(norms) < w2v.engine.weights.MAX_ROW_NORM / 10


def test_the_library_takes_a_preset_as_the_command_does(corpus, tmp_path):
    """``w2v.train(config="sg-ns")`` is ``w2v train --config sg-ns``: the same vectors;
    keywords win over the preset's values, as flags do."""
    out = tmp_path / "cli.bin"
    main([*train_args(corpus, out, "cbow-hs")[:-1], "--window", "3", "-q"])
    quick = dict(epochs=1, min_count=1, dim=8, threads=1)
    ours = train(str(corpus), config="cbow-hs", window=3, save_model=str(tmp_path / "m.npz"), **quick)
    assert ours.vectors.tobytes() == w2v.Vectors.load(out).vectors.tobytes()
    settings = TrainState.load(str(tmp_path / "m.npz")).config
    assert (settings.model, settings.hs, settings.negative, settings.window) == ("cbow", True, 0, 3)
    assert settings.sample == load_preset("cbow-hs", None)["sample"]


def test_a_preset_of_the_commands_other_options_is_one_line_for_the_library(corpus, tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text('size = 8\niter = 1\noutput = "v.bin"\nclasses = 3\n')
    with pytest.raises(ConfigError) as refused:
        train(str(corpus), config=str(preset))
    assert str(refused.value) == (
        f"preset {preset} sets classes, output: w2v.train takes the training settings of a preset "
        "(w2v.TrainConfig's fields and cbow_sum), the command's other options (output, classes...) not"
    )
    with pytest.raises(ConfigError, match=r"^no preset named .sg_ns.: use one of cbow-hs, cbow-ns, sg-hs, sg-ns"):
        train(str(corpus), config="sg_ns")


def test_cbow_sum_as_the_command_takes_it(corpus, tmp_path):
    """``cbow_sum=True`` (``--cbow-sum``) is ``cbow_mean=False``, from a preset too."""
    quick = dict(model="cbow", epochs=1, min_count=1, dim=8, threads=1)
    summed = train(str(corpus), cbow_sum=True, **quick)
    assert summed.vectors.tobytes() == train(str(corpus), cbow_mean=False, **quick).vectors.tobytes()
    assert summed.vectors.tobytes() != train(str(corpus), **quick).vectors.tobytes()
    preset = tmp_path / "sum.toml"
    preset.write_text("cbow-sum = true\n")
    assert train(str(corpus), config=str(preset), **quick).vectors.tobytes() == summed.vectors.tobytes()
    with pytest.raises(ConfigError, match=r"^give cbow_sum or cbow_mean, not both"):
        train(str(corpus), cbow_sum=True, cbow_mean=False, **quick)
    with pytest.raises(ConfigError, match=r"^cbow_sum must be true or false, not 'yes'$"):
        train(str(corpus), cbow_sum="yes", **quick)
