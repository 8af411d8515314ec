"""More tools: ``score``, ``plot``, ``vocab``, ``classes``, ``phrases``."""

import os
from typing import TYPE_CHECKING

import click

from w2v.cli.app import CONTEXT, cli
from w2v.cli.queries import chosen_vectors, load_for_query, vectors_file_argument, vectors_options
from w2v.cli.training import check_inputs_kept, corpus_sources, heldout_figure, reject_unused
from w2v.cluster.phrases import check_new_folder
from w2v.config import DEFAULT_PRUNE_AT, MAX_WINDOW
from w2v.corpus.phrases import check_npmi_threshold
from w2v.errors import ConfigError, W2VError, plural
from w2v.files import check_writable, skip_bom
from w2v.losses import LOSSES
from w2v.toolkit import count_vocab, word_classes
from w2v.toolkit import phrases as join_phrases  # the command below is ``phrases``
from w2v.toolkit import score as score_held_out  # the command below is ``score``
from w2v.vectors.plots import METHODS as PLOT_METHODS
from w2v.vectors.plots import check_method, picture_format, plot_words, project
from w2v.words import decode_word, display_word

if TYPE_CHECKING:  # types only: the command calls the library
    from w2v.engine.scoring import Score

CLUSTER_HELP = "Count on a Dask cluster: local:N (N processes here), tcp://HOST:PORT or a scheduler file."


@cli.command(context_settings=CONTEXT)
@click.argument("model")
@click.argument("corpus", nargs=-1, required=True)
@click.option(
    "--window",
    type=click.IntRange(min=1, max=MAX_WINDOW),
    default=None,
    help="Reach of the pairs, up to a sentence piece's length [the model's window].",
)
@click.option("--max-pairs", type=click.IntRange(min=1), default=None, help="Score a uniform sample of N predictions.")
@click.option(
    "--max-normalised",
    type=click.IntRange(min=1),
    default=None,
    help="Of those, sum the normaliser over the vocabulary for a uniform sample of N (all losses but hs); "
    "the others take that sample's mean.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of the samples.")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the figures as JSON.")
@click.option(
    "--per-line",
    is_flag=True,
    default=False,
    help="Print each non-blank line's log-probability in bits, a column per loss (10,000-token pieces of longer lines).",
)
def score(model, corpus, window, max_pairs, max_normalised, seed, as_json, per_line):
    """Held-out cross-entropy of MODEL's own prediction task on CORPUS, in bits per word.

    MODEL is a --save-model file or a checkpoint (folder or file): vectors files
    hold no output weights. Skip-gram predicts every word within --window of
    each word, CBOW each word from its whole window; no subsampling. Every
    prediction is scored exactly unless --max-pairs or --max-normalised sample
    them: the figure then comes with its standard error.
    """
    sampled = dict(max_pairs=max_pairs, max_normalised=max_normalised, seed=seed)
    result = score_held_out(model, corpus_sources(list(corpus), []), window=window, **sampled)
    if per_line:
        click.echo("".join("\t".join(f"{bits:.4f}" for bits in row) + "\n" for row in result.sentence_bits), nl=False)
    elif as_json:
        import json

        first, *others = (s.to_dict() for s in result.scores)
        click.echo(json.dumps({**first, "other_losses": others}, indent=2))
    else:
        for s in result.scores:
            click.echo(
                f"{s.loss}: {heldout_figure(s.bits_per_word, s.standard_error)}, perplexity {s.perplexity:,.1f}, "
                f"on {plural(s.pairs, 'prediction')}; unigram model {s.unigram_bits_per_word:.4f} bits per word; "
                f"{plural(s.oov_tokens, 'token')} out of vocabulary"
            )
            if s.mean_log_z is not None:
                click.echo(diagnostics_line(s))
    said = result.above_unigram()
    if said is not None:
        click.echo(f"w2v: {said}", err=True)


