"""The perceptron as stochastic gradient descent on a loss, beside the hinge loss.

Both losses are functions of the functional margin ``z = y (w·x + b)``:

- the perceptron criterion ``max(0, -z)`` (Rosenblatt's rule, Duda & Hart's ``J_p``);
- the hinge loss ``max(0, 1 - z)`` (the soft-margin SVM's, without its ``||w||^2`` term).

A subgradient step with learning rate ``eta`` on one point is ``w <- w + eta y x``,
``b <- b + eta y`` when ``z <= threshold`` (0 for the perceptron criterion, 1 for the
hinge), else nothing: with ``threshold=0`` and ``eta=1`` it is ``perceptron.train``.
At the kink (``z == threshold``) the step is taken, as ``train``'s ``<= 0`` rule and
scikit-learn's ``SGDClassifier`` do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_binary_labels, check_points, check_positive_int
from .geometry import augment

#: Loss name -> the margin ``z`` at or below which a point takes a step.
THRESHOLDS = {"perceptron": 0.0, "hinge": 1.0}


def functional_margins(w, b: float, X, y) -> np.ndarray:
    """``z_i = y_i (w·x_i + b)``; shape (n,). Unlike the geometric margin, it scales with ``w``."""
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    return labels * (points @ np.asarray(w, dtype=float) + b)


def perceptron_criterion(z) -> np.ndarray:
    """``max(0, -z)`` elementwise: zero on the correct side, linear on the wrong side."""
    return np.maximum(0.0, -np.asarray(z, dtype=float))


def hinge_loss(z) -> np.ndarray:
    """``max(0, 1 - z)`` elementwise: also charges correct points closer than functional margin 1."""
    return np.maximum(0.0, 1.0 - np.asarray(z, dtype=float))


def zero_one_loss(z) -> np.ndarray:
    """``1`` where ``z <= 0`` (a mistake under the margin rule), else ``0``."""
    return (np.asarray(z, dtype=float) <= 0).astype(float)


@dataclass(frozen=True)
class SGDRun:
    """The result of ``sgd``.

    Attributes
    ----------
    w : ndarray, shape (d,)
    b : float
    n_steps : int
        Points on which a (non-zero) subgradient step was taken.
    epochs : int
    converged : bool
        Whether the last pass took no step (every ``z > threshold``).
    """

    w: np.ndarray
    b: float
    n_steps: int
    epochs: int
    converged: bool


#: Points scored at once while looking for the next step: between two steps the weights do not change.
_SCAN_BLOCK = 64


def _next_step(points: np.ndarray, labels: np.ndarray, weights: np.ndarray, threshold: float, start: int) -> int | None:
    """The first row ``i >= start`` with ``labels[i] * (points[i] · weights) <= threshold``, or None.

    Scans blocks of ``_SCAN_BLOCK`` rows with one product each, so a pass with few steps costs
    a few NumPy calls instead of one per point (points: (n, d), labels: (n,), weights: (d,)).
    """
    for block_start in range(start, points.shape[0], _SCAN_BLOCK):
        block = slice(block_start, block_start + _SCAN_BLOCK)
        charged = np.flatnonzero(labels[block] * (points[block] @ weights) <= threshold)
        if charged.size:
            return block_start + int(charged[0])
    return None


def sgd(X, y, *, loss: str = "perceptron", learning_rate: float = 1.0, max_epochs: int = 100) -> SGDRun:
    """Stochastic subgradient descent on ``loss``, one point at a time, in the order of ``X``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    loss : {"perceptron", "hinge"}
    learning_rate : float > 0
    max_epochs : int >= 1

    Returns
    -------
    SGDRun
        Starts at ``w = 0, b = 0``; with ``loss="perceptron"`` and any learning
        rate it takes the same steps as ``perceptron.train`` (the weights are
        scaled by ``learning_rate``, so every sign is the same).
    """
    if loss not in THRESHOLDS:
        raise ValueError(f"loss must be one of {sorted(THRESHOLDS)}; got {loss!r}")
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be > 0; got {learning_rate}")
    points = augment(check_points(X))
    labels = check_binary_labels(y, points.shape[0])
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    threshold = THRESHOLDS[loss]
    weights = np.zeros(points.shape[1])
    n_steps, epoch, converged = 0, 0, False
    for epoch in range(1, max_epochs + 1):
        steps_this_epoch, position = 0, 0
        while (step_at := _next_step(points, labels, weights, threshold, position)) is not None:
            weights = weights + learning_rate * labels[step_at] * points[step_at]
            steps_this_epoch += 1
            position = step_at + 1
        n_steps += steps_this_epoch
        if steps_this_epoch == 0:
            converged = True
            break
    return SGDRun(w=weights[1:], b=float(weights[0]), n_steps=n_steps, epochs=epoch, converged=converged)
