"""The Python API: ``w2v.train`` on in-memory sentences, its callbacks and report."""

import inspect
import itertools
import math
import random
import re
import warnings
from collections import Counter

import numpy as np
import pytest
from conftest import REPO

import w2v

VOCAB = [f"w{i}" for i in range(20)]
EPOCHS = 2


@pytest.fixture(scope="module")
def sentences() -> list[list[str]]:
    rng = random.Random(1234)
    weights = [1.0 / (i + 1) for i in range(len(VOCAB))]  # Zipf-like, so counts differ
    return [rng.choices(VOCAB, weights, k=rng.randint(3, 12)) for _ in range(200)]


QUICK = dict(min_count=1, dim=8, epochs=5, threads=1, sample=0, seed=1)


def train(sentences, **kwargs) -> w2v.Vectors:
    return w2v.train(sentences, **{**QUICK, "epochs": EPOCHS}, **kwargs)


def test_train_in_memory_sentences(sentences):
    counts = Counter(word for sentence in sentences for word in sentence)
    vectors = train(sentences)
    assert set(vectors.words) == set(counts)
    assert len(vectors.words) == len(counts)
    by_count = [counts[w] for w in vectors.words]
    assert by_count == sorted(by_count, reverse=True)  # most frequent first
    assert vectors.words[0] == counts.most_common(1)[0][0]
    assert vectors.vectors.shape == (len(counts), 8)
    report = vectors.report
    assert report is not None
    assert report.corpus_words == sum(counts.values())
    assert len(report.epoch_loss) == EPOCHS
    assert all(math.isfinite(loss) for loss in report.epoch_loss)


def test_on_epoch_end_once_per_epoch(sentences):
    calls: list[tuple[int, float]] = []
    vectors = train(sentences, on_epoch_end=lambda epoch, loss: calls.append((epoch, loss)))
    assert vectors.report is not None
    assert [epoch for epoch, _ in calls] == list(range(EPOCHS))
    assert [loss for _, loss in calls] == pytest.approx(vectors.report.epoch_loss)


def test_on_progress(sentences):
    calls: list[tuple[int, int, float, float]] = []
    vectors = train(sentences, on_progress=lambda *args: calls.append(args))
    report = vectors.report
    assert report is not None
    assert calls
    done, total, alpha, _ = calls[-1]
    assert done == total == report.train_words
    assert all(c[1] == total for c in calls)
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(calls))
    assert all(isinstance(c[0], int) and isinstance(c[1], int) for c in calls)
    assert alpha > 0


@pytest.mark.parametrize(
    ("keyword", "value", "hint"),
    [
        ("vector_size", 10, "vector_size is gensim's name: use dim=10"),
        ("size", 10, "size is gensim's name: use dim=10"),
        ("sg", 1, "sg is gensim's name: use model='skipgram'"),
        ("sg", 0, "sg is gensim's name: use model='cbow'"),
        ("workers", 3, "workers is gensim's name: use threads=3"),
        ("iter", 2, "iter is gensim's name: use epochs=2"),
        ("max_vocab_size", 1000, "max_vocab_size is gensim's name: use prune_at=1000 (distinct words held"),
        ("max_final_vocab", 50, "max_final_vocab is gensim's name: use max_vocab=50"),
        ("compute_loss", True, "compute_loss is gensim's name: use nothing: the loss is always computed"),
        ("callbacks", [], "callbacks is gensim's name: use on_epoch_end=function(end), given end.epoch, end.loss"),
    ],
)
def test_gensim_training_keywords_name_w2v_settings(sentences, keyword, value, hint):
    with pytest.raises(w2v.W2VError) as caught:
        w2v.train(sentences, **{keyword: value})
    assert str(caught.value).startswith(hint)


def test_gensim_corpus_keywords_and_no_corpus(sentences):
    with pytest.raises(w2v.W2VError, match=r"^sentences is gensim's name: use w2v.train\(sentences, \.\.\.\)"):
        w2v.train(sentences=sentences, vector_size=10)
    with pytest.raises(w2v.W2VError, match=r"^corpus_file is gensim's name: use w2v.train\('c.txt', \.\.\.\)"):
        w2v.train(corpus_file="c.txt")
    with pytest.raises(w2v.W2VError, match=r"^give a corpus"):
        w2v.train(dim=10)


