"""Every user mistake each command can meet ends as ONE ``w2v: error:`` line naming the
culprit, exit 1 (bad input) or 2 (bad usage), no traceback, nothing on stdout, and
no file written, replaced or left behind: missing files, folders where files are
expected, unwritable outputs, conflicting or useless flags, bad numbers, bad presets,
files that are not what they should be.

The commands run in-process through ``main`` (fast); a few run as ``python -m w2v``
to check a real process prints the same single line.
"""

import importlib.util
import json
import os
import re
import resource
import shlex
import struct
import subprocess
import sys
import tempfile
import tomllib
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, Stdin, ctrl_c_by_default, without_progress
from reference import fasttext_bin

import w2v
from w2v.cli import training as cli_training
from w2v.corpus.phrases import PhraseTable
from w2v.errors import CorpusError
from w2v.vectors.wordvectors import Vectors

w2v_train = sys.modules["w2v.train"]  # the module: ``w2v.train`` is its function

pytestmark = pytest.mark.filterwarnings("error")  # a warning on stderr is a second line

WORDS = ["man", "woman", "king", "queen", "prince", "apple"]
OUTPUTS = ["out.bin", "out.txt", "out.npy", "vocab.txt", "classes.txt", "phrased.txt", "saved-table.txt"]
FAST = "--epochs 1 --dim 8 --min-count 1 --threads 1 -q"
TRAIN = f"train corpus.txt -o out.bin {FAST}"  # a later flag wins over the same one here
HAS_DEV_FULL = os.path.exists("/dev/full")  # writes to it fail with ENOSPC, even for root


