"""The run loop's reports and checkpoints, one for both ways of training: threads in one
process (``workers.EpochRunner``, in segments of at most one epoch) and replicas on a
cluster (``cluster.training.ClusterRun``, in rounds).

Whatever trains, ``RunLoop`` is told where the run stands and keeps the rest: the
bar, the epochs already reported to the caller's ``Hooks`` and when the run was
last checkpointed. ``report`` shows the words done, the epoch under way, its
learning rate and loss, and calls ``on_epoch_end`` once for each epoch finished
(``callbacks``), until one asks the run to stop (``stopped``: the runner ends it);
``save``, ``due`` and ``save_if_due`` checkpoint after each epoch and every
``checkpoint_seconds``; ``saved_if_stopped`` checkpoints a run that an interrupt
stops, as of its last whole segment or round.
"""

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from w2v.config import TrainConfig
from w2v.engine.callbacks import EpochEnd, call_epoch_end
from w2v.errors import ClusterLost, W2VError
from w2v.progress import Bar, NoBar, progress_bar

NOT_SCORED = (math.nan, math.nan, math.nan)  # held-out bits per word, standard error, unigram: an epoch not scored


def learning_rate(alpha: float, min_alpha: float, progress: float) -> float:
    """Linear decay from ``alpha`` at progress 0 to ``min_alpha`` at 1 (the fraction
    of all epochs' words done), as word2vec.c and gensim do."""
    return alpha - (alpha - min_alpha) * min(max(progress, 0.0), 1.0)


@dataclass
class Hooks:
    """What the caller of a run sees and does while it runs.

    - ``show_progress``: a progress bar on stderr (``progress.progress_bar``);
    - ``on_epoch_end(end)`` after each epoch, given an ``EpochEnd`` (with ``vectors``,
      the vectors as they stand), or ``on_epoch_end(epoch, mean_loss)``,
      ``on_epoch_end(epoch, mean_loss, heldout)`` (held-out bits per word, nan without
      ``heldout``), ``on_epoch_end(epoch, mean_loss, heldout, heldout_se)`` with its
      standard error (of sampling the predictions), ``on_epoch_end(epoch, mean_loss,
      heldout, heldout_se, unigram)`` with the unigram model's bits per word on the same
      text too (``callbacks.call_epoch_end``); returning True or raising
      ``StopTraining`` ends the run after the epoch;
    - ``on_progress(words_done, total_words, alpha, loss)`` about every 0.2 s (one
      process) or round (a cluster), and at the end;
    - ``checkpoint()`` saves the run as it stands: after each epoch, every
      ``checkpoint_seconds`` if given, and when an interrupt stops the run;
    - ``on_start(config)`` once, with the run's resolved settings, as training starts.
    """

    show_progress: bool = False
    on_epoch_end: Callable[..., Any] | None = None
    on_progress: Callable[[int, int, float, float], None] | None = None
    on_start: Callable[[TrainConfig], None] | None = None
    checkpoint: Callable[[], None] | None = None
    checkpoint_seconds: float | None = None
    heldout: Callable[[], tuple[float, float, float]] | None = None  # scores the weights: ``NOT_SCORED``'s figures
    vectors: Callable[[], Any] | None = None  # the vectors as they stand, for ``EpochEnd.vectors``


def kept_after(error: BaseException) -> bool:
    """Whether a run that ``error`` stopped is checkpointed: after an interrupt (Ctrl-C,
    SIGTERM as an exception) or a failing callback, yes; after the run's own error (a
    ``W2VError``: it diverged, its corpus could not be read), no, but for
    ``ClusterLost``, which leaves the last round's weights sound."""
    return not isinstance(error, W2VError) or isinstance(error, ClusterLost)


