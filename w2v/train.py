"""Training orchestration: corpus to id stream, weights, worker threads, schedule, progress.

The numeric work is in ``kernels``; this module only feeds it. Each worker
thread takes the next batch (a slice of the id stream ending at a sentence end),
computes the batch's learning rate from its place in the whole run and a seed
from its index, and calls the ``nogil`` kernel, which updates the shared
weights without locks (Hogwild, as word2vec.c's threads do).

Because a batch's learning rate and seed depend only on its index, one thread
gives byte-identical results for one seed; several threads give the same
random draws, interleaved.
"""

import ctypes
import dataclasses
import gc
import math
import os
import signal
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from w2v.config import TRAIN_FIELDS, TrainConfig
from w2v.corpus import SENTENCE_END, IdStream, IdStreamWriter, block_ids, expand_sources, sentence_blocks
from w2v.errors import ConfigError, CorpusError, DivergedError, W2VError
from w2v.formats import decode_word
from w2v.report import TrainReport
from w2v.state import TrainState, checkpoint_path
from w2v.vectors import Vectors
from w2v.vocab import ProvisionalCounts, Vocab, WordCounter

MASK64 = (1 << 64) - 1
ENCODE_IDS = 1 << 20  # provisional ids remapped per step
POLL_SECONDS = 0.2


def learning_rate(alpha: float, min_alpha: float, progress: float) -> float:
    """Linear decay from ``alpha`` at progress 0 to ``min_alpha`` at 1 (the fraction
    of all epochs' words done), as word2vec.c and gensim do."""
    return alpha - (alpha - min_alpha) * min(max(progress, 0.0), 1.0)


def batch_seed(seed: int, job: int) -> np.uint64:
    """A well-mixed 64-bit LCG seed for batch ``job`` of a run seeded ``seed`` (splitmix64)."""
    z = (seed * 0x9E3779B97F4A7C15 + (job + 1) * 0xD1B54A32D192ED03) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return np.uint64(z ^ (z >> 31))


def init_input_vectors(size: int, dim: int, seed: int) -> np.ndarray:
    """word2vec.c's init: uniform in [-0.5/dim, 0.5/dim), float32 (size, dim)."""
    rng = np.random.default_rng(seed)
    vectors = rng.random((size, dim), dtype=np.float32)
    vectors -= 0.5
    vectors /= dim
    return vectors


def count_corpus(corpus, prune_at: int) -> tuple[ProvisionalCounts, Iterator[np.ndarray]]:
    """A counter and the corpus' provisional ids, block by block with their sentence
    ends (int32), which it counts as they are read. ``corpus``: a path, URL or
    ``-``, or a list of them, read as bytes (``scan.ChunkCounter``); or an
    iterable of tokenised sentences (lists of str; ``WordCounter``). Both give
    a corpus the same ids."""
    if isinstance(corpus, (str, os.PathLike)):
        corpus = [corpus]
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, (str, os.PathLike)) for c in corpus):
        from w2v.scan import ChunkCounter  # Numba: imported by the first run, not by ``import w2v``

        reader = ChunkCounter(prune_at)
        return reader, reader.read(expand_sources(corpus))
    counter = WordCounter(prune_at)
    return counter, (block_ids(block, counter.add(block.tokens)) for block in sentence_blocks(corpus))


VocabChooser = Callable[[Sequence[bytes], np.ndarray], Vocab]


@dataclass
class Encoded:
    """The corpus as vocabulary ids, with its fingerprint."""

    vocab: Vocab
    stream: IdStream
    corpus_words: int  # tokens read (rare words included)
    digest: int  # CRC-32 of the id stream: a resumed run checks it reads the same corpus


