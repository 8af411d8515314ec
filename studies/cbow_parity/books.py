#!/usr/bin/env python3
"""Build a topic-ordered, text8-style corpus from Project Gutenberg books.

Source: a working tree of github.com/rcdm-uga/Gutenberg_Text
(commit a0b16d35a9851168ce9ac649851c17b7ab08d48e), one folder per author,
one ``.txt`` file per book::

    git clone https://github.com/rcdm-uga/Gutenberg_Text

Steps:

1. Take every ``*.txt`` file inside an author folder, in sorted order of the
   relative path (``/`` separators), skipping git-lfs pointer files.
2. Remove the Project Gutenberg licence header and footer, including the
   pre-2004 "small print" licences, illustration tags and the per-play
   notices of the old World Library Shakespeare.
3. Keep English books only (``Language:`` header field).
4. Drop duplicates: identical file contents, a repeated EBook number, or a
   repeated title; also drop PG index files and near-empty texts.
5. Sort by author folder, then title, and take each author's books until the
   author's raw text reaches ``--author-cap-mb`` megabytes (for breadth).
6. Normalise like text8 / wikifil.pl: lowercase, digits spelled out, every
   character other than a-z becomes a space, single spaces, all on one line.

Command::

    python books.py SOURCE_FOLDER OUTPUT [--manifest FILE] [--author-cap-mb 0.6]

OUTPUT gets the corpus; the optional manifest is a TSV listing the chosen
books. Both are written atomically.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

# Default per-author cap on raw (cleaned, UTF-8) text, in megabytes.
DEFAULT_AUTHOR_CAP_MB = 0.6
# Files that start with this are git-lfs pointers, not books.
LFS_POINTER_PREFIX = b"version https://git-lfs"
# UTF-8 byte order mark, dropped before decoding.
UTF8_BOM = b"\xef\xbb\xbf"
# Files with no licence start marker: this many leading characters act as the header.
FALLBACK_HEADER_CHARS = 5000
# A footer "End of Project Gutenberg" line is only trusted in the last 20% of the body.
FOOTER_MIN_POSITION = 0.8
# Books whose cleaned body is shorter than this many characters are dropped.
MIN_BODY_CHARS = 2000
# Titles starting with this (lowercased) are PG catalogue files, not books.
INDEX_TITLE_PREFIX = "index of the project gutenberg"

# Modern licence header end: "*** START OF THE/THIS PROJECT GUTENBERG EBOOK ...".
LICENCE_START = re.compile(r"^\s*\*\*\*\s*START OF (THE|THIS) PROJECT GUTENBERG.*$", re.IGNORECASE | re.MULTILINE)
# Pre-2004 files: the licence ("small print") precedes the text and ends with
# "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*...*END*".
OLD_LICENCE_START = re.compile(
    r"^\s*\*+\s*(END\*?\s*THE SMALL PRINT|SMALL PRINT! FOR __ COMPLETE SHAKESPEARE).*$", re.IGNORECASE | re.MULTILINE
)
# Modern licence footer start: "*** END OF THE/THIS PROJECT GUTENBERG EBOOK ...".
LICENCE_END = re.compile(r"^\s*\*\*\*\s*END OF (THE|THIS) PROJECT GUTENBERG.*$", re.IGNORECASE | re.MULTILINE)
# Older footer line: "End of (the) Project Gutenberg ...".
OLD_LICENCE_END = re.compile(r"^\s*End of (the |this )?Project Gutenb[eu]rg", re.IGNORECASE | re.MULTILINE)
# EBook number in the header: "[EBook #1342]" or "[Etext #100]".
EBOOK_NUMBER = re.compile(r"\[E(?:Book|text) #(\d+)\]", re.IGNORECASE)
# Illustration tags: "[Illustration: ...]".
ILLUSTRATION = re.compile(r"\[Illustration[^\]]*\]")
# Per-play copyright notices inside the old World Library Shakespeare files.
WORLD_LIBRARY_NOTE = re.compile(r"<<THIS ELECTRONIC VERSION OF THE COMPLETE WORKS.*?>>", re.DOTALL)
# Inline licence version tags: '["Small Print" V.12.08.93]'.
SMALL_PRINT_TAG = re.compile(r'\["Small Print" V[^\]]*\]')
# Runs of characters other than a-z and 0-9 (for comparison keys).
NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
# Single decimal digit (text8 spells these out).
DIGIT = re.compile(r"[0-9]")
# Runs of characters other than a-z (text8 turns these into one space).
NON_LETTERS = re.compile(r"[^a-z]+")
# Names of the digits 0-9.
DIGIT_NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
# Digit -> its name padded with spaces, as in wikifil.pl.
DIGIT_WORDS = {str(digit): f" {name} " for digit, name in enumerate(DIGIT_NAMES)}
# Tabs and newlines inside a manifest cell are replaced by this.
MANIFEST_CELL_BREAK = " | "
# Manifest column names.
MANIFEST_COLUMNS = ("dir_author", "pg_author", "title", "ebook_no", "path", "raw_bytes")


@dataclass(frozen=True)
class ParsedText:
    """A decoded book file split into licence header and body."""

    head: str  # text before the licence start (or the first characters if none)
    body: str  # text between licence start and end


@dataclass(frozen=True)
class Book:
    """A candidate book for the corpus."""

    author_key: str  # normalised author folder name (sort key and cap group)
    title_key: str  # normalised title (sort key)
    path: str  # path relative to the source folder, "/" separators
    ebook_no: str  # PG EBook number, "" if unknown
    pg_author: str  # author from the PG header (or the folder name)
    title: str  # title from the PG header (or the file name)
    body: str  # cleaned text, before text8 normalisation
    raw_bytes: int  # UTF-8 size of body


@dataclass
class SeenBooks:
    """What has been taken so far, for duplicate detection."""

    content_hashes: set[str] = field(default_factory=set)
    ebook_numbers: set[str] = field(default_factory=set)
    title_keys: set[str] = field(default_factory=set)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Build a text8-style corpus from Gutenberg_Text.")
    parser.add_argument("source", type=Path, help="folder with a checkout of rcdm-uga/Gutenberg_Text")
    parser.add_argument("output", type=Path, help="corpus file to write (one line)")
    parser.add_argument("--manifest", type=Path, help="also write a TSV list of the chosen books here")
    parser.add_argument(
        "--author-cap-mb",
        type=float,
        default=DEFAULT_AUTHOR_CAP_MB,
        help="stop adding an author's books once its raw text reaches this (MB); <=0: no cap",
    )
    return parser.parse_args(argv)


def list_book_files(source: Path) -> list[str]:
    """Return the relative paths ("/" separators) of *.txt files inside author folders, sorted."""
    paths = []
    for dir_path, dir_names, file_names in os.walk(source):
        dir_names[:] = [name for name in dir_names if name != ".git"]
        relative_dir = Path(dir_path).relative_to(source)
        if relative_dir == Path("."):
            continue  # files directly in SOURCE belong to no author folder
        for name in file_names:
            if name.endswith(".txt"):
                paths.append((relative_dir / name).as_posix())
    return sorted(paths)


def decode_text(raw: bytes) -> str:
    """Decode as UTF-8 (dropping a BOM), falling back to cp1252; normalise line ends to \\n."""
    raw = raw.removeprefix(UTF8_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_licence(text: str) -> ParsedText:
    """Split off the licence header and footer; without a start marker the whole text is the body."""
    start = LICENCE_START.search(text) or OLD_LICENCE_START.search(text)
    if not start:
        return ParsedText(head=text[:FALLBACK_HEADER_CHARS], body=text)
    head = text[: start.start()]
    body = text[start.end() :]
    end = LICENCE_END.search(body)
    if end:
        body = body[: end.start()]
    old_end = OLD_LICENCE_END.search(body)
    if old_end and old_end.start() > len(body) * FOOTER_MIN_POSITION:
        body = body[: old_end.start()]
    return ParsedText(head=head, body=body)


def header_field(name: str, head: str) -> str:
    """Return the value of a "Name: value" line in the PG header, or ""."""
    match = re.search(r"^\s*" + name + r":\s*(.+)$", head, re.MULTILINE)
    return match.group(1).strip() if match else ""


def comparison_key(text: str) -> str:
    """Fold accents and case and keep only a-z0-9 words, single-spaced."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return NON_ALPHANUMERIC.sub(" ", ascii_text).strip()


