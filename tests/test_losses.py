"""The table of losses (``w2v.losses``): every loss in it has what each layer needs,
so that adding a row without the rest fails here (the architecture page's "add a loss")."""

import dataclasses

import pytest
from click.testing import CliRunner
from conftest import REPO
from reference import LOSS_EXAMPLES, losses_on, settings_of
from test_kernels import CASES, make_params

from w2v.cli.app import cli
from w2v.config import TrainConfig
from w2v.engine import kernels
from w2v.engine.scoring import model_losses
from w2v.losses import LOSSES, NO_WORD_LOSS, SCORED, TREE, WORD_LOSSES, option
from w2v.vectorio.as_fasttext import fasttext_loss
from w2v.vectorio.fasttext import LOSSES as FASTTEXT_LOSSES

DOCS = REPO / "docs"


def config_of(loss) -> TrainConfig:
    """A resolved config that trains ``loss`` alone (hierarchical softmax: ``hs``)."""
    value = True if loss.setting in ("hs", "softmax") else 5
    others = {"negative": 0} if loss.setting != "negative" else {}
    return TrainConfig(**{loss.setting: value}, **others).resolved()


@pytest.mark.parametrize("name", list(LOSSES))
def test_each_loss_is_a_setting_an_option_and_a_row_of_the_estimators_table(name):
    loss = LOSSES[name]
    assert loss.setting in {field.name for field in dataclasses.fields(TrainConfig)}
    help_text = CliRunner().invoke(cli, ["train", "--help"], terminal_width=200).output
    assert f"{option(loss)} " in help_text
    assert f"| `{option(loss)}" in (DOCS / "estimators.md").read_text()


@pytest.mark.parametrize("name", list(LOSSES))
def test_each_loss_is_chosen_by_its_setting_and_scored_and_exported(name):
    """Its setting alone turns it on (``output_loss``, the kernel's flags), held-out
    scoring knows its distribution, and fastText's ``.bin`` names a loss of its own."""
    loss, config = LOSSES[name], config_of(LOSSES[name])
    settings = kernels.Settings.of(config, 1)
    assert settings.hs == (loss.code == TREE)
    assert settings.kind == (NO_WORD_LOSS if loss.code == TREE else loss.code)
    assert settings.samples == (5 if loss.draws else 0)
    assert model_losses(config) == [name]
    assert loss.scored in SCORED
    assert fasttext_loss(config) == loss.fasttext and loss.fasttext in FASTTEXT_LOSSES


def test_the_kernel_codes_are_distinct_and_the_reference_has_every_loss():
    codes = [loss.code for loss in WORD_LOSSES]
    assert len(set(codes)) == len(codes) and NO_WORD_LOSS not in codes and TREE not in codes
    assert set(LOSS_EXAMPLES) == set(LOSSES)


@pytest.mark.parametrize("name", list(LOSSES))
def test_the_kernel_is_checked_against_the_reference_for_each_loss(name):
    """Some case of ``test_kernels.CASES`` (the kernel against ``reference.py``, step
    for step) trains the loss, for skip-gram and for CBOW."""
    trained = {False: set(), True: set()}
    for case in CASES.values():
        kind = case.get("kind", kernels.NS)
        output = case["negative"] > 0 or kind == kernels.SOFTMAX
        params = make_params(case["hs"], output)[1]
        settings = settings_of(params, 1, case["negative"], case["cbow"], kind=kind)
        trained[case["cbow"]].update(losses_on(settings))
    assert name in trained[False] and name in trained[True]
