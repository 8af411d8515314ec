"""Tokenising, sentence cutting, sources (compressed, folders, stdin) and id streams."""

import bz2
import gzip
import lzma
import os
import subprocess
import sys
import threading
from collections import Counter

import numpy as np
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st
from reference import token_blocks

from w2v.corpus.counting import block_ids
from w2v.corpus.idstream import IdStreamWriter, cut_at_batch_ends, evenly_spaced
from w2v.corpus.phrases import learn_phrases
from w2v.corpus.sources import (
    MAX_SENTENCE_TOKENS,
    MAX_WORD_BYTES,
    SENTENCE_END,
    SentenceCutter,
    TokenBlock,
    check_text,
    expand_sources,
    is_stream,
    read_chunks,
    sentence_blocks,
    sentence_bytes,
    without_outputs,
)
from w2v.errors import CorpusError


def to_sentences(blocks) -> list[list[bytes]]:
    """Rebuild the sentences from token blocks (an end of -1 closes the sentence
    left open by the previous block)."""
    sentences, current = [], []
    for block in blocks:
        assert block.ends == sorted(block.ends)
        ends = set(block.ends)
        if -1 in ends:
            assert current, "an end before the block's first token must close a sentence"
            sentences.append(current)
            current = []
        for index, token in enumerate(block.tokens):
            current.append(token)
            if index in ends:
                sentences.append(current)
                current = []
    assert not current, "the last sentence was not ended"
    assert all(sentences), "empty sentence"
    return sentences


def sentences_of(path, block_bytes=1 << 20):
    return to_sentences(token_blocks([str(path)], block_bytes))


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_whitespace_and_newlines(tmp_path):
    path = write(tmp_path, "c.txt", b"  a\tb  c\r\nd\x0be\x0cf\n\n\n g \r\n\th")
    assert sentences_of(path) == [[b"a", b"b", b"c"], [b"d", b"e", b"f"], [b"g"], [b"h"]]


def test_empty_lines_and_empty_file(tmp_path):
    assert sentences_of(write(tmp_path, "e.txt", b"")) == []
    assert sentences_of(write(tmp_path, "n.txt", b"\n\n \t\n")) == []


def test_read_chunks_end_at_whitespace(tmp_path):
    data = b" ".join(b"word%d" % i for i in range(200)) + b"\nlast"
    path = write(tmp_path, "c.txt", data)
    chunks = list(read_chunks(str(path), 64))
    assert len(chunks) > 10
    assert b"".join(chunks) == data
    for chunk in chunks[:-1]:
        assert chunk[-1:] in (b" ", b"\n")
        assert len(chunk) <= 64 + 8


@pytest.mark.parametrize("block_bytes", [8, 64, 1000])
def test_a_run_longer_than_max_word_is_one_token_cut_to_it(tmp_path, block_bytes):
    """A run longer than the longest word is cut to its first ``max_word`` bytes and counted
    once, the rest dropped (word2vec.c's ReadWord), whether it lies inside a piece or reaches
    across pieces: as many tokens as bytes.split finds; a piece is at most block + max_word."""
    data = b"ab " + b"x" * 150 + b" cd\n" + b"y" * 20 + b"\n" + b"z" * 21 + b" " + b"w" * 300
    path = write(tmp_path, "c.txt", data)
    chunks = list(read_chunks(str(path), block_bytes, max_word=20))
    assert max(map(len, chunks)) <= block_bytes + 20 + 1
    sentences = to_sentences(token_blocks([str(path)], block_bytes, max_word=20))
    assert sentences == [[b"ab", b"x" * 20, b"cd"], [b"y" * 20], [b"z" * 20, b"w" * 20]]
    assert sum(map(len, sentences)) == len(data.split())


def test_python_sentences_cut_words_at_max_word_bytes():
    long = "é" * MAX_WORD_BYTES  # 2 bytes a character: cut inside one, as a file's word would be
    assert sentence_bytes(["a", long, b"b" * (MAX_WORD_BYTES + 1)]) == [
        b"a",
        long.encode()[:MAX_WORD_BYTES],
        b"b" * MAX_WORD_BYTES,
    ]