def npy_bytes(header: str, body: bytes = bytes(240)) -> bytes:
    """An ``.npy`` file (format 1.0) with the header dict ``header``, as written, and ``body``."""
    text = header.encode("latin1")
    text += b" " * (-(10 + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + body


BAD_NPY = {  # name: a damaged header; every one with a .vocab.txt of 6 words beside it
    "deep": "[" * 300,
    "huge": "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 99999999999999999999999), }",
    "garbled": "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 10), }\x00",
}


NONFINITE_TEXT = "6 3\nman 1 0 0\nwoman nan 1 0\nking 1 0 1\nqueen 0 1 inf\nprince 1e39 0.2 1\napple 0 0 -1\n"
NONFINITE = "nonfinite.txt: 3 vectors hold NaN or infinite values (the first: 'woman', word 2)"  # 1e39: past float32
CRAFTED_FASTTEXT = {  # fastText models with settings out of bounds
    "maxn.bin": {"maxn": 2**31 - 1},  # was a loop of maxn steps, memory growing
    "bucket0.bin": {"bucket": 0},  # n-grams hashed modulo 0
    "buckets-past.bin": {"bucket": 100, "rows": 6},  # buckets past the matrix's end
}


def permissions_enforced() -> bool:
    """Whether this process is refused a file it may not read: not as root, unless run
    without its capabilities, e.g. ``setpriv --bounding-set=-dac_override,-dac_read_search``."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe"
        probe.write_bytes(b"")
        probe.chmod(0)
        try:
            probe.open("rb").close()
        except PermissionError:
            return True
        return False


NO_PERMISSIONS = pytest.mark.skipif(not permissions_enforced(), reason="file permissions are not enforced (root)")


@pytest.fixture
def ws(tmp_path, tiny_corpus, monkeypatch) -> Path:
    """A working folder holding good and bad inputs, and an old version of every output."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_bytes(tiny_corpus.read_bytes())
    os.link(tmp_path / "corpus.txt", tmp_path / "linked-corpus.txt")  # the corpus by another name
    (tmp_path / "held.txt").write_bytes(tiny_corpus.read_bytes()[:2000])
    (tmp_path / "empty.txt").write_bytes(b" \n\n")
    (tmp_path / "nofiles").mkdir()
    (tmp_path / "somedir").mkdir()
    (tmp_path / "somedir" / "a.txt").write_text("a b\n")
    matrix = np.random.default_rng(0).normal(size=(len(WORDS), 10)).astype(np.float32)
    Vectors(WORDS, matrix).save(tmp_path / "vecs.bin", binary=True)
    Vectors(WORDS, matrix).save(tmp_path / "vecs.txt", binary=False)
    np.save(tmp_path / "lone.npy", matrix)  # no lone.vocab.txt beside it
    (tmp_path / "fake.npy").write_text("not numpy\n")
    np.save(tmp_path / "strings.npy", np.full((len(WORDS), 10), "abc"))
    for name, header in {**BAD_NPY, "strings": None}.items():
        if header is not None:
            (tmp_path / f"{name}.npy").write_bytes(npy_bytes(header))
        (tmp_path / f"{name}.vocab.txt").write_text("".join(f"{w}\n" for w in WORDS))
    (tmp_path / "nonfinite.txt").write_text(NONFINITE_TEXT)
    for name, settings in CRAFTED_FASTTEXT.items():
        (tmp_path / name).write_bytes(fasttext_bin([b"the", b"cat"], **settings))
    (tmp_path / "spaced.bin").write_bytes(fasttext_bin([b"the", b"c t"]))  # fastText ends words at whitespace
    np.save(tmp_path / "tabbed.npy", matrix[:2])
    (tmp_path / "tabbed.vocab.txt").write_text("man\nnew\tyork\n")  # an .npy's words, one a line, may hold tabs
    (tmp_path / "pruned.txt").write_text("a b c\n")  # --prune-at 2 prunes all three
    (tmp_path / "twice-vocab.txt").write_text("the 9\nman 5\nking 4\nqueen 3\nking 2\n")
    (tmp_path / "huge-vocab.txt").write_text("the 9223372036854775808\n")  # past int64
    (tmp_path / "wrapping-vocab.txt").write_text("the 5000000000000000000\nman 5000000000000000000\n")  # int64 each
    (tmp_path / "linked-ck").mkdir()  # checkpoint folders with something else where the lock file goes
    os.symlink(os.path.join("..", "corpus.txt"), tmp_path / "linked-ck" / ".lock")
    (tmp_path / "folder-ck" / ".lock").mkdir(parents=True)
    (tmp_path / "notvectors.txt").write_text("these words are no vectors\n")
    (tmp_path / "notvocab.txt").write_text("the cat sat\n")
    (tmp_path / "questions.txt").write_text(": royals\nman woman king queen\n")
    (tmp_path / "pairs.txt").write_text("man woman 5.0\nking queen 7.5\n")
    (tmp_path / "strangers.txt").write_text("foo bar 1.0\nbaz qux 2.0\n")
    (tmp_path / "syntax.toml").write_text("dim = = 3\n")
    (tmp_path / "unknown.toml").write_text("dim = 8\nflavour = 'x'\n")
    (tmp_path / "list.toml").write_text("dim = [8, 16]\n")
    (tmp_path / "text-dim.toml").write_text("dim = 'big'\n")
    (tmp_path / "zero-dim.toml").write_text("[train]\ndim = 0\n")
    (tmp_path / "float-dim.toml").write_text("dim = 10.5\n")
    (tmp_path / "true-dim.toml").write_text("dim = true\n")
    (tmp_path / "number-hs.toml").write_text("hs = 1\n")
    (tmp_path / "latin1.toml").write_bytes("# café\ndim = 8\n".encode("latin1"))
    (tmp_path / "deep.toml").write_text("dim = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "many-epochs.toml").write_text("epochs = 20000\n")
    PhraseTable([{(b"the", b"cat"): 150.0}]).save(str(tmp_path / "table.txt"))
    (tmp_path / "damaged-table.txt").write_bytes((tmp_path / "table.txt").read_bytes() + b"1 the dog\n")
    (tmp_path / "blocked.npy").write_bytes(b"old blocked.npy\n")
    (tmp_path / "blocked.vocab.txt").mkdir()  # convert's .npy export cannot write its vocabulary
    for name in OUTPUTS:
        (tmp_path / name).write_bytes(f"old {name}\n".encode())
    return tmp_path


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes() for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("command", ["vocab", "phrases", "classes"])
def test_ctrl_c_is_one_line(ws, monkeypatch, command, run_w2v):
    """Not click's empty line before it: every command stops as train does."""
    import w2v.corpus.counting
    import w2v.corpus.phrases
    import w2v.vectors.classes

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    for module, name in (  # the work of each command, called through its module
        (w2v.corpus.counting, "counted"),
        (w2v.corpus.phrases, "pieces_of_sources"),
        (w2v.vectors.classes, "kmeans_plus_plus"),
    ):
        monkeypatch.setattr(module, name, interrupted)
    argv = {"vocab": ["vocab", "corpus.txt", "-o", "v.txt"], "phrases": ["phrases", "corpus.txt", "-o", "p.txt"],
            "classes": ["classes", "-v", "vecs.txt", "-k", "2", "-o", "c.txt"]}[command]  # fmt: skip
    assert run_w2v(*argv)[::2] == (130, "w2v: error: interrupted\n")


# A program that presses Ctrl-C (SIGINT to itself) as the import of module ``sys.argv[1]``
# starts, then runs ``w2v vocab corpus.txt -o v.txt`` as the lines added after it do.
INTERRUPTING_AN_IMPORT = """
import os, signal, sys

class CtrlC:
    def __init__(self, module):
        self.module = module

    def find_spec(self, name, path, target=None):
        if name == self.module:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)

sys.meta_path.insert(0, CtrlC(sys.argv[1]))
sys.argv = ["w2v", "vocab", "corpus.txt", "-o", "v.txt"]
"""


def console_script() -> str:
    """What the ``w2v`` script that pip generates from pyproject.toml's entry point runs."""
    module, function = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["w2v"].split(":")
    return f"from {module} import {function}\nsys.exit({function}())\n"


RUNNERS = {"w2v": console_script(), "python -m w2v": "import runpy; runpy.run_module('w2v', run_name='__main__')\n"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, runner",
    [
        ("click", "w2v"),
        ("numpy", "w2v"),
        ("w2v.config", "w2v"),
        ("w2v.cli.training", "w2v"),
        ("numpy", "python -m w2v"),
    ],
)
def test_ctrl_c_while_the_command_imports_is_one_line(ws, module, runner):
    """The first quarter of a second of a command is its imports (numpy, click, the
    commands): Ctrl-C there is the same line and exit code as in a command."""
    before = snapshot(ws)
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTING_AN_IMPORT + RUNNERS[runner], module],
        capture_output=True,
        preexec_fn=ctrl_c_by_default,
        timeout=300,
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, b"", b"w2v: error: interrupted\n")
    assert snapshot(ws) == before


def assert_one_error_line(code, out, err, expected_code, culprit):
    assert "Traceback" not in err, err
    assert code == expected_code, err
    err = without_progress(err)  # the lines of the steps done before the mistake was met
    assert err.startswith("w2v: error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert culprit.lower() in err.lower(), err
    assert out == ""


# (command line, exit code, a fragment of the message that names the culprit)
CASES = {
    "train": [
        ("train missing.txt -o out.bin", 1, "missing.txt"),
        ("train missing.txt other.txt -o out.bin", 1, "corpus not found: missing.txt\n"),  # file names, not sentences
        (f"train '' -o out.bin {FAST}", 1, "empty corpus path"),
        (f"train nofiles -o out.bin {FAST}", 1, "nofiles"),
        (f"train empty.txt -o out.bin {FAST}", 1, "corpus is empty"),
        (f"train -o out.bin {FAST}", 2, "corpus"),
        (f"train corpus.txt -o somedir {FAST}", 1, "somedir"),
        (f"train corpus.txt -o nowhere/v.bin {FAST}", 1, "nowhere"),
        (f"train corpus.txt -o '' {FAST}", 1, "empty output path"),
        (f"{TRAIN} --save-vocab somedir", 2, "--save-vocab"),
        (f"{TRAIN} --save-vocab nowhere/vocab.txt", 1, "nowhere"),
        (f"{TRAIN} --read-vocab missing-vocab.txt", 1, "missing-vocab.txt"),
        (f"{TRAIN} --read-vocab somedir", 2, "--read-vocab"),
        (f"{TRAIN} --read-vocab notvocab.txt", 1, "notvocab.txt"),
        (f"{TRAIN} --save-vocab out.bin", 2, "-o and --save-vocab name the same file"),
        (f"train corpus.txt -o corpus.txt {FAST}", 2, "-o names the file CORPUS reads, which it would replace"),
        (f"train corpus.txt -o linked-corpus.txt {FAST}", 2, "-o names the file CORPUS reads"),
        (f"train somedir corpus.txt -o v.bin --report corpus.txt {FAST}", 2, "--report names the file CORPUS reads"),
        (f"train corpus.txt -o held.txt --heldout held.txt {FAST}", 2, "-o names the file --heldout reads"),
        (f"{TRAIN} --report held.txt --heldout held.txt", 2, "--report names the file --heldout reads"),
        (f"{TRAIN} --save-vocab held.txt --heldout held.txt", 2, "--save-vocab names the file --heldout reads"),
        (f"train corpus.txt -o notvocab.txt --read-vocab notvocab.txt {FAST}", 2, "-o names the file --read-vocab"),
        (f"{TRAIN} --report notvocab.txt --read-vocab notvocab.txt", 2, "--report names the file --read-vocab"),
        (
            f"train corpus.txt -o m.npz --init-model m.npz {FAST}",
            2,
            "-o names the file --init-model reads, which it would replace: m.npz",
        ),
        (f"{TRAIN} --save-model m.npz --init-model m.npz", 2, "--save-model names the file --init-model reads"),
        (f"{TRAIN} --classes 2 --classes-output ./out.bin", 2, "-o and --classes-output"),
        (f"{TRAIN} --save-model vocab.txt --save-vocab vocab.txt", 2, "--save-vocab and --save-model"),
        (f"{TRAIN} --cbow-sum", 2, "--cbow-sum: no effect with --model skipgram"),
        (f"{TRAIN} --checkpoint-every 5", 2, "--checkpoint-every needs --checkpoint"),
        (f"{TRAIN} --checkpoint corpus.txt", 2, "--checkpoint"),
        (f"{TRAIN} --update-vocab", 1, "update_vocab needs init_model"),
        (f"{TRAIN} --nce 5 --negative 5", 1, "--negative and --nce exclude each other"),
        (f"{TRAIN} --softmax --sampled-softmax 5", 1, "exclude each other"),
        (f"{TRAIN} --self-norm 0.1", 1, "--self-norm applies to the full softmax only: add --softmax"),
        (f"{TRAIN} --tree balanced", 1, "--tree applies to hierarchical softmax only: add --hs"),
        (f"{TRAIN} --tree binary --hs", 2, "--tree"),
        (f"{TRAIN} --nce -1", 2, "--nce"),
        (f"{TRAIN} --heldout missing.txt", 1, "missing.txt"),
        (f"{TRAIN} --init-model missing.npz", 1, "model file not found"),
        (f"{TRAIN} --init-model notvectors.txt", 1, "notvectors.txt is no model (w2v's or fastText's) and cannot be"),
        (f"{TRAIN} --init-model somedir", 1, "somedir"),  # a folder: its checkpoint, absent
        (f"{TRAIN} --save-model somedir", 2, "--save-model"),
        (f"{TRAIN} --save-model nowhere/model.npz", 1, "nowhere"),
        (f"{TRAIN} --init-model missing.npz --read-vocab notvocab.txt", 2, "--read-vocab: no effect"),
        (f"{TRAIN} --init-model missing.npz --update-vocab --max-vocab 3", 2, "--max-vocab: no effect"),
        ("train --resume missing -q", 2, "no checkpoint in missing"),
        ("train --resume nofiles -q", 2, "checkpoint"),
        ("train --resume notvectors.txt -q", 2, "not a w2v model file"),
        (f"{TRAIN} --min-count 100000", 1, "min_count"),
        (f"{TRAIN} --negative 0", 1, "nothing to train: --negative 0 and no --hs (give --hs, or --negative N > 0)"),
        (f"{TRAIN} --negative -2", 1, "negative"),
        (f"{TRAIN} --dim 0", 1, "dim"),
        (f"{TRAIN} --dim -5", 1, "dim"),
        (f"{TRAIN} --dim many", 2, "--dim"),
        (f"{TRAIN} --dim 3000000000", 1, "dim"),
        (f"{TRAIN} --window 0", 1, "window"),
        (f"{TRAIN} --window -1", 1, "window"),
        (f"{TRAIN} --window 100000000000000000000", 1, "window"),
        (f"{TRAIN} --window 10001", 1, "window must be at most 10,000, not 10,001: no context reaches past a sentence"),
        (f"{TRAIN} --read-vocab twice-vocab.txt", 1, "twice-vocab.txt: 'king' is listed twice, on lines 3 and 5\n"),
        (f"{TRAIN} --read-vocab huge-vocab.txt", 1, "huge-vocab.txt: line 1: the counts add up to more than 1,152,"),
        (f"{TRAIN} --read-vocab wrapping-vocab.txt", 1, "wrapping-vocab.txt: line 1: the counts add up to more"),
        (f"{TRAIN} --checkpoint linked-ck", 1, "checkpoint folder linked-ck: linked-ck/.lock is a symbolic link, not"),
        (f"{TRAIN} --checkpoint folder-ck", 1, "folder-ck/.lock is a folder, not w2v's lock file: remove it\n"),
        (f"{TRAIN} --epochs 0", 1, "epochs"),
        (f"{TRAIN} --epochs 1000000000000", 1, "epochs"),
        (f"{TRAIN} --epochs 2147483647", 1, "--epochs must be at most 10,000, not 2,147,483,647\n"),
        (
            "train corpus.txt -o out.bin --config many-epochs.toml -q",
            1,
            "--epochs must be at most 10,000, not 20,000\n",
        ),
        (
            f"{TRAIN} -o ck/checkpoint.npz --checkpoint ck",
            2,
            "-o and --checkpoint name the same file: ck/checkpoint.npz\n",
        ),
        (f"{TRAIN} --save-model ck/checkpoint.npz --checkpoint ck/", 2, "--save-model and --checkpoint name the same"),
        (f"{TRAIN} --min-count 0", 1, "min_count"),
        (f"{TRAIN} --max-vocab 0", 1, "max_vocab"),
        (f"{TRAIN} --prune-at 0", 1, "prune_at"),
        (f"{TRAIN} --threads 0", 1, "threads"),
        (f"{TRAIN} --threads 1000000", 1, "threads"),
        (f"{TRAIN} --batch-words 0", 1, "batch_words"),
        (f"{TRAIN} --streams 0", 1, "streams"),
        (f"{TRAIN} --sample -1", 1, "sample"),
        (f"{TRAIN} --sample nan", 1, "sample"),
        (f"{TRAIN} --ns-exponent nan", 1, "ns_exponent"),
        (f"{TRAIN} --ns-exponent inf", 1, "ns_exponent"),
        (f"{TRAIN} --alpha 0", 1, "alpha"),
        (f"{TRAIN} --alpha -0.1", 1, "alpha"),
        (f"{TRAIN} --alpha inf", 1, "alpha"),
        (f"{TRAIN} --alpha 1e38", 1, "--alpha"),  # diverges in the first batch
        (f"{TRAIN} --alpha 0.01 --min-alpha 0.1", 1, "min_alpha"),
        (f"{TRAIN} --min-alpha 0.5", 1, "min_alpha"),  # above the default alpha
        (f"{TRAIN} --seed -1", 1, "seed"),
        (f"{TRAIN} --model glove", 2, "--model"),
        (f"{TRAIN} --format xml", 2, "--format"),
        (f"{TRAIN} --bogus", 2, "--bogus"),
        (f"{TRAIN} --dim", 2, "--dim"),
        (f"{TRAIN} --config missing.toml", 2, "missing.toml"),
        (f"{TRAIN} --config somedir", 2, "--config"),
        (f"{TRAIN} --config ./somedir", 2, "--config"),
        (f"{TRAIN} --config cbow-nss", 2, "no preset named 'cbow-nss'"),
        (f"{TRAIN} --plot out.bin", 2, "-o and --plot name the same file"),
        (f"{TRAIN} --config syntax.toml", 2, "syntax.toml"),
        (f"{TRAIN} --config unknown.toml", 2, "flavour"),
        (f"{TRAIN} --config list.toml", 2, "dim"),
        ("train corpus.txt -o out.bin --config text-dim.toml -q", 2, "'big'"),
        ("train corpus.txt -o out.bin --config zero-dim.toml -q", 1, "dim"),
        (f"{TRAIN} --config float-dim.toml", 2, "setting dim in preset float-dim.toml must be an integer, not 10.5\n"),
        (f"{TRAIN} --config true-dim.toml", 2, "setting dim in preset true-dim.toml must be an integer, not true\n"),
        (f"{TRAIN} --config number-hs.toml", 2, "setting hs in preset number-hs.toml must be true or false, not 1\n"),
        (f"{TRAIN} --config latin1.toml", 2, "preset latin1.toml is not UTF-8 text (byte 0xe9 at offset 5), as TOML"),
        (f"{TRAIN} --config deep.toml", 2, "invalid TOML in preset deep.toml: arrays or tables nested too deeply\n"),
        (f"{TRAIN} --classes -1", 2, "--classes"),
        (f"{TRAIN} --classes 50", 1, "50 classes"),  # more classes than words: found after training
        (f"{TRAIN} --classes 2 --classes-output somedir", 1, "somedir"),
        (f"{TRAIN} --classes 2 --classes-output nowhere/c.txt", 1, "nowhere"),
        (f"{TRAIN} --classes-output c.txt", 2, "--classes-output"),  # without --classes
        (f"{TRAIN} --phrase-threshold 5", 2, "--phrase-threshold"),  # without --phrases
        (f"{TRAIN} --phrase-passes 2", 2, "--phrase-passes"),
        (f"train - -o out.bin {FAST} --phrases", 1, "standard input"),
        (f"{TRAIN} --phrases --phrase-passes 0", 2, "--phrase-passes"),
        (f"{TRAIN} --phrases --phrase-threshold nan", 1, "threshold"),
        (f"train pruned.txt -o out.bin {FAST} --prune-at 2", 1, "every word was pruned while counting"),
    ],
    "analogy": [
        ("analogy man woman -v vecs.bin", 2, "three words"),
        ("analogy man woman king queen -v vecs.bin", 2, "three words"),
        ("analogy man woman king", 1, "vectors.bin"),  # the default file, absent
        ("analogy man woman king -v missing.bin", 1, "missing.bin"),
        ("analogy man woman king -v somedir", 1, "somedir"),
        ("analogy man woman king -v notvectors.txt", 1, "notvectors.txt"),
        ("analogy man woman king -v empty.txt", 1, "empty.txt"),
        ("analogy man woman king -v vecs.bin --format text", 1, "vecs.bin"),
        ("analogy man woman king -v vecs.txt --format binary", 1, "vecs.txt"),
        ("analogy man woman king -v vecs.bin --format xml", 2, "--format"),
        ("analogy man woman king -v vecs.bin --limit 0", 2, "--limit"),
        ("analogy man woman king -v vecs.bin -n 0", 2, "--top"),
        ("analogy man woman king -v vecs.bin --restrict 0", 2, "--restrict"),
        ("analogy man woman king -v vecs.bin --method sum", 2, "--method"),
        ("analogy man woman zebra -v vecs.bin", 1, "zebra"),
        ("analogy man woman king -v vecs.bin --limit 2", 1, "king"),
    ],
    "similar": [
        ("similar zebra -v vecs.bin", 1, "zebra"),
        ("similar king --minus zebra -v vecs.bin", 1, "zebra"),
        ("similar king", 1, "vectors.bin"),
        ("similar king -v missing.bin", 1, "missing.bin"),
        ("similar king -v somedir", 1, "somedir"),
        ("similar king -v notvectors.txt", 1, "notvectors.txt"),
        ("similar king -v fake.npy", 1, "fake.npy"),
        ("similar king -v lone.npy", 1, "lone.vocab.txt"),
        ("similar king -v strings.npy", 1, "strings.npy: the matrix holds <U3 values"),
        *[(f"similar king -v {name}.npy", 1, f"{name}.npy: not a readable .npy matrix") for name in BAD_NPY],
        (
            "similar the -v maxn.bin",
            1,
            "maxn.bin: damaged fastText model (maxn 2147483647: n-grams are 0 to 100 characters long)\n",
        ),
        (
            "similar the -v bucket0.bin",
            1,
            "bucket0.bin: damaged fastText model (bucket 0, where minn 3 and maxn 6 "
            "make n-grams, hashed into buckets)\n",
        ),
        (
            "similar the -v spaced.bin",
            1,
            "spaced.bin: damaged fastText model (word 2, 'c t', holds whitespace, which ends a word)\n",
        ),
        ("similar king -v vecs.bin -n 0", 2, "--top"),
        ("similar king -v vecs.bin --restrict 0", 2, "--restrict"),
        ("similar king -v vecs.bin --limit -1", 2, "--limit"),
    ],
    "eval": [
        ("eval -v vecs.bin --analogies missing.txt", 1, "missing.txt"),
        ("eval -v vecs.bin --similarity missing.txt", 1, "missing.txt"),
        ("eval -v vecs.bin --analogies somedir", 2, "--analogies"),
        ("eval -v vecs.bin --similarity somedir", 2, "--similarity"),
        ("eval -v vecs.bin --analogies empty.txt", 1, "empty.txt"),
        ("eval -v vecs.bin --analogies pairs.txt", 1, "pairs.txt"),
        ("eval -v vecs.bin --similarity questions.txt", 1, "questions.txt"),
        ("eval -v vecs.bin --similarity strangers.txt", 1, "strangers.txt"),
        ("eval -v vecs.bin --analogies questions.txt --similarity missing.txt", 1, "missing.txt"),
        ("eval --analogies questions.txt", 1, "vectors.bin"),
        ("eval -v notvectors.txt --analogies questions.txt", 1, "notvectors.txt"),
        ("eval -v somedir --analogies questions.txt", 1, "somedir"),
        ("eval -v vecs.bin --analogies questions.txt --restrict 0", 2, "--restrict"),
        ("eval -v vecs.bin --analogies questions.txt --method sum", 2, "--method"),
    ],
    "score": [
        ("score", 2, "MODEL"),
        ("score missing.npz corpus.txt", 1, "model file not found"),
        ("score vecs.bin corpus.txt", 1, "vecs.bin"),
        ("score notvectors.txt corpus.txt", 1, "not a w2v model file"),
        ("score somedir corpus.txt", 1, "somedir"),
        ("score missing.npz", 2, "CORPUS"),
        ("score missing.npz corpus.txt --window 0", 2, "--window"),
        ("score missing.npz corpus.txt --window 2147483647", 2, "2147483647 is not in the range 1<=x<=10000"),
        ("score missing.npz corpus.txt --max-pairs 0", 2, "--max-pairs"),
    ],
    "info": [
        ("info", 2, "FILE"),
        ("info missing.bin", 1, "file not found: missing.bin"),
        ("info somedir", 1, "somedir is a folder without a checkpoint (checkpoint.npz)"),
        ("info notvectors.txt", 1, "notvectors.txt: bad header"),
        ("info empty.txt", 1, "empty.txt"),
        ("info out.bin", 1, "out.bin: bad header"),  # an old output: text, not vectors
        ("info lone.npy", 1, "lone.vocab.txt"),
        ("info fake.npy", 1, "fake.npy"),
        ("info strings.npy", 1, "strings.npy"),
        ("info maxn.bin", 1, "maxn.bin: damaged fastText model"),
        ("info buckets-past.bin", 1, "buckets-past.bin: damaged fastText model"),
        ("info vecs.bin --limit 3", 2, "--limit"),
    ],
    "convert": [
        ("convert vecs.bin", 2, "DEST"),
        ("convert vecs.bin vecs.bin", 2, "DEST names the file SOURCE reads, which it would replace: vecs.bin"),
        ("convert vecs.txt ./vecs.txt --to binary", 2, "DEST names the file SOURCE reads"),
        ("convert linked-corpus.txt corpus.txt", 2, "DEST names the file SOURCE reads"),
        ("convert model.npz model.npz --to fasttext", 2, "DEST names the file SOURCE reads"),
        ("convert missing.bin out.txt", 1, "missing.bin"),
        ("convert somedir out.txt", 1, "somedir"),
        ("convert notvectors.txt out.txt", 1, "notvectors.txt"),
        ("convert empty.txt out.txt", 1, "empty.txt"),
        ("convert lone.npy out.txt", 1, "lone.vocab.txt"),
        ("convert vecs.bin somedir", 1, "somedir"),
        ("convert vecs.bin nowhere/out.txt", 1, "nowhere"),
        ("convert vecs.bin ''", 1, "empty output path"),
        ("convert vecs.bin out.txt --to xml", 2, "--to"),
        ("convert vecs.bin out.txt --from xml", 2, "--from"),
        ("convert vecs.bin out.txt --from text", 1, "vecs.bin"),
        ("convert vecs.bin out.txt --limit 0", 2, "--limit"),
        ("convert vecs.bin nowhere/emb --to projector", 1, "nowhere"),
        ("convert vecs.bin blocked.npy", 1, "blocked.vocab.txt"),  # blocked.npy stays as it was
        ("convert strings.npy out.txt", 1, "strings.npy"),
        ("convert nonfinite.txt out.txt", 1, f"{NONFINITE}: remove or fix them to convert the file\n"),
        ("convert nonfinite.txt emb --to projector", 1, f"{NONFINITE}: remove or fix them to convert the file\n"),
        (
            "convert buckets-past.bin out.txt",
            1,
            "buckets-past.bin: damaged fastText model (input matrix of 6 x 2 "
            "values, where its 2 words and 100 buckets make 102 x 2)\n",
        ),
        (
            "convert tabbed.npy out.txt",
            1,
            "cannot write out.txt: word 2, 'new\\x09york', holds whitespace, which ends a word\n",
        ),
        (
            "convert tabbed.npy emb --to projector",
            1,
            "cannot write emb_metadata.tsv: word 2, 'new\\x09york', holds a tab or line break, which ends a word\n",
        ),
    ],
    "vocab": [
        ("vocab -o vocab.txt", 2, "CORPUS"),
        ("vocab missing.txt -o vocab.txt", 1, "missing.txt"),
        ("vocab missing.txt other.txt -o vocab.txt", 1, "corpus not found: missing.txt\n"),
        ("vocab '' -o vocab.txt", 1, "empty corpus path"),
        ("vocab nofiles -o vocab.txt", 1, "nofiles"),
        ("vocab empty.txt -o vocab.txt", 1, "corpus is empty"),
        ("vocab corpus.txt -o somedir", 1, "somedir"),
        ("vocab corpus.txt -o nowhere/vocab.txt", 1, "nowhere"),
        ("vocab corpus.txt -o ''", 1, "empty output path"),
        ("vocab corpus.txt -o vocab.txt --min-count 0", 2, "--min-count"),
        ("vocab corpus.txt -o vocab.txt --min-count 1000", 1, "at least 1,000 times (min_count"),  # no word left
        ("vocab corpus.txt -o vocab.txt --max-vocab 0", 2, "--max-vocab"),
        ("vocab corpus.txt -o vocab.txt --prune-at 0", 2, "--prune-at"),
        ("vocab corpus.txt -o vocab.txt --min-count x", 2, "--min-count"),
        ("vocab pruned.txt -o vocab.txt --min-count 1 --prune-at 2", 1, "raise --prune-at"),
    ],
    "classes": [
        ("classes -v vecs.bin -o classes.txt", 2, "--classes"),
        ("classes vecs.txt -k 3 -o vecs.txt", 2, "-o names the file FILE reads, which it would replace: vecs.txt"),
        ("classes -v vecs.bin -k 3 -o ./vecs.bin", 2, "-o names the file -v reads"),
        ("classes -v vecs.bin -k 0 -o classes.txt", 2, "--classes"),
        ("classes -v vecs.bin -k 50 -o classes.txt", 1, "50 classes"),
        ("classes -v vecs.bin -k 3 --limit 2 -o classes.txt", 1, "3 classes"),
        ("classes -k 2 -o classes.txt", 1, "vectors.bin"),
        ("classes -v missing.bin -k 2 -o classes.txt", 1, "missing.bin"),
        ("classes -v somedir -k 2 -o classes.txt", 1, "somedir"),
        ("classes -v notvectors.txt -k 2 -o classes.txt", 1, "notvectors.txt"),
        ("classes -v vecs.bin -k 2 -o somedir", 1, "somedir"),
        ("classes -v vecs.bin -k 2 -o nowhere/classes.txt", 1, "nowhere"),
        ("classes -v vecs.bin -k 2 -o ''", 1, "empty output path"),
        ("classes -v vecs.bin -k 2 -o classes.txt --iter 0", 2, "--iter"),
        ("classes -v vecs.bin -k 2 -o classes.txt --init random", 2, "--init"),
        ("classes -v vecs.bin -k 2 -o classes.txt --order size", 2, "--order"),
        ("classes -v vecs.bin -k 2 -o classes.txt --seed -1", 1, "seed"),
    ],
    "phrases": [
        ("phrases corpus.txt", 2, "--output"),
        ("phrases -o phrased.txt", 2, "CORPUS"),
        ("phrases missing.txt -o phrased.txt", 1, "missing.txt"),
        ("phrases '' -o phrased.txt", 1, "empty corpus path"),
        ("phrases nofiles -o phrased.txt", 1, "nofiles"),
        ("phrases empty.txt -o phrased.txt", 1, "corpus is empty"),
        ("phrases corpus.txt -o somedir", 1, "somedir"),
        ("phrases corpus.txt -o nowhere/phrased.txt", 1, "nowhere"),
        ("phrases corpus.txt -o ''", 1, "empty output path"),
        ("phrases corpus.txt -o phrased.txt --save-phrases somedir", 2, "--save-phrases"),
        ("phrases corpus.txt -o phrased.txt --save-phrases nowhere/t.txt", 1, "nowhere"),
        ("phrases corpus.txt -o phrased.txt --save-phrases ''", 1, "empty output path"),
        ("phrases corpus.txt -o phrased.txt --apply-phrases missing.txt", 1, "missing.txt"),
        ("phrases corpus.txt -o phrased.txt --apply-phrases somedir", 2, "--apply-phrases"),
        ("phrases corpus.txt -o phrased.txt --apply-phrases corpus.txt", 1, "corpus.txt"),
        ("phrases corpus.txt -o phrased.txt --apply-phrases damaged-table.txt", 1, "damaged-table.txt"),
        ("phrases corpus.txt -o phrased.txt --apply-phrases table.txt --threshold 5", 2, "--threshold"),
        ("phrases corpus.txt -o phrased.txt --apply-phrases table.txt --passes 2", 2, "--passes"),
        ("phrases corpus.txt -o phrased.txt --threshold high", 2, "--threshold"),
        ("phrases corpus.txt -o phrased.txt --threshold nan", 1, "threshold"),
        ("phrases corpus.txt -o phrased.txt --scoring npmi --threshold 2", 2, "--threshold"),
        ("phrases corpus.txt -o phrased.txt --scoring pmi", 2, "--scoring"),
        ("phrases corpus.txt -o phrased.txt --min-count 0", 2, "--min-count"),
        ("phrases corpus.txt -o phrased.txt --passes 0", 2, "--passes"),
        ("phrases corpus.txt -o phrased.txt --prune-at 0", 2, "--prune-at"),
        ("phrases corpus.txt -o phrased.txt --delimiter ''", 1, "delimiter"),
        ("phrases corpus.txt -o phrased.txt --delimiter ' '", 1, "delimiter"),
    ],
    "plot": [
        ("plot -v vecs.bin man woman --top 5", 2, "--top"),
        ("plot -v vecs.bin --top 1", 2, "--top"),
        ("plot -v vecs.bin man woman --limit 0", 2, "--limit"),
        ("plot -v vecs.bin man woman --method mds", 2, "--method"),
        ("plot -v vecs.bin --words-file somedir", 2, "--words-file"),
    ],
    "vector": [
        ("vector zebra -v vecs.bin", 1, "zebra"),
        ("vector king -v missing.bin", 1, "missing.bin"),
        ("vector king -v vecs.bin --limit 0", 2, "--limit"),
    ],
    "similarity": [
        ("similarity king -v vecs.bin", 2, "two words"),
        ("similarity king zebra -v vecs.bin", 1, "zebra"),
        ("similarity king queen -v notvectors.txt", 1, "notvectors.txt"),
    ],
    "word2vec": [
        ("word2vec -train corpus.txt -output out.bin -itre 3", 2, "-itre"),
        ("word2vec -train corpus.txt -output out.bin --size 8", 2, "--size"),
        ("word2vec -train corpus.txt -output out.bin -size 0", 2, "-size"),
        ("word2vec -train corpus.txt -output out.bin -size many", 2, "-size"),
        ("word2vec -train corpus.txt -output out.bin -sample -1", 2, "-sample"),
        ("word2vec -train corpus.txt -output out.bin -negative 0", 2, "-negative"),
        ("word2vec -train corpus.txt -output", 2, "-output"),
        ("word2vec -output out.bin", 2, "-train"),
        ("word2vec -train corpus.txt -output out.bin -save-vocab out.bin", 2, "-save-vocab"),
        ("word2vec -train missing.txt -output out.bin", 1, "missing.txt"),
        ("word2vec -train '' -output out.bin", 1, "empty corpus path"),
        ("word2vec -train corpus.txt -output out.bin -read-vocab missing.txt", 1, "missing.txt"),
        ("word2vec -train corpus.txt -output somedir", 1, "somedir"),
        ("word2vec -train corpus.txt -output ''", 1, "empty output path"),
        ("word2vec -train corpus.txt -save-vocab nowhere/vocab.txt", 1, "nowhere"),
        (
            "word2vec -train corpus.txt -output out.bin -size 8 -min-count 1 -iter 1 -classes 50 -debug 0",
            1,
            "50 classes",
        ),
    ],
    "word2phrase": [
        ("word2phrase -train corpus.txt", 2, "-output"),
        ("word2phrase -train corpus.txt -output phrased.txt -size 3", 2, "-size"),
        ("word2phrase -train corpus.txt -output phrased.txt -min-count 0", 2, "-min-count"),
        ("word2phrase -train corpus.txt -output phrased.txt -threshold high", 2, "-threshold"),
        ("word2phrase -train missing.txt -output phrased.txt", 1, "missing.txt"),
        ("word2phrase -train corpus.txt -output somedir", 1, "somedir"),
    ],
    "distance": [
        ("distance", 2, "FILE"),
        ("distance missing.bin", 1, "missing.bin"),
        ("distance notvectors.txt", 1, "notvectors.txt"),
    ],
    "word-analogy": [
        ("word-analogy missing.bin", 1, "missing.bin"),
        ("word-analogy somedir", 1, "somedir"),
    ],
    "compute-accuracy": [
        ("compute-accuracy missing.bin", 1, "missing.bin"),
        ("compute-accuracy vecs.bin many", 2, "THRESHOLD"),
        ("compute-accuracy vecs.bin -5", 2, "-5"),
    ],
    "w2v": [
        ("frobnicate", 2, "frobnicate"),
        ("--bogus", 2, "--bogus"),
    ],
}
if HAS_DEV_FULL:  # every output, when writing it fails (disk full) after the work is done
    CASES["train"] += [
        (f"train corpus.txt -o /dev/full {FAST}", 1, "/dev/full"),
        (f"{TRAIN} --save-vocab /dev/full", 1, "/dev/full"),
        (f"{TRAIN} --save-model /dev/full", 1, "/dev/full"),
        (f"{TRAIN} --classes 2 --classes-output /dev/full", 1, "/dev/full"),
    ]
    CASES["convert"] += [("convert vecs.bin /dev/full", 1, "/dev/full")]
    CASES["vocab"] += [("vocab corpus.txt -o /dev/full", 1, "/dev/full")]
    CASES["classes"] += [("classes -v vecs.bin -k 2 -o /dev/full", 1, "/dev/full")]
    CASES["phrases"] += [
        ("phrases corpus.txt -o /dev/full", 1, "/dev/full"),
        ("phrases corpus.txt -o phrased.txt --save-phrases /dev/full", 1, "/dev/full"),
    ]

if importlib.util.find_spec("matplotlib"):  # mistakes found after matplotlib is (the plot extra)
    CASES["plot"] += [
        ("plot -v missing.bin man woman", 1, "missing.bin"),
        ("plot -v vecs.bin man woman -o map.xyz", 1, "map.xyz"),
        ("plot -v vecs.bin man woman -o somedir", 1, "somedir"),
        ("plot -v vecs.bin man woman -o nowhere/map.png", 1, "nowhere"),
        ("plot -v vecs.bin man woman --words-file missing.txt", 1, "missing.txt"),
        ("plot -v vecs.bin man nobody", 1, "nobody"),
    ]
    CASES["train"] += [
        (f"{TRAIN} --plot loss.xyz", 1, "loss.xyz"),
        (f"{TRAIN} --plot nowhere/loss.png", 1, "nowhere"),
    ]

PARAMS = [
    pytest.param(line, code, culprit, id=f"{command}: {' '.join(line.replace(TRAIN, '').replace(FAST, '').split())}")
    for command, cases in CASES.items()
    for line, code, culprit in cases
]


@pytest.mark.parametrize(("line", "code", "culprit"), PARAMS)
def test_mistake_gives_one_error_line_and_writes_nothing(ws, line, code, culprit, run_w2v):
    before = snapshot(ws)
    assert_one_error_line(*run_w2v(*shlex.split(line)), code, culprit)
    assert snapshot(ws) == before  # old outputs untouched, nothing new (no temporary file either)


def test_every_command_has_mistake_cases():
    from w2v.cli import cli

    assert set(cli.commands) <= set(CASES)


def test_plain_w2v_prints_the_help_with_exit_2(ws, run_w2v):
    code, out, err = run_w2v()
    assert code == 2 and out == ""
    assert err.startswith("Usage: w2v") and "w2v: error" not in err and "train" in err


def test_an_output_that_is_the_resumed_checkpoint_is_refused(ws, run_w2v):
    """``--resume FOLDER -o FOLDER/checkpoint.npz``: the checkpoint that the run saves after each epoch."""
    assert run_w2v(*shlex.split(f"{TRAIN} --checkpoint ck"))[0] == 0
    before = snapshot(ws)
    code, out, err = run_w2v("train", "--resume", "ck", "-o", "ck/checkpoint.npz", "-q")
    assert (code, out, err) == (2, "", "w2v: error: -o and --resume name the same file: ck/checkpoint.npz\n")
    assert snapshot(ws) == before


def test_failed_training_leaves_save_vocab_untouched(ws, run_w2v):
    before = snapshot(ws)
    code, out, err = run_w2v(*shlex.split(f"{TRAIN} --save-vocab vocab.txt --alpha 1e38"))
    assert_one_error_line(code, out, err, 1, "--alpha")
    assert snapshot(ws) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "code", "culprit"),
    [
        (f"{TRAIN} --config list.toml", 2, "list.toml"),
        (f"{TRAIN} --classes 50", 1, "50 classes"),
        ("convert vecs.bin out.txt --to xml", 2, "--to"),
        ("classes -v vecs.bin -k 2 -o classes.txt --seed -1", 1, "seed"),
    ],
    ids=["preset list", "classes after training", "convert format", "classes seed"],
)
def test_a_real_process_prints_the_same_single_line(ws, cli, line, code, culprit):
    before = snapshot(ws)
    done = cli(*shlex.split(line), cwd=ws)
    assert_one_error_line(done.returncode, done.stdout.decode(), done.stderr.decode(), code, culprit)
    assert snapshot(ws) == before


