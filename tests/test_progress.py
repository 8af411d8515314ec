"""Progress on stderr: bars on a terminal, lines elsewhere, for every long step
(reading the corpus, training, vocab, phrases, classes), and the note on compiling."""

import fcntl
import gzip
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import numpy as np
import pytest

import w2v
from w2v import progress
from w2v.corpus.chunkcounter import ChunkCounter
from w2v.corpus.counting import ReadStatus, count_words
from w2v.engine import kernels, runloop, workers
from w2v.progress import LINE_GAP, LINE_SECONDS, LineBar, Steps, TerminalBar, progress_bar, reading
from w2v.vectorio.modelfile import TrainState, checkpoint_path
from w2v.vectors.classes import kmeans

FAST = ("--dim", "8", "--min-count", "1", "--epochs", "2", "--threads", "1")


class Clock:
    """A clock that moves only when told: ``clock.now += 2``."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def line_bar(total, unit="words", initial=0):
    out, clock = io.StringIO(), Clock()
    return LineBar("training", total, unit, initial, out, clock), out, clock


def test_line_bar_prints_the_start_tenths_at_most_every_gap_and_the_end():
    bar, out, clock = line_bar(1000)
    bar.update(0)  # the step begins
    clock.now += LINE_GAP / 2
    bar.update(50)  # below the first tenth, and not LINE_SECONDS yet
    clock.now += LINE_GAP / 2
    bar.update(120, loss="2.5000")
    clock.now += LINE_GAP / 2
    bar.update(350)  # past two more tenths, but too soon after the last line
    clock.now += LINE_GAP
    bar.update(360)
    bar.close()
    assert out.getvalue().splitlines() == [
        "w2v: training: 0% (0 of 1,000 words)",
        "w2v: training: 12% (120 of 1,000 words), 120 words/s, elapsed 0:01, ETA 0:07, loss=2.5000",
        "w2v: training: 36% (360 of 1,000 words), 144 words/s, elapsed 0:02, ETA 0:04, loss=2.5000",
    ]
    assert "\r" not in out.getvalue()


def test_line_bar_prints_every_line_seconds_without_a_total():
    bar, out, clock = line_bar(None, unit="tokens")
    bar.update(0)
    clock.now += 1
    bar.update(10)
    clock.now += LINE_SECONDS - 1
    bar.update(20)
    clock.now += 1
    bar.update(30)
    bar.close()
    assert out.getvalue().splitlines() == [
        "w2v: training: 0 tokens",
        "w2v: training: 20 tokens, 2 tokens/s, elapsed 0:10",
        "w2v: training: 30 tokens, 3 tokens/s, elapsed 0:11",
    ]


def test_line_bar_rate_counts_from_initial():
    """A resumed run starts its bar where the checkpoint was: its rate is this run's."""
    bar, out, clock = line_bar(1000, initial=500)
    bar.update(500)
    clock.now += 2
    bar.update(1000)
    bar.close()  # nothing new to say
    assert out.getvalue().splitlines() == [
        "w2v: training: 50% (500 of 1,000 words)",
        "w2v: training: 100% (1,000 of 1,000 words), 250 words/s, elapsed 0:02",
    ]


def test_a_pause_is_left_out_of_the_rate():
    """Scoring the held-out text between epochs pauses training: the rate is of training time."""
    bar, out, clock = line_bar(1000)
    bar.update(0)
    clock.now += 2
    bar.update(400)
    clock.now += 30  # scoring
    bar.pause(30)
    clock.now += 2
    bar.update(1000)
    assert out.getvalue().splitlines()[-1] == "w2v: training: 100% (1,000 of 1,000 words), 250 words/s, elapsed 0:34"


def test_the_terminal_bar_leaves_a_pause_out_of_both_rates():
    """tqdm's mean rate counts from its start and its smoothed rate from its last print: both move."""
    bar = TerminalBar("training", 1000, "words", 0, io.StringIO())
    start, last = bar.bar.start_t, bar.bar.last_print_t
    bar.pause(30.0)
    assert (bar.bar.start_t, bar.bar.last_print_t) == (start + 30.0, last + 30.0)
    bar.close()


