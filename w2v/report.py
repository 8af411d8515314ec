"""What a training run did, as ``w2v.train`` reports it in ``Vectors.report``."""

import json
import math
from dataclasses import asdict, dataclass, field


@dataclass
class RoundLog:
    """One round of a run on a cluster: words trained (all replicas), bytes sent to and
    received from the replicas, the longest replica's training time and the whole
    round's (s)."""

    words: int
    bytes_out: int
    bytes_in: int
    compute_seconds: float
    seconds: float


@dataclass
class BlockTraffic:
    """What a run in blocks on a cluster (``cluster.blocktraining``) trained and sent
    between its machines: the pairs they sent each other in frames, and the bytes of
    those frames, of right partitions handed on and of input rows moved between epochs."""

    machines: int
    sweeps: int  # an epoch
    words: int  # trained by this run
    seconds: float  # training
    pairs: int = 0
    pair_bytes: int = 0
    right_bytes: int = 0
    input_bytes: int = 0

    @property
    def sent(self) -> int:
        """Bytes the machines sent each other: pairs, right partitions and input rows."""
        return self.pair_bytes + self.right_bytes + self.input_bytes


@dataclass
class TrainReport:
    """What a training run did: per-epoch mean loss (nats per example), sizes, timing,
    and the settings it ran with."""

    vocab_size: int
    corpus_words: int  # tokens read from the corpus (one epoch, rare words included)
    train_words: int  # in-vocabulary tokens trained over all epochs
    seconds: float  # the whole run: vocabulary, encoding and training
    train_seconds: float  # the epochs alone (compiling the kernels and scoring held-out text excluded)
    epoch_loss: list[float] = field(default_factory=list)
    prepare_seconds: float = 0.0  # counting, vocabulary, encoding the corpus to ids (compiling excluded)
    epoch_heldout: list[float] = field(default_factory=list)  # held-out bits per word after each epoch (nan: none)
    epoch_heldout_se: list[float] = field(default_factory=list)  # their standard errors (sampling)
    heldout_unigram: float = math.nan  # the unigram model's bits per word on the same predictions: the baseline
    compile_seconds: float = 0.0  # compiling kernels not in Numba's cache yet (a first run): 0.0 when all were
    heldout_seconds: float = 0.0  # scoring the held-out text after each epoch (``heldout``)
    rounds: list[RoundLog] = field(default_factory=list)  # on a cluster: each round's words, bytes and seconds
    workers_lost: int = 0  # on a cluster: replicas or machines started again after their worker was lost
    blocks: BlockTraffic | None = None  # on a cluster, skip-gram NS in blocks: what the machines sent each other
    output_updates: int = 0  # (example, output row) updates trained, 6 x dim flops each (not counted on a cluster)
    row_visits: int = 0  # rows read and written by the kernel (each output row once a chunk, each context row once)
    settings: dict = field(default_factory=dict)  # the run's resolved settings (``TrainConfig.record``)

    @property
    def words_per_second(self) -> float:
        """Trained words per second of training."""
        return self.train_words / max(self.train_seconds, 1e-9)

    def to_json(self) -> str:
        """The report as a JSON object (one line per field), ``null`` where a figure is
        nan (an epoch not scored on held-out text), and ``words_per_second`` with it."""

        def plain(value):
            if isinstance(value, float) and math.isnan(value):
                return None
            if isinstance(value, list):
                return [plain(item) for item in value]
            return value

        fields = {name: plain(value) for name, value in asdict(self).items()}
        return json.dumps({**fields, "words_per_second": self.words_per_second}, indent=1) + "\n"