def run_with_file_size_limit(
    folder: Path, argv: list[str], limit: int, stdout=subprocess.PIPE, **env
) -> subprocess.CompletedProcess:
    """``python -m w2v ARGV`` in ``folder`` with writes past ``limit`` bytes of a file failing
    (RLIMIT_FSIZE; Python ignores SIGXFSZ, so they fail with EFBIG), as on a full disk;
    its standard output goes to ``stdout`` (captured unless given), stderr is captured."""
    return subprocess.run(
        [sys.executable, "-m", "w2v", *argv],
        cwd=folder,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
        timeout=300,
    )


@pytest.mark.slow
def test_a_full_tmpdir_while_encoding_is_one_line(ws):
    """The encoded corpus is written to $TMPDIR (3,280 bytes of ids here): when that fails,
    one line says where and why, and the temporary folder is removed."""
    (ws / "tmp").mkdir()
    before = snapshot(ws)
    done = run_with_file_size_limit(ws, shlex.split(TRAIN), 2000, TMPDIR=str(ws / "tmp"))
    err = done.stderr.decode()
    assert_one_error_line(done.returncode, done.stdout.decode(), err, 1, "cannot write the encoded corpus in")
    assert f"in {ws / 'tmp' / 'w2v-'}" in err and err.endswith(" ($TMPDIR): File too large\n")
    assert snapshot(ws) == before


