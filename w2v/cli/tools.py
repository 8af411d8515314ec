"""More tools: ``score``, ``plot``, ``vocab``, ``classes``, ``phrases``."""

import os

import click

from w2v.cli.app import CONTEXT, cli
from w2v.cli.queries import load_for_query, vectors_options
from w2v.cli.training import corpus_sources, reject_unused
from w2v.cluster.connect import connect, note_idle_workers, parts_with_words, worker_sources
from w2v.cluster.counting import count_on_cluster, counting_parts
from w2v.cluster.phrases import check_new_folder, learn_on_cluster, phrase_parts, write_on_cluster
from w2v.config import DEFAULT_PRUNE_AT
from w2v.corpus.counting import check_not_empty, count_table
from w2v.corpus.phrases import (
    PhraseTable,
    check_npmi_threshold,
    learn_phrases,
    new_table,
    spooled_streams,
    write_phrased,
)
from w2v.corpus.vocab import Vocab, coverage_table, decode_word, display_word
from w2v.engine.scoring import score_model
from w2v.engine.state import TrainState
from w2v.errors import ConfigError, W2VError, plural
from w2v.files import check_writable
from w2v.progress import Steps, reading
from w2v.vectors.classes import kmeans, write_classes
from w2v.vectors.plots import METHODS as PLOT_METHODS
from w2v.vectors.plots import check_method, picture_format, plot_words, project

CLUSTER_HELP = "Count on a Dask cluster: local:N (N processes here), tcp://HOST:PORT or a scheduler file."


@cli.command(context_settings=CONTEXT)
@click.argument("model")
@click.argument("corpus", nargs=-1, required=True)
@click.option("--window", type=click.IntRange(min=1), default=None, help="Reach of the pairs [the model's window].")
@click.option("--max-pairs", type=click.IntRange(min=1), default=None, help="Score a uniform sample of N predictions.")
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of the --max-pairs sample.")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the figures as JSON.")
@click.option(
    "--per-line",
    is_flag=True,
    default=False,
    help="Print each non-blank line's log-probability in bits, a column per loss (10,000-token pieces of longer lines).",
)
def score(model, corpus, window, max_pairs, seed, as_json, per_line):
    """Held-out cross-entropy of MODEL's own prediction task on CORPUS, in bits per word.

    MODEL is a --save-model file or a checkpoint (folder or file): vectors files
    hold no output weights. Skip-gram predicts every word within --window of
    each word, CBOW each word from its whole window; no subsampling.
    """
    import tempfile

    state = TrainState.load(model)
    with tempfile.TemporaryDirectory(prefix="w2v-") as workdir:
        result = score_model(state, list(corpus), workdir, window, max_pairs, seed)
    if per_line:
        click.echo("".join("\t".join(f"{bits:.4f}" for bits in row) + "\n" for row in result.sentence_bits), nl=False)
    elif as_json:
        import json

        first, *others = (s.to_dict() for s in result.scores)
        click.echo(json.dumps({**first, "other_losses": others}, indent=2))
    else:
        for s in result.scores:
            click.echo(
                f"{s.loss}: {s.bits_per_word:.4f} bits per word (perplexity {s.perplexity:,.1f}) on "
                f"{plural(s.pairs, 'prediction')}; unigram {s.unigram_bits_per_word:.4f}; "
                f"{plural(s.oov_tokens, 'token')} out of vocabulary"
            )
            if s.mean_log_z is not None:
                click.echo(
                    f"{s.loss}: softmax(s) {s.bits_per_word_plain:.4f} bits, Z = 1 {s.bits_per_word_z1:.4f} bits; "
                    f"log Z mean {s.mean_log_z:.3f}, sd {s.std_log_z:.3f}"
                )


MISSING_SHOWN = 10  # words not in the vocabulary named in plot's note; the rest are counted


