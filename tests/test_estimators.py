"""The softmax family beyond HS and NS: NCE, sampled and full softmax, balanced trees.

Each new loss's update is -alpha times a finite-difference gradient of its loss;
sampled softmax's expected step approaches the full softmax's as K grows, and
vanishes at the true logits for every K;
hierarchical softmax is normalised on both trees; a model trained on text from a
small Markov chain scores close to the chain's true entropy, and NCE's estimate
approaches the chain's true distribution as K grows."""

import math

import numpy as np
import pytest
from reference import numeric_gradient, settings_of

import w2v
from w2v.config import TrainConfig
from w2v.corpus.vocab import Vocab, balanced_codes
from w2v.engine import kernels
from w2v.engine.scoring import TreeScorer, score_model
from w2v.engine.weights import Tables, path_tables
from w2v.errors import ConfigError
from w2v.vectorio.modelfile import VERSION, TrainState

V, D = 9, 6
COUNTS = np.array([40, 30, 22, 17, 12, 9, 6, 4, 3], dtype=np.int64)


def tables(nce_or_softmax_rows: np.ndarray, counts: np.ndarray = COUNTS) -> Tables:
    vocab = Vocab([b"w%d" % i for i in range(len(counts))], counts)
    threshold, alias = vocab.alias_table(0.75)
    log_q = np.log(vocab.noise_distribution(0.75)).astype(np.float32)
    empty = np.zeros((0, D), np.float32)
    return Tables(empty, nce_or_softmax_rows, *path_tables(vocab, TrainConfig()), threshold, alias, log_q)


def first_draws(seed: int, samples: int, t: Tables) -> list[int]:
    """The words the kernel draws for the first example of a batch: one window step, then the draws."""
    from reference import draw_noise, lcg

    r, words = lcg(seed), []
    for _ in range(samples):
        word, r = draw_noise(r, t.alias_prob, t.alias_idx)
        words.append(word)
    return words


@pytest.mark.parametrize(
    ("kind", "beta"),
    [(kernels.NCE, 0.0), (kernels.SAMPLED_SOFTMAX, 0.0), (kernels.SOFTMAX, 0.0), (kernels.SOFTMAX, 0.5)],
)
def test_update_is_minus_alpha_times_the_gradient(kind, beta):
    """Batch [a, b], window 1: context b predicts a; the second example (context a,
    whose row is zero) moves nothing. The change of syn0[b] and of every output row is
    -alpha * dLoss/dparam, the loss being NCE's (logistic units with logits
    u . h - log(k q)), sampled softmax's (-log softmax over a and its draws of those
    logits, a draw of a itself kept: the draws here hit a once) or the full
    softmax's -log p_a + beta (log Z)^2."""
    a, b, alpha, samples = 2, 5, 0.1, 4
    rng = np.random.default_rng(1)
    syn0 = (rng.standard_normal((V, D)) * 0.3).astype(np.float32)
    syn0[a] = 0.0
    t = tables((rng.standard_normal((V, D)) * 0.3).astype(np.float32))
    wide0, out = syn0.astype(np.float64), t.syn1neg.astype(np.float64)
    # distinct draws, one of them the target for sampled softmax, none otherwise (NCE keeps
    # a hit too, but its second update of the same row is then taken after the first)
    hits = 1 if kind == kernels.SAMPLED_SOFTMAX else 0
    seed = next(
        s for s in range(1, 1000) if len(set(n := first_draws(s, samples, t))) == samples and n.count(a) == hits
    )
    noise = first_draws(seed, samples, t)
    log_q = t.log_q.astype(np.float64)

    def loss():
        h = wide0[b]
        logits = np.array([out[w] @ h - math.log(samples) - log_q[w] for w in [a, *noise]])
        if kind == kernels.NCE:
            return float(np.logaddexp(0, -logits[0]) + np.logaddexp(0, logits[1:]).sum())
        if kind == kernels.SAMPLED_SOFTMAX:
            return float(np.logaddexp.reduce(logits) - logits[0])
        s = out @ h
        log_z = float(np.logaddexp.reduce(s))
        return log_z - s[a] + beta * log_z**2

    before = syn0.copy(), t.syn1neg.copy()
    kernel = kernels.train_batch
    tokens = np.array([a, b, -1], dtype=np.int32)
    settings = settings_of(t, 1, samples, False, kind=kind, beta=beta)
    kernel(tokens, syn0, t, np.ones(V, np.float32), settings, alpha, np.uint64(seed))
    np.testing.assert_allclose(syn0[b] - before[0][b], -alpha * numeric_gradient(loss, wide0, b), atol=2e-6)
    for row in range(V):
        want = -alpha * numeric_gradient(loss, out, row)
        np.testing.assert_allclose(t.syn1neg[row] - before[1][row], want, atol=2e-6)


