"""The Numba batch kernel against the plain-numpy reference, and a finite-difference
check of the gradient it descends."""

import numpy as np
import pytest
from reference import alias_probabilities, draw_noise, example_loss, lcg, numeric_gradient, settings_of
from reference import train_batch as reference_batch

from w2v.config import TrainConfig
from w2v.corpus.vocab import MAX_CODE_LENGTH, Vocab
from w2v.engine import kernels
from w2v.engine.weights import Tables, path_tables, subword_tables

V, D = 12, 8
COUNTS = np.array([30, 20, 15, 12, 10, 8, 6, 5, 4, 3, 2, 1], dtype=np.int64)
SEED = np.uint64(0x9E3779B97F4A7C15)


def make_vocab(counts=COUNTS):
    return Vocab([b"w%d" % i for i in range(len(counts))], np.asarray(counts, dtype=np.int64))


def batch_tokens() -> np.ndarray:
    """40 tokens: three sentences (two sentence ends inside, one at the end)."""
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, V, size=40).astype(np.int32)
    tokens[14] = -1
    tokens[29] = -1
    tokens[-1] = -1
    return tokens


SUBWORDS = TrainConfig(subwords=True, minn=2, maxn=3, bucket=9)  # words "w0".."w11": shared and colliding rows


def make_params(hs: bool, ns: bool, seed: int = 3, counts=COUNTS, subwords: bool = False):
    """Nonzero random weights (so every gradient term matters) and the vocabulary's
    tables; with ``subwords``, ``SUBWORDS``' n-gram rows and subword tables."""
    vocab = make_vocab(counts)
    size = len(counts)
    rng = np.random.default_rng(seed)
    syn0 = (rng.standard_normal((size + (SUBWORDS.bucket if subwords else 0), D)) * 0.3).astype(np.float32)
    syn1 = (rng.standard_normal((size - 1, D)) * 0.3).astype(np.float32) if hs else np.zeros((0, D), np.float32)
    syn1neg = (rng.standard_normal((size, D)) * 0.3).astype(np.float32) if ns else np.zeros((0, D), np.float32)
    threshold, alias = vocab.alias_table(0.75)
    log_q = np.log(vocab.noise_distribution(0.75)).astype(np.float32)
    words = subword_tables(vocab, SUBWORDS if subwords else TrainConfig())
    return syn0, Tables(syn1, syn1neg, *path_tables(vocab, TrainConfig(hs=hs)), threshold, alias, log_q, *words), vocab


def copy_params(params):
    return Tables(*(p.copy() for p in params))


CASES = {
    "sg-ns": dict(cbow=False, cbow_mean=True, hs=False, negative=4),
    "sg-hs": dict(cbow=False, cbow_mean=True, hs=True, negative=0),
    "cbow-ns": dict(cbow=True, cbow_mean=True, hs=False, negative=4),
    "cbow-hs": dict(cbow=True, cbow_mean=True, hs=True, negative=0),
    "sg-hs-ns": dict(cbow=False, cbow_mean=True, hs=True, negative=3),
    "cbow-hs-ns": dict(cbow=True, cbow_mean=True, hs=True, negative=3),
    "cbow-sum-ns": dict(cbow=True, cbow_mean=False, hs=False, negative=4),
    "cbow-sum-hs": dict(cbow=True, cbow_mean=False, hs=True, negative=0),
    "sg-nce": dict(cbow=False, cbow_mean=True, hs=False, negative=4, kind=kernels.NCE),
    "cbow-nce": dict(cbow=True, cbow_mean=True, hs=False, negative=4, kind=kernels.NCE),
    "sg-hs-sampled": dict(cbow=False, cbow_mean=True, hs=True, negative=5, kind=kernels.SAMPLED_SOFTMAX),
    "cbow-sampled": dict(cbow=True, cbow_mean=True, hs=False, negative=5, kind=kernels.SAMPLED_SOFTMAX),
    "sg-softmax": dict(cbow=False, cbow_mean=True, hs=False, negative=0, kind=kernels.SOFTMAX, beta=0.0),
    "cbow-softmax-self-norm": dict(cbow=True, cbow_mean=True, hs=False, negative=0, kind=kernels.SOFTMAX, beta=0.3),
}


