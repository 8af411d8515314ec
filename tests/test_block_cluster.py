"""Skip-gram NS trained in blocks on a Dask cluster (``w2v.train(cluster=...)``,
``w2v.cluster.blocktraining``): the actors' run is the same machines' run in one
process, byte for byte, with one thread; after a lost worker and a resume too."""

import signal
import tempfile
from pathlib import Path

import numpy as np
import pytest
from test_cluster import topic_corpus, topic_margin, worker_processes

import w2v
from w2v.cli.info import trained_line
from w2v.cluster import blockrun
from w2v.cluster.blockactors import MachinesRun, machines_here
from w2v.cluster.blockmachine import Schedule, settled
from w2v.cluster.blockrun import gather, train_blocks
from w2v.config import TrainConfig
from w2v.corpus.parts import groups_of, split_sources
from w2v.corpus.vocab import Vocab
from w2v.errors import CorpusError
from w2v.vectorio.describe import model_info
from w2v.vectorio.modelfile import TrainState, checkpoint_path

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow  # every test here starts a Dask cluster, or trains machines


BLOCKS = {"model": "skipgram", "dim": 16, "epochs": 2, "seed": 4, "threads": 1, "min_count": 1, "sample": 1e-3,
          "sweeps": 2, "batch_words": 2000}  # fmt: skip
ALWAYS = 1e-9  # checkpoint_every, minutes: after every sweep


def machines_trained(corpus: Path, machines: int, vocab: Vocab,
                     epochs_done: int | None = None) -> tuple[tuple[np.ndarray, np.ndarray], list[float]]:  # fmt: skip
    """The weights (syn0, syn1neg) of ``BLOCKS`` on ``corpus`` trained by ``machines``
    machines in this process, the corpus cut as a cluster of that many workers cuts it,
    to the end or after ``epochs_done`` epochs, and each epoch's mean loss a pair."""
    config = TrainConfig(**BLOCKS).resolved()
    groups = groups_of(split_sources([str(corpus)], machines), machines)
    assert all(groups)
    last = (-1, -1) if epochs_done is None else (epochs_done - 1, config.sweeps - 1)
    with tempfile.TemporaryDirectory() as workdir:
        here = machines_here(MachinesRun(groups, vocab, config), workdir)
        train_blocks(here, config.epochs, Schedule(machines, config.sweeps), after_sweep=lambda *at: at == last)
        loss = np.sum([machine.trained()[0] for machine in here], axis=0)
        pairs = np.sum([machine.trained()[1] for machine in here], axis=0)
        with np.errstate(invalid="ignore"):  # an epoch not trained: nan
            return gather(here, len(vocab), config.dim), (loss / pairs).tolist()


def weights_of(model: Path) -> tuple[TrainState, tuple[np.ndarray, np.ndarray]]:
    state = TrainState.load(str(model))
    return state, (state.syn0, state.syn1neg)


def assert_same(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...]) -> None:
    for got_rows, want_rows in zip(got, want, strict=True):
        np.testing.assert_array_equal(got_rows, want_rows)


class Stop(Exception):
    """What an ``on_progress`` raises to stop a run as an interrupt would."""


def stop_after_a_sweep(done: int, _total, _alpha, _loss) -> None:
    if done > 0:
        raise Stop(done)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return topic_corpus(tmp_path_factory.mktemp("blocks") / "topics.txt", lines=3000)


def test_blocks_on_four_workers_are_the_machines_of_one_process_byte_for_byte(corpus: Path, tmp_path: Path):
    """``--cluster local:4 --threads 1`` trains skip-gram NS in blocks: the weights of
    the same four machines in this process (the simulation), byte for byte."""
    model = tmp_path / "model.npz"
    trained = w2v.train(str(corpus), cluster="local:4", save_model=str(model), **BLOCKS)
    state, there = weights_of(model)
    here, losses = machines_trained(corpus, 4, state.vocab)
    assert_same(there, here)
    assert trained.report.epoch_loss == losses
    assert np.abs(there[1]).max() > 0.01 and len(state.replicas) == 4 and state.blocks == {"epoch": 2, "sweep": 0}
    traffic = trained.report.blocks
    assert (traffic.machines, traffic.sweeps, traffic.words) == (4, 2, trained.report.train_words)
    assert trained.report.train_words == 2 * 36_000 and 0 < traffic.pair_bytes < 2 * traffic.pairs
    assert topic_margin(trained) > 0.3


def stopped_after_a_sweep(corpus: Path, folder: Path) -> int:
    """Train ``BLOCKS`` on 4 workers, checkpointing into ``folder`` after every sweep,
    and stop after the first; the words it trained."""
    with pytest.raises(Stop) as stopped:
        w2v.train(str(corpus), cluster="local:4", checkpoint=str(folder), checkpoint_every=ALWAYS,
                  on_progress=stop_after_a_sweep, **BLOCKS)  # fmt: skip
    assert TrainState.load(checkpoint_path(str(folder))).blocks == {"epoch": 0, "sweep": 1}
    return stopped.value.args[0]


def test_a_run_resumed_on_as_many_workers_ends_as_if_never_stopped(corpus: Path, tmp_path: Path):
    folder, model = tmp_path / "ck", tmp_path / "model.npz"
    first_sweep = stopped_after_a_sweep(corpus, folder)
    resumed = w2v.train(str(corpus), cluster="local:4", resume=str(folder), save_model=str(model))
    state, weights = weights_of(model)
    here, losses = machines_trained(corpus, 4, state.vocab)
    assert_same(weights, here)
    assert resumed.report.epoch_loss == pytest.approx(losses, rel=1e-12)  # the checkpoint's loss, and the rest
    assert resumed.report.train_words == 2 * 36_000 - first_sweep > 36_000
    again = w2v.train(str(corpus), cluster="local:4", resume=str(folder))  # its last checkpoint: the run's end
    assert again.report.train_words == 0 and again.vectors.tobytes() == resumed.vectors.tobytes()


