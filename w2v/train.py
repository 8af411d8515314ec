"""Training a run: plan it (fresh, resumed or continued), encode the corpus, run
the epochs (``workers``), return the vectors.

The numeric work is in ``kernels``, called by ``workers``' threads; the corpus
is read once (``idstream.encode_corpus``) and trained from its id stream.
"""

import ctypes
import dataclasses
import gc
import itertools
import math
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from w2v.cluster.connect import connect
from w2v.cluster.runs import ClusterPlan
from w2v.config import TRAIN_FIELDS, TrainConfig, check_setting_names, keyword_settings
from w2v.corpus.idstream import Encoded, IdStream, VocabChooser, check_trainable, encode_corpus, evenly_spaced
from w2v.corpus.ngrams import NgramSettings
from w2v.corpus.sources import expand_sources, shared_stream, source_list
from w2v.corpus.vocab import Vocab
from w2v.engine.heldout_sample import Sampling
from w2v.engine.runloop import Hooks
from w2v.engine.scoring import Plan, TreeScorer, above_unigram_note, model_losses, score_plan
from w2v.engine.weights import Model, carry_weights, input_weights
from w2v.engine.workers import Progress, run_epochs, stream_offsets
from w2v.errors import ConfigError, CorpusError, UnwritableOutput, plural
from w2v.files import check_writable, write_atomic
from w2v.locks import checkpoint_lock
from w2v.losses import LOSSES
from w2v.progress import Steps, note, reading
from w2v.report import TrainReport
from w2v.starts import InputVectors, Start, starting_point
from w2v.vectorio.as_fasttext import save_as_fasttext
from w2v.vectorio.fasttext import dictionary_problem, refusal
from w2v.vectorio.modelfile import TrainState, check_replaceable, checkpoint_path
from w2v.vectorio.subwords import SubwordVectors
from w2v.vectors.wordvectors import Vectors
from w2v.words import decode_word, display_word


def return_free_memory() -> None:
    """Give the memory freed so far back to the operating system (glibc's
    ``malloc_trim``; nothing where there is none), so that what counting held does
    not stay under the weights."""
    gc.collect()
    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):  # no C library to open by name (Windows)
        return
    if trim is not None:
        trim(0)


def select_vocab(config: TrainConfig, read_vocab: str | None) -> VocabChooser:
    """A fresh run's vocabulary: the corpus' counts (or a vocabulary file's) cut by
    ``min_count`` and ``max_vocab``; CorpusError where one word is left (``one_word_reason``)."""

    def choose(words: Sequence[bytes], counts: np.ndarray) -> Vocab:
        if read_vocab is not None:
            words, counts = Vocab.read_counts(read_vocab)
        vocab = Vocab.choose(words, counts, config.min_count, config.max_vocab)
        if len(vocab) == 1:
            raise CorpusError(one_word_reason(vocab, counts, config))
        return vocab

    return choose


def one_word_reason(vocab: Vocab, counts: np.ndarray, config: TrainConfig) -> str:
    """Why a vocabulary of one word, chosen from words of ``counts`` (all counted), is
    nothing to train: a word's vector is learnt against other words (its noise words,
    its tree's nodes), which there are none of; and what left the others out."""
    if len(counts) == 1:
        why = "no other word was counted"
    elif config.max_vocab == 1:
        why = "max_vocab=1"
    else:
        next_count = int(np.sort(counts)[-2])
        why = f"min_count={config.min_count}; the next most frequent word occurs {plural(next_count, 'time')}"
    kept = f"'{display_word(decode_word(vocab.words[0]))}' ({why})"
    return f"nothing to train: the vocabulary holds one word, {kept}: a vector is learnt against other words'"


HELDOUT_PAIRS = 30_000  # predictions scored on the held-out corpus after each epoch
HELDOUT_NORMALISED = 500  # of those, normalised over the vocabulary (losses other than hierarchical softmax)
SOFTMAX_NOTED_ABOVE = 5_000  # a full softmax over more words than this gets a note on its cost
SOFTMAX_FLOPS = 10e9  # what a thread does of a full softmax's updates, a second, for that note
# fixed by a model's weights: continued training keeps them
STRUCTURE = (
    *("model", "dim", *(loss.setting for loss in LOSSES.values()), "tree", "ns_exponent", "cbow_mean"),
    *("subwords", "minn", "maxn", "bucket"),
)


