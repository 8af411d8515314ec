"""A plain-numpy re-implementation of ``w2v.engine.kernels.train_batch`` (no Numba),
and of the Python reading of a corpus that ``chunkcounter.ChunkCounter`` matches.

It follows the kernel's batch semantics step by step and consumes the random
generator in exactly the same order, so that for the same inputs it produces the
same updates (up to float32 rounding), the same loss and the same counts:

- the generator is word2vec.c's 64-bit LCG ``r = r * 25214903917 + 11 mod 2**64``,
  held here as a Python int;
- subsampling draws one step only for a word whose keep probability is below 1,
  and drops the word when ``keep < (r >> 40) / 2**24``;
- one step per centre word picks the window: ``reach = window - ((r >> 16) % window)``;
- skip-gram: for each context position c != pos in [pos - reach, pos + reach] of
  the sentence, the context word's input row predicts the centre word; CBOW: the
  sum (or mean) of the context rows predicts it, skipped when there is no context,
  and the hidden gradient is added unscaled to every context row;
- per example (a skip-gram window, or a CBOW centre word) hierarchical softmax
  first, node by node along the centre word's path (a node with |f| >= 6 takes
  no step from that input), then negative sampling, whose ``negative`` noise
  words are all drawn before any is scored (two steps a draw, the alias method);
  a noise word equal to the target is skipped;
- each output unit is scored against every input of the example (skip-gram: the
  window's context rows as they were before the window; CBOW: the hidden vector),
  each input's gradient takes ``g * row`` against the row as it was before the
  unit, and the row then moves once by the sum of the inputs' ``g * input``;
- the context rows take their gradients after the example; a skip-gram window of
  more than ``CHUNK`` context words is taken as consecutive examples of at most
  ``CHUNK`` of them (sharing the window's noise words);
- with subwords, a sentence position's input is its word's rows summed as it
  comes into the reach, and the gradients its windows give it reach those rows
  as it leaves (``Reach``): for CBOW, from ``pos + window`` to ``pos - window``, every
  position in reach leaving and entering again each ``CHUNK`` centre words where
  more than ``CHUNK`` positions are in reach; for skip-gram, around each chunk.

Also here: small readers of the word2vec vector formats, a writer of fastText's
``.bin`` layout (for models no fastText would write), fastText's own training of a small model and fastText's character
n-grams of one word, in plain Python, used by the tests.
"""

import math
import struct
from collections.abc import Iterable, Iterator

import numpy as np
import pytest

from w2v.corpus.sources import BLOCK_BYTES, MAX_WORD_BYTES, SentenceCutter, TokenBlock, line_words, read_chunks
from w2v.engine.kernels import Settings
from w2v.losses import LOSSES, NO_WORD_LOSS

MASK64 = (1 << 64) - 1
LCG_MUL = 25214903917
LCG_ADD = 11
HS_MAX_EXP = 6.0
CHUNK = 16  # kernels.CHUNK
ALIAS_ONE = 1 << 24


def lcg(r: int) -> int:
    """One step of word2vec.c's generator."""
    return (r * LCG_MUL + LCG_ADD) & MASK64


