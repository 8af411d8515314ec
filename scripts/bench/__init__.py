"""The benchmark of ``w2v train`` against its peers, run as ``python scripts/bench.py``
(``cli.py`` says what it measures and how). A run writes its runs as a JSON and renders
the report from that JSON alone, so ``--report-only NAME.json`` rebuilds a report without
running anything.

- ``cli.py``: the command line: a run, or a report of a JSON;
- ``systems.py``: the systems and model-loss combos, which system runs which, finding them;
- ``records.py``: the settings, a run's record, what the runs share, what a report reads;
- ``corpus.py``: counting the corpus, gensim's line-cut copy, the tiny warm-up corpus;
- ``commands.py``: each system's training command, and a command as the report shows it;
- ``scoring.py``: the quality of a vectors file (analogies, WS-353);
- ``runs.py``: timing the runs (and the machine's roofs), and the JSON of them;
- ``machine.py``: the machine they ran on (CPU, memory, versions);
- ``summary.py``: the figures summed up over runs (medians, means, ratios per pair);
- ``targets.py``: the targets w2v is held to, PASS or FAIL;
- ``tables.py``, ``roofs.py``, ``notes.py``, ``plot.py``: the report's tables, roofline,
  prose and plot; ``report.py`` puts them together.
"""

from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]  # scripts/: the peers' runners and roofline.py
ROOT = SCRIPTS.parent  # the checkout
