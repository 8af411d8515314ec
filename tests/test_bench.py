"""The measuring tools in scripts/: ``bench.py`` (w2v alone, one model, one epoch, on a
300 KB slice; its report made again from its JSON), ``ab_kernels.py`` (this checkout
against itself on the sample corpus), ``ab_quality.py``'s table and ``profile_kernel.py``'s
loop attribution; and every script starts."""

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

SLICE_BYTES = 300_000


def slice_of_sample(folder: Path) -> Path:
    """The first 300 KB of the sample corpus, cut at a word boundary, in ``folder``."""
    with gzip.open(REPO / "data/sample.txt.gz", "rb") as stream:
        head = stream.read(SLICE_BYTES)
    path = folder / "slice.txt"
    path.write_bytes(head[: head.rfind(b" ")])
    return path


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(path.name for path in REPO.glob("scripts/*.py")))
def test_each_script_starts(script: str) -> None:
    """``python scripts/X.py --help`` exits 0 from any folder: every import it makes is
    there (scripts/epoch_loss.py imported w2v.engine.sampling, renamed heldout_sample)."""
    done = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--help"],
                          capture_output=True, text=True, timeout=120, cwd=REPO / "tests")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The slice of the sample corpus in the test's own folder."""
    return slice_of_sample(tmp_path)


