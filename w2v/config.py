"""Every training setting in one frozen dataclass, its defaults, validation and TOML presets."""

import dataclasses
import difflib
import math
import os
import reprlib
import sys
import tomllib
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from w2v.errors import ConfigError
from w2v.files import without_bom
from w2v.losses import LOSSES, WORD_LOSSES, option

MODELS = ("skipgram", "cbow")
TREES = ("huffman", "balanced")
# how a cluster's replicas are combined (``rounds.combine``)
COMBINE = ("auto", "sum", "mean", "adaptive", "momentum", "mixed")
MAX_COUNT = 2**31 - 1  # dim and negative: larger values overflow the kernels' integers
# Each epoch has records (a loss, examples and batches per thread: 24 bytes x threads, so 240 MB at
# MAX_THREADS) and work besides the kernel's (threads started, weights checked, perhaps a checkpoint);
# more passes than this over a corpus is a longer corpus (repeat it), which costs neither
MAX_EPOCHS = 10_000
MAX_SENTENCE_TOKENS = 10_000  # a longer sentence is cut into pieces of this many tokens (``corpus.sources``)
# No context crosses a piece's end: a wider window reaches no further (and would cost the
# kernel's scratch space and scoring's time for nothing).
MAX_WINDOW = MAX_SENTENCE_TOKENS
# The longest character n-gram --minn and --maxn may name: an n-gram never runs past its
# word, so a longer one changes nothing but the work (fastText's are 3 to 6 by default).
MAX_NGRAM = 100
# Each sweep hands every right partition round the machines: more than this many an epoch
# moves the output rows far more often than they are trained
MAX_SWEEPS = 1024
MAX_THREADS = 1024  # more threads only wait for the others (and a million would take minutes to start)
DEFAULT_PRUNE_AT = 10_000_000  # distinct words held while counting (word2vec.c: 21M)
# The presets, NAME.toml: configs/ at the top of a checkout, shipped in the wheel as the
# package w2v.configs (pyproject.toml maps one to the other).
SHIPPED_PRESETS = Path(__file__).parent / "configs"
PRESETS = SHIPPED_PRESETS if SHIPPED_PRESETS.is_dir() else Path(__file__).parents[1] / "configs"


