"""Phrases: word2phrase's and npmi scores, greedy joining, passes, line structure,
bounded counting, the phrase table, and ``w2v phrases``."""

import doctest
import gzip
import math

import pytest
from click.testing import CliRunner

import w2v.corpus.phrases
from w2v.cli import cli as w2v_cli
from w2v.corpus.phrases import (
    PhraseTable,
    count_pairs,
    learn_phrases,
    phrase_sentences,
    phrased,
    pieces_of_sentences,
    pieces_of_sources,
    score,
    write_phrased,
)
from w2v.errors import ConfigError, CorpusError, FormatError

# 21 tokens: n(new) 5, n(york) 5, n(new york) 4, n(city) 2, n(york city) 2
CORPUS = "new york is big\nin new york city\nnew york city\nnew cars\nthe big apple is new york\n\nold york\n"
JOINED = "new_york is big\nin new_york city\nnew_york city\nnew cars\nthe big apple is new_york\n\nold york\n"
JOINED_TWICE = "new_york is big\nin new_york_city\nnew_york_city\nnew cars\nthe big apple is new_york\n\nold york\n"


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS)
    return path


def test_scores_are_exact():
    assert score(4, 5, 5, 21, 1) == 3 * 21 / 25 == 2.52
    assert score(2, 5, 2, 21, 1) == 2.1
    assert score(2, 5, 2, 21, 2) == 0.0
    assert score(4, 5, 5, 21, 1, "npmi") == math.log(4 * 21 / 25) / -math.log(4 / 21)
    assert score(3, 3, 3, 3, 1, "npmi") == 1.0  # a pair that is the whole corpus
    assert score(1, 10, 10, 10, 1, "npmi") == pytest.approx(-1 / math.log(10) * math.log(10))  # never together


def test_learn_table_and_join(corpus, tmp_path):
    table = learn_phrases(str(corpus), min_count=1, threshold=1)
    assert table.passes == [{(b"new", b"york"): 2.52, (b"york", b"city"): 2.1}]
    out = tmp_path / "out.txt"
    report = write_phrased([str(corpus)], table, str(out))
    assert out.read_text() == JOINED  # greedy: 'york city' loses to 'new york' before it
    assert (report.tokens_in, report.tokens_out, report.lines) == (21, 17, 7)


def test_threshold_is_strict_and_min_count_applies(corpus):
    assert learn_phrases(str(corpus), min_count=1, threshold=2.1).passes == [{(b"new", b"york"): 2.52}]
    assert learn_phrases(str(corpus), min_count=1, threshold=2.52).passes == [{}]
    # min count 2: (4 - 2) * 21 / 25 for new york; york city scores 0 and 'city' pairs are too rare
    assert learn_phrases(str(corpus), min_count=2, threshold=0).passes == [{(b"new", b"york"): 1.68}]
    # min count 3: 'city' (2) is too rare for any pair with it to be scored, even at a negative threshold
    assert learn_phrases(str(corpus), min_count=3, threshold=-100).passes == [{(b"new", b"york"): 21 / 25}]


def test_npmi_scoring(corpus):
    table = learn_phrases(str(corpus), min_count=2, scoring="npmi", threshold=0.5)
    assert table.passes == [
        {
            (b"new", b"york"): math.log(4 * 21 / 25) / -math.log(4 / 21),
            (b"york", b"city"): math.log(2 * 21 / 10) / -math.log(2 / 21),
        }
    ]
    with pytest.raises(ConfigError, match=r"npmi threshold must be in \[-1, 1\]"):
        learn_phrases(str(corpus), scoring="npmi", threshold=2)


def test_two_passes_build_longer_phrases(corpus, tmp_path):
    table = learn_phrases(str(corpus), min_count=1, threshold=1, passes=2)
    # pass 2 counts pass 1's output: 17 tokens, n(new_york city) 2, n(new_york) 4, n(city) 2
    assert table.passes[1] == {(b"new_york", b"city"): (2 - 1) * 17 / (4 * 2)}
    out = tmp_path / "out.txt"
    write_phrased(str(corpus), table, str(out))
    assert out.read_text() == JOINED_TWICE