def softplus(x: float) -> float:
    """log(1 + exp(x)), the loss of one logistic unit (nats)."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def sigmoid(x: float) -> float:
    """1 / (1 + exp(-x)), from exp(-|x|) so that no logit overflows."""
    s = 1.0 / (1.0 + math.exp(-abs(x)))
    return s if x >= 0 else 1.0 - s


def draw_noise(r: int, threshold: np.ndarray, alias: np.ndarray) -> tuple[int, int]:
    """One alias-table draw: (word, new state)."""
    r = lcg(r)
    column = ((r >> 32) * len(threshold)) >> 32
    r = lcg(r)
    word = column if (r >> 40) < int(threshold[column]) else int(alias[column])
    return word, r


def alias_probabilities(threshold: np.ndarray, alias: np.ndarray) -> np.ndarray:
    """The exact distribution a draw from (threshold, alias) follows (float64)."""
    size = len(threshold)
    accept = threshold.astype(np.float64) / ALIAS_ONE
    probs = accept.copy()
    np.add.at(probs, alias.astype(np.int64), 1.0 - accept)
    return probs / size


def draw_negatives(target, negative, params, r):
    """The target then ``negative`` noise words; returns (words, new state)."""
    threshold, alias = params[5], params[6]
    words = [int(target)]
    for _ in range(negative):
        word, r = draw_noise(r, threshold, alias)
        words.append(word)
    return words, r


NS, NCE, SAMPLED_SOFTMAX, SOFTMAX = (LOSSES[name].code for name in ("ns", "nce", "sampled_softmax", "softmax"))


def candidates(params, target, words, kind, negative) -> tuple[list[int], list[float]]:
    """The word output loss's candidate rows (the target first) and their logit offsets:
    a noise word equal to the target is left out by negative sampling, kept by NCE and
    sampled softmax; NCE's and sampled softmax's offsets are -log(k q(w))."""
    rows = [int(w) for d, w in enumerate(words) if d == 0 or w != target or kind != NS]
    log_q = params[7]
    offsets = [-(math.log(max(negative, 1)) + float(log_q[w])) if kind in (NCE, SAMPLED_SOFTMAX) else 0.0 for w in rows]
    return rows, offsets


def logistic_units(inputs, units, alpha) -> tuple[float, np.ndarray]:
    """Logistic output units, one after another: ``units`` lists (matrix, row, label,
    HS rule, logit offset). Each unit is scored against every input; each input's
    gradient takes ``g * row`` against the row as it was before the unit; the row
    then moves once by the sum of the inputs' ``g * input``. Returns the loss and
    the inputs' gradients."""
    grads = np.zeros_like(inputs)
    loss = 0.0
    for out, row, label, hs_rule, shift in units:
        before = out[row].copy()
        step = np.zeros(inputs.shape[1], dtype=np.float32)
        for i, x in enumerate(inputs):
            f = float(np.dot(x, before)) + shift
            loss += softplus(-f if label > 0.5 else f)
            if hs_rule and (f <= -HS_MAX_EXP or f >= HS_MAX_EXP):
                continue
            g = np.float32((label - sigmoid(f)) * np.float32(alpha))
            grads[i] += g * before
            step += g * x
        out[row] += step
    return loss, grads


def tree_example(inputs, target, params, settings, words, alpha) -> tuple[float, np.ndarray]:
    """Hierarchical softmax: the nodes of ``target``'s path, the label of each
    1 - its code bit, with word2vec.c's rule (no step where |f| >= 6)."""
    syn1, nodes, labels, offsets = params[0], params[2], params[3], params[4]
    path = range(int(offsets[target]), int(offsets[target + 1]))
    return logistic_units(inputs, [(syn1, int(nodes[j]), float(labels[j]), True, 0.0) for j in path], alpha)


def sampled_logistic_example(inputs, target, params, settings, words, alpha) -> tuple[float, np.ndarray]:
    """Negative sampling and NCE: the target (label 1), then its noise words (label 0),
    with NCE's logit offsets (``candidates``)."""
    rows, shifts = candidates(params, target, words, settings.kind, settings.samples)
    labels = [1.0] + [0.0] * (len(rows) - 1)
    units = [(params[1], row, label, False, b) for row, label, b in zip(rows, labels, shifts, strict=True)]
    return logistic_units(inputs, units, alpha)


def sampled_softmax_example(inputs, target, params, settings, words, alpha) -> tuple[float, np.ndarray]:
    """Sampled softmax: the softmax over the target and its draws, offsets -log(k q(w))."""
    rows, shifts = candidates(params, target, words, settings.kind, settings.samples)
    return softmax_example(inputs, params[1], rows, shifts, 0, 0.0, alpha)


def full_softmax_example(inputs, target, params, settings, words, alpha) -> tuple[float, np.ndarray]:
    """The full softmax over every word, with ``settings.beta``'s (log Z)^2 penalty."""
    every = list(range(len(params[1])))
    return softmax_example(inputs, params[1], every, 0.0, target, settings.beta, alpha)


# Each loss of ``w2v.losses.LOSSES``, by name: one example's loss and inputs' gradients
LOSS_EXAMPLES = {
    "hs": tree_example,
    "ns": sampled_logistic_example,
    "nce": sampled_logistic_example,
    "sampled_softmax": sampled_softmax_example,
    "softmax": full_softmax_example,
}


