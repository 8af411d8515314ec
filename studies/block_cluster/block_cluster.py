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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from w2v.cluster.blocks import Plan, block_alphas, block_right, left_partitions, right_noise
from w2v.cluster.pairs import Frames, block_chunks, machine_frames, window_pairs
from w2v.config import TrainConfig
from w2v.corpus.idstream import encode_corpus
from w2v.engine.chunks import chunk_settings, train_chunks
from w2v.engine.weights import Model
from w2v.engine.workers import batch_seed
from w2v.vectorio.modelfile import TrainState
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


class Tally:
    """What a run moved and trained."""

    def __init__(self, epochs: int):
        self.pair_bytes = 0  # encoded pairs sent to another machine
        self.pairs_sent = 0
        self.handoff_bytes = 0  # right partitions moved between machines
        self.reassign_bytes = 0  # input rows moved to a new owner between epochs
        self.chunks = 0
        self.train_seconds = 0.0  # in the chunk kernel (wall clock, all threads at once)
        self.loss = np.zeros(epochs)
        self.pairs = np.zeros(epochs, np.int64)


def load_corpus(path: Path, config: TrainConfig, work: Path) -> Corpus:
    """``path`` encoded as ``w2v train`` encodes it, its batches read end to end."""
    encoded = encode_corpus([str(path)], config, str(work))
    stream = encoded.stream
    batches = [stream.batch(b).copy() for b in range(len(stream))]
    starts = np.concatenate([[0], np.cumsum([len(b) for b in batches])]).astype(np.int64)
    return Corpus(np.concatenate(batches), starts, stream.words, encoded.vocab)


