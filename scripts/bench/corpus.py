"""The corpus: its tokens counted, the copy gensim trains on (lines of at most 10,000
tokens) and the tiny corpus of the warm-up and start-up runs."""

import os
import random
import tempfile
from pathlib import Path

GENSIM_LINE_TOKENS = 10_000  # gensim's corpus_file mode drops the rest of a longer line
CHUNK = 1 << 20  # small: a fork inherits the parent's peak RSS into its own ru_maxrss


def count_tokens(path: Path) -> int:
    """Whitespace-separated tokens in ``path``, read in chunks."""
    total, inside_word = 0, False
    with open(path, "rb") as corpus:
        while chunk := corpus.read(CHUNK):
            total += len(chunk.split())
            if inside_word and not chunk[:1].isspace():
                total -= 1  # a word cut by the chunk boundary was counted twice
            inside_word = not chunk[-1:].isspace()
    return total


def read_tokens(path: Path):
    """Yield the whitespace-separated tokens of ``path`` as bytes, in chunk-sized lists."""
    carry = b""
    with open(path, "rb") as corpus:
        while chunk := corpus.read(CHUNK):
            words = (carry + chunk).split()
            carry = b"" if chunk[-1:].isspace() or not words else words.pop()
            yield words
    if carry:
        yield [carry]


def gensim_copy(corpus: Path, workdir: Path) -> Path:
    """A copy of ``corpus`` in lines of at most 10,000 tokens, made once per corpus version."""
    stat = corpus.stat()
    path = workdir / f"{corpus.stem}.lines{GENSIM_LINE_TOKENS}-{stat.st_size}-{int(stat.st_mtime)}.txt"
    if path.exists():
        return path
    pending: list[bytes] = []
    with tempfile.NamedTemporaryFile(dir=workdir, prefix=f".{path.name}.", suffix=".tmp", delete=False) as out:
        for words in read_tokens(corpus):
            pending.extend(words)
            while len(pending) >= GENSIM_LINE_TOKENS:
                out.write(b" ".join(pending[:GENSIM_LINE_TOKENS]) + b"\n")
                del pending[:GENSIM_LINE_TOKENS]
        if pending:
            out.write(b" ".join(pending) + b"\n")
    os.replace(out.name, path)
    return path


def tiny_corpus(workdir: Path) -> Path:
    """A 1,000-word corpus of 50 distinct words in ``workdir``, for start-up and warm-up runs."""
    rng = random.Random(1)
    path = workdir / "tiny-corpus.txt"
    path.write_text(" ".join(f"w{rng.randrange(50)}" for _ in range(1000)))
    return path
