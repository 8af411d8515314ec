"""``w2v score``: held-out bits per word against a direct computation on a tiny model."""

import json
import math
import re

import numpy as np
import pytest

import w2v
from w2v.cli import main
from w2v.engine.heldout_sample import Sampling
from w2v.engine.scoring import score_model
from w2v.errors import CorpusError
from w2v.vectorio.modelfile import TrainState

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
    draws = state.config.negative
    implied = -np.logaddexp(0, -(scores + np.log(draws) + log_q))  # log sigma(s + log(k q)): p / (1 - p) = k q e^s
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
    from w2v.engine.scoring import TreeScorer

    hidden = rng.standard_normal((3, model.config.dim)).astype(np.float32)
    size = len(model.vocab)
    for h in hidden:
        logs = TreeScorer.of(state).log_probs(np.repeat(h[None, :], size, axis=0), np.arange(size))
        assert np.exp(logs).sum() == pytest.approx(1.0, abs=1e-9)


def test_max_pairs_scores_a_seeded_sample(model, tmp_path):
    full = score_model(model, HELD_OUT * 20, str(tmp_path)).scores[0]
    sample = score_model(model, HELD_OUT * 20, str(tmp_path), sampling=Sampling(50, seed=2)).scores[0]
    again = score_model(model, HELD_OUT * 20, str(tmp_path), sampling=Sampling(50, seed=2)).scores[0]
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
    assert vectors.report.epoch_heldout_se == [0.0, 0.0]  # every prediction scored
    final = score_model(TrainState.load(str(tmp_path / "m.npz")), str(held), str(tmp_path)).scores[0]
    assert seen[1][1] == pytest.approx(final.bits_per_word, rel=1e-9)  # the last epoch's weights are the model's
    w2v.train(SENTENCES, heldout=str(held), on_epoch_end=lambda e, loss: old_style.append(e), **settings)
    assert old_style == [0, 1]
    plain = w2v.train(SENTENCES, **settings).report
    assert all(np.isnan(plain.epoch_heldout)) and plain.heldout_seconds == 0.0
    assert vectors.report.heldout_seconds > 0.0  # scoring is timed apart from training


def test_heldout_with_its_standard_error_as_a_fourth_argument(tmp_path):
    """A sampled held-out score comes with its standard error, given to a callback
    taking four arguments and kept in the report."""
    held = tmp_path / "held.txt"
    held.write_text("\n".join(" ".join(s) for s in HELD_OUT * 40) + "\n")
    seen = []
    settings = dict(negative=3, dim=6, window=2, min_count=1, sample=0, epochs=2, threads=1, seed=3)
    record = lambda e, loss, bits, error: seen.append((bits, error))  # noqa: E731
    report = w2v.train(SENTENCES, heldout=str(held), heldout_pairs=300, heldout_normalised=30,
                       on_epoch_end=record, **settings).report  # fmt: skip
    assert [bits for bits, _ in seen] == report.epoch_heldout and [e for _, e in seen] == report.epoch_heldout_se
    assert all(0.0 < error < 1.0 for _, error in seen)


@pytest.fixture(scope="module")
def noise_model(tmp_path_factory):
    """Skip-gram and CBOW models with negative sampling."""
    folder = tmp_path_factory.mktemp("noise")
    models = {}
    for name in ("skipgram", "cbow"):
        path = folder / f"{name}.npz"
        w2v.train(SENTENCES, model=name, negative=3, dim=6, window=2, min_count=1, sample=0, epochs=2, threads=1,
                  seed=3, save_model=str(path))  # fmt: skip
        models[name] = TrainState.load(str(path))
    return models