def softmax_example(inputs, out, rows, shifts, target_pos, beta, alpha) -> tuple[float, np.ndarray]:
    """The softmax link on one example: for each input, -log p_t + beta (log Z)^2 over
    the candidate rows (logits u_r . x + b_r); every input's gradient against the
    rows as they were, then the rows move. Returns the loss and the inputs' gradients."""
    before = out[rows].astype(np.float64)
    logits = inputs.astype(np.float64) @ before.T + np.asarray(shifts)  # (inputs, rows)
    log_z = np.log(np.exp(logits - logits.max(axis=1, keepdims=True)).sum(axis=1)) + logits.max(axis=1)
    p = np.exp(logits - log_z[:, None])
    loss = float((log_z - logits[:, target_pos] + beta * log_z**2).sum())
    g = -p * (1 + 2 * beta * log_z[:, None])
    g[:, target_pos] += 1.0
    g = (alpha * g).astype(np.float32)
    grads = (g @ before).astype(np.float32)
    np.add.at(out, rows, (g.T @ inputs).astype(np.float32))
    return loss, grads


def losses_on(settings) -> list[str]:
    """The names of the losses ``settings`` (the kernel's ``Settings``) trains, in the
    kernel's order: hierarchical softmax first, then the loss of the word output vectors."""
    word_loss = [loss.name for loss in LOSSES.values() if loss.code == settings.kind != NO_WORD_LOSS]
    return (["hs"] if settings.hs else []) + word_loss


def train_example(inputs: np.ndarray, target, params, settings, words, alpha):
    """One example: ``inputs`` (n, D) predict ``target``, drawn noise words ``words``
    (the target first), with each of ``settings``' losses in turn (``LOSS_EXAMPLES``).
    Updates the output rows; returns the loss and the inputs' gradients (n, D), to be
    added to their rows."""
    grads = np.zeros_like(inputs)
    loss = 0.0
    for name in losses_on(settings):
        extra, more = LOSS_EXAMPLES[name](inputs, target, params, settings, words, alpha)
        loss, grads = loss + extra, grads + more
    return loss, grads


def settings_of(params, window, samples, cbow, cbow_mean=True, kind=NS, beta=0.0, sharers=1):
    """The kernel's ``Settings`` for tables ``params`` made for them: hierarchical
    softmax if ``params.syn1`` has rows, ``kind`` if ``params.syn1neg`` has, subwords if
    ``params.subword_offsets`` has."""
    word_loss = kind if params.syn1neg.shape[0] else NO_WORD_LOSS
    subwords = params.subword_offsets.shape[0] > 0
    return Settings(window, samples, cbow, cbow_mean, params.syn1.shape[0] > 0, word_loss, subwords, beta, sharers)


def input_rows(params, word: int) -> list[int]:
    """The rows of ``syn0`` that make ``word``'s input: its own, or with subwords
    (``params.subword_offsets`` not empty) the rows its subword table lists."""
    offsets = params.subword_offsets
    if offsets.shape[0] == 0:
        return [word]
    return [int(row) for row in params.subword_rows[offsets[word] : offsets[word + 1]]]