def train(
    corpus=None,
    *,
    config: str | None = None,
    read_vocab: str | None = None,
    save_vocab: str | None = None,
    progress: bool = False,
    on_epoch_end: Callable[[int, float], None] | None = None,
    on_progress: Callable[[int, int, float, float], None] | None = None,
    on_start: Callable[[TrainConfig], None] | None = None,
    checkpoint: str | None = None,
    checkpoint_every: float | None = None,
    resume: str | None = None,
    init_model: str | os.PathLike | Vectors | None = None,
    update_vocab: bool = False,
    save_model: str | None = None,
    save_fasttext: str | None = None,
    report: str | None = None,
    heldout=None,
    heldout_pairs: int | None = HELDOUT_PAIRS,
    heldout_normalised: int | None = HELDOUT_NORMALISED,
    notes: dict | None = None,
    cluster: str | None = None,
    **settings,
) -> Vectors:
    """Train word vectors on ``corpus`` and return them.

    Parameters
    ----------
    corpus : str, list of str, or iterable of list of str
        A file path, URL or ``-`` (stdin), a list of those, or tokenised sentences.
    config : str, optional
        A preset, as ``w2v train --config``: a shipped one's name (``"sg-ns"``,
        ``"cbow-ns"``, ``"sg-hs"``, ``"cbow-hs"``) or a TOML file; its training settings
        are the defaults of those given here.
    read_vocab : str, optional
        A vocabulary file (``word count`` lines) to train with instead of counting.
    save_vocab : str, optional
        Write the run's vocabulary there (word2vec.c's ``-save-vocab``).
    progress : bool
        Bars (or, off a terminal, lines) on stderr while the corpus is read and while
        training. The note that the kernels are being compiled (a first run's wait)
        shows either way.
    on_epoch_end : callable, optional
        ``on_epoch_end(end)`` after each epoch, given a ``w2v.EpochEnd``: ``end.epoch``
        (from 1), ``end.loss`` (mean nats per example), ``end.heldout``,
        ``end.heldout_se`` and ``end.heldout_unigram`` (with ``heldout``),
        ``end.vectors`` (the vectors as they stand: a view); or, as before,
        ``on_epoch_end(epoch, mean_loss)`` with the epoch from 0, given with ``heldout``
        the held-out bits per word, its standard error (of sampling the predictions) and
        the unigram model's bits per word on the same predictions as a third, fourth and
        fifth argument, as many as it takes. Returning True or raising
        ``w2v.StopTraining`` ends the run after the epoch with the vectors so far
        (``engine.callbacks``).
    on_progress : callable, optional
        ``on_progress(words_done, total_words, alpha, loss)``, from the calling thread
        about every 0.2 s during training and once at the end (``words_done ==
        total_words``): words trained over all epochs, corpus words times epochs, the
        learning rate and the current epoch's mean loss so far (nats, nan before any
        example).
    on_start : callable, optional
        ``on_start(config)`` once before the first epoch (in one process, once the
        corpus is read and the weights allocated), with the run's resolved
        ``TrainConfig`` (a resumed or continued run's included): ``config.summary()``
        says it in a line.
    checkpoint : str, optional
        A folder where the whole training state is saved after each epoch, every
        ``checkpoint_every`` minutes and when interrupted, replacing the previous one
        only once complete (``w2v.vectorio.modelfile`` has the format); one run at a time
        holds the folder (a second fails at once, with ConfigError), and a run that does
        not resume the unfinished run checkpointed there is refused (ConfigError), as is
        one given a folder whose checkpoint it cannot read.
    checkpoint_every : float, optional
        Minutes between checkpoints within an epoch.
    resume : str, optional
        A checkpoint folder (or file) to continue from, on the same corpus,
        checkpointing on there; its settings apply (only ``threads`` may change), and
        with one thread the result is byte-identical to an uninterrupted run.
    init_model : str or Vectors, optional
        Start from a model file's weights and vocabulary (its ``STRUCTURE`` settings
        apply) and train on ``corpus``; or a fastText ``.bin``'s (fastText's or one
        ``save_fasttext`` wrote: both hold output weights), whose noise exponent, CBOW
        mean and tree, which it does not record, are the settings given; or from
        vectors alone (any other vectors file, or a ``Vectors``), as fastText's
        ``-pretrainedVectors``: a fresh run over the corpus's vocabulary whose words'
        input vectors start from theirs (``dim`` theirs), the output weights at zero
        (``starts``).
    update_vocab : bool
        With a model's ``init_model``: add the corpus' words seen at least ``min_count`` times.
    save_model : str, optional
        Write the final state as a model file (``.npz``: ``w2v score``, ``init_model``).
    save_fasttext : str, optional
        Write it as fastText's ``.bin`` (``vectorio.as_fasttext``): fastText and gensim
        read w2v's vectors from it, for words never seen too with ``subwords``.
    report : str, optional
        Write the run's figures there as JSON (``TrainReport.to_json``), as ``w2v train
        --report``.
    heldout : str, list of str, or iterable of list of str, optional
        A corpus (as ``corpus``), checked before ``corpus`` is read, scored after each
        epoch (``w2v.engine.scoring``: bits per predicted word of the model's first
        loss) into ``report.epoch_heldout`` and ``report.epoch_heldout_se``, with the
        unigram model's figure, the baseline, in ``report.heldout_unigram``. The
        scoring uses one BLAS thread (``w2v.blas``). With ``progress``, a note
        follows the run where a model trained with ``sample`` ends above the
        baseline.
    heldout_pairs : int or None
        The held-out predictions sampled (None: every one).
    heldout_normalised : int or None
        Of those, how many are normalised over the vocabulary (None: every one).
    notes : dict, optional
        JSON-able notes stored in checkpoints.
    cluster : str, optional
        Train on a Dask cluster (``local:N``, a scheduler's address or file;
        ``w2v.cluster.connect``), whose workers read ``corpus`` (files or URLs)
        themselves; ``threads`` is then each worker's.
    **settings
        Any field of ``TrainConfig`` (``model``, ``dim``, ``window``, ``negative``,
        ``hs``, ``sample``, ``epochs``, ...), and ``cbow_sum`` (``cbow_mean``'s
        opposite, as ``--cbow-sum``); gensim's names for them (``vector_size``,
        ``sg``, ``workers``, ...) raise ConfigError naming w2v's.

    Returns
    -------
    Vectors
        The word vectors; their ``report`` (``TrainReport``) holds the per-epoch loss
        and the timings.

    Raises
    ------
    W2VError
        ConfigError for settings, CorpusError for a corpus, FormatError for a file,
        each with a one-line message.
    """
    start = time.perf_counter()
    settings = keyword_settings(config, settings)
    check_setting_names(settings)
    if corpus is None:
        raise ConfigError("give a corpus: w2v.train(corpus, ...), a file name or a list of lists of tokens")
    resolved, base, choose = plan_run(settings, read_vocab, resume, init_model, update_vocab)
    if not isinstance(base, TrainState):  # a fresh run
        note_hs_alone(settings, resolved)
    resumed = base if isinstance(base, TrainState) and resume is not None else None
    vocabulary = read_vocab or resume or (str(init_model) if isinstance(base, TrainState) else None)
    if resume is not None and checkpoint is None and os.path.isdir(resume):
        checkpoint = resume  # keep checkpointing where the run was
    if report is not None:
        check_writable(report)
    hooks = Hooks(
        progress, on_epoch_end, on_progress, on_start=on_start, checkpoint_seconds=checkpoint_seconds(checkpoint_every)
    )
    check_heldout(heldout)
    check_streams_read_once({"corpus": corpus, "heldout": heldout, "read_vocab": read_vocab})
    sampling = Sampling(heldout_pairs, heldout_normalised, seed=resolved.seed)
    outputs = RunFiles(checkpoint, resume, save_vocab, save_model, save_fasttext, heldout, sampling, report)
    check_same_place(resume, resumed, cluster)
    if cluster is not None:
        plan = ClusterPlan(
            choose, lambda vocab: build_model(vocab, resolved, base), resumed, notes=notes or {},
            vocabulary=vocabulary, vectors=lambda vocab, syn0: trained_vectors(vocab, syn0, resolved, None),
            fresh=base is None,
        )  # fmt: skip
        return train_on(cluster, corpus, resolved, plan, hooks, outputs, settings, start)
    here = HerePlan(resolved, base, choose, resume, notes or {}, vocabulary, start)
    return train_here(corpus, here, hooks, outputs)


