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

import itertools
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from w2v.config import TrainConfig
from w2v.corpus import (
    SENTENCE_END,
    IdStream,
    IdStreamWriter,
    TokenBlock,
    block_ids,
    expand_sources,
    sentence_blocks,
    token_blocks,
)
from w2v.errors import CorpusError, DivergedError
from w2v.kernels import train_batch_kernel
from w2v.vectors import TrainReport, Vectors, decode_word
from w2v.vocab import Vocab, WordCounter

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


def corpus_blocks(corpus) -> Iterable[TokenBlock]:
    """Token blocks from a path, URL or ``-``, a list of them, or an iterable of
    tokenised sentences (lists of str)."""
    if isinstance(corpus, (str, os.PathLike)):
        return token_blocks(expand_sources([corpus]))
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, (str, os.PathLike)) for c in corpus):
        return token_blocks(expand_sources(corpus))
    return sentence_blocks(corpus)


def count_and_encode(
    blocks: Iterable[TokenBlock], config: TrainConfig, workdir: str, read_vocab: str | None = None
) -> tuple[Vocab, IdStream, int]:
    """One pass over the corpus: count words and write their provisional ids; then
    choose the vocabulary and rewrite the ids as vocabulary ids (rare words dropped)
    into an ``IdStream``. Returns (vocabulary, stream, corpus tokens)."""
    counter = WordCounter(config.prune_at)
    provisional_path = os.path.join(workdir, "provisional.i32")
    with open(provisional_path, "wb") as out:
        for block in blocks:
            out.write(block_ids(block, counter.add(block.tokens)).tobytes())
    if counter.tokens == 0:
        raise CorpusError("the corpus is empty: it holds no words")
    live = counter.live_ids()
    mapping = np.full(len(counter.words) + 1, -2, dtype=np.int32)  # last slot: SENTENCE_END
    mapping[-1] = SENTENCE_END
    if read_vocab is not None:
        words, counts = Vocab.read_counts(read_vocab)
        vocab, _ = Vocab.select(words, counts, config.min_count, config.max_vocab)
        index = {word: i for i, word in enumerate(vocab.words)}
        mapping[live] = [index.get(counter.words[i], -2) for i in live.tolist()]
    else:
        vocab, kept = Vocab.select(
            [counter.words[i] for i in live.tolist()], counter.counts[live], config.min_count, config.max_vocab
        )
        mapping[live[kept]] = np.arange(len(vocab), dtype=np.int32)
    if len(vocab) == 0:
        raise CorpusError(f"the vocabulary is empty: no word occurs at least min_count={config.min_count} times")
    writer = IdStreamWriter(os.path.join(workdir, "ids.i32"), config.batch_words)
    with open(provisional_path, "rb") as provisional:
        while (ids := np.fromfile(provisional, dtype=np.int32, count=ENCODE_IDS)).size:
            mapped = mapping[ids]  # SENTENCE_END (-1) indexes the last slot
            writer.write(mapped[mapped != -2])
    os.unlink(provisional_path)
    return vocab, writer.finish(), counter.tokens


@dataclass
class Model:
    """The weights and the tables the kernel reads (see ``kernels.make_train_batch``)."""

    syn0: np.ndarray
    params: tuple
    keep_prob: np.ndarray

    @classmethod
    def create(cls, vocab: Vocab, config: TrainConfig) -> "Model":
        size, dim = len(vocab), config.dim
        empty = np.zeros((0, dim), dtype=np.float32)
        syn1 = np.zeros((max(size - 1, 1), dim), dtype=np.float32) if config.hs else empty
        syn1neg = np.zeros((size, dim), dtype=np.float32) if config.negative else empty
        codes, points, offsets = vocab.huffman() if config.hs else _no_codes(size)
        alias_prob, alias_idx = vocab.alias_table(config.ns_exponent)
        params = (syn1, syn1neg, codes, points, offsets, alias_prob, alias_idx)
        return cls(init_input_vectors(size, dim, config.seed), params, vocab.keep_probabilities(config.sample))