class Reach:
    """The input side of a sentence: its positions' input vectors and where their
    gradients go. Words alone: a position is its word's row of ``syn0``, read and
    moved at once. With subwords: the sum of its word's rows and their number as
    they were when the position came into reach, and the gradients it has taken
    since, added to those rows as it leaves."""

    def __init__(self, syn0, params, sentence: list[int], window: int, cbow: bool):
        self.syn0, self.params, self.sentence, self.window, self.cbow = syn0, params, sentence, window, cbow
        self.subwords = params.subword_offsets.shape[0] > 0
        self.values: dict[int, tuple[np.ndarray, int]] = {}  # position: (its rows' sum, their number)
        self.pending: dict[int, np.ndarray] = {}  # position: its gradients' sum
        self.entered = 0  # positions that have come into reach so far

    def advance(self, pos: int) -> None:
        """Hold positions ``pos - window`` .. ``pos + window`` as the centre moves to ``pos``."""
        if not self.subwords or not self.cbow:
            return
        for p in [p for p in self.values if p < pos - self.window]:
            self.leave(p)
        if 2 * self.window + 1 > CHUNK and pos > 0 and pos % CHUNK == 0:
            for p in sorted(self.values):
                self.leave(p)
                self.enter(p)
        while self.entered <= min(pos + self.window, len(self.sentence) - 1):
            self.enter(self.entered)
            self.entered += 1

    def enter(self, p: int) -> None:
        rows = input_rows(self.params, self.sentence[p])
        total = np.zeros(self.syn0.shape[1], dtype=np.float32)
        for row in rows:
            total += self.syn0[row]
        self.values[p] = (total, len(rows))
        self.pending[p] = np.zeros(self.syn0.shape[1], dtype=np.float32)

    def leave(self, p: int) -> None:
        for row in input_rows(self.params, self.sentence[p]):
            self.syn0[row] += self.pending[p]
        del self.values[p], self.pending[p]

    def finish(self) -> None:
        """At the sentence's end: every position left leaves."""
        for p in sorted(self.values):
            self.leave(p)

    def value(self, p: int) -> tuple[np.ndarray, int]:
        """Position ``p``'s summed rows and how many."""
        return self.values[p] if self.subwords else (self.syn0[self.sentence[p]].copy(), 1)

    def hidden(self, positions: list[int], mean: bool) -> np.ndarray:
        """CBOW's input: the positions' values summed in order, over their total rows if ``mean``."""
        total, count = np.zeros(self.syn0.shape[1], dtype=np.float32), 0
        for p in positions:
            value, size = self.value(p)
            total += value
            count += size
        return total / np.float32(count) if mean else total

    def move(self, p: int, grad: np.ndarray) -> None:
        """Position ``p`` takes ``grad``: its word's row at once, or (subwords) when it leaves."""
        if self.subwords:
            self.pending[p] += grad
        else:
            self.syn0[self.sentence[p]] += grad


def output_rows(params, target, words, settings) -> int:
    """The output rows an example predicting ``target`` trains (the kernel's
    ``output_rows``): its path's nodes, then the candidates left of ``words``
    (the target and its draws) or, for the full softmax, every word."""
    rows = 0
    if settings.hs:
        rows += int(params.path_offsets[target + 1] - params.path_offsets[target])
    if settings.kind != NO_WORD_LOSS:
        kept = candidates(params, target, words, settings.kind, settings.samples)[0]
        rows += params.syn1neg.shape[0] if settings.kind == SOFTMAX else len(kept)
    return rows


