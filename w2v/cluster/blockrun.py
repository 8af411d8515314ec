"""A run of skip-gram NS trained in blocks, driven machine by machine (``blockmachine``):
the same whether the machines are objects of this process (a simulation: the blocks of
a sub-step then train one after another, which gives the cluster's arithmetic, as they
share no row) or Dask actors on a cluster's workers (their calls then run at once).

The driver only tells every machine what to do next and waits for all of them; the
machines send each other the pairs (each sweep's made while the one before trains),
the right partitions and the input rows. What it
gathers is the run's weights (``gather``), for a checkpoint or the result.
"""

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from w2v.cluster.blockmachine import Schedule, Sent, machine_rows, settled


class Start(NamedTuple):
    """Where a run starts: the first epoch and sweep it trains, and the weights it starts
    from ((V, D) syn0 and syn1neg by word id; None: word2vec.c's fresh start)."""

    epoch: int = 0
    sweep: int = 0
    weights: tuple[np.ndarray, np.ndarray] | None = None


FRESH = Start()  # a run from its first epoch, from word2vec.c's start


def on_all(machines: Sequence[Any], method: str, *args: Any) -> list[Any]:
    """Call ``method(*args)`` on every machine, then wait for every answer (``settled``):
    actors' calls run at once, objects' one after another."""
    answers = [getattr(machine, method)(*args) for machine in machines]
    return [settled(answer) for answer in answers]


def train_blocks(machines: Sequence[Any], epochs: int, schedule: Schedule, start: Start = FRESH,
                 after_sweep: Callable[[int, int], bool | None] | None = None) -> bool:  # fmt: skip
    """Train ``epochs`` epochs from ``start`` on ``machines`` (connected to each other):
    each epoch placed (the rows re-placed from the second on); each sweep's 2N
    sub-steps, while the machines make and send the next sweep's pairs (the first
    sweep's made before it); ``after_sweep(epoch, sweep)`` after each sweep, which
    stops the run by returning True. Whether the run trained all its epochs."""
    positions = [(epoch, sweep) for epoch in range(start.epoch, epochs)
                 for sweep in range(start.sweep if epoch == start.epoch else 0, schedule.sweeps)]  # fmt: skip
    for at, (epoch, sweep) in enumerate(positions):
        if at == 0:
            place(machines, epoch, start.weights)
            on_all(machines, "make_pairs", epoch, sweep)
        elif sweep == 0:
            on_all(machines, "send_inputs", epoch)
            on_all(machines, "take_inputs")
        if at + 1 < len(positions):
            on_all(machines, "start_pairs", *positions[at + 1])
        for substep in range(2 * schedule.machines):
            on_all(machines, "train", epoch, sweep, substep)
        on_all(machines, "finish_pairs")
        if after_sweep is not None and after_sweep(epoch, sweep):
            return False
    return True


def place(machines: Sequence[Any], epoch: int, weights: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Give every machine its rows of ``weights`` in epoch ``epoch``'s plan (each only
    its own, ``machine_rows``), or let each start afresh (None)."""
    if weights is None:
        on_all(machines, "place", epoch, None)
        return
    plan = settled(machines[0].epoch_plan(epoch))
    answers = [machine.place(epoch, machine_rows(weights, plan, rank)) for rank, machine in enumerate(machines)]
    for answer in answers:
        settled(answer)


def gather(machines: Sequence[Any], vocab: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The run's weights: (V, D) syn0 and syn1neg, each row from its one holder."""
    syn0, syn1neg = np.empty((vocab, dim), np.float32), np.empty((vocab, dim), np.float32)
    parts = 2 * len(machines)
    for words, inputs, rights in on_all(machines, "held"):
        syn0[words] = inputs
        for part, rows in rights.items():
            syn1neg[part::parts] = rows
    return syn0, syn1neg


def sent_total(machines: Sequence[Any]) -> Sent:
    """The bytes every machine sent to the others, summed."""
    return Sent(*np.sum([tuple(sent) for sent in on_all(machines, "sent_so_far")], axis=0).tolist())
