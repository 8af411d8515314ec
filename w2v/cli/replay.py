"""``w2v train --resume``: the command that made a checkpoint, replayed. A run records
its options in the checkpoint (``rerun_recipe``, paths made absolute); ``--resume``
makes them the command's defaults (``apply_checkpoint``), each checked to be of its
option's type first (``option_kind``, which presets use too): a checkpoint is a file
people share."""

import os
import reprlib
from collections.abc import Callable
from typing import Any

import click

from w2v.config import is_float_sized_integer
from w2v.errors import FormatError, W2VError
from w2v.files import is_url
from w2v.vectorio.modelfile import model_file, read_meta


def option_kind(param: click.Parameter) -> tuple[str, Callable[[Any], bool]]:
    """How a message names the values of option ``param`` as TOML or JSON hold them (a
    preset's, a checkpoint's recorded command), and whether a value is one: true or false
    for a flag, an integer (no bool) or a number for a numeric option, a list of strings
    for the corpus, a string for the others; a string without NUL, which no path, choice
    or name holds (opening such a path raises ValueError)."""
    if param.nargs != 1:
        return "a list of strings", lambda value: isinstance(value, list) and all(map(is_text, value))
    if isinstance(param, click.Option) and param.is_flag:
        return "true or false", lambda value: isinstance(value, bool)
    if isinstance(param.type, click.types.IntParamType):
        return "an integer", lambda value: isinstance(value, int) and not isinstance(value, bool)
    if isinstance(param.type, click.types.FloatParamType):
        return "a number", lambda value: isinstance(value, float) or is_float_sized_integer(value)
    return "a string", is_text


def is_text(value: Any) -> bool:
    """Whether ``value`` is a string without NUL."""
    return isinstance(value, str) and "\0" not in value


PATH_OPTIONS = (
    "output",
    "save_vocab",
    "read_vocab",
    "classes_output",
    "plot",
    "report",
    "checkpoint",
    "save_model",
    "save_fasttext",
    "init_model",
    "heldout",
)


def apply_checkpoint(ctx: click.Context, _param, folder: str | None) -> str | None:
    """``--resume FOLDER``: the checkpointed command's options become the defaults."""
    if folder is None:
        return None

    if not os.path.exists(folder):
        raise click.BadParameter(f"no checkpoint in {folder}", param_hint="--resume")
    try:
        command = checkpointed_command(ctx, folder)
    except W2VError as err:
        raise click.BadParameter(str(err), param_hint="--resume") from None
    ctx.default_map = {**(ctx.default_map or {}), **command}
    return folder


def checkpointed_command(ctx: click.Context, folder: str) -> dict:
    """The options of the command that made the checkpoint in ``folder`` (its ``meta``'s
    ``notes.command``: ``rerun_recipe``), each of its option's type (``option_kind``):
    a checkpoint is a file people share, and click would hand a list or a path holding
    a NUL on to the command. FormatError (``damaged model file``) if one is not."""
    path = model_file(folder)
    notes = read_meta(folder).get("notes", {})
    command = notes.get("command", {}) if isinstance(notes, dict) else None
    if not isinstance(command, dict):
        raise FormatError(f"{path}: damaged model file (notes.command is not a table of options)")
    params = {param.name: param for param in ctx.command.params}
    for name, value in command.items():
        if name not in params or (value is None and params[name].default is None):
            continue  # a name no option has: click ignores it
        kind, is_kind = option_kind(params[name])
        if not is_kind(value):  # a file's value may be long: reprlib shortens it
            raise FormatError(
                f"{path}: damaged model file (notes.command.{name} must be {kind}, not {reprlib.repr(value)})"
            )
    return command


def rerun_recipe(ctx: click.Context) -> dict:
    """The train command's options, paths made absolute, for ``--resume`` to reuse."""
    recipe = {k: v for k, v in ctx.params.items() if k not in ("resume", "quiet")}
    for key in PATH_OPTIONS:
        if recipe.get(key) and recipe[key] != "-":
            recipe[key] = os.path.abspath(recipe[key])
    recipe["corpus"] = [c if c == "-" or is_url(c) else os.path.abspath(c) for c in recipe["corpus"]]
    return recipe