def train_batch(tokens, syn0, params, keep_prob, settings, alpha, seed):
    """The reference of the kernel's ``train_batch``: same arguments, same effects
    and counts. ``settings`` is the kernel's ``Settings``, read by name."""
    window, negative = settings.window, settings.samples
    r = int(seed)
    draws = settings.kind not in (NO_WORD_LOSS, SOFTMAX)
    tokens = [int(t) for t in tokens]
    loss = 0.0
    examples = updates = visits = 0
    i = 0
    while i < len(tokens):
        sentence = []
        while i < len(tokens) and tokens[i] >= 0:
            word = tokens[i]
            i += 1
            keep = float(keep_prob[word])
            if keep < 1.0:
                r = lcg(r)
                if keep < (r >> 40) / float(ALIAS_ONE):
                    continue
            sentence.append(word)
        i += 1
        length = len(sentence)
        side = Reach(syn0, params, sentence, window, settings.cbow)
        for pos in range(length):
            side.advance(pos)
            r = lcg(r)
            reach = window - ((r >> 16) % window)
            lo, hi = max(pos - reach, 0), min(pos + reach + 1, length)
            target = sentence[pos]
            context = [c for c in range(lo, hi) if c != pos]  # positions
            if not context:
                continue
            words, r = draw_negatives(target, negative, params, r) if draws else ([], r)
            if settings.cbow:
                hidden = side.hidden(context, settings.cbow_mean)
                step, grads = train_example(hidden[None, :], target, params, settings, words, alpha)
                examples += 1
                loss += step
                for c in context:  # each takes the gradient unscaled
                    side.move(c, grads[0])
            else:
                for first in range(0, len(context), CHUNK):
                    chunk = context[first : first + CHUNK]
                    for c in chunk if side.subwords else []:  # into the reach for the chunk alone
                        side.enter(c)
                    inputs = np.stack([value / np.float32(size) for value, size in map(side.value, chunk)])
                    step, grads = train_example(inputs, target, params, settings, words, alpha)
                    loss += step
                    for c, grad in zip(chunk, grads, strict=True):
                        side.move(c, grad)
                    for c in chunk if side.subwords else []:
                        side.leave(c)
                examples += len(context)
            rows = output_rows(params, target, words, settings)
            updates += (1 if settings.cbow else len(context)) * rows
            visits += (1 if settings.cbow else -(-len(context) // CHUNK)) * rows + len(context)
        side.finish()
    return loss, examples, updates, visits


def example_loss(hidden, target, syn1, syn1neg, nodes, labels, offsets, noise) -> float:
    """The loss (nats, float64) of one example whose noise words are ``noise``, without
    HS's |f| >= 6 rule (the caller keeps f small): the function the kernel descends."""
    hidden = np.asarray(hidden, dtype=np.float64)
    loss = 0.0
    if syn1 is not None:
        for j in range(int(offsets[target]), int(offsets[target + 1])):
            f = float(hidden @ np.asarray(syn1[int(nodes[j])], dtype=np.float64))
            loss += softplus(-f if labels[j] == 1 else f)
    if syn1neg is not None:
        loss += softplus(-float(hidden @ np.asarray(syn1neg[target], dtype=np.float64)))
        for word in noise:
            if word != target:
                loss += softplus(float(hidden @ np.asarray(syn1neg[word], dtype=np.float64)))
    return loss


def read_word2vec(path, binary: bool) -> tuple[list[bytes], np.ndarray]:
    """Parse a word2vec file strictly: (words as bytes, float32 (V, D))."""
    with open(path, "rb") as handle:
        data = handle.read()
    header, _, rest = data.partition(b"\n")
    count, dim = (int(x) for x in header.split(b" "))
    words, rows = [], []
    if binary:
        at = 0
        for _ in range(count):
            space = rest.index(b" ", at)
            words.append(rest[at:space])
            rows.append(np.frombuffer(rest, dtype="<f4", count=dim, offset=space + 1))
            at = space + 1 + 4 * dim
            assert rest[at : at + 1] == b"\n"
            at += 1
        assert at == len(rest)
    else:
        lines = rest.split(b"\n")
        assert lines[-1] == b""
        for line in lines[:-1]:
            fields = line.split(b" ")
            assert len(fields) == dim + 1
            words.append(fields[0])
            rows.append(np.array([float(x) for x in fields[1:]], dtype=np.float32))
        assert len(words) == count
    return words, np.array(rows, dtype=np.float32).reshape(count, dim)


def fasttext_bin(
    words: list[bytes],
    dim: int = 2,
    bucket: int = 4,
    minn: int = 3,
    maxn: int = 6,
    rows: int | None = None,
    values: np.ndarray | None = None,
) -> bytes:
    """A fastText ``.bin`` model (format version 12, as ``w2v.vectorio.fasttext`` documents
    it) of the unsupervised ``words`` and the given settings, its input matrix of ``rows``
    rows (default ``len(words) + bucket``, fastText's) holding ``values`` (by default
    ``0.0, 0.1, 0.2, ...``)."""
    rows = len(words) + max(bucket, 0) if rows is None else rows
    values = np.arange(rows * dim) / 10 if values is None else values
    head = struct.pack("<2i", 793712314, 12)
    head += struct.pack("<12id", dim, 5, 1, 1, 5, 1, 2, 2, bucket, minn, maxn, 100, 1e-4)  # skipgram, ns
    head += struct.pack("<3i2q", len(words), len(words), 0, 100, -1)  # size nwords nlabels ntokens pruneidx_size
    head += b"".join(word + b"\0" + struct.pack("<qb", 1, 0) for word in words)  # count 1, type word
    matrix = np.asarray(values, dtype="<f4").tobytes()
    return head + b"\0" + struct.pack("<2q", rows, dim) + matrix + struct.pack("<2q", 0, dim)  # an empty output


def fasttext_subwords(word: str, minn: int, maxn: int) -> list[str]:
    """The character n-grams of ``word``, character by character as fastText's
    ``computeSubwords`` takes them: each ``minn`` to ``maxn`` characters of ``<word>``,
    by start then length, but not ``<`` or ``>`` alone."""
    padded = f"<{word}>"
    return [
        padded[start : start + n]
        for start in range(len(padded))
        for n in range(max(minn, 1), maxn + 1)
        if start + n <= len(padded) and not (n == 1 and start in (0, len(padded) - 1))
    ]


def fasttext_hash(ngram: str | bytes) -> int:
    """fastText's ``Dictionary::hash``: 32-bit FNV-1a over the (UTF-8) bytes, each taken as
    a signed char (so a byte above 127 is xor-ed in as 0xFFFFFFxx)."""
    h = 2166136261
    for byte in ngram.encode() if isinstance(ngram, str) else ngram:
        h = ((h ^ (byte - 256 if byte > 127 else byte)) & 0xFFFFFFFF) * 16777619 & 0xFFFFFFFF
    return h


def fasttext_buckets(word: bytes, minn: int, maxn: int, bucket: int) -> list[int]:
    """fastText's ``Dictionary::computeSubwords`` of ``word`` (any bytes), line for line:
    from each byte of ``<word>`` that is no UTF-8 continuation byte, n grows one
    character at a time (a byte and the continuation bytes after it) up to ``maxn``;
    the n-grams of ``minn`` characters or more, but not ``<`` or ``>`` alone, hashed
    (``fasttext_hash``) modulo ``bucket``, by start, then length."""
    padded = b"<" + word + b">"
    found = []
    for i in range(len(padded)):
        if padded[i] & 0xC0 == 0x80:
            continue
        j, n = i, 1
        while j < len(padded) and n <= maxn:
            j += 1
            while j < len(padded) and padded[j] & 0xC0 == 0x80:
                j += 1
            if n >= minn and not (n == 1 and (i == 0 or j == len(padded))):
                found.append(fasttext_hash(padded[i:j]) % bucket)
            n += 1
    return found


def token_blocks(
    sources: Iterable[str],
    block_bytes: int = BLOCK_BYTES,
    max_tokens: int | None = None,
    max_word: int = MAX_WORD_BYTES,
) -> Iterator[TokenBlock]:
    """The corpus as Python reads it: each chunk split into lines and tokens by
    ``line_words`` (``bytes.split``, each token cut to ``max_word`` bytes), sentences
    cut by ``SentenceCutter``; each source's end ends a sentence. ``ChunkCounter``
    must find the same tokens and sentence ends."""
    cutter = SentenceCutter() if max_tokens is None else SentenceCutter(max_tokens)
    for source in sources:
        for chunk in read_chunks(source, block_bytes, max_word):
            lines = [line_words(line, max_word) for line in chunk.split(b"\n")]
            yield cutter.block(lines, last_open=not chunk.endswith(b"\n"))
        if cutter.run:
            yield cutter.block([[]], last_open=False)


def numeric_gradient(loss, array, row, eps=1e-6):
    """Central differences of ``loss()`` w.r.t. array[row] (float64 copy of the array)."""
    grad = np.zeros(array.shape[1])
    for k in range(array.shape[1]):
        saved = array[row, k]
        array[row, k] = saved + eps
        plus = loss()
        array[row, k] = saved - eps
        minus = loss()
        array[row, k] = saved
        grad[k] = (plus - minus) / (2 * eps)
    return grad


FASTTEXT_CORPUS = ("the cat sat on the mat café naïve über straße 日本語 a\n" * 20) + ("the dog sat on a log\n" * 20)


def train_fasttext(tmp_path, text: str = FASTTEXT_CORPUS, **settings):
    """fastText's own unsupervised model of ``text`` (small and quick unless ``settings``
    say otherwise), saved as ``model.bin`` in ``tmp_path``: (the model, its path). Skips
    the test where fastText is not installed."""
    fasttext = pytest.importorskip("fasttext")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text)
    options = dict(dim=8, minCount=1, epoch=1, thread=1, verbose=0, bucket=1000) | settings
    model = fasttext.train_unsupervised(str(corpus), **options)
    path = tmp_path / "model.bin"
    model.save_model(str(path))
    return model, path
