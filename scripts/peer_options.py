"""The subword options the peers' runners (``fasttext_runner.py``, ``gensim_runner.py``)
share, so that ``bench.py`` gives both the same command line."""

import argparse


def add_subword_options(parser: argparse.ArgumentParser, model: str) -> None:
    """``--subwords`` (``model``: what it turns on), ``--minn``, ``--maxn``, ``--bucket``
    and ``--save-model`` (a fastText ``.bin``), with fastText's defaults."""
    parser.add_argument("--subwords", action="store_true", help=f"{model}: character n-grams of --minn to --maxn")
    parser.add_argument("--minn", type=int, default=3)
    parser.add_argument("--maxn", type=int, default=6)
    parser.add_argument("--bucket", type=int, default=2_000_000)
    parser.add_argument("--save-model", help="--subwords: also write the model as a fastText .bin")


def parsed(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The command line, refused where ``--save-model`` comes without ``--subwords``."""
    args = parser.parse_args()
    if args.save_model and not args.subwords:
        parser.error("--save-model needs --subwords")
    return args