def test_subsampling_is_on_for_some_words():
    keep = make_vocab().keep_probabilities(0.05)
    assert (keep < 1).sum() >= 2 and (keep == 1).sum() >= 2


def check_against_reference(
    case: dict, tokens: np.ndarray, window: int, counts=COUNTS, subwords=False, alpha: float = 0.05
) -> None:
    """The kernel and the numpy reference make the same updates, loss, example count
    and counts of output-row updates and of rows read and written, at learning rate ``alpha``."""
    kind, beta = case.get("kind", kernels.NS), case.get("beta", 0.0)
    output = case["negative"] > 0 or kind == kernels.SOFTMAX
    syn0, params, vocab = make_params(case["hs"], output, counts=counts, subwords=subwords)
    keep = vocab.keep_probabilities(0.05)
    settings = settings_of(params, window, case["negative"], case["cbow"], case["cbow_mean"], kind, beta)
    args = (keep, settings, alpha, SEED)
    ref_syn0, ref_params = syn0.copy(), copy_params(params)
    ref_loss, *ref_counts = reference_batch(tokens, ref_syn0, ref_params, *args)
    kernel = kernels.train_batch
    before = syn0.copy(), copy_params(params)
    loss, *counts = kernel(tokens, syn0, params, *args)
    examples = counts[0]

    assert counts == ref_counts
    assert examples > 10
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    np.testing.assert_allclose(syn0, ref_syn0, atol=1e-5, rtol=0)
    for got, want in zip(params[:2], ref_params[:2], strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    # the updates are not trivial: every matrix in use moved
    assert np.abs(syn0 - before[0]).max() > 1e-3
    for got, old in zip(params[:2], before[1][:2], strict=True):
        if got.size:
            assert np.abs(got - old).max() > 1e-3
    # the tables are read, never written
    for got, old in zip(params[2:], before[1][2:], strict=True):
        np.testing.assert_array_equal(got, old)


@pytest.mark.parametrize("name", list(CASES))
def test_kernel_matches_reference(name):
    check_against_reference(CASES[name], batch_tokens(), window=3)


@pytest.mark.parametrize("name", ["sg-ns", "sg-hs", "cbow-ns", "cbow-hs", "cbow-sum-ns", "sg-softmax"])
def test_kernel_matches_reference_with_subwords(name):
    """With subwords a word's input is the mean of its rows (its own and its n-grams',
    some shared between words and some listed twice in a word), CBOW's the mean of
    all its context words' rows together, and every row takes the gradient."""
    rows = make_params(False, True, subwords=True)[1].subword_rows
    assert len(rows) > 3 * V and len(np.unique(rows)) < len(rows)  # n-gram rows shared, or repeated
    check_against_reference(CASES[name], batch_tokens(), window=3, subwords=True)


@pytest.mark.parametrize("subwords", [False, True])
@pytest.mark.parametrize("name", ["sg-ns", "sg-hs-ns", "cbow-hs-ns"])
def test_kernel_matches_reference_with_windows_wider_than_a_chunk(name, subwords):
    """Window 12 over one 45-word sentence: skip-gram windows of up to 24 context words
    are taken in chunks of ``kernels.CHUNK`` (16), as the reference does; with
    subwords, the 25 positions in reach leave and enter again every 16 centre words."""
    assert kernels.CHUNK < 2 * 12  # the widest windows take two chunks
    tokens = np.random.default_rng(5).integers(0, V, size=46).astype(np.int32)
    tokens[-1] = -1
    check_against_reference(CASES[name], tokens, window=12, subwords=subwords)


@pytest.mark.parametrize("name", ["sg-ns", "sg-hs-ns"])
@pytest.mark.parametrize("size", [3, 3000])
def test_kernel_matches_reference_with_repeated_and_distinct_noise_words(name, size):
    """Skip-gram takes a window's noise words all at once when they and the target
    are distinct, one at a time when one repeats: among 3 words, 4 noise words and
    a target always repeat one; among 3,000 equally frequent words they almost never do."""
    counts = np.full(size, 40, dtype=np.int64)
    tokens = np.random.default_rng(size).integers(0, size, size=60).astype(np.int32)
    tokens[[25, 59]] = -1
    check_against_reference(CASES[name], tokens, window=3, counts=counts)


@pytest.mark.slow
@pytest.mark.parametrize("window", [5, 12, 20])
@pytest.mark.parametrize("negative", [5, 39, 40, 64, 200])
@pytest.mark.parametrize("kind", [kernels.NS, kernels.NCE, kernels.SAMPLED_SOFTMAX])
def test_kernel_matches_reference_with_many_noise_words_and_wide_windows(kind, negative, window):
    """A draw of K noise words among 3,000 equally frequent words is almost always
    distinct, and skip-gram takes its K + 1 rows against up to 16 context words at
    once: from K = 40 the (row, input) pairs outnumber the buffer that holds them
    (``kernels.UNITS``), and the rows go in pieces that fit. The learning rate
    falls with K, so that K steps on one input keep it finite."""
    case = dict(cbow=False, cbow_mean=True, hs=False, negative=negative, kind=kind)
    counts = np.full(3000, 40, dtype=np.int64)
    tokens = np.random.default_rng(window).integers(0, 3000, size=50).astype(np.int32)
    tokens[-1] = -1
    check_against_reference(case, tokens, window=window, counts=counts, alpha=min(0.05, 1.0 / negative))


@pytest.mark.parametrize("name", ["sg-hs", "cbow-hs", "sg-hs-ns"])
def test_kernel_matches_reference_on_the_longest_huffman_paths(name):
    """Fibonacci counts make the deepest Huffman tree there is: the rarest words'
    paths are ``MAX_CODE_LENGTH`` (40) nodes, as many as the kernel keeps logits for."""
    fibonacci = [1, 1]
    while len(fibonacci) < MAX_CODE_LENGTH + 1:
        fibonacci.append(fibonacci[-1] + fibonacci[-2])
    counts = np.array(fibonacci[::-1], dtype=np.int64)
    _, _, offsets = make_vocab(counts).huffman()
    assert np.diff(offsets).max() == MAX_CODE_LENGTH
    rng = np.random.default_rng(11)
    tokens = rng.integers(len(counts) - 6, len(counts), size=60).astype(np.int32)  # the rarest, deepest words
    tokens[[20, 41, 59]] = -1
    check_against_reference(CASES[name], tokens, window=4, counts=counts)


def test_kernel_is_deterministic_per_seed():
    kernel = kernels.train_batch
    results = []
    for seed in (SEED, SEED, np.uint64(12345)):
        syn0, params, vocab = make_params(False, True)
        settings = settings_of(params, 3, 4, False)
        loss, _, _, _ = kernel(batch_tokens(), syn0, params, vocab.keep_probabilities(0.05), settings, 0.05, seed)
        results.append((loss, syn0))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert not np.array_equal(results[0][1], results[2][1])


def test_examples_counted_per_pair_and_per_centre_word():
    """Window 1, no subsampling: [a b c] gives 4 skip-gram pairs and [d e] 2; CBOW
    counts one example per centre word with a context (3 + 2); [f] alone gives none."""
    kernel = kernels.train_batch
    tokens = np.array([1, 2, 3, -1, 4, 5, -1, 6, -1], dtype=np.int32)  # a one-word sentence gives nothing
    keep = np.ones(V, np.float32)
    for cbow, want in ((False, 6), (True, 5)):
        syn0, params, _ = make_params(False, True)
        _, examples, _, _ = kernel(tokens, syn0, params, keep, settings_of(params, 1, 2, cbow), 0.025, SEED)
        assert examples == want


def test_output_rows_counted_per_example():
    """Each example counts its output rows: 1 + k candidates for NCE and sampled softmax
    (every draw kept), every word for the full softmax, the target's path with
    hierarchical softmax (window 1, no subsampling: the examples are known); the rows
    read and written count each window's output rows once."""
    kernel = kernels.train_batch
    tokens = np.array([1, 2, 3, -1, 4, 5, -1, 6, -1], dtype=np.int32)
    keep = np.ones(V, np.float32)
    for cbow in (False, True):
        for kind, samples in ((kernels.NCE, 2), (kernels.SAMPLED_SOFTMAX, 2), (kernels.SOFTMAX, 0)):
            syn0, params, _ = make_params(False, True)
            settings = settings_of(params, 1, samples, cbow, kind=kind)
            _, examples, updates, visits = kernel(tokens, syn0, params, keep, settings, 0.025, SEED)
            rows = params.syn1neg.shape[0] if kind == kernels.SOFTMAX else 1 + samples
            assert (examples, updates) == (6 if not cbow else 5, examples * rows)
            assert visits == 5 * rows + 6  # a window's output rows once, each of its context words once
        syn0, params, _ = make_params(True, False)
        path = np.diff(params.path_offsets)
        pairs = {1: 1, 2: 2, 3: 1, 4: 1, 5: 1}  # skip-gram's context words per centre word
        _, _, updates, _ = kernel(tokens, syn0, params, keep, settings_of(params, 1, 0, cbow), 0.025, SEED)
        assert updates == sum(path[w] * (1 if cbow else n) for w, n in pairs.items())


def test_lcg_and_draw_match_reference():
    vocab = make_vocab()
    threshold, alias = vocab.alias_table(0.75)
    state = np.uint64(SEED)
    r = int(SEED)
    for _ in range(500):
        word, state = kernels.draw_noise(np.uint64(state), threshold, alias)  # keep the state uint64
        want, r = draw_noise(r, threshold, alias)
        assert int(word) == want
        assert int(state) == r
    assert int(kernels.lcg_next(np.uint64(1))) == lcg(1) == 25214903928
    assert int(kernels.lcg_next(np.uint64(2**64 - 1))) == lcg(2**64 - 1)


def test_alias_reference_distribution_is_the_noise_distribution():
    vocab = make_vocab()
    threshold, alias = vocab.alias_table(0.75)
    np.testing.assert_allclose(alias_probabilities(threshold, alias), vocab.noise_distribution(0.75), atol=1e-6)


# ---- finite differences ---------------------------------------------------------------


def first_example_noise(seed: int, negative: int, target: int, threshold, alias):
    """The noise words the kernel draws for the first example of a batch with no
    subsampling: one window step, then ``negative`` alias draws."""
    r = lcg(seed)
    noise = []
    for _ in range(negative):
        word, r = draw_noise(r, threshold, alias)
        noise.append(word)
    return noise


@pytest.mark.parametrize("hs,negative", [(False, 5), (True, 0), (True, 3)])
def test_skipgram_update_is_minus_alpha_times_gradient(hs, negative):
    """Batch [a, b], window 1: the first example is context b -> centre a. The
    second (context a -> centre b) has input row a set to zero, so it changes no
    output row; hence the changes of syn0[b] and of the output rows are exactly the
    first example's SGD step, -alpha * dLoss/dparam, with the loss of
    ``reference.example_loss`` (softplus NLL in nats)."""
    a, b, alpha = 2, 5, 0.1
    syn0, params, _ = make_params(hs, negative > 0, seed=11)
    syn1, syn1neg, nodes, labels, offsets, threshold, alias, _ = params[:8]
    syn0[a] = 0.0
    # a seed whose noise words are distinct and differ from the target, so that
    # one step of SGD equals the sequential updates of the kernel exactly
    seed = next(
        s
        for s in range(1, 1000)
        if len(set(n := first_example_noise(s, negative, a, threshold, alias))) == negative and a not in n
    )
    noise = first_example_noise(seed, negative, a, threshold, alias)
    # f stays clear of HS's |f| >= 6 cut-off
    syn0_64 = syn0.astype(np.float64)
    syn1_64 = syn1.astype(np.float64) if hs else None
    syn1neg_64 = syn1neg.astype(np.float64) if negative else None

    def loss():
        return example_loss(syn0_64[b], a, syn1_64, syn1neg_64, nodes, labels, offsets, noise)

    assert loss() > 0
    before = syn0.copy(), syn1.copy(), syn1neg.copy()
    kernel = kernels.train_batch
    tokens = np.array([a, b, -1], dtype=np.int32)
    settings = settings_of(params, 1, negative, False)
    _, examples, _, _ = kernel(tokens, syn0, params, np.ones(V, np.float32), settings, alpha, np.uint64(seed))
    assert examples == 2

    np.testing.assert_allclose(syn0[b] - before[0][b], -alpha * numeric_gradient(loss, syn0_64, b), atol=2e-6)
    rows = []
    if hs:
        rows += [(syn1, before[1], syn1_64, int(n)) for n in nodes[offsets[a] : offsets[a + 1]]]
    if negative:
        rows += [(syn1neg, before[2], syn1neg_64, int(w)) for w in [a, *noise]]
    assert rows
    for now, old, wide, row in rows:
        want = -alpha * numeric_gradient(loss, wide, row)
        assert np.abs(want).max() > 1e-4
        np.testing.assert_allclose(now[row] - old[row], want, atol=2e-6)
    if negative:
        untouched = np.ones(len(syn1neg), bool)
        untouched[[a, *noise]] = False
        np.testing.assert_array_equal(syn1neg[untouched], before[2][untouched])
    if hs:
        others = np.setdiff1d(np.arange(len(syn1)), nodes[offsets[a] : offsets[a + 1]])
        np.testing.assert_array_equal(syn1[others], before[1][others])


def test_cbow_mean_update_is_minus_alpha_times_hidden_gradient():
    """CBOW, hierarchical softmax, mean of the context, batch [a, t, c] with window 1.

    Only the middle example (centre t, context {a, c}) is live: syn0[b...] is built
    so that the first and last examples (context row t alone) have |f| >= 6 at every
    node and so change nothing (word2vec.c's rule). For the live example,
    hidden = (x_a + x_c) / 2 and the loss is HS's softplus NLL along t's path.

    word2vec.c adds the hidden gradient to each context row *unscaled*: the change of
    x_a is -alpha * dLoss/dhidden = -alpha * 2 * dLoss/dx_a, not -alpha * dLoss/dx_a.
    """
    a, t, c, alpha = 3, 0, 7, 0.1
    syn0, params, _ = make_params(True, False, seed=5)
    syn1, _, nodes, labels, offsets, _, _, _ = params[:8]
    syn0[:, 0] = 0.0
    syn0[t, 0] = 30.0  # dead examples: f = 30 * 1 + small
    syn1[:, 0] = 1.0
    path = nodes[offsets[t] : offsets[t + 1]]
    assert len(path) >= 2

    syn0_64 = syn0.astype(np.float64)
    syn1_64 = syn1.astype(np.float64)

    def loss():
        hidden = (syn0_64[a] + syn0_64[c]) / 2
        return example_loss(hidden, t, syn1_64, None, nodes, labels, offsets, [])

    for word in (a, c):  # the dead examples really are dead
        for j in range(offsets[word], offsets[word + 1]):
            assert abs(float(syn0[t] @ syn1[nodes[j]])) >= 6
    before = syn0.copy(), syn1.copy()
    kernel = kernels.train_batch
    tokens = np.array([a, t, c, -1], dtype=np.int32)
    _, examples, _, _ = kernel(
        tokens, syn0, params, np.ones(V, np.float32), settings_of(params, 1, 0, True), alpha, SEED
    )
    assert examples == 3

    for word in (a, c):
        got = syn0[word] - before[0][word]
        np.testing.assert_allclose(got, -alpha * 2 * numeric_gradient(loss, syn0_64, word), atol=2e-6)
        assert np.abs(got).max() > 1e-4
    np.testing.assert_array_equal(syn0[t], before[0][t])
    for node in path:
        want = -alpha * numeric_gradient(loss, syn1_64, int(node))
        np.testing.assert_allclose(syn1[node] - before[1][node], want, atol=2e-6)
    others = np.setdiff1d(np.arange(len(syn1)), path)
    np.testing.assert_array_equal(syn1[others], before[1][others])


def zipf_counts(words: int, seed: int = 2) -> np.ndarray:
    """Counts of ``words`` words, most frequent first, with ties."""
    return np.sort(np.random.default_rng(seed).zipf(1.3, words))[::-1].astype(np.int64)


@pytest.mark.parametrize("tree", ["huffman", "balanced"])
def test_the_copied_rows_are_the_top_of_the_tree(tree):
    """``top_of_tree``: the ``TOP_NODES`` rows a batch copies hold the root, and every
    word's path starts in them and, once out, never comes back."""
    counts = zipf_counts(2000)
    vocab = make_vocab(counts)
    syn1 = np.zeros((len(counts) - 1, D), np.float32)
    tables = Tables(syn1, syn1[:0], *path_tables(vocab, TrainConfig(hs=True, tree=tree)), counts, counts, counts)
    first, rows = kernels.top_of_tree(tables, settings_of(tables, 1, 0, False))
    assert rows == kernels.TOP_NODES and first >= 0 and first + rows <= len(syn1)
    nodes, offsets = tables.path_nodes, tables.path_offsets
    for word in range(len(counts)):
        path = nodes[offsets[word] : offsets[word + 1]]
        inside = (first <= path) & (path < first + rows)
        assert inside[0] and not np.any(np.diff(inside.astype(np.int8)) > 0)
    assert np.unique(nodes[(first <= nodes) & (nodes < first + rows)]).size == rows  # every copied row is used


def test_a_merge_adds_its_weight_of_the_copys_change():
    """``merge_top``: the shared rows gain ``weight`` times the copy's change since its
    start, on top of what other threads did to them; the other rows stay."""
    rng = np.random.default_rng(4)
    syn1 = rng.standard_normal((6, D)).astype(np.float32)
    start = syn1[2:5].copy()
    copy = start + rng.standard_normal((3, D)).astype(np.float32) * 0.1
    syn1[3, :4] += np.float32(0.5)  # another thread's change
    before, change = syn1.copy(), copy - start
    kernels.merge_top(syn1, 2, copy, start, np.float32(0.5), D)
    np.testing.assert_array_equal(syn1[[0, 1, 5]], before[[0, 1, 5]])
    np.testing.assert_allclose(syn1[2:5], before[2:5] + 0.5 * change, rtol=1e-6)


@pytest.mark.parametrize("tree", ["huffman", "balanced"])
@pytest.mark.parametrize("case", ["sg-hs", "cbow-hs", "sg-hs-ns", "cbow-sum-hs"])
def test_a_batch_trains_the_top_of_the_tree_in_its_copy(case, tree):
    """``sharers``: with T threads sharing the weights, a batch trains the top of the
    tree in its own copy and returns 1/T of the copy's change at its end. Called
    alone, it trains everything as a batch without the copy would (up to the order
    of float additions, which the compiler may choose differently for the copy's rows
    on the stack), but the top rows end at 1/T of their change. The vocabulary's 60
    words make the paths deeper than the copy, so they run through both."""
    chosen = CASES[case]
    counts = zipf_counts(60, seed=5)
    vocab = make_vocab(counts)
    syn0, params, _ = make_params(True, chosen["negative"] > 0, counts=counts)
    paths = path_tables(vocab, TrainConfig(hs=True, tree=tree))
    params = params._replace(**dict(zip(("path_nodes", "path_labels", "path_offsets"), paths, strict=True)))
    tokens = np.random.default_rng(8).integers(0, len(counts), 400).astype(np.int32)
    tokens[::37] = -1
    keep = np.ones(len(counts), np.float32)
    kernel = kernels.train_batch
    results = []
    for sharers in (1, 4):
        moved_syn0, moved = syn0.copy(), copy_params(params)
        settings = settings_of(params, 3, chosen["negative"], chosen["cbow"], chosen["cbow_mean"], sharers=sharers)
        loss, examples, _, _ = kernel(tokens, moved_syn0, moved, keep, settings, 0.05, SEED)
        results.append((moved_syn0, moved.syn1, moved.syn1neg, loss, examples))
    (syn0_a, syn1_a, neg_a, loss_a, n_a), (syn0_b, syn1_b, neg_b, loss_b, n_b) = results
    assert n_a == n_b > 100 and loss_b == pytest.approx(loss_a, rel=1e-6)
    first, rows = kernels.top_of_tree(params, settings)
    top = np.arange(first, first + rows)
    want = syn1_a.copy()
    want[top] = params.syn1[top] + (syn1_a[top] - params.syn1[top]) / 4
    for got, expected in ((syn0_b, syn0_a), (syn1_b, want), (neg_b, neg_a)):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert np.abs(syn1_a[top] - params.syn1[top]).min(axis=1).max() > 1e-3  # the top rows moved
