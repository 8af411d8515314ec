"""Every training setting in one frozen dataclass, its defaults, validation and TOML presets."""

import dataclasses
import difflib
import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from w2v.errors import ConfigError

MODELS = ("skipgram", "cbow")
MAX_COUNT = 2**31 - 1  # dim, window, negative and epochs: larger values overflow the kernels' integers
MAX_THREADS = 1024  # more threads only wait for the others (and a million would take minutes to start)
DEFAULT_PRUNE_AT = 10_000_000  # distinct words held while counting (word2vec.c: 21M)


@dataclass(frozen=True)
class TrainConfig:
    """Training settings; defaults are word2vec.c's (v0.1c).

    ``negative=None`` means 5, or 0 when ``hs`` is on (so ``hs=True`` alone is
    hierarchical softmax only); ``alpha=None`` means 0.025 for skip-gram and 0.05
    for CBOW; ``min_alpha=None`` means alpha * 1e-4; ``threads=None`` all cores.
    Use ``resolved()`` to fill those in and check everything.
    """

    model: str = "skipgram"
    dim: int = 100
    window: int = 5
    negative: int | None = None
    hs: bool = False
    ns_exponent: float = 0.75
    sample: float = 1e-3
    min_count: int = 5
    max_vocab: int | None = None
    prune_at: int = DEFAULT_PRUNE_AT
    epochs: int = 5
    alpha: float | None = None
    min_alpha: float | None = None
    cbow_mean: bool = True
    threads: int | None = None
    seed: int = 1
    batch_words: int = 10_000

    def resolved(self) -> "TrainConfig":
        """A copy with every ``None`` default filled in, validated (ConfigError if not)."""
        negative = self.negative if self.negative is not None else (0 if self.hs else 5)
        alpha = self.alpha if self.alpha is not None else (0.05 if self.model == "cbow" else 0.025)
        config = dataclasses.replace(
            self,
            negative=negative,
            alpha=alpha,
            min_alpha=self.min_alpha if self.min_alpha is not None else alpha * 1e-4,
            threads=self.threads if self.threads is not None else (os.cpu_count() or 1),
        )
        config.validate()
        return config

    def validate(self) -> None:
        """Raise ConfigError naming the first invalid setting."""
        if self.model not in MODELS:
            raise ConfigError(f"model must be one of {', '.join(MODELS)}, not {self.model!r}")
        for name in ("dim", "window", "epochs", "min_count", "prune_at", "batch_words", "threads"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value <= 0):
                raise ConfigError(f"{name} must be a positive integer, not {value!r}")
        for name in ("dim", "window", "negative", "epochs"):
            value = getattr(self, name)
            if value is not None and value > MAX_COUNT:
                raise ConfigError(f"{name} must be at most {MAX_COUNT:,}, not {value:,}")
        if self.threads is not None and self.threads > MAX_THREADS:
            raise ConfigError(f"threads must be at most {MAX_THREADS:,}, not {self.threads:,}")
        for name in ("sample", "ns_exponent"):
            if not math.isfinite(getattr(self, name)):
                raise ConfigError(f"{name} must be a finite number, not {getattr(self, name)}")
        if self.max_vocab is not None and self.max_vocab <= 0:
            raise ConfigError(f"max_vocab must be a positive integer, not {self.max_vocab!r}")
        if self.negative is not None and self.negative < 0:
            raise ConfigError(f"negative must be 0 or more, not {self.negative}")
        if self.negative == 0 and not self.hs:
            raise ConfigError("nothing to train: negative is 0 and hs is off (use --hs, or --negative N > 0)")
        if self.sample < 0:
            raise ConfigError(f"sample must be 0 (off) or positive, not {self.sample}")
        for name in ("alpha", "min_alpha"):
            value = getattr(self, name)
            if value is not None and not 0 < value < math.inf:
                raise ConfigError(f"{name} must be positive and finite, not {value}")
        if self.alpha is not None and self.min_alpha is not None and self.min_alpha > self.alpha:
            raise ConfigError(f"min_alpha ({self.min_alpha}) must not exceed alpha ({self.alpha})")
        if not 0 <= self.seed < 2**64:
            raise ConfigError(f"seed must be in [0, 2**64), not {self.seed}")


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
    "callbacks": lambda _: "on_epoch_end=function(epoch, loss) or on_progress=function(words, total, alpha, loss)",
    "compute_loss": lambda _: "nothing: the loss is always computed (vectors.report.epoch_loss)",
}


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


def load_preset(path: str, allowed: set[str]) -> dict:
    """Read a TOML preset into a dict of settings (dashes in keys become underscores).

    Keys may sit at the top level or under a ``[train]`` table. Raises ConfigError
    for an unreadable or invalid file, for a key not in ``allowed`` and for a value
    that is not a number, a string or a boolean (a list, a table, a date).
    """
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as err:
        raise ConfigError(f"cannot read preset {path}: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"invalid TOML in preset {path}: {err}") from None
    table = data.get("train", data) if isinstance(data.get("train"), dict) else data
    settings = {key.replace("-", "_"): value for key, value in table.items()}
    unknown = sorted(set(settings) - allowed)
    if unknown:
        raise ConfigError(f"unknown setting in preset {path}: {', '.join(unknown)}")
    for key, value in settings.items():
        if not isinstance(value, (str, int, float)):  # bool is an int
            raise ConfigError(f"setting {key} in preset {path} must be a number, a string or true/false, not {value!r}")
    return settings
