"""Worker threads over the id stream: the job queue, the schedule, signals, progress.

Each worker thread takes the next batch (a slice of the id stream ending at a
sentence end), computes the batch's learning rate from its place in the whole
run and a seed from its index, and calls the ``nogil`` kernel, which updates the
shared weights without locks (Hogwild, as word2vec.c's threads do). The main
thread reports progress and stops the workers between segments of at most one
epoch, where checkpoints are taken.

Because a batch's learning rate and seed depend only on its index, one thread
gives byte-identical results for one seed; several threads give the same
random draws, interleaved.
"""

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from w2v.blas import SCORING_THREADS, limited
from w2v.config import TrainConfig
from w2v.corpus.idstream import IdStream
from w2v.engine.runloop import Hooks, RunLoop
from w2v.engine.weights import Model
from w2v.errors import DivergedError
from w2v.interrupts import signals_held

MASK64 = (1 << 64) - 1
POLL_SECONDS = 0.2
THREAD_STACK_SPARE = 1 << 20  # bytes of thread stack beside the kernel's buffers
SMALL_STACK = 256 << 10  # kernel buffers up to this fit any platform's default thread stack


def batch_seed(seed: int, job: int) -> np.uint64:
    """A well-mixed 64-bit LCG seed for batch ``job`` of a run seeded ``seed`` (splitmix64)."""
    z = (seed * 0x9E3779B97F4A7C15 + (job + 1) * 0xD1B54A32D192ED03) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return np.uint64(z ^ (z >> 31))


def stream_offsets(stream: IdStream) -> np.ndarray:
    """Words before each batch of an epoch, and the epoch's words last ((B + 1,) int64)."""
    return np.concatenate([[0], np.cumsum(stream.batch_words)])


class Progress:
    """Per-thread, per-epoch accumulators (float64 loss) that the main thread reads,
    and ``jobs_done``: every batch below it is finished (updated between segments)."""

    def __init__(self, threads: int, epochs: int, batches: int, words_before: np.ndarray, resumed=None):
        self.loss = np.zeros((threads, epochs), dtype=np.float64)
        self.examples = np.zeros((threads, epochs), dtype=np.int64)
        self.updates = np.zeros(threads, dtype=np.int64)  # output-row updates this run (``kernels.output_rows``)
        self.visits = np.zeros(threads, dtype=np.int64)  # and rows read and written
        self.batches = np.zeros((threads, epochs), dtype=np.int64)
        self.words = np.zeros(threads, dtype=np.int64)
        self.heldout = np.full((epochs, 3), np.nan)  # after each epoch: held-out bits per word, standard error, unigram
        self.heldout_seconds = 0.0  # spent scoring it
        self.jobs_done = 0
        if resumed is not None:  # a checkpoint's state: row 0 holds what it did
            self.jobs_done = resumed.jobs_done
            epoch, batch = divmod(resumed.jobs_done, batches)
            self.loss[0], self.examples[0] = resumed.epoch_loss, resumed.epoch_examples
            self.batches[0, :epoch] = batches
            if epoch < epochs:
                self.batches[0, epoch] = batch
            self.words[0] = epoch * words_before[-1] + words_before[batch]

    def epoch_loss(self, epoch: int) -> float:
        """Mean loss per training example of ``epoch`` so far (nats), nan before any."""
        examples = self.examples[:, epoch].sum()
        return float(self.loss[:, epoch].sum() / examples) if examples else float("nan")

    def epochs_done(self, batches: int) -> int:
        """The first epochs of which all ``batches`` batches are done."""
        complete = self.batches.sum(axis=0) == batches
        return int(np.cumprod(complete).sum())


@contextmanager
def thread_stack(kernel_bytes: int) -> Iterator[None]:
    """Threads started in the block get room for the kernel's stack buffers
    (``kernels.stack_bytes``): the platform's default stack when they are small,
    else that much and ``THREAD_STACK_SPARE`` more."""
    if kernel_bytes <= SMALL_STACK:
        yield
        return
    previous = threading.stack_size(kernel_bytes + THREAD_STACK_SPARE)
    try:
        yield
    finally:
        threading.stack_size(previous)


class JobQueue:
    """Hands out batch indices ``start, start + 1, ...`` below ``end``, one at a time.

    ``drain()`` stops handing them out: once the workers are joined, exactly the
    jobs below ``next`` are done, a state a checkpoint can record."""

    def __init__(self, start: int, end: int):
        self.next, self.end = start, end
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self.next >= self.end:
                return None
            self.next += 1
            return self.next - 1

    def drain(self) -> None:
        with self._lock:
            self.end = self.next