def count_and_encode(corpus, config: TrainConfig, workdir: str, choose: VocabChooser | None = None) -> Encoded:
    """One pass over ``corpus`` (``count_corpus``): count words and write their
    provisional ids; then ``choose(words, counts)`` the vocabulary from the
    counts (words kept after pruning, first-occurrence order; by default
    ``select_vocab``) and rewrite the ids as vocabulary ids (words outside it
    dropped) into an ``IdStream``."""
    choose = choose or select_vocab(config, None)
    counter, blocks = count_corpus(corpus, config.prune_at)
    provisional_path = os.path.join(workdir, "provisional.i32")
    with open(provisional_path, "wb") as out:
        for ids in blocks:
            out.write(ids.tobytes())
    if counter.tokens == 0:
        raise CorpusError("the corpus is empty: it holds no words")
    live = counter.live_ids()
    vocab = choose(counter.words_of(live), counter.counts[live])
    if len(vocab) == 0:
        raise CorpusError(f"the vocabulary is empty: no word occurs at least min_count={config.min_count} times")
    mapping = np.full(counter.issued + 1, -2, dtype=np.int32)  # last slot: SENTENCE_END
    mapping[-1] = SENTENCE_END
    found = counter.find(vocab.words)  # a word of an old vocabulary may not be in this corpus
    mapping[found[found >= 0]] = np.flatnonzero(found >= 0)
    writer = IdStreamWriter(os.path.join(workdir, "ids.i32"), config.batch_words)
    digest = 0
    with open(provisional_path, "rb") as provisional:
        while (ids := np.fromfile(provisional, dtype=np.int32, count=ENCODE_IDS)).size:
            mapped = mapping[ids]  # SENTENCE_END (-1) indexes the last slot
            mapped = mapped[mapped != -2]
            writer.write(mapped)
            digest = zlib.crc32(mapped.tobytes(), digest)
    os.unlink(provisional_path)
    return Encoded(vocab, writer.finish(), counter.tokens, digest)


def return_free_memory() -> None:
    """Give the memory freed so far back to the operating system (glibc's
    ``malloc_trim``; nothing where there is none), so that what counting held does
    not stay under the weights: peak RSS on the benchmark corpus -14 MB."""
    gc.collect()
    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):  # no C library to open by name (Windows)
        return
    if trim is not None:
        trim(0)


def select_vocab(config: TrainConfig, read_vocab: str | None) -> VocabChooser:
    """A fresh run's vocabulary: the corpus' counts (or a vocabulary file's) cut by
    ``min_count`` and ``max_vocab``."""

    def choose(words: Sequence[bytes], counts: np.ndarray) -> Vocab:
        if read_vocab is not None:
            words, counts = Vocab.read_counts(read_vocab)
        return Vocab.select(words, counts, config.min_count, config.max_vocab)[0]

    return choose


def merge_vocab(old: Vocab, min_count: int) -> VocabChooser:
    """``--update-vocab``: the old words plus the new corpus' words seen at least
    ``min_count`` times in it; an old word's count grows by its new count. Sorted
    by count again (ties: old words first, in their order), as a fresh run would be."""

    def choose(words: Sequence[bytes], counts: np.ndarray) -> Vocab:
        merged = dict(zip(old.words, old.counts.tolist(), strict=True))
        for word, count in zip(words, counts.tolist(), strict=True):
            if word in merged:
                merged[word] += count
            elif count >= min_count:
                merged[word] = count
        return Vocab.select(list(merged), np.fromiter(merged.values(), np.int64, len(merged)), 1, None)[0]

    return choose


@dataclass
class Model:
    """The weights and the tables the kernel reads (see ``kernels.make_train_batch``)."""

    syn0: np.ndarray
    params: tuple
    keep_prob: np.ndarray

    @property
    def syn1(self) -> np.ndarray:
        return self.params[0]

    @property
    def syn1neg(self) -> np.ndarray:
        return self.params[1]

    @classmethod
    def create(cls, vocab: Vocab, config: TrainConfig) -> "Model":
        """Fresh weights (``fresh_weights``) and their tables."""
        return cls.from_weights(vocab, config, *fresh_weights(len(vocab), config))

    @classmethod
    def from_weights(
        cls, vocab: Vocab, config: TrainConfig, syn0: np.ndarray, syn1: np.ndarray, syn1neg: np.ndarray
    ) -> "Model":
        """Given weights (float32: (V, dim); (V - 1, dim) or (0, dim); (V, dim) or (0, dim))
        and the tables built from ``vocab`` and ``config``."""
        codes, points, offsets = vocab.huffman() if config.hs else _no_codes(len(vocab))
        alias_prob, alias_idx = vocab.alias_table(config.ns_exponent)
        params = (syn1, syn1neg, codes, points, offsets, alias_prob, alias_idx)
        return cls(syn0, params, vocab.keep_probabilities(config.sample))