def test_line_bar_in_bytes():
    bar, out, clock = line_bar(3_000_000, unit="bytes")
    bar.update(0)
    clock.now += 1
    bar.update(1_500_000, tokens="10")
    line = "w2v: training: 50% (1.5 of 3.0 MB), 1.5 MB/s, elapsed 0:01, ETA 0:01, tokens=10"
    assert out.getvalue().splitlines()[1] == line


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_kind_follows_the_stream():
    assert isinstance(progress_bar("x", 10, "words", show=False), progress.NoBar)
    assert isinstance(progress_bar("x", 10, "words", show=True, file=io.StringIO()), LineBar)
    terminal = Terminal()
    bar = progress_bar("training", 10, "words", show=True, file=terminal, initial=4)
    assert isinstance(bar, progress.TerminalBar)
    bar.update(10, epoch="2/2")
    bar.close()
    assert "\r" in terminal.getvalue() and "training: 100%" in terminal.getvalue()
    assert "epoch=2/2" in terminal.getvalue()


def test_steps_open_a_bar_per_step(monkeypatch):
    opened = []

    def recording(desc, total, unit, show, initial=0, file=None):
        opened.append((desc, total, unit))
        return progress.NoBar()

    monkeypatch.setattr(progress, "progress_bar", recording)
    with Steps(True) as steps:
        show = reading(steps)
        show(ReadStatus(0, 100, 0, 0))
        show(ReadStatus(50, 100, 7, 3))
        steps("k-means", 1, 10, "iterations")
        reading(steps, "sentences")(ReadStatus(None, None, 5, 2))
    assert opened == [("reading", 100, "bytes"), ("k-means", 10, "iterations"), ("sentences", None, "tokens")]
    assert steps.bar is None


def test_chunk_counter_reports_bytes_as_stored(tmp_path):
    plain, packed = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    plain.write_bytes(b"the cat sat\n" * 5000)
    with gzip.open(packed, "wb") as out:
        out.write(b"a dog ran\n" * 5000)
    statuses: list[ReadStatus] = []
    counter = count_words([str(plain), str(packed)], on_read=statuses.append)
    total = plain.stat().st_size + packed.stat().st_size
    assert isinstance(counter, ChunkCounter)
    assert statuses[0] == ReadStatus(0, total, 0, 0)
    assert statuses[-1] == ReadStatus(total, total, 30000, 6)
    assert [s.bytes_read for s in statuses] == sorted(s.bytes_read for s in statuses)
    assert any(0 < s.bytes_read < total for s in statuses)  # the chunks of the first file


@pytest.mark.slow
def test_chunk_counter_reads_a_pipe_in_content_bytes(tmp_path):
    data = b"one two three\n" * 100
    script = (
        "import sys; from w2v.corpus.counting import count_words; s = []; count_words(['-'], on_read=s.append); "
        "print(s[0], s[-1])"
    )
    done = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True, check=True)
    first, last = done.stdout.decode().strip().split(") ")
    assert first == "ReadStatus(bytes_read=0, total_bytes=None, tokens=0, words=0"
    assert last == f"ReadStatus(bytes_read={len(data)}, total_bytes=None, tokens=300, words=3)"


def test_sentences_report_tokens():
    statuses: list[ReadStatus] = []
    count_words([["a", "b"], ["b", "c", "d"]], on_read=statuses.append)
    assert statuses == [ReadStatus(None, None, 0, 0), ReadStatus(None, None, 5, 4)]


def test_kmeans_reports_seeding_and_iterations():
    rng = np.random.default_rng(0)
    calls = []
    found = kmeans(
        rng.normal(size=(40, 4)).astype(np.float32), 5, iterations=3, on_step=lambda *a, **k: calls.append((a, k))
    )
    names = [args[0] for args, _ in calls]
    assert calls[0] == (("k-means++ seeding", 0, 5, "centroids"), {})
    assert calls[names.index("k-means") - 1] == (("k-means++ seeding", 5, 5, "centroids"), {})
    iterations = [(args[1], kwargs) for args, kwargs in calls if args[0] == "k-means"]
    assert iterations[0] == (0, {}) and len(iterations) == found.iterations + 1
    assert iterations[1][1] == {"changed": "40"}  # every word gets its first class


def test_resumed_training_bar_starts_where_the_checkpoint_was(tmp_path, monkeypatch):
    sentences = [["a", "b", "c", "d"], ["b", "c", "a"]] * 300
    settings = dict(min_count=1, dim=4, epochs=2, threads=1, sample=0, batch_words=100)
    w2v.train(sentences, checkpoint=str(tmp_path), **settings)
    state = TrainState.load(str(tmp_path))
    state.jobs_done = state.batches  # as if stopped after the first epoch
    state.save(checkpoint_path(str(tmp_path)))
    opened = []

    def recording(desc, total, unit, show, initial=0, file=None):
        opened.append((desc, total, initial))
        return progress.NoBar()

    monkeypatch.setattr(runloop, "progress_bar", recording)
    w2v.train(sentences, resume=str(tmp_path), progress=True, threads=1)
    assert opened == [("training", 2 * state.stream_words, state.stream_words)]


