"""The vocabulary: selection and order, files, subsampling, the noise table, Huffman codes."""

import itertools
import warnings

import numpy as np
import pytest
from conftest import written_through_fifo
from reference import alias_probabilities, draw_noise

from w2v.corpus.vocab import ALIAS_ONE, MAX_CODE_LENGTH, Vocab, build_alias, huffman_codes
from w2v.errors import CorpusError, FormatError


def test_select_min_count_max_vocab_and_order():
    words = [b"a", b"b", b"c", b"d", b"e", b"f"]
    counts = np.array([3, 7, 3, 1, 7, 5])
    vocab, kept = Vocab.select(words, counts, min_count=1, max_size=None)
    assert vocab.words == [b"b", b"e", b"f", b"a", b"c", b"d"]  # ties in the given order
    assert vocab.counts.tolist() == [7, 7, 5, 3, 3, 1]
    assert vocab.counts.dtype == np.int64
    assert kept.tolist() == [1, 4, 5, 0, 2, 3]
    vocab, _ = Vocab.select(words, counts, min_count=3, max_size=None)
    assert vocab.words == [b"b", b"e", b"f", b"a", b"c"]
    assert vocab.total == 25
    vocab, _ = Vocab.select(words, counts, min_count=3, max_size=2)
    assert vocab.words == [b"b", b"e"]
    vocab, _ = Vocab.select(words, counts, min_count=8, max_size=None)
    assert len(vocab) == 0


def test_save_and_read_vocab_round_trip(tmp_path):
    vocab = Vocab([b"the", b"caf\xe9", b"\xff\xfe", b"x"], np.array([10, 4, 4, 1], dtype=np.int64))
    path = tmp_path / "vocab.txt"
    vocab.save(str(path))
    assert path.read_bytes() == b"the 10\ncaf\xe9 4\n\xff\xfe 4\nx 1\n"
    words, counts = Vocab.read_counts(str(path))
    assert words == vocab.words
    assert counts.tolist() == [10, 4, 4, 1]
    assert not list(tmp_path.glob("*.tmp*"))


def test_read_vocab_skips_newline_token_and_blank_lines(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"</s> 1000\nthe 50\n\nof 20\n")
    words, counts = Vocab.read_counts(str(path))
    assert words == [b"the", b"of"]
    assert counts.tolist() == [50, 20]


@pytest.mark.parametrize("content", [b"the\n", b"the 5 6\n", b"the five\n", b"the -5\n"])
def test_read_vocab_rejects_bad_lines(tmp_path, content):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"ok 9\n" + content)
    with pytest.raises(FormatError, match="line 2"):
        Vocab.read_counts(str(path))


def test_read_vocab_refuses_a_word_listed_twice(tmp_path):
    """It would get two rows, and two vectors in the output."""
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"the 50\nof 20\n\nthe 7\n")
    with pytest.raises(FormatError, match=rf"^{path}: 'the' is listed twice, on lines 1 and 4$"):
        Vocab.read_counts(str(path))


@pytest.mark.parametrize(
    "counts",
    [b"9223372036854775808", b"9223372036854775000", b"1" * 5000, b"1152921504606846976\nof 1"],
    ids=["past int64", "near int64's maximum", "5,000 digits", "adding up past 2**60"],
)
def test_read_vocab_refuses_counts_adding_up_past_2_60(tmp_path, counts):
    """int64 would overflow (OverflowError), or the total wrap around and the keep
    probabilities' square root be NaN."""
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"the " + counts + b"\n")
    line = counts.count(b"\n") + 1
    with pytest.raises(FormatError, match=rf"line {line}: the counts add up to more than 1,152,921,504,606,846,976"):
        Vocab.read_counts(str(path))
    path.write_bytes(b"the 1152921504606846975\nof 1\n")  # 2**60 in all: the most there may be
    assert Vocab.read_counts(str(path))[1].sum() == 2**60


