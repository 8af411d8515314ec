"""word2vec.c's command lines with ``w2v`` in front: ``w2v word2vec``, ``word2phrase``,
``distance``, ``word-analogy`` and ``compute-accuracy``.

The demo scripts' lines (demo-word.sh, demo-phrases.sh, demo-classes.sh,
demo-word-accuracy.sh, demo-phrase-accuracy.sh) run unchanged, their flags
included, in a folder where ``text8`` and the news corpus are a 60,000-token slice
of ``data/sample.txt.gz``. Where the ``word2vec`` package (word2vec.c's programs)
is installed, its programs read what w2v wrote, and run on the same corpus give the
same vocabulary (but ``</s>``), the same phrases and the same accuracy report.
"""

import gzip
import importlib.util
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

from w2v.cli.c_tools import accuracy_report, word2vec_run
from w2v.config import TrainConfig
from w2v.errors import ConfigError
from w2v.vectors.evaluate import parse_analogies, score_analogies
from w2v.vectors.wordvectors import Vectors

SAMPLE = REPO / "data" / "sample.txt.gz"
TOKENS = 60_000
DEMO_WORD = (
    "word2vec -train text8 -output vectors.bin -cbow 1 -size 200 -window 8 -negative 25 -hs 0 -sample 1e-4 "
    "-threads 20 -binary 1 -iter 15"
)
DEMO_CLASSES = (
    "word2vec -train text8 -output classes.txt -cbow 1 -size 200 -window 8 -negative 25 -hs 0 -sample 1e-4 "
    "-threads 20 -iter 15 -classes 500"
)
DEMO_PHRASES = (
    "word2phrase -train news.2012.en.shuffled-norm0 -output news.2012.en.shuffled-norm0-phrase0 "
    "-threshold 200 -debug 2",
    "word2phrase -train news.2012.en.shuffled-norm0-phrase0 -output news.2012.en.shuffled-norm0-phrase1 "
    "-threshold 100 -debug 2",
)
DEMO_PHRASE_VECTORS = (
    "word2vec -train news.2012.en.shuffled-norm1-phrase1 -output vectors-phrase.bin -cbow 1 -size 200 -window 10 "
    "-negative 25 -hs 0 -sample 1e-5 -threads 20 -binary 1 -iter 15"
)
ROW = re.compile(r"^ *(\S+)\t\t(-?\d+\.\d{6})$")
ROYAL = Vectors(
    ["man", "woman", "king", "queen", "prince", "apple"],
    np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 0.2, 1], [0, 0, -1]], dtype=np.float32),
)


def find_c(name: str) -> str | None:
    """The path of one of word2vec.c's programs as the ``word2vec`` package installs them
    (``word2vec``, ``word2phrase``, ``word2vec-distance``, ...), or None."""
    if importlib.util.find_spec("word2vec") is None:
        return None
    local = Path(sysconfig.get_path("scripts")) / name
    return str(local) if local.is_file() else shutil.which(name)


def c_program(name: str) -> str:
    """``find_c(name)``; the test is skipped where the program is absent."""
    pytest.importorskip("word2vec")
    found = find_c(name)
    if found is None:
        pytest.skip(f"{name} (word2vec.c, from the word2vec package) not found")
    return found


