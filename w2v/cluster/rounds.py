"""Data-parallel training in rounds: replicas of the weights, each on its own parts
of the corpus, combined after every round. No Dask here: ``cluster.training`` runs
a ``Replica`` on each worker of a cluster, ``studies/simulate_cluster/simulate_cluster.py`` runs N of
them in turn in one process, and both combine with ``combine``.

A run of N replicas over a corpus of B batches (W words an epoch, E epochs): replica
k holds a contiguous run of parts (``parts.split_sources``) encoded as its own id
stream, whose batches are batches ``first_k ..`` of the whole corpus. Its job j
(epoch ``j // B_k``, batch ``b = j % B_k``) takes the seed of the corpus' job
``epoch * B + first_k + b`` and the learning rate of the run's global progress

    alpha = alpha0 - (alpha0 - min_alpha) * (G + N_active * (p(j) - p_0)) / (E * W)

where G is the words every replica had trained when the round began, p(j) the
replica's own words before job j, p_0 that at the round's start. With one replica
this is exactly the single-process run's schedule (same seeds, same rates).

In a round each replica trains about ``round_words`` words from the round's common
weights with its threads (``workers.EpochRunner``, Hogwild as in one process), then
reports the rows that moved (``changes``). ``combine`` turns the reports into the
next round's weights, per row r of each matrix, from the start w_r and the replicas'
new rows v_kr (k in M_r, those that moved it):

- ``mean``:  w_r + sum_k (v_kr - w_r) / N    (the mean of all N replicas' weights)
- ``sum``:   w_r + sum_k (v_kr - w_r)        (every replica's change, added)
- ``adaptive``: w_r + c_r sum_k (v_kr - w_r), c_r = min(1, sum_k |v_kr - w_r|^2 / |sum_k (v_kr - w_r)|^2):
  replicas that moved a row the same way (towards the same optimum) are averaged,
  replicas that moved it independently (orthogonal changes) are added

- ``momentum``: block momentum with Nesterov's look-ahead (BMUF, Chen and Huo 2016).
  With the mean change g_r = sum_k (v_kr - w_r) / N, the row's momentum m_r (zero at
  the start) and eta = 1 - 1/N:

      m_r <- eta m_r + g_r,    w_r <- w_r + g_r + eta m_r

  so that the weights of record are the look-ahead point the replicas start from.
  A change one replica made alone is applied in full over the following rounds
  (g_r (1 + eta + eta^2 / (1 - eta)) = N g_r), as ``sum`` would at once; changes the
  replicas agree on are averaged each round and their momentum builds only as the
  next rounds keep moving the same way, so a row that every replica pulls to the
  same place does not overshoot by N. Rows with momentum move every round.

- ``mixed``: ``adaptive`` for the input vectors (syn0), ``momentum`` for the output
  vectors (syn1, syn1neg). A word's input row moves only where the word occurs, so
  the replicas move it from their own texts' contexts: a rare word's changes are
  independent and add up, a frequent word's agree and are averaged. An output row is
  pulled by every replica's negative draws towards the same place, and is best
  averaged with momentum.

computed in float64. With one replica all five give v_r, bit for bit. ``auto``
(the default) is ``sum`` for two replicas in rounds of up to 100,000 words,
``momentum`` for two in longer rounds and ``mixed`` for more (``combine_rule``).
"""

import tempfile
import time
from dataclasses import dataclass, replace

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.idstream import encode_corpus, evenly_spaced
from w2v.corpus.parts import Part
from w2v.corpus.vocab import Vocab
from w2v.engine.jit import jit_kernel
from w2v.engine.runloop import Hooks
from w2v.engine.weights import Model
from w2v.engine.workers import EpochRunner, JobQueue, Progress, batch_seed, stream_offsets
from w2v.report import RoundLog

COMBINE_ROWS = 1 << 12  # rows combined at a time: their float64 sums stay in the cache


