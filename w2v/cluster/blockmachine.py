"""One machine of skip-gram NS trained in blocks (``blocks``): its part of the corpus,
the rows it owns, and what it does each epoch, sweep and sub-step.

A machine holds the input rows of its left partition L_m and the right partitions
it is handed, each as a matrix of its own indexed by the words' places in the
partition, and talks to the other machines (``peers``) alone: it sends each
machine the frames of the pairs that machine owns (``make_pairs``), a right
partition to the machine that trains it next (``train``), and its input rows to
their next owners when an epoch re-places them (``send_inputs``). A peer is
another ``BlockMachine`` in this process, or a handle on one that answers with a
future (a Dask actor's), which ``settled`` waits on; the receiving methods only
store what they are given, so a machine can take them while it trains.

The run's driver calls, on every machine at once and waiting for all: ``place``
(with ``send_inputs`` then ``take_inputs`` from the second epoch on) before each
epoch; ``make_pairs`` before the run's first sweep, then ``start_pairs`` of the
next sweep as each sweep starts and ``finish_pairs`` at its end (the pairs made in
a thread of their own meanwhile); ``train`` for each of its 2N sub-steps, which
makes the next sub-step's chunks in another thread as it trains. At a sweep's end
machine m holds R_2m and R_2m+1 again, as at the start.
"""

import inspect
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from w2v.cluster.blocks import Plan, block_alphas, block_right, left_partitions, right_noise
from w2v.cluster.pairs import Frames, block_chunks, machine_frames, window_pairs
from w2v.config import TrainConfig
from w2v.corpus.vocab import Vocab
from w2v.engine.chunks import Chunks, chunk_settings, train_chunks
from w2v.engine.weights import Tables, init_input_vectors
from w2v.engine.workers import batch_seed

NO_ROWS = np.empty(0, np.int32)


class Schedule(NamedTuple):
    """A run's shape: N machines, S sweeps an epoch, rho on or off (``blocks.right_noise``)."""

    machines: int
    sweeps: int
    corrected: bool = True


class Text(NamedTuple):
    """A machine's part of the corpus: its batches end to end, and where they sit in
    the run's batches (their seeds are the batch kernel's for the same index)."""

    tokens: np.ndarray  # (T,) int32, -1 ending sentences
    starts: np.ndarray  # (b + 1,) int64: batch i is tokens[starts[i] : starts[i + 1]]
    first: int  # the run's index of the first batch
    total: int  # the run's batches an epoch


class Sent(NamedTuple):
    """Bytes a machine sent to other machines."""

    pairs: int = 0  # pairs in frames
    pair_bytes: int = 0  # their frames
    right_bytes: int = 0  # right partitions handed on
    input_bytes: int = 0  # input rows moved to their next owner


class Rows(NamedTuple):
    """The rows a machine holds: its left partition's input rows, by place in it, and
    its right partitions' output rows, each by place in its partition."""

    inputs: np.ndarray  # (|L_m|, D) float32
    rights: dict[int, np.ndarray]  # R_j: (|R_j|, D) float32


PEER_SECONDS = 10.0  # the longest a machine waits for another to take a small message
PEER_RATE = 10e6  # bytes a second below which a peer taking a larger one counts as lost


def peer_seconds(nbytes: int) -> float:
    """How long a machine waits for another to take ``nbytes`` bytes (``settled``)."""
    return PEER_SECONDS + nbytes / PEER_RATE


def settled(answer: Any, timeout: float | None = None) -> Any:
    """What a peer's method returned: a Dask actor's future waited on (TimeoutError
    after ``timeout`` s); a coroutine (the receiving method of an actor on this same
    worker, which Dask hands over as the object itself) run to its end, as it never
    waits; else the answer itself. A machine waits on another for ``peer_seconds``
    at most: a call in flight to a worker that dies is never answered, and the
    machine's one actor thread must come free for the run's next machines."""
    if inspect.iscoroutine(answer):
        try:
            answer.send(None)
        except StopIteration as done:
            return done.value
        raise RuntimeError("a machine's receiving method waited on something")
    return answer.result(timeout) if hasattr(answer, "result") else answer