def clean_body(body: str) -> str:
    """Remove illustration tags and leftover licence notices from a book body."""
    body = ILLUSTRATION.sub(" ", body)
    body = WORLD_LIBRARY_NOTE.sub(" ", body)
    return SMALL_PRINT_TAG.sub(" ", body)


def examine_file(path: str, raw: bytes, seen: SeenBooks) -> Book | str:
    """Return the file as a Book, or the reason (a skip counter name) for leaving it out.

    Records the file in ``seen``; the order of the checks matters for which copy of a duplicate is kept.
    """
    content_hash = hashlib.sha1(raw).hexdigest()
    if content_hash in seen.content_hashes:
        return "dup"
    seen.content_hashes.add(content_hash)
    if raw.startswith(LFS_POINTER_PREFIX):
        return "lfs_pointer"
    parsed = split_licence(decode_text(raw))
    language = header_field("Language", parsed.head)
    if language and not language.lower().startswith("english"):
        return "lang"
    dir_author, file_title = path.split("/", 1)
    title = header_field("Title", parsed.head) or file_title.removesuffix(".txt")
    pg_author = header_field("Author", parsed.head) or dir_author.strip()
    if title.lower().startswith(INDEX_TITLE_PREFIX) or file_title.lower().startswith(INDEX_TITLE_PREFIX):
        return "index"
    number_match = EBOOK_NUMBER.search(parsed.head)
    ebook_no = number_match.group(1) if number_match else ""
    title_key = comparison_key(title)
    if (ebook_no and ebook_no in seen.ebook_numbers) or title_key in seen.title_keys:
        return "dup"
    if ebook_no:
        seen.ebook_numbers.add(ebook_no)
    seen.title_keys.add(title_key)
    body = clean_body(parsed.body)
    if len(body) < MIN_BODY_CHARS:
        return "short"
    author_key = comparison_key(dir_author)
    return Book(author_key, title_key, path, ebook_no, pg_author, title, body, len(body.encode("utf-8")))


