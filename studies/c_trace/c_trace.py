"""Do word2vec.c and w2v compute the same numbers? Train both on one tiny corpus,
one thread, from the same start, and compare their weights centre word by centre
word.

    python studies/c_trace/c_trace.py                      # CBOW, hierarchical softmax
    python studies/c_trace/c_trace.py --model skipgram --every 10
    python studies/c_trace/c_trace.py --negative 5 --no-hs # CBOW, negative sampling
    python studies/c_trace/c_trace.py --w2v-sigmoid        # one alignment left out

word2vec.c is built from the ``word2vec`` package's source with a trace
(``build_word2vec_trace.py``): it writes its weights before every K-th centre
word, its draws, its vocabulary, tree, sigmoid table and noise table. w2v's
kernel (``w2v.engine.kernels.train_batch``, the one every run calls) then
trains C's vocabulary ids from C's initial ``syn0`` with ``Settings.arithmetic``
set (``w2v.engine.c_arithmetic``): C's draws, its sigmoid table, its float order
and its pair order, and records its weights at the same centre words.
``compare.py`` finds the first value that differs beyond rounding. Exit status 0
when the two agree to rounding throughout, 1 where they part.
"""

import argparse
import functools
import gzip
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the study's own modules

from build_word2vec_trace import BuildError, build  # noqa: E402
from compare import (  # noqa: E402
    TOLERANCE,
    Divergence,
    Dumps,
    first_divergence,
    first_draw_difference,
    largest_difference,
    read_c_dumps,
    read_c_windows,
)

from w2v.corpus.vocab import Vocab, huffman_codes  # noqa: E402
from w2v.engine.c_arithmetic import CArithmetic, CTrace, sigmoid_table  # noqa: E402
from w2v.engine.kernels import CHUNK, NS, Settings, train_batch  # noqa: E402
from w2v.engine.weights import Tables  # noqa: E402
from w2v.losses import NO_WORD_LOSS  # noqa: E402

SAMPLE_TEXT = HERE.parents[1] / "data" / "sample.txt.gz"
LINE_WORDS = (30, 7, 52, 1, 18, 0, 41, 12, 25, 3, 60, 9)  # the corpus's line lengths, in turn: 0 a blank line
ALPHA_WORDS = 10_000  # word2vec.c sets its learning rate anew after this many words: the corpus stays below
SAME_TABLES = "w2v's Huffman paths, sigmoid table and keep probabilities for C's counts are word2vec.c's, bit for bit"


@dataclass
class Options:
    """A trace's settings: word2vec.c's options, and which of C's ways w2v takes."""

    model: str = "cbow"  # or "skipgram"
    hs: bool = True
    negative: int = 0
    dim: int = 16
    window: int = 5
    sample: float = 1e-3
    min_count: int = 3
    epochs: int = 1
    every: int = 1  # K: the weights are compared before every K-th centre word
    words: int = 1_200  # the corpus's words (from data/sample.txt.gz)
    long_line: int = 0  # and a last line of this many more words (C cuts sentences at 1,000)
    c_sigmoid: bool = True  # w2v reads C's sigmoid table (else it computes the sigmoid)
    c_order: bool = True  # w2v sums and rounds one input's arithmetic in C's order
    c_pairs: bool = True  # w2v takes skip-gram's context words one at a time, as C (else its windows at once)

    @property
    def alpha(self) -> float:
        """word2vec.c's default learning rate for the model."""
        return 0.05 if self.model == "cbow" else 0.025

    def c_arguments(self) -> list[str]:
        """word2vec.c's options for these settings (one thread)."""
        values = {
            "-size": self.dim,
            "-window": self.window,
            "-sample": self.sample,
            "-hs": int(self.hs),
            "-negative": self.negative,
            "-cbow": int(self.model == "cbow"),
            "-threads": 1,
            "-iter": self.epochs,
            "-min-count": self.min_count,
            "-alpha": self.alpha,
            "-binary": 1,
            "-debug": 0,
            "-trace-every": self.every,
        }
        return [str(item) for pair in values.items() for item in pair]

    def variables(self) -> tuple[str, ...]:
        """The weights this model trains, in word2vec.c's dump order."""
        return ("syn0",) + (("syn1",) if self.hs else ()) + (("syn1neg",) if self.negative else ())


@dataclass
class CTables:
    """What the patched word2vec.c wrote before training: its vocabulary (``</s>``
    first), Huffman paths, sigmoid table, subsampling thresholds and noise table."""

    words: list[str]
    counts: np.ndarray  # (V,) int64
    codes: list[list[int]]  # each word's code bits, from the root
    points: list[list[int]]  # and the nodes deciding them
    sigmoid: np.ndarray  # (1000,) float32
    keep: np.ndarray  # (V,) float32: ``ran``, or ones without subsampling
    noise_starts: np.ndarray  # (V,) int64, or zeros without negative sampling