class BlockMachine:
    """Machine ``rank`` of ``schedule``: trains its blocks of ``config`` (skip-gram NS,
    resolved) over ``vocab`` on ``text``."""

    def __init__(self, rank: int, text: Text, vocab: Vocab, config: TrainConfig, schedule: Schedule):
        self.rank, self.text, self.config, self.schedule = rank, text, config, schedule
        self.keep_prob = vocab.keep_probabilities(config.sample)
        self.mass = vocab.counts * self.keep_prob.astype(np.float64)  # kept tokens a word: balances L
        noise = vocab.noise_distribution(config.ns_exponent)
        self.noises = right_noise(noise, self.mass / self.mass.sum(), 2 * schedule.machines, config.samples,
                                  schedule.corrected)  # fmt: skip
        samples = int(np.ceil(max(table.draws for table in self.noises)))  # the most a chunk draws
        self.settings = chunk_settings(config.window, samples, config.threads or 1)
        self.peers: list[Any] = []
        self.plan: Plan  # the epoch's, from ``place`` on
        self.next_plan: Plan | None = None
        self.inputs = np.empty((0, config.dim), np.float32)  # rows of L_m, by place in it
        self.rights: dict[int, np.ndarray] = {}  # right partition j's rows, by place in it
        self.inbox: dict[tuple[int, int], dict[int, Frames]] = {}  # by (epoch, sweep): the frames, by sender
        self.arriving: list[tuple[np.ndarray, np.ndarray]] = []  # the next epoch's input rows: (ids, rows)
        self.sent = Sent()
        self.counting = threading.Lock()  # ``sent``: the pairs are sent from the thread making them
        self.plans: dict[int, Plan] = {}  # by epoch: the plans of the epochs under way and next
        self.loss, self.pairs = np.zeros(config.epochs), np.zeros(config.epochs, np.int64)
        self.chunks = 0
        self.pool = ThreadPoolExecutor(config.threads or 1)
        self.ahead = ThreadPoolExecutor(1)  # makes and sends the next sweep's pairs as this one trains
        self.making: Future | None = None
        self.prepare = ThreadPoolExecutor(1)  # makes the next sub-step's chunks as this one trains
        self.preparing: dict[tuple[int, int, int], Future] = {}  # by (epoch, sweep, sub-step)

    def connect(self, peers: list[Any]) -> None:
        """The run's machines, this one among them at its rank."""
        self.peers = list(peers)

    def epoch_plan(self, epoch: int) -> Plan:
        """Epoch ``epoch``'s plan (``blocks.left_partitions``), the same on every machine;
        the last two epochs' are kept."""
        if epoch not in self.plans:
            plan = epoch_plan(self.mass, self.schedule, self.config.seed, epoch)
            self.plans = {e: p for e, p in self.plans.items() if e == epoch - 1} | {epoch: plan}
        return self.plans[epoch]

    def add_sent(self, **more: int) -> None:
        """Count bytes (or pairs) sent, by ``Sent``'s field."""
        with self.counting:
            self.sent = self.sent._replace(**{name: getattr(self.sent, name) + n for name, n in more.items()})

    def place(self, epoch: int, rows: Rows | None = None) -> None:
        """Take this machine's rows for epoch ``epoch``'s plan: ``rows`` (``machine_rows``
        of a resumed run's weights), or word2vec.c's fresh start (``init_input_vectors``,
        zeros): the first epoch a run trains."""
        self.plan = self.epoch_plan(epoch)
        dim, parts = self.config.dim, 2 * self.schedule.machines
        if rows is None:
            syn0 = init_input_vectors(len(self.mass), dim, self.config.seed)
            self.inputs = np.ascontiguousarray(syn0[self.owned(self.plan)])
            self.rights = {j: right_rows(None, j, (len(self.mass), parts, dim)) for j in home_parts(self.rank)}
        else:
            self.inputs, self.rights = rows.inputs, dict(rows.rights)

    def owned(self, plan: Plan) -> np.ndarray:
        """The words of this machine's left partition in ``plan``, (|L_m|,) int32 increasing."""
        return plan.members[plan.first[self.rank] : plan.first[self.rank + 1]]

    def send_inputs(self, epoch: int) -> None:
        """Send each input row to its owner in epoch ``epoch``'s plan (``take_inputs``)."""
        self.next_plan = self.epoch_plan(epoch)
        words = self.owned(self.plan)
        owners = self.next_plan.owner[words]
        for machine in range(self.schedule.machines):
            moving = owners == machine
            rows = self.inputs[moving]
            if machine != self.rank:
                self.add_sent(input_bytes=rows.nbytes)
            settled(self.peers[machine].receive_inputs(words[moving], rows), peer_seconds(rows.nbytes))

    def receive_inputs(self, words: np.ndarray, rows: np.ndarray) -> None:
        """Input rows ``rows`` of ``words`` for the next epoch."""
        self.arriving.append((words, rows))

    def take_inputs(self) -> None:
        """Start the next epoch's plan with the input rows sent to this machine."""
        assert self.next_plan is not None  # send_inputs came first
        self.plan, self.next_plan = self.next_plan, None
        self.inputs = np.empty((len(self.owned(self.plan)), self.config.dim), np.float32)
        for words, rows in self.arriving:
            self.inputs[self.plan.local[words]] = rows
        self.arriving = []

    def make_pairs(self, epoch: int, sweep: int) -> None:
        """Make the pairs of sweep ``sweep``'s batches (the sweep's 1/S of this machine's)
        and send every machine the frames of its blocks in epoch ``epoch``'s plan
        (``receive_frames``)."""
        contexts, centres = sweep_pairs(self.text, self.keep_prob, self.config, self.schedule, (epoch, sweep))
        frames = machine_frames(contexts, centres, self.epoch_plan(epoch))
        parts = 2 * self.schedule.machines
        for machine in range(self.schedule.machines):
            share = frames.share(machine * parts, (machine + 1) * parts)
            if machine != self.rank:
                self.add_sent(pairs=int(share.counts.sum()), pair_bytes=len(share.data))
            answer = self.peers[machine].receive_frames(self.rank, (epoch, sweep), share)
            settled(answer, peer_seconds(len(share.data)))

    def start_pairs(self, epoch: int, sweep: int) -> None:
        """``make_pairs`` in a thread of its own, while this machine trains (``finish_pairs``)."""
        self.making = self.ahead.submit(self.make_pairs, epoch, sweep)

    def finish_pairs(self) -> None:
        """Wait for the pairs ``start_pairs`` makes to be made and sent (raising its error)."""
        making, self.making = self.making, None
        if making is not None:
            making.result()

    def receive_frames(self, sender: int, position: tuple[int, int], frames: Frames) -> None:
        """The frames of this machine's 2N blocks that ``sender`` made for ``position``
        (epoch, sweep)."""
        epoch, sweep = position  # a list, where Dask's messages carry it as one
        self.inbox.setdefault((epoch, sweep), {})[sender] = frames

    def train(self, epoch: int, sweep: int, substep: int) -> None:
        """Train this machine's block of sub-step ``substep`` (its chunks from every
        machine's frames, ``chunks_of``, the next sub-step's made meanwhile), then hand
        its right partition on to the machine that trains it next, two sub-steps on:
        the one before this."""
        parts = 2 * self.schedule.machines
        made = self.preparing.pop((epoch, sweep, substep), None)
        chunks, order, part = made.result() if made is not None else self.chunks_of(epoch, sweep, substep)
        if substep + 1 < parts:
            position = (epoch, sweep, substep + 1)
            self.preparing[position] = self.prepare.submit(self.chunks_of, *position)
        self.train_in_threads(chunks, order, (epoch, sweep, substep), part)
        self.chunks += len(order)
        rows = self.rights.pop(part)
        after = (self.rank - 1) % self.schedule.machines
        if after != self.rank:
            self.add_sent(right_bytes=rows.nbytes)
        settled(self.peers[after].receive_right(part, rows), peer_seconds(rows.nbytes))

    def chunks_of(self, epoch: int, sweep: int, substep: int) -> tuple[Chunks, np.ndarray, int]:
        """The chunks of this machine's block of sub-step ``substep`` from every machine's
        frames (``pairs.block_chunks``), their context and centre words as places in
        its left and right partitions; the order to train them in; the right partition."""
        parts, plan = 2 * self.schedule.machines, self.epoch_plan(epoch)
        part = block_right(self.rank, substep, self.schedule.machines)
        block = self.rank * parts + part
        rng = np.random.default_rng([self.config.seed, epoch, sweep, block])
        inbox = self.inbox[(epoch, sweep)]
        chunks, order = block_chunks([inbox[s].frame(part) for s in range(self.schedule.machines)], plan, block, rng)
        if substep == parts - 1:  # the sweep's last block
            del self.inbox[(epoch, sweep)]
        return Chunks(plan.local[chunks.contexts], chunks.starts, chunks.centres // parts), order, part

    def train_in_threads(self, chunks: Chunks, order: np.ndarray, position: tuple[int, int, int], part: int) -> None:
        """Train ``chunks`` in ``order`` on the input rows and right partition ``part``,
        the threads taking near-equal runs of it at once (Hogwild), at the learning
        rate of the block at ``position`` (epoch, sweep, sub-step)."""
        config, schedule, threads = self.config, self.schedule, self.config.threads or 1
        assert config.alpha is not None and config.min_alpha is not None  # resolved
        parts = 2 * schedule.machines
        alphas = block_alphas((config.alpha, config.min_alpha), position, (config.epochs, schedule.sweeps, parts))
        block = self.rank * parts + part
        job = ((position[0] * schedule.sweeps + position[1]) * parts * schedule.machines + block) * threads
        seeds = [batch_seed(config.seed, (1 << 40) + job + t) for t in range(threads)]
        tables = output_tables(self.rights[part])
        arguments = (self.inputs, tables, self.noises[part], self.settings, alphas)
        pieces = zip(np.array_split(order, threads), seeds, strict=True)
        for loss, pairs in self.pool.map(lambda piece: train_chunks(chunks, piece[0], *arguments, piece[1]), pieces):
            self.loss[position[0]] += loss
            self.pairs[position[0]] += pairs

    def receive_right(self, part: int, rows: np.ndarray) -> None:
        """Right partition ``part``'s rows, to train in a coming sub-step."""
        self.rights[part] = rows

    def sent_so_far(self) -> Sent:
        """The bytes this machine has sent to the others."""
        return self.sent

    def trained(self) -> tuple[np.ndarray, np.ndarray, int]:
        """What this machine trained: the loss (nats) and the pairs by epoch, the chunks."""
        return self.loss, self.pairs, self.chunks

    def held(self) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        """The rows this machine holds: its input words, their rows, and its right partitions'."""
        return self.owned(self.plan), self.inputs, self.rights

    def close(self) -> None:
        for pool in (self.ahead, self.prepare, self.pool):
            pool.shutdown()


def epoch_plan(mass: np.ndarray, schedule: Schedule, seed: int, epoch: int) -> Plan:
    """Epoch ``epoch``'s plan (``blocks.left_partitions``), the same on every machine."""
    return left_partitions(mass, schedule.machines, np.random.default_rng([seed, epoch]))


def home_parts(rank: int) -> tuple[int, int]:
    """The right partitions machine ``rank`` holds at each sweep's start: R_2m and R_2m+1."""
    return 2 * rank, 2 * rank + 1


def machine_rows(weights: tuple[np.ndarray, np.ndarray], plan: Plan, rank: int) -> Rows:
    """Machine ``rank``'s rows of ``weights`` ((V, D) syn0 and syn1neg by word id) in
    ``plan``, as it holds them at a sweep's start."""
    syn0, syn1neg = weights
    words = plan.members[plan.first[rank] : plan.first[rank + 1]]
    shape = (len(syn0), 2 * plan.machines, syn0.shape[1])
    return Rows(np.ascontiguousarray(syn0[words]), {j: right_rows(syn1neg, j, shape) for j in home_parts(rank)})


def right_rows(syn1neg: np.ndarray | None, part: int, shape: tuple[int, int, int]) -> np.ndarray:
    """Right partition ``part``'s rows of ``syn1neg`` ((V, D), by word id), or zeros (None);
    ``shape``: (V, 2N, D)."""
    vocab, parts, dim = shape
    if syn1neg is None:
        return np.zeros((len(range(part, vocab, parts)), dim), np.float32)
    return np.ascontiguousarray(syn1neg[part::parts])


def output_tables(rows: np.ndarray) -> Tables:
    """The tables the chunk kernel reads: ``rows`` as the word output vectors, no tree."""
    floats, ints = np.empty(0, np.float32), np.empty(0, np.int32)
    return Tables(np.empty((0, rows.shape[1]), np.float32), rows, ints, floats, np.empty(0, np.int64),
                  np.empty(0, np.uint32), ints, floats)  # fmt: skip


def sweep_pairs(text: Text, keep_prob: np.ndarray, config: TrainConfig, schedule: Schedule, position: tuple[int, int]):
    """The pairs of the sweep's batches of ``text``: the k-th 1/S of them for sweep k,
    each batch seeded as the batch kernel seeds the run's batch of its index."""
    epoch, sweep = position
    first, last = sweep_batches(len(text.starts) - 1, schedule.sweeps, sweep)
    seeds = np.array([batch_seed(config.seed, int(epoch * text.total + text.first + b)) for b in range(first, last)],
                     np.uint64)  # fmt: skip
    tokens = text.tokens[text.starts[first] : text.starts[last]]
    return window_pairs(tokens, text.starts[first : last + 1] - text.starts[first], seeds, keep_prob, config.window)


def sweep_batches(batches: int, sweeps: int, sweep: int) -> tuple[int, int]:
    """The first and the last (exclusive) of a machine's ``batches`` that sweep ``sweep``
    of ``sweeps`` trains: the sweep's 1/S of them, in order."""
    return batches * sweep // sweeps, batches * (sweep + 1) // sweeps


def sweep_words(text: Text, sweeps: int) -> np.ndarray:
    """The words (tokens of the vocabulary) of ``text`` each sweep trains, (S,) int64."""
    words = np.concatenate([[0], np.cumsum(text.tokens >= 0)])
    ends = [text.starts[sweep_batches(len(text.starts) - 1, sweeps, k)[1]] for k in range(sweeps)]
    return np.diff(np.concatenate([[0], words[ends]])).astype(np.int64)
