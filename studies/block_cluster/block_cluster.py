"""Skip-gram NS trained in blocks on N virtual machines in one process: the quality of
the block-partitioned cluster's plan before any actor (studies/block_cluster/README.md).

    S=studies/block_cluster/block_cluster.py
    python $S --run --machines 1,8,32 --seeds 1,2,3            # and one process: --machines 0
    python $S --run --machines 8,32 --sweeps 2 --seeds 1
    python $S --run --machines 8,32 --no-rho --seeds 1
    python $S --render

Each run plans, makes, codes and trains pairs as the cluster would (``w2v.cluster.blocks``,
``w2v.cluster.pairs``, ``w2v.cluster.paircodec``, ``w2v.engine.chunks``); the blocks of
a sub-step run one after another, which is the cluster's arithmetic since they share no
row. Machine m's text is the m-th of N contiguous parts of the corpus (by batches); sweep
k of an epoch makes the pairs of the k-th 1/S of every machine's batches, each batch
seeded as the batch kernel seeds it. Every pair is encoded by its maker (``encode_frames``),
and its bytes counted where the owner of its block is another machine; the owner decodes
them, groups the pairs of each block by centre word (in a random order within a word),
cuts them into chunks of up to 16 and trains the chunks in a random order, with
``threads`` threads at once (Hogwild). The right partitions' hand-offs are counted
as they move (``|R_j| D 4`` bytes), and the input rows that change owner between epochs.

``--machines 0`` is one process (``w2v.train``). The settings are ``scripts/quality.py``'s
(the benchmark corpus less its last 2 MB, held out for the cross-entropy; 2 threads, dim
100, window 5, sample 1e-4, 5 epochs, negative 5); each run is scored by ``w2v score``
(held-out bits a word) and ``w2v eval`` (analogies, WS-353). Results go to
``block-simulation.json`` beside this script, run by run; a run there is not redone.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from w2v.cluster.blockmachine import BlockMachine, Schedule, Sent, Text
from w2v.cluster.blockrun import gather, sent_total, train_blocks
from w2v.config import TrainConfig
from w2v.corpus.idstream import encode_corpus
from w2v.errors import DivergedError
from w2v.vectorio.modelfile import TrainState, all_finite
from w2v.vectors.wordvectors import Vectors
from w2v.words import decode_word

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))  # the shared helpers: scripts/quality.py

from quality import SCORE_PAIRS, SETTINGS, paired_table, split_corpus, study_parser, train_and_score, w2v_json  # noqa: E402

RESULTS = HERE / "block-simulation.json"
LOSS = {"negative": 5}


class Corpus(NamedTuple):
    """The training text as ids: all its batches end to end."""

    tokens: np.ndarray  # (T,) int32, -1 ending sentences
    starts: np.ndarray  # (B + 1,) int64: batch b is tokens[starts[b] : starts[b + 1]]
    words: int  # in-vocabulary words an epoch
    vocab: object  # w2v.corpus.vocab.Vocab


class Spec(NamedTuple):
    """One simulated run."""

    machines: int  # N
    sweeps: int  # S
    corrected: bool  # rho on: a chunk draws k rho_j noise words
    seed: int


class Tally(NamedTuple):
    """What a run moved and trained."""

    sent: Sent  # the bytes the machines sent each other
    loss: np.ndarray  # (epochs,) nats summed over the pairs trained
    pairs: np.ndarray  # (epochs,) pairs trained
    chunks: int  # chunks trained


def load_corpus(path: Path, config: TrainConfig, work: Path) -> Corpus:
    """``path`` encoded as ``w2v train`` encodes it, its batches read end to end."""
    encoded = encode_corpus([str(path)], config, str(work))
    stream = encoded.stream
    batches = [stream.batch(b).copy() for b in range(len(stream))]
    starts = np.concatenate([[0], np.cumsum([len(b) for b in batches])]).astype(np.int64)
    return Corpus(np.concatenate(batches), starts, stream.words, encoded.vocab)


def machine_text(corpus: Corpus, spec: Spec, machine: int) -> Text:
    """Machine ``machine``'s part: the m-th of N contiguous runs of the corpus' batches."""
    batches = len(corpus.starts) - 1
    first, last = batches * machine // spec.machines, batches * (machine + 1) // spec.machines
    starts = corpus.starts[first : last + 1]
    return Text(corpus.tokens[starts[0] : starts[-1]], starts - starts[0], first, batches)


def simulate(corpus: Corpus, config: TrainConfig, spec: Spec) -> tuple[tuple[np.ndarray, np.ndarray], Tally]:
    """Train ``config`` on ``corpus`` in blocks on ``spec.machines`` machines of this
    process; the weights (syn0, syn1neg) and what the run moved and trained."""
    schedule = Schedule(spec.machines, spec.sweeps, spec.corrected)
    machines = [BlockMachine(m, machine_text(corpus, spec, m), corpus.vocab, config, schedule)
                for m in range(spec.machines)]  # fmt: skip
    for machine in machines:
        machine.connect(machines)
    train_blocks(machines, config.epochs, schedule, after_sweep=lambda epoch, _: check_finite(machines, epoch))
    weights = gather(machines, len(corpus.vocab), config.dim)
    trained = [machine.trained() for machine in machines]
    tally = Tally(sent_total(machines), *(sum(column) for column in zip(*trained, strict=True)))
    for machine in machines:
        machine.close()
    return weights, tally


def check_finite(machines: list[BlockMachine], epoch: int) -> None:
    """DivergedError where a machine's rows are no longer finite."""
    for machine in machines:
        _, inputs, rights = machine.held()
        if not (all_finite(inputs) and all(all_finite(rows) for rows in rights.values())):
            raise DivergedError(f"training diverged in epoch {epoch + 1}: non-finite weights")


