"""Benchmark ``w2v train`` side by side with word2vec.c, gensim and fastText (and, with
``--subwords``, fastText's model against fastText and gensim's FastText).

Every system trains on one corpus with one set of settings, each as its own child process:
the wall time covers the whole command (vocabulary, training, writing the vectors), the peak
memory is the child's own (``os.wait4``), and one scorer rates every vectors file (analogy
accuracy over the 30,000 most frequent words, WordSim-353 Spearman rho). With ``--repeat``
above 1 the systems take turns (A B A B) and the report gives medians and the ratio of w2v to
each peer per pair of runs, since a shared machine's speed drifts. After each round the
machine's roofs are measured on the same threads (``scripts/roofline.py``: sgemm's GFLOP/s,
random row updates a second), and the report sets each w2v run's useful arithmetic and row
traffic (counted by its kernel, from ``w2v train --report``) against them. Writes into ``--out``
(``bench-results/`` by default): the Markdown report ``benchmarks.md``, the raw runs as
``benchmarks.json`` beside it and the plot ``img/benchmarks.png`` (``--name`` other than
``benchmarks``: those names). The report and the plot are made from the JSON alone, so
``--report-only DIR/NAME.json`` makes them again, beside the JSON, without running anything
(after a change to the report's wording, say).

    python scripts/bench.py --corpus text8 --repeat 3 --scaling --startup
    python scripts/bench.py --systems w2v,word2vec --combos sg-ns --corpus small.txt --out bench-results/small
    python scripts/bench.py --report-only bench-results/small/benchmarks.json

docs/benchmarks.md and docs/performance.md come from parts that run separately (2 cores,
the benchmark corpus, all peers installed); each report is copied there with its plot
(``cp bench-results/benchmarks.md docs/ && cp bench-results/img/benchmarks.png docs/img/``):

- the tables and thread scaling: ``--systems w2v,word2vec,gensim --repeat 3 --scaling
  --startup``, about an hour;
- large vocabularies (docs/performance.md): ``--systems w2v,word2vec,gensim --combos
  sg-ns,cbow-ns --dim 300 --epochs 1 --min-count 1 --repeat 3``, again with ``--min-count
  5``, then both with ``--combos sg-hs,cbow-hs``, 11-15 minutes each (each with an
  ``--out`` of its own);
- subword vectors (issue 48's targets: fastText's model against fastText and gensim's
  FastText, each at fastText's unsupervised defaults, writing its .vec and .bin):
  ``--systems w2v,fasttext,gensim-ft --combos sg-sub,cbow-sub --repeat 3 --name
  subword-benchmarks`` (three rounds, one seed each: quality as means over the seeds),
  copied to docs/ in the same way;
- against pWord2Vec (skip-gram NS alone; ``scripts/build_pword2vec.sh`` builds it), with the
  roofline of all four word combos: ``--systems w2v,pword2vec --combos sg-ns,cbow-ns,sg-hs,cbow-hs
  --repeat 3 --pword2vec PATH --name pword2vec-benchmarks``, about 10 minutes;
- kernel changes: ``scripts/ab_kernels.py`` (a few minutes a combination).

Peers are optional (``pip install -e .[bench]``); one that is not installed is skipped and
named in the report.
"""

import argparse
import datetime
import importlib.util
import json
import os
import sys
from pathlib import Path

from . import ROOT
from .commands import shown
from .corpus import count_tokens, gensim_copy
from .machine import machine_info
from .records import Context, Settings, results_of
from .report import report_files, write_report
from .runs import measure_startup, record, run_all, warm_up
from .scoring import pick_scorer
from .systems import COMBOS, DEFAULT_COMBOS, SYSTEMS, can_run, find_systems, systems_help, w2v_model_flag


def add_settings(parser: argparse.ArgumentParser) -> None:
    """The options every study of the systems shares: corpus, systems, combos, training settings."""
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help="comma-separated; default: all installed (each runs the combos it can: " + systems_help() + ")",
    )
    parser.add_argument(
        "--combos",
        default=",".join(DEFAULT_COMBOS),
        help=f"comma-separated model-loss pairs, of {', '.join(COMBOS)} (the -sub ones: fastText's model and "
        "unsupervised defaults)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5, help="noise words for the -ns combos")
    parser.add_argument("--sample", type=float, default=1e-4)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--minn", type=int, default=3, help="-sub combos: the shortest character n-gram")
    parser.add_argument("--maxn", type=int, default=6, help="-sub combos: the longest character n-gram")
    parser.add_argument("--bucket", type=int, default=2_000_000, help="-sub combos: rows the n-grams hash into")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "w2v-bench")
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT / "w2v/data", help="holds questions-words.txt and wordsim353.tsv"
    )
    parser.add_argument(
        "--pword2vec",
        default=os.environ.get("PWORD2VEC"),
        help="pWord2Vec's binary (scripts/build_pword2vec.sh builds it); default: $PWORD2VEC, else pWord2Vec on PATH",
    )