@cli.command(context_settings=CONTEXT)
@click.argument("words", nargs=-1)
@vectors_options
@click.option(
    "--words-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also plot these words: one a line (the first field; a 'word count' vocabulary works).",
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
def plot(words, vectors_path, fmt, limit, words_file, output, method, seed, quiet):
    """Draw WORDS as labelled points on a 2-D map of their vectors.

    The map is the first two principal components of the words' unit vectors
    (--method pca): words used alike land close together. Words not in the
    vocabulary are left out, with a note. Needs matplotlib: pip install 'w2v[plot]'.
    """
    chosen = list(dict.fromkeys([*words, *(read_word_list(words_file) if words_file else [])]))
    if not chosen:
        raise click.UsageError("give the WORDS to plot, or --words-file FILE")
    picture_format(output)  # matplotlib and the picture's format, before any work
    check_method(method)
    check_writable(output)
    vectors = load_for_query(vectors_path, fmt, limit)
    known = [w for w in chosen if w in vectors]
    missing = [display_word(w) for w in chosen if w not in vectors]
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
            return [decode_word(line.split()[0]) for line in handle if line.strip()]
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
    table = count_here_or_there(sources, prune_at, cluster, not quiet)
    check_not_empty(table.tokens, len(table.words), prune_at)
    counts = table.counts
    chosen = Vocab.choose(table.words, counts, min_count, max_vocab)
    chosen.save(output)
    total = table.tokens
    click.echo(
        f"{plural(len(chosen), 'word')} (min-count {min_count}"
        + (f", max-vocab {max_vocab:,}" if max_vocab else "")
        + f") cover {chosen.total:,} of {plural(total, 'token')} ({100 * chosen.total / total:.2f}%); "
        f"{plural(len(table.words), 'distinct word')} counted; wrote {output}"
    )
    if table.min_reduce > 1:
        click.echo(
            f"note: counting pruned words seen at most {plural(table.min_reduce - 1, 'time')} (--prune-at {prune_at:,}); "
            "their counts are not included"
        )
    click.echo("min-count\twords\ttokens\tcoverage")
    for row_min, words, covered in coverage_table(counts, max_vocab):
        click.echo(f"{row_min}\t{words}\t{covered}\t{100 * covered / total:.2f}%")


def count_here_or_there(sources: list[str], prune_at: int, cluster: str | None, show: bool):
    """The ``counting.CountTable`` of ``sources``, counted here or on the Dask ``cluster``."""
    if cluster is None:
        from w2v.engine.jit import compiling_noted  # Numba: imported by a count, not by ``w2v --help``

        with compiling_noted(show), Steps(show) as steps:
            return count_table(sources, prune_at, on_read=reading(steps))

    with connect(cluster, None) as joined:
        parts = counting_parts(joined, worker_sources(joined, sources))
        note_idle_workers(len(parts), len(joined.workers()), show)
        return count_on_cluster(joined, parts, prune_at, show)


def phrases_on_cluster(address: str, corpus: list[str], output: str, settings: dict, passes: int, prune_at: int,
                       apply_phrases: str | None, quiet: bool):  # fmt: skip
    """``w2v phrases --cluster``: learn (or load) the table and write the folder ``output``
    on the cluster at ``address``; the table and what was written."""

    if output == "-":
        raise W2VError("w2v phrases --cluster writes a folder of parts: give -o FOLDER, not -")
    check_new_folder(output)
    table = PhraseTable.load(apply_phrases) if apply_phrases else new_table(**settings, passes=passes)
    sources = corpus_sources(corpus, [output])
    with connect(address, None) as cluster:
        parts = phrase_parts(cluster, sources)
        empty = len(parts) - len(parts_with_words(cluster, parts))
        note_idle_workers(len(parts), len(cluster.workers()), not quiet, lines=True, empty=empty)
        if not apply_phrases:
            learn_on_cluster(cluster, parts, table, passes, prune_at, not quiet)
        return table, write_on_cluster(cluster, parts, table, output, not quiet)


@cli.command(context_settings=CONTEXT)
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
def classes(vectors_path, fmt, limit, k, output, init, iterations, seed, order, quiet):
    """Cluster the words into K classes: k-means on the unit vectors (word2vec.c -classes)."""

    check_writable(output)
    vectors = load_for_query(vectors_path, fmt, limit)
    with Steps(not quiet) as steps:
        found = kmeans(vectors.vectors, k, iterations=iterations, seed=seed, init=init, on_step=steps)
    write_classes(output, vectors.words, found.labels, order=order)
    if not quiet:
        click.echo(
            f"w2v: {plural(len(vectors), 'word')} in {plural(k, 'class', 'classes')} after "
            f"{plural(found.iterations, 'iteration')} "
            f"(mean cosine to centroid {found.mean_similarity:.4f}); wrote {output}",
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
def phrases(
    corpus,
    output,
    min_count,
    threshold,
    scoring,
    passes,
    delimiter,
    prune_at,
    save_phrases,
    cluster,
    apply_phrases,
    quiet,
):
    """Detect phrases (frequent bigrams) in CORPUS and write it with them joined (word2phrase).

    Each line of the corpus gives one line of output, its words separated by one
    space; 'new york' becomes 'new_york'. --passes 2 builds longer phrases.
    """

    if output != "-" and cluster is None:
        check_writable(output)
    if save_phrases is not None:
        check_writable(save_phrases)
    if apply_phrases is not None:
        reject_unused(
            ("threshold", "scoring", "min_count", "passes", "delimiter", "prune_at"),
            "with --apply-phrases (the table's own settings apply)",
        )
        if not os.path.isfile(apply_phrases):
            raise W2VError(f"phrase table not found: {apply_phrases}")
    if threshold is not None:
        try:
            check_npmi_threshold(scoring, threshold)
        except ConfigError as err:  # a usage error, reported before the corpus is read
            raise click.BadParameter(str(err), param_hint="--threshold") from None
    settings = {"min_count": min_count, "threshold": threshold, "scoring": scoring, "delimiter": delimiter}
    if cluster is not None:
        table, written = phrases_on_cluster(
            cluster, list(corpus), output, settings, passes, prune_at, apply_phrases, quiet
        )
        if save_phrases:
            table.save(save_phrases)
    else:
        with (
            spooled_streams(corpus_sources(list(corpus), [output, save_phrases])) as sources,
            Steps(not quiet) as steps,
        ):
            if apply_phrases:
                table = PhraseTable.load(apply_phrases)
            else:
                table = learn_phrases(
                    sources,
                    **settings,
                    passes=passes,
                    prune_at=prune_at,
                    on_read=lambda done, status: reading(steps, f"phrases, pass {done}/{passes}")(status),
                )
            if save_phrases:
                table.save(save_phrases)
            written = write_phrased(sources, table, output, on_read=reading(steps, "writing"))
    if not quiet:
        found = "; ".join(f"pass {p}: {plural(len(t), 'phrase')}" for p, t in enumerate(table.passes, 1))
        click.echo(
            f"w2v: {found}; {plural(written.lines, 'line')}, {plural(written.tokens_in, 'token')} in, "
            f"{written.tokens_out:,} out; wrote {output}" + (f" and {save_phrases}" if save_phrases else ""),
            err=True,
        )
