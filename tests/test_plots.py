"""Pictures: the PCA projection against numpy, word maps and loss curves as PNG files where
matplotlib is installed, one clear line where it (or t-SNE's scikit-learn) is not."""

import re
import struct
import sys

import numpy as np
import pytest
from conftest import without_progress

from w2v.errors import W2VError
from w2v.vectors.plots import check_method, overlap_area, pca_2d, project
from w2v.vectors.wordvectors import Vectors

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MISSING_MATPLOTLIB = "w2v: error: plotting needs matplotlib: pip install 'w2v[plot]'\n"
WORDS = ["one", "two", "three", "four", "king", "queen", "prince", "paris", "rome", "berlin"]


def clustered(rng, centres: int = 3, per_centre: int = 4, dim: int = 20) -> np.ndarray:
    """(centres * per_centre, dim) float32 rows around a few random centres."""
    middle = rng.standard_normal((centres, dim)) * 3
    return (np.repeat(middle, per_centre, axis=0) + rng.standard_normal((centres * per_centre, dim))).astype(np.float32)


def png_size(path) -> tuple[int, int]:
    """(width, height) of a PNG file, after checking its signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib hidden from imports, as where it is not installed."""
    for name in [name for name in sys.modules if name.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.fixture
def vectors_file(tmp_path):
    path = tmp_path / "v.bin"
    Vectors(WORDS, clustered(np.random.default_rng(3), centres=2, per_centre=5)).save(path)
    return path


# --- the projection ----------------------------------------------------------------------


def test_pca_matches_the_covariance_eigenvectors():
    """Coordinates on the two leading eigenvectors of the unit rows' covariance, each up to
    its sign, and the share of the variance their eigenvalues hold."""
    vectors = clustered(np.random.default_rng(1))
    points, explained = pca_2d(vectors)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    centred = unit - unit.mean(axis=0)
    values, vecs = np.linalg.eigh(centred.T @ centred)
    order = np.argsort(values)[::-1]
    expected = centred @ vecs[:, order[:2]]
    for k in range(2):
        sign = np.sign(points[:, k] @ expected[:, k])
        np.testing.assert_allclose(points[:, k], sign * expected[:, k], atol=1e-5)
    np.testing.assert_allclose(explained, values[order[:2]] / values.sum(), rtol=1e-5)


def test_pca_sign_is_fixed_and_scale_ignored():
    vectors = clustered(np.random.default_rng(2))
    points, _ = pca_2d(vectors)
    np.testing.assert_allclose(pca_2d(vectors * 7.5)[0], points, atol=1e-6)  # unit vectors: length does not matter
    np.testing.assert_allclose(pca_2d(-vectors)[0], -points, atol=1e-6)  # flipped data, flipped picture
    assert abs(points.mean(axis=0)).max() < 1e-6


def test_pca_degenerate_inputs():
    points, explained = pca_2d(np.array([[1.0], [2.0], [-1.0]], dtype=np.float32))  # one dimension
    assert points.shape == (3, 2) and not points[:, 1].any() and explained[1] == 0
    points, explained = pca_2d(np.ones((4, 3), dtype=np.float32))  # all rows alike
    assert not points.any() and not explained.any()


def test_project_pca_names_the_axes():
    projection = project(clustered(np.random.default_rng(4)), "pca")
    assert projection.method == "PCA" and projection.points.shape == (12, 2)
    assert projection.axes[0].startswith("PC1 (") and projection.axes[1].endswith("%)")


def test_tsne_without_scikit_learn_is_one_line(monkeypatch, vectors_file, tmp_path, run_w2v):
    pytest.importorskip("matplotlib")
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(W2VError, match=r"^--method tsne needs scikit-learn: pip install scikit-learn$"):
        check_method("tsne")
    code, _, err = run_w2v("plot", "-v", vectors_file, "one", "two", "--method", "tsne", "-o", tmp_path / "m.png")
    assert (code, err) == (1, "w2v: error: --method tsne needs scikit-learn: pip install scikit-learn\n")
    assert not (tmp_path / "m.png").exists()


def test_umap_without_umap_learn_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "umap", None)
    with pytest.raises(W2VError, match=r"^--method umap needs umap-learn: pip install umap-learn$"):
        check_method("umap")


def test_tsne_where_installed():
    pytest.importorskip("sklearn")
    projection = project(clustered(np.random.default_rng(5)), "tsne", seed=1)
    assert projection.points.shape == (12, 2) and projection.axes == ("t-SNE 1", "t-SNE 2")