@pytest.mark.parametrize("size", [2, 3, 5, 8, 33])
def test_balanced_tree_paths(size):
    """Prefix-free codes of floor(log2(size - 1 + w + 1)) bits, inner nodes 0..size-2,
    the more frequent words no deeper than the rarer ones."""
    codes, nodes, offsets = balanced_codes(size)
    lengths = np.diff(offsets)
    assert (np.diff(lengths) >= 0).all() and lengths.max() - lengths.min() <= 1
    assert lengths.max() == math.ceil(math.log2(size))
    assert nodes.min() == 0 and nodes.max() == size - 2
    paths = {tuple(codes[offsets[w] : offsets[w + 1]]) for w in range(size)}
    assert len(paths) == size
    assert not any(p != q and q[: len(p)] == p for p in paths for q in paths)


def test_sampled_softmax_expected_gradient_approaches_the_full_softmax():
    """One example (context b predicts a, window 1) over 200 Zipf-distributed words:
    the context row's step averaged over 300 draws of K candidates approaches the full
    softmax's step as K grows. Measured: 0.110, 0.020, 0.0070 for K = 4, 32, 256
    (relative error of the mean step: the spread of 300 draws, for a target of
    probability 0.2%; ``test_sampled_softmax_is_consistent_at_the_true_logits`` shows
    the estimator's bias on a peaked distribution)."""
    words, a, b, alpha = 200, 3, 7, 0.01
    counts = (10_000 / np.arange(1, words + 1)).astype(np.int64) + 1
    rng = np.random.default_rng(2)
    syn0 = (rng.standard_normal((words, D)) * 0.5).astype(np.float32)
    syn0[a] = 0.0  # the second example (context a) then moves nothing the test reads
    out = (rng.standard_normal((words, D)) * 0.5).astype(np.float32)
    kernel = kernels.train_batch

    def step(kind: int, samples: int, seed: int) -> np.ndarray:
        moved = syn0.copy()
        t = tables(out.copy(), counts)
        tokens = np.array([a, b, -1], dtype=np.int32)
        settings = settings_of(t, 1, samples, False, kind=kind)
        kernel(tokens, moved, t, np.ones(words, np.float32), settings, alpha, np.uint64(seed))
        return moved[b] - syn0[b]

    full = step(kernels.SOFTMAX, 0, 1)
    errors = []
    for samples in (4, 32, 256):
        mean = np.mean([step(kernels.SAMPLED_SOFTMAX, samples, seed) for seed in range(1, 301)], axis=0)
        errors.append(float(np.linalg.norm(mean - full) / np.linalg.norm(full)))
    assert errors[0] > errors[1] > errors[2], errors
    assert errors[0] > 0.05 and errors[2] < 0.02, errors


def expected_target_step(p: np.ndarray, q: np.ndarray, samples: int, keep_hits: bool, draws: int) -> float:
    """Sampled softmax's expected gradient step on the logit of the most likely word
    o* (the negative of dLoss/ds_o*), with the logits at the truth (s = log p), the
    target t ~ p and ``samples`` draws from q with replacement, estimated from ``draws``
    examples. The loss is -log softmax over the target and the draws of the logits
    s_w - log(K q_w); its gradient in s_o* is the softmax's mass on every candidate
    that is o*, minus [t = o*]. The draws are counted per word (a multinomial), so K
    costs nothing; ``keep_hits=False`` drops the draws equal to the target."""
    rng = np.random.default_rng(7)
    targets = rng.choice(len(p), size=draws, p=p)
    counts = rng.multinomial(samples, q, size=draws).astype(np.float64)  # (draws, V)
    if not keep_hits:
        counts[np.arange(draws), targets] = 0.0
    weight = p / (samples * q)  # exp(s_w - log(K q_w)) at s = log p
    z = weight[targets] + counts @ weight
    top = int(np.argmax(p))
    mass = weight[top] * (counts[:, top] + (targets == top)) / z
    return float(np.mean((targets == top) - mass))