def note_hs_alone(settings: dict, config: TrainConfig) -> None:
    """One line (a ``UserWarning``, at the caller's line) where the settings gave ``hs``
    and no ``negative``: w2v then trains hierarchical softmax alone, where gensim (and
    word2vec.c's ``-hs 1``) keeps negative sampling's 5 noise words beside it."""
    if settings.get("hs") and "negative" not in settings and config.output_loss is None:
        warnings.warn(
            f"hs={settings['hs']!r} without negative trains hierarchical softmax alone (negative=0; gensim keeps "
            "negative=5 beside it): give negative=5 to train both, negative=0 to say you mean one",
            stacklevel=3,
        )


def check_same_place(resume: str | None, base: TrainState | None, cluster: str | None) -> None:
    """ConfigError for resuming on a cluster a run checkpointed in one process, or the
    other way round."""
    if resume is None or base is None or bool(base.replicas) == (cluster is not None):
        return
    raise ConfigError(
        f"{resume} was checkpointed on a cluster: resume it with cluster=ADDRESS (--cluster)"
        if cluster is None
        else f"{resume} was checkpointed in one process: resume it without a cluster"
    )


class HerePlan(NamedTuple):
    """A run planned for this process (``plan_run``)."""

    config: TrainConfig  # resolved
    base: TrainState | InputVectors | None  # the checkpoint resumed, the model continued or the input vectors
    choose: VocabChooser  # the vocabulary from the corpus' counts
    resume: str | None  # the checkpoint resumed
    notes: dict  # stored in checkpoints
    vocabulary: str | None  # the file the vocabulary comes from, if not the corpus (for messages)
    start: float  # ``time.perf_counter()`` at the call


