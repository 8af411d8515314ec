"""``w2v info FILE`` and ``w2v.describe_file``: what a vectors file, a w2v model file or
checkpoint, or a fastText .bin holds, read from its headers: its format, words and
dimension, and a model's settings and training record."""

import json

import pytest

import w2v

SENTENCES = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "sat", "on", "a", "log"]] * 50
SETTINGS = dict(min_count=1, dim=8, epochs=2, threads=1, subwords=True, bucket=50)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The vectors of a subword run, and a folder of every kind of file holding them."""
    folder = tmp_path_factory.mktemp("info")
    vectors = w2v.train(
        SENTENCES,
        save_model=str(folder / "model.npz"),
        save_fasttext=str(folder / "ft.bin"),
        checkpoint=str(folder / "ck"),
        **SETTINGS,
    )
    vectors.save(folder / "v.bin")
    vectors.save(folder / "v.txt")
    vectors.save(folder / "v.bin.gz")
    vectors.save_npy(folder / "v.npy")
    (folder / "glove.txt").write_text("".join((folder / "v.txt").read_text().splitlines(keepends=True)[1:]))
    return vectors, folder


KINDS = {
    "v.bin": "word2vec binary",
    "v.txt": "word2vec text",
    "v.bin.gz": "word2vec binary",
    "v.npy": ".npy export (its words in a .vocab.txt beside it)",
    "glove.txt": "text vectors without a header line (GloVe's format)",
    "model.npz": "w2v model file",
    "ck": "w2v checkpoint",
    "ck/checkpoint.npz": "w2v checkpoint",
    "ft.bin": "fastText model",
}


@pytest.mark.parametrize("name", KINDS)
def test_every_kind_of_file_says_its_format_words_and_dim(files, name):
    _, folder = files
    found = w2v.describe_file(folder / name)
    assert (found.path, found.format, found.words, found.dim) == (str(folder / name), KINDS[name], 8, 8)
    assert (found.settings is None) == (name.startswith(("v.", "glove")))


def test_a_model_file_gives_the_runs_settings_and_record(files):
    vectors, folder = files
    found = w2v.describe_file(folder / "model.npz")
    assert found.settings == vectors.report.settings
    assert found.settings["losses"] == ["ns"] and found.settings["bucket"] == 50
    assert found.summary == (
        "skipgram with negative sampling: dim 8, window 5, negative 5, sample 0.001, alpha 0.025, epochs 2, "
        "threads 1, min-count 1, subwords (minn 3, maxn 6, bucket 50)"
    )
    record = found.record
    assert record["progress"] == "all 2 epochs done" and record["corpus_words"] == record["stream_words"] == 600
    assert record["epoch_loss"] == pytest.approx(vectors.report.epoch_loss, rel=1e-12)
    assert record["replicas"] == 0 and record["corpus"] is None  # trained from Python: no command recorded


def test_a_fasttext_model_gives_its_arguments(files):
    _, folder = files
    found = w2v.describe_file(folder / "ft.bin")
    assert found.settings == {
        **dict(dim=8, ws=5, epoch=2, minCount=1, neg=5, wordNgrams=1, loss="ns", model="skipgram"),
        **dict(bucket=50, minn=3, maxn=6, lrUpdateRate=10_000, t=0.001),
    }
    assert found.summary.startswith("skipgram with loss ns: dim 8, ws 5, epoch 2, minCount 1, neg 5, wordNgrams 1, ")
    assert found.record == {"ntokens": 600}


def test_info_prints_it_and_its_json(files, cli):
    vectors, folder = files
    done = cli("info", folder / "v.bin")
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == f"{folder / 'v.bin'}: word2vec binary, 8 words x 8 dims\n"
    done = cli("info", folder / "ck")
    lines = done.stdout.decode().splitlines()
    assert lines[0] == f"{folder / 'ck'}: w2v checkpoint, 8 words x 8 dims"
    assert lines[1] == f"settings: {w2v.describe_file(folder / 'ck').summary}"
    losses = ", ".join(f"{loss:.4f}" for loss in vectors.report.epoch_loss)
    assert (
        lines[2]
        == f"trained: all 2 epochs done, on 600 tokens an epoch (600 in the vocabulary); mean loss by epoch {losses}"
    )
    assert len(lines) == 3
    done = cli("info", "--json", folder / "ft.bin")
    assert json.loads(done.stdout)["settings"]["model"] == "skipgram"


def test_info_names_the_corpus_of_a_trained_command(tiny_corpus, tmp_path, cli):
    model = tmp_path / "m.npz"
    done = cli("train", tiny_corpus, "-o", tmp_path / "v.bin", "--save-model", model, "--min-count", "1", "-q")
    assert done.returncode == 0, done.stderr
    line = cli("info", model).stdout.decode().splitlines()[2]
    assert line.endswith(f"; corpus {tiny_corpus}")


def test_what_info_cannot_tell_is_one_line(tiny_corpus, tmp_path, cli):
    for path, message in (
        (tmp_path / "missing.bin", f"file not found: {tmp_path / 'missing.bin'}"),
        (tiny_corpus, "a word2vec file starts with a line 'COUNT DIM'"),
    ):
        done = cli("info", path)
        err = done.stderr.decode()
        assert done.returncode == 1 and done.stdout == b"" and len(err.splitlines()) == 1, err
        assert err.startswith("w2v: error: ") and message in err
