"""The systems the benchmark runs and the model-loss combos they train: which system trains
which combo, their names in the report, and finding the ones installed."""

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from . import SCRIPTS

SYSTEMS = ["w2v", "word2vec", "gensim", "fasttext", "gensim-ft", "pword2vec"]
LABELS = {
    "w2v": "w2v",
    "word2vec": "word2vec.c",
    "gensim": "gensim (corpus_file)",
    "fasttext": "fastText",
    "gensim-ft": "gensim FastText (corpus_file)",
    "pword2vec": "pWord2Vec",
}
SUBWORD_SYSTEMS = ("w2v", "fasttext", "gensim-ft")  # the systems that learn character n-grams
WORD_SYSTEMS = ("w2v", "word2vec", "gensim", "fasttext")  # fastText with its n-grams off
PWORD2VEC_COMBOS = ("sg-ns",)  # Intel's pWord2Vec trains skip-gram with negative sampling alone
RUNNERS = {"gensim": "gensim", "gensim-ft": "gensim", "fasttext": "fasttext"}  # system: module (scripts/*_runner.py)


class Combo(NamedTuple):
    """A model-loss pair, and whether a word's input is built from its character n-grams too
    (fastText's model, trained at fastText's unsupervised defaults)."""

    model: str
    loss: str
    subwords: bool = False


COMBOS = {
    "sg-ns": Combo("skipgram", "ns"),
    "cbow-ns": Combo("cbow", "ns"),
    "sg-hs": Combo("skipgram", "hs"),
    "cbow-hs": Combo("cbow", "hs"),
    "sg-sub": Combo("skipgram", "ns", subwords=True),
    "cbow-sub": Combo("cbow", "ns", subwords=True),
}
DEFAULT_COMBOS = [c for c, combo in COMBOS.items() if not combo.subwords]  # the subword ones: --combos sg-sub,cbow-sub
COMBO_LABELS = {
    "sg-ns": "skip-gram+NS",
    "cbow-ns": "CBOW+NS",
    "sg-hs": "skip-gram+HS",
    "cbow-hs": "CBOW+HS",
    "sg-sub": "skip-gram+NS, subwords",
    "cbow-sub": "CBOW+NS, subwords",
}


def can_run(system: str, combo: str) -> bool:
    """Whether ``system`` trains ``combo``: n-grams (the -sub combos) or words alone
    (pWord2Vec: skip-gram NS alone)."""
    if system == "pword2vec":
        return combo in PWORD2VEC_COMBOS
    return system in (SUBWORD_SYSTEMS if COMBOS[combo].subwords else WORD_SYSTEMS)


def systems_for(systems: Iterable[str], combo: str) -> list[str]:
    """The ``systems`` that run ``combo``, in their order."""
    return [system for system in systems if can_run(system, combo)]


def systems_help() -> str:
    """Which systems run which kind of combo, for --help."""
    return (
        f"{', '.join(WORD_SYSTEMS)} the word combos; {', '.join(SUBWORD_SYSTEMS)} the -sub ones; "
        f"pword2vec {', '.join(PWORD2VEC_COMBOS)}"
    )


def label(system: str, combo: str) -> str:
    """A system's name in a combo's rows: fastText on a word combo runs with its n-grams off."""
    plain = system == "fasttext" and not COMBOS[combo].subwords
    return LABELS[system] + (" (no subwords)" if plain else "")


def find_command(name: str) -> str | None:
    """A console script of this interpreter's environment, else one on PATH (shims are slower)."""
    local = Path(sysconfig.get_path("scripts")) / name
    return str(local) if local.is_file() and os.access(local, os.X_OK) else shutil.which(name)


def find_systems(wanted: list[str], pword2vec: str | None) -> tuple[dict[str, list[str]], list[str]]:
    """The command prefix of each wanted system that is installed (pWord2Vec: the binary
    ``pword2vec`` names, else ``pWord2Vec`` on PATH), and a note per missing one."""
    found, notes = {}, []
    w2v = find_command("w2v")
    found["w2v"] = [w2v] if w2v else [sys.executable, "-m", "w2v"]
    for system, tool in (("word2vec", find_command("word2vec")), ("pword2vec", pword2vec or find_command("pWord2Vec"))):
        if tool and os.access(tool, os.X_OK):
            found[system] = [tool]
    for system, module in RUNNERS.items():
        if importlib.util.find_spec(module):
            found[system] = [sys.executable, str(SCRIPTS / f"{module}_runner.py")]
    for system in wanted:
        if system == "pword2vec" and system not in found:
            notes.append("pWord2Vec not found (scripts/build_pword2vec.sh builds it; --pword2vec PATH): skipped.")
        elif system not in found:
            notes.append(f"{LABELS[system]} is not installed (`pip install -e .[bench]`): skipped.")
    return {s: found[s] for s in wanted if s in found}, notes


def w2v_model_flag(w2v: list[str]) -> str:
    """w2v's option that writes a subword model whole: ``--save-fasttext`` (a fastText .bin,
    as the peers write) where this w2v has it, else ``--save-model`` (.npz)."""
    done = subprocess.run([*w2v, "train", "--help"], capture_output=True, text=True)
    return "--save-fasttext" if "--save-fasttext" in done.stdout else "--save-model"
