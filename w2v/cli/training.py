"""``w2v train``: its options, their checks, and what it writes besides the vectors."""

import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import click

from w2v.cli.app import CONTEXT, Stopped, Terminated, cli
from w2v.cli.replay import apply_checkpoint, option_kind, rerun_recipe
from w2v.config import (
    COMBINE,
    DEFAULT_PRUNE_AT,
    MAX_EPOCHS,
    MAX_WINDOW,
    SETTING_ALIASES,
    TrainConfig,
    load_preset,
    preset_names,
    preset_path,
)
from w2v.corpus.phrases import learn_phrases, passes_read, phrased_lines
from w2v.corpus.sources import check_text, expand_sources, is_stream, without_outputs
from w2v.errors import ClusterLost, ConfigError, UnwritableOutput, W2VError, plural
from w2v.files import atomic_output, binary_name, check_writable, is_special
from w2v.losses import LOSSES
from w2v.progress import Steps, is_terminal, note, note_above_bar
from w2v.starts import holds_vectors_alone
from w2v.toolkit import word_classes
from w2v.train import HELDOUT_NORMALISED, HELDOUT_PAIRS
from w2v.train import train as train_vectors
from w2v.vectorio.modelfile import checkpoint_path
from w2v.vectorio.word2vec import refuse_pickle_name, write_vectors
from w2v.vectors.plots import HeldOut, picture_format, plot_loss
from w2v.words import display_word

if TYPE_CHECKING:  # types only: the command calls the library
    from w2v.engine.callbacks import EpochEnd


def apply_preset(ctx: click.Context, _param, preset: str | None) -> str | None:
    """``--config NAME`` or ``--config FILE.toml``: the preset's settings become defaults,
    so command-line flags win."""
    if preset is None:
        return None
    params = {p.name: p for p in ctx.command.params if p.name and p.name not in ("config", "corpus")}
    params.update({key: params[name] for key, name in PRESET_ALIASES.items()})
    try:
        path = preset_path(preset)
        settings = load_preset(path, set(params), PRESET_ALIASES)
        for key, value in settings.items():
            check_preset_value(path, key, value, params[key])
    except W2VError as err:
        raise click.BadParameter(str(err), param_hint="--config") from None
    defaults = {params[key].name: value for key, value in settings.items()}
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return preset


def check_preset_value(path: str, key: str, value, param: click.Parameter) -> None:
    """ConfigError unless the TOML ``value`` of setting ``key`` in the preset ``path`` has
    the type of the option ``param``: click would convert it (10.5 to an integer 10, true
    to 1, 1 to a flag turned on, 5 to a file name), but a preset says what it means."""
    wanted, fits = option_kind(param)
    if not fits(value):
        written = str(value).lower() if isinstance(value, bool) else repr(value)  # as TOML spells it
        raise ConfigError(f"setting {key} in preset {path} must be {wanted}, not {written}")


def output_format(path: str, fmt: str) -> bool:
    """True for binary: ``--format binary``, or ``auto`` and a ``.bin`` (``.bin.gz`` ...) name."""
    return fmt == "binary" or (fmt == "auto" and binary_name(path))


def refuse_pickle_output(path: str, option: str) -> None:
    """W2VError for vectors written, their format left to the name, to ``x.kv`` or
    ``x.model`` (``word2vec.refuse_pickle_name``), named by ``option`` (``-o``, ``DEST``)."""
    refuse_pickle_name(
        path,
        f"give {option} a .bin name: word2vec binary, which gensim reads with "
        "KeyedVectors.load_word2vec_format(FILE, binary=True)",
    )


def check_distinct_outputs(paths: dict[str, str | None]) -> None:
    """Usage error if two output options name the same file (one would overwrite the other)."""
    seen: dict[str, str] = {}
    for option, path in paths.items():
        if path is None or is_special(path):
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise click.UsageError(f"{seen[key]} and {option} name the same file: {path}")
        seen[key] = option


