"""Numba's cache never runs stale code: a kernel cached on disk is compiled again
when any module it is built from changes, not only its own file."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from compiles import COUNT_COMPILES

import w2v
from w2v.engine.jit import compile_reach, compiling_noted
from w2v.jitcache import DAMAGED, build_sources, imported_names, sources_digest

CHILD = (
    COUNT_COMPILES
    + """
from probe.kernel import run

print(json.dumps({"compiled": compiled, "value": run(1)}))
"""
)

KERNEL = """from probe.helper import step
from w2v.engine.jit import jit_kernel


@jit_kernel
def run(x):
    return step(x)
"""

PLAIN = "from numba import njit; jit_helper = njit(forceinline=True, cache=True)"  # Numba's own cache
PLAIN_KERNEL = "from numba import njit; jit_kernel = njit(cache=True)"  # on one line: the same file names

HELPER = """from w2v.engine.jit import jit_helper


@jit_helper
def step(x):
    return x + {add}
"""


def run_python(folder: Path, code: str, cache: Path | None = None, **more: str) -> str:
    """Run ``code`` in a process of its own, in ``folder`` and with it and w2v on the
    path, Numba's cache in ``cache`` (None: beside the sources) and ``more`` in its
    environment: what it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(Path(w2v.__file__).parents[1])]), **more}
    env.pop("NUMBA_CACHE_DIR", None)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_probe(folder: Path, cache: Path | None, **more: str) -> dict:
    """Import and call ``probe.kernel.run(1)`` (``run_python``): the functions Numba
    compiled and the value."""
    return json.loads(run_python(folder, CHILD, cache, **more))


def make_probe(folder: Path) -> Path:
    """The package ``probe`` in ``folder``: a kernel that inlines a helper of another file."""
    package = folder / "probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernel.py").write_text(KERNEL)
    (package / "helper.py").write_text(HELPER.format(add=1))
    return package


@pytest.mark.slow
@pytest.mark.parametrize("cache_dir", [False, True], ids=["beside the sources", "NUMBA_CACHE_DIR"])
def test_a_changed_helper_compiles_the_kernel_that_inlines_it_again(tmp_path, cache_dir):
    package = make_probe(tmp_path)
    cache = tmp_path / "numba-cache" if cache_dir else None
    first, second = run_probe(tmp_path, cache), run_probe(tmp_path, cache)
    assert (first["value"], second["value"]) == (2, 2)
    assert "run" in first["compiled"] and second["compiled"] == []  # the second loads the cache
    (package / "helper.py").write_text(HELPER.format(add=2))  # the kernel's own file is unchanged
    changed, again = run_probe(tmp_path, cache), run_probe(tmp_path, cache)
    assert changed["value"] == 3 and "run" in changed["compiled"]
    assert again == {"compiled": [], "value": 3}


def test_the_training_kernel_is_keyed_by_the_modules_it_inlines():
    kernels = Path(w2v.__file__).parent / "engine/kernels.py"
    names = {path.relative_to(kernels.parents[2]).as_posix() for path in build_sources(kernels)}
    assert {"w2v/engine/kernels.py", "w2v/engine/jit.py", "w2v/corpus/vocab.py", "w2v/config.py"} <= names
    assert "w2v/cli/app.py" not in names  # only what it imports
    assert sources_digest(kernels) == sources_digest(kernels)


def test_relative_imports_resolve_against_the_package(tmp_path):
    package = tmp_path / "top" / "inner"
    package.mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\nfrom .. import c\nfrom ..d import e\nimport numpy\n")
    for name in ("inner/b.py", "c.py", "d.py"):
        (tmp_path / "top" / name).write_text("x = 1\n")
    names = imported_names(package / "a.py")
    assert {"top.inner.b", "top.c", "top.d", "numpy"} <= set(names)
    found = {path.relative_to(tmp_path).as_posix() for path in build_sources(package / "a.py")}
    assert found == {
        "top/inner/a.py",
        "top/inner/b.py",
        "top/c.py",
        "top/d.py",
        "top/__init__.py",
        "top/inner/__init__.py",
    }


@pytest.mark.slow
def test_with_no_writable_cache_folder_every_run_compiles(tmp_path):
    """Numba finds no folder to cache in (the package's ``__pycache__`` is a file, and so
    are NUMBA_CACHE_DIR's and the user's cache folders' parents): the kernel is
    compiled in each process instead of failing at import ("no locator available")."""
    package = make_probe(tmp_path)
    (package / "__pycache__").write_text("not a folder")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file")
    homes = {"HOME": str(blocked), "XDG_CACHE_HOME": str(blocked / "cache")}
    runs = [run_probe(tmp_path, blocked / "numba", **homes) for _ in range(2)]
    assert all(run["value"] == 2 and "run" in run["compiled"] for run in runs)


def test_the_compile_note_says_how_long_a_compilation_serves():
    assert compile_reach("/x/__pycache__") == (
        "once for this version of w2v and Numba on this CPU (cached in /x/__pycache__)"
    )
    assert "in every run" in compile_reach(None) and "NUMBA_CACHE_DIR" in compile_reach(None)


DAMAGE = {
    "cut short": lambda data: data[: len(data) // 2],
    "emptied": lambda data: b"",
    "junk": lambda data: b"\x80\x04junk" * 50,
    "one bit flipped": lambda data: (
        data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 0x10]) + data[len(data) // 2 + 1 :]
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cache_file_is_compiled_again(tmp_path, damage, suffix):
    """Each of the cache's files damaged in turn: the next run compiles the function
    again (where Numba raised on unpickling it or crashed in LLVM loading it), and
    the run after it loads the repaired cache."""
    package = make_probe(tmp_path)
    assert run_probe(tmp_path, None)["value"] == 2
    files = sorted((package / "__pycache__").glob(f"*{suffix}"))
    assert len(files) == 2  # the kernel's and the helper's
    for file in files:
        file.write_bytes(DAMAGE[damage](file.read_bytes()))
    repaired = run_probe(tmp_path, None)
    assert repaired["value"] == 2 and repaired["compiled"] != []
    assert run_probe(tmp_path, None) == {"compiled": [], "value": 2}


def test_damaged_files_are_named_in_one_line(capsys):
    with compiling_noted():
        DAMAGED.add("/cache/kernels.train_batch-1.py311.1.nbc")
    DAMAGED.discard("/cache/kernels.train_batch-1.py311.1.nbc")
    assert capsys.readouterr().err == ("w2v: 1 damaged file(s) of Numba's cache found and compiled again, in /cache\n")


@pytest.mark.slow
def test_numbas_own_cache_files_are_a_plain_miss(tmp_path):
    """Files that Numba's own cache wrote (an earlier w2v's) are not taken for damage:
    the function compiles again without a word."""
    package = make_probe(tmp_path)
    (package / "helper.py").write_text(HELPER.format(add=1).replace("from w2v.engine.jit import jit_helper", PLAIN))
    (package / "kernel.py").write_text(KERNEL.replace("from w2v.engine.jit import jit_kernel", PLAIN_KERNEL))
    assert run_probe(tmp_path, None)["value"] == 2  # Numba's own files written
    (package / "helper.py").write_text(HELPER.format(add=1))
    (package / "kernel.py").write_text(KERNEL)
    code = "from w2v.jitcache import DAMAGED; from probe.kernel import run; print(run(1), sorted(DAMAGED))"
    assert run_python(tmp_path, code).split() == ["2", "[]"]