def test_pairs_do_not_cross_lines_and_chunks_do_not_matter(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a b\nc d\n  a   b c  \n\na\tb")
    counter, total = count_pairs(pieces_of_sources([str(path)]))
    assert total == 9
    assert b"b c" in counter.ids and counter.counts[counter.ids[b"b c"]] == 1  # only inside line 3
    assert counter.counts[counter.ids[b"a b"]] == 3
    table = PhraseTable([{(b"a", b"b"): 10.0, (b"b", b"c"): 5.0}])
    expected = [([b"a_b"], True), ([b"c", b"d"], True), ([b"a_b", b"c"], True), ([], True), ([b"a_b"], True)]
    for block_bytes in (1, 2, 3, 5, 1 << 20):  # lines arrive in pieces; the result is the same

        def lines(pieces):
            result, current = [], []
            for tokens, line_end in pieces:
                current.extend(tokens)
                if line_end:
                    result.append((current, True))
                    current = []
            return result

        assert lines(phrased(pieces_of_sources([str(path)], block_bytes), table.joiners())) == expected
    out = tmp_path / "out.txt"
    write_phrased(str(path), table, str(out))
    assert out.read_text() == "a_b\nc d\na_b c\n\na_b\n"  # one space between words, empty lines kept


def test_counting_memory_is_bounded(corpus):
    counter, total = count_pairs(pieces_of_sources([str(corpus)]), prune_at=6)
    assert total == 21
    assert len(counter.ids) <= 6 and counter.min_reduce > 1
    assert counter.counts[counter.ids[b"new york"]] == 4  # frequent entries survive pruning


def test_save_load_and_apply_to_new_text(corpus, tmp_path):
    table = learn_phrases(str(corpus), min_count=1, threshold=1, passes=2, delimiter="+")
    path = tmp_path / "phrases.txt"
    table.save(str(path))
    assert path.read_text() == (
        "# w2v phrases: passes=2 scoring=default threshold=1.0 min_count=1 delimiter=+\n"
        "1 new york 2.52\n1 york city 2.1\n2 new+york city 2.125\n"
    )
    loaded = PhraseTable.load(str(path))
    assert loaded == table
    assert loaded.apply(["welcome", "to", "new", "york", "city"]) == ["welcome", "to", "new+york+city"]
    bad = tmp_path / "bad.txt"
    bad.write_text("new york 3\n")
    with pytest.raises(FormatError, match="not a w2v phrase table"):
        PhraseTable.load(str(bad))


def test_sentences_api():
    sentences = [line.split() for line in CORPUS.splitlines()]
    table = learn_phrases(sentences, min_count=1, threshold=1)
    assert table.passes == [{(b"new", b"york"): 2.52, (b"york", b"city"): 2.1}]
    assert [" ".join(s) for s in phrase_sentences(sentences, table)] == JOINED.splitlines()
    with pytest.raises(CorpusError, match="not an iterator"):
        learn_phrases(iter(sentences))
    with pytest.raises(CorpusError, match="not strings"):
        list(pieces_of_sentences(["new york"]))


def test_doctests():
    assert doctest.testmod(w2v.corpus.phrases).failed == 0


def invoke(*args):
    result = CliRunner().invoke(w2v_cli, ["phrases", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def test_cli_writes_joined_corpus_and_table(corpus, tmp_path):
    out, table = tmp_path / "out.txt.gz", tmp_path / "phrases.txt"
    result = invoke(corpus, "-o", out, "--min-count", 1, "--threshold", 1, "--save-phrases", table)
    assert gzip.decompress(out.read_bytes()).decode() == JOINED
    assert f"pass 1: 2 phrases; 7 lines, 21 tokens in, 17 out; wrote {out} and {table}" in result.output
    twice = tmp_path / "twice.txt"
    invoke(corpus, "-o", twice, "--min-count", 1, "--threshold", 1, "--passes", 2, "-q")
    assert twice.read_text() == JOINED_TWICE
    new_text = tmp_path / "new.txt"
    new_text.write_text("i left new york\nfor york city\n")
    applied = tmp_path / "applied.txt"
    invoke(new_text, "-o", applied, "--apply-phrases", table, "-q")
    assert applied.read_text() == "i left new_york\nfor york_city\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["corpus.txt", "out.txt.gz", "phrases.txt", "twice.txt", "new.txt", "applied.txt"]
    )


@pytest.mark.slow
def test_cli_stdin_and_stdout(cli, tmp_path):
    done = cli("phrases", "-", "-o", "-", "--min-count", "1", "--threshold", "1", "-q", input=CORPUS.encode())
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == JOINED


@pytest.mark.slow
def test_cli_errors_are_one_line(cli, corpus, tmp_path):
    done = cli("phrases", corpus, "-o", tmp_path / "o.txt", "--scoring", "npmi", "--threshold", "5")
    assert done.returncode == 2
    assert done.stderr == b"w2v: error: Invalid value for --threshold: the npmi threshold must be in [-1, 1], not 5\n"
    done = cli("phrases", corpus, "-o", tmp_path / "o.txt", "--apply-phrases", tmp_path / "none.txt")
    assert done.returncode == 1 and done.stderr.decode().startswith("w2v: error: phrase table not found")
    assert not (tmp_path / "o.txt").exists()


def test_train_with_phrases_trains_on_joined_words(corpus, tmp_path):
    from w2v.corpus.phrases import phrased_lines
    from w2v.vectors.wordvectors import Vectors

    table = learn_phrases(str(corpus), min_count=1, threshold=1)
    assert [b" ".join(line).decode() for line in phrased_lines(str(corpus), table)] == [
        line for line in JOINED.splitlines() if line
    ]
    assert list(phrased_lines(str(corpus), table, max_tokens=2))[:3] == [
        [b"new_york", b"is"],
        [b"big"],
        [b"in", b"new_york"],
    ]
    out = tmp_path / "v.txt"
    args = ["train", str(corpus), "-o", str(out), "--min-count", "1", "--phrases", "--phrase-threshold", "1"]
    result = CliRunner().invoke(w2v_cli, [*args, "--dim", "4", "--epochs", "1", "--threads", "1", "-q"])
    assert result.exit_code == 0, result.output
    assert sorted(Vectors.load(out).words) == sorted(set(JOINED.split()))
    done = CliRunner().invoke(w2v_cli, ["train", "-", "-o", str(out), "--phrases", "-q"])
    assert "give files, not -" in str(done.exception)


def test_special_outputs_are_written_in_place_not_replaced(tmp_path):
    from conftest import written_through_fifo

    from w2v.files import write_atomic

    assert written_through_fifo(tmp_path, lambda path: write_atomic(path, b"new_york\n")) == b"new_york\n"