def test_a_four_worker_checkpoint_resumes_on_two_workers(corpus: Path, tmp_path: Path, capsys):
    """Stopped after a sweep on 4 workers, resumed on 2: the 4 machines finish the
    epoch (two a worker), byte for byte as the uninterrupted run; from the next
    epoch's start the run goes on with 2 machines, the corpus cut for 2 workers."""
    folder, model = tmp_path / "ck", tmp_path / "model.npz"
    stopped_after_a_sweep(corpus, folder)
    w2v.train(str(corpus), cluster="local:2", resume=str(folder), on_epoch_end=lambda end: True,
              save_model=str(model), progress=True)  # fmt: skip
    said = "w2v: the checkpoint's 4 machines finish epoch 1; then the run goes on with 2 machines, the corpus cut"
    assert said in capsys.readouterr().err
    state, weights = weights_of(model)
    assert state.blocks == {"epoch": 1, "sweep": 0} and len(state.replicas) == 4
    assert_same(weights, machines_trained(corpus, 4, state.vocab, epochs_done=1)[0])
    rest = w2v.train(str(corpus), cluster="local:2", resume=str(folder), save_model=str(model))
    state, weights = weights_of(model)
    assert state.blocks == {"epoch": 2, "sweep": 0} and len(state.replicas) == 2
    assert rest.report.train_words == 36_000 and rest.report.blocks.machines == 2
    assert not np.array_equal(weights[0], machines_trained(corpus, 4, state.vocab)[0][0])
    assert topic_margin(rest) > 0.3


def test_a_worker_killed_mid_sweep_costs_the_sweep_and_not_the_result(corpus: Path, tmp_path: Path, monkeypatch):
    """A worker killed while its machines train a sub-step: the run goes back to the
    last sweep's checkpoint, new machines start from it once the killed worker's place
    is taken, and the weights are those of the run without the fault."""
    killed: list[int] = []

    def on_all_killing(machines, method, *args):
        answers = [getattr(machine, method)(*args) for machine in machines]
        if method == "train" and args == (1, 0, 1) and not killed:  # epoch 1, sweep 0, sub-step 1, under way
            victim = worker_processes()[0]
            victim.send_signal(signal.SIGKILL)
            killed.append(victim.pid)
        return [settled(answer) for answer in answers]

    monkeypatch.setattr(blockrun, "on_all", on_all_killing)
    model = tmp_path / "model.npz"
    faulty = w2v.train(str(corpus), cluster="local:3", checkpoint=str(tmp_path / "ck"), checkpoint_every=ALWAYS,
                       save_model=str(model), **BLOCKS)  # fmt: skip
    assert killed and faulty.report.workers_lost == 1
    state, weights = weights_of(model)
    assert_same(weights, machines_trained(corpus, 3, state.vocab)[0])


def test_on_epoch_end_in_blocks_sees_the_vectors_and_stops_the_run(corpus: Path, tmp_path: Path):
    """The rows gathered at an epoch's end are the vectors the callback sees; True ends
    the run there, its model file saying where it would go on."""
    seen = []

    def stop_after_one(end):
        seen.append((end.epoch, end.vectors.copy()))
        return True

    model = tmp_path / "model.npz"
    result = w2v.train(str(corpus), cluster="local:2", on_epoch_end=stop_after_one, save_model=str(model), **BLOCKS)
    assert [epoch for epoch, _ in seen] == [1] and seen[0][1].vectors.tobytes() == result.vectors.tobytes()
    assert result.report.train_words == 36_000 and len(result.report.epoch_loss) == 1
    assert TrainState.load(str(model)).blocks == {"epoch": 1, "sweep": 0}
    said = trained_line(model_info(str(model)))  # w2v info
    assert said.startswith("epoch 2 of 2, 50% done") and "in blocks on 2 machines, 2 sweeps an epoch" in said


def test_a_checkpoint_of_another_corpus_is_refused(corpus: Path, tmp_path: Path):
    folder, changed = tmp_path / "ck", tmp_path / "topics.txt"
    changed.write_bytes(corpus.read_bytes())
    with pytest.raises(Stop):
        w2v.train(str(changed), cluster="local:2", checkpoint=str(folder), checkpoint_every=ALWAYS,
                  on_progress=stop_after_a_sweep, **BLOCKS)  # fmt: skip
    changed.write_bytes(corpus.read_bytes().replace(b"t1w1 t", b"t1w2 t", 1))
    with pytest.raises(CorpusError, match=r"the corpus is not the one checkpointed: its part .* has changed"):
        w2v.train(str(changed), cluster="local:2", resume=str(folder))
    changed.write_bytes(corpus.read_bytes())  # a checkpoint at an epoch's end, resumed on other workers:
    w2v.train(str(changed), cluster="local:2", checkpoint=str(tmp_path / "at-1"), on_epoch_end=lambda end: True,
              **BLOCKS)  # fmt: skip
    changed.write_bytes(corpus.read_bytes() + b"t1w1 t1w2\n")  # the corpus cut anew: its words are checked
    with pytest.raises(CorpusError, match="it holds 36,002 words of the vocabulary, the checkpoint's 36,000"):
        w2v.train(str(changed), cluster="local:1", resume=str(tmp_path / "at-1"))