def trace_corpus(words: int, long_line: int) -> str:
    """The first ``words`` + ``long_line`` words of data/sample.txt.gz as lines of
    ``LINE_WORDS`` words in turn, the last ``long_line`` of them one line; each line
    ends with a newline (word2vec.c drops a last line without one)."""
    with gzip.open(SAMPLE_TEXT, "rt", encoding="ascii") as stream:
        tokens = stream.read(12 * (words + long_line) + 100).split()[: words + long_line]
    lines, at, turn = [], 0, 0
    while at < words:
        size = min(LINE_WORDS[turn % len(LINE_WORDS)], words - at)
        lines.append(" ".join(tokens[at : at + size]))
        at, turn = at + size, turn + 1
    if long_line:
        lines.append(" ".join(tokens[words:]))
    return "\n".join(lines) + "\n"


def read_c_tables(folder: Path, options: Options) -> CTables:
    """The tables the patched word2vec.c wrote into ``folder``."""
    pairs = [line.rsplit(" ", 1) for line in (folder / "vocab.txt").read_text().splitlines()]
    words, counts = [w for w, _ in pairs], np.asarray([int(c) for _, c in pairs], dtype=np.int64)
    codes, points = [], []
    for line in (folder / "tree.txt").read_text().splitlines():
        length, *fields = (int(v) for v in line.split())
        codes.append(fields[:length])
        points.append(fields[length:])
    sigmoid = np.fromfile(folder / "exp_table.f32", dtype="<f4")
    keep = np.fromfile(folder / "keep.f32", dtype="<f4") if options.sample > 0 else np.ones(len(words), np.float32)
    noise = (
        np.fromfile(folder / "noise_starts.i64", dtype="<i8") if options.negative else np.zeros(len(words), np.int64)
    )
    return CTables(words, counts, codes, points, sigmoid, keep, noise)


def run_c(program: Path, folder: Path, options: Options) -> None:
    """Run the patched word2vec.c on ``folder``/corpus.txt, tracing into ``folder``/trace
    (relative paths: word2vec.c keeps 100 bytes of a file name)."""
    (folder / "trace").mkdir(exist_ok=True)
    command = [str(program), "-train", "corpus.txt", "-output", "vectors.bin", "-trace", "trace"]
    done = subprocess.run(command + options.c_arguments(), cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"word2vec-trace failed ({done.returncode}): {done.stdout[-500:]}")


def corpus_ids(text: str, words: list[str], epochs: int) -> np.ndarray:
    """The corpus as word2vec.c reads it, in its vocabulary's ids: each line's words
    in the vocabulary, then -1 (its ``</s>``, which ends a sentence), ``epochs`` times."""
    index = {word: i for i, word in enumerate(words)}
    ids: list[int] = []
    for line in text.split("\n")[:-1]:
        ids += [index[word] for word in line.split() if word in index] + [-1]
    return np.tile(np.asarray(ids, dtype=np.int32), epochs)


def check_tables(c: CTables, tables: Tables, options: Options) -> list[str]:
    """Where w2v's own tables for C's vocabulary differ from C's: its Huffman paths
    (``w2v_tables``), its sigmoid table as C computes it (``sigmoid_table``) and
    its subsampling probabilities (``Vocab.keep_probabilities``), in words."""
    notes = []
    for word in range(len(c.words)):
        path = slice(tables.path_offsets[word], tables.path_offsets[word + 1])
        codes = (1 - tables.path_labels[path]).astype(int).tolist()
        if codes != c.codes[word] or tables.path_nodes[path].tolist() != c.points[word]:
            notes.append(f"the Huffman path of {c.words[word]!r} differs from word2vec.c's")
            break
    if not np.array_equal(sigmoid_table(), c.sigmoid):
        notes.append("c_arithmetic.sigmoid_table differs from word2vec.c's expTable")
    keep = Vocab([w.encode() for w in c.words], c.counts).keep_probabilities(options.sample)
    if options.sample > 0 and not np.array_equal(np.minimum(c.keep, 1), keep):
        differ = np.flatnonzero(np.minimum(c.keep, 1) != keep)
        notes.append(f"w2v's keep probability differs from word2vec.c's for {len(differ)} words (C's taken)")
    return notes