@dataclass(frozen=True)
class TrainConfig:
    """Training settings; defaults are word2vec.c's (v0.1c).

    ``negative=None`` means 5, or 0 when another loss is on (``hs``, ``nce``,
    ``sampled_softmax`` or ``softmax``: each alone turns negative sampling off);
    ``alpha=None`` means 0.025 for skip-gram and 0.05 for CBOW; ``min_alpha=None``
    means alpha * 1e-4; ``threads=None`` all cores; ``streams=None`` one per thread
    (word2vec.c's layout: each thread's part of the file, ``idstream.evenly_spaced``).
    Use ``resolved()`` to fill those in and check everything.
    """

    model: str = "skipgram"
    dim: int = 100
    window: int = 5
    negative: int | None = None
    hs: bool = False
    tree: str = "huffman"  # hierarchical softmax's tree: "huffman" or "balanced"
    nce: int = 0  # noise-contrastive estimation with this many noise words
    sampled_softmax: int = 0  # importance-sampled softmax with this many candidates
    softmax: bool = False  # the full softmax over the vocabulary
    self_norm: float = 0.0  # softmax: weight of the (log Z)^2 penalty
    ns_exponent: float = 0.75
    sample: float = 1e-3
    min_count: int = 5
    max_vocab: int | None = None
    prune_at: int = DEFAULT_PRUNE_AT
    epochs: int = 5
    alpha: float | None = None
    min_alpha: float | None = None
    cbow_mean: bool = True
    subwords: bool = False  # fastText's model: a word's input is the mean of its row and its n-grams' rows
    minn: int = 3  # --subwords: the shortest character n-gram (fastText's default)
    maxn: int = 6  # and the longest; 0: no n-grams
    bucket: int = 2_000_000  # rows the n-grams are hashed into
    threads: int | None = None
    streams: int | None = None  # evenly spaced parts of the corpus trained in turn, a batch of each; None: one a thread
    seed: int = 1
    batch_words: int = 10_000
    sync_words: int | None = None  # --cluster: words a worker trains a round; None: ``rounds.round_words``
    combine: str = "auto"  # --cluster: how the workers' changes are combined, one of COMBINE (``rounds``)
    sweeps: int = 4  # --cluster, skip-gram NS in blocks: sweeps an epoch (``cluster.blocks``)
    rounds: bool = False  # --cluster: skip-gram NS in rounds of replicas too, as every other model

    def resolved(self) -> "TrainConfig":
        """A copy with every ``None`` default filled in, validated (ConfigError if not)."""
        others = any(getattr(self, loss.setting) for loss in LOSSES.values() if loss.setting != "negative")
        negative = self.negative if self.negative is not None else (0 if others else 5)
        alpha = self.alpha if self.alpha is not None else (0.05 if self.model == "cbow" else 0.025)
        threads = self.threads if self.threads is not None else (os.cpu_count() or 1)
        config = dataclasses.replace(
            self,
            negative=negative,
            alpha=alpha,
            min_alpha=self.min_alpha if self.min_alpha is not None else alpha * 1e-4,
            threads=threads,
            streams=self.streams if self.streams is not None else threads,
        )
        config.validate()
        return config

    def validate(self) -> None:
        """Raise ConfigError naming the first invalid setting."""
        if self.model not in MODELS:
            raise ConfigError(f"model must be one of {', '.join(MODELS)}, not {self.model!r}")
        for name in (
            "dim",
            "window",
            "epochs",
            "min_count",
            "prune_at",
            "batch_words",
            "threads",
            "streams",
            "sync_words",
            "sweeps",
        ):
            value = getattr(self, name)
            if value is None and name in ("threads", "sync_words"):  # None: all cores, ``rounds.round_words``
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, not {value!r}")
        self.check_types()  # every setting's type, before the comparisons below
        self.check_bounds()
        for name in ("sample", "ns_exponent"):
            if not math.isfinite(getattr(self, name)):
                raise ConfigError(f"{name} must be a finite number, not {getattr(self, name)}")
        if self.max_vocab is not None and self.max_vocab <= 0:
            raise ConfigError(f"max_vocab must be a positive integer, not {self.max_vocab!r}")
        if self.negative is not None and self.negative < 0:
            raise ConfigError(f"negative must be 0 or more, not {self.negative}")
        self.validate_losses()
        self.validate_subwords()
        if self.sample < 0:
            raise ConfigError(f"sample must be 0 (off) or positive, not {self.sample}")
        for name in ("alpha", "min_alpha"):
            value = getattr(self, name)
            if value is not None and not 0 < value < math.inf:
                raise ConfigError(f"{name} must be positive and finite, not {value}")
        if self.alpha is not None and self.min_alpha is not None and self.min_alpha > self.alpha:
            raise ConfigError(f"min_alpha ({self.min_alpha}) must not exceed alpha ({self.alpha})")
        if self.combine not in COMBINE:
            raise ConfigError(f"combine must be one of {', '.join(COMBINE)}, not {self.combine!r}")
        if not 0 <= self.seed < 2**64:
            raise ConfigError(f"seed must be in [0, 2**64), not {self.seed}")

    def check_bounds(self) -> None:
        """ConfigError for a count past the most the kernels and the run take (of a
        setting of the right type, ``check_types``)."""
        for name in ("dim", "negative"):
            value = getattr(self, name)
            if value is not None and value > MAX_COUNT:
                raise ConfigError(f"{name} must be at most {MAX_COUNT:,}, not {value:,}")
        if self.window > MAX_WINDOW:
            raise ConfigError(
                f"window must be at most {MAX_WINDOW:,}, not {self.window:,}: "
                f"no context reaches past a sentence piece of {MAX_SENTENCE_TOKENS:,} tokens"
            )
        if self.epochs > MAX_EPOCHS:
            raise ConfigError(
                f"epochs must be at most {MAX_EPOCHS:,}, not {self.epochs:,}",
                f"--epochs must be at most {MAX_EPOCHS:,}, not {self.epochs:,}",
            )
        if self.sweeps > MAX_SWEEPS:
            raise ConfigError(f"sweeps must be at most {MAX_SWEEPS:,}, not {self.sweeps:,}")
        if self.threads is not None and self.threads > MAX_THREADS:
            raise ConfigError(f"threads must be at most {MAX_THREADS:,}, not {self.threads:,}")

    def check_types(self) -> None:
        """ConfigError for a setting whose value is not of its field's type
        (``SETTING_KINDS``; ``None`` only where the field allows it). A model file's
        settings come from JSON, which may hold anything, and the kernels compile for
        the types they are given: ``negative=2.5`` would compile for minutes, then fail."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            kinds = typing.get_args(field.type) or (field.type,)
            if value is None and type(None) in kinds:
                continue
            name, is_kind = SETTING_KINDS[kinds[0]]
            if not is_kind(value):  # a file's value may be long: reprlib shortens it
                raise ConfigError(f"{field.name} must be {name}, not {reprlib.repr(value)}")

    @property
    def output_loss(self) -> str | None:
        """The loss of the word output vectors (``syn1neg``), a name of
        ``losses.WORD_LOSSES`` ("ns", "nce", "sampled_softmax" or "softmax"), or None
        (hierarchical softmax alone)."""
        return next((loss.name for loss in WORD_LOSSES if getattr(self, loss.setting)), None)

    @property
    def losses(self) -> list[str]:
        """The names (``losses.LOSSES``) of the losses trained: ``hs`` first, then the
        word output vectors' (``output_loss``)."""
        return (["hs"] if self.hs else []) + ([self.output_loss] if self.output_loss else [])

    def summary(self) -> str:
        """The settings that decide the vectors, in one line, under ``w2v train``'s
        option names (of a resolved config): ``skipgram with negative sampling: dim 100,
        window 5, negative 5, sample 0.001, alpha 0.025, epochs 5, threads 2, min-count 5``,
        and ``subwords (minn 3, maxn 6, bucket 2,000,000)`` for fastText's model."""
        model = f"{self.model} (sum)" if self.model == "cbow" and not self.cbow_mean else self.model
        losses = [LOSSES[name] for name in self.losses]
        titles = [loss.title for loss in losses]
        if self.tree != "huffman":
            titles[0] += f" ({self.tree} tree)"
        values: dict[str, float | None] = {"dim": self.dim, "window": self.window}
        drawn = losses[-1]  # the word output vectors' loss, if any, comes last
        if drawn.draws:
            values[option(drawn)[2:]] = getattr(self, drawn.setting)
        if self.self_norm:
            values["self-norm"] = self.self_norm
        values |= {"sample": self.sample, "alpha": self.alpha, "epochs": self.epochs, "threads": self.threads}
        values |= {"min-count": self.min_count, "max-vocab": self.max_vocab}
        shown = named_values({name: value for name, value in values.items() if value is not None})
        if self.subwords:
            ngrams = f"minn {self.minn}, maxn {self.maxn}, bucket {self.bucket:,}"
            shown += f", subwords ({ngrams if self.maxn else 'maxn 0: no n-grams'})"
        return f"{model} with {' and '.join(titles)}: {shown}"

    def record(self) -> dict:
        """The settings as JSON holds them (``--report``, ``w2v info --json``): every
        field, and ``losses``, the names of the losses trained."""
        return {**dataclasses.asdict(self), "losses": self.losses}

    @property
    def samples(self) -> int:
        """Noise words or candidates the output loss draws per example (0 for none)."""
        loss = LOSSES.get(self.output_loss or "")
        return (getattr(self, loss.setting) or 0) if loss and loss.draws else 0

    def validate_losses(self) -> None:
        """ConfigError for no loss, two losses of the word output vectors, or a
        loss setting that the chosen losses do not use."""
        for name in (loss.setting for loss in WORD_LOSSES if loss.draws and loss.setting != "negative"):
            value = getattr(self, name)  # negative's own check is validate's (None: its default)
            if not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
                raise ConfigError(f"{name} must be 0 (off) or a positive integer, not {value!r}")
        chosen = [loss for loss in WORD_LOSSES if getattr(self, loss.setting)]
        if len(chosen) > 1:
            flags = " and ".join(option(loss) for loss in chosen)
            names = " and ".join(loss.setting for loss in chosen)
            raise ConfigError(
                f"{names} exclude each other: choose one loss for the output vectors",
                f"{flags} exclude each other: choose one loss for the output vectors",
            )
        if not chosen and not self.hs:
            raise ConfigError(
                "nothing to train: negative=0 and hs=False (give hs=True, or negative=N > 0)",
                "nothing to train: --negative 0 and no --hs (give --hs, or --negative N > 0)",
            )
        if self.tree not in TREES:
            raise ConfigError(f"tree must be one of {', '.join(TREES)}, not {self.tree!r}")
        if self.tree != "huffman" and not self.hs:
            raise ConfigError(
                "tree applies to hierarchical softmax only: add hs=True",
                "--tree applies to hierarchical softmax only: add --hs",
            )
        if not (math.isfinite(self.self_norm) and self.self_norm >= 0):
            raise ConfigError(f"self_norm must be 0 or positive, not {self.self_norm}")
        if self.self_norm and not self.softmax:
            raise ConfigError(
                "self_norm applies to the full softmax only: add softmax=True",
                "--self-norm applies to the full softmax only: add --softmax",
            )

    def validate_subwords(self) -> None:
        """ConfigError for n-gram settings out of range, or given without subwords.
        ``maxn`` 0 turns n-grams off (each word its own row alone); otherwise
        ``1 <= minn <= maxn <= MAX_NGRAM`` and ``1 <= bucket <= MAX_COUNT``."""
        defaults = {field.name: field.default for field in dataclasses.fields(TrainConfig)}
        for name in ("minn", "maxn", "bucket"):
            if getattr(self, name) != defaults[name] and not self.subwords:
                raise ConfigError(
                    f"{name} applies to subword vectors only: add subwords=True",
                    f"--{name} applies to subword vectors only: add --subwords",
                )
        if self.maxn != 0 and not 1 <= self.minn <= self.maxn <= MAX_NGRAM:
            raise ConfigError(
                f"n-grams run from minn to maxn characters, 1 <= minn <= maxn <= {MAX_NGRAM} "
                f"(or maxn=0: none), not minn={self.minn}, maxn={self.maxn}",
                f"n-grams run from --minn to --maxn characters, 1 <= minn <= maxn <= {MAX_NGRAM} "
                f"(or --maxn 0: none), not --minn {self.minn} --maxn {self.maxn}",
            )
        if not 1 <= self.bucket <= MAX_COUNT:
            raise ConfigError(
                f"bucket must be from 1 to {MAX_COUNT:,}, not {self.bucket:,}",
                f"--bucket must be from 1 to {MAX_COUNT:,}, not {self.bucket:,}",
            )

    @property
    def ngram_rows(self) -> int:
        """Rows of the input matrix past the words': ``bucket`` with subwords that have
        n-grams, else none."""
        return self.bucket if self.subwords and self.maxn > 0 else 0


