"""The trainer: schedule, seeds, weights, the Python API, formats, determinism, and
end-to-end quality on the 6 MB Wikipedia slice."""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading

import numba
import numpy as np
import pytest
from conftest import TINY_LINES, ctrl_c_by_default
from reference import read_word2vec

import w2v
from w2v.config import TrainConfig
from w2v.corpus import chunkcounter
from w2v.corpus.counting import count_words
from w2v.corpus.idstream import encode_corpus
from w2v.corpus.vocab import Vocab
from w2v.engine import kernels
from w2v.engine.runloop import Hooks, learning_rate
from w2v.engine.weights import Model, init_input_vectors
from w2v.engine.workers import THREAD_STACK_SPARE, Progress, batch_seed, run_epochs, stream_offsets, thread_stack
from w2v.errors import ConfigError, CorpusError, W2VError
from w2v.interrupts import signals_held
from w2v.vectors.wordvectors import Vectors

DIM = 16  # one kernel for all the small runs here


def test_learning_rate_is_linear_and_clamped():
    assert learning_rate(0.025, 0.0025, 0.0) == 0.025
    assert learning_rate(0.025, 0.0025, 1.0) == pytest.approx(0.0025)
    assert learning_rate(0.025, 0.0025, 0.5) == pytest.approx(0.01375)
    assert learning_rate(0.025, 0.0025, 0.25) == pytest.approx(0.025 - 0.0225 * 0.25)
    assert learning_rate(0.025, 0.0025, -3.0) == 0.025
    assert learning_rate(0.025, 0.0025, 7.0) == pytest.approx(0.0025)
    xs = np.linspace(0, 1, 11)
    ys = [learning_rate(0.05, 0.001, x) for x in xs]
    np.testing.assert_allclose(np.diff(ys), np.full(10, -0.0049), rtol=1e-9)


def test_batch_seed_is_a_fixed_function_of_seed_and_job():
    seeds = [int(batch_seed(1, job)) for job in range(1000)]
    assert len(set(seeds)) == 1000
    assert seeds == [int(batch_seed(1, job)) for job in range(1000)]
    assert int(batch_seed(2, 0)) != seeds[0]
    assert isinstance(batch_seed(1, 0), np.uint64)
    assert int(batch_seed(2**64 - 1, 10**9)) < 2**64


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
@pytest.mark.parametrize("bystander", [False, True])
def test_signals_held_delivers_after_the_block_to_the_main_thread(bystander):
    """A SIGTERM while workers start must not raise inside Thread.start(), also when
    another thread that does not block it (tqdm's monitor, say) is there to take it."""
    seen, worker_masks, stage = [], [], ["before"]
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    if bystander:
        other.start()

    def handler(_signum, _frame):
        seen.append((threading.current_thread() is threading.main_thread(), stage[0]))
        raise InterruptedError

    wakeup_read, wakeup_write = socket.socketpair()
    wakeup_read.settimeout(60)
    wakeup_write.setblocking(False)
    old_wakeup = signal.set_wakeup_fd(wakeup_write.fileno())  # written by whichever thread takes a signal
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with pytest.raises(InterruptedError), signals_held():  # delivered as the block ends
            stage[0] = "inside"
            worker = threading.Thread(target=lambda: worker_masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, ())))
            worker.start()
            os.kill(os.getpid(), signal.SIGTERM)
            if bystander:  # wait until the bystander's C-level handler has run
                assert wakeup_read.recv(1) == bytes([signal.SIGTERM])
            sum(range(1000))  # bytecode boundaries, where Python runs pending handlers
            worker.join()
            stage[0] = "after"
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.set_wakeup_fd(old_wakeup)
        wakeup_read.close(), wakeup_write.close()
        release.set()
    assert seen == [(True, "after")]  # once, in the main thread, as the block ended
    assert signal.getsignal(signal.SIGTERM) is previous
    assert signal.SIGTERM in worker_masks[0]  # workers never take the signal
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