# --- pictures ------------------------------------------------------------------------------


def test_plot_writes_a_png_map(vectors_file, tmp_path, run_w2v):
    pytest.importorskip("matplotlib")
    words_file = tmp_path / "words.txt"
    words_file.write_text("queen 12\n\nparis\nnowhere 3\n")  # first fields; blank lines skipped
    out = tmp_path / "map.png"
    code, _, err = run_w2v("plot", "-v", vectors_file, *WORDS[:4], "king", "--words-file", words_file, "-o", out)
    assert code == 0
    assert err == (
        "w2v: 1 word not in the vocabulary, left out: nowhere\n"
        f"w2v: 7 words on a PCA map; wrote {out}\n"
    )  # fmt: skip
    assert png_size(out) == (1350, 1050)  # 9 x 7 inches at 150 dpi
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.png", "v.bin", "words.txt"]  # no temporary left


def test_plot_other_formats_and_mistakes(vectors_file, tmp_path, run_w2v):
    pytest.importorskip("matplotlib")
    code, _, _ = run_w2v("plot", "-v", vectors_file, *WORDS, "-o", tmp_path / "map.svg", "-q")
    assert code == 0 and (tmp_path / "map.svg").read_text().lstrip().startswith("<?xml")
    code, _, err = run_w2v("plot", "-v", vectors_file, "one", "two", "-o", tmp_path / "map.xyz")
    assert (code, err) == (1, f"w2v: error: cannot tell the picture format of {tmp_path / 'map.xyz'}: "
                              "give a name ending in .png, .svg or .pdf\n")  # fmt: skip
    code, _, err = run_w2v("plot", "-v", vectors_file, "one", "nowhere", "-o", tmp_path / "m.png")
    assert (code, err) == (1, "w2v: error: a map needs at least 2 words in the vocabulary, not 1 (nowhere not in it)\n")
    code, _, err = run_w2v("plot", "-v", vectors_file, "one", "two", "--top", "5", "-o", tmp_path / "m.png")
    assert (code, err) == (2, "w2v: error: --top: no effect with WORDS or --words-file (it picks the words when none "
                              "are given)\n")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.svg", "v.bin"]


def test_plot_without_words_maps_the_most_frequent(vectors_file, tmp_path, run_w2v):
    """``w2v plot -v v.bin``, no words: the map of the --top most frequent (first) words."""
    pytest.importorskip("matplotlib")
    code, _, err = run_w2v("plot", "-v", vectors_file, "-o", tmp_path / "m.svg")
    assert (code, err) == (0, f"w2v: 10 words on a PCA map; wrote {tmp_path / 'm.svg'}\n")  # all of them, below 50
    code, _, err = run_w2v("plot", "-v", vectors_file, "--top", "4", "-o", tmp_path / "m.svg")
    assert (code, err) == (0, f"w2v: 4 words on a PCA map; wrote {tmp_path / 'm.svg'}\n")
    labels = re.findall(r"<!-- (\w+) -->", (tmp_path / "m.svg").read_text())  # matplotlib's comment on each text
    assert set(WORDS[:4]) <= set(labels) and not set(WORDS[4:]) & set(labels)


def test_plot_without_matplotlib_is_one_line(no_matplotlib, vectors_file, tmp_path, run_w2v):
    code, out, err = run_w2v("plot", "-v", vectors_file, "one", "two", "-o", tmp_path / "map.png")
    assert (code, out, err) == (1, "", MISSING_MATPLOTLIB)
    assert not (tmp_path / "map.png").exists()