def check_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Split the comma-separated lists of ``args`` in place, leaving out the systems that run
    none of the combos (``can_run``); a parser error for unknown names or a missing corpus."""
    args.systems = [s for s in args.systems.split(",") if s]
    args.combos = [c for c in args.combos.split(",") if c]
    bad = [s for s in args.systems if s not in SYSTEMS] + [c for c in args.combos if c not in COMBOS]
    if bad:
        parser.error(f"unknown system or combo: {', '.join(bad)}")
    args.systems = [s for s in args.systems if any(can_run(s, c) for c in args.combos)]
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: a run's options, or ``--report-only`` alone."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_settings(parser)
    parser.add_argument("--repeat", type=int, default=1, help="rounds; systems alternate within each")
    parser.add_argument("--scaling", action="store_true", help="also time w2v with 1 thread (not scored)")
    parser.add_argument("--startup", action="store_true", help="also time w2v train on a tiny corpus, warm")
    parser.add_argument(
        "--out", type=Path, default=Path("bench-results"), help="the folder of the report, its JSON and its plot"
    )
    parser.add_argument("--name", default="benchmarks", help="the report's name: NAME.md, NAME.json, img/NAME.png")
    parser.add_argument(
        "--report-only",
        type=Path,
        metavar="NAME.json",
        help="run nothing: make the report NAME.md and plot img/NAME.png of a run's NAME.json again, beside it",
    )
    args = parser.parse_args(argv)
    if args.report_only:
        defaults = vars(parser.parse_args([]))
        given = [name for name, value in vars(args).items() if name != "report_only" and value != defaults[name]]
        if given:
            parser.error(f"--report-only runs nothing: drop --{given[0].replace('_', '-')}")
        return args
    check_settings(parser, args)
    if args.scaling and args.threads < 2:
        parser.error("--scaling compares 1 thread with --threads: give --threads 2 or more")
    return args


def make_context(args: argparse.Namespace) -> Context:
    """Find the systems (a line on stderr per missing one), the scorer and w2v's full-model
    option, count the corpus, make gensim's copy."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    binaries, notes = find_systems(args.systems, args.pword2vec)
    for note in notes:
        print(f"bench: {note}", file=sys.stderr)
    settings = Settings(args.threads, args.epochs, args.dim, args.window, args.negative, args.sample, args.min_count,
                        args.minn, args.maxn, args.bucket)  # fmt: skip
    scorer = pick_scorer()
    if scorer == "gensim" and not importlib.util.find_spec("gensim"):
        sys.exit("bench: no scorer: neither `w2v eval --json` nor gensim is available")
    gensim_corpus = gensim_copy(args.corpus, args.workdir) if {"gensim", "gensim-ft"} & set(binaries) else None
    corpus = args.corpus.resolve()
    subwords = any(COMBOS[c].subwords for c in args.combos)
    return Context(
        corpus,
        gensim_corpus,
        count_tokens(corpus),
        settings,
        args.workdir,
        args.eval_dir.resolve(),
        binaries,
        scorer,
        notes,
        w2v_model_flag(binaries["w2v"]) if subwords and "w2v" in binaries else "--save-model",
    )


def run_benchmark(args: argparse.Namespace, words: list[str]) -> int:
    """Run the benchmark of ``args`` (its command line's ``words``); write its JSON, then the
    report and plot from that JSON; exit status 1 if any run failed."""
    ctx = make_context(args)
    command = shown(["python", "scripts/bench.py", *words])
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    startup = measure_startup(ctx, max(2, args.repeat)) if args.startup else None
    warm_up(ctx, args.combos)
    runs = run_all(ctx, args.combos, args.repeat, args.scaling)
    raw = record(ctx, runs, command=command, date=date, machine=machine_info(), startup=startup)
    args.out.mkdir(parents=True, exist_ok=True)
    report, raw_runs, _ = report_files(args.name)
    text = json.dumps(raw, indent=1) + "\n"
    (args.out / raw_runs).write_text(text)
    write_report(results_of(json.loads(text)), args.out, args.name)
    print(f"bench: wrote {args.out / report}, {args.out / raw_runs}", file=sys.stderr)
    return 1 if any(r.error for r in runs) else 0


def report_only(path: Path) -> int:
    """Make the report and plot of the run recorded in ``path`` (a NAME.json) again, beside
    it; one line on stderr and exit status 1 where ``path`` cannot be read or is no such JSON."""
    if path.suffix != ".json":
        sys.exit(f"bench: --report-only takes the NAME.json a run wrote, not {path}")
    try:
        raw = json.loads(path.read_text())
    except OSError as err:
        sys.exit(f"bench: cannot read {path}: {err.strerror}")
    except ValueError as err:  # not JSON, or not UTF-8
        sys.exit(f"bench: {path} is not JSON: {err}")
    try:
        written = write_report(results_of(raw), path.parent, path.stem)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        sys.exit(f"bench: {path} is not a benchmark's JSON ({type(err).__name__}: {err})")
    except OSError as err:
        sys.exit(f"bench: cannot write the report of {path}: {err}")
    print(f"bench: wrote {written}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, or (``--report-only``) make a run's report again from its JSON."""
    args = parse_args(argv)
    if args.report_only:
        return report_only(args.report_only)
    return run_benchmark(args, sys.argv[1:] if argv is None else argv)