@pytest.fixture
def ctrl_c_handled():
    """SIGINT raising KeyboardInterrupt for the test, as Python sets it up at start,
    whatever this process inherited (see ``conftest.ctrl_c_by_default``)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def signal_in_a_callback(signum: int) -> None:
    """Raise ``signum`` from inside a ctypes callback, as LLVM calls back into Python
    while Numba loads the kernels: what the handler raises there (KeyboardInterrupt)
    is printed as "Exception ignored on calling ctypes callback" and dropped."""
    ctypes.CFUNCTYPE(None)(lambda: signal.raise_signal(signum))()


def test_ctypes_callbacks_drop_what_a_signal_handler_raises(monkeypatch, ctrl_c_handled):
    """What the tests below provoke: unguarded, the signal is lost."""
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)
    signal_in_a_callback(signal.SIGINT)  # no KeyboardInterrupt comes out
    assert [type(report.exc_value) for report in dropped] == [KeyboardInterrupt]


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals: main thread only")
def test_a_signal_while_the_kernel_loads_stops_the_run(tiny_corpus, monkeypatch, ctrl_c_handled):
    """Ctrl-C while Numba loads (or compiles) the training kernel ends the run, instead
    of being dropped in a callback and the run training to its end."""
    kernel, loads = kernels.train_batch, []

    def loading(tokens, *args):
        loads.append(len(tokens))
        signal_in_a_callback(signal.SIGINT)
        return kernel(tokens, *args)

    monkeypatch.setattr(kernels, "train_batch", loading)  # run_epochs imports it when called
    with pytest.raises(KeyboardInterrupt):
        w2v.train(str(tiny_corpus), dim=DIM, min_count=1, epochs=1, threads=1)
    assert loads == [0]  # the load: a call on no tokens


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals: main thread only")
def test_a_signal_while_the_counter_loads_stops_counting(tiny_corpus, monkeypatch, ctrl_c_handled):
    """The same while Numba loads the word counter (the first chunk counted)."""
    scan, scans = chunkcounter.scan_chunk, []

    def loading(*args):
        if not scans:
            signal_in_a_callback(signal.SIGINT)
        scans.append(len(args[0]))
        return scan(*args)

    monkeypatch.setattr(chunkcounter, "scan_chunk", loading)
    with pytest.raises(KeyboardInterrupt):
        count_words(str(tiny_corpus))
    assert scans[:1] == [0]  # loaded on an empty chunk, before the corpus is read


@pytest.mark.slow
def test_counting_compiles_nothing_after_the_counter_loads(wiki6):
    """Every compiled function of the counter gets its one signature when it loads (in
    ``signals_held``): pruning, table growth and lookups compile nothing more."""
    compiled = (chunkcounter.scan_chunk, chunkcounter.fill_table, chunkcounter.find_words, chunkcounter.compact)
    chunkcounter.ChunkCounter().load_compiled()
    loaded = [list(function.signatures) for function in compiled]
    counter = count_words(str(wiki6), prune_at=40_000)  # prunes and grows the table
    assert counter.min_reduce > 1 and len(counter.table) > chunkcounter.FIRST_TABLE
    counter.find([b"the", b"not-a-word-here"])
    assert [list(function.signatures) for function in compiled] == loaded


LOADING_SIGNAL = """
import ctypes, signal, sys
import importlib
module = importlib.import_module("w2v.{module}")
loader = module.{function}

def loading(*args):
    ctypes.CFUNCTYPE(None)(lambda: signal.raise_signal(signal.{signal}))()
    return loader(*args)

