"""The word codec every wing shares: a word is its bytes in the corpus and in vector
files (``encode_word``, ``decode_word``: any bytes round-trip through a str), shown
safely on a terminal (``display_word``), and checked before it is written where
whitespace would split it (``split_word``).
"""

import re
from collections.abc import Callable, Sequence

from w2v.errors import code_points

WHITESPACE = b" \t\n\r\x0b\x0c"  # what ends a word in a corpus: ASCII whitespace, as in word2vec.c


def encode_word(word: str) -> bytes:
    """A word's bytes as they appear in the corpus and in vector files."""
    return word.encode("utf-8", "surrogateescape")


def decode_word(raw: bytes) -> str:
    """The inverse of ``encode_word``: any bytes give a str that encodes back to them."""
    return raw.decode("utf-8", "surrogateescape")


CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1
WORD_END = re.compile(f"[{re.escape(WHITESPACE.decode())}]")  # what ends a word in a corpus and a vectors file
# Lone surrogates that no bytes decode to (``decode_word`` gives U+DC80 to U+DCFF alone): a
# str from elsewhere (a Python string literal, gensim's keys) may hold them; no file does.
LONE_SURROGATES = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def encodable(word: str) -> bool:
    """Whether ``word`` has bytes (``encode_word``): one that holds a ``LONE_SURROGATES``
    character has none, so no file or corpus holds it."""
    return LONE_SURROGATES.search(word) is None


def display_word(word: str) -> str:
    """``word`` (or any text from a file) safe to print on a terminal: bytes that are not
    UTF-8 become U+FFFD, control characters, which could move the cursor, set the
    window's title or start a terminal's escape sequence, become ``\\xHH``, and lone
    surrogates, which have no bytes to print, ``\\uHHHH``."""
    printable = LONE_SURROGATES.sub(lambda half: f"\\u{ord(half.group()):04x}", word)
    shown = encode_word(printable).decode("utf-8", "replace")
    return CONTROL_CHARACTERS.sub(lambda control: f"\\x{ord(control.group()):02x}", shown)


QUOTED_CHARACTERS = 60  # of a word a message quotes: a longer one is cut, its length given


def quoted_word(word: str, show: Callable[[str], str] = display_word) -> str:
    """``word`` in quotes for a message, as ``show`` writes it (``display_word``: safe to
    print), cut to its first ``QUOTED_CHARACTERS`` characters when longer, with its
    length: ``'xxx...' (100,000 characters)``."""
    if len(word) <= QUOTED_CHARACTERS:
        return f"'{show(word)}'"
    return f"'{show(word[:QUOTED_CHARACTERS])}...' ({len(word):,} characters)"


def split_word(words: Sequence[str], ends: re.Pattern[str] = WORD_END, what: str = "whitespace") -> str | None:
    """Why ``words`` cannot be written to a file and read back, naming the first that is
    empty or holds a character of ``ends`` (``what`` names them: in a vectors file, as in a
    corpus, whitespace ends a word, so such a word reads back as several, or none); None
    when none does. A corpus never yields such a word; another tool's file may. Nor can
    a word holding a lone surrogate be written (``encodable``): a str built in Python may."""
    joined = "".join(words)
    if all(words) and not ends.search(joined) and encodable(joined):
        return None
    index = next(i for i, word in enumerate(words) if not word or ends.search(word) or not encodable(word))
    return split_reason(index, words[index], what)


def split_reason(index: int, word: str, what: str = "whitespace") -> str:
    """What is wrong with ``word``, the ``index``-th (from 0) of a vocabulary: it is empty,
    holds a lone surrogate (``encodable``), or holds ``what`` (characters that end a
    word, see ``split_word``)."""
    if not word:
        return f"word {index + 1:,} is empty"
    if not encodable(word):
        return f"word {index + 1:,} ({code_points(word)}) holds a lone surrogate, which has no UTF-8 bytes"
    return f"word {index + 1:,}, {quoted_word(word)}, holds {what}, which ends a word"
