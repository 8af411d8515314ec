"""``w2v score``: held-out bits per word against a direct computation on a tiny model."""

import json
import math

import numpy as np
import pytest

import w2v
from w2v.cli import main
from w2v.engine.scoring import score_model
from w2v.engine.state import TrainState
from w2v.errors import CorpusError

SENTENCES = [["a", "b", "c", "d", "a", "c"], ["b", "d", "e"], ["c", "a", "b", "e", "d"]] * 30
HELD_OUT = [["a", "c", "b", "zz"], ["d", "e", "a"], ["q"]]


@pytest.fixture(scope="module", params=["skipgram", "cbow"])
def model(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.npz"
    w2v.train(SENTENCES, model=request.param, hs=True, negative=3, dim=6, window=2, min_count=1, sample=0,
              epochs=2, threads=1, seed=3, save_model=str(path))  # fmt: skip
    return TrainState.load(str(path))


def direct_predictions(state, sentences, window):
    """(hidden (D,) float64, target id, sentence index) of every prediction, by hand."""
    index = {w.decode(): i for i, w in enumerate(state.vocab.words)}
    syn0 = state.syn0.astype(np.float64)
    out = []
    for s, sentence in enumerate(sentences):
        ids = [index[w] for w in sentence if w in index]
        for p, target in enumerate(ids):
            context = [ids[q] for q in range(max(p - window, 0), min(p + window + 1, len(ids))) if q != p]
            if state.config.model == "cbow":
                if context:
                    out.append((syn0[context].mean(axis=0), target, s))
            else:
                out += [(syn0[c], target, s) for c in context]
    return out


def direct_hs(state, hidden, target):
    codes, nodes, offsets = state.vocab.huffman()
    log_p = 0.0
    for j in range(offsets[target], offsets[target + 1]):
        f = float(hidden @ state.syn1[nodes[j]].astype(np.float64))
        log_p += math.log(1 / (1 + math.exp(-f if codes[j] == 0 else f)))
    return log_p


def direct_ns(state, hidden, target):
    scores = state.syn1neg.astype(np.float64) @ hidden
    log_q = np.log(state.vocab.noise_distribution(state.config.ns_exponent))
    implied = scores + log_q
    implied_log_p = implied[target] - np.log(np.exp(implied).sum())
    return implied_log_p, scores[target] - np.log(np.exp(scores).sum()), np.log(np.exp(scores).sum())


def test_score_agrees_with_a_direct_computation(model, tmp_path):
    result = score_model(model, HELD_OUT, str(tmp_path))
    expected = direct_predictions(model, HELD_OUT, model.config.window)
    hs, ns = result.scores
    assert (hs.loss, ns.loss) == ("hs", "ns") and hs.pairs == ns.pairs == len(expected)
    assert hs.oov_tokens == 2  # zz and q
    hs_logs = [direct_hs(model, h, t) for h, t, _ in expected]
    ns_logs = [direct_ns(model, h, t) for h, t, _ in expected]
    bits = -np.mean(hs_logs) / math.log(2)
    assert hs.bits_per_word == pytest.approx(bits, rel=1e-5) and hs.perplexity == pytest.approx(2**bits, rel=1e-5)
    assert ns.bits_per_word == pytest.approx(-np.mean([x[0] for x in ns_logs]) / math.log(2), rel=1e-5)
    assert ns.bits_per_word_plain == pytest.approx(-np.mean([x[1] for x in ns_logs]) / math.log(2), rel=1e-5)
    assert ns.mean_log_z == pytest.approx(np.mean([x[2] for x in ns_logs]), rel=1e-5)
    assert ns.std_log_z == pytest.approx(np.std([x[2] for x in ns_logs]), rel=1e-4, abs=1e-6)
    unigram = model.vocab.counts / model.vocab.total
    assert hs.unigram_bits_per_word == pytest.approx(-np.mean([np.log2(unigram[t]) for _, t, _ in expected]))
    per_sentence = np.zeros(len(HELD_OUT))
    for (_, _, s), log_p in zip(expected, hs_logs, strict=True):
        per_sentence[s] += log_p / math.log(2)
    np.testing.assert_allclose(result.sentence_bits[:, 0], per_sentence, rtol=1e-5, atol=1e-12)  # "q": 0 bits


def test_hierarchical_softmax_sums_to_one_over_the_vocabulary(model):
    rng = np.random.default_rng(0)
    state = TrainState(**{**model.__dict__, "syn1": rng.standard_normal(model.syn1.shape).astype(np.float32)})
    from w2v.engine.scoring import path_log_probs

    hidden = rng.standard_normal((3, model.config.dim)).astype(np.float32)
    size = len(model.vocab)
    for h in hidden:
        logs = path_log_probs(np.repeat(h[None, :], size, axis=0), np.arange(size), state)
        assert np.exp(logs).sum() == pytest.approx(1.0, abs=1e-9)


def test_max_pairs_scores_a_seeded_sample(model, tmp_path):
    full = score_model(model, HELD_OUT * 20, str(tmp_path)).scores[0]
    sample = score_model(model, HELD_OUT * 20, str(tmp_path), max_pairs=50, seed=2).scores[0]
    again = score_model(model, HELD_OUT * 20, str(tmp_path), max_pairs=50, seed=2).scores[0]
    assert sample.pairs == 50 < full.pairs and sample == again


def test_a_corpus_with_no_known_word_is_one_error(model, tmp_path):
    with pytest.raises(CorpusError, match="nothing to score"):
        score_model(model, [["zz", "yy"]], str(tmp_path))


def test_cli_score_json_and_per_line(model, tmp_path, capsys):
    path = tmp_path / "m.npz"
    model.save(str(path))
    corpus = tmp_path / "held.txt"
    corpus.write_text("\n".join(" ".join(s) for s in HELD_OUT) + "\n")
    main(["score", str(path), str(corpus), "--json"])
    figures = json.loads(capsys.readouterr().out)
    assert figures["loss"] == "hs" and figures["other_losses"][0]["loss"] == "ns"
    assert figures["mean_log_z"] is None and figures["other_losses"][0]["mean_log_z"] is not None
    main(["score", str(path), str(corpus), "--per-line"])
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 3 and all(len(row.split("\t")) == 2 for row in rows) and rows[2] == "0.0000\t0.0000"


def test_cli_score_refuses_a_vectors_file(tmp_path, capsys):
    vectors = tmp_path / "v.txt"
    vectors.write_text("1 2\na 0.1 0.2\n")
    corpus = tmp_path / "held.txt"
    corpus.write_text("a a\n")
    with pytest.raises(SystemExit) as done:
        main(["score", str(vectors), str(corpus)])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("w2v: error: ") and err.count("\n") == 1


def test_heldout_is_scored_after_each_epoch(tmp_path):
    """``heldout``: the first loss's bits per word after each epoch, in the report and
    as on_epoch_end's third argument; a two-argument callback still works."""
    seen, old_style = [], []
    held = tmp_path / "held.txt"
    held.write_text("\n".join(" ".join(s) for s in HELD_OUT) + "\n")
    settings = dict(hs=True, negative=0, dim=6, window=2, min_count=1, sample=0, epochs=2, threads=1, seed=3)
    vectors = w2v.train(SENTENCES, heldout=str(held), heldout_pairs=None, save_model=str(tmp_path / "m.npz"),
                        on_epoch_end=lambda e, loss, bits: seen.append((e, bits)), **settings)  # fmt: skip
    assert [e for e, _ in seen] == [0, 1] and vectors.report.epoch_heldout == [bits for _, bits in seen]
    final = score_model(TrainState.load(str(tmp_path / "m.npz")), str(held), str(tmp_path)).scores[0]
    assert seen[1][1] == pytest.approx(final.bits_per_word, rel=1e-9)  # the last epoch's weights are the model's
    w2v.train(SENTENCES, heldout=str(held), on_epoch_end=lambda e, loss: old_style.append(e), **settings)
    assert old_style == [0, 1]
    plain = w2v.train(SENTENCES, **settings).report
    assert all(np.isnan(plain.epoch_heldout)) and plain.heldout_seconds == 0.0
    assert vectors.report.heldout_seconds > 0.0  # scoring is timed apart from training