def train_here(corpus, here: HerePlan, hooks: Hooks, outputs: "RunFiles") -> Vectors:
    """``train`` in this process: the corpus encoded, then the epochs, with the time
    the kernels take to compile (the first run only) kept out of the reading and
    training times and reported apart."""
    from w2v.engine.jit import compiling_noted  # Numba: imported by the first run, not by ``import w2v``

    config, start = here.config, here.start
    with (
        compiling_noted() as compiling,
        checkpoint_folder(outputs.checkpoint, outputs.resume),
        tempfile.TemporaryDirectory(prefix="w2v-") as workdir,
    ):
        encoded = encode_shown(corpus, config, workdir, here.choose, hooks.show_progress)
        return_free_memory()
        prepare_seconds = time.perf_counter() - start - compiling.seconds
        try:
            words, tokens = encoded.stream.words, encoded.corpus_words
            check_trainable(words, neighbours=encoded.neighbours, tokens=tokens, vocabulary=here.vocabulary)
            outputs = held_outputs(outputs, encoded.vocab, hooks.show_progress)
            compiled = compiling.seconds
            run = Run.start(config, encoded, here.base, here.resume, here.notes)
            if hooks.on_start is not None:
                hooks.on_start(config)
            report, syn0 = run_training(run, hooks, outputs, workdir)
            report.train_seconds -= compiling.seconds - compiled
        finally:
            encoded.stream.close()
    report.prepare_seconds, report.seconds = prepare_seconds, time.perf_counter() - start
    report.compile_seconds = compiling.seconds
    report.settings = config.record()
    return delivered(trained_vectors(encoded.vocab, syn0, config, report), outputs)


def trained_vectors(vocab: Vocab, syn0: np.ndarray, config: TrainConfig, report: TrainReport | None) -> Vectors:
    """The word vectors of a run over ``vocab``: the rows of ``syn0`` (a view), or with
    subwords each word's composed vector (the mean of its row and its n-grams' rows, as
    fastText's ``saveVectors`` writes them), the ``subwords`` building any other word."""
    words = [decode_word(word) for word in vocab.words]
    if not config.subwords:
        return Vectors(words, syn0, report, counts=vocab.counts)
    subwords = SubwordVectors(vocab.words, syn0[: len(vocab)], syn0[len(vocab) :], NgramSettings.of(config))
    return Vectors(words, subwords.vocabulary_vectors(), report, counts=vocab.counts, subwords=subwords)


def checkpoint_seconds(minutes: float | None) -> float | None:
    """``checkpoint_every`` (minutes, or None) in seconds; ConfigError unless it is a
    positive, finite number: NaN never checkpointed, infinity is never, and 0 or less
    would checkpoint at every report."""
    if minutes is None:
        return None
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not 0 < minutes < math.inf:
        raise ConfigError(
            f"checkpoint_every must be a positive, finite number of minutes, not {minutes!r}",
            f"--checkpoint-every must be a positive, finite number of minutes, not {minutes}",
        )
    return minutes * 60.0


def check_heldout(heldout) -> None:
    """Fail before the corpus is read where the held-out corpus names files or folders
    that are not there (``sources.expand_sources``)."""
    listed = named_sources(heldout)
    if listed:
        expand_sources(listed, "held-out corpus")


def named_sources(corpus) -> list[str]:
    """The paths (and ``-``, URLs) that ``corpus`` names: a path, or a list of them;
    empty for a corpus of sentences, which is not iterated here."""
    listed = [corpus] if isinstance(corpus, (str, os.PathLike)) else corpus
    if isinstance(listed, (list, tuple)) and all(isinstance(x, (str, os.PathLike)) for x in listed):
        return [os.fspath(x) for x in listed]
    return []


INPUT_FLAGS = {"corpus": "CORPUS", "heldout": "--heldout", "read_vocab": "--read-vocab"}


def check_streams_read_once(inputs: dict) -> None:
    """ConfigError where two of a run's ``inputs`` (by name in ``INPUT_FLAGS``: a corpus,
    or None) read one stream, standard input say (``sources.shared_stream``): it can be
    read only once, and the second reader would find it empty, the held-out corpus
    only once the training corpus is read."""
    for (name, first), (other, second) in itertools.combinations(inputs.items(), 2):
        shared = shared_stream(named_sources(first), named_sources(second))
        if shared is not None:
            what = "standard input (-)" if shared == "-" else shared
            both = f"both read {what}, which can be read only once: save one of them to a file first"
            raise ConfigError(f"{name} and {other} {both}", f"{INPUT_FLAGS[name]} and {INPUT_FLAGS[other]} {both}")