def run_c(name: str, *args, stdin: str = "", cwd: Path) -> str:
    """Run a word2vec.c program and return its standard output."""
    done = subprocess.run(
        [c_program(name), *map(str, args)], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def table(transcript: str) -> list[tuple[str, float]]:
    """The (word, score) rows of a distance / word-analogy transcript."""
    return [(m[1], float(m[2])) for m in map(ROW.match, transcript.splitlines()) if m]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A folder holding ``text8`` and ``news.2012.en.shuffled-norm0``: the same slice of
    the sample corpus, one line, as text8 is."""
    folder = tmp_path_factory.mktemp("demo")
    with gzip.open(SAMPLE, "rt") as sample:
        words = sample.read().split()[:TOKENS]
    text = " ".join(words) + "\n"
    (folder / "text8").write_text(text)
    (folder / "news.2012.en.shuffled-norm0").write_text(text)
    return folder


def vocab_file(path: Path) -> dict[str, int]:
    return {word: int(count) for word, count in (line.split() for line in path.read_text().splitlines())}


# --- demo-word.sh and demo-word-accuracy.sh ---------------------------------------------------


@pytest.fixture(scope="module")
def demo_word(demo) -> Path:
    """demo-word.sh's training line, run unchanged: ``w2v word2vec -train text8 ...``."""
    done = subprocess.run(
        [sys.executable, "-m", "w2v", *shlex.split(DEMO_WORD)], cwd=demo, capture_output=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return demo


@pytest.mark.slow
def test_demo_word_writes_binary_vectors(demo_word):
    """-binary 1 -size 200: word2vec.c's binary file of 200 values a word, for the
    vocabulary at the default -min-count 5 (what -save-vocab lists)."""
    data = (demo_word / "vectors.bin").read_bytes()
    count, dim = map(int, data.split(b"\n", 1)[0].split())
    vectors = Vectors.load(demo_word / "vectors.bin", binary=True)
    assert (len(vectors), vectors.dim) == (count, dim) and dim == 200
    first = len(data.split(b"\n", 1)[0]) + 1 + len(vectors.words[0].encode()) + 1
    assert data[first : first + 800] == vectors.vectors[0].astype("<f4").tobytes()  # raw float32, not text
    counts = Counter((demo_word / "text8").read_text().split())
    assert set(vectors.words) == {w for w, n in counts.items() if n >= 5}


@pytest.mark.slow
def test_demo_word_distance(demo_word, run_w2v):
    """``./distance vectors.bin``: distance.c's prompt, position lines and 40 rows."""
    vectors = Vectors.load(demo_word / "vectors.bin")
    code, out, err = run_w2v("distance", "vectors.bin", stdin="anarchism\nEXIT\n", cwd=demo_word)
    assert (code, err) == (0, "")
    prompt = "Enter word or sentence (EXIT to break): "
    head = f"{prompt}\nWord: anarchism  Position in vocabulary: {vectors.index('anarchism')}\n"
    assert out.startswith(head + "\n" + " " * 46 + "Word       Cosine distance\n" + "-" * 72 + "\n")
    assert out.endswith(f"\t\t{table(out)[-1][1]:f}\n{prompt}")
    expected = vectors.most_similar(["anarchism"], topn=40)
    assert [w for w, _ in table(out)] == [w for w, _ in expected]


@pytest.mark.slow
def test_c_distance_reads_w2v_vectors(demo_word, run_w2v):
    """word2vec.c's own distance reads w2v's binary file and finds the same neighbours
    (scores equal to the printed 6 decimals, but for float rounding)."""
    c_out = run_c("word2vec-distance", "vectors.bin", stdin="anarchism\nEXIT\n", cwd=demo_word)
    _, ours, _ = run_w2v("distance", "vectors.bin", stdin="anarchism\nEXIT\n", cwd=demo_word)
    c_rows, our_rows = dict(table(c_out)), dict(table(ours))
    assert len(c_rows) == 40 and table(c_out)[0][0] == table(ours)[0][0]
    common = set(c_rows) & set(our_rows)
    assert len(common) >= 38  # rows near a tie at the 40th may differ
    assert all(abs(c_rows[w] - our_rows[w]) <= 2e-6 for w in common)


def analogy_questions(words: list[str], sections: int, per_section: int, seed: int) -> str:
    """An analogy file of ``sections`` sections (the first five are word2vec.c's
    semantic ones) of random questions over ``words``, some upper-cased, and one
    question with an unknown word in the last section."""
    rng = random.Random(seed)
    lines = []
    for s in range(sections):
        lines.append(f": section-{s}")
        for _ in range(per_section):
            quad = rng.sample(words, 4)
            lines.append(" ".join(w.upper() if rng.random() < 0.3 else w for w in quad))
    lines.append(f"{words[0]} {words[1]} zzzunknown {words[2]}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_demo_word_accuracy(demo_word, run_w2v):
    """``./compute-accuracy vectors.bin 30000 < questions-words.txt``: compute-accuracy.c's
    report; where word2vec.c is installed, its program prints the same sections, the
    same questions seen and (but for near-ties) the same counts."""
    words = Vectors.load(demo_word / "vectors.bin").words[20:120]
    (demo_word / "questions-words.txt").write_text(analogy_questions(words, 7, 6, seed=3))
    stdin = (demo_word / "questions-words.txt").read_text()
    code, out, err = run_w2v("compute-accuracy", "vectors.bin", "30000", stdin=stdin, cwd=demo_word)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0::3][:7] == [f"section-{s}:" for s in range(7)]
    assert all(re.fullmatch(r"ACCURACY TOP1: \d+\.\d\d %  \(\d+ / 6\)", line) for line in lines[1::3][:7])
    assert lines[-1] == "Questions seen / total: 42 43   97.67 % "
    if find_c("word2vec-compute-accuracy"):
        assert_same_report(run_c("word2vec-compute-accuracy", "vectors.bin", "30000", stdin=stdin, cwd=demo_word), out)


def assert_same_report(c_out: str, ours: str) -> None:
    """The same lines, but for each section's correct count, which may differ by one
    (a near-tie ranked otherwise in float32)."""
    c_lines, our_lines = c_out.splitlines(), ours.splitlines()
    assert len(c_lines) == len(our_lines)
    for c_line, our_line in zip(c_lines, our_lines, strict=True):
        if c_line.startswith("ACCURACY"):
            c_counts, our_counts = (re.findall(r"\((\d+) / (\d+)\)", line)[0] for line in (c_line, our_line))
            assert c_counts[1] == our_counts[1] and abs(int(c_counts[0]) - int(our_counts[0])) <= 1
        elif not c_line.startswith("Total accuracy"):
            assert c_line == our_line


# --- demo-classes.sh ----------------------------------------------------------------------------------


def test_demo_classes(demo, run_w2v):
    """demo-classes.sh's line, unchanged: -classes 500 writes 'word class' lines in
    vocabulary order instead of vectors, which ``sort -k 2 -n`` groups by class."""
    code, _, _ = run_w2v(*shlex.split(DEMO_CLASSES), cwd=demo)
    assert code == 0
    lines = [line.split(" ") for line in (demo / "classes.txt").read_text().splitlines()]
    code, _, _ = run_w2v("word2vec", "-train", "text8", "-save-vocab", "vocab.txt", cwd=demo)
    assert code == 0
    assert [word for word, _ in lines] == list(vocab_file(demo / "vocab.txt"))
    classes = [int(label) for _, label in lines]
    assert min(classes) == 0 and max(classes) < 500 and len(set(classes)) > 250


# --- demo-phrases.sh and demo-phrase-accuracy.sh ------------------------------------------------------


@pytest.fixture(scope="module")
def demo_phrases(demo) -> Path:
    """demo-phrases.sh's lines, unchanged: word2phrase twice, lower-case, train."""
    for line in DEMO_PHRASES:
        done = subprocess.run([sys.executable, "-m", "w2v", *shlex.split(line)], cwd=demo, capture_output=True)
        assert done.returncode == 0, done.stderr
    phrased = (demo / "news.2012.en.shuffled-norm0-phrase1").read_text()
    (demo / "news.2012.en.shuffled-norm1-phrase1").write_text(phrased.lower())  # tr A-Z a-z
    done = subprocess.run(
        [sys.executable, "-m", "w2v", *shlex.split(DEMO_PHRASE_VECTORS)], cwd=demo, capture_output=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return demo


@pytest.mark.slow
def test_demo_phrases(demo_phrases, run_w2v):
    """Two passes join phrases of up to four words; the vectors file holds them."""
    phrased = (demo_phrases / "news.2012.en.shuffled-norm0-phrase1").read_text().split()
    joined = [w for w in phrased if "_" in w]
    assert len(joined) > 100 and max(w.count("_") for w in joined) <= 3
    assert len(phrased) + sum(w.count("_") for w in phrased) == TOKENS
    vectors = Vectors.load(demo_phrases / "vectors-phrase.bin")
    assert vectors.dim == 200 and any("_" in w for w in vectors.words)
    code, out, _ = run_w2v("distance", "vectors-phrase.bin", stdin="the\nEXIT\n", cwd=demo_phrases)
    assert code == 0 and len(table(out)) == 40


@pytest.mark.slow
def test_word2phrase_joins_as_word2phrase_c(demo_phrases):
    """word2vec.c's word2phrase, run twice on the same corpus, gives the same words."""
    first = demo_phrases / "c-phrase0"
    run_c(
        "word2phrase", "-train", "news.2012.en.shuffled-norm0", "-output", first, "-threshold", "200", cwd=demo_phrases
    )
    run_c("word2phrase", "-train", first, "-output", "c-phrase1", "-threshold", "100", cwd=demo_phrases)
    for ours, theirs in (
        ("news.2012.en.shuffled-norm0-phrase0", first),
        ("news.2012.en.shuffled-norm0-phrase1", "c-phrase1"),
    ):
        assert (demo_phrases / ours).read_text().split() == (demo_phrases / theirs).read_text().split()


@pytest.mark.slow
def test_demo_phrase_accuracy(demo_phrases, run_w2v):
    """``./compute-accuracy vectors-phrase.bin < questions-phrases.txt``: no threshold,
    all the words; the phrases are words like any other."""
    vectors = Vectors.load(demo_phrases / "vectors-phrase.bin")
    phrases = [w for w in vectors.words if "_" in w]
    assert len(phrases) >= 8
    questions = analogy_questions(phrases, 2, 4, seed=5)
    code, out, err = run_w2v("compute-accuracy", "vectors-phrase.bin", stdin=questions, cwd=demo_phrases)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "section-0:" and out.splitlines()[-1] == "Questions seen / total: 8 9   88.89 % "
    if find_c("word2vec-compute-accuracy"):
        assert_same_report(
            run_c("word2vec-compute-accuracy", "vectors-phrase.bin", stdin=questions, cwd=demo_phrases), out
        )


# --- the vocabulary ----------------------------------------------------------------------------------


def test_no_output_counts_the_vocabulary_only(demo, run_w2v):
    """Without -output nothing is trained; -save-vocab writes word2vec.c's 'word count'
    file, most frequent first, without word2vec.c's </s> entry."""
    folder = demo / "vocab-only"
    folder.mkdir()
    (folder / "text8").write_bytes((demo / "text8").read_bytes())
    code, _, err = run_w2v("word2vec", "-train", "text8", "-save-vocab", "v.txt", "-min-count", "3", cwd=folder)
    assert code == 0 and err.startswith("w2v: ") and "no -output, nothing trained" in err
    assert sorted(p.name for p in folder.iterdir()) == ["text8", "v.txt"]
    counts = vocab_file(folder / "v.txt")
    words = (folder / "text8").read_text().split()
    assert "</s>" not in counts and min(counts.values()) == 3
    assert list(counts.values()) == sorted(counts.values(), reverse=True)
    assert counts["the"] == words.count("the")


@pytest.mark.slow
def test_vocabulary_as_word2vec_c(demo, run_w2v):
    """word2vec.c's -save-vocab on the same corpus: the same words and counts, but its
    </s> (a newline read as a word)."""
    run_c("word2vec", "-train", "text8", "-save-vocab", "c-vocab.txt", "-min-count", "2", cwd=demo)
    code, _, _ = run_w2v("word2vec", "-train", "text8", "-save-vocab", "w-vocab.txt", "-min-count", "2", cwd=demo)
    assert code == 0
    theirs, ours = vocab_file(demo / "c-vocab.txt"), vocab_file(demo / "w-vocab.txt")
    assert "</s>" in theirs and "</s>" not in ours
    del theirs["</s>"]
    assert theirs == ours


def test_read_vocab_skips_c_end_of_sentence(demo, run_w2v):
    """-read-vocab takes word2vec.c's file (its </s> entry skipped); -binary 0 writes
    text even for a .bin name."""
    (demo / "given-vocab.txt").write_text("</s> 7\nthe 9\nof 8\nand 6\nrare 1\n")
    code, _, err = run_w2v(
        *shlex.split("word2vec -train text8 -read-vocab given-vocab.txt -output small.bin -size 16 -iter 1 -debug 0"),
        cwd=demo,
    )
    assert (code, err) == (0, "")
    data = (demo / "small.bin").read_text()
    assert data.startswith("3 16\nthe ") and len(data.splitlines()[1].split()) == 17
    assert Vectors.load(demo / "small.bin").words == ["the", "of", "and"]


# --- parsing word2vec.c's command line -------------------------------------------------------


def test_word2vec_defaults():
    """word2vec.c's defaults, not w2v train's: CBOW (alpha 0.05), 12 threads, text output,
    debug 2; -hs 1 keeps -negative 5."""
    run = word2vec_run(["-train", "t.txt", "-output", "v.bin"])
    assert (run.train, run.output, run.binary, run.classes, run.debug) == ("t.txt", "v.bin", False, 0, 2)
    assert (run.save_vocab, run.read_vocab) == (None, None)
    assert run.settings == {
        "model": "cbow",
        "dim": 100,
        "window": 5,
        "sample": 1e-3,
        "hs": False,
        "negative": 5,
        "threads": 12,
        "epochs": 5,
        "min_count": 5,
        "alpha": None,
    }
    assert TrainConfig(**run.settings).resolved().alpha == 0.05
    skipgram = word2vec_run(["-train", "t", "-output", "v", "-cbow", "0", "-hs", "1"]).settings
    assert (skipgram["model"], skipgram["hs"], skipgram["negative"]) == ("skipgram", True, 5)
    assert TrainConfig(**skipgram).resolved().alpha == 0.025
    given = word2vec_run([*shlex.split(DEMO_WORD)[1:], "-alpha", "0.1", "-min-count", "2"])
    assert given.binary and given.settings["alpha"] == 0.1 and given.settings["min_count"] == 2
    assert (given.settings["dim"], given.settings["window"], given.settings["negative"]) == (200, 8, 25)
    assert (given.settings["sample"], given.settings["threads"], given.settings["epochs"]) == (1e-4, 20, 15)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("-train t -output v -itre 15", "unknown option -itre (did you mean -iter?): word2vec would ignore it"),
        ("-train t -output v --size 50", "unknown option --size (did you mean -size?)"),
        ("-train t -output", "argument missing for -output"),
        ("-train t -output v -size big", "-size needs an integer, not 'big'"),
        ("-train t -output v -sample x", "-sample needs a number, not 'x'"),
        ("-train t -output v -size 0", "-size must be a positive integer, not 0"),
        ("-train t -output v -iter 0", "-iter must be a positive integer, not 0"),
        ("-train t -output v -negative 0", "nothing to train: -negative 0 and -hs 0"),
        ("-train t -output v -window 8 -window 5", "-window given twice"),
        ("-train t -output v stray", "unexpected argument 'stray': word2vec takes -flag VALUE pairs"),
        ("-output v", "give -train FILE"),
        ("-train t -output v -classes -2", "-classes must be 0 (vectors) or a number of classes, not -2"),
    ],
)
def test_word2vec_command_line_mistakes(args, message, tmp_path, run_w2v):
    """One usage error (exit 2), nothing written; word2vec.c would ignore an unknown flag."""
    (tmp_path / "t").write_text("a b c\n")
    code, out, err = run_w2v("word2vec", *shlex.split(args), cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err.startswith(f"w2v: error: {message}") and err.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["t"]
    with pytest.raises(ConfigError):
        word2vec_run(shlex.split(args))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("-train c.txt -output c.txt", "-output names the file -train reads"),
        ("-train c.txt -output c.txt -classes 3", "-output names the file -train reads"),
        ("-train c.txt -output v.txt -save-vocab c.txt", "-save-vocab names the file -train reads"),
        ("-train c.txt -output voc.txt -read-vocab voc.txt", "-output names the file -read-vocab reads"),
        ("-train c.txt -output linked.txt", "-output names the file -train reads"),
        ("-train sub/../c.txt -save-vocab ./c.txt", "-save-vocab names the file -train reads"),
    ],
)
def test_word2vec_never_replaces_its_input(args, message, tmp_path, run_w2v):
    """An output that is the corpus or the vocabulary read (by any name: a hard link,
    another path) is one usage error; the input is left as it was, nothing written."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c d\n" * 50)
    (tmp_path / "voc.txt").write_text("a 50\nb 50\n")
    (tmp_path / "sub").mkdir()
    os.link(corpus, tmp_path / "linked.txt")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
    code, out, err = run_w2v("word2vec", *shlex.split(args), "-size", "5", "-iter", "1", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err.startswith(f"w2v: error: {message}, which it would replace") and err.count("\n") == 1
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()} == before


def test_word2vec_help(run_w2v):
    """No arguments (as word2vec.c) or -h: the flags and their defaults."""
    for args in ((), ("-h",), ("--help",)):
        code, out, _ = run_w2v(
            "word2vec",
            *args,
        )
        assert code == 0 and "-hs <int>" in out and "[12]" in out
        assert "an unknown flag is an error where word2vec.c ignores it" in " ".join(out.split())


def test_train_points_to_word2vec(tmp_path, run_w2v):
    """``w2v train -train x`` and ``--cbow 1`` say where word2vec.c's flags are taken."""
    code, _, err = run_w2v("train", "-train", "x", "-output", "y", cwd=tmp_path)
    assert code == 2 and "(-train is a word2vec.c flag: 'w2v word2vec -train FILE" in err and err.count("\n") == 1
    code, _, err = run_w2v("train", "x", "--cbow", "1", cwd=tmp_path)
    assert code == 2 and "(--cbow is a word2vec.c flag" in err