@pytest.mark.slow
@pytest.mark.parametrize("samples", [5, 25, 100, 1000])
def test_sampled_softmax_is_consistent_at_the_true_logits(samples):
    """At the true logits the expected step vanishes for every K when the draws that
    hit the target are kept (as the kernel does: the kernel test above checks its
    step with a hit); removing them, as TensorFlow's sampled softmax does, pushes the
    most likely word up by +0.068, +0.292, +0.430, +0.488 for K = 5, 25, 100, 1000 on
    this peaked distribution (p(o*) = 0.713), more as K grows. 10^6 examples each: a
    standard error of about 0.0005."""
    p = np.array([0.713, 0.09, 0.06, 0.04, 0.03, 0.025, 0.017, 0.015, 0.01])
    q = COUNTS**0.75 / (COUNTS**0.75).sum()
    assert abs(expected_target_step(p, q, samples, keep_hits=True, draws=1_000_000)) <= 0.005
    assert expected_target_step(p, q, samples, keep_hits=False, draws=200_000) > 0.004


@pytest.mark.parametrize("tree", ["huffman", "balanced"])
def test_hierarchical_softmax_sums_to_one_on_both_trees(tree):
    rng = np.random.default_rng(3)
    vocab = Vocab([b"w%d" % i for i in range(V)], COUNTS)
    config = TrainConfig(hs=True, tree=tree, dim=D, negative=0).resolved()
    state = TrainState(config=config, vocab=vocab, syn0=rng.standard_normal((V, D)).astype(np.float32),
                       syn1=rng.standard_normal((V - 1, D)).astype(np.float32), syn1neg=np.zeros((0, D), np.float32),
                       epoch_loss=np.zeros(5), epoch_examples=np.zeros(5, np.int64))  # fmt: skip
    for h in rng.standard_normal((4, D)).astype(np.float32):
        logs = TreeScorer.of(state).log_probs(np.repeat(h[None, :], V, axis=0), np.arange(V))
        assert np.exp(logs).sum() == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(
    "settings",
    [dict(negative=5, nce=3), dict(softmax=True, sampled_softmax=4), dict(self_norm=0.1), dict(tree="balanced")],
)
def test_combinations_that_make_no_sense_are_refused(settings):
    with pytest.raises(ConfigError):
        TrainConfig(**settings).resolved()


def test_each_new_loss_alone_turns_negative_sampling_off():
    for settings in (dict(nce=5), dict(sampled_softmax=5), dict(softmax=True), dict(hs=True)):
        assert TrainConfig(**settings).resolved().negative == 0


def chain(words: int, seed: int) -> np.ndarray:
    """A Markov chain over ``words`` states, each with 3 successors of random weight."""
    rng = np.random.default_rng(seed)
    transitions = np.zeros((words, words))
    for state in range(words):
        transitions[state, rng.choice(words, 3, replace=False)] = rng.random(3) + 0.2
    return transitions / transitions.sum(axis=1, keepdims=True)


