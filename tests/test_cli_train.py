"""``w2v train`` as a user runs it (``python -m w2v`` in a subprocess): outputs,
determinism, presets, stdin, and one clean error line for every mistake."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import without_progress
from reference import read_word2vec

pytestmark = pytest.mark.slow  # every test here runs ``python -m w2v``

FAST = ("--dim", "16", "--min-count", "1", "--epochs", "1", "--threads", "1", "-q")
SAME_HASH = {"PYTHONHASHSEED": "0"}


def train_ok(cli, *args, env=SAME_HASH, input=None):
    """A successful run; by default with a fixed hash seed (see test_determinism_across_processes)."""
    done = cli("train", *args, env=env, input=input)
    assert done.returncode == 0, done.stderr.decode()
    return done


def test_train_writes_binary_and_text(cli, tiny_corpus, tmp_path):
    out = tmp_path / "v.bin"
    done = train_ok(cli, tiny_corpus, "-o", out, *FAST)
    assert done.stderr == b"" and done.stdout == b""
    words, values = read_word2vec(out, binary=True)
    assert values.shape == (12, 16)
    assert words[0] == b"the"
    text = tmp_path / "v.txt"
    train_ok(cli, tiny_corpus, "-o", text, *FAST)
    assert read_word2vec(text, binary=False)[0] == words
    forced = tmp_path / "v.vec"
    train_ok(cli, tiny_corpus, "-o", forced, "--format", "binary", *FAST)
    assert forced.read_bytes() == out.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.bin", "v.txt", "v.vec"]  # no temporary files left


def test_model_sg_is_gensims_name_for_skipgram(cli, tiny_corpus, tmp_path):
    skipgram, sg, cbow = tmp_path / "skipgram.bin", tmp_path / "sg.bin", tmp_path / "cbow.bin"
    for out, model in ((skipgram, "skipgram"), (sg, "sg"), (cbow, "cbow")):
        train_ok(cli, tiny_corpus, "-o", out, "--model", model, *FAST)
    assert sg.read_bytes() == skipgram.read_bytes() != cbow.read_bytes()


def test_summary_line_without_quiet(cli, tiny_corpus, tmp_path):
    out = tmp_path / "v.bin"
    done = train_ok(cli, tiny_corpus, "-o", out, *FAST[:-1])
    last = done.stderr.decode().strip().splitlines()[-1]
    assert "12 words in vocabulary" in last and str(out) in last
    assert "Traceback" not in done.stderr.decode()


@pytest.mark.parametrize(
    "flags, named",
    [((), "negative sampling"), (("--hs", "--negative", "3"), "hierarchical softmax and negative sampling")],
)
def test_summary_line_names_the_loss_and_its_unit(cli, tiny_corpus, tmp_path, flags, named):
    """'final loss 2.5266': of which loss, in which unit? The line says both, the
    figure being the report's last epoch's mean per example."""
    out, report = tmp_path / "v.bin", tmp_path / "run.json"
    done = train_ok(cli, tiny_corpus, "-o", out, "--report", report, *flags, *FAST[:-1])
    last = done.stderr.decode().strip().splitlines()[-2]  # before the line naming the report
    figures = json.loads(report.read_text())
    assert f"final loss {figures['epoch_loss'][-1]:.4f} nats ({named}); " in last


def test_report_writes_the_runs_figures_as_json(cli, tiny_corpus, tmp_path):
    """--report FILE: the run's figures as JSON; CBOW with the full softmax and no
    subsampling trains every word of every sentence of two words or more (all of the
    tiny corpus's), each against every output row: words trained x V updates."""
    out, report = tmp_path / "v.bin", tmp_path / "run.json"
    train_ok(cli, tiny_corpus, "-o", out, "--report", report, "--model", "cbow", "--softmax", "--sample", "0", *FAST)
    figures = json.loads(report.read_text())
    assert figures["vocab_size"] == 12 and figures["train_words"] == figures["corpus_words"] > 0
    assert figures["output_updates"] == figures["train_words"] * 12
    assert len(figures["epoch_loss"]) == 1 and figures["epoch_heldout"] == [None]
    assert figures["train_seconds"] > 0 and figures["words_per_second"] > 0
    settings = figures["settings"]  # what decides the vectors, resolved: alpha 0.05 is CBOW's default
    assert (settings["model"], settings["losses"], settings["dim"], settings["sample"]) == ("cbow", ["softmax"], 16, 0)
    assert (settings["alpha"], settings["epochs"], settings["threads"], settings["subwords"]) == (0.05, 1, 1, False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "v.bin"]


def test_a_run_starts_with_its_settings(cli, tiny_corpus, tmp_path):
    """Unless -q, the settings that decide the vectors, resolved, in a line before training."""
    out = tmp_path / "v.bin"
    done = train_ok(cli, tiny_corpus, "-o", out, "--hs", "--sample", "1e-4", *FAST[:-1])
    lines = without_progress(done.stderr.decode()).splitlines()
    assert (
        "w2v: training skipgram with hierarchical softmax: dim 16, window 5, sample 0.0001, alpha 0.025, "
        "epochs 1, threads 1, min-count 1"
    ) in lines
    assert b"w2v: training skipgram" not in train_ok(cli, tiny_corpus, "-o", out, *FAST).stderr


def test_subwords_without_a_model_file_say_what_o_keeps(cli, tiny_corpus, tmp_path):
    """-o gets the words' vectors, as without --subwords: the n-grams that build words
    never seen are only in a model file, which a note after the settings line names."""
    out, subwords = tmp_path / "v.bin", ("--subwords", "--bucket", "100", *FAST[:-1])

    def notes(*args) -> list[str]:
        err = without_progress(train_ok(cli, tiny_corpus, "-o", out, *subwords, *args).stderr.decode())
        return [line for line in err.splitlines() if line.startswith("w2v: note: -o ")]

    assert notes() == [
        f"w2v: note: -o {out} gets the words' vectors alone, not the character n-grams that build words never "
        "seen: add --save-fasttext FILE.bin (fastText's model, which fastText and gensim load) or --save-model "
        "FILE.npz (w2v's, to query and train further)"
    ]
    for kept in (["--save-fasttext", tmp_path / "m.bin"], ["--save-model", tmp_path / "m.npz"], ["--maxn", "0"]):
        assert notes(*kept) == []
    assert train_ok(cli, tiny_corpus, "-o", out, *subwords, "-q").stderr == b""


@pytest.mark.parametrize("name", ["v.kv", "v.MODEL"])
def test_a_gensim_pickle_name_is_refused_before_training(cli, tiny_corpus, tmp_path, name):
    """gensim saves its pickles as .kv and .model: the word2vec text such a name got is
    a file gensim's load cannot read. --format text, said outright, writes it."""
    out = tmp_path / name
    done = cli("train", tiny_corpus, "-o", out, *FAST)
    suffix = name.split(".")[1].lower()
    assert_one_error_line(
        done, out, f"{out}: a .{suffix} file is gensim's pickled KeyedVectors, which w2v does not write: give -o a .bin"
    )
    assert list(tmp_path.iterdir()) == []
    train_ok(cli, tiny_corpus, "-o", out, "--format", "text", *FAST)
    assert out.read_bytes().startswith(b"12 16\n")


def test_determinism_single_thread(cli, tiny_corpus, tmp_path):
    outs = []
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        outs.append(tmp_path / f"{name}.bin")
        train_ok(cli, tiny_corpus, "-o", outs[-1], "--seed", seed, "--sample", "1e-3", "--hs", *FAST, env=SAME_HASH)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert outs[0].read_bytes() != outs[2].read_bytes()
    words_a, values_a = read_word2vec(outs[0], True)
    words_c, values_c = read_word2vec(outs[2], True)
    assert words_a == words_c
    assert not np.array_equal(values_a, values_c)


def test_determinism_across_processes(cli, tiny_corpus, tmp_path):
    outs = []
    for hash_seed in ("1", "2"):
        outs.append(tmp_path / f"{hash_seed}.bin")
        train_ok(cli, tiny_corpus, "-o", outs[-1], *FAST, env={"PYTHONHASHSEED": hash_seed})
    assert outs[0].read_bytes() == outs[1].read_bytes()


def test_a_second_run_loads_the_kernel_from_the_numba_cache(cli, tiny_corpus, tmp_path):
    """Start-up: the compiled kernel is reused by the next process (NUMBA_CACHE_DIR
    honoured). Numba keys its cache on the kernel's pickled closure, so anything
    in it that pickles differently per process would compile every run anew."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DEBUG_CACHE": "1"}

    def cache_events():
        done = cli("train", tiny_corpus, "-o", tmp_path / "v.bin", *FAST, env=env)
        assert done.returncode == 0, done.stderr.decode()
        lines = (done.stdout + done.stderr).decode().splitlines()
        events = [line.split("]")[1].split(" to ")[0].split(" from ")[0] for line in lines if "train_batch" in line]
        return [event.strip() for event in events]

    assert "data saved" in cache_events()
    second = cache_events()
    assert "data loaded" in second and "data saved" not in second
    assert any((tmp_path / "cache").rglob("*train_batch*.nbc"))


def test_stdin_folder_and_file_give_the_same_vectors(cli, tiny_corpus, tmp_path):
    from_file, from_stdin, from_folder = tmp_path / "f.bin", tmp_path / "s.bin", tmp_path / "d.bin"
    train_ok(cli, tiny_corpus, "-o", from_file, *FAST, env=SAME_HASH)
    train_ok(cli, "-", "-o", from_stdin, *FAST, env=SAME_HASH, input=tiny_corpus.read_bytes())
    folder = tmp_path / "corpus"
    folder.mkdir()
    lines = tiny_corpus.read_bytes().splitlines(keepends=True)
    (folder / "1.txt").write_bytes(b"".join(lines[:50]))
    (folder / "2.txt").write_bytes(b"".join(lines[50:]))
    train_ok(cli, folder, "-o", from_folder, *FAST, env=SAME_HASH)
    assert from_stdin.read_bytes() == from_file.read_bytes()
    assert from_folder.read_bytes() == from_file.read_bytes()


def test_preset_end_to_end(cli, tiny_corpus, tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text('dim = 8\nmodel = "cbow"\nhs = true\nformat = "text"\n')
    out = tmp_path / "v.bin"
    train_ok(cli, tiny_corpus, "--config", preset, "-o", out, "--min-count", "1", "--epochs", "1", "-q")
    assert out.read_bytes().startswith(b"12 8\nthe ")  # text, from the preset, despite .bin
    train_ok(cli, tiny_corpus, "--config", preset, "-o", out, "--format", "binary", *FAST)
    assert read_word2vec(out, True)[1].shape == (12, 16)  # --dim 16 wins


def test_save_and_read_vocab(cli, tiny_corpus, tmp_path):
    vocab = tmp_path / "vocab.txt"
    train_ok(cli, tiny_corpus, "-o", tmp_path / "a.bin", "--save-vocab", vocab, *FAST)
    lines = vocab.read_bytes().splitlines()
    assert lines[0] == b"the 140" and len(lines) == 12
    vocab.write_bytes(b"</s> 5\ncat 60\ndog 60\n")
    train_ok(cli, tiny_corpus, "-o", tmp_path / "b.bin", "--read-vocab", vocab, *FAST)
    assert read_word2vec(tmp_path / "b.bin", True)[0] == [b"cat", b"dog"]


def test_a_vocabulary_read_from_a_pipe(cli, tiny_corpus, tmp_path):
    """--read-vocab /dev/stdin (a pipe, not a regular file) said 'not found'."""
    train_ok(cli, tiny_corpus, "-o", tmp_path / "b.bin", "--read-vocab", "/dev/stdin", *FAST, input=b"cat 60\ndog 60\n")
    assert read_word2vec(tmp_path / "b.bin", True)[0] == [b"cat", b"dog"]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["-", "--heldout", "-"], "CORPUS and --heldout"),
        (["-", "--heldout", "/dev/stdin"], "CORPUS and --heldout"),
        (["-", "--read-vocab", "/dev/stdin"], "CORPUS and --read-vocab"),
    ],
)
def test_two_inputs_reading_standard_input_are_refused_before_training(cli, tiny_corpus, tmp_path, args, names):
    """The corpus read all of it, and the held-out corpus (after training) or the
    vocabulary found it empty."""
    out = tmp_path / "v.bin"
    done = cli("train", *args, "-o", out, *FAST, input=tiny_corpus.read_bytes())
    assert (done.returncode, done.stderr.decode()) == (
        1,
        f"w2v: error: {names} both read standard input (-), which can be read only once: "
        "save one of them to a file first\n",
    )
    assert not out.exists()


def test_invalid_utf8_words_reach_the_output_unchanged(cli, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"caf\xe9 ok \xff\xfe ok\n" * 10)
    out = tmp_path / "v.bin"
    train_ok(cli, corpus, "-o", out, *FAST)
    assert sorted(read_word2vec(out, True)[0]) == [b"caf\xe9", b"ok", b"\xff\xfe"]
    train_ok(cli, corpus, "-o", tmp_path / "v.txt", *FAST)
    assert b"\ncaf\xe9 " in (tmp_path / "v.txt").read_bytes()


# ---- errors ---------------------------------------------------------------------------


def assert_one_error_line(done, out, fragment):
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode != 0
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("w2v: error:"), err
    assert fragment.lower() in lines[0].lower(), err
    assert not out.exists()
    assert not list(out.parent.glob("*.tmp*"))


def error_cases(tmp_path, tiny_corpus):
    (tmp_path / "empty.txt").write_bytes(b" \n\n")
    (tmp_path / "nofiles").mkdir()
    (tmp_path / "syntax.toml").write_text("dim = = 3\n")
    (tmp_path / "unknown.toml").write_text("dim = 3\nflavour = 'x'\n")
    corpus = str(tiny_corpus)
    return {
        "missing corpus": (["train", str(tmp_path / "missing.txt")], "not found"),
        "folder without files": (["train", str(tmp_path / "nofiles")], "no files"),
        "empty corpus": (["train", str(tmp_path / "empty.txt")], "empty"),
        "min-count too high": (["train", corpus, "--min-count", "100000"], "vocabulary is empty"),
        "negative 0 without hs": (["train", corpus, "--negative", "0"], "nothing to train: --negative 0 and no --hs"),
        "negative below 0": (["train", corpus, "--negative", "-2"], "negative"),
        "dim 0": (["train", corpus, "--dim", "0"], "dim"),
        "dim negative": (["train", corpus, "--dim", "-5"], "dim"),
        "window 0": (["train", corpus, "--window", "0"], "window"),
        "epochs 0": (["train", corpus, "--epochs", "0"], "epochs"),
        "epochs negative": (["train", corpus, "--epochs", "-1"], "epochs"),
        "dim not a number": (["train", corpus, "--dim", "many"], "dim"),
        "bad model": (["train", corpus, "--model", "glove"], "model"),
        "output folder missing": (["train", corpus, "-o", str(tmp_path / "nowhere" / "v.bin")], "does not exist"),
        "output is a folder": (["train", corpus, "-o", str(tmp_path / "nofiles")], "folder"),
        "preset syntax": (["train", corpus, "--config", str(tmp_path / "syntax.toml")], "invalid TOML"),
        "preset unknown key": (["train", corpus, "--config", str(tmp_path / "unknown.toml")], "flavour"),
        "preset missing": (["train", corpus, "--config", str(tmp_path / "missing.toml")], "missing.toml"),
        "read-vocab missing": (["train", corpus, "--read-vocab", str(tmp_path / "nov.txt")], "not found"),
        "no corpus": (["train"], "corpus"),
    }


ERROR_NAMES = [
    "missing corpus",
    "folder without files",
    "empty corpus",
    "min-count too high",
    "negative 0 without hs",
    "negative below 0",
    "dim 0",
    "dim negative",
    "window 0",
    "epochs 0",
    "epochs negative",
    "dim not a number",
    "bad model",
    "output folder missing",
    "output is a folder",
    "preset syntax",
    "preset unknown key",
    "preset missing",
    "read-vocab missing",
    "no corpus",
]


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_errors_are_one_line(cli, tiny_corpus, tmp_path, name):
    args, fragment = error_cases(tmp_path, tiny_corpus)[name]
    out = tmp_path / "out.bin"
    if "-o" not in args:
        args = [*args, "-o", str(out), "-q"]
    else:
        out = tmp_path / "out-never.bin"
    done = cli(*args, cwd=tmp_path)
    assert_one_error_line(done, out, fragment)
    assert not (tmp_path / "vectors.bin").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file")
def test_unreadable_corpus(cli, tmp_path):
    corpus = tmp_path / "secret.txt"
    corpus.write_text("a b c\n")
    corpus.chmod(0)
    out = tmp_path / "out.bin"
    assert_one_error_line(cli("train", corpus, "-o", out, "-q"), out, "secret.txt")


def test_divergence_stops_with_a_message_naming_the_setting(cli, tiny_corpus, tmp_path):
    out = tmp_path / "v.bin"
    done = cli("train", tiny_corpus, "-o", out, *FAST, "--alpha", "1e38")
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1
    assert lines[0].startswith("w2v: error: training diverged") and "--alpha" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_hierarchical_softmax_divergence_is_caught(cli, tiny_corpus, tmp_path, model):
    """HS skips nodes with |logit| >= 6, so its weights blow up with a finite loss:
    the row norms give it away at the epoch's end."""
    out = tmp_path / "d.bin"
    done = cli("train", tiny_corpus, "-o", out, "--hs", "--alpha", "100", "--epochs", "1", "--threads", "1")
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1
    assert re.fullmatch(
        r"w2v: error: training diverged in epoch 1 \(a row of syn[01] has norm [0-9.e+]+, where trained models "
        r"stay below 1000\): lower the learning rate \(--alpha, now 100\)",
        lines[-1],
    ), lines
    assert list(tmp_path.iterdir()) == []


def test_sigterm_stops_training_with_143_and_writes_nothing(tiny_corpus, tmp_path):
    import signal
    import subprocess
    import sys

    out = tmp_path / "v.bin"
    out.write_bytes(b"old vectors")
    command = [sys.executable, "-m", "w2v", "train", str(tiny_corpus), "-o", str(out)]
    command += ["--dim", "16", "--min-count", "1", "--epochs", "10000", "--threads", "2"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stderr is not None
    for line in child.stderr:  # progress lines, stderr not being a terminal
        if line.startswith(b"w2v: training: "):
            break  # the epochs have begun
    else:
        raise AssertionError("the run ended before training")
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 143
    assert err.decode().strip().splitlines()[-1] == "w2v: error: terminated"
    assert out.read_bytes() == b"old vectors"
    assert [p.name for p in tmp_path.iterdir()] == ["v.bin"]


def test_commands_import_numba_only_to_train_and_tqdm_only_to_show_a_bar(tiny_corpus, tmp_path):
    """Importing the commands does not import Numba (the query commands start fast);
    a training run does, and a quiet one does not import tqdm."""
    out = tmp_path / "v.bin"
    script = (
        "import sys\n"
        "from w2v.cli import main\n"
        "assert 'numba' not in sys.modules\n"
        "main(sys.argv[1:])\n"
        "assert 'numba' in sys.modules and 'tqdm' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "train", str(tiny_corpus), "-o", str(out), *FAST], capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()
    assert read_word2vec(out, binary=True)[1].shape == (12, 16)


def test_compressed_output_names_are_compressed(cli, tiny_corpus, tmp_path):
    """``-o v.bin.gz`` writes gzipped binary (``.bin`` under the compression picks the format),
    ``-o v.txt.zst`` zstd-compressed text; both load back, and gensim reads the gzipped one."""
    import gzip

    zstd = pytest.importorskip("zstandard")
    train_ok(cli, tiny_corpus, "-o", tmp_path / "v.bin", *FAST)
    train_ok(cli, tiny_corpus, "-o", tmp_path / "v.bin.gz", *FAST)
    train_ok(cli, tiny_corpus, "-o", tmp_path / "v.txt", *FAST)
    train_ok(cli, tiny_corpus, "-o", tmp_path / "v.txt.zst", *FAST)
    assert gzip.decompress((tmp_path / "v.bin.gz").read_bytes()) == (tmp_path / "v.bin").read_bytes()
    text = zstd.ZstdDecompressor().stream_reader((tmp_path / "v.txt.zst").read_bytes()).read()
    assert text == (tmp_path / "v.txt").read_bytes()
    done = cli("similar", "cat", "-v", tmp_path / "v.txt.zst", "-n", "2")
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 2
    models = pytest.importorskip("gensim.models")
    loaded = models.KeyedVectors.load_word2vec_format(str(tmp_path / "v.bin.gz"), binary=True)
    np.testing.assert_array_equal(loaded.vectors, read_word2vec(tmp_path / "v.bin", binary=True)[1])