@pytest.mark.slow
def test_vocab_train_and_phrases_agree_on_words_longer_than_max_word_bytes(tmp_path, cli):
    """``w2v vocab``, ``w2v train`` and ``w2v phrases`` read a corpus holding runs of MAX_WORD_BYTES
    - 1, MAX_WORD_BYTES, + 1 and 2.5 times it as len(text.split()) tokens, the longer ones cut to
    MAX_WORD_BYTES (so three of the four are one word)."""
    runs = [b"q" * (MAX_WORD_BYTES + extra) for extra in (-1, 0, 1, 3 * MAX_WORD_BYTES // 2)]
    text = b"\n".join(b"the cat sat on the mat " + run + b" the end" for run in runs * 2) + b"\n"
    path = write(tmp_path, "c.txt", text)
    tokens = len(text.split())
    done = cli("vocab", path, "-o", tmp_path / "vocab.txt", "--min-count", "1")
    assert done.returncode == 0, done.stderr.decode()
    assert f"of {tokens:,} tokens".encode() in done.stdout
    counts = dict(line.rsplit(b" ", 1) for line in (tmp_path / "vocab.txt").read_bytes().splitlines())
    assert counts[b"q" * MAX_WORD_BYTES] == b"6" and counts[b"q" * (MAX_WORD_BYTES - 1)] == b"2"
    assert max(map(len, counts)) == MAX_WORD_BYTES
    train_vocab = tmp_path / "train-vocab.txt"
    done = cli("train", path, "-o", tmp_path / "v.txt", "--save-vocab", train_vocab, "--min-count", "1", "--epochs=1")
    assert done.returncode == 0, done.stderr.decode()
    assert train_vocab.read_bytes() == (tmp_path / "vocab.txt").read_bytes()
    done = cli("phrases", path, "-o", tmp_path / "phrased.txt", "--min-count", "1")
    assert done.returncode == 0, done.stderr.decode()
    assert f"{tokens:,} tokens in".encode() in done.stderr
    assert max(map(len, (tmp_path / "phrased.txt").read_bytes().split())) == MAX_WORD_BYTES


@pytest.mark.parametrize("block_bytes", [12, 64, 1000])  # >= the longest word
def test_small_blocks_give_the_same_tokens(tmp_path, block_bytes):
    rng = np.random.default_rng(0)
    words = [b"w%d" % i for i in range(50)] + [b"longerword", b"\xc3\xa9t\xc3\xa9", b"a"]
    lines = []
    for length in (300, 0, 1, 40, 2):  # one line much longer than the block
        lines.append(b" ".join(words[i] for i in rng.integers(0, len(words), length)))
    data = b"\n".join(lines) + b"\nend without newline"
    path = write(tmp_path, "c.txt", data)
    whole = sentences_of(path)
    assert [len(s) for s in whole] == [300, 1, 40, 2, 3]
    assert sentences_of(path, block_bytes) == whole


def test_space_before_newline_at_a_block_boundary(tmp_path):
    """A block that ends with the space just before a newline: the sentence end falls
    before the next block's first token."""
    path = write(tmp_path, "c.txt", b"aaa bbb \nccc ddd\n")
    for block_bytes in range(4, 20):  # >= the longest word
        assert sentences_of(path, block_bytes) == [[b"aaa", b"bbb"], [b"ccc", b"ddd"]], block_bytes


def test_sentence_cut_at_max_tokens(tmp_path):
    n = 2 * MAX_SENTENCE_TOKENS + 5000
    assert MAX_SENTENCE_TOKENS == 10_000
    words = [b"t%d" % i for i in range(n)]
    path = write(tmp_path, "c.txt", b" ".join(words) + b"\nx y\n")
    for block_bytes in (1 << 20, 4096):
        sentences = sentences_of(path, block_bytes)
        assert [len(s) for s in sentences] == [10_000, 10_000, 5000, 2]
        assert [t for s in sentences for t in s] == [*words, b"x", b"y"]


def test_sentence_exactly_max_tokens(tmp_path):
    words = [b"t%d" % i for i in range(MAX_SENTENCE_TOKENS)]
    path = write(tmp_path, "c.txt", b" ".join(words) + b"\nz\n")
    assert [len(s) for s in sentences_of(path, 5000)] == [10_000, 1]


def test_cut_across_several_sources(tmp_path):
    """Each source's end ends a sentence; the count of the cut restarts with each."""
    a = [b"a%d" % i for i in range(15_000)]
    b = [b"b%d" % i for i in range(12_000)]
    first = write(tmp_path, "1.txt", b" ".join(a))  # no final newline
    second = write(tmp_path, "2.txt", b" ".join(b) + b"\n")
    sentences = to_sentences(token_blocks([str(first), str(second)], 4096))
    assert [len(s) for s in sentences] == [10_000, 5000, 10_000, 2000]
    assert [t for s in sentences for t in s] == a + b


def test_sentence_cutter_small_max():
    cutter = SentenceCutter(max_tokens=3)
    first = cutter.block([[b"a", b"b", b"c", b"d", b"e", b"f", b"g"]], last_open=True)
    assert first.ends == [2, 5]
    second = cutter.block([[b"h", b"i"], [b"j"]], last_open=False)
    assert second.ends == [1, 2]
    assert to_sentences([first, second]) == [[b"a", b"b", b"c"], [b"d", b"e", b"f"], [b"g", b"h", b"i"], [b"j"]]


def test_sentence_blocks_from_python_sentences():
    long = [f"w{i}" for i in range(23_456)]
    blocks = list(sentence_blocks([["a", "b"], [], long, ["é", b"\xff"]], block_tokens=5000))
    sentences = to_sentences(blocks)
    assert [len(s) for s in sentences] == [2, 10_000, 10_000, 3456, 2]
    assert sentences[-1] == ["é".encode(), b"\xff"]
    assert [t for s in sentences[1:4] for t in s] == [w.encode() for w in long]
    with pytest.raises(CorpusError):
        list(sentence_blocks(["not a list of words"]))


def test_invalid_utf8_bytes_are_words(tmp_path):
    path = write(tmp_path, "c.txt", b"caf\xe9 \xff\xfe caf\xe9\n\xc3\x28 caf\xc3\xa9\n")
    assert sentences_of(path) == [[b"caf\xe9", b"\xff\xfe", b"caf\xe9"], [b"\xc3\x28", b"caf\xc3\xa9"]]


CONTENT = b"the quick brown fox\njumps over\tthe lazy dog\r\n\xff\xfe odd bytes\n" * 50


@pytest.mark.parametrize(
    "suffix,compress",
    [
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
        (".zst", lambda data: zstandard.ZstdCompressor().compress(data)),
    ],
)
def test_compressed_sources(tmp_path, suffix, compress):
    plain = write(tmp_path, "c.txt", CONTENT)
    packed = write(tmp_path, "c.txt" + suffix, compress(CONTENT))
    assert packed.read_bytes() != CONTENT
    assert sentences_of(packed, 100) == sentences_of(plain)
    assert len(sentences_of(plain)) == 150


@pytest.mark.slow
def test_local_compressed_files_are_read_without_smart_open(tmp_path):
    """smart_open (0.15-0.2 s and 26 MB to import) is for URLs; the standard library reads local files."""
    packed = write(tmp_path, "c.txt.gz", gzip.compress(CONTENT))
    script = (
        "import sys\n"
        "from w2v.corpus.sources import read_chunks\n"
        "assert b''.join(read_chunks(sys.argv[1])) == sys.stdin.buffer.read()\n"
        "assert 'smart_open' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(packed)], input=CONTENT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def test_folder_reads_files_in_sorted_order(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    (folder / "b.txt").write_bytes(b"b1 b2\n")
    (folder / "a.txt").write_bytes(b"a1 a2")  # no final newline: the file's end ends the sentence
    (folder / "sub" / "c.txt.gz").write_bytes(gzip.compress(b"c1\n"))
    (folder / ".skip.txt").write_bytes(b"hidden\n")
    (folder / ".hidden" / "d.txt").write_bytes(b"hidden\n")
    assert expand_sources([folder]) == [str(folder / "a.txt"), str(folder / "b.txt"), str(folder / "sub" / "c.txt.gz")]
    sentences = to_sentences(token_blocks(expand_sources([folder])))
    assert sentences == [[b"a1", b"a2"], [b"b1", b"b2"], [b"c1"]]


@pytest.mark.slow
def test_stdin_reads_the_same_tokens(tmp_path):
    path = write(tmp_path, "c.txt", CONTENT)
    script = (
        "import sys\n"
        "from w2v.corpus.sources import read_chunks\n"
        "for chunk in read_chunks('-', 64):\n"
        "    sys.stdout.buffer.write(chunk)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], input=CONTENT, capture_output=True, timeout=120, check=True)
    assert done.stdout == path.read_bytes()


@pytest.fixture
def fifo(tmp_path):
    """``feed(data)``: a FIFO that a thread writes ``data`` (at most a pipe's buffer, 64 KiB)
    into once a reader opens it (the writer's open blocks until then: no sleeping)."""
    path = tmp_path / "fifo"
    os.mkfifo(path)
    writers = []

    def feed(data: bytes):
        writer = threading.Thread(target=path.write_bytes, args=(data,), daemon=True)
        writer.start()
        writers.append(writer)
        return path

    yield feed
    for writer in writers:
        if writer.is_alive():  # it may be waiting for a reader: give it one whose open never waits
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # (a blocking one waits for a writer, and
            writer.join()  # a writer that has just ended never comes); its data fit the pipe: it ends
            os.close(reader)
        writer.join()


def test_a_fifo_is_read_once_as_a_stream(fifo):
    path = fifo(CONTENT)
    assert is_stream(str(path)) and expand_sources([path]) == [str(path)]
    assert sentences_of(path, 100) == [line.split() for line in CONTENT.splitlines()]
    assert not is_stream(__file__) and not is_stream(os.path.dirname(__file__)) and not is_stream("s3://b/k")


def run_on_pipe(data: bytes, *args) -> subprocess.CompletedProcess:
    """``python -m w2v ARGS``, ``{fd}`` in ARGS standing for the /dev/fd/N of a pipe holding
    ``data`` (less than a pipe buffer: written and closed before the command starts), as a
    shell's ``<(command)`` passes it."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
        os.close(write_end)
        argv = [str(arg).replace("{fd}", f"/dev/fd/{read_end}") for arg in args]
        command = [sys.executable, "-m", "w2v", *argv]
        return subprocess.run(command, pass_fds=(read_end,), capture_output=True, timeout=300)
    finally:
        os.close(read_end)


@pytest.mark.slow
def test_process_substitution_is_read_as_a_stream(tmp_path, cli):
    """``w2v vocab <(zcat corpus.gz)`` counts what the file gives; ``w2v train <(...)`` trains."""
    done = run_on_pipe(CONTENT, "vocab", "{fd}", "-o", tmp_path / "pipe.txt", "--min-count", "1")
    assert done.returncode == 0, done.stderr.decode()
    corpus = write(tmp_path, "c.txt", CONTENT)
    assert cli("vocab", corpus, "-o", tmp_path / "file.txt", "--min-count", "1").returncode == 0
    assert (tmp_path / "pipe.txt").read_bytes() == (tmp_path / "file.txt").read_bytes()
    done = run_on_pipe(CONTENT, "train", "{fd}", "-o", tmp_path / "v.txt", "--epochs", "1", "--min-count", "1", "-q")
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "v.txt").read_bytes().startswith(b"11 100\n")  # the words of CONTENT


@pytest.mark.slow
def test_phrases_spool_a_stream_and_train_phrases_refuses_one(tmp_path, cli):
    """``w2v phrases`` reads its corpus twice: a pipe is copied first; ``train --phrases`` and
    ``learn_phrases`` refuse one in one line."""
    done = run_on_pipe(CONTENT, "phrases", "{fd}", "-o", tmp_path / "pipe.txt", "--min-count", "1", "--threshold", "1")
    assert done.returncode == 0, done.stderr.decode()
    corpus = write(tmp_path, "c.txt", CONTENT)
    assert cli("phrases", corpus, "-o", tmp_path / "file.txt", "--min-count", "1", "--threshold", "1").returncode == 0
    assert (tmp_path / "pipe.txt").read_bytes() == (tmp_path / "file.txt").read_bytes()
    assert (tmp_path / "pipe.txt").read_bytes().startswith(b"the_quick brown_fox\n")
    done = run_on_pipe(CONTENT, "train", "{fd}", "-o", tmp_path / "v.bin", "--phrases")
    message = done.stderr.decode()
    assert done.returncode == 1 and message.count("\n") == 1, message
    assert message.startswith("w2v: error: --phrases reads the corpus more than once") and "/dev/fd/" in message
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(CorpusError, match="fifo is a stream"):
        learn_phrases([str(corpus), str(tmp_path / "fifo")])


TEXT = b"the cat sat on the mat\nthe dog sat on the log\n" * 200


@pytest.mark.parametrize(
    "content,reason",
    [
        (gzip.compress(TEXT, mtime=0), "gzip's magic bytes (1f 8b)"),
        (bz2.compress(TEXT), "bzip2's magic bytes (42 5a 68)"),
        (lzma.compress(TEXT), "xz's magic bytes (fd 37 7a 58 5a 00)"),
        (zstandard.ZstdCompressor().compress(TEXT), "zstd's magic bytes (28 b5 2f fd)"),
        (TEXT.decode().encode("utf-16"), "UTF-16 byte-order mark"),  # little-endian here, with its mark
        (TEXT.decode().encode("utf-16-be"), "50% of its first megabyte are NUL bytes"),  # no mark
        (np.random.default_rng(0).bytes(1 << 20), "binary data (43% not valid UTF-8, 11% control bytes)"),
    ],
    ids=["gzip", "bzip2", "xz", "zstd", "utf-16", "utf-16-be", "random"],
)
def test_check_text_says_why_a_file_is_not_text(tmp_path, content, reason):
    reason_found = check_text(str(write(tmp_path, "corpus.txt", content)))
    assert reason_found is not None and reason in reason_found, reason_found


@pytest.mark.parametrize(
    "name,content",
    [
        ("text.txt", TEXT),
        ("nul.txt", b"the cat\x00sat on\x00 the mat dog\n" * 2000),  # 7% NUL: legitimate words
        ("latin1.txt", "déjà vu à la carte\n".encode("latin-1") * 500),
        ("cp1251.txt", "привет мир\n".encode("cp1251") * 500),  # 80% not UTF-8, but text
        ("empty.txt", b""),
        ("packed.txt.gz", gzip.compress(TEXT, mtime=0)),  # decompressed as its name says
    ],
)
def test_check_text_passes_text(tmp_path, name, content):
    assert check_text(str(write(tmp_path, name, content))) is None


def test_check_text_leaves_streams_unread(fifo):
    path = fifo(TEXT)
    assert check_text(str(path)) is None
    assert sentences_of(path) == [line.split() for line in TEXT.splitlines()]  # all of it still there


@pytest.mark.slow
def test_binary_data_on_standard_input_gets_the_warning_a_file_gets(tmp_path, cli):
    """Standard input was never checked (reading it consumes it): its first megabyte is
    read ahead for the check, then trained on with the rest, as the same bytes in a file."""
    content = np.random.default_rng(0).bytes(1 << 20) + TEXT  # past the megabyte read ahead
    corpus = write(tmp_path, "junk.txt", content)
    args = ["-o", tmp_path / "v.txt", "--dim", "8", "--epochs", "1", "--threads", "1", "-q"]
    from_file = cli("train", corpus, *args)
    vectors = (tmp_path / "v.txt").read_bytes()
    from_stdin = cli("train", "-", *args, input=content)
    reason = "its first megabyte looks like binary data (43% not valid UTF-8, 11% control bytes)"
    assert (from_file.returncode, from_file.stderr.decode()) == (0, f"w2v: warning: {corpus}: {reason}\n")
    assert (from_stdin.returncode, from_stdin.stderr.decode()) == (0, f"w2v: warning: -: {reason}\n")
    assert (tmp_path / "v.txt").read_bytes() == vectors


def test_without_outputs_compares_real_paths(tmp_path):
    (tmp_path / "ckpt").mkdir()
    for name in ("a.txt", "out.bin", "ckpt/state.npz", "ckpt2.txt"):
        write(tmp_path, name, TEXT)
    os.symlink(tmp_path / "out.bin", tmp_path / "link.bin")
    sources = expand_sources([tmp_path, "-"])
    kept, skipped = without_outputs(sources, [str(tmp_path / "link.bin"), str(tmp_path / "ckpt")])
    assert kept == [str(tmp_path / "a.txt"), str(tmp_path / "ckpt2.txt"), "-"]
    assert skipped == [str(tmp_path / "ckpt" / "state.npz"), str(tmp_path / "link.bin"), str(tmp_path / "out.bin")]


@pytest.mark.slow
def test_commands_never_read_their_own_outputs_and_warn_about_binary_files(tmp_path, cli):
    """``w2v train folder/ -o folder/vectors.bin`` run twice: the second run leaves out what it
    writes (the vectors, the vocabulary, the checkpoint's files) with a note, and counts the same
    corpus; a compressed file under a plain name gets a warning and is still read."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    write(folder, "a.txt", TEXT)
    write(folder, "packed.txt", gzip.compress(b"zebra " * 10))
    args = ["-o", folder / "vectors.bin", "--save-vocab", folder / "vocab.txt", "--checkpoint", folder / "ckpt"]
    args += ["--min-count", "1", "--epochs", "1", "--dim", "8"]
    vocabularies, messages = [], []
    for _ in range(2):
        done = cli("train", folder, *args, "-q")
        assert done.returncode == 0, done.stderr.decode()
        vocabularies.append((folder / "vocab.txt").read_bytes())
        messages.append(done.stderr.decode().splitlines())
    warning = f"w2v: warning: {folder / 'packed.txt'}: it starts with gzip's magic bytes (1f 8b): compressed data"
    assert [line.startswith(warning) for line in messages[0]] == [True]
    assert sorted(line for line in messages[1] if "note" in line) == [
        f"w2v: note: not reading {folder / name}: this run writes it"
        for name in ("ckpt/checkpoint.npz", "vectors.bin", "vocab.txt")
    ]
    assert vocabularies[0] == vocabularies[1]
    done = cli("vocab", folder / "vocab.txt", "-o", folder / "vocab.txt")
    assert done.returncode == 1 and done.stderr.decode().endswith("every file given is one this run writes\n")


def test_missing_sources(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        expand_sources([tmp_path / "missing.txt"])
    with pytest.raises(CorpusError, match=r"missing\.txt"):
        list(token_blocks([str(tmp_path / "missing.txt")]))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no files"):
        expand_sources([tmp_path / "empty"])
    with pytest.raises(CorpusError):
        expand_sources([])


def test_block_ids_inserts_sentence_ends():
    ids = np.array([5, 6, 7, 8], dtype=np.int32)
    got = block_ids(TokenBlock([b""] * 4, [-1, 1, 3]), ids)
    assert got.tolist() == [-1, 5, 6, -1, 7, 8, -1]
    assert block_ids(TokenBlock([b""] * 4, []), ids).tolist() == [5, 6, 7, 8]


def test_id_stream_batches_end_at_sentence_ends(tmp_path):
    rng = np.random.default_rng(1)
    pieces = []
    for length in rng.integers(1, 30, size=60):
        pieces.append(rng.integers(0, 100, size=length).astype(np.int32))
        pieces.append(np.array([SENTENCE_END], np.int32))
    ids = np.concatenate(pieces)
    writer = IdStreamWriter(str(tmp_path), batch_size=50)
    for start in range(0, len(ids), 37):  # written in blocks that split sentences
        writer.write(ids[start : start + 37])
    stream = writer.finish()
    try:
        batches = [stream.batch(i) for i in range(len(stream))]
        assert np.array_equal(np.concatenate(batches), ids)
        for batch, words in zip(batches, stream.batch_words, strict=True):
            assert batch[-1] == SENTENCE_END
            assert (batch >= 0).sum() == words
            # a batch ends at the first sentence end at or after its 50th id
            assert len(batch) >= 50 or batch is batches[-1]
            assert SENTENCE_END not in batch[49:-1]
        assert stream.words == (ids >= 0).sum()
        assert stream.starts[0] == 0 and stream.ends[-1] == len(ids)
        buffer = np.full(stream.longest, 7, dtype=np.int32)  # a worker reads every batch into one buffer
        assert stream.longest == max(len(b) for b in batches)
        for index, expected in enumerate(batches):
            batch = stream.batch(index, buffer)
            assert np.shares_memory(batch, buffer) and np.array_equal(batch, expected)
        os.ftruncate(stream.fileno(), 4 * (len(ids) - 1))  # the file cut short: an error, not stale ids
        with pytest.raises(CorpusError, match="cut short"):
            stream.batch(len(stream) - 1, buffer)
    finally:
        stream.close()


def exact_stream(tmp_path, ids: np.ndarray, size: int, block: int) -> list[list[int]]:
    """The batches of an exact id stream of ``size`` words a batch, written in blocks of ``block`` ids."""
    writer = IdStreamWriter(str(tmp_path), batch_size=size, exact=True)
    for start in range(0, len(ids), block):
        writer.write(ids[start : start + block])
        writer.write(ids[:0])  # a block whose words were all dropped
    stream = writer.finish()
    try:
        assert stream.batch_words.tolist() == [(stream.batch(i) >= 0).sum() for i in range(len(stream))]
        return [stream.batch(i).tolist() for i in range(len(stream))]
    finally:
        stream.close()


@given(st.lists(st.integers(0, 40), min_size=1, max_size=30).filter(any), st.integers(1, 50), st.integers(1, 60))
def test_exact_batches_cut_sentences_at_their_last_word(tmp_path_factory, lengths, size, block):
    """Batches of exactly ``size`` words (the last one fewer), each ending at a sentence
    end: the words and the sentence ends read stay (empty sentences, of rare words
    dropped, included), and a sentence is cut after every ``size``-th word it goes on
    past. However the blocks fall, the same stream."""
    tmp_path = tmp_path_factory.mktemp("exact")
    rng = np.random.default_rng(len(lengths) * 1000 + size)
    sentences = [rng.integers(0, 100, size=length).astype(np.int32) for length in lengths]
    ids = np.concatenate([np.append(sentence, SENTENCE_END) for sentence in sentences]).astype(np.int32)
    batches = exact_stream(tmp_path, ids, size, block)
    assert batches == exact_stream(tmp_path, ids, size, len(ids))
    cut = np.concatenate(batches)
    assert np.array_equal(cut[cut >= 0], ids[ids >= 0])
    words = np.trim_zeros(np.array([sum(id_ >= 0 for id_ in batch) for batch in batches]), "b").tolist()
    assert words[:-1] == [size] * (len(words) - 1) and 0 < words[-1] <= size  # then only empty sentences
    assert all(batch[-1] == SENTENCE_END for batch in batches)
    ends_read = Counter(np.cumsum(ids >= 0)[ids == SENTENCE_END].tolist())  # by the words before them
    ends_cut = Counter(np.cumsum(cut >= 0)[cut == SENTENCE_END].tolist())
    assert not ends_read - ends_cut
    added = ends_cut - ends_read
    assert all(count == 1 and words % size == 0 and words not in ends_read for words, count in added.items())


@pytest.mark.parametrize(
    ("blocks", "neighbours"),
    [
        ([[1, SENTENCE_END, 2, SENTENCE_END], [3]], False),  # one-word sentences
        ([[1, SENTENCE_END, 2], [], [3, SENTENCE_END]], True),  # a sentence split between two blocks
        ([[1, SENTENCE_END], [2, 3]], True),
        ([[1, SENTENCE_END, SENTENCE_END, 2, SENTENCE_END]], False),
    ],
)
def test_the_writer_tells_whether_two_words_stand_side_by_side(tmp_path, blocks, neighbours):
    """Whether a word has a context: the kernel's windows reach across no sentence end."""
    writer = IdStreamWriter(str(tmp_path), batch_size=2)
    for block in blocks:
        writer.write(np.array(block, dtype=np.int32))
    writer.finish().close()
    assert writer.neighbours is neighbours


def test_cut_at_batch_ends_inserts_an_end_only_where_a_sentence_goes_on():
    E = SENTENCE_END
    ids = np.array([1, 2, 3, 4, 5, E, 6, 7, E, 8], dtype=np.int32)
    cut, starts, cut_last = cut_at_batch_ends(ids, 2, 0, False)
    assert cut.tolist() == [1, 2, E, 3, 4, E, 5, E, 6, E, 7, E, 8, E] and starts.tolist() == [3, 6, 10, 14]
    assert cut_last  # the block ends with a batch's last word: cut, whatever follows
    cut, starts, cut_last = cut_at_batch_ends(ids, 5, 3, False)  # 3 words before: batches end at word 5, 10
    assert cut.tolist() == [1, 2, E, 3, 4, 5, E, 6, 7, E, 8] and starts.tolist() == [3, 10] and not cut_last
    assert cut_at_batch_ends(np.array([1, 2], dtype=np.int32), 2, 0, False)[0].tolist() == [1, 2, E]
    cut, starts, cut_last = cut_at_batch_ends(np.array([E, 3], dtype=np.int32), 2, 2, True)  # ended already
    assert cut.tolist() == [3] and starts.tolist() == [] and not cut_last


@given(st.integers(0, 300), st.integers(1, 400))
def test_evenly_spaced_streams_take_every_batch_once_in_turn(batches, streams):
    """The order is a permutation; each stream is a run of consecutive batches that
    starts at floor(s B / S) and is trained in file order, and the first batches of
    all streams come before any second one."""
    order = evenly_spaced(batches, streams)
    assert sorted(order.tolist()) == list(range(batches))
    used = min(streams, batches)
    starts = [s * batches // used for s in range(used)]
    assert order[:used].tolist() == starts
    stream_of = np.searchsorted(starts, order, side="right") - 1
    for s in range(used):
        mine = order[stream_of == s]
        assert mine.tolist() == list(range(starts[s], starts[s + 1] if s + 1 < used else batches))
    place = order - np.asarray(starts, dtype=np.int64)[stream_of]
    assert (np.diff(place) >= 0).all()  # by place in its stream, then by stream


def test_one_stream_is_the_files_order():
    assert evenly_spaced(7, 1).tolist() == list(range(7))
    assert evenly_spaced(10, 3).tolist() == [0, 3, 6, 1, 4, 7, 2, 5, 8, 9]


def test_reordered_id_stream_reads_the_batches_in_the_new_order(tmp_path):
    ids = np.array([1, 2, SENTENCE_END, 3, SENTENCE_END, 4, 5, 6, SENTENCE_END], dtype=np.int32)
    writer = IdStreamWriter(str(tmp_path), batch_size=1)
    writer.write(ids)
    stream = writer.finish()
    try:
        stream.reorder(np.array([2, 0, 1]))
        assert [stream.batch(i).tolist() for i in range(3)] == [[4, 5, 6, -1], [1, 2, -1], [3, -1]]
        assert stream.batch_words.tolist() == [3, 2, 1] and stream.longest == 4
    finally:
        stream.close()
