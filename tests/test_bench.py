"""Smoke test of ``scripts/bench.py``: w2v alone, one model, one epoch, on a 300 KB slice."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "../shared/data"
SLICE_BYTES = 300_000


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The first 300 KB of the 6 MB slice, cut at a word boundary."""
    source = DATA / "wiki-en-6mb.txt"
    if not (source.is_file() and (DATA / "eval/questions-words.txt").is_file()):
        pytest.skip("../shared/data is absent")
    head = source.read_bytes()[:SLICE_BYTES]
    path = tmp_path / "slice.txt"
    path.write_bytes(head[: head.rfind(b" ")])
    return path


def test_bench_w2v_smoke(corpus: Path, tmp_path: Path) -> None:
    """The script runs w2v, and writes JSON with a measured run and a Markdown table."""
    out, raw, plot = tmp_path / "bench.md", tmp_path / "bench.json", tmp_path / "img/bench.png"
    command = [sys.executable, str(ROOT / "scripts/bench.py"), "--systems", "w2v", "--combos", "sg-ns",
               "--epochs", "1", "--corpus", str(corpus), "--out", str(out), "--json", str(raw),
               "--plot", str(plot), "--workdir", str(tmp_path / "work"), "--eval-dir", str(DATA / "eval")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    runs = json.loads(raw.read_text())["runs"]
    assert [(r["system"], r["combo"]) for r in runs] == [("w2v", "sg-ns")]
    assert runs[0]["words_per_s"] > 0 and runs[0]["peak_rss_mib"] > 0
    assert runs[0]["analogy_pct"] is not None
    report = out.read_text()
    assert "| system | runs | wall s | kw/s |" in report and "| w2v | 1 |" in report