def same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: the same device and inode where both exist
    (a hard link or symbolic link included), else the same real path."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return os.path.realpath(first) == os.path.realpath(second)


def check_inputs_kept(inputs: list[tuple[str, str | None]], outputs: dict[str, str | None]) -> None:
    """Usage error if an output option names the file an input option reads (the run
    would replace its own input), naming both options; ``inputs``: (option, path)
    pairs, an option given for several paths (CORPUS) listed once for each. ``-``
    (standard input or output) and devices are no files."""
    for written, path in outputs.items():
        for read, source in inputs:
            if path in (None, "-") or source in (None, "-") or is_special(path):
                continue
            if same_file(path, source):
                raise click.UsageError(f"{written} names the file {read} reads, which it would replace: {path}")


def corpus_sources(corpus: list[str], outputs: list[str | None]) -> list[str]:
    """The command's corpus expanded (``sources.expand_sources``), without the files the
    command writes (``outputs``: files, or folders such as a checkpoint's; None and ``-``
    ignored), each left out with a note, with a warning for each file that is
    clearly not text (``sources.check_text``), and a note when standard input is read
    from a terminal."""
    written = [path for path in outputs if path and path != "-"]
    sources, skipped = without_outputs(expand_sources(corpus), written)
    for source in skipped:
        click.echo(f"w2v: note: not reading {source}: this run writes it", err=True)
    if not sources:
        raise W2VError("no corpus left to read: every file given is one this run writes")
    if "-" in sources and is_terminal(sys.stdin):
        note("reading the corpus from standard input (a newline ends a sentence; Ctrl-D ends the corpus)")
    for source in sources:
        reason = check_text(source)
        if reason:
            click.echo(f"w2v: warning: {source}: {reason}", err=True)
    return sources


def reject_unused(names: tuple[str, ...], why: str) -> None:
    """Usage error if an option of ``names`` was given on the command line although ``why`` makes it useless."""
    ctx = click.get_current_context()
    command_line = click.core.ParameterSource.COMMANDLINE
    given = [f"--{name.replace('_', '-')}" for name in names if ctx.get_parameter_source(name) == command_line]
    if given:
        raise click.UsageError(f"{', '.join(given)}: no effect {why}")


PRESET_ALIASES = {"format": "fmt", **SETTING_ALIASES}  # preset keys as users write them
GIVEN = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
DEFAULT = click.core.ParameterSource.DEFAULT