def diagnostics_line(score: "Score") -> str:
    """``score``'s second line: the figures of its raw scores ``s``, labelled as what
    they are, not scores of the model: softmax(s) where the loss's own distribution
    is another (negative sampling's implied one), and exp(s) taken as probabilities
    (Z = 1), a score only where log Z is near 0."""
    parts = []
    if LOSSES[score.loss].scored != "softmax":
        parts.append(
            f"softmax(s) {score.bits_per_word_plain:.4f} bits per word "
            f"(the raw scores, without {LOSSES[score.loss].title}'s correction)"
        )
    parts.append(
        f"exp(s) taken as probabilities (Z = 1) {score.bits_per_word_z1:.4f}, a score only where log Z is near 0: "
        f"here log Z mean {score.mean_log_z:.3f} nats, sd {score.std_log_z:.3f}"
    )
    return f"{score.loss} diagnostics, not scores: " + "; ".join(parts)


MISSING_SHOWN = 10  # words not in the vocabulary named in plot's note; the rest are counted
PLOTTED_TOP = 50  # words plot maps when none are named: the most frequent, as many as a map shows legibly


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
@click.option(
    "--words-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also plot these words: one a line (the first field; a 'word count' vocabulary works).",
)
@click.option(
    "-n",
    "--top",
    type=click.IntRange(min=2),
    default=PLOTTED_TOP,
    show_default=True,
    help="Without WORDS or --words-file: plot the N most frequent words.",
)
@click.option("-o", "--output", default="map.png", show_default=True, help="Picture to write (.png, .svg, .pdf, ...).")
@click.option(
    "--method",
    type=click.Choice(PLOT_METHODS),
    default="pca",
    show_default=True,
    help="pca: numpy; tsne needs scikit-learn, umap needs umap-learn.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of t-SNE and UMAP.")
@click.option("-q", "--quiet", is_flag=True, default=False, help="No summary line.")
def plot(words, vectors_path, fmt, limit, words_file, top, output, method, seed, quiet):
    """Draw WORDS as labelled points on a 2-D map of their vectors (none given: the
    --top most frequent).

    The map is the first two principal components of the words' unit vectors
    (--method pca): words used alike land close together. Words not in the
    vocabulary are left out, with a note. Needs matplotlib: pip install 'w2v[plot]'.
    """
    chosen = list(dict.fromkeys([*words, *(read_word_list(words_file) if words_file else [])]))
    if chosen:
        reject_unused(("top",), "with WORDS or --words-file (it picks the words when none are given)")
    picture_format(output)  # matplotlib and the picture's format, before any work
    check_method(method)
    check_writable(output)
    vectors = load_for_query(vectors_path, fmt, limit if chosen else min(limit or top, top))
    chosen = chosen or vectors.words[:top]
    known = [w for w in chosen if vectors.has_index_for(w)]  # a subword model's unseen words are not plotted
    missing = [display_word(w) for w in chosen if not vectors.has_index_for(w)]
    more = f" and {len(missing) - MISSING_SHOWN:,} more" if len(missing) > MISSING_SHOWN else ""
    named = ", ".join(missing[:MISSING_SHOWN]) + more
    if len(known) < 2:
        absent = f" ({named} not in it)" if missing else ""
        raise W2VError(f"a map needs at least 2 words in the vocabulary, not {len(known)}{absent}")
    if missing:
        click.echo(f"w2v: {plural(len(missing), 'word')} not in the vocabulary, left out: {named}", err=True)
    projection = project(vectors.vectors[[vectors.index(w) for w in known]], method, seed)
    title = f"{os.path.basename(vectors_path)}: {plural(len(known), 'word')}, {projection.method} of unit vectors"
    plot_words(output, known, projection, title)
    if not quiet:
        click.echo(f"w2v: {plural(len(known), 'word')} on a {projection.method} map; wrote {output}", err=True)


def read_word_list(path: str) -> list[str]:
    """The first field of each non-blank line of ``path``, as the vocabulary spells words."""
    try:
        with open(path, "rb") as handle:
            return [decode_word(line.split()[0]) for line in skip_bom(handle) if line.strip()]
    except OSError as err:
        raise W2VError(f"cannot read the words file {path}: {err.strerror}") from None


# --- more tools: vocab, classes, phrases ---------------------------------------------