def named_values(values: dict[str, float]) -> str:
    """``dim 100, sample 0.001, bucket 2,000,000``: each setting's name and value, an
    integer with thousands separated, a number as ``%g``."""
    return ", ".join(
        f"{name} {value:,}" if isinstance(value, int) else f"{name} {value:g}" for name, value in values.items()
    )


# By a field's type: how a message names it, and whether a value is of it.
SETTING_KINDS: dict[Any, tuple[str, Callable[[Any], bool]]] = {
    int: ("an integer", lambda value: isinstance(value, int) and not isinstance(value, bool)),
    float: ("a number", lambda value: isinstance(value, float) or is_float_sized_integer(value)),
    bool: ("true or false", lambda value: isinstance(value, int)),  # an integer too, as its truth: gensim's hs=1
    str: ("a string", lambda value: isinstance(value, str)),
}


def is_float_sized_integer(value: Any) -> bool:
    """Whether ``value`` is an integer (no bool) that converts to a float."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= sys.float_info.max


TRAIN_FIELDS = {field.name for field in dataclasses.fields(TrainConfig)}

# gensim's Word2Vec keywords that w2v names otherwise, and what to write instead (from the value given);
# window, min_count, negative, hs, sample, alpha, min_alpha, seed, cbow_mean, ns_exponent, epochs and
# batch_words are the same in both
GENSIM_KEYWORDS: dict[str, Callable[[Any], str]] = {
    "vector_size": lambda value: f"dim={value!r}",
    "size": lambda value: f"dim={value!r}",
    "sg": lambda value: "model='skipgram'" if value else "model='cbow'",
    "workers": lambda value: f"threads={value!r}",
    "iter": lambda value: f"epochs={value!r}",
    "max_vocab_size": lambda value: f"prune_at={value!r} (distinct words held while counting)",
    "max_final_vocab": lambda value: f"max_vocab={value!r}",
    "sentences": lambda _: "w2v.train(sentences, ...): the corpus is the first argument",
    "corpus_file": lambda value: f"w2v.train({value!r}, ...): a file name is a corpus",
    "callbacks": lambda _: (
        "on_epoch_end=function(end), given end.epoch, end.loss and end.vectors (gensim's model.wv) after each epoch "
        "(return True to stop), or on_progress=function(words, total, alpha, loss)"
    ),
    "compute_loss": lambda _: "nothing: the loss is always computed (vectors.report.epoch_loss)",
}


# ``w2v train``'s aliases of settings, as a preset may spell them too
SETTING_ALIASES = {"size": "dim", "iter": "epochs"}


def keyword_settings(preset: str | None, settings: dict) -> dict:
    """The settings of a ``w2v.train(config=..., **settings)`` call, as ``w2v train``
    reads its options: a preset's (``config``: a shipped name or a TOML file,
    ``preset_settings``) under the keywords given, and ``cbow_sum`` (the command's
    ``--cbow-sum``) as ``cbow_mean``'s opposite."""
    given = cbow_as_mean(settings)
    if preset is None:
        return given
    return {**cbow_as_mean(preset_settings(preset)), **given}