@dataclass
class Rows:
    """Some rows of a (V, D) float32 matrix: ``rows`` (K,) int64 ascending and their
    ``values`` (K, D); ``rows`` None when every row is there (``values`` the matrix)."""

    rows: np.ndarray | None
    values: np.ndarray

    @classmethod
    def of(cls, matrix: np.ndarray, rows: np.ndarray) -> "Rows":
        """``matrix``'s ``rows``, sent whole where the row indices would make them larger."""
        if len(rows) * (matrix.shape[1] * 4 + 8) >= matrix.nbytes:
            return cls(None, matrix.copy())
        return cls(rows, matrix[rows])

    def indices(self, size: int) -> np.ndarray:
        """The row indices, for a matrix of ``size`` rows."""
        return np.arange(size, dtype=np.int64) if self.rows is None else self.rows

    @property
    def nbytes(self) -> int:
        return self.values.nbytes + (0 if self.rows is None else self.rows.nbytes)


Changes = dict[str, Rows]  # by weight name: the rows that moved, their new values
Weights = dict[str, np.ndarray]  # by weight name (syn0, syn1, syn1neg): a (V, D) float32 matrix


def changes_nbytes(changes: Changes | None) -> int:
    """Bytes of the rows and values in ``changes``."""
    return sum(rows.nbytes for rows in (changes or {}).values())


def combine(
    weights: Weights, reports: list[Changes], replicas: int, how: str, momentum: Weights | None = None
) -> Changes:
    """Apply the replicas' ``reports`` of a round to ``weights`` (changed in place) as
    ``how`` says (``COMBINE``, see the module's docstring); ``replicas`` is N, the
    replicas of the run (those whose report is lost count as having moved nothing);
    ``momentum`` the rows' momentum of the weights combined with ``momentum``
    (``momentum_weights``; changed in place). Returns the rows that changed with their
    new values, for every replica to take. Works through ``COMBINE_ROWS`` rows at a
    time, so that its float64 sums (COMBINE_ROWS x D x 8 bytes) stay in the cache."""
    if set(momentum or {}) != set(momentum_weights(how, weights)):
        raise ValueError("the momentum rule needs the rows' momentum, and only it takes it")
    update: Changes = {}
    for name, matrix in weights.items():
        if not matrix.size:
            continue
        rule, rows_momentum = weight_rule(how, name), (momentum or {}).get(name)
        indices = [report[name].indices(len(matrix)) for report in reports]
        movers = np.zeros(len(matrix), dtype=np.int64)
        for index in indices:
            movers[index] += 1
        if rows_momentum is not None:
            movers += rows_momentum.any(axis=1)  # rows still moving by their momentum
        union = np.flatnonzero(movers)
        for low in range(0, len(union), COMBINE_ROWS):
            rows = union[low : low + COMBINE_ROWS]
            change = np.zeros((len(rows), matrix.shape[1]), dtype=np.float64)
            squares = np.zeros(len(rows), dtype=np.float64)  # sum over replicas of |change|^2, per row
            for index, report in zip(indices, reports, strict=True):
                inside = slice(np.searchsorted(index, rows[0]), np.searchsorted(index, rows[-1], side="right"))
                at = np.searchsorted(rows, index[inside])
                add_changes(matrix, index[inside], report[name].values[inside], at, change, squares)
            if rows_momentum is not None:
                apply_momentum(matrix, rows, change, rows_momentum, replicas)
            else:
                apply_changes(matrix, rows, change, row_scale(rule, change, squares, replicas))
        update[name] = Rows.of(matrix, union)
    return update


@jit_kernel
def add_changes(matrix, rows, values, at, change, squares):
    """Add one replica's change of K rows: for each i, with d = values[i] - matrix[rows[i]]
    in float64, change[at[i]] += d and squares[at[i]] += |d|^2. ``matrix`` (V, D) float32,
    ``rows`` (K,) int64, ``values`` (K, D) float32, ``at`` (K,) int64, ``change`` (R, D)
    and ``squares`` (R,) float64."""
    for i in range(len(rows)):
        row, slot = rows[i], at[i]
        total = 0.0
        for column in range(matrix.shape[1]):
            moved = np.float64(values[i, column]) - np.float64(matrix[row, column])
            change[slot, column] += moved
            total += moved * moved
        squares[slot] += total