@dataclass
class RunFiles:
    """What a run writes besides its vectors, and what it scores between epochs."""

    checkpoint: str | None  # folder
    resume: str | None  # the checkpoint (or its folder) the run continues, which it may replace
    save_vocab: str | None
    save_model: str | None
    save_fasttext: str | None  # a fastText .bin of the model
    heldout: object  # a corpus, or None
    heldout_sampling: Sampling  # its predictions scored
    report: str | None = None  # the run's figures as JSON (``TrainReport.to_json``)
    refused: str | None = None  # why an output asked for is left out (``held_outputs``)


def held_outputs(outputs: RunFiles, vocab: Vocab, show: bool) -> RunFiles:
    """``outputs`` less a fastText ``.bin`` whose dictionary cannot hold a word of
    ``vocab`` (one holding a NUL, which ends a word there; every other output holds
    any corpus word), checked before training: a warning says so now (when ``show``),
    the run writes its other outputs, and ``train`` then raises ``UnwritableOutput``."""
    if outputs.save_fasttext is None:
        return outputs
    problem = dictionary_problem([decode_word(word) for word in vocab.words])
    if problem is None:
        return outputs
    refused = refusal(outputs.save_fasttext, problem)
    note(f"warning: {refused}; the run writes its other outputs, then fails", show)
    return dataclasses.replace(outputs, save_fasttext=None, refused=refused)


def delivered(vectors: Vectors, outputs: RunFiles) -> Vectors:
    """``vectors``, once their report is written where ``outputs`` names it; or
    ``UnwritableOutput`` holding them where an output was left out."""
    if outputs.report is not None:
        assert vectors.report is not None  # a trained run's
        write_atomic(outputs.report, vectors.report.to_json().encode())
    if outputs.refused is not None:
        raise UnwritableOutput(outputs.refused, vectors)
    return vectors


def train_on(address: str, corpus, config: TrainConfig, plan: ClusterPlan, hooks: Hooks, outputs: RunFiles,
             asked: dict, start: float) -> Vectors:  # fmt: skip
    """``train`` on the cluster at ``address`` (``cluster.training.train_on_cluster``
    with ``plan``, a ``ClusterPlan``), each worker training with the ``threads`` of the
    settings ``asked`` (None: the cluster's default) and, unless they give ``streams``
    or the run is resumed, a stream per thread."""
    from w2v.cluster.training import check_cluster_settings, train_on_cluster

    if config.subwords:
        raise ConfigError(
            "subwords are not trained on a cluster yet: train them in one process (no cluster)",
            "--subwords does not work with --cluster yet: train without --cluster",
        )
    listed = source_list(corpus)
    sources = [source for source in listed or [] if isinstance(source, str)]
    if not listed or len(sources) < len(listed):
        raise ConfigError("a cluster's workers read the corpus themselves: give files or URLs, not sentences")
    if outputs.heldout is not None:
        raise ConfigError("heldout does not work with a cluster: score the saved model with w2v score")
    check_cluster_settings(config if plan.resumed is None else plan.resumed.config, asked)
    with checkpoint_folder(outputs.checkpoint, outputs.resume), connect(address, asked.get("threads")) as cluster:
        chosen = asked.get("streams") is not None or plan.resumed is not None  # a resumed run keeps its order
        config = dataclasses.replace(
            config, threads=cluster.threads, streams=config.streams if chosen else cluster.threads
        )
        plan.checkpoint = outputs.checkpoint
        if hooks.on_start is not None:
            hooks.on_start(config)
        result = train_on_cluster(cluster, sources, config, plan, hooks)
    state = result.state
    if outputs.save_vocab is not None:
        state.vocab.save(outputs.save_vocab)
    save_state(state, outputs)
    report = TrainReport(
        vocab_size=len(state.vocab), corpus_words=state.corpus_words, train_words=result.train_words,
        seconds=time.perf_counter() - start, train_seconds=result.train_seconds, epoch_loss=result.epoch_loss,
        rounds=result.rounds, workers_lost=result.replaced, blocks=result.traffic, settings=state.config.record(),
    )  # fmt: skip
    report.prepare_seconds = report.seconds - report.train_seconds
    vectors = Vectors([decode_word(w) for w in state.vocab.words], state.syn0, report, counts=state.vocab.counts)
    return delivered(vectors, outputs)


