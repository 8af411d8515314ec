"""w2v installed from a wheel (not editable) into a fresh environment works from a folder
outside the checkout: the presets and the evaluation sets ship inside the package.

The wheel is built offline from a copy of the package's sources with the setuptools
installed here; where that is impossible (no setuptools or wheel) the test is skipped.
"""

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow  # the test builds a wheel and installs it in a new environment

SHIPPED = ["w2v/configs/cbow-ns.toml", "w2v/data/questions-words.txt", "w2v/data/wordsim353.tsv"]


def build_wheel(folder: Path) -> Path:
    """A wheel of this checkout, built in ``folder`` from a copy of its sources (the
    build's egg-info and build/ folders stay out of the checkout)."""
    source = folder / "source"
    for tree in ("w2v", "configs"):
        shutil.copytree(REPO / tree, source / tree, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "--no-index"]
    done = subprocess.run([*command, "-w", str(folder / "dist")], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"cannot build a wheel offline here: {reason}")
    return next((folder / "dist").glob("w2v-*.whl"))


def seeing_these_packages(venv: Path) -> None:
    """Let the venv ``venv`` import the packages of the running environment (numba, numpy
    and w2v's other dependencies): a ``.pth`` file in its site-packages lists this
    interpreter's ``site.getsitepackages()``. ``venv --system-site-packages`` would not do:
    run from a venv, it gives the base interpreter's site-packages, not this venv's. The
    folders are added as paths, so their own ``.pth`` files (this checkout's editable
    install among them) are not read: ``import w2v`` finds the wheel's."""
    done = subprocess.run(
        [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    Path(done.stdout.strip(), "running-environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a fresh venv holding w2v installed from its wheel; numba, numpy
    and the other dependencies come from this interpreter's environment."""
    folder = tmp_path_factory.mktemp("install")
    wheel = build_wheel(folder)
    names = zipfile.ZipFile(wheel).namelist()
    assert all(name in names for name in SHIPPED), names
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    seeing_these_packages(venv)
    install = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps"]
    subprocess.run([*install, "--no-index", "-q", str(wheel)], check=True, capture_output=True, timeout=120)
    return venv / "bin"


def run_installed(bin_folder: Path, *args, cwd: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # not this checkout
    return subprocess.run(
        [str(bin_folder / args[0]), *map(str, args[1:])], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_installed_package_trains_a_preset_and_evaluates_on_the_shipped_sets(installed, tmp_path):
    corpus = tmp_path / "corpus.txt"  # words of the analogy set's "family" section and of WordSim-353
    lines = ["the king and the queen", "the man and the woman", "the boy and the girl", "the tiger and the cat"]
    corpus.write_text("\n".join(lines * 20) + "\n")
    where = run_installed(installed, "python", "-c", "import w2v; print(w2v.__file__)", cwd=tmp_path)
    assert where.stdout.startswith(str(installed.parent)), where.stdout + where.stderr
    train = ["w2v", "train", "--config", "cbow-ns", corpus, "-o", "v.bin", "--min-count", "1", "--dim", "10"]
    done = run_installed(installed, *train, "--epochs", "1", "--threads", "1", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run_installed(installed, "w2v", "eval", "-v", "v.bin", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    [analogies], [pairs] = result["analogies"], result["similarity"]
    assert Path(analogies["path"]).parent == Path(pairs["path"]).parent
    assert Path(analogies["path"]).is_relative_to(installed.parent)
    assert analogies["questions"] == 19544 and analogies["answered"] > 0
    assert pairs["pairs"] + pairs["missing"] == 353 and pairs["pairs"] > 0