module.{function} = loading
from w2v.cli import main
main(sys.argv[1:])
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "function", "signum", "code", "word"),
    [
        ("engine.kernels", "train_batch", "SIGTERM", 143, "terminated"),
        ("engine.kernels", "train_batch", "SIGINT", 130, "interrupted"),
        ("corpus.chunkcounter", "scan_chunk", "SIGTERM", 143, "terminated"),
    ],
)
def test_cli_signal_while_numba_loads_ends_the_run(tiny_corpus, tmp_path, module, function, signum, code, word):
    script = LOADING_SIGNAL.format(module=module, function=function, signal=signum)
    out = tmp_path / "v.bin"
    args = ["train", tiny_corpus, "-o", out, "--dim", "8", "--epochs", "1", "--threads", "1", "-q"]
    result = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, timeout=300,
                            preexec_fn=ctrl_c_by_default)  # fmt: skip
    assert result.returncode == code, result.stderr.decode()[-2000:]
    assert result.stderr.decode().strip().splitlines()[-1] == f"w2v: error: {word}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("hs", [False, True])
def test_skipgram_window_far_wider_than_a_chunk_on_repetitive_text_trains(hs):
    """Five words repeated, window 300: each word occurs about 120 times in every window.
    Taking a whole window's context words at once summed their steps on the same rows
    and diverged (negative sampling); chunks of ``kernels.CHUNK`` of them train."""
    vectors = w2v.train(
        [list("abcde") * 100] * 30, dim=DIM, window=300, min_count=1, epochs=1, threads=1, sample=0,
        hs=hs, negative=0 if hs else 5, seed=3,
    )  # fmt: skip
    assert np.isfinite(vectors.vectors).all()
    assert np.isfinite(vectors.report.epoch_loss).all()


@pytest.mark.slow
@pytest.mark.parametrize("loss", [{"nce": 5}, {"sampled_softmax": 5}])
@pytest.mark.parametrize("exponent", [300.0, 1e10, -1e10, 1e300])
def test_a_huge_finite_ns_exponent_trains(tiny_corpus, loss, exponent):
    """counts**300 overflowed to a NaN noise distribution, and NaN offsets -log(K q) made
    the loss NaN; in log space every finite exponent gives a distribution, and
    log q below float32's range is clamped to its lowest."""
    vectors = w2v.train(str(tiny_corpus), dim=DIM, min_count=1, epochs=1, threads=1, ns_exponent=exponent, **loss)
    assert np.isfinite(vectors.vectors).all()
    assert np.isfinite(vectors.report.epoch_loss).all()


def test_on_start_gets_the_settings_the_run_trains_with(tiny_corpus, tmp_path):
    """``on_start(config)``, once before the first epoch: the run's settings resolved
    (negative 5 and alpha 0.025 filled in), and a continued run's model's (dim 8)."""
    started: list[TrainConfig] = []
    model = tmp_path / "m.npz"
    w2v.train(str(tiny_corpus), dim=8, min_count=1, epochs=1, threads=1, save_model=str(model), on_start=started.append)
    w2v.train(str(tiny_corpus), init_model=str(model), epochs=1, threads=1, on_start=started.append)
    assert [(config.dim, config.negative, config.alpha) for config in started] == [(8, 5, 0.025)] * 2


def configured_stack_size() -> int:
    """threading's stack size for new threads (reading it with no argument resets it)."""
    size = threading.stack_size()
    threading.stack_size(size)
    return size


def test_thread_stack_gives_big_kernels_room_and_restores_the_default():
    previous = configured_stack_size()
    with thread_stack(1000):  # small: the platform's default stack serves
        assert configured_stack_size() == previous
    with thread_stack(20 << 20):
        assert configured_stack_size() == (20 << 20) + THREAD_STACK_SPARE
    assert configured_stack_size() == previous


def test_init_input_vectors():
    vectors = init_input_vectors(1000, 50, seed=3)
    assert vectors.dtype == np.float32 and vectors.shape == (1000, 50)
    assert vectors.min() >= -0.5 / 50 and vectors.max() < 0.5 / 50
    assert abs(float(vectors.mean())) < 1e-3
    np.testing.assert_array_equal(vectors, init_input_vectors(1000, 50, seed=3))
    assert not np.array_equal(vectors, init_input_vectors(1000, 50, seed=4))