def collect_books(source: Path, paths: list[str]) -> tuple[list[Book], Counter[str]]:
    """Read the files in order and return the candidate books and the skip counts."""
    seen = SeenBooks()
    skipped: Counter[str] = Counter()
    books = []
    for path in paths:
        outcome = examine_file(path, (source / path).read_bytes(), seen)
        if isinstance(outcome, Book):
            books.append(outcome)
        else:
            skipped[outcome] += 1
    return books, skipped


def choose_books(books: list[Book], author_cap_mb: float) -> list[Book]:
    """Sort by author folder, title and path; take each author's books until the cap is reached."""
    cap_bytes = author_cap_mb * 1e6
    taken_bytes: Counter[str] = Counter()
    chosen = []
    for book in sorted(books, key=lambda b: (b.author_key, b.title_key, b.path)):
        if cap_bytes > 0 and taken_bytes[book.author_key] >= cap_bytes:
            continue  # the book that crosses the cap is still taken
        taken_bytes[book.author_key] += book.raw_bytes
        chosen.append(book)
    return chosen


def to_text8(text: str) -> str:
    """Lowercase, spell out digits, turn every non a-z run into one space, strip the ends."""
    text = DIGIT.sub(lambda match: DIGIT_WORDS[match.group(0)], text.lower())
    return NON_LETTERS.sub(" ", text).strip()


def manifest_row(book: Book) -> str:
    """Return the manifest line (tab-separated, newline-terminated) for a book."""
    dir_author = book.path.split("/", 1)[0].strip()
    cells = [dir_author, book.pg_author, book.title, book.ebook_no, book.path, str(book.raw_bytes)]
    return "\t".join(re.sub(r"[\t\r\n]+", MANIFEST_CELL_BREAK, cell) for cell in cells) + "\n"


@contextmanager
def atomic_open(path: Path, encoding: str) -> Iterator[TextIO]:
    """Open a temporary file next to ``path``; move it into place only if the block succeeds."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding=encoding, newline="\n") as handle:
            yield handle
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_corpus(books: list[Book], output: Path, manifest: Path | None) -> None:
    """Write the books as one text8 line (space-separated) and, if asked, the manifest."""
    manifest_context = atomic_open(manifest, "utf-8") if manifest else nullcontext(None)
    with atomic_open(output, "ascii") as corpus, manifest_context as listing:
        if listing:
            listing.write("\t".join(MANIFEST_COLUMNS) + "\n")
        separator = ""
        for book in books:
            text = to_text8(book.body)
            if not text:
                continue  # still counted against the author's cap
            corpus.write(separator + text)
            separator = " "
            if listing:
                listing.write(manifest_row(book))


def build(source: Path, output: Path, manifest: Path | None, author_cap_mb: float) -> None:
    """Run all steps, reporting counts on stderr; exit with a message on bad input."""
    if not source.is_dir():
        sys.exit(f"books: {source}: no such folder")
    for target in (output, manifest):
        if target is not None and not target.absolute().parent.is_dir():
            sys.exit(f"books: {target}: its folder does not exist")
    paths = list_book_files(source)
    if not paths:
        sys.exit(f"books: {source}: no .txt files in author folders (expected a Gutenberg_Text checkout)")
    books, skipped = collect_books(source, paths)
    chosen = choose_books(books, author_cap_mb)
    if not chosen:
        sys.exit(f"books: {source}: no English books found")
    authors = len({book.author_key for book in chosen})
    raw_total = sum(book.raw_bytes for book in chosen)
    print(
        f"files={len(paths)} candidates={len(books)} skipped={dict(skipped)} authors={authors} "
        f"chosen={len(chosen)} raw_bytes={raw_total}",
        file=sys.stderr,
    )
    write_corpus(chosen, output, manifest)
    print(f"wrote {output}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    """Entry point: parse arguments and build the corpus."""
    args = parse_args(argv)
    try:
        build(args.source, args.output, args.manifest, args.author_cap_mb)
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        sys.exit(f"books: {where}{error.strerror or error}")


if __name__ == "__main__":
    main()
