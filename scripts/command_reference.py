"""Write docs/commands.md, the option reference of every ``w2v`` command, from their help texts.

    python scripts/command_reference.py          # rewrite docs/commands.md from this checkout's commands
    python scripts/command_reference.py --check  # exit 1, naming the page, where it is not what this writes

The page is each command's ``--help`` as click prints it (``w2v.cli.cli`` is the group),
at a fixed width, so it reads the same on every machine. tests/test_docs.py checks that the
page says what this script writes now (the same words; the wrapping may differ with click's
version), so that the two cannot drift: after changing a help text, run it again.
"""

import argparse
import inspect
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs/commands.md"
WIDTH = 100  # columns of the help texts (the commands' own max_content_width)
INTRO = """# Command reference

The `w2v` commands, then each one's `--help` as this version prints it. Written by
`scripts/command_reference.py`: do not edit by hand (run it again after changing
a help text; `tests/test_docs.py` checks that this page is what it writes).
"""


def context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    """The context ``w2v [NAME]`` runs ``command`` in (its own settings), ``WIDTH`` columns wide."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return click.Context(command, info_name=name, parent=parent, **settings)


def command_table(top: click.Context) -> str:
    """The commands of ``w2v``, each with the first paragraph of its help: the list of
    ``w2v --help`` whole, as click cuts each line by heuristics that change between
    its versions."""
    group = top.command
    assert isinstance(group, click.Group)
    rows = ["| command | what it does |", "|---|---|"]
    for name in group.list_commands(top):
        command = group.get_command(top, name)
        if command is not None and not command.hidden:
            first = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].split())
            cell = first.replace("|", "\\|")  # a table cell
            rows.append(f"| `w2v {name}` | {cell} |")
    return "\n".join(rows) + "\n"


def reference() -> str:
    """The page: the commands in a table, then each command's help, in the order ``w2v --help`` lists them."""
    sys.path.insert(0, str(ROOT))  # this checkout's commands, not an installed w2v's
    from w2v.cli import cli

    top = context(cli, "w2v", None)
    sections = [INTRO, command_table(top)]
    for name in cli.list_commands(top):
        command = cli.get_command(top, name)
        if command is not None and not command.hidden:
            sections.append(f"## w2v {name}\n\n```\n{context(command, name, top).get_help()}\n```\n")
    return "\n".join(sections)


def same_text(page: str, written: str) -> bool:
    """Whether ``page`` says what ``written`` says, however the lines are wrapped: click's
    wrapping of a help text changes between its versions, its words do not."""
    return page.split() == written.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the page is up to date")
    args = parser.parse_args()
    page = reference()
    if args.check:
        if not PAGE.is_file() or not same_text(PAGE.read_text(), page):
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/command_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page)
    print(f"command_reference: wrote {PAGE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