def run_epochs(model: Model, stream: IdStream, config: TrainConfig, progress: Progress, hooks: Hooks) -> list[float]:
    """Train ``config.epochs`` epochs over ``stream`` with ``config.threads`` threads,
    from batch ``progress.jobs_done`` on, or fewer where an ``on_epoch_end`` callback
    stops the run. Returns the mean loss of each epoch trained (nats per example).

    Work runs in segments of at most one epoch; between two, every batch below
    ``progress.jobs_done`` is done and ``hooks.checkpoint()`` is called: at each
    epoch's end, every ``hooks.checkpoint_seconds``, and when the main thread is
    interrupted (Ctrl-C, SIGTERM as an exception), before re-raising
    (``runloop.RunLoop``).
    """
    return EpochRunner(model, stream, config, progress, hooks).run()


class EpochRunner:
    """One ``run_epochs`` call: the workers' loop, the segments and the reports."""

    def __init__(self, model: Model, stream: IdStream, config: TrainConfig, progress: Progress, hooks: Hooks):
        assert config.threads is not None and config.alpha is not None  # resolved
        self.model, self.stream, self.config, self.progress, self.hooks = model, stream, config, progress, hooks
        self.start_alpha = config.alpha
        self.kernel: Any = None  # the compiled batch kernel, from ``load_kernel``
        self.sharers = config.threads  # threads training the weights at once: above 1, each copies the top of the tree
        self.settings: Any = None  # the kernel's settings (``kernels.Settings``), from ``load_kernel``
        self.words_before = stream_offsets(stream)
        self.errors: list[BaseException] = []
        reported = progress.jobs_done // max(len(stream), 1)  # epochs a resumed run had done
        self.loop = RunLoop(config, hooks, total=stream.words * config.epochs, reported=reported, hold_loss=True)

    def alpha(self, done: int) -> float:
        """The learning rate after ``done`` words of the whole run."""
        return self.loop.alpha(done)

    def run(self) -> list[float]:
        """Every segment left, checkpointed after each; see ``run_epochs``."""
        batches, hooks, loop = len(self.stream), self.hooks, self.loop
        with loop.closing_bar():
            # interrupted: every batch below jobs_done is done, unless a worker failed in one
            with loop.saved_if_stopped(sound=lambda: not self.errors):
                with signals_held():  # Numba calls back into Python from LLVM, where a signal would be lost
                    self.load_kernel()
                loop.open_bar(int(self.progress.words.sum()))  # once the kernel is loaded: compiling is not training
                while self.progress.jobs_done < batches * self.config.epochs and not loop.stopped:
                    first = self.progress.jobs_done
                    self.run_segment(JobQueue(first, (first // batches + 1) * batches))
                    self.model.check_diverged(max((self.progress.jobs_done - 1) // batches + 1, 1), self.start_alpha)
                    if hooks.heldout is not None and self.progress.jobs_done % batches == 0:
                        self.score_heldout(hooks.heldout, self.progress.jobs_done // batches - 1)
                    self.report()  # an epoch just ended: its callback sees its weights, no worker running
                    loop.save()
            self.report()
        return [self.progress.epoch_loss(e) for e in range(self.progress.epochs_done(batches))]

    def score_heldout(self, scorer: Callable[[], tuple[float, float, float]], epoch: int) -> None:
        """Score the held-out text after ``epoch`` (0-based), with BLAS on at most
        ``blas.SCORING_THREADS`` threads (their spinning would slow it, and the next
        epoch, on a busy machine), timing it apart from training, and leave that time
        out of the bar's rate."""
        started = time.perf_counter()
        with limited(SCORING_THREADS):
            self.progress.heldout[epoch] = scorer()
        seconds = time.perf_counter() - started
        self.progress.heldout_seconds += seconds
        self.loop.bar.pause(seconds)

    def load_kernel(self) -> None:
        """Import the kernels (Numba: imported by the first run, not by ``import w2v``)
        and load (or compile) the kernel in the calling thread: a call on no tokens,
        with the argument types the workers pass, which trains nothing. What Numba
        and LLVM allocate then comes from this thread's malloc arena, which has room
        left from counting, not from a worker's new one. The call is skipped when the
        kernel's stack buffers need a thread of their own (``thread_stack``): the
        first worker compiles it, in a thread where no signal handler runs."""
        import w2v.engine.kernels as kernels

        self.kernel = kernels.train_batch
        self.settings = kernels.Settings.of(self.config, self.sharers)
        if len(self.stream) and kernels.stack_bytes(self.config.dim) <= SMALL_STACK:
            self.train_tokens(np.empty(0, dtype=np.int32), self.alpha(0), batch_seed(self.config.seed, 0))
        kernels.load_scoring_kernel()

    def train_tokens(self, tokens: np.ndarray, alpha: float, seed: np.uint64) -> tuple[float, int, int, int]:
        """The kernel on ``tokens`` (int32 ids, -1 ending sentences) with the run's
        weights and settings, at learning rate ``alpha`` and LCG ``seed``: (the
        summed loss in nats, the training examples, their output-row updates, the
        rows read and written)."""
        model = self.model
        return self.kernel(tokens, model.syn0, model.tables, model.keep_prob, self.settings, alpha, seed)

    def job_alpha(self, epoch: int, batch: int) -> float:
        """The learning rate of ``batch`` of ``epoch``: from the words of the run before it."""
        return self.alpha(epoch * self.stream.words + self.words_before[batch])

    def job_seed(self, job: int) -> np.uint64:
        """The kernel's seed for ``job`` (a batch of an epoch: epoch x batches + batch)."""
        return batch_seed(self.config.seed, job)

    def train_job(self, thread: int, job: int, buffer: np.ndarray) -> None:
        """Train batch ``job`` (of all epochs' batches) in worker ``thread``, with
        ``buffer`` to read its ids into, and add what it did to ``progress``."""
        stream, progress = self.stream, self.progress
        epoch, batch = divmod(job, len(stream))
        tokens = stream.batch(batch, buffer)
        loss, examples, updates, visits = self.train_tokens(tokens, self.job_alpha(epoch, batch), self.job_seed(job))
        if not math.isfinite(loss):
            raise DivergedError(
                f"training diverged in epoch {epoch + 1} (the loss became {loss}): "
                f"{self.model.divergence_advice(self.start_alpha)}"
            )
        progress.loss[thread, epoch] += loss
        progress.examples[thread, epoch] += examples
        progress.updates[thread] += updates
        progress.visits[thread] += visits
        progress.words[thread] += stream.batch_words[batch]
        progress.batches[thread, epoch] += 1

    def work(self, thread: int, queue: JobQueue, stop: threading.Event, ended: threading.Event) -> None:
        """A worker thread: jobs from ``queue`` until none is left or ``stop`` is set."""
        try:
            buffer = np.empty(self.stream.longest, dtype=np.int32)
            while not stop.is_set() and (job := queue.take()) is not None:
                self.train_job(thread, job, buffer)
        except BaseException as err:  # handed to the main thread
            self.errors.append(err)
        stop.set()  # no jobs left (or an error): the others finish their batch and stop
        ended.set()

    def report(self) -> None:
        """Update the bar and call the hooks for the epochs finished and the words done."""
        progress = self.progress
        epochs_done = progress.epochs_done(len(self.stream))
        self.loop.report(int(progress.words.sum()), epochs_done, progress.epoch_loss, progress.heldout)

    def run_segment(self, queue: JobQueue) -> None:
        """Start the workers on ``queue``, report until they stop, and raise what stopped them."""
        from w2v.engine.kernels import stack_bytes

        stop = threading.Event()
        workers = []  # (thread, its ended event)
        for t in range(self.config.threads or 1):
            ended = threading.Event()
            workers.append((threading.Thread(target=self.work, args=(t, queue, stop, ended), daemon=True), ended))
        try:
            with signals_held(), thread_stack(stack_bytes(self.config.dim)):
                for worker, _ in workers:
                    worker.start()
            while not stop.wait(POLL_SECONDS):
                self.report()
                if self.loop.due():
                    queue.drain()
        except BaseException:  # Ctrl-C, SIGTERM or a failing callback: it goes on, a second one is dropped
            self.stop_segment(queue, stop, workers)
            raise
        if (interrupt := self.stop_segment(queue, stop, workers)) is not None:
            raise interrupt
        if self.errors:
            raise self.errors[0]

    def stop_segment(
        self, queue: JobQueue, stop: threading.Event, workers: list[tuple[threading.Thread, threading.Event]]
    ) -> BaseException | None:
        """Stop the workers, wait for their batches under way and record the jobs done.
        An interrupt while waiting (a second Ctrl-C) does not cut the wait short, so
        a checkpoint never holds weights ahead of its ``jobs_done``; it is returned.
        Waits on each worker's ``ended`` event, not ``Thread.join``: an interrupted
        join marks a thread still running as stopped (CPython 3.11, bpo-45274)."""
        stop.set()
        interrupt = None
        for worker, ended in workers:
            while not ended.is_set() and worker.is_alive():  # not alive: unstarted, if a start failed
                try:
                    ended.wait(POLL_SECONDS)
                except BaseException as err:
                    interrupt = interrupt or err
        self.progress.jobs_done = queue.next
        return interrupt
