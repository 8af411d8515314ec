"""What a benchmark holds: the training settings every system shares, the record of one
measured command, what every run needs (``Context``), and a run's JSON read back for its
report (``Results``)."""

import dataclasses
from pathlib import Path


@dataclasses.dataclass
class Settings:
    """Training settings shared by every system."""

    threads: int
    epochs: int
    dim: int
    window: int
    negative: int
    sample: float
    min_count: int
    minn: int = 3  # the subword combos' n-gram lengths and buckets: fastText's defaults
    maxn: int = 6
    bucket: int = 2_000_000


@dataclasses.dataclass
class Run:
    """One measured command."""

    system: str
    combo: str
    repeat: int
    threads: int
    command: list[str]
    returncode: int
    wall_s: float
    words_per_s: float
    peak_rss_mib: float
    analogy_pct: float | None = None
    ws353_rho: float | None = None
    scorer: str | None = None
    error: str | None = None
    syntactic_pct: float | None = None  # analogy accuracy on the gram* sections alone
    seed: int | None = None  # None: a system that takes no seed (word2vec.c, pWord2Vec)
    train_s: float | None = None  # w2v: the training alone (its --report), for the roofline
    output_updates: int | None = None  # w2v: the kernel's output-row updates (6 x dim flops each)
    row_visits: int | None = None  # w2v: the rows the kernel read and wrote
    vocab_size: int | None = None  # w2v: the words of its vocabulary


@dataclasses.dataclass
class Context:
    """What every run needs: paths, settings, the scorer, and notes for the report."""

    corpus: Path
    gensim_corpus: Path | None
    tokens: int
    settings: Settings
    workdir: Path
    eval_dir: Path
    binaries: dict[str, list[str]]
    scorer: str
    notes: list[str] = dataclasses.field(default_factory=list)
    w2v_model_flag: str = "--save-model"  # how w2v writes its full model with subwords (W2V_MODEL_FILES)
    roofs: list[dict] = dataclasses.field(default_factory=list)  # scripts/roofline.py's, one per round


@dataclasses.dataclass
class Results:
    """A benchmark's JSON read back (``results_of``): everything its report shows. The
    systems and combos are those that ran, in the order they ran (each runs in every round)."""

    command: str  # the benchmark's command line, as the report shows it
    date: str
    machine: dict  # machine_info()
    corpus: str  # the corpus' file name
    tokens: int
    settings: Settings
    scorer: str
    runs: list[Run]
    startup: dict | None = None  # measure_startup()'s, with --startup
    roofs: list[dict] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def systems(self) -> list[str]:
        """The systems that ran, in the order they first ran."""
        return list(dict.fromkeys(run.system for run in self.runs))

    @property
    def combos(self) -> list[str]:
        """The combos that ran, in the order they ran."""
        return list(dict.fromkeys(run.combo for run in self.runs))

    def ran(self, combo: str) -> list[str]:
        """The systems that ran ``combo``, in the order they ran it."""
        return list(dict.fromkeys(run.system for run in self.runs if run.combo == combo))


def results_of(raw: dict) -> Results:
    """``raw``, a benchmark's JSON as loaded, as ``Results`` (a JSON from before the roofline
    has no roofs); KeyError or TypeError where it is not one."""
    return Results(
        command=raw["command"],
        date=raw["date"],
        machine=raw["machine"],
        corpus=Path(raw["corpus"]).name,
        tokens=raw["corpus_tokens"],
        settings=Settings(**raw["settings"]),
        scorer=raw["scorer"],
        runs=[Run(**run) for run in raw["runs"]],
        startup=raw["startup"],
        roofs=raw.get("roofs", []),
        notes=raw["notes"],
    )