def w2v_tables(c: CTables, options: Options) -> Tables:
    """The output weights (zero) and tables of w2v's kernel for C's vocabulary: its
    Huffman paths from w2v's own ``huffman_codes`` of C's counts (``</s>`` first, as
    C's tree has it), its alias table for the type (unread under ``CArithmetic``)."""
    size, dim = len(c.words), options.dim
    codes, points, offsets = huffman_codes(c.counts)
    vocab = Vocab([word.encode() for word in c.words], c.counts)
    alias_prob, alias_idx = vocab.alias_table(0.75)
    return Tables(
        syn1=np.zeros((size - 1 if options.hs else 0, dim), dtype=np.float32),
        syn1neg=np.zeros((size if options.negative else 0, dim), dtype=np.float32),
        path_nodes=points.astype(np.int32),
        path_labels=(1 - codes).astype(np.float32),
        path_offsets=offsets,
        alias_prob=alias_prob,
        alias_idx=alias_idx,
        log_q=vocab.log_noise_distribution(0.75).astype(np.float32),
    )


def c_arithmetic(c: CTables, options: Options, size: tuple[int, int, int, int]) -> CArithmetic:
    """word2vec.c's arithmetic for w2v's kernel, as ``options`` align it, recording at
    most ``size`` = (centre words, vocabulary, tree nodes, syn1neg rows)."""
    steps, vocab, nodes, rows = size
    dumps, dim = steps // options.every + 1, options.dim
    trace = CTrace(
        every=options.every,
        steps=np.zeros(1, dtype=np.int64),
        centres=np.zeros((steps, 2), dtype=np.int64),
        syn0=np.zeros((dumps, vocab, dim), dtype=np.float32),
        syn1=np.zeros((dumps, nodes, dim), dtype=np.float32),
        syn1neg=np.zeros((dumps, rows, dim), dtype=np.float32),
    )
    return CArithmetic(
        sigmoid=c.sigmoid if options.c_sigmoid else np.zeros(0, dtype=np.float32),
        noise_starts=c.noise_starts,
        subsampling=options.sample > 0,
        in_order=options.c_order,
        chunk=1 if options.c_pairs else CHUNK,
        trace=trace,
    )


