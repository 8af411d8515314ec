"""The docs stay references that hold: the option reference is what its generator writes
now, every relative link leads to a file, no page names a folder of the machine the
figures were measured on, and every module, function and option named in backticks that
looks like w2v's is w2v's."""

import ast
import functools
import importlib.util
import io
import re
import tokenize
from pathlib import Path

import click
import pytest
from conftest import REPO

PAGES = sorted([REPO / "README.md", *REPO.glob("docs/**/*.md"), *REPO.glob("studies/**/*.md")])
REFERENCES = sorted([REPO / "README.md", *REPO.glob("docs/**/*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
MACHINE_FOLDERS = ("/work/", "/root/", "../shared")


def relative_links(page: Path) -> list[str]:
    """The targets of ``page``'s Markdown links and images that are paths (no URL, no bare
    anchor), outside code blocks, without their ``#anchor``."""
    text = FENCE.sub("", page.read_text())
    targets = [match.group(1) for match in LINK.finditer(text)]
    return [target.split("#")[0] for target in targets if not re.match(r"[a-z]+:|#", target)]


def test_the_command_reference_is_what_its_script_writes() -> None:
    """The same words in the same order; the lines may wrap elsewhere (click's version)."""
    spec = importlib.util.spec_from_file_location("command_reference", REPO / "scripts/command_reference.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (REPO / "docs/commands.md").read_text()
    assert script.same_text(page, script.reference()), (
        "docs/commands.md is out of date: run python scripts/command_reference.py"
    )


def test_the_reference_lists_every_command() -> None:
    """A section per command of ``w2v --help``, train's options in full."""
    page = (REPO / "docs/commands.md").read_text()
    for name in ("train", "similar", "analogy", "eval", "vocab", "phrases", "classes", "score", "word2vec"):
        assert f"\n## w2v {name}\n" in page
    assert "  --checkpoint DIR" in page and "Usage: w2v train [OPTIONS]" in page


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    broken = [target for target in relative_links(page) if not (page.parent / target).exists()]
    assert not broken, f"{page.relative_to(REPO)}: links to nothing: {', '.join(broken)}"


@pytest.mark.parametrize("page", REFERENCES, ids=lambda page: str(page.relative_to(REPO)))
def test_no_page_names_a_folder_of_the_machine(page: Path) -> None:
    text = page.read_text()
    named = [folder for folder in MACHINE_FOLDERS if folder in text]
    assert not named, f"{page.relative_to(REPO)} names {', '.join(named)}: name files a reader has"


def test_the_links_are_found() -> None:
    """Links and images, with and without anchors; URLs, anchors and code are left out."""
    page = REPO / "docs/vectors.md"
    assert "../w2v/data/README.md" in relative_links(page) and "img/map.png" in relative_links(page)
    assert not any(target.startswith(("http", "#")) or not target for target in relative_links(REPO / "README.md"))


# --- the names the docs give in backticks ----------------------------------------------------

TICKED = re.compile(r"`([^`\n]+)`")
PYTHON_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
FILE_SUFFIXES = {"bin", "vec", "txt", "tsv", "npz", "npy", "json", "toml", "md", "gz", "cc", "c", "h", "sh", "png"}
TOP_FOLDERS = {"w2v", "scripts", "tests", "studies", "data", "configs", "docs"}  # of the repository
SUBPACKAGES = {"cli", "cluster", "corpus", "engine", "vectorio", "vectors"}  # of w2v, named without w2v/
# Names in backticks that are other tools' (or a phrase's words joined), not w2v's
OTHER_TOOLS = {
    "get_latest_training_loss()": "gensim",
    "null_word": "gensim",
    "shrink_windows": "gensim",
    "sorted_vocab": "gensim",
    "trim_rule": "gensim",
    "--workers": "gensim (a keyword spelled as a flag, in w2v's message)",
    "computeHidden": "fastText",
    "word_count_actual": "word2vec.c",
    "max_w": "word2vec.c (distance.c)",
    "--cbow": "word2vec.c (its -cbow spelled as a flag)",
    "sampled_softmax_loss": "TensorFlow",
    "--nthreads": "Dask (dask worker)",
    "los_angeles": "a phrase of w2v phrases",
}
OTHER_COMMANDS = {"dask", "pip", "git", "gcc", "make", "word2vec", "fasttext", "ruff", "mypy"}  # not w2v's options


def ticked(page: Path) -> list[str]:
    """The texts in single backticks on ``page``, outside code blocks."""
    return TICKED.findall(FENCE.sub("", page.read_text()))


@functools.cache
def code_names() -> frozenset[str]:
    """Every identifier of the project's Python (w2v, scripts, studies, tests but this file):
    its names and the identifiers inside its strings (JSON fields, gensim's keywords it maps)."""
    names = set()
    for top in ("w2v", "scripts", "studies", "tests"):
        for path in (REPO / top).rglob("*.py"):
            if path.resolve() == Path(__file__).resolve():
                continue
            for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
                if token.type == tokenize.NAME:
                    names.add(token.string)
                elif token.type == tokenize.STRING:
                    names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", token.string))
    return frozenset(names)


@functools.cache
def command_options() -> dict[str, frozenset[str]]:
    """Each w2v command's options, every spelling, by the command's name ("" for ``w2v``'s own)."""
    from w2v.cli import cli

    def spellings(command: click.Command) -> frozenset[str]:
        return frozenset(["--help", *(name for p in command.params for name in (*p.opts, *p.secondary_opts))])

    return {"": spellings(cli), **{name: spellings(command) for name, command in cli.commands.items()}}


@functools.cache
def script_options(script: Path) -> frozenset[str]:
    """The options a script of scripts/ or studies/ defines (``add_argument("--name", ...)``),
    in its file or its package (``scripts/bench/`` for ``scripts/bench.py``)."""
    package = script.with_suffix("")
    calls = [
        node
        for source in [script, *(package.glob("*.py") if package.is_dir() else [])]
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
    ]
    return frozenset(
        arg.value for call in calls for arg in call.args if isinstance(arg, ast.Constant) and str(arg.value)[:2] == "--"
    )


@functools.cache
def all_options() -> frozenset[str]:
    """The options of every w2v command and of every script."""
    scripts = [*REPO.glob("scripts/*.py"), *REPO.glob("studies/*/*.py")]
    return frozenset().union(*command_options().values(), *map(script_options, scripts))


def python_name_missing(text: str) -> bool:
    """``text`` looks like a name in w2v's code (``output_loss``, ``Vocab.keep_probabilities``,
    ``TrainConfig``, ``w2v.train()``: an underscore, a dot or an inner capital) and is not one."""
    if not PYTHON_NAME.fullmatch(text) or text.rsplit(".", 1)[-1] in FILE_SUFFIXES:
        return False
    if not ("_" in text or "." in text or re.search(r"[a-z][A-Z]", text)):
        return False  # a plain word: `loss`, `pairs`
    return not set(text.removesuffix("()").split(".")) <= code_names()


def path_missing(text: str) -> bool:
    """``text`` is a path in the repository (``scripts/bench.py``, ``engine/kernels.py`` in w2v,
    ``cluster/rounds.Replica``: a module's name) or a module's file name, and names nothing."""
    if re.fullmatch(r"[\w-]+\.py", text):
        return not any(REPO.glob(f"*/**/{text}"))
    if " " in text or "/" not in text or text.split("/")[0] not in TOP_FOLDERS | SUBPACKAGES:
        return False
    path = (REPO if text.split("/")[0] in TOP_FOLDERS else REPO / "w2v") / text
    module, _, attribute = text.rpartition(".")
    if not path.exists() and attribute not in FILE_SUFFIXES and path.with_name(Path(module).name + ".py").is_file():
        return attribute not in code_names()  # module.Name
    return not path.exists()


def options_missing(text: str) -> list[str]:
    """The ``--options`` in ``text`` that what it runs does not take: ``w2v CMD ...`` (or
    ``python -m w2v CMD``, or ``CMD ...``): that command's options; ``python scripts/X.py ...``:
    the script's; another tool's command line: none checked; else w2v's or any script's."""
    words = text.split()
    if words[0] in OTHER_COMMANDS:
        return []
    if words[:2] == ["python", "-m"]:
        if words[2:3] != ["w2v"]:
            return []  # another module's command line
        words = ["w2v", *words[3:]]
    commands = command_options()
    scripts = [REPO / word for word in words[:2] if re.fullmatch(r"(scripts|studies)/\S+\.py", word)]
    if scripts:
        known = script_options(scripts[0]) if scripts[0].is_file() else frozenset()
    elif words[0] == "w2v":
        known = commands.get(words[1] if len(words) > 1 else "", commands[""])
    else:
        known = commands.get(words[0], all_options())
    return [option for option in OPTION.findall(text) if option not in known and option not in OTHER_TOOLS]


@pytest.mark.parametrize("page", REFERENCES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_ticked_name_of_w2v_exists(page: Path) -> None:
    """A module, a function or an option in backticks that looks like w2v's is w2v's: the
    docs name no function, file or option that was renamed or removed."""
    missing = set()
    for text in (text.strip() for text in ticked(page)):
        if not text or text in OTHER_TOOLS:
            continue
        if python_name_missing(text) or path_missing(text):
            missing.add(text)
        missing.update(options_missing(text))
    assert not missing, f"{page.relative_to(REPO)} names what w2v does not have: {', '.join(sorted(missing))}"


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("output_loss", []),
        ("distinct_units", ["distinct_units"]),
        ("Vocab.keep_probabilities", []),
        ("Vocab.keep_probability", ["Vocab.keep_probability"]),
        ("loss", []),  # a plain word
        ("engine/kernels.py", []),
        ("engine/kernel.py", ["engine/kernel.py"]),
        ("w2v/engine/kernels.py", []),
        ("cluster/rounds.Replica", []),
        ("cluster/rounds.Replicas", ["cluster/rounds.Replicas"]),
        ("kernels.py", []),
        ("src/fasttext.cc", []),  # fastText's
        ("vectors.bin", []),  # a file of the reader's
        ("--sampled-softmax", []),
        ("--sampled-softmaxes", ["--sampled-softmaxes"]),
        ("w2v train --epochs 1 --dim 8", []),
        ("w2v vocab --dim 8", ["--dim"]),  # train's, not vocab's
        ("python scripts/bench.py --systems w2v", []),
        ("python scripts/bench.py --sampled-softmax 8", ["--sampled-softmax"]),  # train's, not bench's
        ("dask worker --nprocs 2", []),  # Dask's
        ("python -m pytest --co", []),  # pytest's
        ("python -m w2v vocab --dim 8", ["--dim"]),
        ("--nthreads", []),
    ],
)
def test_what_looks_like_w2vs_is_checked(text: str, missing: list[str]) -> None:
    found = ([text] if python_name_missing(text) or path_missing(text) else []) + options_missing(text)
    assert found == missing


@pytest.mark.slow
def test_the_readmes_python_snippet_runs_as_written(tmp_path, monkeypatch, capsys) -> None:
    """README's "Python API" block, run as a user pastes it, from a folder holding the
    checkout's ``data/`` (the sample it trains on)."""
    pytest.importorskip("gensim")
    readme = (REPO / "README.md").read_text()
    start = readme.index("```python\n", readme.index("## Python API")) + len("```python\n")
    snippet = readme[start : readme.index("```", start)]
    (tmp_path / "data").symlink_to(REPO / "data")
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "README.md", "exec"), {})
    assert (tmp_path / "v.bin").is_file() and (tmp_path / "phrased.txt").is_file()
    assert "one" not in capsys.readouterr().out.split("\n")[1]  # most_similar's answers, the word left out