def test_labels_avoid_each_other():
    """Labels of points too close for the first spot take another; spread points keep it."""
    pytest.importorskip("matplotlib")
    from w2v.vectors.plots import new_figure, place_labels

    figure = new_figure((4, 3))
    ax = figure.subplots()
    points = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    ax.scatter(points[:, 0], points[:, 1])
    ax.set(xlim=(-1, 2), ylim=(-1, 2))
    place_labels(ax, ["alpha", "beta", "gamma", "delta"], points)
    renderer = figure.canvas.get_renderer()
    boxes = [text.get_window_extent(renderer).extents for text in ax.texts]
    assert [text.get_text() for text in ax.texts] == ["alpha", "beta", "gamma", "delta"]
    assert all(overlap_area(a, b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    assert [(t.get_horizontalalignment(), t.get_verticalalignment()) for t in ax.texts] == [
        ("left", "bottom"), ("left", "top"), ("right", "bottom"), ("left", "bottom")]  # fmt: skip


def test_loss_plot_from_train(tiny_corpus, tmp_path, run_w2v):
    pytest.importorskip("matplotlib")
    out, picture = tmp_path / "v.bin", tmp_path / "loss.png"
    args = ["train", tiny_corpus, "-o", out, "--min-count", "1", "--dim", "8", "--epochs", "3", "--threads", "1"]
    code, _, err = run_w2v(*args, "--plot", picture, "-q")
    assert (code, err) == (0, "")
    assert png_size(picture) == (1050, 675)  # 7 x 4.5 inches at 150 dpi
    code, _, err = run_w2v(*args, "--plot", picture, "--heldout", tiny_corpus, "--heldout-pairs", "500")
    skipped = ("w2v: epoch", "w2v: note", "w2v: training ")  # the settings, epoch and note lines
    lines = [line for line in without_progress(err).splitlines() if not line.startswith(skipped)]
    assert code == 0 and " in vocabulary, " in lines[0]
    assert lines[1] == f"w2v: loss of 3 epochs drawn; wrote {picture}"
    assert png_size(picture) == (1050, 1050)  # a second panel: the held-out bits per word
    code, _, err = run_w2v(*args, "--plot", out)
    assert code == 2 and err.endswith(f"-o and --plot name the same file: {out}\n")


def test_loss_plot_without_matplotlib_is_refused_before_training(no_matplotlib, tiny_corpus, tmp_path, run_w2v):
    out = tmp_path / "v.bin"
    code, _, err = run_w2v("train", tiny_corpus, "-o", out, "--min-count", "1", "--plot", tmp_path / "loss.png")
    assert (code, err) == (1, MISSING_MATPLOTLIB)
    assert list(tmp_path.iterdir()) == []  # nothing trained, nothing written


def test_the_held_out_panel_draws_the_standard_errors_and_the_unigram_baseline():
    """``train --plot`` with ``--heldout``: error bars of the sampling standard errors
    and the unigram model's figure as a labelled dashed line, the figure's baseline."""
    pytest.importorskip("matplotlib")
    from matplotlib.container import ErrorbarContainer

    from w2v.vectors.plots import HeldOut, loss_figure

    figure = loss_figure([3.0, 2.5, 2.4], HeldOut([9.6, 9.3, 9.2], [0.01, 0.02, 0.015], 9.35))
    panel = figure.axes[1]
    bars = [c for c in panel.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1 and bars[0].has_yerr
    spans = [segment[:, 1] for segment in bars[0].lines[2][0].get_segments()]
    assert [tuple(np.round(span, 3)) for span in spans] == [(9.59, 9.61), (9.28, 9.32), (9.185, 9.215)]
    lines = {line.get_label(): line for line in panel.get_lines()}
    assert list(lines["unigram model 9.3500"].get_ydata()) == [9.35, 9.35]
    assert lines["unigram model 9.3500"].get_linestyle() == "--"
    legend = [text.get_text() for text in panel.get_legend().get_texts()]
    assert legend == ["unigram model 9.3500", "± sampling standard error"]
    bare = loss_figure([3.0, 2.5], HeldOut([9.6, 9.3])).axes[1]  # no standard errors, no baseline: neither drawn
    assert bare.containers == [] and bare.get_legend() is None


def test_loss_plot_of_many_epochs_and_of_one(tmp_path):
    pytest.importorskip("matplotlib")
    from w2v.vectors.plots import HeldOut, plot_loss

    plot_loss(str(tmp_path / "one.png"), [0.7])
    plot_loss(str(tmp_path / "many.pdf"), list(np.linspace(3, 2, 60)))
    plot_loss(str(tmp_path / "none-held-out.png"), [3.0, 2.5], HeldOut([float("nan")] * 2))  # train without --heldout
    plot_loss(str(tmp_path / "held-out.png"), [3.0, 2.5], HeldOut([9.5, 9.1]))
    assert png_size(tmp_path / "one.png") == png_size(tmp_path / "none-held-out.png") == (1050, 675)
    assert png_size(tmp_path / "held-out.png") == (1050, 1050)
    assert (tmp_path / "many.pdf").read_bytes().startswith(b"%PDF")
