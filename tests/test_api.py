"""The Python API: ``w2v.train`` on in-memory sentences, its callbacks and report."""

import itertools
import math
import random
from collections import Counter

import pytest

import w2v

VOCAB = [f"w{i}" for i in range(20)]
EPOCHS = 2


@pytest.fixture(scope="module")
def sentences() -> list[list[str]]:
    rng = random.Random(1234)
    weights = [1.0 / (i + 1) for i in range(len(VOCAB))]  # Zipf-like, so counts differ
    return [rng.choices(VOCAB, weights, k=rng.randint(3, 12)) for _ in range(200)]


def train(sentences, **kwargs) -> w2v.Vectors:
    return w2v.train(sentences, min_count=1, dim=8, epochs=EPOCHS, threads=1, sample=0, seed=1, **kwargs)


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