@jit_kernel
def apply_changes(matrix, rows, change, scale):
    """matrix[rows[j]] = float32(matrix[rows[j]] + scale[j] change[j]) for each j, in float64.
    ``scale`` (R,) float64."""
    for j in range(len(rows)):
        row = rows[j]
        for column in range(matrix.shape[1]):
            matrix[row, column] = np.float32(np.float64(matrix[row, column]) + scale[j] * change[j, column])


@jit_kernel
def apply_momentum(matrix, rows, change, momentum, replicas):
    """Block momentum with look-ahead for R rows (module docstring): for each j, with
    r = rows[j], g = change[j] / N and eta = 1 - 1/N, momentum[r] = eta momentum[r] + g
    and matrix[r] += g + eta momentum[r], in float64. ``matrix`` and ``momentum`` (V, D)
    float32, ``rows`` (R,) int64, ``change`` (R, D) float64 (the summed changes)."""
    eta = 1.0 - 1.0 / replicas
    for j in range(len(rows)):
        row = rows[j]
        for column in range(matrix.shape[1]):
            mean_change = change[j, column] / replicas
            pushed = eta * np.float64(momentum[row, column]) + mean_change
            momentum[row, column] = np.float32(pushed)
            matrix[row, column] = np.float32(np.float64(matrix[row, column]) + mean_change + eta * pushed)


def weight_rule(how: str, name: str) -> str:
    """The rule that combines weight ``name`` (syn0, syn1, syn1neg) under rule ``how``:
    ``mixed`` is ``adaptive`` for the input vectors and ``momentum`` for the output
    vectors; every other rule combines all three."""
    if how != "mixed":
        return how
    return "adaptive" if name == "syn0" else "momentum"


def momentum_weights(how: str, weights: Weights) -> list[str]:
    """The names of the ``weights`` that rule ``how`` combines with momentum (empty ones
    included, as a checkpoint keeps them)."""
    return [name for name in weights if weight_rule(how, name) == "momentum"]


STALE_WORDS = 50_000  # default rounds: the words the other replicas train while one trains its round
ALONE_WORDS = 10_000_000  # default rounds of a lone replica, which change nothing but the pace of reports


