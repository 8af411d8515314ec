"""A/B of training-kernel variants on interleaved segments of one corpus.

    python scripts/ab_kernels.py variant.py [other.py ...] --model skipgram --hs --threads 2

Each variant is a copy of ``w2v/kernels.py`` with a change in it (any file that
defines ``make_train_batch(dim)``); the baseline is the installed ``w2v.kernels``.
The corpus is encoded once and a model trained on it for ``--warm-epochs`` with
the baseline, so that the weights are those of a run under way. Every variant
then gets its own copy of those weights, and all take turns on the same
segments of ``--segment-batches`` batches spread over the corpus (the same
seeds and learning rates), in alternating order. This machine's speed drifts
and is bimodal (about 1.5x between modes), so a single timing says little: the
speed of each variant over the baseline is reported per segment, where both met
the same mode, as the median and quartiles of those ratios.

Compilation is excluded (each kernel trains two batches before the timings).
Not a test and not run in CI; docs/performance.md says what it measured.
"""

import argparse
import dataclasses
import importlib.util
import re
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus import IdStream
from w2v.kernels import train_batch_kernel
from w2v.train import Model, Progress, count_and_encode, run_epochs, stream_offsets

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(importlib.util.find_spec("w2v.kernels").origin).resolve()  # type: ignore[union-attr,arg-type]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", type=Path, help="kernel files, each defining make_train_batch(dim)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument("--model", choices=["skipgram", "cbow"], default="skipgram")
    parser.add_argument("--hs", action="store_true", help="hierarchical softmax (alone unless --negative)")
    parser.add_argument("--negative", type=int, default=None, help="noise words (default 5, or 0 with --hs)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--warm-epochs", type=int, default=1, help="baseline epochs before the segments")
    parser.add_argument("--segments", type=int, default=16)
    parser.add_argument("--segment-batches", type=int, default=30, help="batches (about 10,000 words each)")
    args = parser.parse_args(argv)
    for variant in args.variants:
        if not variant.is_file():
            parser.error(f"no such kernel file: {variant}")
        if variant.resolve() == BASELINE:  # loaded under a second module name, it would spoil Numba's cache
            parser.error(f"{variant} is the baseline itself: pass a copy of it")
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")
    if min(args.segments, args.segment_batches, args.threads) < 1 or args.warm_epochs < 0:
        parser.error("--segments, --segment-batches and --threads must be at least 1, --warm-epochs at least 0")
    return args


def load_factory(path: Path) -> Callable:
    """``make_train_batch`` of the kernel file ``path``, imported as a module of its own,
    named after the file's stem and a hash of its full path: the same name in every
    run, wherever the file stands on the command line (Numba's cache keeps the name
    of the module that compiled it, and fails to load under another)."""
    stem = re.sub(r"\W", "_", path.stem)
    name = f"ab_variant_{stem}_{zlib.crc32(str(path.resolve()).encode()):08x}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Numba's cache locates the module by name
    spec.loader.exec_module(module)
    return module.make_train_batch


def sub_stream(stream: IdStream, first: int, count: int) -> IdStream:
    """Batches ``first`` to ``first + count`` of ``stream`` as a stream of their own."""
    return IdStream(
        stream.path, stream.batch_starts[first : first + count + 1], stream.batch_words[first : first + count]
    )


def train_segment(model: Model, stream: IdStream, config: TrainConfig, kernel: Callable) -> float:
    """Seconds to train ``config.epochs`` epochs of ``stream`` with ``kernel``."""
    progress = Progress(config.threads or 1, config.epochs, len(stream), stream_offsets(stream))
    start = time.perf_counter()
    run_epochs(model, stream, config, progress, kernel=kernel)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    negative = args.negative if args.negative is not None else (0 if args.hs else 5)
    config = TrainConfig(
        model=args.model, hs=args.hs, negative=negative, threads=args.threads, dim=args.dim,
        window=args.window, sample=args.sample, epochs=max(args.warm_epochs, 1),
    ).resolved()  # fmt: skip
    names = ["w2v.kernels", *(str(v) for v in args.variants)]
    kernels = [train_batch_kernel(args.dim)] + [load_factory(v)(args.dim) for v in args.variants]
    with tempfile.TemporaryDirectory(prefix="w2v-ab-") as workdir:
        encoded = count_and_encode(str(args.corpus), config, workdir)
        stream, vocab = encoded.stream, encoded.vocab
        base = Model.create(vocab, config)
        if args.warm_epochs:
            train_segment(base, stream, config, kernels[0])
        one_epoch = dataclasses.replace(config, epochs=1)
        warm = sub_stream(stream, 0, min(2, len(stream)))
        for kernel in kernels:  # compile (or load) each kernel outside the timings
            train_segment(Model.create(vocab, config), warm, one_epoch, kernel)
        weights = (base.syn0, base.syn1, base.syn1neg)
        models = [Model.from_weights(vocab, config, *(w.copy() for w in weights)) for _ in kernels]
        size = min(args.segment_batches, len(stream))
        firsts = np.linspace(0, len(stream) - size, args.segments).astype(np.int64)
        seconds = np.zeros((args.segments, len(kernels)))
        words = 0
        for s, first in enumerate(firsts):
            segment = sub_stream(stream, int(first), size)
            order = range(len(kernels)) if s % 2 == 0 else reversed(range(len(kernels)))
            for i in order:
                seconds[s, i] = train_segment(models[i], segment, one_epoch, kernels[i])
            words += segment.words
            segment.close()
        stream.close()
    print(f"{args.segments} segments of {size} batches, {words:,} words, {args.threads} threads")
    for i, name in enumerate(names):
        ratios = seconds[:, 0] / seconds[:, i]
        q1, median, q3 = np.percentile(ratios, [25, 50, 75])
        print(f"{name}: {words / seconds[:, i].sum() / 1e3:,.0f} kw/s; speed over w2v.kernels per segment: "
              f"median {median:.3f} (quartiles {q1:.3f}, {q3:.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
