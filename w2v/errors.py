"""The one exception type users see: a clear, one-line message, never a traceback."""


class W2VError(Exception):
    """A problem with the user's input or settings; ``str(err)`` is one line for stderr."""


class CorpusError(W2VError):
    """The corpus cannot be read, or holds nothing to train on."""


class ConfigError(W2VError):
    """A setting, a preset or a combination of settings is invalid."""


class FormatError(W2VError):
    """A vectors or vocabulary file is malformed."""


class DivergedError(W2VError):
    """Training produced non-finite weights or loss (a learning rate too high)."""