def machine_batches(corpus: Corpus, spec: Spec, machine: int, sweep: int) -> np.ndarray:
    """The batches machine ``machine`` makes pairs of in sweep ``sweep``: the sweep's
    1/S of its part, the machine's the m-th of N contiguous parts."""
    batches = len(corpus.starts) - 1
    part = np.arange(batches * machine // spec.machines, batches * (machine + 1) // spec.machines)
    return part[len(part) * sweep // spec.sweeps : len(part) * (sweep + 1) // spec.sweeps]


def machine_pairs(corpus: Corpus, model: Model, spec: Spec, epoch: int, batches: np.ndarray):
    """The pairs of ``batches`` (contiguous), each batch seeded by its index in the run."""
    if not len(batches):
        return np.empty(0, np.int32), np.empty(0, np.int32)
    first, last = batches[0], batches[-1] + 1
    starts = corpus.starts[first : last + 1] - corpus.starts[first]
    seeds = np.array([batch_seed(spec.seed, epoch * (len(corpus.starts) - 1) + int(b)) for b in batches], np.uint64)
    tokens = corpus.tokens[corpus.starts[first] : corpus.starts[last]]
    return window_pairs(tokens, starts, seeds, model.keep_prob, SETTINGS["window"])


class Sweep(NamedTuple):
    """What a sweep trains with: the model, its settings and plan, where it is in the run."""

    model: Model
    config: TrainConfig
    plan: Plan
    noises: list  # each right partition's ChunkNoise
    spec: Spec
    position: tuple[int, int]  # (epoch, sweep)


def train_block(sweep: Sweep, frames: list[Frames], substep: int, machine: int, pool: ThreadPoolExecutor, tally: Tally):
    """Machine ``machine``'s block of sub-step ``substep``: its chunks, made from every
    machine's ``frames`` of it (``block_chunks``), split between the threads."""
    plan, config, spec, model = sweep.plan, sweep.config, sweep.spec, sweep.model
    part = block_right(machine, substep, plan.machines)
    block = machine * plan.parts + part
    rng = np.random.default_rng([spec.seed, *sweep.position, block])
    chunks, order = block_chunks([sent.frame(block) for sent in frames], plan, block, rng)
    steps = (config.epochs, spec.sweeps, plan.parts)
    alphas = block_alphas((config.alpha, config.min_alpha), (*sweep.position, substep), steps)
    settings = chunk_settings(config.window, int(np.ceil(max(n.draws for n in sweep.noises))), config.threads)
    job = ((sweep.position[0] * spec.sweeps + sweep.position[1]) * plan.blocks + block) * config.threads
    seeds = [batch_seed(spec.seed, (1 << 40) + job + t) for t in range(config.threads)]
    arguments = (model.syn0, model.tables, sweep.noises[part], settings, alphas)
    pieces = zip(np.array_split(order, config.threads), seeds, strict=True)
    started = time.perf_counter()
    runs = list(pool.map(lambda piece: train_chunks(chunks, piece[0], *arguments, piece[1]), pieces))
    tally.train_seconds += time.perf_counter() - started
    for loss, pairs in runs:
        tally.loss[sweep.position[0]] += loss
        tally.pairs[sweep.position[0]] += pairs
    tally.chunks += len(order)


def train_sweep(sweep: Sweep, corpus: Corpus, holders: np.ndarray, pool: ThreadPoolExecutor, tally: Tally) -> None:
    """Make, send and train one sweep's pairs, sub-step by sub-step, counting the pairs'
    bytes sent to other machines and the right partitions' hand-offs (``holders``:
    the machine holding each, -1 none yet)."""
    plan, spec = sweep.plan, sweep.spec
    frames = []
    for machine in range(plan.machines):
        batches = machine_batches(corpus, spec, machine, sweep.position[1])
        sent = machine_frames(*machine_pairs(corpus, sweep.model, spec, sweep.position[0], batches), plan)
        elsewhere = np.arange(plan.blocks) // plan.parts != machine
        tally.pair_bytes += int(np.diff(sent.at)[elsewhere].sum())
        tally.pairs_sent += int(sent.counts[elsewhere].sum())
        frames.append(sent)
    row_bytes = sweep.model.syn0.shape[1] * 4
    for substep in range(plan.parts):
        for machine in range(plan.machines):
            part = block_right(machine, substep, plan.machines)
            if holders[part] not in (-1, machine):
                tally.handoff_bytes += len(sweep.noises[part].members) * row_bytes
            holders[part] = machine
            train_block(sweep, frames, substep, machine, pool, tally)


def simulate(corpus: Corpus, config: TrainConfig, spec: Spec) -> tuple[Model, Tally]:
    """Train ``config`` on ``corpus`` in blocks as ``spec`` says; the model and what it moved."""
    model = Model.build(corpus.vocab, config)
    kept = corpus.vocab.counts * model.keep_prob.astype(np.float64)
    noise = corpus.vocab.noise_distribution(config.ns_exponent)
    noises = right_noise(noise, kept / kept.sum(), 2 * spec.machines, config.negative, spec.corrected)
    tally, plan = Tally(config.epochs), None
    holders = np.full(2 * spec.machines, -1)
    with ThreadPoolExecutor(config.threads) as pool:
        for epoch in range(config.epochs):
            placed = left_partitions(kept, spec.machines, np.random.default_rng([spec.seed, epoch]))
            if plan is not None:
                tally.reassign_bytes += int((placed.owner != plan.owner).sum()) * model.syn0.shape[1] * 4
            plan = placed
            for sweep in range(spec.sweeps):
                train_sweep(Sweep(model, config, plan, noises, spec, (epoch, sweep)), corpus, holders, pool, tally)
            model.check_diverged(epoch + 1, config.alpha)
    return model, tally


def scored(corpus: Corpus, config: TrainConfig, model: Model, tally: Tally, paths: dict, work: Path) -> dict:
    """The run's model saved and scored: held-out bits a word, analogies, WS-353."""
    batches = len(corpus.starts) - 1
    state = TrainState(
        config=config, vocab=corpus.vocab, syn0=model.syn0, syn1=model.tables.syn1, syn1neg=model.tables.syn1neg,
        epoch_loss=tally.loss, epoch_examples=tally.pairs, jobs_done=batches * config.epochs, batches=batches,
        stream_words=corpus.words,
    )  # fmt: skip
    model_file, vectors_file = work / "model.npz", work / "vectors.bin"
    state.save(str(model_file))
    Vectors([decode_word(word) for word in corpus.vocab.words], model.syn0).save(vectors_file)
    score = w2v_json("score", str(model_file), str(paths["heldout"]), "--max-pairs", str(SCORE_PAIRS))
    evaluation = w2v_json("eval", "-v", str(vectors_file))
    return {"analogy": evaluation["analogies"][0]["accuracy"], "ws353": evaluation["similarity"][0]["spearman"],
            "score": score}  # fmt: skip


def simulated_run(spec: Spec, paths: dict, work: Path) -> dict:
    """One simulated run, scored, with what it moved."""
    config = TrainConfig(**{**SETTINGS, **LOSS, "model": "skipgram", "seed": spec.seed}).resolved()
    corpus = load_corpus(paths["train"], config, work)
    started = time.perf_counter()
    model, tally = simulate(corpus, config, spec)
    seconds = time.perf_counter() - started
    words = corpus.words * config.epochs
    return {
        **scored(corpus, config, model, tally, paths, work),
        "seconds": seconds,
        "words": words,
        "pairs_per_word": float(tally.pairs.sum() / words),
        "bytes_per_pair_sent": tally.pair_bytes / max(tally.pairs_sent, 1),
        "pair_bytes_per_word": tally.pair_bytes / words,
        "handoff_bytes_per_sweep": tally.handoff_bytes / (config.epochs * spec.sweeps),
        "reassign_bytes_per_epoch": tally.reassign_bytes / max(config.epochs - 1, 1),
        "pairs_per_chunk": float(tally.pairs.sum() / max(tally.chunks, 1)),
        "train_seconds": tally.train_seconds,
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