def fresh_weights(size: int, config: TrainConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """word2vec.c's start for ``size`` words: random input vectors, zero output
    vectors (``(0, dim)`` for a loss that is off)."""
    syn1 = np.zeros((max(size - 1, 1) if config.hs else 0, config.dim), dtype=np.float32)
    syn1neg = np.zeros((size if config.negative else 0, config.dim), dtype=np.float32)
    return init_input_vectors(size, config.dim, config.seed), syn1, syn1neg


def carry_weights(base: TrainState, vocab: Vocab, config: TrainConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``--init-model``: the weights for ``vocab`` (the model's vocabulary, perhaps
    updated) from ``base``'s. Known words keep their rows; new words start as in a
    fresh run (random input vector, zero output vector). Hierarchical-softmax nodes
    keep their rows and new ones start at zero (as gensim does), although a changed
    vocabulary rebuilds the Huffman tree under them."""
    old = {word: i for i, word in enumerate(base.vocab.words)}
    rows = np.array([old.get(word, -1) for word in vocab.words], dtype=np.int64)
    known = rows >= 0
    syn0, syn1, syn1neg = fresh_weights(len(vocab), config)
    syn0[known] = base.syn0[rows[known]]
    if config.negative:
        syn1neg[known] = base.syn1neg[rows[known]]
    if config.hs:
        shared = min(len(syn1), len(base.syn1))
        syn1[:shared] = base.syn1[:shared]
    return syn0, syn1, syn1neg


def _no_codes(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros(0, np.uint8), np.zeros(0, np.int32), np.zeros(size + 1, np.int64)


class Progress:
    """Per-thread, per-epoch accumulators (float64 loss) that the main thread reads,
    and ``jobs_done``: every batch below it is finished (updated between segments)."""

    def __init__(self, threads: int, epochs: int, batches: int, words_before: np.ndarray, state=None):
        self.loss = np.zeros((threads, epochs), dtype=np.float64)
        self.examples = np.zeros((threads, epochs), dtype=np.int64)
        self.batches = np.zeros((threads, epochs), dtype=np.int64)
        self.words = np.zeros(threads, dtype=np.int64)
        self.jobs_done = 0
        if state is not None:  # resumed: row 0 holds what the checkpoint did
            self.jobs_done = state.jobs_done
            epoch, batch = divmod(state.jobs_done, batches)
            self.loss[0], self.examples[0] = state.epoch_loss, state.epoch_examples
            self.batches[0, :epoch] = batches
            if epoch < epochs:
                self.batches[0, epoch] = batch
            self.words[0] = epoch * words_before[-1] + words_before[batch]

    def epoch_loss(self, epoch: int) -> float:
        """Mean loss per training example of ``epoch`` so far (nats), nan before any."""
        examples = self.examples[:, epoch].sum()
        return float(self.loss[:, epoch].sum() / examples) if examples else float("nan")


HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver the first that came.

    For starting worker threads: a handler that raises inside ``Thread.start()``
    leaves the new thread half-registered, and it dies printing a traceback.
    Python runs handlers in the main thread whichever thread the OS picked (a
    progress-bar monitor, say), so the main thread's handlers are swapped for
    one that notes the signal; the calling thread's mask (POSIX) also blocks
    them, and threads started in the block inherit it, so workers never take
    them. Off the main thread, where handlers cannot be set, only the mask."""
    noted: list[int] = []
    swap = threading.current_thread() is threading.main_thread()
    handlers = {number: signal.signal(number, lambda n, _: noted.append(n)) for number in HELD_SIGNALS if swap}
    masked = hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS) if masked else set()
    try:
        yield
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for number, handler in handlers.items():
            signal.signal(number, handler)
        if noted:
            signal.raise_signal(noted[0])


THREAD_STACK_SPARE = 1 << 20  # bytes of thread stack beside the kernel's buffers
SMALL_STACK = 256 << 10  # kernel buffers up to this fit any platform's default thread stack


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


def run_epochs(
    model: Model,
    stream: IdStream,
    config: TrainConfig,
    progress: Progress,
    show_progress: bool = False,
    on_epoch_end: Callable[[int, float], None] | None = None,
    on_progress: Callable[[int, int, float, float], None] | None = None,
    checkpoint: Callable[[Progress], None] | None = None,
    checkpoint_seconds: float | None = None,
    kernel: Callable | None = None,
) -> list[float]:
    """Train ``config.epochs`` epochs over ``stream`` with ``config.threads`` threads,
    from batch ``progress.jobs_done`` on. Returns the mean loss of each epoch (nats
    per example). ``kernel``: the batch kernel, by default ``train_batch_kernel(config.dim)``
    (``scripts/ab_kernels.py`` passes variants of it).

    Work runs in segments of at most one epoch; between two, every batch below
    ``progress.jobs_done`` is done and ``checkpoint(progress)`` is called: at each
    epoch's end, every ``checkpoint_seconds``, and when the main thread is
    interrupted (Ctrl-C, SIGTERM as an exception), before re-raising.
    """
    from w2v.kernels import stack_bytes, train_batch_kernel  # Numba: imported by the first run, not by ``import w2v``

    kernel = kernel or train_batch_kernel(config.dim)
    threads, start_alpha, min_alpha = config.threads, config.alpha, config.min_alpha
    assert threads is not None and start_alpha is not None and min_alpha is not None  # config.resolved()
    batches, epochs, total = len(stream), config.epochs, stream.words * config.epochs
    words_before = stream_offsets(stream)
    errors: list[BaseException] = []
    flags = (config.window, config.negative, config.model == "cbow", config.cbow_mean)

    def work(thread: int, queue: JobQueue, stop: threading.Event, ended: threading.Event) -> None:
        try:
            buffer = np.empty(stream.longest, dtype=np.int32)
            while not stop.is_set() and (job := queue.take()) is not None:
                epoch, batch = divmod(job, batches)
                done = epoch * stream.words + words_before[batch]
                alpha = learning_rate(start_alpha, min_alpha, done / total)
                tokens = stream.batch(batch, buffer)
                seed = batch_seed(config.seed, job)
                loss, examples = kernel(tokens, model.syn0, model.params, model.keep_prob, *flags, alpha, seed)
                if not math.isfinite(loss):
                    raise DivergedError(
                        f"training diverged in epoch {epoch + 1} (the loss became {loss}): "
                        f"lower the learning rate (--alpha, now {start_alpha:g})"
                    )
                progress.loss[thread, epoch] += loss
                progress.examples[thread, epoch] += examples
                progress.words[thread] += stream.batch_words[batch]
                progress.batches[thread, epoch] += 1
        except BaseException as err:  # handed to the main thread
            errors.append(err)
        stop.set()  # no jobs left (or an error): the others finish their batch and stop
        ended.set()

    bar = progress_bar(total, show_progress)
    bar.update(int(progress.words.sum()))
    finished = progress.jobs_done // max(batches, 1)  # epochs reported
    saved = time.monotonic()

    def report() -> None:
        nonlocal finished
        while finished < epochs and progress.batches[:, finished].sum() == batches:
            if on_epoch_end is not None:
                on_epoch_end(finished, progress.epoch_loss(finished))
            finished += 1
        done = int(progress.words.sum())
        lr = learning_rate(start_alpha, min_alpha, done / total)
        current = min(finished, epochs - 1)
        if not progress.examples[:, current].any() and current > 0:
            current -= 1  # an epoch just begun: show the last one's loss until it has examples
        loss = progress.epoch_loss(current)
        shown = {"lr": f"{lr:.5f}"}
        if not np.isnan(loss):  # nan: no examples yet (the kernel still compiling, say)
            shown["loss"] = f"{loss:.4f}"
        bar.set_postfix(shown, refresh=False)
        bar.update(done - bar.n)
        if on_progress is not None:
            on_progress(done, total, lr, loss)

    def stop_segment(
        queue: JobQueue, stop: threading.Event, workers: list[tuple[threading.Thread, threading.Event]]
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
        progress.jobs_done = queue.next
        return interrupt

    def run_segment(queue: JobQueue) -> None:
        stop = threading.Event()
        workers = []  # (thread, its ended event)
        for t in range(threads):
            ended = threading.Event()
            workers.append((threading.Thread(target=work, args=(t, queue, stop, ended), daemon=True), ended))
        try:
            with signals_held(), thread_stack(stack_bytes(config.dim)):
                for worker, _ in workers:
                    worker.start()
            while not stop.wait(POLL_SECONDS):
                report()
                if checkpoint_seconds is not None and time.monotonic() - saved >= checkpoint_seconds:
                    queue.drain()
        except BaseException:  # Ctrl-C, SIGTERM or a failing callback: it goes on, a second one is dropped
            stop_segment(queue, stop, workers)
            raise
        if (interrupt := stop_segment(queue, stop, workers)) is not None:
            raise interrupt
        if errors:
            raise errors[0]

    try:
        try:
            if batches and stack_bytes(config.dim) <= SMALL_STACK:  # the kernel's buffers fit this thread's stack
                load_kernel(kernel, model, flags, learning_rate(start_alpha, min_alpha, 0.0), config.seed)
            while progress.jobs_done < batches * epochs:
                run_segment(JobQueue(progress.jobs_done, (progress.jobs_done // batches + 1) * batches))
                check_finite(model, max((progress.jobs_done - 1) // batches + 1, 1), start_alpha)
                if checkpoint is not None:
                    checkpoint(progress)
                    saved = time.monotonic()
        except BaseException as err:
            if checkpoint is not None and not errors and not isinstance(err, W2VError):
                checkpoint(progress)  # interrupted: every batch below jobs_done is done
            raise
        report()
    finally:
        bar.close()  # before any error message
    return [progress.epoch_loss(e) for e in range(epochs)]


class NoBar:
    """The part of tqdm's bar that ``run_epochs`` uses, showing nothing."""

    def __init__(self):
        self.n = 0

    def update(self, words: int) -> None:
        self.n += words

    def set_postfix(self, *_args, **_kwargs) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, show: bool):
    """A tqdm bar on stderr counting ``total`` words, or ``NoBar`` when not ``show``:
    tqdm is imported only to show one (it costs 30-40 ms and 0.8 MiB of peak RSS)."""
    if not show:
        return NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="w", unit_scale=True, file=sys.stderr, desc="training")


def load_kernel(kernel: Callable, model: Model, flags: tuple, alpha: float, seed: int) -> None:
    """Load (or compile) ``kernel`` in the calling thread: a call on no tokens, with the
    argument types the workers pass (a writable, contiguous int32 array), which trains
    nothing. What Numba and LLVM allocate then comes from this thread's malloc arena,
    which has room left from counting, not from a worker's new one: peak RSS -4 MiB
    (NS) and -9 MiB (HS) on the benchmark corpus."""
    kernel(np.empty(0, dtype=np.int32), model.syn0, model.params, model.keep_prob, *flags, alpha, batch_seed(seed, 0))


def check_finite(model: Model, epoch: int, alpha: float) -> None:
    """DivergedError if a weight is NaN or infinite. Each batch's loss is checked as it
    ends (it reads the rows the batch touched); this scan of every weight, after each
    epoch and before each checkpoint, also catches a row that went non-finite and was
    not read again, so no checkpoint or output holds one. min and max propagate NaN
    and take no memory, where ``np.isfinite(w).all()`` would allocate V * dim bytes."""
    for name, weights in (("syn0", model.syn0), ("syn1", model.syn1), ("syn1neg", model.syn1neg)):
        if weights.size and not (math.isfinite(weights.min()) and math.isfinite(weights.max())):
            raise DivergedError(
                f"training diverged in epoch {epoch} (non-finite weights in {name}): "
                f"lower the learning rate (--alpha, now {alpha:g})"
            )


STRUCTURE = ("model", "dim", "hs", "negative", "ns_exponent", "cbow_mean")  # fixed by a model's weights


def train(
    corpus,
    *,
    read_vocab: str | None = None,
    save_vocab: str | None = None,
    progress: bool = False,
    on_epoch_end: Callable[[int, float], None] | None = None,
    on_progress: Callable[[int, int, float, float], None] | None = None,
    checkpoint: str | None = None,
    checkpoint_every: float | None = None,
    resume: str | None = None,
    init_model: str | None = None,
    update_vocab: bool = False,
    save_model: str | None = None,
    notes: dict | None = None,
    **settings,
) -> Vectors:
    """Train word vectors on ``corpus`` and return them.

    ``corpus``: a file path, URL or ``-`` (stdin), a list of those, or an iterable of
    tokenised sentences. ``settings``: any field of ``TrainConfig`` (``model``,
    ``dim``, ``window``, ``negative``, ``hs``, ``sample``, ``epochs``, ...).
    ``on_epoch_end(epoch, mean_loss)`` is called after each epoch.
    ``on_progress(words_done, total_words, alpha, loss)`` is called from the calling
    thread about every 0.2 s during training and once at the end (when
    ``words_done == total_words``): words trained so far over all epochs, the total
    to train (corpus words times epochs), the current learning rate and the mean
    loss of the current epoch so far (nats, nan before any example). The result's
    ``report`` holds the per-epoch loss and timings.

    Long runs (see ``w2v.state`` for the file format):
    ``checkpoint``: a folder where the whole training state is saved after each
    epoch, every ``checkpoint_every`` minutes and when interrupted (KeyboardInterrupt
    or another exception in the calling thread), replacing the previous one only
    once complete. ``resume``: such a folder (or file) to continue from, on the same
    corpus, checkpointing on there; the settings are the checkpoint's (only
    ``threads`` may change) and with one thread the result is byte-identical to an
    uninterrupted run.
    ``save_model``: write the final state as a model file. ``init_model``: start
    from a model file's weights and vocabulary (its ``STRUCTURE`` settings apply)
    and train on ``corpus``; ``update_vocab`` adds the corpus' words seen at least
    ``min_count`` times. ``notes``: a JSON-able dict stored in checkpoints.
    """
    start = time.perf_counter()
    config, base, choose = plan_run(settings, read_vocab, resume, init_model, update_vocab)
    if resume is not None and checkpoint is None and os.path.isdir(resume):
        checkpoint = resume  # keep checkpointing where the run was
    if checkpoint is not None:
        make_checkpoint_folder(checkpoint)
    with tempfile.TemporaryDirectory(prefix="w2v-") as workdir:
        encoded = count_and_encode(corpus, config, workdir, choose)
        return_free_memory()
        stream, vocab = encoded.stream, encoded.vocab
        prepare_seconds = time.perf_counter() - start
        try:
            if resume is not None:
                check_same_corpus(base, encoded, resume)
            resumed = base if resume is not None else None
            model = build_model(vocab, config, base)
            done = Progress(config.threads or 1, config.epochs, len(stream), stream_offsets(stream), resumed)
            words_at_start = int(done.words.sum())

            def state(progress: Progress) -> TrainState:
                return TrainState(
                    config, vocab, model.syn0, model.syn1, model.syn1neg,
                    progress.loss.sum(axis=0), progress.examples.sum(axis=0), progress.jobs_done,
                    len(stream), stream.words, encoded.corpus_words, encoded.digest, notes or {},
                )  # fmt: skip

            saver = None if checkpoint is None else lambda p: state(p).save(checkpoint_path(checkpoint))
            every = None if checkpoint_every is None else checkpoint_every * 60.0
            train_start = time.perf_counter()
            losses = run_epochs(model, stream, config, done, progress, on_epoch_end, on_progress, saver, every)
            train_seconds = time.perf_counter() - train_start
            if save_vocab is not None:  # after training: a failed run leaves an old file untouched
                vocab.save(save_vocab)
            if save_model is not None:
                state(done).save(save_model)
        finally:
            stream.close()
    report = TrainReport(
        vocab_size=len(vocab),
        corpus_words=encoded.corpus_words,
        train_words=stream.words * config.epochs - words_at_start,
        seconds=time.perf_counter() - start,
        train_seconds=train_seconds,
        epoch_loss=losses,
        prepare_seconds=prepare_seconds,
    )
    model.params = ()  # the output weights go before the words are decoded (peak RSS -4 MiB, NS, wiki-en-100m)
    return Vectors([decode_word(w) for w in vocab.words], model.syn0, report)


def plan_run(
    settings: dict, read_vocab: str | None, resume: str | None, init_model: str | None, update_vocab: bool
) -> tuple[TrainConfig, TrainState | None, VocabChooser]:
    """The settings, the state to start from (a checkpoint or model, else None) and
    how to choose the vocabulary, for a fresh, resumed or continued run."""
    if resume is not None and init_model is not None:
        raise ConfigError("resume and init_model exclude each other: resume continues a checkpoint's own run")
    if update_vocab and init_model is None:
        raise ConfigError("update_vocab needs init_model: it adds words to a saved model's vocabulary")
    if read_vocab is not None and (init_model is not None or resume is not None):
        raise ConfigError("read_vocab does not apply to a resumed or continued run: it keeps the model's vocabulary")
    if resume is not None:
        base = TrainState.load(resume)
        config = TrainConfig(**{**dataclasses.asdict(base.config), "threads": None, **settings}).resolved()
        changed = sorted(k for k in TRAIN_FIELDS - {"threads"} if getattr(config, k) != getattr(base.config, k))
        if changed:
            raise ConfigError(f"a resumed run keeps the checkpoint's settings; cannot change {', '.join(changed)}")
        return config, base, lambda _words, _counts: base.vocab
    if init_model is not None:
        base = TrainState.load(init_model)
        config = TrainConfig(**{**{k: getattr(base.config, k) for k in STRUCTURE}, **settings}).resolved()
        for key in STRUCTURE:
            if getattr(config, key) != getattr(base.config, key):
                raise ConfigError(
                    f"{init_model} was trained with {key}={getattr(base.config, key)!r}; "
                    f"continued training cannot change it to {getattr(config, key)!r}"
                )
        choose = merge_vocab(base.vocab, config.min_count) if update_vocab else (lambda _w, _c: base.vocab)
        return config, base, choose
    config = TrainConfig(**settings).resolved()
    return config, None, select_vocab(config, read_vocab)


def build_model(vocab: Vocab, config: TrainConfig, base: TrainState | None) -> Model:
    """Fresh weights, or ``base``'s carried over to ``vocab``."""
    if base is None:
        return Model.create(vocab, config)
    if base.vocab.words is vocab.words:  # resumed, or continued without new words
        return Model.from_weights(vocab, config, base.syn0, base.syn1, base.syn1neg)
    return Model.from_weights(vocab, config, *carry_weights(base, vocab, config))


def check_same_corpus(base: TrainState | None, encoded: Encoded, where: str) -> None:
    """A resumed run must read the corpus its checkpoint was made on."""
    assert base is not None
    if (len(encoded.stream), encoded.stream.words, encoded.digest) != (
        base.batches,
        base.stream_words,
        base.corpus_digest,
    ):
        raise CorpusError(
            f"the corpus is not the one checkpointed in {where} ({encoded.stream.words:,} words in vocabulary "
            f"where it had {base.stream_words:,}, or different text): resume needs the same corpus"
        )


def make_checkpoint_folder(folder: str) -> None:
    """Create the checkpoint folder (and its parents) or fail with one line."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create checkpoint folder {folder}: {err.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"checkpoint folder is not writable: {folder}")


def stream_offsets(stream: IdStream) -> np.ndarray:
    """Words before each batch of an epoch, and the epoch's words last ((B + 1,) int64)."""
    return np.concatenate([[0], np.cumsum(stream.batch_words)])