def run_w2v(args, cwd, terminal: bool) -> str:
    """``python -m w2v ARGS``; its stderr, through a pseudo-terminal if ``terminal``."""
    command = [sys.executable, "-m", "w2v", *map(str, args)]
    if not terminal:
        done = subprocess.run(command, capture_output=True, cwd=cwd, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        return done.stderr.decode()
    controller, stderr = pty.openpty()
    fcntl.ioctl(stderr, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # tqdm sizes its bar to it
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, cwd=cwd)
    os.close(stderr)
    received = b""
    while True:
        try:
            data = os.read(controller, 1 << 16)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        received += data
    os.close(controller)
    assert process.wait(timeout=300) == 0, received.decode()
    return received.decode()


@pytest.mark.slow
def test_train_prints_lines_when_stderr_is_not_a_terminal(tiny_corpus, tmp_path):
    """A log (``2> log``): whole lines, the time elapsed and left on the progress lines,
    and a line an epoch with its loss (the report's)."""
    report = tmp_path / "run.json"
    args = ["train", tiny_corpus, "-o", tmp_path / "v.bin", "--report", report, *FAST]
    err = run_w2v(args, tmp_path, terminal=False)
    lines = [line for line in err.splitlines() if not line.startswith("w2v: compiling")]  # a first run's note
    assert "\r" not in err
    epochs = [line for line in lines if line.startswith("w2v: epoch")]
    assert epochs == [f"w2v: epoch {e + 1}: loss {loss:.4f}" for e, loss in enumerate(read_report(report))]
    reading = [line for line in lines if line.startswith("w2v: reading: ")]
    training = [line for line in lines if line.startswith("w2v: training: ")]
    size, tokens = tiny_corpus.stat().st_size, len(tiny_corpus.read_text().split())
    assert reading[-1].startswith(f"w2v: reading: 100% ({size / 1e3:.1f} of {size / 1e3:.1f} kB), ")
    assert reading[-1].endswith(f"tokens={tokens:,}, words=12")
    words = f"{2 * tokens:,}"
    assert all(re.match(r"w2v: training: \d+% \([\d,]+ of [\d,]+ words\), [\d,]+ words/s, elapsed 0:0\d, ", line)
               for line in training)  # fmt: skip
    assert "ETA 0:0" in training[0] and "ETA" not in training[-1]  # the time left, while there is some
    assert training[-1].startswith(f"w2v: training: 100% ({words} of {words} words), ")
    assert training[-1].endswith("epoch=2/2, lr=0.00000, loss=" + training[-1].rsplit("=", 1)[1])
    assert lines[-2].startswith("w2v: 12 words in vocabulary") and lines[-1].startswith("w2v: wrote the run's report")


def read_report(path) -> list[float]:
    """The epochs' losses of a ``--report`` file."""
    import json

    return json.loads(path.read_text())["epoch_loss"]


@pytest.mark.slow
def test_train_draws_bars_on_a_terminal(tiny_corpus, tmp_path):
    err = run_w2v(["train", tiny_corpus, "-o", tmp_path / "v.bin", *FAST], tmp_path, terminal=True)
    tokens = len(tiny_corpus.read_text().split())
    assert "\rreading: 100%|" in err and f"tokens={tokens:,}, words=12]" in err
    assert "\rtraining: 100%|" in err and "epoch=2/2" in err
    assert err.splitlines()[-1].startswith("w2v: 12 words in vocabulary")


@pytest.mark.slow
def test_vocab_phrases_and_classes_show_progress(tiny_corpus, tmp_path):
    err = run_w2v(["vocab", tiny_corpus, "-o", tmp_path / "vocab.txt"], tmp_path, terminal=False)
    assert err.splitlines()[-1].startswith("w2v: reading: 100% (")
    err = run_w2v(["phrases", tiny_corpus, "-o", tmp_path / "p.txt", "--passes", "2"], tmp_path, terminal=False)
    steps = [line.split(":")[1].strip() for line in err.splitlines()]
    assert steps == ["phrases, pass 1/2"] * 2 + ["phrases, pass 2/2"] * 2 + ["writing"] * 2 + ["pass 1"]  # begun, done
    run_w2v(["train", tiny_corpus, "-o", tmp_path / "v.bin", *FAST, "-q"], tmp_path, terminal=False)
    err = run_w2v(["classes", "-v", tmp_path / "v.bin", "-k", "3", "-o", tmp_path / "c.txt"], tmp_path, terminal=False)
    lines = err.splitlines()
    assert lines[0] == "w2v: k-means++ seeding: 0% (0 of 3 centroids)"
    assert lines[1].startswith("w2v: k-means++ seeding: 100% (3 of 3 centroids), ")
    assert lines[2] == "w2v: k-means: 0% (0 of 10 iterations)"
    assert lines[3].startswith("w2v: k-means: ") and "changed=" in lines[3]
    assert run_w2v(["vocab", tiny_corpus, "-o", tmp_path / "vocab.txt", "-q"], tmp_path, terminal=False) == ""


def test_compiling_is_announced_and_kept_out_of_the_training_time(tiny_corpus, tmp_path, monkeypatch, capsys):
    """A first run compiles the training kernel as it loads: provoked here by sending
    Numba's compile events around the load (from the cache)."""
    from numba.core import event

    from w2v.cli import main

    load = workers.EpochRunner.load_kernel

    def compiling(self):
        kernel = kernels.train_batch
        with event.trigger_event("numba:compile", data={"dispatcher": kernel, "args": (), "return_type": None}):
            load(self)

    monkeypatch.setattr(workers.EpochRunner, "load_kernel", compiling)
    main(["train", str(tiny_corpus), "-o", str(tmp_path / "v.bin"), *FAST])
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[1] for line in err[:2]] == [" reading"] * 2
    assert err[2].startswith("w2v: training skipgram with negative sampling: ")  # the run's settings
    assert err[3].startswith(
        "w2v: compiling the training kernels: once for this version of w2v and Numba on this CPU (cached in "
    )  # before the bar
    assert [line for line in err[4:] if line.startswith("w2v: training: ")]
    assert " s compiling the kernels, " in err[-1]
    report = w2v.train(str(tiny_corpus), min_count=1, dim=8, epochs=1, threads=1).report
    assert report.compile_seconds > 0
    assert report.prepare_seconds + report.train_seconds + report.compile_seconds <= report.seconds