def test_word2phrase_mistakes(tmp_path, run_w2v):
    code, _, err = run_w2v("word2phrase", "-train", "t", cwd=tmp_path)
    assert code == 2 and err == "w2v: error: give -output FILE\n"
    code, _, err = run_w2v("word2phrase", "-train", "t", "-output", "o", "-size", "3", cwd=tmp_path)
    assert code == 2 and err.startswith("w2v: error: unknown option -size: word2phrase would ignore it")
    code, _, err = run_w2v("word2phrase", "-train", "nope", "-output", "o", cwd=tmp_path)
    assert code == 1 and err.startswith("w2v: error: ") and not (tmp_path / "o").exists()


# --- the query tools on known vectors ------------------------------------------------------------


@pytest.fixture
def royal(tmp_path) -> Path:
    ROYAL.save(tmp_path / "royal.bin")
    return tmp_path


def test_distance_transcript(royal, run_w2v):
    """distance.c's transcript: several words are summed; an unknown word stops the line;
    blank lines ask again; EXIT ends."""
    stdin = "king\nking woman\n\nking foo man\nEXIT\nqueen\n"
    code, out, err = run_w2v("distance", "royal.bin", stdin=stdin, cwd=royal)
    assert (code, err) == (0, "")
    prompt = "Enter word or sentence (EXIT to break): "
    header = "\n" + " " * 46 + "Word       Cosine distance\n" + "-" * 72 + "\n"
    assert out == (
        prompt
        + "\nWord: king  Position in vocabulary: 2\n"
        + header
        + "".join(f"{w:>50}\t\t{s:f}\n" for w, s in ROYAL.most_similar(["king"], topn=40))
        + prompt
        + "\nWord: king  Position in vocabulary: 2\n\nWord: woman  Position in vocabulary: 1\n"
        + header
        + "".join(f"{w:>50}\t\t{s:f}\n" for w, s in ROYAL.most_similar(["king", "woman"], topn=40))
        + prompt * 2
        + "\nWord: king  Position in vocabulary: 2\n\nWord: foo  Position in vocabulary: -1\nOut of dictionary word!\n"
        + prompt
    )
    assert "    prince\t\t0.990147\n" in out