@pytest.mark.slow
def test_a_full_disk_names_the_file_that_failed(ws):
    """``convert vecs.bin full/x.npy`` on a full disk names x.npy and the reason (the 368-byte
    matrix fails at 200 bytes; its 40-byte vocabulary would not)."""
    (ws / "full").mkdir()
    before = snapshot(ws)
    done = run_with_file_size_limit(ws, ["convert", "vecs.bin", "full/x.npy"], 200)
    err = done.stderr.decode()
    assert_one_error_line(done.returncode, done.stdout.decode(), err, 1, "cannot write full/x.npy: File too large")
    assert snapshot(ws) == before


STDOUT_COMMANDS = [  # each writes more than 40 bytes to standard output
    "convert vecs.bin -",
    "classes -v vecs.bin -k 2 -o -",
    "vector man woman -v vecs.bin",
    "similar man -v vecs.bin",
]


@pytest.mark.slow
@pytest.mark.parametrize("unbuffered", [True, False], ids=["PYTHONUNBUFFERED", "buffered"])
@pytest.mark.parametrize("line", STDOUT_COMMANDS)
def test_standard_output_cut_short_is_one_line(ws, line, unbuffered):
    """``w2v convert vecs.bin - > file`` where the file may hold 40 bytes (a file size limit,
    as on a full disk): unbuffered, the write cut short returned its count, which nothing
    read, and convert exited 0 with 40 bytes of its output written; buffered, and for the
    lines click prints, the failure was an OSError traceback."""
    env = {"PYTHONUNBUFFERED": "1" if unbuffered else ""}  # empty: unset, as Python reads it
    with open(ws / "stdout", "wb") as stdout:
        done = run_with_file_size_limit(ws, shlex.split(line), 40, stdout=stdout, **env)
    assert (done.returncode, without_progress(done.stderr.decode())) == (
        1,
        "w2v: error: cannot write standard output: File too large\n",
    )


