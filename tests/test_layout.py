"""The package's shape: imports flow one way between the wings, no module imports
itself back through others (lazy imports included), and ``import w2v`` stays light."""

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "w2v"
# The wings from the bottom up: a module imports only from its own layer or one below.
LAYERS = [
    {
        "w2v.errors",
        "w2v.blas",
        "w2v.interrupts",
        "w2v.report",
        "w2v.version",
        "w2v.config",
        "w2v.losses",
        "w2v.words",
        "w2v.locks",
        "w2v.files",
        "w2v.progress",
        "w2v.jitcache",
    },
    {"w2v.corpus"},
    {"w2v.vectorio"},
    {"w2v.engine"},
    {"w2v.vectors"},
    {"w2v.cluster"},
    {"w2v.train", "w2v.toolkit", "w2v.starts"},
    {"w2v.cli", "w2v", "w2v.__main__"},
]
# Modules that import Numba when imported: the only ones w2v imports inside functions.
HEAVY = {
    "w2v.jitcache",
    "w2v.engine.jit",
    "w2v.engine.kernels",
    "w2v.corpus.chunkcounter",
    "w2v.cluster.rounds",
    "w2v.cluster.training",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level(statements: list[ast.stmt]) -> Iterator[ast.stmt]:
    """``statements`` and those of their ``if`` and ``try`` blocks (``if TYPE_CHECKING:``,
    a guard around imports): all but what functions and classes hold."""
    for node in statements:
        yield node
        if isinstance(node, ast.If):
            yield from top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from top_level(node.body + node.orelse + node.finalbody)


def imports_of(path: Path) -> list[tuple[str, bool]]:
    """The w2v modules ``path`` imports, each with whether the import is at the top."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in top_level(tree.body)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "w2v":
            found.append((node.module, id(node) in top))
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names if alias.name.split(".")[0] == "w2v"]
    return found


GRAPH = {module_name(path): imports_of(path) for path in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    for rank, members in enumerate(LAYERS):
        if any(module == member or module.startswith(member + ".") for member in members if member != "w2v"):
            return rank
    assert module in ("w2v", "w2v.__main__"), f"{module} is in no layer: add it to LAYERS"
    return len(LAYERS) - 1


def test_every_module_is_in_a_layer():
    for module in GRAPH:
        layer(module)


def test_imports_flow_down_the_layers():
    upward = [
        f"{module} -> {imported}"
        for module, imported_list in GRAPH.items()
        for imported, _ in imported_list
        if layer(imported) > layer(module)
    ]
    assert upward == []


def test_no_import_circles_lazy_imports_included():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported, _ in GRAPH.get(module, []):
            if imported == module:
                continue
            if state.get(imported) == 1:
                circles.append(" -> ".join([*path[path.index(imported) :], imported]))
            elif imported in GRAPH and imported not in state:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in GRAPH:
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_only_numba_modules_are_imported_lazily():
    lazy = {
        f"{module} -> {imported}"
        for module, imported_list in GRAPH.items()
        for imported, at_top in imported_list
        if not at_top and imported not in HEAVY
    }
    assert lazy == set()


@pytest.mark.slow
@pytest.mark.parametrize("module", ["w2v", "w2v.cli"])
def test_importing_w2v_loads_no_numba_dask_or_matplotlib(module):
    heavy = ("numba", "dask", "matplotlib", "smart_open")
    code = f"import sys, {module}; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


@pytest.mark.slow
def test_import_w2v_runs_no_other_module_and_its_names_come_when_asked_for():
    """``import w2v`` imports nothing else (so the command reaches ``w2v.cli``'s Ctrl-C guard at
    once); each public name is its module's object, and ``w2v.train`` stays the function after
    the module ``w2v.train`` is imported, first or later."""
    code = (
        "import sys; before = set(sys.modules); import w2v\n"
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('w2v', 'numpy', 'click')))\n"
        "import w2v.train; from w2v import train; print(type(w2v.train).__name__, type(train).__name__)\n"
        "print([n for n in w2v.__all__ if getattr(w2v, n) is not getattr(sys.modules[w2v.HOMES[n]], n)])\n"
        "print(type(w2v.errors).__name__, set(w2v.__all__) <= set(dir(w2v)), set(w2v.__all__) == set(w2v.HOMES))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.splitlines() == ["['w2v']", "function function", "[]", "module True True"]


def test_pyproject_ships_every_package_and_the_presets():
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {module_name(path.parent / "__init__.py") for path in PACKAGE.rglob("__init__.py")}
    assert set(pyproject["packages"]) == folders | {"w2v.configs"}
    assert pyproject["package-dir"] == {"w2v.configs": "configs"}