def preset_settings(name_or_path: str) -> dict:
    """A preset's settings (``load_preset``) as ``w2v.train``'s keywords: ``TrainConfig``
    fields and ``cbow_sum``, ``size`` and ``iter`` taken for ``dim`` and ``epochs``.
    ConfigError for an option only the command takes (``output``, ``classes``...)."""
    path = preset_path(name_or_path)
    settings = load_preset(path, None, SETTING_ALIASES)
    settings = {SETTING_ALIASES.get(key, key): value for key, value in settings.items()}
    others = sorted(set(settings) - TRAIN_FIELDS - {"cbow_sum"})
    if others:
        raise ConfigError(
            f"preset {path} sets {', '.join(others)}: w2v.train takes the training settings of a preset "
            "(w2v.TrainConfig's fields and cbow_sum), the command's other options (output, classes...) not"
        )
    return settings


def cbow_as_mean(settings: dict) -> dict:
    """``settings`` with ``cbow_sum`` (true: sum CBOW's context vectors) given as
    ``cbow_mean``, its opposite; ConfigError where both are given, or ``cbow_sum`` is
    not true or false."""
    if "cbow_sum" not in settings:
        return settings
    rest = {key: value for key, value in settings.items() if key != "cbow_sum"}
    cbow_sum = settings["cbow_sum"]
    if "cbow_mean" in rest:
        raise ConfigError("give cbow_sum or cbow_mean, not both: cbow_sum=True is cbow_mean=False")
    name, is_kind = SETTING_KINDS[bool]
    if not is_kind(cbow_sum):
        raise ConfigError(f"cbow_sum must be {name}, not {reprlib.repr(cbow_sum)}")
    return {**rest, "cbow_mean": not cbow_sum}