def run_training(run: "Run", hooks: Hooks, outputs: RunFiles, workdir: str) -> tuple[TrainReport, np.ndarray]:
    """Train ``run``'s epochs left and write ``outputs``; the report (its epochs and
    timings) and the trained ``syn0``. The run, and its output weights, are freed on return."""
    encoded, held = run.encoded, None
    try:
        if outputs.heldout is not None:
            held_dir = os.path.join(workdir, "heldout")
            scorer, held = run.heldout_scorer(outputs.heldout, outputs.heldout_sampling, held_dir)
            hooks.heldout = scorer
        if run.config.softmax and len(encoded.vocab) > SOFTMAX_NOTED_ABOVE:
            note(softmax_cost(run), hooks.show_progress)
        train_start = time.perf_counter()
        losses = run.train(hooks, outputs.checkpoint)
        train_seconds = time.perf_counter() - train_start - run.progress.heldout_seconds  # reported apart
        note_above_unigram(run, len(losses), hooks.show_progress)
        if outputs.save_vocab is not None:  # after training: a failed run leaves an old file untouched
            encoded.vocab.save(outputs.save_vocab)
        save_state(run.state(), outputs)
    finally:
        if held is not None:
            held.close()
    report = TrainReport(
        vocab_size=len(encoded.vocab),
        corpus_words=encoded.corpus_words,
        train_words=int(run.progress.words.sum()) - run.words_at_start,
        seconds=0.0,
        train_seconds=train_seconds,
        epoch_loss=losses,
        epoch_heldout=run.progress.heldout[: len(losses), 0].tolist(),
        epoch_heldout_se=run.progress.heldout[: len(losses), 1].tolist(),
        heldout_unigram=float(run.progress.heldout[len(losses) - 1, 2]),  # the same every epoch; the last is scored
        heldout_seconds=run.progress.heldout_seconds,
        output_updates=int(run.progress.updates.sum()),
        row_visits=int(run.progress.visits.sum()),
    )
    return report, run.model.syn0


def note_above_unigram(run: "Run", epochs: int, show: bool) -> None:
    """Say, when ``show``, why the run's model scores above the unigram model on the
    held-out text after its last epoch (of the ``epochs`` it trained: an ``on_epoch_end``
    may stop it early), if subsampling is why (``above_unigram_note``)."""
    bits, _, unigram = run.progress.heldout[epochs - 1].tolist()
    said = above_unigram_note(model_losses(run.config)[0], run.config.sample, bits=bits, unigram=unigram)
    if said is not None:
        note(said, show)


def save_state(state: TrainState, outputs: RunFiles) -> None:
    """Write the trained ``state`` as a model file and as a fastText ``.bin``, where
    ``outputs`` name them (after training: a failed run leaves old files untouched)."""
    if outputs.save_model is not None:
        state.save(outputs.save_model)
    if outputs.save_fasttext is not None:
        save_as_fasttext(outputs.save_fasttext, state)


def softmax_cost(run: "Run") -> str:
    """The note for a full softmax over a large vocabulary: each prediction updates all
    V output vectors, ``6 V D`` flops (scores, gradient, update), so an epoch costs
    ``6 V D`` times its predictions: skip-gram ``window + 1`` per word kept by
    subsampling (the shrunk window's mean reach on both sides), CBOW one; at
    ``SOFTMAX_FLOPS`` a thread."""
    config, vocab = run.config, run.encoded.vocab
    kept = float(np.dot(vocab.counts, run.model.keep_prob))
    predictions = kept * (config.window + 1 if config.model == "skipgram" else 1)
    seconds = predictions * 6 * len(vocab) * config.dim / (SOFTMAX_FLOPS * (config.threads or 1))
    return (
        f"note: a full softmax over {plural(len(vocab), 'word')} updates every output vector at each prediction: "
        f"about {duration(seconds)} an epoch here; --hs, --negative 5 or --sampled-softmax 25 take seconds"
    )


def duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it above one: ``40 s``, ``12 minutes``, ``3.5 hours``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def encode_shown(corpus, config: TrainConfig, workdir: str, choose: VocabChooser, show: bool) -> Encoded:
    """``encode_corpus``, with a bar on stderr while the corpus is read when ``show``."""
    with Steps(show) as steps:
        return encode_corpus(corpus, config, workdir, choose, on_read=reading(steps) if show else None)