def walk(transitions: np.ndarray, length: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    state, states = 0, []
    for _ in range(length):
        state = rng.choice(len(transitions), p=transitions[state])
        states.append(state)
    return states


def neighbour_entropy(transitions: np.ndarray, states: list[int]) -> float:
    """H(neighbour | word) in bits for window 1 on the walk's stationary counts:
    p(o | c) = (T[c, o] + R[c, o]) / 2, R the reversed chain."""
    counts = np.bincount(states, minlength=len(transitions)).astype(np.float64)
    pi = counts / counts.sum()
    reverse = (transitions * pi[:, None]).T / np.maximum(pi[:, None], 1e-300)
    neighbour = (transitions + reverse) / 2
    entropy = -(neighbour * np.log2(np.where(neighbour > 0, neighbour, 1))).sum(axis=1)
    return float((pi * entropy).sum())


def chain_score(folder, **loss):
    """Skip-gram, window 1, trained on 60,000 words of text from a 20-state chain with
    ``loss``, scored on 6,000 more: (its held-out ``Score``, the true entropy of a
    neighbour given the word on those 6,000)."""
    transitions = chain(20, seed=4)
    train_words, held_words = walk(transitions, 60_000, seed=5), walk(transitions, 6_000, seed=6)
    for name, states in (("train.txt", train_words), ("held.txt", held_words)):
        (folder / name).write_text(" ".join(f"s{s}" for s in states) + "\n")
    w2v.train(str(folder / "train.txt"), window=1, dim=24, min_count=1, sample=0, epochs=8, threads=1,
              alpha=0.05, save_model=str(folder / "m.npz"), **loss)  # fmt: skip
    state = TrainState.load(str(folder / "m.npz"))
    score = score_model(state, str(folder / "held.txt"), str(folder)).scores[0]
    return score, neighbour_entropy(transitions, held_words)


@pytest.mark.slow
@pytest.mark.parametrize("loss", [dict(softmax=True), dict(hs=True), dict(nce=25)])
def test_a_markov_chain_is_learnt_down_to_its_entropy(loss, tmp_path):
    """Skip-gram, window 1, on text from a 20-state chain: held-out bits per word near
    the true entropy of a neighbour given the word, never far below, far below unigram."""
    score, floor = chain_score(tmp_path, **loss)
    assert floor - 0.05 < score.bits_per_word < floor + 0.35, (score.bits_per_word, floor)
    assert score.unigram_bits_per_word > floor + 1.5
    if "nce" in loss:
        assert abs(score.mean_log_z) < 0.5  # self-normalised


@pytest.mark.slow
@pytest.mark.parametrize("loss", [dict(negative=5), dict(sampled_softmax=100)])
def test_sampled_losses_score_as_the_full_softmax_on_a_chain(loss, tmp_path):
    """On the chain the full softmax scores 2.3456 held-out bits per word (the
    entropy: 2.3342). Negative sampling, scored by the distribution its optimum
    implies, p ~ sigma(s + log(k q)) (its draws of the target skipped), scores 2.3452,
    where softmax(s + log q), which leaves the skipped draws out, gave 2.3529; sampled
    softmax with K = 100, keeping its draws of the target, 2.3458, where removing them
    gave 2.3604."""
    softmax, _ = chain_score(tmp_path, softmax=True)
    sampled, _ = chain_score(tmp_path, **loss)
    assert abs(sampled.bits_per_word - softmax.bits_per_word) < 0.004, (sampled.bits_per_word, softmax.bits_per_word)


def z1_divergence(state: TrainState, transitions: np.ndarray, states: list[int]) -> float:
    """The generalised KL divergence sum_o [p log(p / q) - p + q] of the model's
    unnormalised q(o | c) = exp(u_o . v_c) (Z taken as 1) from the chain's true
    neighbour distribution p(o | c), weighted by the walk's frequency of c (nats)."""
    counts = np.bincount(states, minlength=len(transitions)).astype(np.float64)
    pi = counts / counts.sum()
    reverse = (transitions * pi[:, None]).T / np.maximum(pi[:, None], 1e-300)
    truth = (transitions + reverse) / 2
    ids = np.array([int(word[1:]) for word in state.vocab.words])
    model = np.zeros_like(truth)
    model[np.ix_(ids, ids)] = np.exp(state.syn0.astype(np.float64) @ state.syn1neg.astype(np.float64).T)
    seen = pi > 0
    p, q = truth[seen], model[seen]
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / np.where(q > 0, q, 1e-300)), 0.0) - p + q
    return float((pi[seen] * terms.sum(axis=1)).sum())