@pytest.mark.parametrize("size,dim,threads", [(1000, 50, 2), (1001, 7, 3), (3, 3, 8), (5000, 300, 2)])
def test_init_input_vectors_are_the_same_drawn_by_several_threads(size, dim, threads):
    """Each thread draws its share from its place in the one stream: the values of
    one ``default_rng(seed).random`` call, whatever the threads and blocks."""
    one = np.random.default_rng(9).random((size, dim), dtype=np.float32)
    one -= 0.5
    one /= dim
    np.testing.assert_array_equal(init_input_vectors(size, dim, seed=9, threads=threads), one)
    np.testing.assert_array_equal(init_input_vectors(size, dim, seed=9), one)


@pytest.mark.parametrize("hs,negative", [(False, 5), (True, 0), (True, 3)])
def test_model_build_shapes(hs, negative):
    vocab = Vocab([b"a", b"b", b"c", b"d"], np.array([9, 5, 3, 1]))
    config = TrainConfig(dim=6, hs=hs, negative=negative, sample=1e-3, threads=1).resolved()
    model = Model.build(vocab, config)
    syn1, syn1neg, nodes, labels, offsets, alias_prob, alias_idx, log_q = model.tables[:8]
    assert log_q.shape == (4,) and log_q.dtype == np.float32
    assert len(nodes) == len(labels) and labels.dtype == np.float32 and set(labels.tolist()) <= {0.0, 1.0}
    assert model.syn0.shape == (4, 6) and model.syn0.dtype == np.float32
    assert syn1.shape == ((3, 6) if hs else (0, 6)) and not syn1.any()
    assert syn1neg.shape == ((4, 6) if negative else (0, 6)) and not syn1neg.any()
    assert len(offsets) == 5
    assert (len(nodes) > 0) == hs
    assert alias_prob.shape == alias_idx.shape == (4,)
    np.testing.assert_array_equal(model.keep_prob, vocab.keep_probabilities(1e-3))


def test_each_batch_gets_the_rate_of_its_position(tmp_path, monkeypatch):
    """A fake kernel records what run_epochs passes: the rate for
    (epoch * words + words before the batch) / (epochs * words) and the batch's seed.
    Before the batches, the calling thread loads the kernel with a call on no tokens,
    with the argument types the workers pass."""
    rng = np.random.default_rng(0)
    sentences = [[f"w{i}" for i in rng.integers(0, 20, size=n)] for n in rng.integers(1, 15, size=80)]
    config = TrainConfig(dim=4, min_count=1, batch_words=50, epochs=3, threads=1, alpha=0.04, min_alpha=0.001)
    config = config.resolved()
    encoded = encode_corpus(sentences, config, str(tmp_path))
    vocab, stream = encoded.vocab, encoded.stream
    calls, threads, kinds, sharers_seen = [], [], [], set()

    def fake_kernel(tokens, syn0, tables, keep_prob, settings, alpha, seed):
        sharers_seen.add(settings.sharers)
        flags = (settings.window, settings.samples, settings.cbow, settings.cbow_mean)
        calls.append((len(tokens), int((tokens >= 0).sum()), alpha, int(seed), *flags))
        threads.append(threading.current_thread())
        kinds.append(tuple(numba.typeof(arg) for arg in (tokens, settings, alpha, seed)))  # the kernel's signature
        words = int((tokens >= 0).sum())
        return 2.0 * words, words, 3 * words, 4 * words

    monkeypatch.setattr(kernels, "train_batch", fake_kernel)  # run_epochs imports it when called
    seen = []
    try:
        progress = Progress(1, 3, len(stream), stream_offsets(stream))
        model = Model.build(vocab, config)
        losses = run_epochs(model, stream, config, progress, Hooks(on_epoch_end=lambda e, x: seen.append((e, x))))
        batches, words = len(stream), stream.words
        assert batches >= 5
        before = np.concatenate([[0], np.cumsum(stream.batch_words)])
    finally:
        stream.close()
    assert sharers_seen == {1}  # one thread: the kernel copies nothing
    load, calls = calls[0], calls[1:]
    assert load == (0, 0, 0.04, int(batch_seed(config.seed, 0)), 5, 5, False, True)
    assert threads[0] is threading.current_thread() and all(t is not threads[0] for t in threads[1:])
    assert len(set(kinds)) == 1  # one signature: the load compiles what the workers run
    assert len(calls) == 3 * batches
    for job, (_, batch_words, alpha, seed, window, negative, cbow, cbow_mean) in enumerate(calls):
        epoch, batch = divmod(job, batches)
        assert batch_words == stream.batch_words[batch]
        progress = (epoch * words + before[batch]) / (3 * words)
        assert alpha == pytest.approx(0.04 - 0.039 * progress, rel=1e-12)
        assert seed == int(batch_seed(config.seed, job))
        assert (window, negative, cbow, cbow_mean) == (5, 5, False, True)
    assert calls[0][2] == 0.04
    assert losses == [2.0, 2.0, 2.0]
    assert seen == [(0, 2.0), (1, 2.0), (2, 2.0)]