@pytest.mark.slow
@pytest.mark.skipif(not HAS_DEV_FULL, reason="no /dev/full")
def test_training_to_a_full_standard_output_is_one_line(ws):
    """``w2v train corpus.txt -o - > /dev/full`` was an OSError traceback."""
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "w2v", *shlex.split(f"train corpus.txt -o - {FAST}")],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    message = "w2v: error: cannot write standard output: No space left on device\n"
    assert (done.returncode, done.stderr.decode()) == (1, message)


def run_without_stream(folder: Path, argv: list[str], fd: int) -> subprocess.CompletedProcess:
    """``python -m w2v ARGV`` in ``folder`` started with the descriptor ``fd`` closed (``0<&-``,
    ``1>&-``); standard output and error captured where open, standard input empty."""
    return subprocess.run(
        [sys.executable, "-m", "w2v", *argv],
        cwd=folder,
        input=b"",
        capture_output=True,
        preexec_fn=lambda: os.close(fd),
        timeout=300,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "fd", "message"),
    [
        ("convert vecs.bin -", 1, "cannot write standard output: it is closed"),
        ("similar man -v vecs.bin", 1, "cannot write standard output: it is closed"),  # was exit 0, nothing written
        ("--version", 1, "cannot write standard output: it is closed"),
        ("similar -v vecs.bin", 0, "cannot read standard input: it is closed"),
        (f"train - -o out.bin {FAST}", 0, "cannot read standard input: it is closed"),
        ("vocab - -o vocab.txt -q", 0, "cannot read standard input: it is closed"),
    ],
    ids=["convert >&-", "similar >&-", "version >&-", "similar <&-", "train - <&-", "vocab - <&-"],
)
def test_a_closed_standard_stream_is_one_line(ws, line, fd, message):
    """A stream the command was started without, where it uses it: one line, not
    ``AttributeError: 'NoneType' object has no attribute 'buffer'``; nothing written."""
    before = snapshot(ws)
    done = run_without_stream(ws, shlex.split(line), fd)
    assert (done.returncode, done.stderr.decode()) == (1, f"w2v: error: {message}\n")
    assert snapshot(ws) == before


