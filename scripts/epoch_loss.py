"""What the epoch loss counts: the reported loss against the loss of the weights.

    head -c 6000000 wiki-en-100m.txt > train.txt              # 1M tokens (docs/benchmarks.md)
    tail -c +6000001 wiki-en-100m.txt | head -c 1000000 > held.txt
    python scripts/epoch_loss.py train.txt held.txt --epochs 20
    python scripts/epoch_loss.py train.txt held.txt --epochs 20 --constant   # no decay

Trains ``train.txt`` (skip-gram, negative sampling, the defaults otherwise;
``--threads`` threads) and prints, for each epoch:

- ``reported``: the epoch loss ``w2v train`` reports (nats per example): each
  example's loss as the kernel meets it, before its own update and after every
  earlier one, at the learning rate of that moment;
- ``frozen``: the loss of the weights as the epoch left them, on the same text
  (the kernel over every batch at learning rate 0, which changes no weight, with
  the same seed after every epoch: the same subsampling and noise draws);
- ``reported - frozen``: what the updates within the epoch lowered the loss of
  the examples met after them, beyond what the epoch's end keeps;
- ``held-out``: ``--heldout``'s bits per word (every prediction, 500 of them normalised).

``--constant`` keeps the learning rate at its start (``min_alpha = alpha``).
Not a test and not run in CI; docs/training.md says what it measured.
"""

import argparse

import numpy as np

import w2v
from w2v.engine import workers
from w2v.engine.heldout_sample import EVERY_PREDICTION
from w2v.train import HELDOUT_NORMALISED

FROZEN_SEED = 12345  # the seed of every frozen pass: the same examples and draws after each epoch


def frozen_loss(runner: workers.EpochRunner) -> float:
    """The mean loss per example of the runner's weights over the whole stream at
    learning rate 0, in one thread (nats)."""
    buffer = np.empty(runner.stream.longest, dtype=np.int32)
    total, examples = 0.0, 0
    for batch in range(len(runner.stream)):
        tokens = runner.stream.batch(batch, buffer)
        loss, count, _, _ = runner.train_tokens(tokens, 0.0, workers.batch_seed(FROZEN_SEED, batch))
        total, examples = total + loss, examples + count
    return total / examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("heldout")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--constant", action="store_true", help="no decay of the learning rate")
    args = parser.parse_args()
    frozen: list[float] = []
    scored = workers.EpochRunner.score_heldout

    def score_and_freeze(runner: workers.EpochRunner, scorer, epoch: int) -> None:
        scored(runner, scorer, epoch)
        frozen.append(frozen_loss(runner))

    workers.EpochRunner.score_heldout = score_and_freeze  # type: ignore[method-assign]
    settings = {"min_alpha": 0.025} if args.constant else {}
    report = w2v.train(
        args.corpus, epochs=args.epochs, threads=args.threads, heldout=args.heldout, **settings,
        heldout_pairs=EVERY_PREDICTION.predictions, heldout_normalised=HELDOUT_NORMALISED,
    ).report  # fmt: skip
    print("| epoch | reported | frozen | reported - frozen | held-out (bits) |")
    print("|---|---|---|---|---|")
    rows = zip(report.epoch_loss, frozen, report.epoch_heldout, strict=True)
    for epoch, (reported, weights, heldout) in enumerate(rows, 1):
        print(f"| {epoch} | {reported:.4f} | {weights:.4f} | {reported - weights:+.4f} | {heldout:.4f} |")


if __name__ == "__main__":
    main()
