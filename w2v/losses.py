r"""The losses w2v trains, in one table every layer reads: the settings
(``config.TrainConfig``), the kernel (``engine.kernels.Settings``), held-out scoring
(``engine.scoring``), the fastText export (``vectorio.as_fasttext``), the command
line and the docs.

Each is a loss of one output matrix predicting the centre word ``o`` from an input
``h`` (docs/estimators.md has the equations and what each estimates):

- ``hs``, hierarchical softmax: ``-sum_{n in path(o)} log sigma((1 - 2 d_n) u_n . h)``
  over the inner nodes of ``o``'s Huffman path (``syn1``);
- ``ns``, negative sampling: ``-log sigma(u_o . h) - sum_k log sigma(-u_k . h)``
  over ``k`` noise words drawn from unigram**0.75 (``syn1neg``);
- ``nce``, noise-contrastive estimation: negative sampling with the logits offset
  by ``-log(k q(w))``, a self-normalised model;
- ``sampled_softmax``: the softmax over the target and ``k`` drawn candidates,
  logits offset by ``-log(k q(w))``;
- ``softmax``: ``-log(exp(u_o . h) / sum_w exp(u_w . h))`` over every word.

Hierarchical softmax trains the tree; the others the word output vectors, one of
them at a time, beside the tree or alone.

Adding a loss: a row in ``LOSSES``; its function in ``engine/kernels.py``, called
from ``output_loss`` on its ``code``; its case in ``tests/reference.py`` (the
readable specification); its probabilities in ``engine/scoring.py``; its
``TrainConfig`` field and ``w2v train`` option. ``tests/test_losses.py`` fails
while any of them is missing.
"""

from typing import NamedTuple


class Loss(NamedTuple):
    """One loss: its names and what training, scoring and export need of it."""

    name: str  # in configs' reports, model files, ``w2v score`` and the docs
    title: str  # in words, for messages and the summary line
    setting: str  # its ``TrainConfig`` field; ``--`` and the field with dashes is its ``w2v train`` option
    code: int  # the kernel's ``Settings.kind`` for a loss of the word output vectors; ``TREE`` for the tree's
    draws: bool  # draws ``samples`` noise words or candidates an example from unigram**0.75
    offset: bool  # its logits carry ``-log(k q(w))``: it reads ``log q`` (``weights.Tables.log_q``)
    fasttext: str  # the loss of fastText's that a ``.bin`` written for it names ("hs", "ns" or "softmax")
    scored: str  # the distribution ``w2v score`` measures: one of ``SCORED``


TREE = -2  # ``Loss.code`` of hierarchical softmax: the kernel's ``Settings.hs`` flag, not a kind
NO_WORD_LOSS = -1  # the kernel's ``Settings.kind`` when no loss of the word output vectors is on
SCORED = {  # the distributions held-out scoring knows (docs/estimators.md)
    "path": "the product of the sigmoids along the target's path (normalised by construction)",
    "implied": "negative sampling's implied distribution, p(w | h) proportional to sigma(s_w + log(k q_w))",
    "softmax": "softmax(s): p(w | h) = exp(u_w . h) / Z, summed over every word",
}

LOSSES = {
    loss.name: loss
    for loss in (
        Loss("hs", "hierarchical softmax", "hs", TREE, False, False, "hs", "path"),
        Loss("ns", "negative sampling", "negative", 0, True, False, "ns", "implied"),
        Loss("nce", "NCE", "nce", 1, True, True, "ns", "softmax"),
        Loss("sampled_softmax", "sampled softmax", "sampled_softmax", 2, True, True, "ns", "softmax"),
        Loss("softmax", "full softmax", "softmax", 3, False, False, "softmax", "softmax"),
    )
}
WORD_LOSSES = tuple(loss for loss in LOSSES.values() if loss.code != TREE)  # of ``syn1neg``, one at a time


def option(loss: Loss) -> str:
    """``w2v train``'s option for ``loss``: ``--sampled-softmax`` for ``sampled_softmax``."""
    return "--" + loss.setting.replace("_", "-")
