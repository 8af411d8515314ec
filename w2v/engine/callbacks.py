"""The caller's ``on_epoch_end`` callback, in each form it may take, and how it stops a run.

gensim's callbacks get the model after each epoch (``on_epoch_end(model)``) and
evaluate, save or stop there; w2v's ``on_epoch_end`` taking one argument gets an
``EpochEnd``: the epoch, numbered from 1 as ``w2v train`` numbers it, its mean loss,
its held-out score and the vectors as they stand. The older forms,
``on_epoch_end(epoch, mean_loss[, bits[, standard_error[, unigram_bits]]])`` with the
epoch numbered from 0, are called as before. Whatever its form, a callback that returns True (a
bool, numpy's included) or raises ``StopTraining`` ends the run after this epoch,
cleanly: ``w2v.train`` returns the vectors trained so far and writes its outputs.
"""

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class StopTraining(Exception):
    """Raised by an ``on_epoch_end`` callback: the run ends after this epoch, as when the
    callback returns True (an early stop, not an error)."""


@dataclass(frozen=True)
class EpochEnd:
    """What ``on_epoch_end(end)`` is given after each epoch: ``epoch`` (from 1, of
    ``epochs``), its mean ``loss`` (nats per training example), its held-out score
    (``heldout`` bits per word, ``heldout_se`` its standard error and
    ``heldout_unigram`` the unigram model's on the same predictions; nan without
    ``heldout``) and, through ``vectors``, the words' vectors as they stand."""

    epoch: int
    epochs: int
    loss: float
    heldout: float = math.nan
    heldout_se: float = math.nan
    heldout_unigram: float = math.nan
    view: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    @property
    def vectors(self) -> Any:
        """The vectors as they stand (a ``w2v.Vectors``): a view of the weights, which
        training goes on changing (``.copy()`` keeps this epoch's); a subword model's are
        composed when asked. None where the run gives none (``workers.run_epochs`` alone)."""
        return None if self.view is None else self.view()

    @property
    def wv(self) -> Any:
        """``vectors``, under the name a gensim callback reads them by (``model.wv``)."""
        return self.vectors


def call_epoch_end(callback: Callable, end: EpochEnd) -> bool:
    """Call ``callback`` with ``end`` as it takes it: ``callback(end)`` when it takes one
    argument, else ``callback(epoch, mean_loss, bits, standard_error, unigram_bits)``
    (the epoch from 0) or with the first four, three or two of those; whether it asks
    the run to stop (returns True, or raises ``StopTraining``)."""
    positional: tuple = (end.epoch - 1, end.loss, end.heldout, end.heldout_se, end.heldout_unigram)
    taken = next((n for n in (5, 4, 3, 2) if takes(callback, positional[:n])), None)
    arguments = (end,) if taken is None and takes(callback, (end,)) else positional[: taken or 2]
    try:
        answer = callback(*arguments)
    except StopTraining:
        return True
    return isinstance(answer, (bool, np.bool_)) and bool(answer)


def takes(callback: Callable, arguments: tuple) -> bool:
    """Whether ``callback`` can be called with ``arguments`` (False where its signature cannot be read)."""
    try:
        inspect.signature(callback).bind(*arguments)
    except (TypeError, ValueError):
        return False
    return True
