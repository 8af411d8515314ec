"""The one exception type users see: a clear, one-line message, never a traceback;
and how messages word their counts (``plural``) and name characters (``code_points``)."""


class W2VError(Exception):
    """A problem with the user's input or settings; ``str(err)`` is one line for stderr."""


class CorpusError(W2VError):
    """The corpus cannot be read, or holds nothing to train on."""


class ConfigError(W2VError):
    """A setting, a preset or a combination of settings is invalid. ``str(err)`` names
    the settings as Python takes them (``hs=True``); ``flags``, where given, is the same
    message in ``w2v train``'s flags (``--hs``), which the command line prints."""

    def __init__(self, message: str, flags: str | None = None):
        super().__init__(message)
        self.flags = flags


class FormatError(W2VError):
    """A vectors or vocabulary file is malformed."""


class NotAModelError(FormatError):
    """A file given as a w2v model file (``--init-model``, ``w2v score``) is not one:
    ``path`` may be a vectors file, which the command line names."""

    def __init__(self, message: str, path: str):
        super().__init__(message)
        self.path = path


class ClusterLost(W2VError):
    """A run on a cluster lost what it needs: the Dask scheduler (and the cluster's work
    with it), or more workers than it survives; its checkpoint holds its last round."""


class UnwritableOutput(W2VError):
    """A run trained, and wrote its outputs, but for one that cannot hold what it made
    (a fastText ``.bin``, a vocabulary word holding a NUL): ``vectors``, the trained
    ``Vectors``, are for the caller to keep or write."""

    def __init__(self, message: str, vectors: object):
        super().__init__(message)
        self.vectors = vectors


class DivergedError(W2VError):
    """Training produced non-finite weights or loss (a learning rate too high)."""


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` (thousands separated) and ``noun``, in the plural (``nouns``, default
    ``noun + "s"``) unless the count is 1: ``plural(1, "word")`` is ``"1 word"``,
    ``plural(2, "class", "classes")`` is ``"2 classes"``. For every count in a message."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def code_points(text: str, most: int = 12) -> str:
    """``text``'s first ``most`` characters as code points, for a message about characters
    that print alike or not at all: ``code_points("a\\ud800")`` is ``"U+0061 U+D800"``,
    and a longer text ends in ``"..."``."""
    shown = " ".join(f"U+{ord(character):04X}" for character in text[:most])
    return shown + (" ..." if len(text) > most else "")