@pytest.mark.slow
@pytest.mark.parametrize("fd", [0, 1], ids=["<&-", ">&-"])
def test_a_closed_standard_stream_that_is_not_used_is_no_error(ws, fd):
    done = run_without_stream(ws, ["convert", "vecs.bin", "out.txt"], fd)
    assert (done.returncode, done.stderr.decode()) == (0, "w2v: wrote 6 vectors of 10 values to out.txt (text)\n")
    assert (ws / "out.txt").read_text().startswith("6 10\nman ")


def test_a_model_files_word_holding_whitespace_is_refused(ws, run_w2v):
    """w2v never writes such a word (a corpus' words end at whitespace): a model file that
    holds one is damaged, and every file written from it would read back other words."""
    assert run_w2v(*shlex.split(f"{TRAIN} --save-model model.npz"))[0] == 0
    with np.load(ws / "model.npz") as archive:
        arrays = dict(archive)
    raw = arrays["vocab_words"].tobytes()
    arrays["vocab_words"] = np.frombuffer(raw.replace(b"dog", b"d\tg", 1), dtype=np.uint8)  # offsets unchanged
    np.savez(ws / "model.npz", **arrays)
    number = 1 + [raw[a:b] for a, b in pairwise(arrays["vocab_offsets"].tolist())].index(b"dog")
    before = snapshot(ws)
    for line in ("similar cat -v model.npz", "convert model.npz out.txt", "convert model.npz emb --to projector",
                 f"{TRAIN} --init-model model.npz"):  # fmt: skip
        culprit = f"model.npz: damaged model file (word {number}, 'd\\x09g', holds whitespace, which ends a word)\n"
        assert_one_error_line(*run_w2v(*shlex.split(line)), 1, culprit)
    assert snapshot(ws) == before


QUERIES = {  # a query on nonfinite.txt: what it prints of the vectors left
    "similar": ("similar king -v nonfinite.txt", "man\t0.7071\napple\t-0.7071\n"),
    "analogy": ("analogy king man apple -v nonfinite.txt", ""),  # no word is left to answer
    "similarity": ("similarity king apple -v nonfinite.txt", "-0.7071\n"),
    "eval": ("eval -v nonfinite.txt --analogies questions.txt --json", '"skipped": 1'),  # woman, queen: unknown
    "classes": ("classes -v nonfinite.txt -k 3 -o classes.txt -q", ""),
}


@pytest.mark.parametrize(("line", "printed"), QUERIES.values(), ids=QUERIES)
def test_nonfinite_vectors_are_left_out_of_queries_with_one_warning(ws, line, printed, run_w2v):
    """NaN and infinite values (1e39 reads as infinite in float32) answered every query
    with nan, with numpy's RuntimeWarnings on stderr."""
    code, out, err = run_w2v(*shlex.split(line))
    assert code == 0 and err == f"w2v: warning: {NONFINITE}; left out of the queries\n"
    assert printed in out and "nan" not in out
    if line.startswith("classes"):
        assert [row.split()[0] for row in (ws / "classes.txt").read_text().splitlines()] == ["man", "king", "apple"]


def test_a_model_files_nan_vector_is_left_out_of_queries_and_not_converted(ws, run_w2v):
    assert run_w2v(*shlex.split(f"{TRAIN} --save-model model.npz"))[0] == 0
    with np.load(ws / "model.npz") as archive:
        arrays = dict(archive)
    raw, offsets = arrays["vocab_words"].tobytes(), arrays["vocab_offsets"].tolist()
    row = [raw[a:b] for a, b in pairwise(offsets)].index(b"dog")
    arrays["syn0"][row, 3] = np.nan
    np.savez(ws / "model.npz", **arrays)
    note = f"model.npz: 1 vector holds NaN or infinite values (the first: 'dog', word {row + 1})"
    code, out, err = run_w2v("similar", "cat", "-v", "model.npz")
    assert code == 0 and err == f"w2v: warning: {note}; left out of the queries\n"
    assert "dog" not in out and "nan" not in out and len(out.splitlines()) == 10
    before = snapshot(ws)
    converted = run_w2v("convert", "model.npz", "out.txt")
    assert_one_error_line(*converted, 1, f"{note}: remove or fix them to convert the file\n")
    assert snapshot(ws) == before


def test_a_resumed_runs_outputs_are_named_with_control_characters_escaped(ws, run_w2v):
    """A checkpoint names the outputs its run writes; one made elsewhere can hold any bytes
    there, and the line naming them must not drive the terminal."""
    assert run_w2v(*shlex.split(f"{TRAIN} --checkpoint ck"))[0] == 0
    path = ws / "ck" / "checkpoint.npz"
    with np.load(path) as archive:
        arrays = dict(archive)
    meta = json.loads(arrays["meta"].tobytes())
    meta["notes"]["command"]["output"] = str(ws / "out\x1b]0;pwned\x07.bin")
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    code, _, err = run_w2v("train", "--resume", "ck", "-q")
    assert code == 0 and err.startswith("w2v: resuming ck; writing -o ") and "out\\x1b]0;pwned\\x07.bin" in err
    assert "\x1b" not in err and "\x07" not in err