@dataclass
class Run:
    """A run under way: its settings, encoded corpus, model and progress."""

    config: TrainConfig
    encoded: Encoded
    model: Model
    progress: Progress
    words_at_start: int  # words a resumed run had trained before
    notes: dict

    @classmethod
    def start(
        cls, config: TrainConfig, encoded: Encoded, base: TrainState | InputVectors | None, resume: str | None,
        notes: dict,
    ) -> "Run":  # fmt: skip
        """A fresh run (``base`` None, or input vectors its input rows start from), one
        continued from the model ``base``, or (``resume``) ``base``'s checkpointed run,
        checked to read the same corpus. The stream's batches are put in the order of
        ``config.streams`` evenly spaced streams."""
        stream = encoded.stream
        resumed = base if isinstance(base, TrainState) and resume is not None else None
        if resume is not None:
            check_same_corpus(resumed, encoded, resume)
        stream.reorder(evenly_spaced(len(stream), config.streams or 1))
        progress = Progress(config.threads or 1, config.epochs, len(stream), stream_offsets(stream), resumed)
        model = build_model(encoded.vocab, config, base)
        return cls(config, encoded, model, progress, int(progress.words.sum()), notes)

    def train(self, hooks: Hooks, checkpoint: str | None) -> list[float]:
        """Run the epochs left (``workers.run_epochs``; fewer where ``on_epoch_end``
        stops the run), its callbacks given the vectors as they stand, checkpointing into
        the folder ``checkpoint`` if given. Returns each epoch's mean loss (nats per example)."""
        vocab, syn0, config = self.encoded.vocab, self.model.syn0, self.config
        hooks = dataclasses.replace(hooks, vectors=lambda: trained_vectors(vocab, syn0, config, None))
        if checkpoint is not None:
            hooks = dataclasses.replace(hooks, checkpoint=lambda: self.state().save(checkpoint_path(checkpoint)))
        return run_epochs(self.model, self.encoded.stream, self.config, self.progress, hooks)

    def heldout_scorer(
        self, corpus, sampling: Sampling, workdir: str
    ) -> tuple[Callable[[], tuple[float, float, float]], IdStream]:
        """A function giving the held-out bits per word of the weights as they are, its
        standard error and the unigram model's (``scoring.score_plan``: the model's first loss, on the
        predictions ``sampling`` draws, drawn once), on ``corpus``, encoded once into
        ``workdir``; and the stream it reads, for the caller to close."""
        os.makedirs(workdir)
        config = self.config
        try:
            encoded = encode_corpus(corpus, config, workdir, lambda _words, _counts: self.encoded.vocab)
            plan = Plan(encoded.stream, config.model, config.window, sampling, len(self.encoded.vocab))
        except CorpusError as err:
            raise CorpusError(f"held-out corpus: {err}") from None
        first_loss = model_losses(config)[:1]

        tables = self.model.tables
        tree = TreeScorer(tables.syn1, (tables.path_nodes, tables.path_labels, tables.path_offsets))
        subwords = (tables.subword_rows, tables.subword_offsets)  # hashed once for the run, not per epoch

        def scorer() -> tuple[float, float, float]:
            result = score_plan(
                self.state(), plan, encoded, losses=first_loss, tree=tree, subwords=subwords, diagnostics=False
            )
            score = result.scores[0]
            return score.bits_per_word, score.standard_error, score.unigram_bits_per_word

        return scorer, encoded.stream

    def state(self) -> TrainState:
        """The whole state, for a checkpoint or model file."""
        encoded, progress, tables = self.encoded, self.progress, self.model.tables
        return TrainState(
            config=self.config,
            vocab=encoded.vocab,
            syn0=self.model.syn0,
            syn1=tables.syn1,
            syn1neg=tables.syn1neg,
            epoch_loss=progress.loss.sum(axis=0),
            epoch_examples=progress.examples.sum(axis=0),
            jobs_done=progress.jobs_done,
            batches=len(encoded.stream),
            stream_words=encoded.stream.words,
            corpus_words=encoded.corpus_words,
            corpus_digest=encoded.digest,
            notes=self.notes,
        )


def plan_run(
    settings: dict, read_vocab: str | None, resume: str | None, init_model, update_vocab: bool
) -> tuple[TrainConfig, TrainState | InputVectors | None, VocabChooser]:
    """The settings, the state to start from (a checkpoint or model, input vectors,
    else None) and how to choose the vocabulary, for a fresh, resumed or continued run."""
    if resume is not None and init_model is not None:
        raise ConfigError("resume and init_model exclude each other: resume continues a checkpoint's own run")
    if update_vocab and init_model is None:
        raise ConfigError("update_vocab needs init_model: it adds words to a saved model's vocabulary")
    start = None if init_model is None else starting_point(init_model)
    if start is not None and isinstance(start.base, InputVectors):
        return plan_from_vectors(settings, start.base, read_vocab, update_vocab)
    if read_vocab is not None and (start is not None or resume is not None):
        raise ConfigError("read_vocab does not apply to a resumed or continued run: it keeps the model's vocabulary")
    if resume is not None:
        base = TrainState.load(resume)
        config = TrainConfig(**{**dataclasses.asdict(base.config), "threads": None, **settings}).resolved()
        changed = sorted(k for k in TRAIN_FIELDS - {"threads"} if getattr(config, k) != getattr(base.config, k))
        if changed:
            raise ConfigError(f"a resumed run keeps the checkpoint's settings; cannot change {', '.join(changed)}")
        return config, base, lambda _words, _counts: base.vocab
    if start is not None:
        return plan_continued(settings, start, update_vocab)
    config = TrainConfig(**settings).resolved()
    return config, None, select_vocab(config, read_vocab)