@pytest.mark.parametrize("name", ["skipgram", "cbow"])
def test_a_normalised_subsample_estimates_the_exact_figure_within_its_standard_error(noise_model, name, tmp_path):
    """``log p = c_o - log Z``: c_o over the predictions scored, log Z over a subsample.
    Over 40 seeds the estimates centre on the exact figure and spread as their
    standard error says (two-phase sampling, ``scoring.Totals``)."""
    state, corpus = noise_model[name], HELD_OUT * 200
    exact = score_model(state, corpus, str(tmp_path)).scores[0]
    assert exact.standard_error == 0.0 and exact.normalised == exact.pairs
    estimates = [score_model(state, corpus, str(tmp_path), sampling=Sampling(600, 60, seed)).scores[0]
                 for seed in range(40)]  # fmt: skip
    bits = np.array([e.bits_per_word for e in estimates])
    errors = np.array([e.standard_error for e in estimates])
    assert all(e.pairs == 600 and e.normalised == 60 for e in estimates)
    assert abs(bits.mean() - exact.bits_per_word) < 3 * errors.mean() / math.sqrt(len(bits))
    assert 0.6 < bits.std(ddof=1) / errors.mean() < 1.5
    only_normalised = score_model(state, corpus, str(tmp_path), sampling=Sampling(None, 100, 1)).scores[0]
    assert only_normalised.pairs == exact.pairs and only_normalised.normalised == 100
    assert abs(only_normalised.bits_per_word - exact.bits_per_word) < 4 * only_normalised.standard_error


def test_cli_prints_the_standard_error_of_a_sampled_figure(tmp_path, capsys):
    """``train --heldout`` prints each epoch's figure with its standard error; ``w2v
    score`` prints one only when it samples."""
    corpus, held = tmp_path / "c.txt", tmp_path / "held.txt"
    corpus.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n")
    held.write_text("\n".join(" ".join(s) for s in HELD_OUT * 40) + "\n")
    main(["train", str(corpus), "-o", str(tmp_path / "v.bin"), "--dim", "6", "--min-count", "1", "--epochs", "2",
          "--threads", "1", "--heldout", str(held), "--heldout-normalised", "20",
          "--save-model", str(tmp_path / "m.npz")])  # fmt: skip
    epochs = [line for line in capsys.readouterr().err.splitlines() if line.startswith("w2v: epoch")]
    assert [line.split(":")[1] for line in epochs] == [" epoch 1", " epoch 2"]
    shape = r"w2v: epoch \d: loss [\d.]+; held-out [\d.]+ ± 0\.\d{4} bits per word \(± its sampling standard error\), "
    assert all(re.fullmatch(shape + r"unigram model ([\d.]+)", e) for e in epochs)
    main(["score", str(tmp_path / "m.npz"), str(held)])
    exact = capsys.readouterr().out
    assert "±" not in exact and re.match(r"ns: [\d.]+ bits per word \(exact\), perplexity", exact)
    unigram = re.search(r"unigram model ([\d.]+) bits per word", exact)
    assert unigram is not None and all(e.endswith(f"unigram model {unigram[1]}") for e in epochs)  # the same baseline
    main(["score", str(tmp_path / "m.npz"), str(held), "--max-normalised", "20"])
    sampled = r"ns: [\d.]+ ± 0\.\d{4} bits per word \(± its sampling standard error\), perplexity [\d.,]+, on "
    assert re.match(sampled, capsys.readouterr().out)


def test_the_unigram_baseline_is_a_fifth_argument_and_in_the_report(tmp_path):
    """The unigram model's bits per word on the held-out predictions, the figure's
    baseline: given to a callback taking five arguments, the same every epoch, kept in
    the report, and what ``w2v score`` finds for the model."""
    held = tmp_path / "held.txt"
    held.write_text("\n".join(" ".join(s) for s in HELD_OUT * 40) + "\n")
    seen = []
    settings = dict(negative=3, dim=6, window=2, min_count=1, sample=0, epochs=2, threads=1, seed=3)
    record = lambda e, loss, bits, error, unigram: seen.append(unigram)  # noqa: E731
    report = w2v.train(SENTENCES, heldout=str(held), heldout_pairs=300, heldout_normalised=30, on_epoch_end=record,
                       save_model=str(tmp_path / "m.npz"), **settings).report  # fmt: skip
    final = score_model(TrainState.load(str(tmp_path / "m.npz")), str(held), str(tmp_path)).scores[0]
    assert seen == [report.heldout_unigram] * 2 and report.heldout_unigram == pytest.approx(final.unigram_bits_per_word)
    assert json.loads(report.to_json())["heldout_unigram"] == report.heldout_unigram
    assert json.loads(w2v.train(SENTENCES, **settings).report.to_json())["heldout_unigram"] is None  # not scored