def _no_codes(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros(0, np.uint8), np.zeros(0, np.int32), np.zeros(size + 1, np.int64)


class Progress:
    """Per-thread, per-epoch accumulators (float64 loss) that the main thread reads."""

    def __init__(self, threads: int, epochs: int):
        self.loss = np.zeros((threads, epochs), dtype=np.float64)
        self.examples = np.zeros((threads, epochs), dtype=np.int64)
        self.batches = np.zeros((threads, epochs), dtype=np.int64)
        self.words = np.zeros(threads, dtype=np.int64)

    def epoch_loss(self, epoch: int) -> float:
        """Mean loss per training example of ``epoch`` so far (nats), nan before any."""
        examples = self.examples[:, epoch].sum()
        return float(self.loss[:, epoch].sum() / examples) if examples else float("nan")


def run_epochs(
    model: Model,
    stream: IdStream,
    config: TrainConfig,
    show_progress: bool = False,
    on_epoch_end: Callable[[int, float], None] | None = None,
    on_progress: Callable[[int, int, float, float], None] | None = None,
) -> list[float]:
    """Train ``config.epochs`` epochs over ``stream`` with ``config.threads`` threads.
    Returns the mean loss of each epoch (nats per example)."""
    kernel = train_batch_kernel(config.dim)
    threads, start_alpha, min_alpha = config.threads, config.alpha, config.min_alpha
    assert threads is not None and start_alpha is not None and min_alpha is not None  # config.resolved()
    batches, epochs, total = len(stream), config.epochs, stream.words * config.epochs
    words_before = np.concatenate([[0], np.cumsum(stream.batch_words)])
    jobs = itertools.count()
    stop = threading.Event()
    errors: list[BaseException] = []
    progress = Progress(threads, epochs)
    flags = (config.window, config.negative, config.model == "cbow", config.cbow_mean)

    def work(thread: int) -> None:
        try:
            while not stop.is_set():
                job = next(jobs)
                if job >= batches * epochs:
                    break
                epoch, batch = divmod(job, batches)
                done = epoch * stream.words + words_before[batch]
                alpha = learning_rate(start_alpha, min_alpha, done / total)
                tokens = stream.batch(batch)
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

    workers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(threads)]
    bar = tqdm(total=total, unit="w", unit_scale=True, disable=not show_progress, file=sys.stderr, desc="training")
    finished = 0

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
        bar.set_postfix(lr=f"{lr:.5f}", loss=f"{loss:.4f}", refresh=False)
        bar.update(done - bar.n)
        if on_progress is not None:
            on_progress(done, total, lr, loss)

    try:
        try:
            for worker in workers:
                worker.start()
            while not stop.wait(POLL_SECONDS):
                report()
        finally:  # also on Ctrl-C, SIGTERM or a failing callback
            stop.set()
            for worker in workers:
                if worker.ident is not None:  # started (an interrupt may come while starting them)
                    worker.join()
        if errors:
            raise errors[0]
        report()
    finally:
        bar.close()  # before any error message
    return [progress.epoch_loss(e) for e in range(epochs)]


def train(
    corpus,
    *,
    read_vocab: str | None = None,
    save_vocab: str | None = None,
    progress: bool = False,
    on_epoch_end: Callable[[int, float], None] | None = None,
    on_progress: Callable[[int, int, float, float], None] | None = None,
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
    """
    start = time.perf_counter()
    config = TrainConfig(**settings).resolved()
    with tempfile.TemporaryDirectory(prefix="w2v-") as workdir:
        vocab, stream, corpus_words = count_and_encode(corpus_blocks(corpus), config, workdir, read_vocab)
        prepare_seconds = time.perf_counter() - start
        try:
            if save_vocab is not None:
                vocab.save(save_vocab)
            model = Model.create(vocab, config)
            train_start = time.perf_counter()
            losses = run_epochs(model, stream, config, progress, on_epoch_end, on_progress)
            train_seconds = time.perf_counter() - train_start
        finally:
            stream.close()
    report = TrainReport(
        vocab_size=len(vocab),
        corpus_words=corpus_words,
        train_words=stream.words * config.epochs,
        seconds=time.perf_counter() - start,
        train_seconds=train_seconds,
        epoch_loss=losses,
        prepare_seconds=prepare_seconds,
    )
    return Vectors([decode_word(w) for w in vocab.words], model.syn0, report)