def check_setting_names(settings: dict) -> None:
    """ConfigError for a keyword that is no ``TrainConfig`` field: one of gensim's gets
    w2v's name (``vector_size is gensim's name: use dim=10``), another a close spelling."""
    for name, value in settings.items():
        if name in TRAIN_FIELDS:
            continue
        if name in GENSIM_KEYWORDS:
            raise ConfigError(f"{name} is gensim's name: use {GENSIM_KEYWORDS[name](value)}")
        close = difflib.get_close_matches(name, sorted(TRAIN_FIELDS), n=1)
        hint = f"did you mean {close[0]}?" if close else f"the settings are {', '.join(sorted(TRAIN_FIELDS))}"
        raise ConfigError(f"unknown setting {name!r} ({hint})")


def preset_names() -> list[str]:
    """The names of the presets shipped with w2v (``--config NAME``), sorted."""
    return sorted(path.stem for path in PRESETS.glob("*.toml"))


def preset_path(name_or_path: str) -> str:
    """The file ``--config`` means: a shipped preset for a bare name (no path separator,
    no ``.toml``: ``cbow-ns``), else the path as given. ConfigError for an unknown name."""
    separators = (os.sep, os.altsep or os.sep)
    if name_or_path.endswith(".toml") or any(sep in name_or_path for sep in separators):
        return name_or_path
    path = PRESETS / f"{name_or_path}.toml"
    if not path.is_file():
        raise ConfigError(f"no preset named {name_or_path!r}: use one of {', '.join(preset_names())}, or a FILE.toml")
    return str(path)


