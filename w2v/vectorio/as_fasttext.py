"""A w2v model (``TrainState``: a ``--save-model`` file, a checkpoint, or a run that
just ended) as a fastText ``.bin`` (``fasttext.save_fasttext``): which of fastText's
losses stands for w2v's, its settings, and its output matrix.

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

fastText keeps no learning rate in a model; ``lrUpdateRate`` is w2v's
``batch_words`` (the words trained at one rate), ``t`` its ``sample``. The output
matrix is kept for completeness, not for fastText to train on: fastText cannot
continue training an unsupervised model, and its update differs from w2v's
(per pair, not per window; no ``--cbow-sum``).
"""

import os

import numpy as np

from w2v.config import TrainConfig
from w2v.corpus.ngrams import NgramSettings
from w2v.losses import LOSSES
from w2v.vectorio.fasttext import FastTextModel, FastTextSettings, save_fasttext
from w2v.vectorio.modelfile import TrainState
from w2v.words import decode_word

MAX_INT32 = 2**31 - 1  # fastText's arguments are int32


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