@cli.command(context_settings=CONTEXT)
@click.argument("corpus", nargs=-1, required=True)
@click.option(
    "-o", "--output", default="vocab.txt", show_default=True, help="Vocabulary file to write ('word count' lines)."
)
@click.option(
    "--min-count", type=click.IntRange(min=1), default=5, show_default=True, help="Drop words seen fewer times."
)
@click.option("--max-vocab", type=click.IntRange(min=1), default=None, help="Keep only the N most frequent words.")
@click.option(
    "--prune-at",
    type=click.IntRange(min=1),
    default=DEFAULT_PRUNE_AT,
    show_default=True,
    help="Distinct words held while counting; past it the rarest are pruned (word2vec.c ReduceVocab).",
)
@click.option("--cluster", default=None, metavar="ADDRESS", help=CLUSTER_HELP)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar.")
def vocab(corpus, output, min_count, max_vocab, prune_at, cluster, quiet):
    """Count the words of CORPUS and write the vocabulary (word2vec.c's -save-vocab format).

    Prints the vocabulary's size, the tokens it covers, and the coverage at each
    --min-count from 1 to 10, to help choose one.
    """

    check_writable(output)
    sources = corpus_sources(list(corpus), [output])
    counted = count_vocab(
        sources, min_count=min_count, max_vocab=max_vocab, prune_at=prune_at, cluster=cluster, progress=not quiet
    )
    counted.save(output)
    chosen, total = counted.vocab, counted.tokens
    click.echo(
        f"{plural(len(chosen), 'word')} (min-count {min_count}"
        + (f", max-vocab {max_vocab:,}" if max_vocab else "")
        + f") cover {chosen.total:,} of {plural(total, 'token')} ({100 * chosen.total / total:.2f}%); "
        f"{plural(counted.distinct_words, 'distinct word')} counted; wrote {output}"
    )
    if counted.pruned_up_to:
        click.echo(
            f"note: counting pruned words seen at most {plural(counted.pruned_up_to, 'time')} (--prune-at {prune_at:,}); "
            "their counts are not included"
        )
    click.echo("min-count\twords\ttokens\tcoverage")
    for row_min, words, covered in counted.coverage():
        click.echo(f"{row_min}\t{words}\t{covered}\t{100 * covered / total:.2f}%")


