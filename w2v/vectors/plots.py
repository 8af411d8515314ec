"""Pictures: a 2-D map of chosen words' vectors, and the training loss per epoch.

The map's projection is numpy's (PCA of the unit vectors, ``pca_2d``), or t-SNE
(scikit-learn) or UMAP (umap-learn) where those are installed. Drawing needs
matplotlib, the ``plot`` extra (``pip install 'w2v[plot]'``); it is imported only
to draw, and figures are drawn on matplotlib's Agg canvas directly (no pyplot, no
display, no change to the backend of a program that calls these functions).
"""

import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from w2v.errors import W2VError
from w2v.files import atomic_output
from w2v.vectors.search import unit_rows
from w2v.words import display_word

METHODS = ("pca", "tsne", "umap")
METHOD_NAMES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
METHOD_PACKAGES = {"tsne": ("sklearn", "scikit-learn"), "umap": ("umap", "umap-learn")}  # module, pip name
MATPLOTLIB_MISSING = "plotting needs matplotlib: pip install 'w2v[plot]'"
DPI = 150
LABEL_POINTS = 9  # label font size, in points
UMAP_SPECTRAL_WORDS = 10  # UMAP's spectral start fails on a handful of points: fewer start at random
LABELLED_EPOCHS = 20  # the loss picture writes each epoch's value up to this many epochs
LOSS_TITLE = "Loss per epoch"
# where a label may sit around its point: offset (points), horizontal and vertical alignment
LABEL_SPOTS = [
    ((4, 3), "left", "bottom"),
    ((4, -3), "left", "top"),
    ((-4, 3), "right", "bottom"),
    ((-4, -3), "right", "top"),
    ((0, 6), "center", "bottom"),
    ((0, -6), "center", "top"),
]


@dataclass
class Projection:
    """Words placed in 2-D: ``points`` (n, 2) and the names of the two axes."""

    points: np.ndarray
    axes: tuple[str, str]
    method: str  # "PCA", "t-SNE" or "UMAP"


