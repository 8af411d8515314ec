"""The ``w2v`` command line: click commands that parse, validate and call the library.

``app`` holds the command group and the entry point (every failure as one line
on stderr); each other module adds its commands to the group: ``training``
(train), ``queries`` (analogy, similar, vector, similarity, eval, convert),
``tools`` (score, plot, vocab, classes, phrases) and ``word2vec_c`` (word2vec.c's
command lines).
"""

from w2v.cli import queries, tools, training, word2vec_c  # noqa: F401  (each adds its commands to ``cli``)
from w2v.cli.app import cli, main

__all__ = ["cli", "main"]
