"""The ``w2v`` command line: click commands that parse, validate and call the library.

``app`` holds the command group and the entry point (every failure as one line
on stderr); each other module adds its commands to the group: ``training``
(train), ``queries`` (analogy, similar, vector, similarity, eval, convert),
``tools`` (score, plot, vocab, classes, phrases), ``info`` (info) and
``word2vec_c`` (word2vec.c's command lines).

Before them, ``blas.bound_blas_threads`` sets the BLAS library's threads for the
command, which the library reads as numpy loads it.

Importing them takes the command's first quarter of a second (numpy, click...):
Ctrl-C meanwhile ends as in a command, with ``w2v: error: interrupted`` and exit
130 (``app.main``), and SystemExit, raised in an import, ends the process
without a traceback. ``import w2v`` imports nothing, so the guard starts at once.
"""

import sys

try:
    from w2v.cli.blas import bound_blas_threads

    bound_blas_threads(sys.argv[1:])  # before the imports below load numpy, and its BLAS library with it
    from w2v.cli import info, queries, tools, training, word2vec_c  # noqa: F401  (each adds its commands to ``cli``)
    from w2v.cli.app import cli, main
except KeyboardInterrupt:
    if sys.stderr is not None:  # None when started with stderr closed (2>&-)
        sys.stderr.write("w2v: error: interrupted\n")
    raise SystemExit(130) from None

__all__ = ["cli", "main"]