@cli.command(context_settings=CONTEXT)
@vectors_file_argument
@vectors_options
@click.option("-k", "--classes", "k", type=click.IntRange(min=1), required=True, help="Number of classes.")
@click.option("-o", "--output", default="classes.txt", show_default=True, help="File of 'word class' lines to write.")
@click.option(
    "--init",
    type=click.Choice(["kmeans++", "word2vec"]),
    default="kmeans++",
    show_default=True,
    help="k-means++ seeding, or word2vec.c's (word i in class i mod k).",
)
@click.option(
    "--iter",
    "iterations",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Most iterations (word2vec.c: 10).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of k-means++.")
@click.option(
    "--order",
    type=click.Choice(["class", "vocab"]),
    default="class",
    show_default=True,
    help="Sort lines by class (as the word2vec demo does), or keep the vectors' word order.",
)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar, no summary line.")
def classes(file, vectors_path, fmt, limit, k, output, init, iterations, seed, order, quiet):
    """Cluster the words of the vectors FILE (or -v FILE) into K classes: k-means on
    the unit vectors (word2vec.c -classes)."""
    vectors_path = chosen_vectors(file, vectors_path)
    check_inputs_kept([("FILE" if file else "-v", vectors_path)], {"-o": output})
    check_writable(output)
    vectors = load_for_query(vectors_path, fmt, limit)
    found = word_classes(vectors, k, iterations=iterations, seed=seed, init=init, progress=not quiet)
    found.save(output, order=order)
    if not quiet:
        click.echo(
            f"w2v: {plural(len(vectors), 'word')} in {plural(k, 'class', 'classes')} after "
            f"{plural(found.clustering.iterations, 'iteration')} "
            f"(mean cosine to centroid {found.clustering.mean_similarity:.4f}); wrote {output}",
            err=True,
        )


@cli.command(context_settings=CONTEXT)
@click.argument("corpus", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    required=True,
    help="Corpus to write with phrases joined ('-': stdout; .gz .bz2 .xz .zst compress).",
)
@click.option(
    "--min-count",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Ignore words and pairs seen fewer times.",
)
@click.option("--threshold", type=float, default=None, help="Join pairs scoring above this [100; npmi: 0.5].")
@click.option(
    "--scoring",
    type=click.Choice(["default", "npmi"]),
    default="default",
    show_default=True,
    help="default: word2phrase's (n(ab) - min_count) N / (n(a) n(b)); npmi: in [-1, 1].",
)
@click.option(
    "--passes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Passes; each can join the last one's phrases again.",
)
@click.option("--delimiter", default="_", show_default=True, help="Joins the words of a phrase.")
@click.option(
    "--prune-at",
    type=click.IntRange(min=1),
    default=DEFAULT_PRUNE_AT,
    show_default=True,
    help="Words and pairs held while counting; past it the rarest are pruned (word2phrase ReduceVocab).",
)
@click.option("--save-phrases", type=click.Path(dir_okay=False), default=None, help="Also write the phrase table.")
@click.option(
    "--cluster",
    default=None,
    metavar="ADDRESS",
    help="Count and write on a Dask cluster (local:N, tcp://HOST:PORT, a scheduler file); -o is then a new folder of parts.",
)
@click.option(
    "--apply-phrases",
    type=click.Path(dir_okay=False),
    default=None,
    help="Join the phrases of this table (from --save-phrases) instead of detecting them.",
)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar, no summary line.")
def phrases(corpus, output, quiet, **settings):
    """Detect phrases (frequent bigrams) in CORPUS and write it with them joined (word2phrase).

    Each line of the corpus gives one line of output, its words separated by one
    space; 'new york' becomes 'new_york'. --passes 2 builds longer phrases.
    """

    check_phrase_outputs(output, settings["save_phrases"], settings["cluster"])
    if settings["apply_phrases"] is not None:
        reject_unused(
            ("threshold", "scoring", "min_count", "passes", "delimiter", "prune_at"),
            "with --apply-phrases (the table's own settings apply)",
        )
        if not os.path.isfile(settings["apply_phrases"]):
            raise W2VError(f"phrase table not found: {settings['apply_phrases']}")
    if settings["threshold"] is not None:
        try:
            check_npmi_threshold(settings["scoring"], settings["threshold"])
        except ConfigError as err:  # a usage error, reported before the corpus is read
            raise click.BadParameter(str(err), param_hint="--threshold") from None
    if settings["cluster"] is not None:
        check_new_folder(output)
    write_phrases(list(corpus), output, settings, quiet)


def check_phrase_outputs(output: str, save_phrases: str | None, cluster: str | None) -> None:
    """The files ``w2v phrases`` writes can be written: ``output`` (unless standard output
    or, with ``cluster``, a new folder: ``check_new_folder``) and the ``save_phrases`` table."""
    if output != "-" and cluster is None:
        check_writable(output)
    if save_phrases is not None:
        check_writable(save_phrases)


def write_phrases(corpus: list[str], output: str, settings: dict, quiet: bool) -> None:
    """``w2v phrases`` (and ``word2phrase``) once its options are checked: join the
    phrases of ``corpus`` into ``output`` (``toolkit.phrases`` with ``settings``, its
    keywords) and say what was found and written, unless ``quiet``."""
    save_phrases = settings.get("save_phrases")
    # the table is saved before one process writes the corpus, after a cluster has read it
    outputs: list[str | None] = [output, save_phrases] if settings.get("cluster") is None else [output]
    done = join_phrases(corpus_sources(corpus, outputs), output, **settings, progress=not quiet)
    if not quiet:
        found = "; ".join(f"pass {p}: {plural(len(t), 'phrase')}" for p, t in enumerate(done.table.passes, 1))
        written = done.written
        click.echo(
            f"w2v: {found}; {plural(written.lines, 'line')}, {plural(written.tokens_in, 'token')} in, "
            f"{written.tokens_out:,} out; wrote {output}" + (f" and {save_phrases}" if save_phrases else ""),
            err=True,
        )