def test_read_vocab_missing_file(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        Vocab.read_counts(str(tmp_path / "nope.txt"))


# ---- subsampling ----------------------------------------------------------------------


def test_keep_probabilities_match_word2vec_c():
    counts = np.array([50_000, 20_000, 5000, 700, 120, 30, 5], dtype=np.int64)
    vocab = Vocab([b"w%d" % i for i in range(len(counts))], counts)
    total = counts.sum()
    for sample in (1e-3, 1e-4, 1e-5):
        st = sample * total
        want = np.minimum((np.sqrt(counts / st) + 1) * st / counts, 1.0)
        got = vocab.keep_probabilities(sample)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert (got < 1).any()
    # sample 1e-3: s*T = 75.855; the most frequent word keeps (sqrt(50000/75.855)+1)*75.855/50000
    assert vocab.keep_probabilities(1e-3)[0] == pytest.approx(0.040467, rel=1e-4)
    assert vocab.keep_probabilities(1e-3)[-1] == 1.0
    np.testing.assert_array_equal(vocab.keep_probabilities(0.0), np.ones(len(counts), np.float32))


@pytest.mark.parametrize("sample", [1e-320, 5e-324, 1e308])
def test_keep_probabilities_of_extreme_samples_are_exact_and_quiet(sample):
    """1 / a subnormal ratio overflowed (numpy's RuntimeWarning, and every word kept where
    almost none is), and an infinite ratio made 0 x inf (a warning, and NaN kept)."""
    counts = np.array([900, 100], dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = Vocab([b"a", b"b"], counts).keep_probabilities(sample)
    with np.errstate(over="ignore"):
        ratio = np.float64(sample) * 1000 / counts
        want = np.minimum(np.sqrt(ratio) + ratio, 1.0).astype(np.float32)  # sqrt(1/r) r + r, as the limit
    np.testing.assert_array_equal(got, want)
    assert (got == (1.0 if sample > 1 else 0.0)).all()


@pytest.mark.slow
def test_cli_subsampling_with_a_subnormal_sample_prints_no_numpy_warning(tmp_path, cli, tiny_corpus):
    result = cli("train", tiny_corpus, "-o", tmp_path / "v.txt", "--sample", "1e-320", "--epochs", "1", "-q")
    assert result.returncode == 0 and result.stderr == b""


# ---- noise distribution ----------------------------------------------------------------


def zipf_vocab(size=30):
    counts = np.maximum((100_000 / np.arange(1, size + 1) ** 1.1).astype(np.int64), 1)
    counts[-3:] = 1  # ties and singletons
    return Vocab([b"w%d" % i for i in range(size)], counts)


def test_noise_distribution():
    vocab = zipf_vocab()
    probs = vocab.noise_distribution(0.75)
    want = vocab.counts.astype(float) ** 0.75
    np.testing.assert_allclose(probs, want / want.sum(), rtol=1e-12)
    np.testing.assert_allclose(vocab.noise_distribution(0.0), np.full(len(vocab), 1 / len(vocab)))


def test_an_ordinary_exponents_noise_distribution_is_word2vec_cs_powers():
    """Exactly counts**exponent / their sum: the runs' results stay what they were."""
    vocab = zipf_vocab()
    for exponent in (0.75, 0.5, 1.0, -0.5):
        powers = vocab.counts.astype(np.float64) ** exponent
        np.testing.assert_array_equal(vocab.noise_distribution(exponent), powers / powers.sum())
        np.testing.assert_array_equal(vocab.log_noise_distribution(exponent), np.log(powers / powers.sum()))


@pytest.mark.parametrize("exponent", [300.0, 1e10, -1e10, -300.0, 1e308, -1e308])
def test_every_finite_exponent_gives_a_noise_distribution(exponent):
    """The powers overflow (300: inf / inf) or underflow (-300 with no count of 1: 0 / 0)
    to NaN; in log space the distribution tends to the most frequent words (the rarest
    for a negative exponent), ties sharing it."""
    vocab = Vocab([b"w%d" % i for i in range(5)], np.array([10**15, 10**15, 4000, 20, 20], np.int64))
    probs = vocab.noise_distribution(exponent)
    assert np.isfinite(probs).all() and (probs >= 0).all() and probs.sum() == pytest.approx(1.0, abs=1e-12)
    likeliest = [0, 1] if exponent > 0 else [3, 4]
    np.testing.assert_allclose(probs[likeliest], [0.5, 0.5], rtol=1e-12)
    log_probs = vocab.log_noise_distribution(exponent)
    assert not np.isnan(log_probs).any() and log_probs.max() == pytest.approx(np.log(0.5))
    if abs(exponent) < 1e300:  # else the others' logs are below -1.8e308: -inf
        assert np.isfinite(log_probs).all()
    threshold, alias = vocab.alias_table(exponent)
    np.testing.assert_allclose(alias_probabilities(threshold, alias), probs, atol=1e-7)


@pytest.mark.parametrize("exponent", [0.75, 0.0, 1.0, 0.5])
def test_alias_table_implies_the_noise_distribution(exponent):
    vocab = zipf_vocab()
    threshold, alias = vocab.alias_table(exponent)
    assert threshold.dtype == np.uint32 and alias.dtype == np.int32
    assert threshold.max() <= ALIAS_ONE
    assert ((alias >= 0) & (alias < len(vocab))).all()
    implied = alias_probabilities(threshold, alias)
    assert implied.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(implied, vocab.noise_distribution(exponent), rtol=0, atol=1e-6)


def test_alias_edge_cases():
    threshold, alias = build_alias(np.array([1.0]))
    assert threshold.tolist() == [ALIAS_ONE] and alias.tolist() == [0]
    threshold, alias = build_alias(np.array([0.5, 0.5]))
    np.testing.assert_allclose(alias_probabilities(threshold, alias), [0.5, 0.5], atol=1e-7)
    probs = np.array([0.0, 0.25, 0.75])
    threshold, alias = build_alias(probs)
    np.testing.assert_allclose(alias_probabilities(threshold, alias), probs, atol=1e-7)


def test_noise_draws_follow_the_distribution():
    """200,000 draws with the kernel's draw logic (two LCG steps a draw), fixed seed."""
    vocab = zipf_vocab(20)
    probs = vocab.noise_distribution(0.75)
    threshold, alias = vocab.alias_table(0.75)
    r = 12345
    n = 200_000
    draws = np.empty(n, dtype=np.int64)
    for i in range(n):
        draws[i], r = draw_noise(r, threshold, alias)
    observed = np.bincount(draws, minlength=len(vocab))
    expected = probs * n
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    df = len(vocab) - 1
    assert chi2 < df + 5 * np.sqrt(2 * df)  # about p < 1e-4 for 19 degrees of freedom
    np.testing.assert_allclose(observed / n, probs, atol=0.004)


# ---- Huffman codes ----------------------------------------------------------------------


def codes_of(counts):
    codes, points, offsets = huffman_codes(np.asarray(counts, dtype=np.int64))
    return (
        [codes[offsets[w] : offsets[w + 1]].tolist() for w in range(len(counts))],
        [points[offsets[w] : offsets[w + 1]].tolist() for w in range(len(counts))],
    )


def test_huffman_small_example_by_hand():
    """word2vec.c's CreateBinaryTree on counts 10 5 3 2 1 (V = 5, inner nodes 5..8):
    node 5 = 4 + 3 (count 3; binary[3] = 1); node 6 = 5 + 2 (the tie 3 vs 3 takes the
    inner node first; binary[2] = 1); node 7 = 1 + 6 (binary[6] = 1); node 8 = 0 + 7
    (root; binary[7] = 1). Points are inner nodes minus V: the root is 3."""
    codes, points = codes_of([10, 5, 3, 2, 1])
    assert [len(c) for c in codes] == [1, 2, 3, 4, 4]
    assert codes == [[0], [1, 0], [1, 1, 1], [1, 1, 0, 1], [1, 1, 0, 0]]
    assert points == [[3], [3, 2], [3, 2, 1], [3, 2, 1, 0], [3, 2, 1, 0]]


def create_binary_tree(counts):
    """A line-by-line transcription of word2vec.c's CreateBinaryTree."""
    size = len(counts)
    count = list(counts) + [10**15] * size
    binary = [0] * (2 * size)
    parent = [0] * (2 * size)
    pos1, pos2 = size - 1, size
    for a in range(size - 1):
        mins = []
        for _ in range(2):
            if pos1 >= 0 and count[pos1] < count[pos2]:
                mins.append(pos1)
                pos1 -= 1
            else:
                mins.append(pos2)
                pos2 += 1
        count[size + a] = count[mins[0]] + count[mins[1]]
        parent[mins[0]] = parent[mins[1]] = size + a
        binary[mins[1]] = 1
    all_codes, all_points = [], []
    for a in range(size):
        code, point = [], []
        b = a
        while True:
            code.append(binary[b])
            point.append(b)
            b = parent[b]
            if b == size * 2 - 2:
                break
        i = len(code)
        word_code = [0] * i
        word_point = [0] * (i + 1)
        word_point[0] = size - 2
        for b in range(i):
            word_code[i - b - 1] = code[b]
            word_point[i - b] = point[b] - size
        all_codes.append(word_code)
        all_points.append(word_point[:i])
    return all_codes, all_points


def test_huffman_matches_word2vec_c_transcription():
    rng = np.random.default_rng(3)
    counts = np.sort(rng.zipf(1.3, size=300).clip(1, 10**6))[::-1]
    assert (np.diff(counts) == 0).any()  # ties
    assert codes_of(counts) == create_binary_tree(counts.tolist())


@pytest.mark.parametrize("size", [2, 3, 17, 500])
def test_huffman_properties(size):
    rng = np.random.default_rng(size)
    counts = np.sort(rng.integers(1, 1000, size=size))[::-1]
    codes, points = codes_of(counts)
    strings = ["".join(map(str, c)) for c in codes]
    lengths = [len(c) for c in codes]
    assert min(lengths) >= 1 and max(lengths) <= MAX_CODE_LENGTH
    assert sum(2.0**-n for n in lengths) == pytest.approx(1.0)  # a full binary tree
    ordered = sorted(strings)
    assert not any(b.startswith(a) for a, b in itertools.pairwise(ordered))  # prefix-free
    assert all(x <= y for x, y in itertools.pairwise(lengths))  # frequent: never longer
    for path in points:
        assert path[0] == size - 2
        assert all(0 <= p <= size - 2 for p in path)
        assert len(set(path)) == len(path)
    # words with a common prefix share the inner nodes along it
    for a in range(size):
        for b in range(a + 1, min(size, a + 5)):
            common = 0
            while common < min(lengths[a], lengths[b]) and codes[a][common] == codes[b][common]:
                common += 1
            assert points[a][: common + 1] == points[b][: common + 1]


def test_huffman_via_vocab_and_tiny_vocabularies():
    vocab = Vocab([b"a", b"b", b"c", b"d", b"e"], np.array([10, 5, 3, 2, 1]))
    codes, points, offsets = vocab.huffman()
    assert offsets.tolist() == [0, 1, 3, 6, 10, 14]
    assert codes.dtype == np.uint8 and points.dtype == np.int32
    codes, points, offsets = huffman_codes(np.array([7], dtype=np.int64))
    assert len(codes) == 0 and offsets.tolist() == [0, 0]


def test_save_vocab_to_a_device_writes_in_place(tmp_path):
    vocab = Vocab([b"a", b"b"], np.array([3, 2]))
    assert written_through_fifo(tmp_path, vocab.save) == b"a 3\nb 2\n"


def test_choose_refuses_an_empty_vocabulary():
    words, counts = [b"a", b"b"], np.array([3, 2])
    assert Vocab.choose(words, counts, 2, None).words == [b"a", b"b"]
    with pytest.raises(CorpusError, match=r"at least 4 times \(min_count; the most frequent occurs 3 times\)"):
        Vocab.choose(words, counts, 4, None)


def test_merged_adds_new_words_and_grows_old_counts():
    old = Vocab([b"a", b"b"], np.array([5, 4]))
    merged = old.merged([b"c", b"b", b"d"], np.array([9, 2, 1]), min_count=2)
    assert merged.words == [b"c", b"b", b"a"] and merged.counts.tolist() == [9, 6, 5]  # d: below min_count