class RunLoop:
    """The reports and checkpoint timing of one run of ``config.epochs`` epochs, told
    by ``hooks``.

    ``total``: the run's words (an epoch's, times the epochs), over which the
    learning rate decays; ``reported``: the epochs reported to ``on_epoch_end``
    (those a resumed run had done); ``hold_loss``: while an epoch just begun has no
    example, show the last epoch's loss (one process, whose bar moves between
    batches) rather than none (a cluster, whose bar moves once a round).
    """

    def __init__(self, config: TrainConfig, hooks: Hooks, *, total: int, reported: int = 0, hold_loss: bool = False):
        assert config.alpha is not None and config.min_alpha is not None  # resolved
        self.alphas = (config.alpha, config.min_alpha)
        self.epochs, self.hooks = config.epochs, hooks
        self.total, self.reported, self.hold_loss = total, reported, hold_loss
        self.bar: Bar = NoBar()  # until ``open_bar``
        self.saved = time.monotonic()  # when the run was last checkpointed, or began
        self.saved_epochs = reported  # the epochs reported then
        self.stopped = False  # an ``on_epoch_end`` callback asked the run to end

    def alpha(self, done: int) -> float:
        """The learning rate after ``done`` words of the whole run."""
        return learning_rate(*self.alphas, done / self.total)

    def open_bar(self, done: int) -> None:
        """Show the training bar: all epochs' words, from the ``done`` a resumed run had
        trained (so that its rate counts this run's words alone)."""
        self.bar = progress_bar("training", self.total, "words", self.hooks.show_progress, initial=done)

    def report(
        self, done: int, epochs_done: int, epoch_loss: Callable[[int], float], heldout: np.ndarray | None = None
    ) -> None:
        """Call ``on_epoch_end`` for each epoch finished since the last report (the first
        ``epochs_done`` are), with its mean loss ``epoch_loss(epoch)`` (nats per example,
        nan before any) and held-out bits per word, standard error and the unigram model's
        bits per word (``heldout[epoch]``, (epochs, 3) float64, nan unscored; nan without),
        until one asks the run to stop (``stopped``); then move the bar to ``done`` words
        with the epoch under way, the learning rate there and the epoch's loss so far, and
        call ``on_progress`` with them."""
        hooks = self.hooks
        while self.reported < min(epochs_done, self.epochs) and not self.stopped:
            if hooks.on_epoch_end is not None:
                bits, error, unigram = NOT_SCORED if heldout is None else heldout[self.reported].tolist()
                loss = epoch_loss(self.reported)
                end = EpochEnd(self.reported + 1, self.epochs, loss, bits, error, unigram, hooks.vectors)
                self.stopped = call_epoch_end(hooks.on_epoch_end, end)
            self.reported += 1
        current = min(self.reported, self.epochs - 1)
        loss = epoch_loss(current)
        if self.hold_loss and math.isnan(loss) and current > 0:
            loss = epoch_loss(current - 1)  # an epoch just begun: the last one's loss until it has examples
        lr = self.alpha(done)
        shown = {"epoch": f"{min(self.reported + 1, self.epochs)}/{self.epochs}", "lr": f"{lr:.5f}"}
        if not math.isnan(loss):  # nan: no examples yet (the first batches under way)
            shown["loss"] = f"{loss:.4f}"
        self.bar.update(done, **shown)
        if hooks.on_progress is not None:
            hooks.on_progress(done, self.total, lr, loss)

    def due(self) -> bool:
        """Whether ``checkpoint_seconds`` have passed since the last checkpoint."""
        every = self.hooks.checkpoint_seconds
        return every is not None and time.monotonic() - self.saved >= every

    def save(self) -> None:
        """Checkpoint the run as it stands (``hooks.checkpoint``), if it is checkpointed."""
        if self.hooks.checkpoint is not None:
            self.hooks.checkpoint()
            self.saved = time.monotonic()
        self.saved_epochs = self.reported

    def save_if_due(self) -> None:
        """``save`` if an epoch was reported since the last checkpoint, or one is ``due``."""
        if self.reported > self.saved_epochs or self.due():
            self.save()

    @contextmanager
    def saved_if_stopped(self, sound: Callable[[], bool] | None = None) -> Iterator[None]:
        """``save`` the run when an error that ``kept_after`` keeps stops the block, unless
        ``sound()`` says what it trained is not whole (a worker failed in a batch); the
        error goes on."""
        try:
            yield
        except BaseException as error:
            if kept_after(error) and (sound is None or sound()):
                self.save()
            raise

    @contextmanager
    def closing_bar(self) -> Iterator[None]:
        """Close the bar as the block ends (before any error message), completed unless
        an error ended it."""
        completed = False
        try:
            yield
            completed = True
        finally:
            self.bar.close(completed)
