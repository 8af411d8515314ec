"""Smoke tests of the benchmark scripts: ``scripts/bench.py`` (w2v alone, one model, one
epoch, on a 300 KB slice) and ``scripts/ab_kernels.py`` (a kernel copy on the sample corpus)."""

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


def run_ab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(ROOT / "scripts/ab_kernels.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_ab_kernels_times_a_variant_against_the_installed_kernel(tmp_path: Path) -> None:
    """A copy of w2v/kernels.py against the package's own, on the sample corpus:
    a line per kernel, with the variant's speed over the baseline per segment."""
    variant = tmp_path / "same_kernels.py"
    variant.write_bytes((ROOT / "w2v/kernels.py").read_bytes())
    done = run_ab(str(variant), "--corpus", str(ROOT / "data/sample.txt.gz"), "--threads", "1",
                  "--warm-epochs", "0", "--segments", "2", "--segment-batches", "3", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 segments of 3 batches, ")
    assert lines[1].startswith("w2v.kernels: ") and "median 1.000" in lines[1]
    assert lines[2].startswith(f"{variant}: ") and " kw/s; speed over w2v.kernels per segment: median " in lines[2]


def test_ab_kernels_refuses_the_baseline_itself(tmp_path: Path) -> None:
    """Loading w2v/kernels.py a second time under another name would spoil Numba's cache."""
    done = run_ab(str(ROOT / "w2v/kernels.py"), "--corpus", str(ROOT / "data/sample.txt.gz"), cwd=tmp_path)
    assert done.returncode == 2
    assert "is the baseline itself: pass a copy of it" in done.stderr
