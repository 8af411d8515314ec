"""A w2v model (``TrainState``: a ``--save-model`` file, a checkpoint, or a run that
just ended) as a fastText ``.bin`` (``fasttext.save_fasttext``): which of fastText's
losses stands for w2v's, its settings, and its output matrix; and back, a ``.bin``
(fastText's own, or one w2v wrote) as the state training goes on from
(``fasttext_state``, for ``init_model``).

The input matrix is ``syn0`` as it is: the V words' rows, then the n-gram buckets'
(a ``--subwords`` run), so that fastText's ``getWordVector`` gives w2v's vectors for
known and unseen words alike. A run without subwords, or with ``maxn`` 0, is
written as fastText writes ``-maxn 0``: ``maxn`` 0, ``bucket`` 0, no n-gram rows.

fastText has one loss per model, over an output matrix of V rows. w2v's map as:

- negative sampling -> ``ns``: ``syn1neg``, a row per word, fastText's own layout;
- NCE and sampled softmax -> ``ns``: their output rows are word vectors like
  negative sampling's (only the noise and the logits' offsets differ in training);
- the full softmax -> ``softmax``: ``syn1neg``, scored ``u_w . h`` as fastText does;
- hierarchical softmax -> ``hs``: fastText rebuilds its Huffman tree from the
  counts (``HierarchicalSoftmaxLoss::buildTree``) with word2vec.c's two-pointer
  merge, inner node ``V + i`` on output row ``i``, as w2v's ``syn1`` row ``i``.
  fastText's unit says P(bit 1) = sigma(o . h) where word2vec.c's says P(bit 0) =
  sigma(syn1 . h), so the rows are written negated, ``-syn1``, plus a zero row
  (word2vec.c's tree has V - 1 inner nodes, fastText's matrix V rows). With
  ``--tree balanced`` the rows are the balanced tree's nodes, which fastText's
  Huffman tree numbers otherwise: the output matrix is then not that tree's;
- hierarchical softmax and negative sampling both on -> ``ns``: fastText's default
  and a row per word, which needs no tree to make sense of.

Read back, ``ns`` is negative sampling (``syn1neg``, with the model's ``neg`` noise
words), ``softmax`` the full softmax, ``hs`` hierarchical softmax (``syn1`` the
first V - 1 rows, negated); a model written for NCE, sampled softmax or both
losses goes on as negative sampling. A ``.bin`` does not record the noise
distribution's exponent, CBOW's mean or sum, nor the tree (``UNRECORDED``): those
are the caller's to give.

fastText keeps no learning rate in a model; ``lrUpdateRate`` is w2v's
``batch_words`` (the words trained at one rate), ``t`` its ``sample``. The output
matrix is kept for completeness, not for fastText to train on: fastText cannot
continue training an unsupervised model, and its update differs from w2v's
(per pair, not per window; no ``--cbow-sum``).
"""

import os
from typing import Any

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.ngrams import NgramSettings
from w2v.corpus.vocab import Vocab
from w2v.errors import ConfigError, FormatError
from w2v.losses import LOSSES
from w2v.vectorio.fasttext import FastTextModel, FastTextSettings, read_fasttext, save_fasttext
from w2v.vectorio.modelfile import TrainState, weight_shapes
from w2v.words import decode_word, encode_word

MAX_INT32 = 2**31 - 1  # fastText's arguments are int32
# The settings a model's weights fix (``train.STRUCTURE``) that a .bin does not record
UNRECORDED = ("ns_exponent", "cbow_mean", "tree")


def fasttext_loss(config: TrainConfig) -> str:
    """fastText's loss ("hs", "ns" or "softmax") standing for ``config``'s (see the
    module's docstring)."""
    return LOSSES[config.output_loss or "hs"].fasttext  # None: hierarchical softmax alone


def fasttext_settings(config: TrainConfig) -> FastTextSettings:
    """The ``FastTextSettings`` of a run's ``config`` (resolved): model, loss, window,
    epochs, min count, noise words, words per learning rate, subsampling and n-grams."""
    ngrams = NgramSettings(config.minn, 0, 0)  # fastText's -maxn 0: no n-grams, no buckets
    if config.ngram_rows:
        ngrams = NgramSettings.of(config)
    return FastTextSettings(
        model=config.model,
        loss=fasttext_loss(config),
        ws=config.window,
        epoch=config.epochs,
        min_count=config.min_count,
        neg=config.samples,
        lr_update_rate=min(config.batch_words, MAX_INT32),
        t=config.sample,
        ngrams=ngrams,
    )


def output_matrix(state: TrainState, loss: str) -> np.ndarray:
    """fastText's (V, D) float32 output matrix for ``loss``: ``syn1neg``, or for
    ``hs`` ``-syn1`` and a zero row (the module's docstring says why)."""
    if loss != "hs":
        return state.syn1neg
    rows = np.zeros((len(state.vocab), state.syn1.shape[1]), dtype=np.float32)
    np.negative(state.syn1, out=rows[: len(state.syn1)])
    return rows


def fasttext_model(state: TrainState) -> FastTextModel:
    """``state`` as the ``FastTextModel`` the module's docstring describes; its
    ``ntokens`` the corpus tokens an epoch reads (fastText's count, rare words included)."""
    settings = fasttext_settings(state.config)
    words = [decode_word(word) for word in state.vocab.words]
    output = output_matrix(state, settings.loss)
    return FastTextModel(words, state.vocab.counts, state.syn0, output, settings, state.corpus_words or None)


def save_as_fasttext(path: str | os.PathLike, state: TrainState) -> FastTextModel:
    """Write ``state`` to ``path`` as a fastText ``.bin`` (atomically; W2VError, one
    line, where fastText could not hold it); the model written."""
    model = fasttext_model(state)
    save_fasttext(path, model)
    return model


def fasttext_state(path: str) -> TrainState:
    """The model at ``path`` as the state training goes on from (see the module's
    docstring): its settings, vocabulary (words and counts), weights read into memory
    (training writes them) and ``corpus_words``, its ``ntokens``. FormatError for a
    file ``fasttext.read_fasttext`` refuses, or settings no run can have."""
    model = read_fasttext(path)
    settings, dim = model.settings, model.input.shape[1]
    ngrams = settings.ngrams
    subwords = {"subwords": True, **ngrams._asdict()} if ngrams.has_ngrams() and ngrams.bucket else {}
    loss: dict[str, dict[str, Any]] = {"hs": {"hs": True, "negative": 0}, "ns": {"negative": settings.neg}}
    loss["softmax"] = {"softmax": True}
    try:
        config = TrainConfig(
            model=settings.model, dim=dim, window=settings.ws, epochs=settings.epoch, min_count=settings.min_count,
            sample=settings.t, **loss[settings.loss], **subwords,
        ).resolved()  # fmt: skip
    except ConfigError as err:
        raise FormatError(f"{path}: damaged fastText model ({err})") from None
    shapes = weight_shapes(len(model.words), config)
    output = np.array(model.output)
    syn1 = -output[: shapes["syn1"][0]] if config.hs else np.zeros(shapes["syn1"], dtype=np.float32)
    syn1neg = output if config.output_loss else np.zeros(shapes["syn1neg"], dtype=np.float32)
    return TrainState(
        config=config, vocab=Vocab([encode_word(word) for word in model.words], model.counts),
        syn0=np.array(model.input), syn1=syn1, syn1neg=syn1neg, epoch_loss=np.zeros(config.epochs),
        epoch_examples=np.zeros(config.epochs, dtype=np.int64), corpus_words=model.ntokens or 0,
    )  # fmt: skip
