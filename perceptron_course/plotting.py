"""Figures of the course. Every helper takes ``ax=`` and returns it; none calls ``plt.show()``.

Colours are the Okabe-Ito palette (safe for colour-blind readers) and each class
also has its own marker. Figures get an opaque white background, so they stay
readable in JupyterLab's dark theme.

This module imports matplotlib; ``import perceptron_course`` does not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.axes import Axes

from ._validation import check_binary_labels

if TYPE_CHECKING:  # plotting must import nothing graded: the grading sandbox offers it without the reference
    from .perceptron import PerceptronRun

#: Okabe & Ito (2008): blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Class -1 and class +1.
NEGATIVE, POSITIVE = (OKABE_ITO[1], "s"), (OKABE_ITO[0], "o")


def use_course_style() -> None:
    """Opaque white figures and the Okabe-Ito colour cycle (call once at the top of a notebook)."""
    plt.rcParams.update(
        {
            "figure.facecolor": "white",
            "savefig.facecolor": "white",
            "axes.prop_cycle": plt.cycler(color=OKABE_ITO),
            "figure.dpi": 80,
        }
    )


def _axes(ax: Axes | None, figsize=(4.5, 4)) -> Axes:
    if ax is not None:
        return ax
    fig, ax = plt.subplots(figsize=figsize, facecolor="white")
    return ax


def plot_points(X, y, ax: Axes | None = None, *, labels: dict | None = None) -> Axes:
    """Scatter 2-D points; each class gets a colour and a marker.

    Parameters
    ----------
    X : array_like, shape (n, 2)
    y : array_like, shape (n,)
        Any labels (-1/+1 or class indices).
    labels : dict, optional
        Legend text per label value.
    """
    ax = _axes(ax)
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    values = np.unique(y)
    for k, value in enumerate(values):
        if set(values.tolist()) <= {-1, 1}:
            colour, marker = POSITIVE if value == 1 else NEGATIVE
        else:
            colour, marker = OKABE_ITO[k % len(OKABE_ITO)], MARKERS[k % len(MARKERS)]
        name = (labels or {}).get(value, f"y = {value:+d}" if set(values.tolist()) <= {-1, 1} else str(value))
        ax.scatter(*X[y == value].T, c=colour, marker=marker, edgecolors="black", linewidths=0.5, s=45, label=name, zorder=3)
    ax.set_aspect("equal", adjustable="box")
    return ax


def _limits(X: np.ndarray, pad: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    return X.min(axis=0) - pad, X.max(axis=0) + pad


def plot_decision_boundary(
    w,
    b: float,
    X,
    y,
    ax: Axes | None = None,
    *,
    margin_band: bool = True,
    show_normal: bool = True,
    colour: str = "black",
    label: str | None = "w·x + b = 0",
) -> Axes:
    """Draw the points, the line ``w·x + b = 0`` and (if every point is correct) the margin band.

    The positive side is shaded lightly; the arrow is the normal ``w``, which
    points to the positive side. The band's dashed edges pass through the points
    closest to the line.

    Parameters
    ----------
    w : array_like, shape (2,), not zero
    b : float
    X : array_like, shape (n, 2)
    y : array_like of -1/+1, shape (n,)
    """
    ax = plot_points(X, y, ax)
    X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    low, high = _limits(X)
    grid_x, grid_y = np.meshgrid(np.linspace(low[0], high[0], 200), np.linspace(low[1], high[1], 200))
    score = w[0] * grid_x + w[1] * grid_y + b
    ax.contourf(grid_x, grid_y, score >= 0, levels=[-0.5, 0.5, 1.5], colors=[NEGATIVE[0], POSITIVE[0]], alpha=0.12)
    contour = ax.contour(grid_x, grid_y, score, levels=[0], colors=[colour], linewidths=1.5)
    if label:
        contour.collections[0].set_label(label) if hasattr(contour, "collections") else contour.set_label(label)
    functional_margins = check_binary_labels(y, X.shape[0]) * (X @ w + b)
    if margin_band and functional_margins.min() > 0:
        band = functional_margins.min()  # the dashed lines where w·x + b = ±min_i y_i (w·x_i + b)
        ax.contour(grid_x, grid_y, score, levels=[-band, band], colors=[colour], linestyles="dashed", linewidths=1)
    if show_normal:
        foot = -b * w / (w @ w)  # the point of the line closest to the origin
        if np.all((foot >= low) & (foot <= high)):
            unit = w / np.linalg.norm(w)
            ax.annotate("", xy=foot + unit, xytext=foot, arrowprops=dict(arrowstyle="->", color=colour))
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    return ax


def plot_decision_regions(decision: Callable[[np.ndarray], np.ndarray], X, y, ax: Axes | None = None) -> Axes:
    """Shade the two sides of any decision function and draw its zero level (curved boundaries).

    Parameters
    ----------
    decision : callable
        Maps points of shape (m, 2) to scores of shape (m,); positive means +1.
    X : array_like, shape (n, 2)
    y : array_like of -1/+1, shape (n,)
    """
    ax = plot_points(X, y, ax)
    low, high = _limits(np.asarray(X, dtype=float))
    grid_x, grid_y = np.meshgrid(np.linspace(low[0], high[0], 200), np.linspace(low[1], high[1], 200))
    score = np.asarray(decision(np.column_stack([grid_x.ravel(), grid_y.ravel()]))).reshape(grid_x.shape)
    ax.contourf(grid_x, grid_y, score >= 0, levels=[-0.5, 0.5, 1.5], colors=[NEGATIVE[0], POSITIVE[0]], alpha=0.15)
    ax.contour(grid_x, grid_y, score, levels=[0], colors=["black"], linewidths=1.5)
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    return ax


def plot_mistakes_vs_bound(n_mistakes, bounds, ax: Axes | None = None) -> Axes:
    """Observed mistakes against the bound ``(R/gamma)^2`` on log axes, with the line ``k = bound``.

    Parameters
    ----------
    n_mistakes : array_like, shape (m,)
    bounds : array_like, shape (m,)
    """
    ax = _axes(ax)
    n_mistakes, bounds = np.asarray(n_mistakes, dtype=float), np.asarray(bounds, dtype=float)
    ax.scatter(bounds, n_mistakes, c=OKABE_ITO[0], edgecolors="black", linewidths=0.5, label="one data set")
    span = np.array([min(bounds.min(), n_mistakes.min()), max(bounds.max(), n_mistakes.max())])
    ax.plot(span, span, color=OKABE_ITO[3], linestyle="--", label="mistakes = bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bound (R / γ)²")
    ax.set_ylabel("mistakes made")
    ax.legend()
    return ax


def _weights_at(run: PerceptronRun, k: int) -> tuple[np.ndarray, float]:
    row = run.weight_history[k]
    return (row[1:], float(row[0])) if run.bias else (row, 0.0)


def plot_update(run: PerceptronRun, X, y, k: int, ax: Axes | None = None) -> Axes:
    """One frame of a run: the boundary after ``k`` updates, the point that caused update ``k`` circled.

    Parameters
    ----------
    run : PerceptronRun
        Trained on 2-D points ``X`` (with or without bias).
    X : array_like, shape (n, 2)
    y : array_like of -1/+1, shape (n,)
    k : int
        Number of updates made, ``0 .. run.n_mistakes``.
    """
    ax = _axes(ax)
    w, b = _weights_at(run, k)
    if np.any(w != 0):
        plot_decision_boundary(w, b, X, y, ax, margin_band=False, label=None)
    else:  # no boundary: the score is b at every point, so the whole plane is predicted sign(b), sign(0) = +1
        plot_points(X, y, ax)
        low, high = _limits(np.asarray(X, dtype=float))
        side = POSITIVE if b >= 0 else NEGATIVE
        ax.fill_between([low[0], high[0]], low[1], high[1], color=side[0], alpha=0.12, linewidth=0, zorder=0)
        ax.text(0.03, 0.97, f"w = 0: every point predicted {'+1' if b >= 0 else '-1'}", transform=ax.transAxes,
                va="top", fontsize=8)
        ax.set_xlim(low[0], high[0])
        ax.set_ylim(low[1], high[1])
    if k > 0:
        culprit = np.asarray(X, dtype=float)[run.update_indices[k - 1]]
        ax.scatter(*culprit, s=260, facecolors="none", edgecolors=OKABE_ITO[3], linewidths=2, zorder=4)
    ax.set_title(f"after {k} update{'s' if k != 1 else ''}", fontsize=10)
    return ax


def plot_update_grid(run: PerceptronRun, X, y, *, max_panels: int = 8, ncols: int = 4) -> plt.Figure:
    """Small multiples of the update sequence (``max_panels`` frames evenly spread over the run)."""
    frames = np.unique(np.linspace(0, run.n_mistakes, min(max_panels, run.n_mistakes + 1)).round().astype(int))
    nrows = int(np.ceil(len(frames) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3 * ncols, 3 * nrows), facecolor="white", squeeze=False)
    for ax in axes.ravel()[len(frames):]:
        ax.set_visible(False)
    for ax, k in zip(axes.ravel(), frames):
        plot_update(run, X, y, int(k), ax)
    fig.tight_layout()
    return fig


def animate_updates(
    run: PerceptronRun, X, y, *, interval: int = 700, max_frames: int = 30, axis_labels: tuple[str, str] | None = None
) -> FuncAnimation:
    """Animate the sequence of updates. Show it inline with ``IPython.display.HTML(anim.to_jshtml())``.

    ``axis_labels=(xlabel, ylabel)`` names the axes and adds the class legend to every frame.

    Returns
    -------
    matplotlib.animation.FuncAnimation
        Its figure is closed, so a notebook shows only the animation.
    """
    frames = np.unique(np.linspace(0, run.n_mistakes, min(max_frames, run.n_mistakes + 1)).round().astype(int))
    fig, ax = plt.subplots(figsize=(4.5, 4), facecolor="white")

    def draw(k: int):
        ax.clear()
        plot_update(run, X, y, int(k), ax)
        if axis_labels is not None:
            label_axes(ax, *axis_labels)
        return ()

    animation = FuncAnimation(fig, draw, frames=frames, interval=interval, blit=False)
    plt.close(fig)
    return animation


# --------------------------------------------------------------------------- lecture figures (notebooks 3, 4, 6)


def label_axes(ax: Axes, xlabel: str = "$x_1$", ylabel: str = "$x_2$", *, legend: bool = True) -> Axes:
    """Name both axes and (by default) add the legend of the classes and lines drawn so far."""
    from matplotlib.legend import Legend
    from matplotlib.lines import Line2D

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend:
        handler_map = Legend.get_default_handler_map()
        artists = [*ax.collections, *ax.lines, *ax.patches]
        labelled = [a for a in artists if a.get_label() and not str(a.get_label()).startswith("_")]
        # A labelled contour (plot_decision_boundary's line) has no legend handler: stand in a plain line.
        handles = [a if Legend.get_legend_handler(handler_map, a) else Line2D([], [], color="black") for a in labelled]
        ax.legend(handles, [a.get_label() for a in labelled], loc="best", fontsize=8, framealpha=0.9)
    return ax


def plot_losses(ax: Axes | None = None, *, z_min: float = -2.0, z_max: float = 3.0) -> Axes:
    """The 0-1 loss, the perceptron criterion ``max(0, -z)`` and the hinge ``max(0, 1 - z)`` against ``z = y (w·x + b)``."""
    from .losses import hinge_loss, perceptron_criterion, zero_one_loss

    ax = _axes(ax, figsize=(5, 3.5))
    z = np.linspace(z_min, z_max, 501)
    ax.plot(z, zero_one_loss(z), color=OKABE_ITO[7], drawstyle="steps-post", label="0-1: mistake iff $z \\leq 0$")
    ax.plot(z, perceptron_criterion(z), color=OKABE_ITO[0], linewidth=2, label="perceptron: $\\max(0, -z)$")
    ax.plot(z, hinge_loss(z), color=OKABE_ITO[3], linestyle="--", linewidth=2, label="hinge: $\\max(0, 1 - z)$")
    ax.set_xlabel("functional margin $z = y\\,(w \\cdot x + b)$")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    return ax


def plot_proof_squeeze(radius: float, gamma: float, ax: Axes | None = None, *, norms=None) -> Axes:
    """The proof as a picture: ``k γ <= ||w(k+1)|| <= sqrt(k) R`` until the two bounds cross at ``(R/γ)^2``.

    Parameters
    ----------
    radius, gamma : float > 0
        ``R`` and ``γ`` of the data the run saw.
    norms : array_like, shape (k + 1,), optional
        ``||w(j+1)||`` after ``j = 0 .. k`` updates of a real run, drawn as points.
    """
    ax = _axes(ax, figsize=(5.5, 3.8))
    crossing = (radius / gamma) ** 2
    k = np.linspace(0, 1.25 * crossing, 400)
    ax.plot(k, k * gamma, color=OKABE_ITO[0], label="lower: $k\\gamma \\leq w \\cdot w^* \\leq \\|w\\|$")
    ax.plot(k, np.sqrt(k) * radius, color=OKABE_ITO[3], linestyle="--", label="upper: $\\|w\\| \\leq \\sqrt{k}\\,R$")
    ax.fill_between(k, k * gamma, np.sqrt(k) * radius, where=k * gamma <= np.sqrt(k) * radius, color=OKABE_ITO[2], alpha=0.15, label="where $\\|w\\|$ can be")
    ax.axvline(crossing, color="black", linewidth=1, linestyle=":", label=f"$(R/\\gamma)^2 = {crossing:.0f}$")
    if norms is not None:
        norms = np.asarray(norms, dtype=float)
        ax.plot(np.arange(len(norms)), norms, "o", ms=3, color=OKABE_ITO[7], label="$\\|w(k+1)\\|$ of a real run")
    ax.set_xlabel("updates $k$")
    ax.set_ylabel("length")
    ax.legend(fontsize=8)
    return ax


def plot_svm(svm, X, y, ax: Axes | None = None) -> Axes:
    """A linear SVM on 2-D points: the boundary, the band ``|w·x + b| = 1``, the support vectors circled.

    Parameters
    ----------
    svm : perceptron_course.svm.LinearSVM
    X : array_like, shape (n, 2)
    y : array_like of -1/+1, shape (n,)
    """
    ax = plot_points(X, y, ax)
    X = np.asarray(X, dtype=float)
    low, high = _limits(X)
    grid_x, grid_y = np.meshgrid(np.linspace(low[0], high[0], 200), np.linspace(low[1], high[1], 200))
    score = svm.w[0] * grid_x + svm.w[1] * grid_y + svm.b
    ax.contour(grid_x, grid_y, score, levels=[0], colors=["black"], linewidths=1.5)
    ax.contour(grid_x, grid_y, score, levels=[-1, 1], colors=["black"], linestyles="dashed", linewidths=1)
    ax.scatter(*X[svm.support].T, s=220, facecolors="none", edgecolors=OKABE_ITO[3], linewidths=1.5, label="support vectors", zorder=4)
    ax.plot([], [], color="black", label="$w \\cdot x + b = 0$")
    ax.plot([], [], color="black", linestyle="dashed", linewidth=1, label="$w \\cdot x + b = \\pm 1$")
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    return ax


# --------------------------------------------------------------------------- figures with alternative text

#: What a figure shown by ``show`` carries besides its pixels: a PNG with its ``alt`` in the output's
#: metadata (nbconvert's classic template, nbsphinx), an ``<img alt=...>`` (JupyterLab and nbconvert's
#: lab template render HTML before PNG and read no image metadata), and the text itself as text/plain.
FIGURE_MIMETYPES = ("text/html", "image/png", "text/plain")


def figure_bundle(fig: plt.Figure, alt: str) -> tuple[dict, dict]:
    """The display data and metadata of ``fig`` as a PNG image whose alternative text is ``alt``.

    Parameters
    ----------
    fig : matplotlib Figure
    alt : str
        What the figure shows: the data, the lines, what to notice. Not empty.

    Returns
    -------
    data : dict
        ``{"text/html": <img ... alt=...>, "image/png": base64 text, "text/plain": alt}``.
    metadata : dict
        ``{"image/png": {"alt": alt}}``.
    """
    import base64
    import html

    from IPython.core.pylabtools import print_figure  # the inline backend's own PNG writer

    if not alt.strip():
        raise ValueError("a figure needs alternative text that says what it shows")
    png = base64.b64encode(print_figure(fig, fmt="png", bbox_inches="tight")).decode("ascii")
    image = f'<img src="data:image/png;base64,{png}" alt="{html.escape(alt, quote=True)}">'
    return {"text/html": image, "image/png": png, "text/plain": alt}, {"image/png": {"alt": alt}}


def show(fig: plt.Figure, alt: str) -> None:
    """Display ``fig`` in the notebook with its alternative text ``alt``, then close it.

    Every figure of the course goes through here, so every renderer gets the text (see
    ``FIGURE_MIMETYPES``), and the inline backend does not show the figure a second time.
    """
    from IPython.display import display

    data, metadata = figure_bundle(fig, alt)
    display(data, metadata=metadata, raw=True)
    plt.close(fig)


def animation_html(animation: FuncAnimation, *, alt: str, slider_label: str) -> str:
    """``animation`` as matplotlib's JavaScript player, with text for screen readers.

    Parameters
    ----------
    animation : FuncAnimation
    alt : str
        The alternative text of the frame image: what the animation shows.
    slider_label : str
        The name of the frame slider (matplotlib's player leaves it unlabelled).

    Returns
    -------
    str
        The player's HTML, for ``IPython.display.HTML``.
    """
    import html

    player = animation.to_jshtml()
    named = {'<img id="_anim_img': f'<img alt="{html.escape(alt, quote=True)}" id="_anim_img',
             'class="anim-slider"': f'class="anim-slider" aria-label="{html.escape(slider_label, quote=True)}"'}
    for found, replacement in named.items():
        if player.count(found) != 1:
            raise ValueError(f"matplotlib's player changed: {found!r} was not found once")
        player = player.replace(found, replacement)
    return player


def plot_one_vs_rest_regions(W, b, X, y, ax: Axes | None = None, *, resolution: int = 300) -> Axes:
    """Where one-vs-rest's ``K`` binary perceptrons agree, and where their signs leave the answer to ``argmax``.

    Shades the plane by how many of the ``K`` scores ``W[e]·x + b[e]`` are ``>= 0``: exactly one (a class
    claims the point, left white), none (**empty**: every perceptron says "not mine", hatched ``..``) or
    several (**ambiguous**, hatched ``//``); draws each binary boundary dashed and the ``argmax`` boundaries
    solid, and the points on top.

    Parameters
    ----------
    W : array_like, shape (K, 2)
    b : array_like, shape (K,)
    X : array_like, shape (n, 2)
    y : array_like, shape (n,)
    ax : Axes, optional
    resolution : int
        Grid points per axis.

    Returns
    -------
    Axes
    """
    ax = _axes(ax)
    W, b = np.asarray(W, dtype=float), np.asarray(b, dtype=float)
    X = np.asarray(X, dtype=float)
    low, high = _limits(X)
    xx, yy = np.meshgrid(np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution))
    grid = np.column_stack([xx.ravel(), yy.ravel()])
    scores = grid @ W.T + b
    claims = (scores >= 0).sum(axis=1).reshape(xx.shape)
    ax.contourf(xx, yy, (claims == 0).astype(float), levels=[0.5, 1.5], colors="none", hatches=[".."])
    ax.contourf(xx, yy, (claims >= 2).astype(float), levels=[0.5, 1.5], colors="none", hatches=["//"])
    winner = np.argmax(scores, axis=1).reshape(xx.shape)
    ax.contour(xx, yy, winner, levels=np.arange(len(W)) + 0.5, colors="black", linewidths=1.5)
    for k in range(len(W)):
        ax.contour(xx, yy, scores[:, k].reshape(xx.shape), levels=[0.0], colors=[OKABE_ITO[k % len(OKABE_ITO)]],
                   linestyles="dashed", linewidths=1.2)
    plot_points(X, y, ax=ax)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor="white", edgecolor="black", hatch="..", label="empty: no score >= 0"),
               Patch(facecolor="white", edgecolor="black", hatch="//", label="ambiguous: several >= 0"),
               Line2D([], [], color="black", label="argmax boundary"),
               Line2D([], [], color="grey", linestyle="dashed", label="binary boundaries")]
    ax.legend(handles=ax.get_legend_handles_labels()[0] + handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    return ax