@pytest.mark.slow
def test_nce_approaches_the_true_distribution_as_k_grows(tmp_path):
    """NCE is consistent for every K; with finite data its estimate is closer to the
    truth the more noise words it sees. Skip-gram, window 1, on 3,000 words of the
    20-state chain (five walks): the self-normalised model's divergence from the true
    neighbour distribution falls as K grows from 1 to 4 to 32. Measured: 0.068, 0.045,
    0.038 nats (means over the five walks)."""
    transitions = chain(20, seed=4)
    means = []
    for samples in (1, 4, 32):
        divergences = []
        for seed in range(1, 6):
            states = walk(transitions, 3000, seed=10 + seed)
            (tmp_path / "train.txt").write_text(" ".join(f"s{s}" for s in states) + "\n")
            w2v.train(str(tmp_path / "train.txt"), window=1, dim=24, min_count=1, sample=0, epochs=8, threads=1,
                      alpha=0.05, seed=seed, nce=samples, save_model=str(tmp_path / "m.npz"))  # fmt: skip
            divergences.append(z1_divergence(TrainState.load(str(tmp_path / "m.npz")), transitions, states))
        means.append(float(np.mean(divergences)))
    assert means[0] > means[1] > means[2], means
    assert means[2] < 0.75 * means[0], means


def test_model_files_of_older_versions_load_and_unknown_versions_are_refused(tmp_path):
    """Version 2 files store the losses' settings, version 3 the cluster's, version 4 a
    cluster run's momentum, version 5 blocks' settings and place; a version 1 file (hs
    and negative only) and a version 2 file load with the defaults of what they lack, a
    version 3 file with no momentum, a version 4 file of a cluster's run as one in rounds
    (its replicas'); a newer version is one clear error."""
    import json
    import zipfile

    from w2v.errors import FormatError

    path = tmp_path / "m.npz"
    w2v.train([["a", "b", "c"]] * 20, min_count=1, dim=4, epochs=1, threads=1, save_model=str(path))

    def with_version(version, drop=(), **changes):
        meta = json.loads(np.load(path)["meta"].tobytes())
        meta["version"] = version
        meta.update(changes)
        meta["config"] = {k: v for k, v in meta["config"].items() if k not in drop}
        target = tmp_path / f"v{version}.npz"
        with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w") as out:
            for item in source.namelist():
                if item != "meta.npy":
                    out.writestr(item, source.read(item))
        arrays = dict(np.load(target))
        np.savez(target, **arrays, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        return str(target)

    old = TrainState.load(with_version(1, drop=("tree", "nce", "sampled_softmax", "softmax", "self_norm")))
    assert old.config.tree == "huffman" and old.config.output_loss == "ns"
    before_cluster = TrainState.load(with_version(2, drop=("sync_words", "combine")))
    assert before_cluster.config.sync_words is None and before_cluster.config.combine == "auto"
    assert TrainState.load(with_version(3)).momentum == {}  # version 4 adds a cluster run's momentum, if any
    meta = json.loads(np.load(path)["meta"].tobytes())
    replica = {"parts": [["c.txt", 0, None]], "jobs_done": meta["jobs_done"], "batches": meta["batches"], "words": 60,
               "digest": 0}  # fmt: skip
    before_blocks = TrainState.load(with_version(4, drop=("sweeps", "rounds"), replicas=[replica]))
    assert before_blocks.config.rounds and before_blocks.config.sweeps == 4 and before_blocks.blocks == {}
    assert not TrainState.load(with_version(4, drop=("sweeps", "rounds"))).config.rounds  # one process's
    in_blocks = TrainState.load(with_version(5, replicas=[replica], blocks={"epoch": 1, "sweep": 3}))
    assert in_blocks.blocks == {"epoch": 1, "sweep": 3} and not in_blocks.config.rounds
    for bad in ({"epoch": 1, "sweep": 4}, {"epoch": 2, "sweep": 0}, {"epoch": "1", "sweep": 0}):
        with pytest.raises(FormatError, match="damaged model file"):
            TrainState.load(with_version(5, replicas=[replica], blocks=bad))
    with pytest.raises(FormatError, match=f"version {VERSION + 1} is not supported"):
        TrainState.load(with_version(VERSION + 1))