def pca_2d(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``vectors`` (n, D) on their first two principal components: (n, 2)
    coordinates, and the fraction of the variance each component explains (2,).

    The rows are scaled to unit length (the cosine geometry the queries use) and
    centred, then split by SVD. Each component's sign is fixed so that its largest
    loading is positive, so the same words always give the same picture. With fewer
    than two components (one dimension, or all rows alike) the missing ones are 0.
    """
    unit = unit_rows(vectors).astype(np.float64)
    centred = unit - unit.mean(axis=0)
    _, singular, components = np.linalg.svd(centred, full_matrices=False)
    components = components[:2]
    largest = components[np.arange(len(components)), np.abs(components).argmax(axis=1)]
    components = components * np.where(largest < 0, -1.0, 1.0)[:, None]
    points = np.zeros((len(vectors), 2))
    points[:, : len(components)] = centred @ components.T
    variance = singular**2
    explained = np.zeros(2)
    if variance.sum() > 0:
        explained[: len(components)] = variance[:2] / variance.sum()
    return points, explained


def check_method(method: str) -> None:
    """W2VError naming the package to install if ``method`` needs one that is missing."""
    if method not in METHODS:
        raise W2VError(f"unknown projection {method!r}: use one of {', '.join(METHODS)}")
    if method in METHOD_PACKAGES:
        module, package = METHOD_PACKAGES[method]
        try:
            __import__(module)
        except ImportError:
            raise W2VError(f"--method {method} needs {package}: pip install {package}") from None


def project(vectors: np.ndarray, method: str = "pca", seed: int = 1) -> Projection:
    """Place the rows of ``vectors`` (n, D), n >= 2, in 2-D by ``method`` (``pca``,
    ``tsne`` or ``umap``); t-SNE and UMAP use cosine distances and ``seed``."""
    check_method(method)
    n = len(vectors)
    if method == "pca":
        points, explained = pca_2d(vectors)
        return Projection(points, (f"PC1 ({100 * explained[0]:.1f}%)", f"PC2 ({100 * explained[1]:.1f}%)"), "PCA")
    if method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = max(1.0, min(30.0, (n - 1) / 3))  # must stay below the number of points
        model = TSNE(n_components=2, perplexity=perplexity, metric="cosine", init="pca", random_state=seed)
    else:
        import umap

        init = "spectral" if n >= UMAP_SPECTRAL_WORDS else "random"
        model = umap.UMAP(n_components=2, n_neighbors=min(15, n - 1), metric="cosine", init=init, random_state=seed)
    name = METHOD_NAMES[method]
    with warnings.catch_warnings():  # notes about their own settings (UMAP: n_jobs with a seed), not the user's
        warnings.simplefilter("ignore", UserWarning)
        try:
            points = np.asarray(model.fit_transform(np.asarray(vectors, dtype=np.float32)), dtype=np.float64)
        except (ValueError, TypeError) as err:
            raise W2VError(f"{name} failed on {n:,} words ({err}): try --method pca") from None
    return Projection(points, (f"{name} 1", f"{name} 2"), name)


def agg():
    """matplotlib's ``Figure`` and ``FigureCanvasAgg`` classes; W2VError naming the
    ``plot`` extra if matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401  (first: a missing or hidden matplotlib fails here)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise W2VError(MATPLOTLIB_MISSING) from None
    return Figure, FigureCanvasAgg


def picture_format(path: str) -> str:
    """The picture format ``path``'s extension names (``png``, ``svg``, ``pdf`` ...);
    W2VError if matplotlib is missing or cannot write that format. For checking an
    output before the work that draws it."""
    _, canvas = agg()
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension not in canvas.get_supported_filetypes():
        raise W2VError(f"cannot tell the picture format of {path}: give a name ending in .png, .svg or .pdf")
    return extension


def new_figure(size: tuple[float, float]):
    """A matplotlib Figure of ``size`` inches (width, height) on an Agg canvas."""
    figure_class, canvas = agg()
    figure = figure_class(figsize=size, dpi=DPI, layout="constrained")
    canvas(figure)
    return figure


def save_figure(figure, path: str) -> None:
    """Write ``figure`` to ``path`` in the format its extension names, never half-written."""
    fmt = picture_format(path)
    with atomic_output(path) as out:
        figure.savefig(out, format=fmt, dpi=DPI)


def plot_words(path: str, words: Sequence[str], projection: Projection, title: str) -> None:
    """Draw ``words`` at ``projection.points`` (n, 2) with their labels and write the
    picture to ``path`` (.png, .svg, .pdf ...)."""
    figure = new_figure((9, 7))
    ax = figure.subplots()
    x, y = projection.points[:, 0], projection.points[:, 1]
    ax.scatter(x, y, s=14, color="tab:blue", zorder=2)
    ax.margins(0.12)
    ax.set_xlabel(projection.axes[0])
    ax.set_ylabel(projection.axes[1])
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    figure.get_layout_engine().execute(figure)  # the axes' final size, which the label boxes depend on
    with warnings.catch_warnings():  # a word with glyphs the font lacks is drawn with boxes, not warned about
        warnings.filterwarnings("ignore", message="Glyph .* missing")
        place_labels(ax, [display_word(w) for w in words], projection.points)
        save_figure(figure, path)


def place_labels(ax, labels: Sequence[str], points: np.ndarray) -> None:
    """Write each label beside its point, at the first spot of ``LABEL_SPOTS`` where it
    overlaps no point and no label placed before it (else where it overlaps least)."""
    renderer = ax.figure.canvas.get_renderer()
    pixels = ax.transData.transform(points)
    radius = 4
    taken = [(px - radius, py - radius, px + radius, py + radius) for px, py in pixels]  # the points' markers
    for label, (x, y) in zip(labels, points, strict=True):
        best = None
        for offset, ha, va in LABEL_SPOTS:
            text = ax.annotate(label, (x, y), xytext=offset, textcoords="offset points", ha=ha, va=va)
            text.set(fontsize=LABEL_POINTS, parse_math=False, zorder=3)
            box = text.get_window_extent(renderer).extents
            overlap = sum(overlap_area(box, other) for other in taken)
            if best is not None and overlap >= best[0]:
                text.remove()
                continue
            if best is not None:
                best[1].remove()
            best = (overlap, text, box)
            if overlap == 0:
                break
        assert best is not None  # LABEL_SPOTS is not empty
        taken.append(tuple(best[2]))


def overlap_area(a: Sequence[float], b: Sequence[float]) -> float:
    """The area shared by two boxes ``(x0, y0, x1, y1)``."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(width, 0.0) * max(height, 0.0)


class HeldOut(NamedTuple):
    """The held-out figures of a run (``train --heldout``), one per epoch: bits per
    word (nan: not scored) and their sampling standard errors, and the unigram
    model's bits per word on the same predictions, the baseline (nan: unknown)."""

    bits: Sequence[float]
    standard_errors: Sequence[float] = ()
    unigram: float = math.nan


def plot_loss(path: str, epoch_loss: Sequence[float], heldout: HeldOut | None = None, title: str = LOSS_TITLE) -> None:
    """Draw ``loss_figure`` and write the picture to ``path`` (.png, .svg, .pdf ...)."""
    save_figure(loss_figure(epoch_loss, heldout, title), path)


def loss_figure(epoch_loss: Sequence[float], heldout: HeldOut | None = None, title: str = LOSS_TITLE):
    """A Figure of the mean training loss of each epoch (``epoch_loss[i]``: epoch i + 1,
    nats per example) and, below it where ``heldout`` holds finite figures, the
    held-out bits per word with their standard errors as error bars and the unigram
    model's as a dashed line."""
    from matplotlib.ticker import MaxNLocator

    bits = np.asarray(heldout.bits if heldout is not None else [], dtype=np.float64)
    panels = 2 if np.isfinite(bits).any() else 1
    figure = new_figure((7, 4.5 if panels == 1 else 7))
    axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    epochs = np.arange(1, len(epoch_loss) + 1)
    draw_series(axes[0], epochs, epoch_loss, "tab:blue", "training loss (nats per example)")
    if heldout is not None and panels == 2:
        draw_heldout(axes[1], epochs, heldout)
    axes[0].set_title(title)
    axes[-1].set_xlabel("epoch")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    return figure


def draw_heldout(ax, epochs: np.ndarray, heldout: HeldOut) -> None:
    """The held-out panel: ``draw_series`` of the bits per word, their standard errors
    (where given) as error bars and the unigram model's figure as a dashed line."""
    draw_series(ax, epochs, heldout.bits, "tab:orange", "held-out (bits per word)")
    errors = np.asarray(heldout.standard_errors, dtype=np.float64)
    if len(errors) == len(epochs) and np.isfinite(errors).any():
        ax.errorbar(epochs, heldout.bits, yerr=np.nan_to_num(errors), fmt="none", ecolor="tab:orange", capsize=3,
                    label="± sampling standard error")  # fmt: skip
    if math.isfinite(heldout.unigram):
        ax.axhline(heldout.unigram, color="tab:gray", linestyle="--", label=f"unigram model {heldout.unigram:.4f}")
    if ax.get_legend_handles_labels()[1]:
        ax.legend(loc="best", fontsize=8)


def draw_series(ax, epochs: np.ndarray, values: Sequence[float] | np.ndarray, color: str, label: str) -> None:
    """One value per epoch as a line on ``ax``, named ``label`` on the y axis; up to
    ``LABELLED_EPOCHS`` epochs each value is also written above its point."""
    few = len(epochs) <= LABELLED_EPOCHS
    ax.plot(epochs, values, marker="o" if few else None, color=color)
    if few:
        for epoch, value in zip(epochs, values, strict=True):
            if np.isfinite(value):
                ax.annotate(
                    f"{value:.4f}", (epoch, value), xytext=(0, 6), textcoords="offset points", ha="center", size=8
                )
    ax.set_ylabel(label)
    ax.grid(True, alpha=0.3)
    ax.margins(x=0.08, y=0.15)