def tiny_train(corpus, **settings):
    defaults = dict(dim=DIM, min_count=1, epochs=2, threads=1, sample=0.0)
    return w2v.train(corpus, **{**defaults, **settings})


def test_train_from_python_sentences_and_report(tiny_corpus):
    sentences = [line.split() for line in TINY_LINES] * 20
    epochs = []
    vectors = tiny_train(sentences, on_epoch_end=lambda e, loss: epochs.append((e, loss)))
    assert isinstance(vectors, Vectors)
    assert vectors.words[:2] == ["the", "a"]
    assert vectors.vectors.shape == (len(vectors.words), DIM) and vectors.vectors.dtype == np.float32
    report = vectors.report
    assert report.vocab_size == len(vectors.words) == len({w for line in TINY_LINES for w in line.split()})
    assert report.corpus_words == 20 * sum(len(line.split()) for line in TINY_LINES)
    assert report.train_words == 2 * report.corpus_words
    assert [e for e, _ in epochs] == [0, 1]
    assert [loss for _, loss in epochs] == report.epoch_loss
    assert all(np.isfinite(report.epoch_loss))
    # the same corpus from a file gives the same vocabulary and, single-threaded, the same vectors
    from_file = tiny_train(str(tiny_corpus))
    assert from_file.words == vectors.words
    np.testing.assert_array_equal(from_file.vectors, vectors.vectors)


def test_train_api_errors(tmp_path):
    with pytest.raises(CorpusError, match="empty"):
        tiny_train([[], []])
    (tmp_path / "empty.txt").write_bytes(b"\n \n")
    with pytest.raises(CorpusError, match="empty"):
        tiny_train(str(tmp_path / "empty.txt"))
    with pytest.raises(CorpusError, match="vocabulary is empty"):
        tiny_train([["a", "b"]], min_count=2)
    with pytest.raises(W2VError):
        tiny_train([["a", "b"]], negative=0)
    with pytest.raises(ConfigError, match="unknown setting 'no_such_setting' \\(the settings are alpha, "):
        tiny_train([["a", "b"]], no_such_setting=1)
    with pytest.raises(ConfigError, match=r"^unknown setting 'windwo' \(did you mean window\?\)$"):
        tiny_train([["a", "b"]], windwo=1)


def test_save_and_read_vocab(tmp_path, tiny_corpus):
    path = tmp_path / "vocab.txt"
    first = tiny_train(str(tiny_corpus), save_vocab=str(path), min_count=2)
    words, counts = Vocab.read_counts(str(path))
    assert [w.decode() for w in words] == first.words
    assert counts.sum() == first.report.train_words // 2
    # a read vocabulary decides which words are trained, and their order
    path.write_bytes(b"</s> 100\nmat 50\ncat 40\ndog 30\nunseen 20\n")
    second = tiny_train(str(tiny_corpus), read_vocab=str(path))
    assert second.words == ["mat", "cat", "dog", "unseen"]