def compile_event(kernel):
    """Numba's compile event for ``kernel``, sent around the block: a first run's
    compilation, provoked where the kernel loads from the cache."""
    from numba.core import event

    return event.trigger_event("numba:compile", data={"dispatcher": kernel, "args": (), "return_type": None})


def test_compiling_is_announced_with_quiet_and_by_score(tiny_corpus, tmp_path, monkeypatch, capsys):
    """The note is about the time a run takes, not its progress: ``train -q`` gives it
    (and nothing else), and so does ``w2v score``, whose first run compiles the scoring
    kernels when no training run has."""
    from w2v import toolkit
    from w2v.cli import main

    load, score_model = workers.EpochRunner.load_kernel, toolkit.score_model

    def compiling(self):
        with compile_event(kernels.train_batch):
            load(self)

    def scoring(*args, **kwargs):
        with compile_event(kernels.path_log_probs):
            return score_model(*args, **kwargs)

    monkeypatch.setattr(workers.EpochRunner, "load_kernel", compiling)
    monkeypatch.setattr(toolkit, "score_model", scoring)
    model = tmp_path / "m.npz"
    main(["train", str(tiny_corpus), "-o", str(tmp_path / "v.bin"), "--save-model", str(model), *FAST, "-q"])
    note = "w2v: compiling the training kernels: once for this version of w2v and Numba on this CPU (cached in "
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(note)
    main(["score", str(model), str(tiny_corpus)])
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0].startswith(note) and not any(line.startswith("w2v: compiling") for line in err[1:])
    assert captured.out.startswith("ns: ")


def test_watch_compiles_times_compilations_not_cache_loads():
    from numba import njit

    from w2v.engine.jit import watch_compiles

    announced = []
    with watch_compiles(announced.append) as watch:
        double = njit(lambda x: 2 * x)  # no cache: compiled on its first call
        assert double(3) == 6
        seconds = watch.seconds
        assert double(4) == 8  # compiled already
    assert [d.py_func for d in announced] == [double.py_func]
    assert seconds > 0 and watch.seconds == seconds
