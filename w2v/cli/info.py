"""``w2v info``: what a vectors file, model file, checkpoint or fastText ``.bin`` holds."""

import json
from dataclasses import asdict

import click

from w2v.cli.app import CONTEXT, cli
from w2v.errors import plural
from w2v.vectorio.describe import FileInfo, describe_file


@cli.command(context_settings=CONTEXT)
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print it as JSON.")
def info(file, as_json):
    """Say what FILE holds: its format, words and dimension; for a w2v model file or
    checkpoint (folder) its settings and training record, for a fastText .bin its
    arguments.

    Only headers are read, never the vectors: a word2vec file's words are the count
    its 'COUNT DIM' line gives.
    """
    found = describe_file(file)
    if as_json:
        click.echo(json.dumps(asdict(found), indent=2))
        return
    click.echo(f"{found.path}: {found.format}, {plural(found.words, 'word')} x {plural(found.dim, 'dim')}")
    if found.summary is not None:
        click.echo(f"settings: {found.summary}")
    if found.record is not None:
        click.echo(f"trained: {trained_line(found)}")


def trained_line(found: FileInfo) -> str:
    """What a model's training record says, in a line: a w2v model's progress, the
    corpus an epoch and each epoch's mean loss; the tokens a fastText model read."""
    record = found.record or {}
    if "ntokens" in record:
        return f"on {plural(record['ntokens'], 'token')}"
    losses = ", ".join("-" if loss is None else f"{loss:.4f}" for loss in record["epoch_loss"])
    line = (
        f"{record['progress']}, on {plural(record['corpus_words'], 'token')} an epoch "
        f"({record['stream_words']:,} in the vocabulary); mean loss by epoch {losses}"
    )
    if record.get("blocks"):
        sweeps = plural((found.settings or {}).get("sweeps", 0), "sweep")
        line += f"; on a cluster, in blocks on {plural(record['replicas'], 'machine')}, {sweeps} an epoch"
    elif record["replicas"]:
        line += f"; on a cluster, in {plural(record['replicas'], 'replica')}"
    if record["corpus"]:
        line += f"; corpus {' '.join(record['corpus'])}"
    return line