def test_word_analogy_transcript(royal, run_w2v):
    """word-analogy.c's order: 'man king woman' is king - man + woman (queen)."""
    stdin = "man king woman\nman king\nman kingz woman\n"
    code, out, err = run_w2v("word-analogy", "royal.bin", stdin=stdin, cwd=royal)
    assert (code, err) == (0, "")
    prompt = "Enter three words (EXIT to break): "
    header = "\n" + " " * 46 + "Word              Distance\n" + "-" * 72 + "\n"
    words = "".join(f"\nWord: {w}  Position in vocabulary: {i}\n" for w, i in (("man", 0), ("king", 2), ("woman", 1)))
    rows = ROYAL.analogy("king", "man", "woman", topn=40)
    assert rows[0][0] == "queen"
    assert out == (
        prompt
        + words
        + header
        + "".join(f"{w:>50}\t\t{s:f}\n" for w, s in rows)
        + prompt
        + "Only 2 words were entered.. three words are needed at the input to perform the calculation\n"
        + prompt
        + "\nWord: man  Position in vocabulary: 0\n\nWord: kingz  Position in vocabulary: -1\nOut of dictionary word!\n"
        + prompt
    )


def test_compute_accuracy_report(royal, run_w2v):
    """compute-accuracy.c's rules and format: words upper-cased; the best word but A, B
    and C answers; the threshold cuts the vocabulary; a section with no question
    answered divides by 1; semantic means the first five sections; 0 / 0 prints -nan."""
    questions = (
        ": family\nMAN KING woman queen\nman woman king queen\nman king woman apple\n: other\napple man king queen\n"
    )
    code, out, err = run_w2v("compute-accuracy", "royal.bin", stdin=questions, cwd=royal)
    assert (code, err) == (0, "")
    assert out == (
        "family:\n"
        "ACCURACY TOP1: 66.67 %  (2 / 3)\n"
        "Total accuracy: 66.67 %   Semantic accuracy: 66.67 %   Syntactic accuracy: -nan % \n"
        "other:\n"
        "ACCURACY TOP1: 0.00 %  (0 / 1)\n"
        "Total accuracy: 50.00 %   Semantic accuracy: 50.00 %   Syntactic accuracy: -nan % \n"
        "Questions seen / total: 4 4   100.00 % \n"
    )
    code, out, _ = run_w2v("compute-accuracy", "royal.bin", "4", stdin=questions, cwd=royal)
    lines = out.splitlines()  # prince and apple are out: a question with apple is not seen
    assert code == 0 and lines[1] == "ACCURACY TOP1: 100.00 %  (2 / 2)" and lines[4] == "ACCURACY TOP1: 0.00 %  (0 / 1)"
    assert lines[-1] == "Questions seen / total: 2 4   50.00 % "


def test_accuracy_report_sections():
    """Questions before any header count in the totals only; sections after the fifth
    are syntactic."""
    text = "man king woman queen\n" + "".join(f": s{i}\nman king woman queen\n" for i in range(1, 7))
    result = score_analogies(ROYAL, parse_analogies(text.splitlines(), "-"), "-", restrict=None, rule="word2vec")
    lines = list(accuracy_report(result))
    assert lines[0] == "s1:" and len(lines) == 6 * 3 + 1
    assert lines[-2] == "Total accuracy: 100.00 %   Semantic accuracy: 100.00 %   Syntactic accuracy: 100.00 % "
    assert lines[-1] == "Questions seen / total: 7 7   100.00 % "