def w2v_run(text: str, c: CTables, tables: Tables, options: Options, initial: np.ndarray) -> tuple[Dumps, np.ndarray]:
    """Train C's vocabulary ids with w2v's kernel and ``tables`` (``w2v_tables``, moved
    in place) from C's initial ``syn0`` ``initial``, under ``c_arithmetic``, in one
    call: C's learning rate stays as it starts on a corpus this small, and its
    generator, seeded 0 as C's first thread's, runs on across epochs. Returns its
    dumps (the last after training) and its centre words and windows ((S, 2) int64)."""
    tokens = corpus_ids(text, c.words, options.epochs)
    syn0 = initial.copy()
    arithmetic = c_arithmetic(c, options, (len(tokens), len(c.words), len(tables.syn1), len(tables.syn1neg)))
    kind = NS if options.negative else NO_WORD_LOSS
    settings = Settings(options.window, options.negative, options.model == "cbow", True, options.hs, kind, False)
    train_batch(tokens, syn0, tables, c.keep, settings._replace(arithmetic=arithmetic), options.alpha, np.uint64(0))
    trace, done = arithmetic.trace, int(arithmetic.trace.steps[0])
    count = -(-done // options.every)  # the dumps before centre words 0, every, ... below done
    last = {"syn0": syn0, "syn1": tables.syn1, "syn1neg": tables.syn1neg}
    weights = {name: np.concatenate([getattr(trace, name)[:count], last[name][None]]) for name in options.variables()}
    steps = np.append(np.arange(count, dtype=np.int64) * options.every, done)
    return Dumps(steps, weights), trace.centres[:done]


@dataclass
class Result:
    """A trace's outcome."""

    options: Options
    c: CTables
    notes: list[str]  # where w2v's own tables differ from C's (``check_tables``)
    draws: str | None  # where the centre words or windows first differ (``first_draw_difference``)
    c_dumps: Dumps
    w2v_dumps: Dumps

    @functools.cached_property
    def divergence(self) -> Divergence | None:
        """``compare.first_divergence`` of the two sides' dumps."""
        return first_divergence(self.c_dumps, self.w2v_dumps)

    def row_name(self, variable: str, row: int) -> str:
        """What row ``row`` of ``variable`` stands for."""
        return f"tree node {row}" if variable == "syn1" else f"word {self.c.words[row]!r}"

    def report(self) -> list[str]:
        """The trace's outcome, in lines."""
        options, c = self.options, self.c
        loss = " and ".join(
            ["hierarchical softmax"] * options.hs + [f"{options.negative} negatives"] * bool(options.negative)
        )
        alignments = (
            ("sigmoid table", options.c_sigmoid),
            ("float order", options.c_order),
            ("pair order", options.c_pairs),
        )
        aligned = [name for name, on in alignments if on]
        steps = int(self.c_dumps.steps[-1])
        lines = [
            f"c_trace: {options.model}, {loss}, dim {options.dim}, window {options.window}, sample {options.sample}, "
            f"min-count {options.min_count}, {options.epochs} epoch(s): {int(c.counts[1:].sum()):,} tokens of "
            f"{len(c.words) - 1:,} words and {c.counts[0]:,} {c.words[0]}, {steps:,} centre words trained",
            f"w2v takes word2vec.c's draws{''.join(', ' + name for name in aligned)}",
            "tables: " + ("; ".join(self.notes) or SAME_TABLES),
            "draws: " + (self.draws or "the same centre words and windows throughout"),
        ]
        divergence = self.divergence
        dumps = f"{len(self.c_dumps.steps):,} dumps of {', '.join(options.variables())} (every {options.every})"
        if divergence is not None:
            lines.append(
                f"weights: {dumps}: " + divergence.describe(self.row_name(divergence.variable, divergence.row))
            )
        else:
            largest = largest_difference(self.c_dumps, self.w2v_dumps)
            agree = (
                "equal, bit for bit" if largest == 0 else f"agree to {largest:.1e} of a row's size (< {TOLERANCE:g})"
            )
            lines.append(f"weights: {dumps}: {agree}")
        return lines

    @property
    def agrees(self) -> bool:
        """The two sides trained the same centre words and weights, to rounding."""
        return self.draws is None and self.divergence is None


def trace(options: Options, folder: Path, program: Path | None = None) -> Result:
    """Build the patched word2vec.c into ``folder`` (unless given its ``program``),
    run both sides there and compare them."""
    program = program or build(folder / "build")
    text = trace_corpus(options.words, options.long_line)
    (folder / "corpus.txt").write_text(text)
    run_c(program, folder, options)
    c = read_c_tables(folder / "trace", options)
    if int(c.counts.sum()) > ALPHA_WORDS:
        raise ValueError(f"the corpus has {int(c.counts.sum()):,} words: word2vec.c would lower its learning rate")
    c_dumps = read_c_dumps(folder / "trace" / "dumps.bin", len(c.words), options.dim, options.variables())
    tables = w2v_tables(c, options)
    notes = check_tables(c, tables, options)
    w2v_dumps, centres = w2v_run(text, c, tables, options, c_dumps.weights["syn0"][0])
    c_centres = read_c_windows(folder / "trace" / "draws.txt", options.window)
    return Result(options, c, notes, first_draw_difference(c_centres, centres), c_dumps, w2v_dumps)


def parse_options(argv: list[str] | None = None) -> tuple[Options, argparse.Namespace]:
    """The command line's ``Options``, and the rest of its arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = Options()
    parser.add_argument("--model", choices=("cbow", "skipgram"), default=defaults.model)
    parser.add_argument("--no-hs", dest="hs", action="store_false", help="no hierarchical softmax")
    parser.add_argument("--negative", type=int, default=defaults.negative, help="noise words (default: 0)")
    for name in ("dim", "window", "min_count", "epochs", "every", "words", "long_line"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(defaults, name))
    parser.add_argument("--sample", type=float, default=defaults.sample)
    parser.add_argument("--w2v-sigmoid", dest="c_sigmoid", action="store_false", help="w2v's computed sigmoid")
    parser.add_argument("--w2v-order", dest="c_order", action="store_false", help="w2v's own float order")
    parser.add_argument("--w2v-pairs", dest="c_pairs", action="store_false", help="skip-gram's windows at once")
    parser.add_argument("--word2vec", type=Path, help="a word2vec-trace already built (build_word2vec_trace.py)")
    parser.add_argument("--keep", type=Path, help="write the runs into this folder and keep them")
    args = parser.parse_args(argv)
    names = Options.__dataclass_fields__
    return Options(**{name: getattr(args, name) for name in names}), args


def main() -> None:
    options, args = parse_options()
    with tempfile.TemporaryDirectory(prefix="c_trace") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            result = trace(options, folder, args.word2vec)
        except (BuildError, RuntimeError, ValueError) as err:
            sys.exit(f"c_trace: {err}")
        print("\n".join(result.report()))
    sys.exit(0 if result.agrees else 1)


if __name__ == "__main__":
    main()