class OptionGroup:
    """A group of ``w2v train``'s options, as a frozen dataclass of their values."""

    @classmethod
    def taken(cls, options: dict):
        """The group's values, taken out of ``options`` (the command's keyword arguments)."""
        return cls(**{field.name: options.pop(field.name) for field in dataclasses.fields(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class LongRun(OptionGroup):
    """The options of long runs: checkpoints, resuming, continuing, model files, the report."""

    checkpoint: str | None
    checkpoint_every: float | None
    resume: str | None
    save_model: str | None
    save_fasttext: str | None
    report: str | None
    init_model: str | None
    update_vocab: bool

    @property
    def checkpoints(self) -> str | None:
        """Where the run checkpoints: ``--checkpoint``, else where it resumed from."""
        return self.checkpoint or self.resume


@dataclass(frozen=True)
class Extras(OptionGroup):
    """What a run does besides training: phrases joined first, classes and a plot after."""

    phrases: bool
    phrase_threshold: float
    phrase_passes: int
    classes: int
    classes_output: str
    plot: str | None

    @property
    def classes_file(self) -> str | None:
        """The classes file written: ``--classes-output`` with ``--classes K``, else None."""
        return self.classes_output if self.classes else None


@dataclass(frozen=True)
class HeldOutText(OptionGroup):
    """The held-out text scored after each epoch (``w2v.train``'s keywords of these names)."""

    heldout: str | None
    heldout_pairs: int | None
    heldout_normalised: int | None


@dataclass(frozen=True)
class TrainCommand:
    """What ``w2v train`` was given, grouped, once ``--resume`` has taken what is its."""

    corpus: list[str]
    output: str
    save_vocab: str | None
    read_vocab: str | None
    cbow_sum: bool
    long_run: LongRun
    extras: Extras
    heldout: HeldOutText
    settings: dict  # the training settings: ``w2v.train``'s keywords


@cli.command(context_settings=CONTEXT)
@click.argument("corpus", nargs=-1)
@click.option(
    "--config",
    metavar="NAME|FILE",
    callback=apply_preset,
    is_eager=True,
    expose_value=False,
    help=f"A preset shipped with w2v ({', '.join(preset_names())}: skip-gram or CBOW, negative sampling or "
    "hierarchical softmax, for text8-sized corpora) or a TOML file of any options below; flags given here win.",
)
@click.option("-o", "--output", default="vectors.bin", show_default=True, help="Vectors file to write.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "binary", "text"]),
    default="auto",
    show_default=True,
    help="auto: binary for .bin names, else text.",
)
@click.option(
    "--model",
    type=click.Choice(["skipgram", "cbow", "sg"]),
    default="skipgram",
    show_default=True,
    callback=lambda _ctx, _param, model: "skipgram" if model == "sg" else model,
    help="sg (gensim's name) is skipgram.",
)
@click.option("--dim", "--size", "dim", type=int, default=100, show_default=True, help="Vector size.")
@click.option(
    "--window",
    type=int,
    default=5,
    show_default=True,
    help=f"Maximum context window (shrunk at random per word), at most {MAX_WINDOW:,}: a sentence piece's length.",
)
@click.option("--negative", type=int, default=None, help="Noise words per example [5; 0 when --hs is given alone].")
@click.option(
    "--hs/--no-hs",
    default=False,
    show_default=True,
    help="Hierarchical softmax (alone it turns negative sampling off).",
)
@click.option(
    "--tree",
    type=click.Choice(["huffman", "balanced"]),
    default="huffman",
    show_default=True,
    help="--hs: a Huffman tree, or a balanced one with the words in frequency order.",
)
@click.option("--nce", type=click.IntRange(min=0), default=0, help="NCE with K noise words (self-normalised).")
@click.option(
    "--sampled-softmax", type=click.IntRange(min=0), default=0, help="Importance-sampled softmax with K candidates."
)
@click.option(
    "--softmax", is_flag=True, default=False, help="The full softmax over the vocabulary (small vocabularies)."
)
@click.option(
    "--self-norm", type=click.FloatRange(min=0), default=0.0, help="--softmax: add BETA * (log Z)^2 to the loss."
)
@click.option(
    "--ns-exponent",
    type=float,
    default=0.75,
    show_default=True,
    help="Noise distribution: unigram counts to this power.",
)
@click.option(
    "--sample", type=float, default=1e-3, show_default=True, help="Subsampling threshold of frequent words (0: off)."
)
@click.option("--min-count", type=int, default=5, show_default=True, help="Drop words seen fewer times.")
@click.option("--max-vocab", type=int, default=None, help="Keep only the N most frequent words.")
@click.option(
    "--prune-at",
    type=int,
    default=DEFAULT_PRUNE_AT,
    show_default=True,
    help="Distinct words held while counting; past it the rarest are pruned (word2vec.c ReduceVocab).",
)
@click.option(
    "--epochs",
    "--iter",
    "epochs",
    type=int,
    default=5,
    show_default=True,
    help=f"Passes over the corpus (at most {MAX_EPOCHS:,}).",
)
@click.option("--alpha", type=float, default=None, help="Starting learning rate [0.025 skip-gram, 0.05 CBOW].")
@click.option("--min-alpha", type=float, default=None, help="Final learning rate [alpha * 1e-4].")
@click.option(
    "--cbow-sum", is_flag=True, default=False, help="CBOW: sum the context vectors instead of averaging them."
)
@click.option(
    "--subwords",
    is_flag=True,
    default=False,
    help="fastText's model: a word's input vector is the mean of its own row and its character n-grams' "
    "rows, so that any word, even one never seen, has a vector: -o gets the words' vectors, "
    "--save-fasttext or --save-model the n-grams too.",
)
@click.option("--minn", type=int, default=3, show_default=True, help="--subwords: the shortest n-gram, in characters.")
@click.option("--maxn", type=int, default=6, show_default=True, help="--subwords: the longest n-gram (0: no n-grams).")
@click.option(
    "--bucket",
    type=int,
    default=2_000_000,
    show_default=True,
    help="--subwords: rows the n-grams are hashed into; the memory knob: bucket x dim x 4 bytes.",
)
@click.option("--threads", type=int, default=None, help="Worker threads [all cores].")
@click.option(
    "--streams",
    type=int,
    default=None,
    help="Train N evenly spaced parts of the corpus in turn, a batch of each [one per thread, word2vec.c's "
    "layout; 1: the file's order].",
)
@click.option(
    "--cluster",
    default=None,
    metavar="ADDRESS",
    help="Train on a Dask cluster: local:N (N processes here), tcp://HOST:PORT or a scheduler file. Needs w2v[dask].",
)
@click.option(
    "--sync-words",
    type=int,
    default=None,
    help="--cluster: words each worker trains between two combinings of the weights, to the end of a batch "
    "(--batch-words; with several workers, a round shorter than that is a batch of exactly its words, "
    "cutting the sentence where it ends). Default: 50,000 / (workers - 1), so that a worker misses "
    "about 50,000 words of the others' training a round; 10,000,000 for one worker, whose rounds change "
    "nothing. Longer rounds: faster on a network, lower quality.",
)
@click.option(
    "--combine",
    type=click.Choice(list(COMBINE)),
    default="auto",
    show_default=True,
    help="--cluster: add the workers' changes, average them, average those that agree, average them with "
    "block momentum, or mixed: the input vectors as adaptive, the output vectors as momentum (auto: sum "
    "for 2 workers in rounds of up to 100,000 words, momentum for 2 in longer rounds, mixed for more).",
)
@click.option(
    "--sweeps",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="--cluster, skip-gram with negative sampling: sweeps an epoch. Each machine owns some rows; in a sweep "
    "every machine's pairs meet every part of the output rows once, which travel from machine to machine. More "
    "sweeps: fresher rows between machines (1 loses 2-4 analogy points at 8-64 machines), more traffic.",
)
@click.option(
    "--rounds",
    is_flag=True,
    default=False,
    help="--cluster: train skip-gram with negative sampling in rounds of whole replicas, as every other model "
    "trains, rather than in blocks.",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Random seed; with --threads 1 runs are reproducible."
)
@click.option(
    "--batch-words",
    type=int,
    default=10_000,
    show_default=True,
    help="Words per work unit (up to the next sentence end).",
)
@click.option(
    "--save-vocab", type=click.Path(dir_okay=False), default=None, help="Write the vocabulary (word count lines)."
)
@click.option(
    "--read-vocab",
    type=click.Path(dir_okay=False),
    default=None,
    help="Use this vocabulary file instead of counting one.",
)
@click.option("--phrases", is_flag=True, default=False, help="Join phrases (w2v phrases) on the fly before training.")
@click.option(
    "--phrase-threshold", type=float, default=100.0, show_default=True, help="--phrases: word2phrase score threshold."
)
@click.option(
    "--phrase-passes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="--phrases: passes (2: longer phrases).",
)
@click.option(
    "--classes",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Also cluster the words into K classes (k-means, as w2v classes).",
)
@click.option(
    "--classes-output", default="classes.txt", show_default=True, help="--classes: file of 'word class' lines."
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also draw the loss per epoch into this picture (.png, .svg, .pdf; needs matplotlib).",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the run's figures as JSON: vocabulary, words, seconds (in all, reading, training), "
    "each epoch's loss and held-out score, output-row updates, and the settings it ran with.",
)
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder to save the training state in after each epoch and when interrupted.",
)
@click.option(
    "--checkpoint-every",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Also save a checkpoint every N minutes.",
)
@click.option(
    "--resume",
    type=click.Path(),
    default=None,
    callback=apply_checkpoint,
    is_eager=True,
    help="Continue the run checkpointed in this folder (same corpus and settings).",
)
@click.option(
    "--save-model",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also save the whole model (weights, vocabulary, settings; .npz) to continue training later.",
)
@click.option(
    "--save-fasttext",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also save the model as a fastText .bin, which fastText and gensim read (words never seen too, "
    "with --subwords); -o x.bin stays word2vec binary.",
)
@click.option(
    "--init-model",
    type=click.Path(),
    default=None,
    help="Start from a saved model (--save-model) or a fastText .bin and train it on CORPUS; or from vectors alone "
    "(any vectors file), which start the input vectors of CORPUS's words, as fastText's -pretrainedVectors.",
)
@click.option(
    "--heldout",
    type=click.Path(dir_okay=False),
    default=None,
    help="Score this corpus after each epoch: held-out bits per word (as w2v score).",
)
@click.option(
    "--heldout-pairs",
    type=click.IntRange(min=1),
    default=HELDOUT_PAIRS,
    show_default=True,
    help="--heldout: predictions scored (a uniform sample).",
)
@click.option(
    "--heldout-normalised",
    type=click.IntRange(min=1),
    default=HELDOUT_NORMALISED,
    show_default=True,
    help="--heldout: of those, how many are normalised over the vocabulary (all but --hs; as w2v score --max-normalised).",
)
@click.option(
    "--update-vocab", is_flag=True, default=False, help="--init-model: add CORPUS's new words (min-count applies)."
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    default=False,
    help="No progress bar, settings line or summary (--resume still names its outputs).",
)
def train(corpus, output, fmt, quiet, cbow_sum, save_vocab, read_vocab, **settings):
    """Train word vectors on CORPUS (files, folders, URLs, or - for stdin).

    Files may be compressed (.gz .bz2 .xz .zst). Words are split on whitespace,
    a newline ends a sentence.
    """
    ctx = click.get_current_context()
    long_run, extras, heldout = LongRun.taken(settings), Extras.taken(settings), HeldOutText.taken(settings)
    cluster = settings.pop("cluster")
    if long_run.resume:  # the recipe's vocabulary and model options: the checkpoint has its own
        reject_unused(("read_vocab", "save_vocab", "init_model", "update_vocab"), "with --resume")
        given = ctx.get_parameter_source("checkpoint") in GIVEN  # else it checkpoints where it resumed from
        long_run = replace(
            long_run, checkpoint=long_run.checkpoint if given else None, init_model=None, update_vocab=False
        )
        read_vocab = save_vocab = None
    command = TrainCommand(list(corpus), output, save_vocab, read_vocab, cbow_sum, long_run, extras, heldout, settings)
    check_train_options(command)
    if fmt == "auto":
        refuse_pickle_output(output, "-o")
    check_cluster_options(cluster, extras)
    if long_run.resume:
        name_resumed_outputs(long_run, output, extras)
    notes = {"command": rerun_recipe(ctx)}
    written = [output, save_vocab, long_run.save_model, long_run.save_fasttext, extras.classes_file]
    sources = corpus_sources(list(corpus), [*written, long_run.checkpoints])
    source = phrased_corpus(sources, extras, settings, quiet)
    seed, settings = settings["seed"], training_settings(ctx, command)
    left_out = None  # an output the run could not write: the others are, then it fails
    try:
        vectors = train_vectors(
            source,
            read_vocab=read_vocab,
            save_vocab=save_vocab,
            progress=not quiet,
            on_start=None if quiet else run_started(output, long_run),
            on_epoch_end=None if quiet else print_epoch,
            **dataclasses.asdict(heldout),
            notes=notes,
            cluster=cluster,
            **dataclasses.asdict(long_run),
            **settings,
        )
    except (KeyboardInterrupt, Terminated, ClusterLost) as err:
        raise Stopped(err, long_run.checkpoints, cluster) from None
    except UnwritableOutput as err:
        vectors, left_out = err.vectors, err
    write_start = time.perf_counter()
    written = write_trained(vectors, output, fmt, extras, seed, quiet)
    if not quiet:
        echo_summary(vectors, output, time.perf_counter() - write_start)
        for line in written:
            click.echo(line, err=True)
        if long_run.report:  # written by ``train_vectors``
            click.echo(f"w2v: wrote the run's report to {long_run.report}", err=True)
    if left_out is not None:
        raise left_out


def run_started(output: str, long_run: LongRun) -> Callable[[TrainConfig], None]:
    """``w2v train``'s ``on_start`` (without ``-q``): the settings the run trains with,
    in a line, and a note where ``-o`` keeps less than the run trains: the character
    n-grams of a subword model, which only a model file holds."""
    kept = long_run.save_model or long_run.save_fasttext

    def started(config: TrainConfig) -> None:
        note(f"training {config.summary()}")
        if config.ngram_rows and not kept:
            note(
                f"note: -o {output} gets the words' vectors alone, not the character n-grams that build "
                "words never seen: add --save-fasttext FILE.bin (fastText's model, which fastText and gensim "
                "load) or --save-model FILE.npz (w2v's, to query and train further)"
            )

    return started


def echo_summary(vectors, output: str, write_seconds: float) -> None:
    """The line a training run ends with: vocabulary, speed, final loss, timings."""
    r = vectors.report
    apart = f"{r.compile_seconds:.1f} s compiling the kernels, " if r.compile_seconds else ""
    apart += f"{r.heldout_seconds:.1f} s scoring the held-out text, " if r.heldout_seconds else ""
    lost = f"; {plural(r.workers_lost, 'worker')} lost and replaced" if r.workers_lost else ""
    if r.rounds:
        compute = sum(round_.compute_seconds for round_ in r.rounds)
        moved = sum(round_.bytes_out + round_.bytes_in for round_ in r.rounds) / len(r.rounds)
        apart += (
            f"{plural(len(r.rounds), 'round')} ({moved / 2**20:,.1f} MiB moved a round, "
            f"{100 * compute / max(r.train_seconds, 1e-9):.0f}% of the training time computing{lost}), "
        )
    if r.blocks is not None:
        b = r.blocks
        apart += (
            f"blocks on {plural(b.machines, 'machine')}, {plural(b.sweeps, 'sweep')} an epoch "
            f"({b.sent / max(b.words, 1):,.1f} bytes a trained word sent between them, "
            f"{b.pair_bytes / max(b.pairs, 1):.2f} a pair{lost}), "
        )
    click.echo(
        f"w2v: {plural(r.vocab_size, 'word')} in vocabulary, {plural(r.train_words, 'word')} trained "
        f"in {r.train_seconds:.1f} s ({r.words_per_second:,.0f} words/s), final loss {loss_line(r)}; "
        f"{r.prepare_seconds:.1f} s reading the corpus, {apart}{write_seconds:.1f} s writing {output}",
        err=True,
    )


def loss_line(report) -> str:
    """The last epoch's loss as the summary line says it: ``2.5266 nats (negative
    sampling)``, the mean per training example of the losses trained (the report's
    settings' ``losses``, by ``losses.LOSSES``'s titles)."""
    titles = " and ".join(LOSSES[name].title for name in report.settings.get("losses", []))
    return f"{report.epoch_loss[-1]:.4f} nats" + (f" ({titles})" if titles else "")


def print_epoch(end: "EpochEnd") -> None:
    """The line ``w2v train`` prints after each epoch (above a terminal's bar; in a log,
    one line an epoch): the training loss, and with ``--heldout`` the held-out figure
    and the unigram model's, its baseline."""
    if math.isnan(end.heldout):
        note_above_bar(f"epoch {end.epoch}: loss {end.loss:.4f}")
        return
    scored = f"held-out {heldout_figure(end.heldout, end.heldout_se)}, unigram model {end.heldout_unigram:.4f}"
    note_above_bar(f"epoch {end.epoch}: loss {end.loss:.4f}; {scored}")


def heldout_figure(bits: float, standard_error: float) -> str:
    """A held-out figure as ``train --heldout`` and ``score`` print it, saying what its
    ``±`` is: ``10.0225 ± 0.0048 bits per word (± its sampling standard error)``, or
    ``(exact)`` where every prediction was scored and normalised."""
    if not standard_error:
        return f"{bits:.4f} bits per word (exact)"
    return f"{bits:.4f} ± {standard_error:.4f} bits per word (± its sampling standard error)"


def training_settings(ctx: click.Context, command: TrainCommand) -> dict:
    """``w2v.train``'s settings for ``command``: with ``--resume`` or ``--init-model``
    only those given (or preset), the model's own applying to the others; ``cbow_mean``
    from ``--cbow-sum``."""
    settings, continued = dict(command.settings), command.long_run.resume or command.long_run.init_model
    if continued:  # settings not given (nor preset) come from the model
        settings = {k: v for k, v in settings.items() if ctx.get_parameter_source(k) != DEFAULT}
    if not continued or ctx.get_parameter_source("cbow_sum") != DEFAULT:
        settings["cbow_mean"] = not command.cbow_sum
    return settings


def check_train_options(command: TrainCommand) -> None:
    """The train command's usage rules and output checks, before any work."""
    corpus, output, save_vocab, read_vocab = command.corpus, command.output, command.save_vocab, command.read_vocab
    long_run, extras, settings = command.long_run, command.extras, command.settings
    if not corpus:
        raise click.UsageError(
            f"the checkpoint in {long_run.resume} does not name its corpus: give it"
            if long_run.resume
            else "give a CORPUS (or --resume FOLDER)"
        )
    if long_run.checkpoint_every and not long_run.checkpoints:
        raise click.UsageError("--checkpoint-every needs --checkpoint FOLDER")
    outputs = (
        {"-o": output, "--save-vocab": save_vocab, "--save-model": long_run.save_model}
        | {"--save-fasttext": long_run.save_fasttext, "--plot": extras.plot, "--report": long_run.report}
        | ({"--classes-output": extras.classes_output} if extras.classes else {})
        | checkpoint_file(long_run)
    )
    check_distinct_outputs(outputs)
    inputs: list[tuple[str, str | None]] = [("CORPUS", path) for path in corpus if os.path.isfile(path)]
    inputs += [  # a folder's files: corpus_sources
        ("--heldout", command.heldout.heldout),
        ("--read-vocab", read_vocab),
        ("--init-model", long_run.init_model),
    ]
    check_inputs_kept(inputs, outputs)
    if extras.plot:
        picture_format(extras.plot)  # matplotlib and the picture's format, before training
    if command.cbow_sum and settings["model"] != "cbow" and not long_run.init_model:
        reject_unused(("cbow_sum",), "with --model skipgram")
    if long_run.init_model and not holds_vectors_alone(long_run.init_model):  # vectors: the corpus's words
        reject_unused(("read_vocab", "max_vocab"), "with --init-model (it keeps the model's vocabulary)")
    if not extras.phrases:
        reject_unused(("phrase_threshold", "phrase_passes"), "without --phrases")
    if not extras.classes:
        reject_unused(("classes_output",), "without --classes K")
    check_writable(output)
    for path in (
        save_vocab,
        long_run.save_model,
        long_run.save_fasttext,
        extras.classes_file,
        extras.plot,
        long_run.report,
    ):
        if path is not None:
            check_writable(path)
    if read_vocab and not os.path.exists(read_vocab):  # a pipe (/dev/stdin, <(sort vocab.txt)) is read too
        raise W2VError(f"vocabulary file not found: {read_vocab}")


def checkpoint_file(long_run: LongRun) -> dict[str, str]:
    """The checkpoint file the run writes (``state.checkpoint_path``), by the option that
    names its folder: ``--checkpoint``, else ``--resume`` when it names a folder; empty for none."""
    if long_run.checkpoint:
        return {"--checkpoint": checkpoint_path(long_run.checkpoint)}
    resume = long_run.resume
    return {"--resume": checkpoint_path(resume)} if resume and os.path.isdir(resume) else {}


def check_cluster_options(cluster: str | None, extras: Extras) -> None:
    """The options that need ``--cluster``, and those it cannot take."""
    if cluster is None:
        reject_unused(("sync_words", "combine", "sweeps", "rounds"), "without --cluster")
    elif extras.phrases:
        raise click.UsageError(
            "--phrases reads the corpus here: run w2v phrases --cluster first and train on its folder"
        )


def name_resumed_outputs(long_run: LongRun, output: str, extras: Extras) -> None:
    """``--resume``: one stderr line naming every file the run will write, before it
    starts, also with ``-q``: a checkpoint names its corpus and outputs as a script
    would (``rerun_recipe``), and one made elsewhere may point them anywhere."""
    resume = long_run.resume or ""
    written = [f"-o {output}"]
    if long_run.save_model:
        written.append(f"--save-model {long_run.save_model}")
    if long_run.save_fasttext:
        written.append(f"--save-fasttext {long_run.save_fasttext}")
    if extras.classes:
        written.append(f"--classes-output {extras.classes_output}")
    folder = long_run.checkpoint or (resume if os.path.isdir(resume) else None)
    if folder:
        written.append(f"checkpoints in {folder}")
    click.echo(display_word(f"w2v: resuming {resume}; writing {', '.join(written)}"), err=True)  # paths from a file


def phrased_corpus(corpus: list[str], extras: Extras, settings: dict, quiet: bool) -> list[str] | Iterator[list[bytes]]:
    """``train --phrases``: the corpus with the phrases it holds joined on the fly
    (never written); else the corpus as given."""
    if not extras.phrases:
        return corpus

    streams = [source for source in corpus if is_stream(source)]
    if streams:
        raise W2VError(
            f"--phrases reads the corpus more than once: give files, not {streams[0]} "
            "(standard input or a pipe, read only once)"
        )
    passes = extras.phrase_passes
    with Steps(not quiet) as steps:
        table = learn_phrases(
            corpus,
            min_count=settings["min_count"],
            threshold=extras.phrase_threshold,
            passes=passes,
            prune_at=settings["prune_at"],
            on_read=passes_read(steps, passes),
        )
    if not quiet:
        found = ", ".join(f"{len(t):,}" for t in table.passes)
        click.echo(f"w2v: phrases found in {plural(passes, 'pass', 'passes')}: {found}", err=True)
    return phrased_lines(corpus, table)


def write_trained(vectors, output: str, fmt: str, extras: Extras, seed: int, quiet: bool) -> list[str]:
    """Write the vectors to ``output`` and, with ``--classes K``, cluster them first and
    write the classes too, then with ``--plot FILE`` draw the loss per epoch; return the
    lines that say what else was written, for after the training summary. The vectors file is renamed into place last: when clustering
    or writing the classes fails, an old one is not replaced."""

    k, classes_output = extras.classes, extras.classes_output
    written = []
    if k:
        found = word_classes(vectors, k, seed=seed, progress=not quiet)
    with atomic_output(output, compress=True) as out:
        write_vectors(out, vectors.words, vectors.vectors, output_format(output, fmt))
        out.flush()  # a device (/dev/full) fails here, before the classes are written
        if k:
            found.save(classes_output)
            written.append(
                f"w2v: {plural(len(vectors), 'word')} in {plural(k, 'class', 'classes')}; wrote {classes_output}"
            )
    if extras.plot:  # after the vectors are in place: a picture is not worth losing them for
        report = vectors.report
        heldout = HeldOut(report.epoch_heldout, report.epoch_heldout_se, report.heldout_unigram)
        plot_loss(extras.plot, report.epoch_loss, heldout)
        written.append(f"w2v: loss of {plural(len(vectors.report.epoch_loss), 'epoch')} drawn; wrote {extras.plot}")
    return written