def scored(corpus: Corpus, config: TrainConfig, weights: tuple, tally: Tally, paths: dict, work: Path) -> dict:
    """The run's weights (syn0, syn1neg) saved and scored: held-out bits a word, analogies, WS-353."""
    batches = len(corpus.starts) - 1
    syn0, syn1neg = weights
    state = TrainState(
        config=config, vocab=corpus.vocab, syn0=syn0, syn1=np.zeros((0, config.dim), np.float32), syn1neg=syn1neg,
        epoch_loss=tally.loss, epoch_examples=tally.pairs, jobs_done=batches * config.epochs, batches=batches,
        stream_words=corpus.words,
    )  # fmt: skip
    model_file, vectors_file = work / "model.npz", work / "vectors.bin"
    state.save(str(model_file))
    Vectors([decode_word(word) for word in corpus.vocab.words], syn0).save(vectors_file)
    score = w2v_json("score", str(model_file), str(paths["heldout"]), "--max-pairs", str(SCORE_PAIRS))
    evaluation = w2v_json("eval", "-v", str(vectors_file))
    return {"analogy": evaluation["analogies"][0]["accuracy"], "ws353": evaluation["similarity"][0]["spearman"],
            "score": score}  # fmt: skip


def simulated_run(spec: Spec, paths: dict, work: Path) -> dict:
    """One simulated run, scored, with what it moved."""
    config = TrainConfig(**{**SETTINGS, **LOSS, "model": "skipgram", "seed": spec.seed}).resolved()
    corpus = load_corpus(paths["train"], config, work)
    started = time.perf_counter()
    weights, tally = simulate(corpus, config, spec)
    seconds = time.perf_counter() - started
    words, sent = corpus.words * config.epochs, tally.sent
    return {
        **scored(corpus, config, weights, tally, paths, work),
        "seconds": seconds,
        "words": words,
        "pairs_per_word": float(tally.pairs.sum() / words),
        "bytes_per_pair_sent": sent.pair_bytes / max(sent.pairs, 1),
        "pair_bytes_per_word": sent.pair_bytes / words,
        "handoff_bytes_per_sweep": sent.right_bytes / (config.epochs * spec.sweeps),
        "reassign_bytes_per_epoch": sent.input_bytes / max(config.epochs - 1, 1),
        "pairs_per_chunk": float(tally.pairs.sum() / max(tally.chunks, 1)),
        "epoch_loss": (tally.loss / np.maximum(tally.pairs, 1)).tolist(),
        "vocab": len(corpus.vocab),
    }


def group_name(spec: Spec) -> str:
    """The run's group in the table: one process, or N, S and rho."""
    if spec.machines == 0:
        return "one process"
    return f"N={spec.machines} S={spec.sweeps} rho {'on' if spec.corrected else 'off'}"


def run_grid(args: argparse.Namespace) -> None:
    """Every run asked for not yet in the results file."""
    args.work.mkdir(parents=True, exist_ok=True)
    paths = split_corpus(args.corpus, args.work)
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for seed in args.seeds:
        for machines in args.machines:
            spec = Spec(machines, args.sweeps, not args.no_rho, seed)
            key = f"skip-gram NS/{group_name(spec)}/seed {seed}"
            if key in results:
                continue
            with tempfile.TemporaryDirectory(dir=args.work) as work:
                if machines == 0:
                    record = train_and_score(paths["train"], paths["heldout"], "skipgram", {**LOSS, "seed": seed},
                                             None, Path(work))  # fmt: skip
                else:
                    record = simulated_run(spec, paths, Path(work))
            results[key] = record
            args.results.write_text(json.dumps(results, indent=1))
            print(key, json.dumps({k: v for k, v in record.items() if k != "score"}), flush=True)


TRAFFIC = ("pairs_per_word", "bytes_per_pair_sent", "pair_bytes_per_word", "handoff_bytes_per_sweep",
           "reassign_bytes_per_epoch", "pairs_per_chunk", "seconds")  # fmt: skip


def run_order(name: str) -> tuple:
    """One process first, then by N, S and rho on before off."""
    if name == "one process":
        return (0,)
    machines, sweeps, _, rho = name.split()
    return (1, int(machines[2:]), int(sweeps[2:]), rho != "on")


def render(results: dict) -> None:
    """The quality table (means ± sd over seeds, differences from one process paired
    by seed) and the traffic table (means over seeds)."""
    names = list(dict.fromkeys(key.split("/")[1] for key in results))
    groups = {name: name for name in sorted(names, key=run_order)}
    print(paired_table(results, "run", groups))
    print()
    print("| run | " + " | ".join(TRAFFIC) + " |")
    print("|" + "---|" * (len(TRAFFIC) + 1))
    for name in groups:
        runs = [record for key, record in results.items() if key.split("/")[1] == name and "pairs_per_word" in record]
        if runs:
            cells = [f"{np.mean([run[column] for run in runs]):,.2f}" for column in TRAFFIC]
            print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = study_parser(__doc__.splitlines()[0], RESULTS)
    parser.add_argument("--run", action="store_true", help="run what is not in the results yet")
    parser.add_argument("--machines", type=lambda s: [int(n) for n in s.split(",")], default=[0, 1, 8, 32])
    parser.add_argument("--sweeps", type=int, default=1)
    parser.add_argument("--no-rho", action="store_true", help="draw k noise words a chunk, not k rho_j")
    parser.add_argument("--seeds", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 3])
    args = parser.parse_args()
    if args.run:
        run_grid(args)
    if args.render:
        render(json.loads(args.results.read_text()))


if __name__ == "__main__":
    main()