@pytest.mark.parametrize(
    "corpus", [["the cat sat", "the dog sat"], ["the", "cat", "sat"], "the cat sat on the mat", ("a b", "c")]
)
def test_strings_that_name_no_file_are_taken_for_sentences(corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(w2v.W2VError) as caught:
        w2v.train(corpus, min_count=1)
    message = str(caught.value)
    first = corpus if isinstance(corpus, str) else corpus[0]
    assert message.startswith(f"corpus not found: {first!r}: ")
    assert "strings are read as file names; a corpus of sentences is a list of lists of tokens" in message


def test_a_word_without_utf8_bytes_is_one_error_line():
    """A lone surrogate (half of a UTF-16 pair) has no bytes: before, UnicodeEncodeError
    from deep in the reader; now one W2VError line naming the word's code points."""
    with pytest.raises(w2v.W2VError) as caught:
        w2v.train([["a\ud800b", "a"]] * 50, min_count=1, dim=4, epochs=1, threads=1)
    assert (
        str(caught.value)
        == "a word of the corpus holds a lone surrogate, which has no UTF-8 bytes: U+0061 U+D800 U+0062"
    )


def test_lists_of_file_names_are_read(tiny_corpus, tmp_path):
    vectors = w2v.train([str(tiny_corpus), tiny_corpus], min_count=1, dim=4, epochs=1, threads=1)
    assert vectors.report is not None and vectors.report.corpus_words == 2 * len(tiny_corpus.read_text().split())
    with pytest.raises(w2v.W2VError, match=r"^corpus not found: \S*missing.txt$"):  # a typo among real files
        w2v.train([str(tiny_corpus), str(tmp_path / "missing.txt")])
    with pytest.raises(w2v.W2VError, match=r"^corpus not found: \S*missing.txt$"):  # one name: a file name
        w2v.train(str(tmp_path / "missing.txt"))


def test_help_shows_what_w2v_is_and_an_example():
    doc = w2v.__doc__ or ""
    assert doc.startswith("w2v: word2vec in Python and Numba")
    for call in (
        "w2v.train(",
        'vectors.most_similar("cat", topn=3)',
        "vectors.save(",
        "w2v.Vectors.load(",
        "to_gensim",
    ):
        assert call in doc
    assert "help(w2v.train)" in doc and "README.md" in doc


def test_the_tools_are_exported_and_listed():
    """``w2v vocab``, ``phrases``, ``classes`` and ``score`` as library calls, named in the package's help."""
    for name in ("count_vocab", "phrases", "learn_phrases", "word_classes", "score"):
        assert name in w2v.__all__ and callable(getattr(w2v, name))
        assert f"w2v.{name}(" in (w2v.__doc__ or "")


def test_score_a_saved_model_on_held_out_sentences(sentences, tmp_path):
    """``w2v.score``: what ``w2v score`` prints, from Python: each loss's bits per word;
    on words drawn independently, near the unigram model's (there is nothing else to learn)."""
    model = tmp_path / "m.npz"
    train(sentences, hs=True, negative=3, save_model=str(model))
    result = w2v.score(str(model), sentences[:50])
    assert [score.loss for score in result.scores] == ["hs", "ns"]
    hs = result.scores[0]
    assert hs.pairs > 500 and hs.standard_error == 0.0
    assert hs.bits_per_word == pytest.approx(hs.unigram_bits_per_word, rel=0.05)
    sampled = w2v.score(str(model), sentences[:50], max_pairs=200, seed=3).scores[0]
    assert sampled.pairs == 200 and sampled.standard_error > 0


def test_report_writes_the_runs_figures_as_the_command_does(sentences, tmp_path):
    path = tmp_path / "run.json"
    vectors = train(sentences, report=str(path))
    assert vectors.report is not None and path.read_text() == vectors.report.to_json()
    with pytest.raises(w2v.W2VError, match=r"^output folder does not exist: "):  # before training
        train(sentences, report=str(tmp_path / "no" / "such" / "folder" / "run.json"))


# ``w2v train``'s options that are no keyword of ``w2v.train``: the library does their work otherwise
NOT_KEYWORDS = {"output", "fmt", "quiet", "phrases", "phrase_threshold", "phrase_passes", "classes"}
NOT_KEYWORDS |= {"classes_output", "plot"}


def test_every_train_option_is_a_keyword_but_those_the_readme_names():
    """README: every option of ``w2v train`` is a keyword of ``w2v.train``, but those it
    names, each by its flag."""
    from w2v.cli import cli
    from w2v.config import TRAIN_FIELDS

    options = {param.name: param for param in cli.commands["train"].params}
    keywords = set(inspect.signature(w2v.train).parameters) | TRAIN_FIELDS | {"cbow_sum"}
    assert set(options) - keywords == NOT_KEYWORDS
    readme = (REPO / "README.md").read_text()
    claim = readme[readme.index("Every option of `w2v train`") :].split("\n\n")[0]
    for name in NOT_KEYWORDS:
        assert f"`{max(options[name].opts, key=len)}" in claim, name


def test_hs_alone_says_it_turns_negative_sampling_off(sentences, tiny_corpus, tmp_path, cli):
    """gensim keeps negative=5 beside hs=1; w2v trains hierarchical softmax alone, and
    says so in one line where negative was not given (in Python; the command's --help says it)."""
    with pytest.warns(UserWarning) as warned:
        vectors = train(sentences, hs=1, save_model=str(tmp_path / "m.npz"))
    assert [str(w.message) for w in warned] == [
        "hs=1 without negative trains hierarchical softmax alone (negative=0; gensim keeps negative=5 beside it): "
        "give negative=5 to train both, negative=0 to say you mean one"
    ]
    assert warned[0].filename == __file__  # the caller's line
    assert vectors.report is not None and vectors.report.settings["losses"] == ["hs"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert train(sentences, hs=1, negative=5).report.settings["losses"] == ["hs", "ns"]
        train(sentences, hs=True, negative=0)
        train(sentences, hs=True, nce=3)
        train(sentences, init_model=str(tmp_path / "m.npz"), hs=True)
    done = cli("train", tiny_corpus, "-o", tmp_path / "v.bin", "--hs", "--min-count", "1", "--epochs", "1", "-q")
    assert (done.returncode, done.stderr) == (0, b"")


def test_on_epoch_end_of_one_argument_gets_the_epoch_its_loss_and_the_vectors(sentences, tmp_path):
    """gensim's habit: a callback of one argument gets the epoch numbered from 1 (as the
    command's lines), its loss and the vectors as they stand: a view, which training
    goes on changing, and ``copy()`` keeps."""
    seen: list[w2v.EpochEnd] = []
    kept: list[w2v.Vectors] = []

    def look(end):
        seen.append(end)
        kept.append(end.vectors.copy())
        assert end.wv.words == end.vectors.words and len(end.vectors) == len(sentences_vocabulary(sentences))

    vectors = w2v.train(sentences, on_epoch_end=look, **{**QUICK, "epochs": 3})
    report = vectors.report
    assert report is not None and [(end.epoch, end.epochs) for end in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [end.loss for end in seen] == report.epoch_loss and all(math.isnan(end.heldout) for end in seen)
    assert np.shares_memory(seen[-1].vectors.vectors, vectors.vectors)  # a view of the weights
    assert kept[-1].vectors.tobytes() == vectors.vectors.tobytes() != kept[0].vectors.tobytes()


def sentences_vocabulary(sentences) -> set[str]:
    return {word for sentence in sentences for word in sentence}


@pytest.mark.parametrize("how", ["returns True", "raises StopTraining", "returns numpy's True"])
def test_on_epoch_end_stops_the_run_with_the_vectors_so_far(sentences, tmp_path, how):
    """A callback returning True (or raising ``StopTraining``) ends the run after its
    epoch: the vectors and the model file are that epoch's, the report lists the epochs
    trained; None and other values go on."""
    kept = []

    def stop_after_two(end):
        kept.append(end.vectors.copy())
        if end.epoch < 2:
            return "go on"  # not a bool: ignored
        if how == "raises StopTraining":
            raise w2v.StopTraining
        return np.float64(end.loss) > 0 if how == "returns numpy's True" else True

    vectors = w2v.train(sentences, on_epoch_end=stop_after_two, save_model=str(tmp_path / "m.npz"), **QUICK)
    report = vectors.report
    assert report is not None and len(report.epoch_loss) == len(kept) == 2
    assert report.train_words == 2 * report.corpus_words  # sample=0: every word trained
    assert vectors.vectors.tobytes() == kept[-1].vectors.tobytes()
    assert w2v.Vectors.load(tmp_path / "m.npz").vectors.tobytes() == vectors.vectors.tobytes()
    old_form = w2v.train(sentences, on_epoch_end=lambda epoch, loss: epoch == 1, **QUICK)  # from 0: the second
    assert old_form.vectors.tobytes() == vectors.vectors.tobytes()


def test_the_per_epoch_evaluation_of_the_docs_runs(tmp_path, monkeypatch, capsys):
    """docs/training.md's example: evaluate after each epoch, save the best, stop once
    the analogies no longer improve."""
    page = (REPO / "docs" / "training.md").read_text()
    section = page[page.index("### Callbacks: per-epoch evaluation") :]
    example = section.split("```python\n")[1].split("```")[0]
    sample = str(REPO / "data" / "sample.txt.gz")
    code = example.replace('"text8", epochs=20', f"{sample!r}, epochs=6, threads=1, min_count=5, dim=32")
    assert code != example
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "training.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    report = namespace["vectors"].report
    assert [line.split(":")[0] for line in printed] == [f"epoch {e}" for e in range(1, len(report.epoch_loss) + 1)]
    assert all(re.fullmatch(r"epoch \d: loss [\d.]+, analogies [\d.]+%", line) for line in printed)
    best = namespace["best"]
    assert best["accuracy"] > 0 and best["epoch"] <= len(report.epoch_loss)
    assert w2v.Vectors.load(tmp_path / "best.bin").words == namespace["vectors"].words
