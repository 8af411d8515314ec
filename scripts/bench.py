"""Benchmark ``w2v train`` side by side with word2vec.c, gensim and fastText: the command
of the package ``scripts/bench/``, whose ``cli.py`` says what it measures and how.

    python scripts/bench.py --corpus text8 --repeat 3 --scaling --startup
    python scripts/bench.py --report-only bench-results/benchmarks.json   # the report again, from its JSON
"""

import sys

from bench.cli import main  # the package beside this file: a package comes before a module of its name

if __name__ == "__main__":
    sys.exit(main())