def round_words(sync_words: int | None, replicas: int) -> int:
    """The words a replica trains a round (it ends at the first batch boundary past
    them): ``sync_words``, or by default
    - for one replica, ALONE_WORDS: its rounds change nothing but how often the
      client reports progress and can checkpoint, and what a lost worker costs
      (about a second of training on 2 cores, less on more);
    - for N > 1 ``replicas``, STALE_WORDS / (N - 1), so that whatever N a replica
      misses about STALE_WORDS words of the others' training in a round: 50,000
      words a replica for two, 16,666 for four, 3,333 for sixteen. Chosen by
      held-out loss (studies/simulate_cluster/README.md): with two replicas, rounds of 50,000
      words are the longest within 0.005 bits of the best; with four or more,
      rounds of 5,000 words do better than rounds of 50,000 in every setting
      simulated but CBOW with eight replicas, and on the whole benchmark text
      sixteen replicas at this default do better than at 5,000 words and keep
      one replica's analogies. Rounds in which a replica misses 25,000 words do
      better with eight replicas on a smaller text, at twice the rounds' cost on
      a network."""
    if sync_words is not None:
        return sync_words
    if replicas == 1:
        return ALONE_WORDS
    return max(STALE_WORDS // (replicas - 1), 1)


def replica_config(config: TrainConfig, replicas: int) -> TrainConfig:
    """The settings each of ``replicas`` replicas encodes and trains with: ``config``
    with batches of at most ``round_words``, since a round ends at a batch boundary
    and batches longer than the round would make it longer than asked (on a one-line
    corpus, two sentences of 10,000 tokens a batch); ``Replica`` cuts batches so
    shortened to exactly that many words. One replica keeps its batches: its rounds
    change nothing."""
    if replicas == 1:
        return config
    return replace(config, batch_words=min(config.batch_words, round_words(config.sync_words, replicas)))


FEW_REPLICAS = 2  # ``auto``: replicas combined by ``sum`` (short rounds) or ``momentum``; more by ``mixed``
SUM_ROUND_WORDS = 100_000  # ``auto``: the longest rounds (words a replica) in which two replicas' changes are added


def combine_rule(how: str, replicas: int, sync_words: int) -> str:
    """The rule ``combine`` applies: ``how``, or for ``auto`` ``sum`` for one replica
    (every rule gives its weights); for up to ``FEW_REPLICAS`` replicas ``sum`` in
    rounds of up to ``SUM_ROUND_WORDS`` words (``sync_words``) and ``momentum`` in
    longer ones; ``mixed`` for more. Chosen by held-out loss (studies/simulate_cluster/README.md): a
    replica's change of a frequent word's output row is most of the way to where its
    round's text pulls the row, the more so the longer the round, so that the sum of N
    such changes overshoots: with four or more replicas it diverges, and with two it
    is within noise of ``momentum`` or better up to 100,000 words a round and far worse
    from 200,000 on. Of the stable rules, ``momentum`` has the lowest held-out loss
    with two replicas in long rounds, ``mixed`` with four or more."""
    if how != "auto":
        return how
    if replicas == 1 or (replicas <= FEW_REPLICAS and sync_words <= SUM_ROUND_WORDS):
        return "sum"
    return "momentum" if replicas <= FEW_REPLICAS else "mixed"


def row_scale(how: str, change: np.ndarray, squares: np.ndarray, replicas: int) -> np.ndarray:
    """The factor (K,) float64 that turns the summed change of K rows into the combined
    one: 1 (``sum``), 1/N (``mean``), or for ``adaptive`` min(1, sum_k |d_k|^2 /
    |sum_k d_k|^2) (N parallel changes: 1/N; orthogonal ones: 1)."""
    if how == "sum":
        return np.ones(len(change))
    if how == "mean":
        return np.full(len(change), 1.0 / replicas)
    summed = np.einsum("ij,ij->i", change, change)
    return np.minimum(np.divide(squares, summed, out=np.ones_like(squares), where=summed > 0), 1.0)


@dataclass
class RoundResult:
    """What a replica did in one round."""

    jobs_done: int  # the replica's jobs finished so far
    words: int  # words trained in the round
    epoch_loss: np.ndarray  # (E,) float64: the round's summed loss per epoch
    epoch_examples: np.ndarray  # (E,) int64
    changes: Changes
    seconds: float  # training, the round's compute
    nbytes: int = 0  # of ``changes``


class RoundRunner(EpochRunner):
    """``EpochRunner`` whose jobs take the seeds and learning rates of their place in
    the whole corpus and run (see the module's docstring)."""

    def __init__(self, model: Model, stream, config: TrainConfig, progress: Progress, corpus: "Placement"):
        super().__init__(model, stream, config, progress, Hooks())
        self.corpus = corpus
        self.loop.total = corpus.words * config.epochs  # its learning rate decays over the whole corpus' words
        self.round_start = (0, 0, 1)  # G, p_0, N_active

    def job_alpha(self, epoch: int, batch: int) -> float:
        done, start, active = self.round_start
        return self.alpha(done + active * (epoch * self.stream.words + self.words_before[batch] - start))

    def job_seed(self, job: int) -> np.uint64:
        epoch, batch = divmod(job, len(self.stream))
        return batch_seed(self.config.seed, epoch * self.corpus.batches + self.corpus.first_batch + batch)


@dataclass
class Placement:
    """Where a replica's stream sits in the whole corpus."""

    first_batch: int = 0  # the corpus batch its first batch is
    batches: int = 0  # the corpus' batches
    words: int = 0  # the corpus' words (an epoch)


class Replica:
    """One of a run's ``replicas`` replicas: its ``parts`` encoded as ids (in a
    temporary folder of its own machine), a copy of the weights (syn0, syn1, syn1neg)
    and of the same as they were at the last combining, and its jobs done (a resumed
    replica's, or 0). A cluster runs it as a Dask actor: its methods run on its worker.

    It trains with ``replica_config``'s batches. Where they are shorter than
    ``config.batch_words`` (rounds shorter than a batch), they hold exactly that
    many words, the sentence that goes on past a batch's last word cut there
    (``idstream.cut_at_batch_ends``), so that a round shorter than a sentence is as
    short as asked (a one-line corpus is read as sentences of 10,000 tokens): the
    context windows stop at the cuts, as at word2vec.c's cuts every 1,000 words."""

    def __init__(
        self,
        parts: list[Part],
        vocab: Vocab,
        config: TrainConfig,
        weights: tuple,
        jobs_done: int = 0,
        replicas: int = 1,
    ):
        settings = replica_config(config, replicas)
        self.parts, self.config, self.jobs_done = list(parts), settings, jobs_done
        self.workdir = tempfile.TemporaryDirectory(prefix="w2v-replica-")
        exact = settings.batch_words < config.batch_words
        encoded = encode_corpus(self.parts, settings, self.workdir.name, lambda _w, _c: vocab, exact_batches=exact)
        self.stream, self.digest, self.neighbours = encoded.stream, encoded.digest, encoded.neighbours
        self.stream.reorder(evenly_spaced(len(self.stream), config.streams or 1))
        syn0, syn1, syn1neg = (np.array(matrix, dtype=np.float32) for matrix in weights)  # writable copies
        self.model = Model.build(vocab, config, (syn0, syn1, syn1neg))
        self.snapshot = {name: matrix.copy() for name, matrix in self.weights().items()}
        self.runner: RoundRunner | None = None

    def size(self) -> tuple[int, int]:
        """The replica's batches and words (an epoch)."""
        return len(self.stream), self.stream.words

    def fingerprint(self) -> tuple[int, int, int]:
        """The replica's batches, words (an epoch) and the CRC-32 of its ids."""
        return len(self.stream), self.stream.words, self.digest

    def has_neighbours(self) -> bool:
        """Whether two words of the replica's stream stand side by side in a sentence (``Encoded.neighbours``)."""
        return self.neighbours

    def words_done(self) -> int:
        """Words the replica has trained (a resumed one's, before it)."""
        return self.position(self.jobs_done)

    def weights(self) -> dict[str, np.ndarray]:
        tables = self.model.tables
        return {"syn0": self.model.syn0, "syn1": tables.syn1, "syn1neg": tables.syn1neg}

    def place(self, placement: Placement) -> None:
        """Learn where the stream sits in the corpus, and load the kernel."""
        stream, config = self.stream, self.config
        progress = Progress(config.threads or 1, config.epochs, len(stream), stream_offsets(stream))
        progress.jobs_done = self.jobs_done
        self.runner = RoundRunner(self.model, stream, config, progress, placement)
        self.runner.load_kernel()

    def take(self, update: Changes) -> None:
        """Set the rows of the last combining (``combine``'s result)."""
        weights = self.weights()
        for name, rows in update.items():
            for matrix in (weights[name], self.snapshot[name]):
                if rows.rows is None:
                    matrix[:] = rows.values
                else:
                    matrix[rows.rows] = rows.values

    def train_round(self, update: Changes | None, done: int, active: int, words: int) -> RoundResult:
        """Take ``update``, then train the next jobs of about ``words`` words, from global
        progress ``done`` (words every replica had trained) with ``active`` replicas
        training; report the rows that moved."""
        if update:
            self.take(update)
        runner = self.runner
        assert runner is not None
        progress, batches = runner.progress, len(self.stream)
        first = self.jobs_done
        last = self.round_end(first, words)
        loss, examples = progress.loss.sum(axis=0), progress.examples.sum(axis=0)
        runner.round_start = (done, self.position(first), active)
        started = time.perf_counter()
        runner.run_segment(JobQueue(first, last))
        self.model.check_diverged(max((last - 1) // max(batches, 1) + 1, 1), runner.start_alpha)
        seconds = time.perf_counter() - started
        self.jobs_done = progress.jobs_done
        changes = self.changes()
        return RoundResult(
            self.jobs_done, self.position(last) - self.position(first), progress.loss.sum(axis=0) - loss,
            progress.examples.sum(axis=0) - examples, changes, seconds, changes_nbytes(changes),
        )  # fmt: skip

    def position(self, job: int) -> int:
        """The replica's own words before its job ``job``."""
        assert self.runner is not None, "placed"
        epoch, batch = divmod(job, max(len(self.stream), 1))
        return epoch * self.stream.words + int(self.runner.words_before[batch])

    def round_end(self, first: int, words: int) -> int:
        """The job after the round that starts at job ``first``: the first whose words
        before reach ``words`` more than ``first``'s (at most the last job)."""
        jobs = len(self.stream) * self.config.epochs
        target = self.position(first) + words
        low, high = first + 1, jobs
        while low < high:  # positions grow with the job: bisect
            middle = (low + high) // 2
            low, high = (middle + 1, high) if self.position(middle) < target else (low, middle)
        return min(low, jobs)

    def changes(self) -> Changes:
        """The rows that moved since the last combining, with their values now."""
        changes = {}
        for name, matrix in self.weights().items():
            if matrix.size:
                moved = np.flatnonzero((matrix != self.snapshot[name]).any(axis=1))
                changes[name] = Rows.of(matrix, moved)
        return changes

    def close(self) -> None:
        """Drop the encoded ids."""
        self.stream.close()
        self.workdir.cleanup()


class Ledger:
    """The book of a data-parallel run, whatever runs its N replicas (a cluster's
    workers, or one process in turn): the weights of record, each replica's size
    ((N, 2) int64: batches and words of an epoch) and jobs done, the epochs' summed
    losses, the words trained, the rows' momentum (of the weights ``momentum_weights``
    names; empty for a rule without) and the rounds' log; the words a replica trains a
    round (``round_words``) and the rule that combines them. ``record`` closes a round."""

    def __init__(self, sizes: np.ndarray, config: TrainConfig, weights: Weights):
        self.sizes, self.config, self.weights = sizes, config, weights
        self.sync_words = round_words(config.sync_words, len(sizes))
        self.rule = combine_rule(config.combine, len(sizes), self.sync_words)
        self.momentum: Weights = {name: np.zeros_like(weights[name]) for name in momentum_weights(self.rule, weights)}
        self.jobs = np.zeros(len(sizes), dtype=np.int64)
        self.loss = np.zeros(config.epochs, dtype=np.float64)
        self.examples = np.zeros(config.epochs, dtype=np.int64)
        self.trained = 0  # words, all replicas
        self.log: list[RoundLog] = []

    def placement(self, k: int) -> Placement:
        """Where replica ``k``'s batches sit among the corpus'."""
        sizes = self.sizes
        return Placement(int(sizes[:k, 0].sum()), int(sizes[:, 0].sum()), int(sizes[:, 1].sum()))

    @property
    def total_words(self) -> int:
        """Words of the whole run: an epoch's, all replicas, times the epochs."""
        return int(self.sizes[:, 1].sum()) * self.config.epochs

    def active(self) -> list[int]:
        """The replicas with jobs left."""
        return np.flatnonzero(self.jobs < self.sizes[:, 0] * self.config.epochs).tolist()

    def epochs_done(self) -> int:
        """Epochs every replica has finished."""
        return int(min(self.jobs // np.maximum(self.sizes[:, 0], 1)))

    def epoch_loss(self, epoch: int) -> float:
        """Mean loss per example of ``epoch`` so far (nats), nan before any."""
        examples = self.examples[epoch]
        return float(self.loss[epoch] / examples) if examples else float("nan")

    def record(self, sent: Changes | None, results: dict[int, RoundResult], started: float) -> Changes:
        """Close a round that began at ``started`` (``time.perf_counter``) by sending
        ``sent`` to the active replicas, whose ``results`` came back (a lost one's did
        not): add up their work, combine their changes into the weights and log the
        round. Returns the rows to send in the next round."""
        receivers = len(self.active())
        for k, result in results.items():
            self.jobs[k] = result.jobs_done
            self.loss += result.epoch_loss
            self.examples += result.epoch_examples
        words = sum(result.words for result in results.values())
        self.trained += words
        reports = [result.changes for result in results.values()]
        update = combine(self.weights, reports, len(self.sizes), self.rule, self.momentum)
        compute = max((result.seconds for result in results.values()), default=0.0)
        received = sum(result.nbytes for result in results.values())
        self.log.append(
            RoundLog(words, changes_nbytes(sent) * receivers, received, compute, time.perf_counter() - started)
        )
        return update