def test_determinism_api(tmp_path, tiny_corpus):
    runs = [tiny_train(str(tiny_corpus), seed=seed, sample=1e-3, negative=3, hs=True) for seed in (5, 5, 6)]
    np.testing.assert_array_equal(runs[0].vectors, runs[1].vectors)
    assert runs[0].report.epoch_loss == runs[1].report.epoch_loss
    assert not np.array_equal(runs[0].vectors, runs[2].vectors)
    for name, run in (("a", runs[0]), ("b", runs[1])):
        run.save(tmp_path / f"{name}.bin")
        run.save(tmp_path / f"{name}.txt")
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()


# ---- formats -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_vectors():
    rng = np.random.default_rng(4)
    words = ["the", "été", "caf\udce9", "x", "naïve"]  # one word holds a non-UTF-8 byte
    values = (rng.standard_normal((5, 7)) * 10.0 ** rng.integers(-8, 4, (5, 7))).astype(np.float32)
    values[0, 0] = 0.0
    values[1, 1] = -1.5
    return Vectors(words, values)


def test_binary_file_layout_is_word2vec_c(tmp_path, small_vectors):
    path = tmp_path / "v.bin"
    small_vectors.save(path)  # .bin: binary
    data = path.read_bytes()
    expected = b"5 7\n" + b"".join(
        w.encode("utf-8", "surrogateescape") + b" " + small_vectors.vectors[i].astype("<f4").tobytes() + b"\n"
        for i, w in enumerate(small_vectors.words)
    )
    assert data == expected
    assert b"caf\xe9 " in data
    words, values = read_word2vec(path, binary=True)
    assert words[2] == b"caf\xe9"
    np.testing.assert_array_equal(values, small_vectors.vectors)  # exact


def test_text_file_round_trip(tmp_path, small_vectors):
    path = tmp_path / "v.txt"
    small_vectors.save(path)  # not .bin: text
    data = path.read_bytes()
    assert data.startswith(b"5 7\nthe 0 ")
    assert b"\ncaf\xe9 " in data
    words, values = read_word2vec(path, binary=False)
    assert [w.decode("utf-8", "surrogateescape") for w in words] == small_vectors.words
    np.testing.assert_allclose(values, small_vectors.vectors, rtol=1e-5, atol=0)
    small_vectors.save(tmp_path / "forced.bin", binary=False)
    assert (tmp_path / "forced.bin").read_bytes() == data
    small_vectors.save(tmp_path / "v.bin")
    small_vectors.save(tmp_path / "forced.txt", binary=True)
    assert (tmp_path / "forced.txt").read_bytes() == (tmp_path / "v.bin").read_bytes()


def test_save_to_missing_folder_fails_cleanly(tmp_path, small_vectors):
    with pytest.raises(W2VError, match="cannot write"):
        small_vectors.save(tmp_path / "missing" / "v.bin")
    assert list(tmp_path.iterdir()) == []


def test_gensim_loads_our_files(tmp_path, tiny_corpus):
    keyed = pytest.importorskip("gensim.models.keyedvectors")
    vectors = tiny_train(str(tiny_corpus))
    vectors.save(tmp_path / "v.bin")
    vectors.save(tmp_path / "v.txt")
    for name, binary, tolerance in (("v.bin", True, 0.0), ("v.txt", False, 1e-5)):
        loaded = keyed.KeyedVectors.load_word2vec_format(str(tmp_path / name), binary=binary)
        assert loaded.index_to_key == vectors.words
        np.testing.assert_allclose(loaded.vectors, vectors.vectors, rtol=tolerance, atol=0)