def plan_continued(settings: dict, start: Start, update_vocab: bool) -> tuple[TrainConfig, TrainState, VocabChooser]:
    """``init_model``: the settings of a run going on from the model ``start.base``
    (those its weights fix are its own, but for the ones its file does not record),
    and its vocabulary, the corpus's new words added with ``update_vocab``."""
    base = start.base
    assert isinstance(base, TrainState)
    fixed = [key for key in STRUCTURE if key not in start.unrecorded]
    config = TrainConfig(**{**{k: getattr(base.config, k) for k in fixed}, **settings}).resolved()
    for key in fixed:
        if getattr(config, key) != getattr(base.config, key):
            raise ConfigError(
                f"{start.source} was trained with {key}={getattr(base.config, key)!r}; "
                f"continued training cannot change it to {getattr(config, key)!r}"
            )
    if update_vocab:
        return config, base, lambda words, counts: base.vocab.merged(words, counts, config.min_count)
    return config, base, lambda _words, _counts: base.vocab


def plan_from_vectors(
    settings: dict, vectors: InputVectors, read_vocab: str | None, update_vocab: bool
) -> tuple[TrainConfig, InputVectors, VocabChooser]:
    """``init_model`` naming vectors alone: a fresh run (its vocabulary the corpus's, or
    ``read_vocab``'s) whose input vectors start from theirs, of their ``dim``
    (``build_model``)."""
    dim = vectors.vectors.shape[1]
    if update_vocab:
        raise ConfigError(
            f"update_vocab adds words to a model's vocabulary; {vectors.source} holds vectors alone, "
            "and the run's vocabulary is the corpus's"
        )
    config = TrainConfig(**{"dim": dim, **settings}).resolved()
    if config.dim != dim:
        raise ConfigError(
            f"{vectors.source} holds vectors of {dim} values, not {config.dim}: leave dim out to take theirs",
            f"{vectors.source} holds vectors of {dim} values, not {config.dim}: leave --dim out to take theirs",
        )
    return config, vectors, select_vocab(config, read_vocab)


def build_model(vocab: Vocab, config: TrainConfig, base: TrainState | InputVectors | None) -> Model:
    """Fresh weights, ``base``'s carried over to ``vocab``, or fresh weights whose input
    rows start from the input vectors ``base`` where it has their word. ConfigError for
    input vectors of none of the vocabulary's words."""
    if base is None:
        return Model.build(vocab, config)
    if isinstance(base, InputVectors):
        weights, found = input_weights(base.words, base.vectors, vocab, config)
        if not found:
            raise ConfigError(
                f"{base.source} has no word of the run's vocabulary ({plural(len(vocab), 'word')}): "
                "its vectors would start none of theirs"
            )
        return Model.build(vocab, config, weights)
    weights = (base.syn0, base.syn1, base.syn1neg)
    if base.vocab.words is vocab.words:  # resumed, or continued without new words
        return Model.build(vocab, config, weights)
    return Model.build(vocab, config, carry_weights(base.vocab, weights, vocab, config))


def check_same_corpus(base: TrainState | None, encoded: Encoded, where: str) -> None:
    """A resumed run must read the corpus its checkpoint was made on."""
    assert base is not None
    if (len(encoded.stream), encoded.stream.words, encoded.digest) != (
        base.batches,
        base.stream_words,
        base.corpus_digest,
    ):
        raise CorpusError(
            f"the corpus is not the one checkpointed in {where} ({plural(encoded.stream.words, 'word')} in vocabulary "
            f"where it had {base.stream_words:,}, or different text): resume needs the same corpus"
        )


@contextmanager
def checkpoint_folder(folder: str | None, resume: str | None) -> Iterator[None]:
    """Create the checkpoint folder (and its parents) or fail with one line, and hold
    it for the block (``locks.checkpoint_lock``), once it is checked to hold no
    checkpoint that a run resuming ``resume`` (None: a fresh run) must not replace
    (``modelfile.check_replaceable``); nothing when ``folder`` is None."""
    if folder is None:
        yield
        return
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create checkpoint folder {folder}: {err.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"checkpoint folder is not writable: {folder}")
    with checkpoint_lock(folder):
        check_replaceable(folder, resume)
        yield
