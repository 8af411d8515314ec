"""Smoke tests of the benchmark scripts: ``scripts/bench.py`` (w2v alone, one model, one
epoch, on a 300 KB slice) and ``scripts/ab_kernels.py`` (this checkout against itself on the sample corpus)."""

import json
import os
import shutil
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
    if not source.is_file():
        pytest.skip("../shared/data is absent")
    head = source.read_bytes()[:SLICE_BYTES]
    path = tmp_path / "slice.txt"
    path.write_bytes(head[: head.rfind(b" ")])
    return path


def test_bench_w2v_smoke(corpus: Path, tmp_path: Path) -> None:
    """The script runs w2v, and writes JSON with a measured run, a Markdown table and,
    where matplotlib is installed, a plot in img/ beside the table (not into docs/)."""
    out, raw, plot = tmp_path / "bench.md", tmp_path / "bench.json", tmp_path / "img/bench.png"
    command = [sys.executable, str(ROOT / "scripts/bench.py"), "--systems", "w2v", "--combos", "sg-ns",
               "--epochs", "1", "--corpus", str(corpus), "--out", str(out), "--json", str(raw),
               "--workdir", str(tmp_path / "work")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    runs = json.loads(raw.read_text())["runs"]
    assert [(r["system"], r["combo"]) for r in runs] == [("w2v", "sg-ns")]
    assert runs[0]["words_per_s"] > 0 and runs[0]["peak_rss_mib"] > 0
    assert runs[0]["analogy_pct"] is not None
    report = out.read_text()
    assert "| system | runs | wall s | kw/s |" in report and "| w2v | 1 |" in report
    assert "- Corpus: `slice.txt`, " in report  # (a corpus of unknown origin gets no note)
    assert plot.is_file() == ("matplotlib is not installed" not in report)


def run_ab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(ROOT / "scripts/ab_kernels.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_ab_kernels_times_two_checkouts_on_alternated_runs(tmp_path: Path) -> None:
    """This checkout against itself on the sample corpus: a line per checkout, the
    variant's speed over the base per round."""
    done = run_ab(str(ROOT), "--corpus", str(ROOT / "data/sample.txt.gz"), "--threads", "1", "--dim", "16",
                  "--rounds", "2", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 rounds of 1 epoch(s) on sample.txt.gz: --model skipgram --threads 1 --dim 16")
    assert lines[1].startswith(f"base {ROOT}: ") and lines[1].endswith(" kw/s (median)")
    assert lines[2].startswith(f"variant {ROOT}: ") and "; speed over base per round: median " in lines[2]


def test_ab_kernels_times_two_settings_of_one_checkout(tmp_path: Path) -> None:
    """--base-args and --variant-args: each side's own options, named on its line."""
    done = run_ab(str(ROOT), "--corpus", str(ROOT / "data/sample.txt.gz"), "--threads", "1", "--dim", "16",
                  "--rounds", "2", "--base-args=--negative 2", "--variant-args=--nce 2", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith(f"base {ROOT} --negative 2: ")
    assert lines[2].startswith(f"variant {ROOT} --nce 2: ") and "; speed over base per round: median " in lines[2]


def test_ab_kernels_runs_each_checkouts_own_code(tmp_path: Path, monkeypatch) -> None:
    """Each side imports the w2v of its checkout, whatever the working directory
    (Python puts it first on the path: run from this checkout, both sides would
    import this checkout's code and compare it with itself)."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    monkeypatch.chdir(ROOT)
    import ab_kernels

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "w2v", copy / "w2v", ignore=shutil.ignore_patterns("__pycache__"))
    assert ab_kernels.imported_from(copy) == (copy / "w2v").resolve()
    assert ab_kernels.imported_from(ROOT) == (ROOT / "w2v").resolve()


def test_ab_kernels_refuses_a_folder_without_w2v(tmp_path: Path) -> None:
    done = run_ab(str(tmp_path), "--corpus", str(ROOT / "data/sample.txt.gz"), cwd=tmp_path)
    assert done.returncode == 2
    assert "not a checkout of w2v" in done.stderr


def test_the_gensim_copy_never_writes_through_a_planted_link(tmp_path: Path, monkeypatch) -> None:
    """bench.py's line-cut corpus copy for gensim goes through a temporary file no one can
    plant a link at (it was NAME.tmp<pid>)."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    import bench

    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"a b c\nd e\n")
    (tmp_path / "victim").write_bytes(b"precious\n")
    size, mtime = corpus.stat().st_size, int(corpus.stat().st_mtime)
    stem = f"c.lines{bench.GENSIM_LINE_TOKENS}-{size}-{mtime}"
    (tmp_path / f"{stem}.tmp{os.getpid()}").symlink_to(tmp_path / "victim")
    copy = bench.gensim_copy(corpus, tmp_path)
    assert copy.read_bytes() == b"a b c d e\n" and (tmp_path / "victim").read_bytes() == b"precious\n"
    assert not copy.is_symlink()


def run_equal_time(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(ROOT / "scripts/equal_time.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_equal_time_sweeps_resumes_and_ends_the_report(corpus: Path, tmp_path: Path, monkeypatch) -> None:
    """scripts/equal_time.py: a run per epoch count, saved as it goes; a second --run finds
    nothing left to do, a third runs again the one marked failed; the section replaces its
    earlier self at the end of the report, under what bench.py wrote, and bench.py keeps it
    when it rewrites the report."""
    raw, out = tmp_path / "sweep.json", tmp_path / "bench.md"
    out.write_text("# Benchmarks\n\nbench.py's tables\n")
    common = ["--systems", "w2v", "--combos", "cbow-ns", "--epoch-counts", "2,1", "--dim", "16",
              "--corpus", str(corpus), "--json", str(raw), "--out", str(out),
              "--plot", str(tmp_path / "img/sweep.png"), "--workdir", str(tmp_path / "work")]  # fmt: skip
    for _ in range(2):
        done = run_equal_time("--run", *common, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    runs = json.loads(raw.read_text())["runs"]
    assert [(r["system"], r["combo"], r["epochs"]) for r in runs] == [("w2v", "cbow-ns", 1), ("w2v", "cbow-ns", 2)]
    assert runs[1]["words_per_s"] > 0 and runs[1]["analogy_pct"] is not None
    sweep = json.loads(raw.read_text())  # a failed run is run again, its record replaced
    sweep["runs"][0].update(error="ModuleNotFoundError", analogy_pct=None)
    raw.write_text(json.dumps(sweep))
    assert run_equal_time("--run", *common, cwd=tmp_path).returncode == 0
    runs = json.loads(raw.read_text())["runs"]
    assert [(r["epochs"], r["error"]) for r in runs] == [(2, None), (1, None)] and runs[1]["analogy_pct"] is not None
    report = out.read_text()
    assert report.startswith("# Benchmarks\n\nbench.py's tables\n") and report.count("## Accuracy at equal time") == 1
    assert "| epochs | w2v |" in report and "| 2 | " in report
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    import bench

    assert bench.kept_sections(out) == "\n" + report[report.index(bench.LATER_SECTIONS) :]


def test_equal_time_refuses_runs_of_other_settings(corpus: Path, tmp_path: Path) -> None:
    raw = tmp_path / "sweep.json"
    raw.write_text(json.dumps({"settings": {"dim": 7}, "runs": [], "commands": []}))
    done = run_equal_time("--run", "--systems", "w2v", "--corpus", str(corpus), "--json", str(raw),
                          "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "r.md"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1 and done.stderr.strip().startswith(f"equal_time: {raw} holds runs with other settings")