@pytest.fixture(scope="module")
def w2v_bench(tmp_path_factory) -> Path:
    """The folder the script ran in once: w2v alone, skip-gram NS, one epoch, on the slice,
    writing into bench-results/ by default."""
    folder = tmp_path_factory.mktemp("bench")
    corpus = slice_of_sample(folder)
    command = [sys.executable, str(REPO / "scripts/bench.py"), "--systems", "w2v", "--combos", "sg-ns",
               "--epochs", "1", "--corpus", str(corpus), "--workdir", str(folder / "work")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.slow
def test_bench_w2v_smoke(w2v_bench: Path) -> None:
    """The script runs w2v and writes, into bench-results/ under the folder it runs in by
    default (never docs/), a Markdown report, the JSON of its runs beside it and, where
    matplotlib is installed, a plot in img/; the report's commands name no folder of
    this machine."""
    tmp_path = w2v_bench
    out = tmp_path / "bench-results"
    runs = json.loads((out / "benchmarks.json").read_text())["runs"]
    assert [(r["system"], r["combo"]) for r in runs] == [("w2v", "sg-ns")]
    assert runs[0]["words_per_s"] > 0 and runs[0]["peak_rss_mib"] > 0
    assert runs[0]["analogy_pct"] is not None
    report = (out / "benchmarks.md").read_text()
    assert "| system | runs | wall s | kw/s |" in report and "| w2v | 1 |" in report
    assert "- Corpus: `slice.txt`, " in report  # (a corpus of unknown origin gets no note)
    assert (out / "img/benchmarks.png").is_file() == ("matplotlib is not installed" not in report)
    commands = report[report.index("## Commands") : report.index("## Notes")]
    assert " train slice.txt -o w2v-sg-ns-t2-r0.bin --report w2v-sg-ns-t2-r0.report.json " in commands
    assert str(tmp_path) not in report and "/" not in commands.split("```")[1].split()[0]
    assert runs[0]["output_updates"] > runs[0]["row_visits"] > 0 and 0 < runs[0]["train_s"] < runs[0]["wall_s"]
    roofs = json.loads((out / "benchmarks.json").read_text())["roofs"]
    assert [(r["repeat"], r["threads"], r["dim"]) for r in roofs] == [(0, 2, 100)]
    assert roofs[0]["sgemm_gflops"] > 0 and roofs[0]["row_updates_per_s"] > 0
    assert "| skip-gram+NS | " in report[report.index("## Roofline (w2v)") :]
    assert not list((tmp_path / "work").glob("*.report.json"))  # dropped with the vectors


def report_only(path: str, *options: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(REPO / "scripts/bench.py"), "--report-only", path, *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.slow
def test_report_only_makes_the_runs_report_again_from_its_json(w2v_bench: Path, tmp_path: Path) -> None:
    """--report-only NAME.json runs nothing and writes, beside the JSON (here a copy of a
    run's), the report the run wrote, the same to the byte, and the plot where matplotlib is
    installed; the JSON is left as it was."""
    out, again = w2v_bench / "bench-results", tmp_path / "again"
    again.mkdir()
    raw = (out / "benchmarks.json").read_bytes()
    (again / "benchmarks.json").write_bytes(raw)
    done = report_only(str(again / "benchmarks.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"bench: wrote {again / 'benchmarks.md'}\n"  # and no run's lines
    assert (again / "benchmarks.md").read_text() == (out / "benchmarks.md").read_text()
    assert (again / "img/benchmarks.png").is_file() == (out / "img/benchmarks.png").is_file()
    assert (again / "benchmarks.json").read_bytes() == raw


@pytest.mark.slow
def test_report_only_refuses_what_is_not_a_runs_json(tmp_path: Path) -> None:
    """A file that is not a run's NAME.json, or one more option, gets one line on stderr and
    a non-zero exit status, and nothing is written."""
    (tmp_path / "notes.md").write_text("# notes\n")
    (tmp_path / "broken.json").write_text('{"command": ')
    (tmp_path / "other.json").write_text('{"runs": []}\n')
    (tmp_path / "runs.json").write_text('{"command": "c", "date": "d", "machine": {}, "corpus": "c.txt", '
                                        '"corpus_tokens": 1, "settings": {"threads": 2}, "scorer": "s", "runs": [], '
                                        '"startup": null, "roofs": [], "notes": []}\n')  # fmt: skip
    expected = {
        "notes.md": "bench: --report-only takes the NAME.json a run wrote, not ",
        "missing.json": "bench: cannot read ",
        "broken.json": "bench: " + str(tmp_path / "broken.json") + " is not JSON: ",
        "other.json": "bench: " + str(tmp_path / "other.json") + " is not a benchmark's JSON (KeyError: 'command')",
        "runs.json": "bench: " + str(tmp_path / "runs.json") + " is not a benchmark's JSON (TypeError: ",
    }
    before = sorted(tmp_path.iterdir())
    for name, message in expected.items():
        done = report_only(str(tmp_path / name), cwd=tmp_path)
        assert done.returncode == 1 and done.stderr.startswith(message), (name, done.stderr)
        assert len(done.stderr.splitlines()) == 1, done.stderr
    done = report_only(str(tmp_path / "other.json"), "--repeat", "3", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.splitlines()[-1].endswith("--report-only runs nothing: drop --repeat")
    assert sorted(tmp_path.iterdir()) == before


def table_rows(report: str, heading: str) -> dict[str, list[str]]:
    """The rows of the first table after ``heading``, by first cell: the other cells."""
    rows = {}
    for line in report[report.index(heading) :].split("\n\n|", 1)[1].split("\n\n")[0].splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.slow
def test_bench_subword_combos_smoke(corpus: Path, tmp_path: Path) -> None:
    """sg-sub and cbow-sub run by w2v, fastText and gensim's FastText (a peer not installed is
    skipped with a note): a row per system with numbers, the syntactic column, the ratios to
    each peer and the subword targets' table."""
    import importlib.util

    peers = {"fasttext": "fastText", "gensim-ft": "gensim FastText (corpus_file)"}
    present = {s: name for s, name in peers.items() if importlib.util.find_spec(s.split("-")[0])}
    command = [sys.executable, str(REPO / "scripts/bench.py"), "--systems", "w2v,word2vec,fasttext,gensim-ft",
               "--combos", "sg-sub,cbow-sub", "--epochs", "1", "--dim", "16", "--bucket", "10000",
               "--corpus", str(corpus), "--workdir", str(tmp_path / "work"), "--name", "subwords"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "bench-results"
    written = {p.name for p in out.iterdir()}
    assert {"subwords.json", "subwords.md"} <= written and "benchmarks.md" not in written
    runs = json.loads((out / "subwords.json").read_text())["runs"]
    assert {(r["system"], r["combo"]) for r in runs} == {
        (s, c) for s in ["w2v", *present] for c in ("sg-sub", "cbow-sub")
    }  # word2vec.c learns no n-grams: left out
    assert all(r["words_per_s"] > 0 and r["peak_rss_mib"] > 0 and r["seed"] == 1 for r in runs)
    report = (out / "subwords.md").read_text()
    assert (out / "img/subwords.png").is_file() == ("matplotlib is not installed" not in report)
    for heading in ("### skip-gram+NS, subwords", "### CBOW+NS, subwords"):
        rows = table_rows(report, heading)
        assert set(rows) == {"w2v", *present.values()}
        for cells in rows.values():  # runs, wall, kw/s, peak, analogy, syntactic, rho
            assert cells[0] == "1" and all(float(cell.replace(",", "")) >= -1 for cell in cells[1:5] + cells[6:])
    assert "| system | runs | wall s | kw/s | peak MiB | analogy % | syntactic % | WS-353 rho |" in report
    for system, name in peers.items():
        if system in present:
            ratio_row = report.split(f"| skip-gram+NS, subwords | {name} | ")[1].splitlines()[0]
            assert float(ratio_row.split("|")[-2]) > 0  # the median of w2v's words/s over the peer's
        else:
            assert f"{name} is not installed" in report
    assert "| ≥ 4× fastText | ≥ 2× gensim FastText | analogy ≥ fastText − 1 | rho ≥ fastText − 0.01 |" in report
    assert " --subwords --alpha 0.05 --minn 3 --maxn 6 --bucket 10000 --ns-exponent 0.5 " in report


def test_subword_targets_use_means_of_quality_and_fasttexts_memory(monkeypatch) -> None:
    """The subword combos' targets: words/s ratios per pair against fastText (at least 4x) and
    gensim's FastText (2x), analogy and rho as means over the seeds against fastText's, peak
    memory at most fastText's + 10%; and each system's command carries fastText's settings."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    from bench.commands import train_command
    from bench.records import Context, Run, Settings
    from bench.systems import SUBWORD_SYSTEMS
    from bench.targets import target_checks

    def run(system: str, seed: int, kws: float, analogy: float, rho: float, peak: float) -> Run:
        made = Run(system, "sg-sub", seed - 1, 2, [], 0, 1.0, kws * 1e3, peak, analogy, rho)
        made.seed = seed
        return made

    runs = []
    for seed, analogy in zip((1, 2, 3), (30.0, 30.0, 33.0), strict=True):  # w2v: mean 31, median 30
        runs += [run("w2v", seed, 4000, analogy, 0.65, 1100), run("fasttext", seed, 1000, 32.0, 0.665, 1000)]
        runs.append(run("gensim-ft", seed, 2500, 20.0, 0.5, 500))
    assert target_checks(runs, "sg-sub", 2) == {
        "≥ 4× fastText": "PASS",
        "≥ 2× gensim FastText": "FAIL",
        "analogy ≥ fastText − 1": "PASS",
        "rho ≥ fastText − 0.01": "FAIL",
        "peak ≤ fastText + 10%": "PASS",
    }
    ctx = Context(Path("c.txt"), Path("c.lines.txt"), 10, Settings(2, 5, 100, 5, 5, 1e-4, 5), Path("w"),
                  Path("e"), {s: [s] for s in SUBWORD_SYSTEMS}, "w2v eval")  # fmt: skip
    commands = {s: " ".join(train_command(ctx, s, "cbow-sub", 2, Path("w/x.bin"), seed=2)) for s in ctx.binaries}
    for system, command in commands.items():
        assert " x.vec " in command.replace("w/", " ") and " --subwords --alpha 0.05 --minn 3 --maxn 6" in command
        assert "--bucket 2000000" in command and "--seed 2" in command
        assert ("--ns-exponent 0.5" in command) == (system != "fasttext")  # fastText's is 0.5, fixed
    assert commands["w2v"].endswith("--save-model w/x.npz --seed 2 -q")
    assert commands["gensim-ft"].startswith("gensim-ft c.lines.txt w/x.vec --sg 0 ")
    assert "--save-model w/x.bin" in commands["fasttext"]


def test_pword2vec_trains_skipgram_ns_alone_against_its_own_targets(monkeypatch, tmp_path: Path) -> None:
    """pWord2Vec runs skip-gram NS alone, with word2vec.c's settings, its window as one batch
    and no seed; it is skipped with one note where its binary is not found; its targets are
    2.5x its words/s and its quality (means over the rounds) less 1 point and 0.01."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    from bench.commands import train_command
    from bench.records import Context, Run, Settings
    from bench.systems import COMBOS, can_run, find_systems
    from bench.targets import PWORD2VEC_GOAL, target_checks

    assert [c for c in COMBOS if can_run("pword2vec", c)] == ["sg-ns"]
    monkeypatch.setenv("PATH", str(tmp_path))
    found, notes = find_systems(["w2v", "pword2vec"], None)
    assert "pword2vec" not in found and notes == [
        "pWord2Vec not found (scripts/build_pword2vec.sh builds it; --pword2vec PATH): skipped."
    ]
    binary = tmp_path / "pw"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert find_systems(["pword2vec"], str(binary)) == ({"pword2vec": [str(binary)]}, [])
    ctx = Context(Path("c.txt"), None, 10, Settings(2, 5, 100, 5, 5, 1e-4, 5), Path("w"), Path("e"),
                  {"pword2vec": ["pw"]}, "w2v eval")  # fmt: skip
    command = " ".join(train_command(ctx, "pword2vec", "sg-ns", 2, Path("w/x.bin"), seed=3))
    assert command == (
        "pw -train c.txt -output w/x.bin -size 100 -window 5 -negative 5 -sample 0.0001 -min-count 5 -iter 5 "
        "-threads 2 -binary 1 -alpha 0.025 -batch-size 11"
    )

    def run(system: str, repeat: int, kws: float, analogy: float, rho: float) -> Run:
        return Run(system, "sg-ns", repeat, 2, [], 0, 1.0, kws * 1e3, 500, analogy, rho)

    runs = []
    for repeat, (mine, theirs) in enumerate(((3000, 1000), (2000, 1000), (2600, 1000))):  # ratios 3, 2, 2.6
        runs += [run("w2v", repeat, mine, 36.0 + repeat, 0.670), run("pword2vec", repeat, theirs, 37.5, 0.675)]
    assert target_checks(runs, "sg-ns", 2, PWORD2VEC_GOAL) == {
        "≥ 2.5× pWord2Vec": "PASS",
        "analogy ≥ pWord2Vec − 1": "PASS",  # mean 37.0 against 37.5 - 1
        "rho ≥ pWord2Vec − 0.01": "PASS",
    }


def test_roofline_fractions_set_each_run_against_its_rounds_roofs(monkeypatch) -> None:
    """A w2v run's useful GFLOP/s are 6 dim flops per output-row update over its training
    seconds and its whole command's, set against sgemm's; its rows a second against the
    memory roof's row updates a second; the table takes medians over rounds."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    from bench.records import Results, Run, Settings
    from bench.roofs import fractions, roofline_table

    runs = []
    for repeat, wall in enumerate((10.0, 20.0, 40.0)):
        made = Run("w2v", "sg-ns", repeat, 2, [], 0, wall, 1e6, 100)
        made.train_s, made.output_updates, made.row_visits = wall / 2, 10**10, 2 * 10**9
        runs.append(made)
    roofs = {"sgemm_gflops": 100.0, "row_updates_per_s": 1e9}
    got = fractions(runs[0], roofs, 50)
    assert got is not None
    assert got.gflops == pytest.approx((600.0, 300.0)) and got.of_sgemm == pytest.approx((6.0, 3.0))
    assert got.mrows == pytest.approx((400.0, 200.0)) and got.of_memory == pytest.approx((0.4, 0.2))
    results = Results("c", "d", {}, "c.txt", 10, Settings(2, 5, 50, 5, 5, 1e-4, 5), "w2v eval", runs)
    results.roofs = [{"repeat": r, "rows": 1000, "dim": 50, "gb_per_s": 400.0, **roofs} for r in (0, 1, 2)]
    results.roofs[2]["sgemm_gflops"] = 50.0  # the slow round's runs against its own roof
    table = table_rows("\n".join(roofline_table(results)), "## Roofline")
    assert table == {"skip-gram+NS": ["300.0 / 150.0", "300% / 150%", "200 / 100", "20% / 10%"]}


def test_roofline_draws_rows_as_noise_words() -> None:
    """The memory roof's rows follow P(r) ∝ (r + 1)^-0.75 over the matrix's rows."""
    sys.path.insert(0, str(REPO / "scripts"))
    import roofline

    drawn = roofline.noise_rows(1000, 200_000, seed=1)
    assert drawn.dtype.name == "int32" and drawn.min() == 0 and drawn.max() < 1000
    weights = np.arange(1, 1001) ** -0.75
    expected = weights[:10] / weights.sum()
    observed = np.bincount(drawn, minlength=1000)[:10] / drawn.size
    np.testing.assert_allclose(observed, expected, rtol=0.05)
    assert roofline.sgemm_gflops(tries=1, n=64) > 0


def run_ab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(REPO / "scripts/ab_kernels.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.slow
def test_ab_kernels_times_two_checkouts_on_alternated_runs(tmp_path: Path) -> None:
    """This checkout against itself on the sample corpus: a table of every combination
    at every size, the variant's speed over the base per round, and every run in --json."""
    record_file = tmp_path / "ab.json"
    done = run_ab(str(REPO), "--corpus", str(REPO / "data/sample.txt.gz"), "--threads", "1", "--dims", "16,8",
                  "--combos", "sg-ns,cbow-hs", "--rounds", "2", "--json", str(record_file), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "2 rounds of 1 epoch(s) on sample.txt.gz, 1 thread(s), window 5, sample 0.0001"
    assert lines[1:3] == [f"base {REPO}", f"variant {REPO}"]
    rows = [line.split(" | ")[0].lstrip("| ") for line in lines if line.startswith("| ") and "dim" in line]
    assert rows == ["skip-gram NS, dim 16", "skip-gram NS, dim 8", "CBOW HS, dim 16", "CBOW HS, dim 8"]
    assert lines[-1].startswith("median over the 4 case(s): ")
    record = json.loads(record_file.read_text())
    assert list(record["rates"]) == rows
    assert np.array(record["rates"]["CBOW HS, dim 8"]).shape == (2, 2)  # rounds, sides
    assert min(min(min(pair) for pair in runs) for runs in record["rates"].values()) > 0


@pytest.mark.slow
def test_ab_kernels_times_two_settings_of_one_checkout(tmp_path: Path) -> None:
    """--base-args and --variant-args: each side's own options, named on its line."""
    done = run_ab(str(REPO), "--corpus", str(REPO / "data/sample.txt.gz"), "--threads", "1", "--dims", "16",
                  "--combos", "sg-ns", "--rounds", "2", "--base-args=--negative 2", "--variant-args=--nce 2",
                  cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == f"base {REPO} --negative 2"
    assert lines[2] == f"variant {REPO} --nce 2"
    assert any(line.startswith("| skip-gram NS, dim 16 | ") for line in lines)


@pytest.mark.slow
def test_ab_kernels_refuses_an_unknown_combination_or_size(tmp_path: Path) -> None:
    for option in (["--combos", "sg-xx"], ["--dims", "100,x"], ["--dims", "0"]):
        done = run_ab(str(REPO), "--corpus", str(REPO / "data/sample.txt.gz"), *option, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "expected a comma-separated list" in done.stderr or "must be at least 1" in done.stderr


def test_ab_kernels_runs_each_checkouts_own_code(tmp_path: Path, monkeypatch) -> None:
    """Each side imports the w2v of its checkout, whatever the working directory
    (Python puts it first on the path: run from this checkout, both sides would
    import this checkout's code and compare it with itself)."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    monkeypatch.chdir(REPO)
    import ab_kernels

    copy = tmp_path / "copy"
    shutil.copytree(REPO / "w2v", copy / "w2v", ignore=shutil.ignore_patterns("__pycache__"))
    assert ab_kernels.imported_from(copy) == (copy / "w2v").resolve()
    assert ab_kernels.imported_from(REPO) == (REPO / "w2v").resolve()


@pytest.mark.slow
def test_ab_kernels_refuses_a_folder_without_w2v(tmp_path: Path) -> None:
    done = run_ab(str(tmp_path), "--corpus", str(REPO / "data/sample.txt.gz"), cwd=tmp_path)
    assert done.returncode == 2
    assert "not a checkout of w2v" in done.stderr


def test_the_gensim_copy_never_writes_through_a_planted_link(tmp_path: Path, monkeypatch) -> None:
    """The benchmark's line-cut corpus copy for gensim goes through a temporary file no one can
    plant a link at (it was NAME.tmp<pid>)."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    from bench.corpus import GENSIM_LINE_TOKENS, gensim_copy

    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"a b c\nd e\n")
    (tmp_path / "victim").write_bytes(b"precious\n")
    size, mtime = corpus.stat().st_size, int(corpus.stat().st_mtime)
    stem = f"c.lines{GENSIM_LINE_TOKENS}-{size}-{mtime}"
    (tmp_path / f"{stem}.tmp{os.getpid()}").symlink_to(tmp_path / "victim")
    copy = gensim_copy(corpus, tmp_path)
    assert copy.read_bytes() == b"a b c d e\n" and (tmp_path / "victim").read_bytes() == b"precious\n"
    assert not copy.is_symlink()


def test_ab_quality_pairs_its_sides_by_seed(monkeypatch) -> None:
    """Means ± sd per side; the difference row is over the seeds both sides have."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    import ab_quality

    def record(analogy: float, ws: float, bits: float) -> dict:
        return {"analogy": analogy, "ws353": ws, "score": {"bits_per_word": bits}}

    results = {
        "CBOW HS/base/seed 1": record(0.30, 0.60, 10.0),
        "CBOW HS/variant/seed 1": record(0.31, 0.62, 9.9),
        "CBOW HS/base/seed 2": record(0.32, 0.64, 10.2),
        "CBOW HS/variant/seed 2": record(0.35, 0.64, 10.0),
        "CBOW HS/variant/seed 3": record(0.50, 0.70, 9.0),
    }
    rows = ab_quality.render(results).splitlines()[2:]
    assert rows[0] == "| CBOW HS | base | 2 | 31.00 ± 1.41 | 0.6200 ± 0.0283 | 10.1000 ± 0.1414 |"
    assert rows[1].startswith("| CBOW HS | variant | 3 | 38.67 ± ")
    assert rows[2] == "| CBOW HS | variant − base | 2 | +2.00 ± 1.41 | +0.0100 ± 0.0141 | -0.1500 ± 0.0707 |"


def test_kernel_profile_attributes_samples_to_innermost_loops(monkeypatch) -> None:
    import collections

    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    import profile_kernel

    instructions = [  # an outer loop 0x0-0x20 around an inner one 0x8-0x18
        (0x0, "mov", "%rax,%rbx"),
        (0x8, "vfmadd231ps", "%zmm1,%zmm2,%zmm3"),
        (0x10, "vmovups", "%zmm3,(%rdi)"),
        (0x18, "jne", "0x8"),
        (0x1A, "vaddss", "%xmm1,%xmm2,%xmm2"),
        (0x20, "jmp", "0x0"),
        (0x22, "ret", ""),
        (0x24, "jmp", "0x30"),  # a jump forward is no loop
    ]
    assert profile_kernel.loops(instructions) == [(0x0, 0x20), (0x8, 0x18)]
    assert profile_kernel.innermost(0x10, [(0x0, 0x20), (0x8, 0x18)]) == (0x8, 0x18)
    assert profile_kernel.innermost(0x1A, [(0x0, 0x20), (0x8, 0x18)]) == (0x0, 0x20)
    assert profile_kernel.innermost(0x22, [(0x0, 0x20)]) is None
    samples = collections.Counter({0x8: 5, 0x10: 1, 0x1A: 3, 0x22: 1})
    header, _rule, inner, outer, outside = profile_kernel.loop_table(instructions, samples, top=3)
    assert header.startswith("| loop (offsets) | share | instructions | fma | vector loads/stores |")
    assert inner == "| 8-18 | 60.0% | 3 | 1 | 1 | 0 | 0 | 0 | 0 |"
    assert outer.startswith("| 0-20 | 30.0% | 6 | 1 | 1 | 0 | 1 |")  # counts the inner loop's body too
    assert outside.startswith("| outside loops | 10.0% |")