URLS = {"s3://bucket/corpus.txt": "s3", "https://example.com/c.txt": "http", "gs://b/c.txt": "gcs"}
URLS |= {"azure://c/c.txt": "azure", "sftp://host/c.txt": "ssh", "webhdfs://host/c.txt": "http"}
URL_COMMANDS = [f"train {{url}} -o out.bin {FAST}", "vocab {url} -o vocab.txt", "similar king -v {url}"]


def missing_transport(scheme: str) -> ImportError:
    """What smart_open raises for a URL whose transport's packages are not installed."""
    return ImportError(
        f"You are trying to use the {scheme} functionality of smart_open\nbut you do not have the correct "
        f"{scheme} dependencies installed. Try:\n\n    pip install smart_open[{scheme}]\n\n"
    )


@pytest.mark.parametrize("command", URL_COMMANDS)
@pytest.mark.parametrize(("url", "extra"), URLS.items())
def test_a_url_whose_transport_is_not_installed(ws, monkeypatch, url, extra, command, run_w2v):
    """One line naming the extra to install, not smart_open's five (no URL is fetched)."""
    smart_open = pytest.importorskip("smart_open")

    def without_transport(uri, *args, **kwargs):
        raise missing_transport(extra)

    monkeypatch.setattr(smart_open, "open", without_transport)
    before = snapshot(ws)
    line = f"reading {url.split(':')[0]}:// URLs needs smart_open's {extra} support: pip install 'w2v[{extra}]'"
    assert_one_error_line(*run_w2v(*shlex.split(command.format(url=url))), 1, line)
    assert snapshot(ws) == before


def test_smart_open_raises_import_error_for_a_missing_transport(ws, monkeypatch, run_w2v):
    """The assumption above, on the installed smart_open: a transport registered as missing
    its packages (as smart_open registers one whose imports fail) raises ImportError."""
    transport = pytest.importorskip("smart_open.transport")
    if not hasattr(transport, "_ERRORS") or "s3" not in transport._REGISTRY:
        pytest.skip("this smart_open keeps its transports otherwise")
    monkeypatch.delitem(transport._REGISTRY, "s3")
    monkeypatch.setitem(transport._ERRORS, "s3", "s3")
    line = "reading s3:// URLs needs smart_open's s3 support: pip install 'w2v[s3]'"
    assert_one_error_line(*run_w2v("similar", "king", "-v", "s3://bucket/v.bin"), 1, line)


# ---- permissions: root ignores them, so these are skipped as root -----------------------

UNWRITABLE = [
    f"train corpus.txt -o {{out}} {FAST}",
    f"{TRAIN} --save-vocab {{out}}",
    f"{TRAIN} --save-model {{out}}",
    f"{TRAIN} --classes 2 --classes-output {{out}}",
    "convert vecs.bin {out}",
    "convert vecs.bin {out}.npy",
    "vocab corpus.txt -o {out}",
    "classes -v vecs.bin -k 2 -o {out}",
    "phrases corpus.txt -o {out}",
    "phrases corpus.txt -o phrased.txt --save-phrases {out}",
]


@NO_PERMISSIONS
@pytest.mark.parametrize("where", ["read-only folder", "read-only file"])
@pytest.mark.parametrize("template", UNWRITABLE)
def test_unwritable_output(ws, template, where, run_w2v):
    locked = ws / "locked"
    locked.mkdir()
    out = locked / "result"
    if where == "read-only file":
        out.write_bytes(b"old result\n")
        out.chmod(0o444)
        if template.endswith(".npy"):
            out = locked / "result.npy"
            out.write_bytes(b"old result\n")
            out.chmod(0o444)
    else:
        locked.chmod(0o555)
    try:
        before = snapshot(ws)
        line = template.format(out=os.path.relpath(locked / "result", ws))
        assert_one_error_line(*run_w2v(*shlex.split(line)), 1, "locked/result")
        assert snapshot(ws) == before
    finally:
        locked.chmod(0o755)


@NO_PERMISSIONS
@pytest.mark.parametrize("folder", ["locked", "locked/ck"])
def test_unwritable_checkpoint_folder(ws, folder, run_w2v):
    locked = ws / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        before = snapshot(ws)
        assert_one_error_line(*run_w2v(*shlex.split(f"{TRAIN} --checkpoint {folder}")), 1, folder)
        assert snapshot(ws) == before
    finally:
        locked.chmod(0o755)


@NO_PERMISSIONS
@pytest.mark.parametrize(
    ("line", "code"),  # 2: click checks the options of type click.Path
    [
        (f"train secret -o out.bin {FAST}", 1),
        (f"{TRAIN} --config ./secret", 2),
        (f"{TRAIN} --read-vocab secret", 2),
        ("similar king -v secret", 1),
        ("convert secret out.txt", 1),
        ("eval -v vecs.bin --analogies secret", 2),
        ("vocab secret -o vocab.txt", 1),
        ("classes -v secret -k 2 -o classes.txt", 1),
        ("phrases secret -o phrased.txt", 1),
        ("phrases corpus.txt -o phrased.txt --apply-phrases secret", 2),
    ],
)
def test_unreadable_input(ws, line, code, run_w2v):
    secret = ws / "secret"
    secret.write_bytes((ws / "vecs.txt").read_bytes())
    before = snapshot(ws)
    secret.chmod(0)
    try:
        result = run_w2v(*shlex.split(line))
    finally:
        secret.chmod(0o644)
    assert_one_error_line(*result, code, "secret")
    assert snapshot(ws) == before


# other tools' habits: (command line, the exact error line), each exit 2
HABITS = [
    (f"{TRAIN} --workers 2", "--workers is gensim's name: use --threads"),
    (f"{TRAIN} --sg 1", "--sg is gensim's name: use --model skipgram (sg=1) or --model cbow (sg=0)"),
    (f"{TRAIN} --vector_size 50", "--vector_size is gensim's name: use --dim"),
    (f"{TRAIN} --vector-size=50", "--vector-size is gensim's name: use --dim"),
    (f"{TRAIN} --max-final-vocab 9", "--max-final-vocab is gensim's name: use --max-vocab"),
    (
        f"{TRAIN} --hs 1",
        "--hs takes no value: give --hs alone to turn it on; leave it out (or give --no-hs) for word2vec.c's -hs 0",
    ),
    (
        "train 1 --hs 0",
        "--hs takes no value: give --hs alone to turn it on; leave it out (or give --no-hs) for word2vec.c's -hs 0",
    ),
    (
        f"{TRAIN} --model cbow --cbow-sum 1",
        "--cbow-sum takes no value: give --cbow-sum alone to turn it on; leave it out to keep it off",
    ),
    ("similar -v vecs.bin man -topn 3", "no option -topn: use --top"),
    (f"{TRAIN} -epoch 10", "-epoch is fastText's name: use --epochs"),
    (f"{TRAIN} -lr 0.1", "-lr is fastText's name: use --alpha"),
    (f"{TRAIN} -ws 3", "-ws is fastText's name: use --window"),
    (f"{TRAIN} -minCount 1", "-minCount is fastText's name: use --min-count"),
    (f"{TRAIN} -thread 4", "-thread is fastText's name: use --threads"),
    ("train -input c.txt", "-input is fastText's name: use the corpus as an argument: w2v train FILE"),
    (
        "train c.txt -output 1",  # click would read -o utput, and 1 as a corpus file
        "-output is fastText's and word2vec.c's name: use -o FILE (and --save-fasttext FILE.bin for fastText's model)",
    ),
    (f"{TRAIN} --lr 0.1", "--lr is fastText's name: use --alpha"),
    (f"{TRAIN} --ws=3", "--ws is fastText's name: use --window"),
    (
        f"{TRAIN} --loss hs",
        "--loss is fastText's name: use --hs (-loss hs), --negative N (-loss ns) or --softmax (-loss softmax)",
    ),
    ("similar -v vecs.bin man -k 3", "-k is fastText's name: use --top"),
    (
        "train -train c.txt -output v.bin -cbow 1",  # word2vec.c's command line: pointed to w2v word2vec
        "No such option '-t'. (-train is a word2vec.c flag: 'w2v word2vec -train FILE -output FILE ...' takes "
        "its command lines)",
    ),
    ("analogy -v vecs.bin king man woman -top 3", "no option -top: use --top"),
    ("distance", "give the vectors file: FILE or -v FILE"),
    ("distance vecs.bin -v vecs.txt", "two vectors files given: vecs.bin and -v vecs.txt"),
    ("eval vecs.bin -v vecs.txt", "two vectors files given: vecs.bin and -v vecs.txt"),
    ("compute-accuracy -v vecs.bin 3 4", "got unexpected extra argument (4)"),
]


@pytest.mark.parametrize(("line", "message"), HABITS)
def test_another_tools_habit_gets_w2vs_spelling(ws, line, message, run_w2v):
    """gensim's flag names, a value after a flag that takes none, a single-dash long
    name, two vectors files: one line naming what w2v takes, exit 2, whether or not a
    file named like the stray value exists (``1`` here)."""
    (ws / "1").write_text("a b c\n")
    before = snapshot(ws)
    code, out, err = run_w2v(*shlex.split(line))
    assert (code, out, err) == (2, "", f"w2v: error: {message}\n")
    assert snapshot(ws) == before