def skewed_text(tokens: int, seed: int) -> str:
    """Lines of words drawn at random, one of them ("the") half the time: a text whose
    frequent word subsampling thins out far more than the others."""
    rng = np.random.default_rng(seed)
    others = [f"w{i}" for i in range(20)]
    words = [("the" if rng.random() < 0.5 else others[rng.integers(20)]) for _ in range(tokens)]
    return "\n".join(" ".join(words[i : i + 10]) for i in range(0, tokens, 10)) + "\n"


def test_a_subsampled_model_above_the_unigram_model_gets_one_line_saying_why(tmp_path, capsys):
    """Trained with --sample, a model under-predicts the frequent words of raw text and
    can score above the unigram model: train --heldout and score say so in one note
    line each, naming what to compare instead; without subsampling, no note."""
    corpus, held = tmp_path / "c.txt", tmp_path / "held.txt"
    corpus.write_text(skewed_text(20_000, 1))
    held.write_text(skewed_text(2_000, 2))
    common = ["--dim", "8", "--min-count", "1", "--epochs", "2", "--threads", "1", "--hs", "--negative", "0"]
    for sample in ("1e-3", "0"):
        model = tmp_path / f"m{sample}.npz"
        main(["train", str(corpus), "-o", str(tmp_path / "v.bin"), *common, "--sample", sample,
              "--heldout", str(held), "--save-model", str(model)])  # fmt: skip
        notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("w2v: note: hs scores")]
        main(["score", str(model), str(held)])
        scored = capsys.readouterr()
        bits, unigram = map(float, re.findall(r"([\d.]+) bits per word", scored.out)[:2])
        if sample == "0":
            assert notes == [] and "note" not in scored.err
            continue
        assert bits > unigram  # the case the note is for
        assert len(notes) == 1 and notes[0].startswith(f"w2v: note: hs scores {bits:.2f} bits per word, above the ")
        assert "trained with --sample 0.001" in notes[0] and "Compare models trained with the same --sample" in notes[0]
        assert scored.err.splitlines() == [notes[0]]


def test_score_labels_the_raw_scores_figures_as_diagnostics(noise_model, tmp_path, capsys):
    """The second line of a word-output loss names its figures for what they are: not
    scores; exp(s) as probabilities (Z = 1) is a score only where log Z is near 0;
    softmax(s) is given where the loss's own distribution is another (negative
    sampling's), not where it is softmax(s) itself (NCE)."""
    held = tmp_path / "held.txt"
    held.write_text("\n".join(" ".join(s) for s in HELD_OUT) + "\n")
    path = tmp_path / "ns.npz"
    noise_model["skipgram"].save(str(path))
    main(["score", str(path), str(held)])
    _, second = capsys.readouterr().out.splitlines()
    assert re.fullmatch(
        r"ns diagnostics, not scores: softmax\(s\) [\d.]+ bits per word \(the raw scores, without negative "
        r"sampling's correction\); exp\(s\) taken as probabilities \(Z = 1\) [\d.]+, a score only where log Z is "
        r"near 0: here log Z mean -?[\d.]+ nats, sd [\d.]+",
        second,
    )
    nce = tmp_path / "nce.npz"
    w2v.train(SENTENCES, nce=3, dim=6, window=2, min_count=1, sample=0, epochs=1, threads=1, save_model=str(nce))
    main(["score", str(nce), str(held)])
    second = capsys.readouterr().out.splitlines()[1]
    assert second.startswith("nce diagnostics, not scores: exp(s) taken as probabilities (Z = 1) ")