MAX_PRESET_BYTES = 1 << 20  # a preset sets a few dozen options (the shipped ones: 200 bytes); /dev/zero never ends


def read_preset(path: str) -> bytes:
    """The bytes of the preset file ``path``: ConfigError if it cannot be read or holds
    more than ``MAX_PRESET_BYTES``."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PRESET_BYTES + 1)
    except OSError as err:
        stem = Path(path).stem  # a missing x/cbow-ns.toml: the user means the shipped preset
        shipped = stem in preset_names() and not os.path.exists(path)
        hint = f" (the preset shipped with w2v: --config {stem})" if shipped else ""
        raise ConfigError(f"cannot read preset {path}: {err.strerror}{hint}") from None
    if len(data) > MAX_PRESET_BYTES:
        raise ConfigError(f"preset {path} is larger than {MAX_PRESET_BYTES:,} bytes: not a preset")
    return data


def parse_preset(path: str, data: bytes) -> dict:
    """The TOML document ``data`` of the preset ``path``, past the UTF-8 byte-order mark
    it may start with (which TOML does not take); ConfigError if it is not UTF-8 (as TOML
    must be) or not valid TOML, arrays nested past Python's recursion limit included."""
    text = without_bom(data)
    try:
        return tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError as err:
        offset = err.start + len(data) - len(text)  # in the file, the mark included
        raise ConfigError(
            f"preset {path} is not UTF-8 text (byte 0x{data[offset]:02x} at offset {offset:,}), as TOML must be"
        ) from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"invalid TOML in preset {path}: {err}") from None
    except RecursionError:  # tomllib parses a nested array or inline table by recursion
        raise ConfigError(f"invalid TOML in preset {path}: arrays or tables nested too deeply") from None


def load_preset(name_or_path: str, allowed: set[str] | None, aliases: dict[str, str] | None = None) -> dict:
    """Read a TOML preset, a shipped one by name or a file (``preset_path``), into a dict
    of settings (dashes in keys become underscores).

    Keys may sit at the top level, under a ``[train]`` table, or both. Raises ConfigError
    for an unknown name, an unreadable or invalid file, for a key not in ``allowed``
    (None: any key), for a setting given twice (``min-count`` and ``min_count``, at the
    top and under ``[train]``, or under two names of ``aliases``: key to the setting it
    names, as ``size`` names ``dim``), where one would silently win, and for a value
    that is not a number, a string or a boolean (a list, a table, a date).
    """
    path = preset_path(name_or_path)
    data = parse_preset(path, read_preset(path))
    tables = {"": data}
    if isinstance(data.get("train"), dict):
        tables = {"": {key: value for key, value in data.items() if key != "train"}, "train.": data["train"]}
    settings: dict = {}
    written: dict[str, str] = {}  # by the setting a key names: the key as the file writes it
    for prefix, table in tables.items():
        for key, value in table.items():
            name = key.replace("-", "_")
            setting = (aliases or {}).get(name, name)
            if setting in written:
                twice = f"{written[setting]} and {prefix}{key}"
                raise ConfigError(f"preset {path} sets {setting} twice ({twice}): keep one")
            written[setting], settings[name] = prefix + key, value
    unknown = sorted(set(settings) - allowed) if allowed is not None else []
    if unknown:
        raise ConfigError(f"unknown setting in preset {path}: {', '.join(unknown)}")
    for key, value in settings.items():
        if not isinstance(value, (str, int, float)):  # bool is an int
            raise ConfigError(f"setting {key} in preset {path} must be a number, a string or true/false, not {value!r}")
    return settings