def test_invalid_utf8_words_round_trip_through_training(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"caf\xe9 ok \xff\xfe ok\n" * 10 + b"caf\xc3\xa9 ok\n" * 3)
    vectors = tiny_train(str(corpus))
    assert set(vectors.words) == {"ok", "caf\udce9", "\udcff\udcfe", "café"}
    vectors.save(tmp_path / "v.bin")
    vectors.save(tmp_path / "v.txt")
    for name, binary in (("v.bin", True), ("v.txt", False)):
        words, _ = read_word2vec(tmp_path / name, binary)
        assert words == [w.encode("utf-8", "surrogateescape") for w in vectors.words]
        assert set(words) == {b"ok", b"caf\xe9", b"\xff\xfe", b"caf\xc3\xa9"}


# ---- end to end on the 6 MB slice --------------------------------------------------------

COMBINATIONS = {
    "sg-ns": dict(model="skipgram", hs=False, negative=5),
    "sg-hs": dict(model="skipgram", hs=True, negative=0),
    "cbow-ns": dict(model="cbow", hs=False, negative=5),
    "cbow-hs": dict(model="cbow", hs=True, negative=0),
}
PAIRS = [("france", "germany"), ("paris", "london"), ("january", "february"), ("king", "queen")]


@pytest.fixture(scope="module", params=list(COMBINATIONS))
def wiki_model(request, wiki6):
    """One model per combination: dim 50, 3 epochs, 2 threads, default sample."""
    settings = COMBINATIONS[request.param]
    return request.param, w2v.train(str(wiki6), dim=50, epochs=3, threads=2, seed=1, **settings)


@pytest.mark.slow
def test_wiki_loss_falls(wiki_model):
    _, vectors = wiki_model
    losses = vectors.report.epoch_loss
    assert len(losses) == 3
    assert all(np.isfinite(losses)) and all(x > 0 for x in losses)
    assert losses[-1] < losses[0]
    report = vectors.report
    assert report.corpus_words == 1_007_028
    assert report.vocab_size == len(vectors.words) > 10_000
    assert report.train_words < 3 * report.corpus_words


@pytest.mark.slow
def test_wiki_related_words_are_close(wiki_model):
    """Cosines of obvious pairs beat the median of 1000 random pairs by a clear margin.

    The vectors are mean-centred first: skip-gram with negative sampling puts every
    word along a common direction after little training (gensim too: the median
    random cosine is ~0.9 at 2-3 epochs on this slice), which says nothing of quality.
    """
    _, vectors = wiki_model
    index = {w: i for i, w in enumerate(vectors.words)}
    centred = vectors.vectors - vectors.vectors.mean(axis=0)
    unit = centred / np.linalg.norm(centred, axis=1, keepdims=True)
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, len(unit), 1000), rng.integers(0, len(unit), 1000)
    median = float(np.median((unit[a] * unit[b]).sum(axis=1)))
    cosines = {p: float(unit[index[p[0]]] @ unit[index[p[1]]]) for p in PAIRS}
    strong = [p for p in PAIRS if cosines[p] > median + 0.3]
    assert len(strong) >= 3, (median, cosines)
    assert all(c > median + 0.2 for c in cosines.values()), (median, cosines)


def test_evenly_spaced_streams_are_reproducible_and_change_the_order(tiny_corpus, tmp_path):
    """With one thread and a seed, ``streams=4`` gives the same vectors twice, and
    other vectors than the file's order (``streams=1``): the same batches, in another order."""
    rng = np.random.default_rng(0)
    corpus = tmp_path / "c.txt"  # 40 different lines: batches of 50 words that differ
    corpus.write_text("".join(" ".join(rng.permutation(" ".join(TINY_LINES).split())) + "\n" for _ in range(40)))
    settings = dict(dim=8, epochs=1, threads=1, min_count=1, batch_words=50, seed=3)
    spaced = [w2v.train(str(corpus), streams=4, **settings).vectors for _ in range(2)]
    in_order = w2v.train(str(corpus), streams=1, **settings).vectors
    assert spaced[0].tobytes() == spaced[1].tobytes()
    assert spaced[0].tobytes() != in_order.tobytes()