@pytest.mark.parametrize(
    "line",
    ["distance vecs.bin", "distance -v vecs.bin", "word-analogy -v vecs.bin", "word-analogy vecs.bin"],
)
def test_the_c_tools_take_the_vectors_file_either_way(ws, monkeypatch, line, run_w2v):
    monkeypatch.setattr(sys, "stdin", Stdin("man\nEXIT\n"))
    code, out, err = run_w2v(*shlex.split(line))
    assert (code, err) == (0, "") and out.startswith("Enter ")


def test_compute_accuracy_and_eval_take_the_vectors_file_either_way(ws, monkeypatch, run_w2v):
    outputs = []
    for line in ("compute-accuracy vecs.bin 3", "compute-accuracy -v vecs.bin 3", "compute-accuracy -v vecs.bin"):
        monkeypatch.setattr(sys, "stdin", Stdin(": royals\nman woman king queen\n"))
        code, out, err = run_w2v(*shlex.split(line))
        assert (code, err) == (0, "")
        outputs.append(out)
    assert outputs[0] == outputs[1] and "Questions seen / total: 0 1" in outputs[0]
    assert "Questions seen / total: 1 1" in outputs[2]  # no THRESHOLD: every word read
    evals = [run_w2v("eval", *args, "--analogies", "questions.txt") for args in (["vecs.bin"], ["-v", "vecs.bin"])]
    assert evals[0] == evals[1] and evals[0][0] == 0 and "analogy accuracy" in evals[0][1]


def test_compute_accuracy_says_what_it_waits_for_on_a_terminal(ws, monkeypatch, run_w2v):
    monkeypatch.setattr(sys, "stdin", Stdin(": royals\nman woman king queen\n", terminal=True))
    code, _, err = run_w2v("compute-accuracy", "vecs.bin")
    assert code == 0
    assert (
        err
        == "w2v: reading analogy questions from standard input (': section' and 'a b c d' lines; Ctrl-D ends them)\n"
    )


VECTORS_NOT_MODEL = (
    "not a w2v model: vectors files have no output weights to train, score or write to fastText; "
    "keep a model with 'w2v train ... --save-model FILE'"
)


@pytest.mark.parametrize(
    ("line", "code", "message"),
    [
        ("score vecs.bin corpus.txt", 1, f"vecs.bin holds word2vec vectors, {VECTORS_NOT_MODEL}"),
        ("score glove.txt corpus.txt", 1, f"glove.txt holds GloVe vectors, {VECTORS_NOT_MODEL}"),
        ("score corpus.txt corpus.txt", 1, "corpus.txt is not a w2v model file or is damaged (File is not a zip file)"),
        ("train corpus.txt --resume nockpt", 2, "Invalid value for --resume: no checkpoint in nockpt"),
    ],
)
def test_a_file_given_where_a_model_is_needed_is_named(ws, line, code, message, run_w2v):
    (ws / "glove.txt").write_text("man 0.1 0.2 0.3\nwoman 0.3 0.2 0.1\n")
    before = snapshot(ws)
    assert run_w2v(*shlex.split(line)) == (code, "", f"w2v: error: {message}\n")
    assert snapshot(ws) == before


def test_a_missing_heldout_file_is_named_before_the_corpus_is_read(ws, run_w2v):
    code, out, err = run_w2v(*shlex.split(f"{TRAIN} --heldout missing.txt"))
    assert (code, out, err) == (1, "", "w2v: error: held-out corpus not found: missing.txt\n")

    def unread():
        raise AssertionError("the corpus was read")
        yield

    with pytest.raises(CorpusError, match=r"^held-out corpus folder has no files: nofiles$"):
        w2v.train(unread(), heldout="nofiles", dim=8, min_count=1)


def test_an_empty_heldout_file_is_named_as_held_out(ws, run_w2v):
    code, out, err = run_w2v(*shlex.split(f"{TRAIN} --heldout empty.txt"))
    assert (code, out, err) == (1, "", "w2v: error: held-out corpus: the corpus is empty: it holds no words\n")


def test_a_full_softmax_over_many_words_says_what_an_epoch_costs(ws, monkeypatch, run_w2v):
    """Above ``SOFTMAX_NOTED_ABOVE`` words (5,000; lowered here below the tiny corpus's
    vocabulary) one note gives the estimated time an epoch and the fast losses."""
    monkeypatch.setattr(w2v_train, "SOFTMAX_NOTED_ABOVE", 5)
    notes = {}
    for flags in ("--softmax", "--hs", "--sampled-softmax 5"):
        code, _, err = run_w2v(*shlex.split(f"train corpus.txt -o out.bin --epochs 1 --dim 8 --min-count 1 {flags}"))
        assert code == 0
        notes[flags] = [line for line in err.splitlines() if "note: a full softmax" in line]
    assert notes["--hs"] == notes["--sampled-softmax 5"] == [] and len(notes["--softmax"]) == 1
    assert re.fullmatch(
        r"w2v: note: a full softmax over [\d,]+ words updates every output vector at each prediction: "
        r"about \d+ s an epoch here; --hs, --negative 5 or --sampled-softmax 25 take seconds",
        notes["--softmax"][0],
    )


def test_a_corpus_read_from_a_terminal_says_so(ws, monkeypatch, run_w2v):
    monkeypatch.setattr(cli_training, "is_terminal", lambda stream: stream is sys.stdin)
    with open(ws / "corpus.txt") as typed:
        monkeypatch.setattr(sys, "stdin", typed)
        code, _, err = run_w2v(*shlex.split("train - -o out.bin --epochs 1 --dim 8 --min-count 1 --threads 1 -q"))
    assert code == 0
    assert err == "w2v: reading the corpus from standard input (a newline ends a sentence; Ctrl-D ends the corpus)\n"


@pytest.mark.parametrize(
    ("flags", "source"),
    [
        ("--read-vocab counts.txt", "counts.txt"),
        ("--init-model model.npz", "model.npz"),
        ("--init-model model.npz --update-vocab --min-count 2", "model.npz"),  # the corpus' words too rare to add
    ],
)
def test_a_corpus_with_no_word_of_the_vocabulary_is_one_line(ws, flags, source, run_w2v):
    """Its id stream is empty: nothing to train, where the learning rate's schedule divided by its words."""
    (ws / "counts.txt").write_text("foo 10\nbar 5\n")
    w2v.train([["foo", "bar"]], dim=8, min_count=1, epochs=1, threads=1, save_model=str(ws / "model.npz"))
    (ws / "unknown.txt").write_text("zzqx yyqx\n")
    before = snapshot(ws)
    code, out, err = run_w2v(*shlex.split(f"train unknown.txt -o out.bin {FAST} {flags}"))
    message = f"none of the corpus' 2 words is in the vocabulary of {source}: nothing to train"
    assert (code, out, err) == (1, "", f"w2v: error: {message}\n")
    assert snapshot(ws) == before


@pytest.mark.parametrize(
    ("text", "flags", "kept"),
    [
        ("hello hello hello\n" * 50, "", "'hello' (no other word was counted)"),
        ("king king queen\n" * 3, "--min-count 4", "'king' (min_count=4; the next most frequent word occurs 3 times)"),
        ("king king queen\n" * 3, "--max-vocab 1", "'king' (max_vocab=1)"),
    ],
    ids=["one word counted", "the others too rare", "max-vocab 1"],
)
def test_a_vocabulary_of_one_word_is_one_line(ws, text, flags, kept, run_w2v):
    """Not an exit 0 with 'final loss nan' (its pairs subsampled away) or vectors learnt
    against nothing: with one word, there are no noise words and no tree nodes."""
    (ws / "one.txt").write_text(text)
    before = snapshot(ws)
    code, out, err = run_w2v(*shlex.split(f"train one.txt -o out.bin {FAST} {flags}"))
    message = f"nothing to train: the vocabulary holds one word, {kept}: a vector is learnt against other words'"
    assert (code, out, err) == (1, "", f"w2v: error: {message}\n")
    assert snapshot(ws) == before


@pytest.mark.parametrize(
    ("text", "flags"),
    [("man\nwoman\nman\n", ""), ("king\nqueen\nking rook\nqueen\n", "--min-count 2")],  # rook: too rare
    ids=["one-word lines", "one word of the vocabulary a line"],
)
def test_a_corpus_where_no_word_has_a_context_is_one_line(ws, text, flags, run_w2v):
    """Not an exit 0 with 'final loss nan' and vectors never trained."""
    (ws / "lonely.txt").write_text(text)
    before = snapshot(ws)
    code, out, err = run_w2v(*shlex.split(f"train lonely.txt -o out.bin {FAST} {flags}"))
    message = "nothing to train: no sentence (line) of the corpus holds two words of the vocabulary, so no word"
    assert (code, out, err) == (1, "", f"w2v: error: {message} has a context\n")
    assert snapshot(ws) == before
