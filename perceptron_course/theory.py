"""The convergence theorem (Block 1962, Novikoff 1962) in numbers.

If every ``||x_i|| <= R`` and a unit ``w*`` has ``y_i w*·x_i >= gamma > 0`` for all
``i``, the perceptron (through the origin, mistake rule ``y w·x <= 0``) makes at
most ``(R / gamma) ** 2`` updates. The proof tracks two quantities after ``k``
updates: ``w(k+1)·w* >= k gamma`` and ``||w(k+1)||^2 <= k R^2``.
"""

from __future__ import annotations

import numpy as np

from ._max_margin import SEPARABLE_TOLERANCE, NotSeparableError, max_margin
from ._validation import check_points, check_vector
from .geometry import augment

__all__ = ["SEPARABLE_TOLERANCE", "NotSeparableError", "is_separable", "max_margin", "mistake_bound", "proof_quantities",
           "radius"]


def radius(X) -> float:
    """``R = max_i ||x_i||``, measured from the origin (not from the data's centre).

    Parameters
    ----------
    X : array_like, shape (n, d)
    """
    return float(np.max(np.linalg.norm(check_points(X), axis=1)))


def is_separable(X, y, *, bias: bool = True) -> bool:
    """Whether some hyperplane (with an offset when ``bias=True``) separates the classes strictly."""
    try:
        max_margin(augment(X) if bias else X, y)
    except NotSeparableError:
        return False
    return True


def mistake_bound(X, y, *, bias: bool = True) -> float:
    """``(R / gamma) ** 2`` on the data the algorithm sees.

    With ``bias=True`` the perceptron runs through the origin on ``augment(X)``,
    so ``R`` and ``gamma`` are those of the augmented points.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    bias : bool

    Returns
    -------
    float
    """
    data = augment(X) if bias else check_points(X)
    _, gamma = max_margin(data, y)
    return (radius(data) / gamma) ** 2


def proof_quantities(weight_history, w_star) -> tuple[np.ndarray, np.ndarray]:
    """The two quantities of the proof along a run.

    Parameters
    ----------
    weight_history : array_like, shape (k + 1, d)
        Weights after 0, 1, ..., k updates (``PerceptronRun.weight_history``:
        augmented when the run used a bias).
    w_star : array_like, shape (d,)
        A unit separator of the same data.

    Returns
    -------
    alignment : ndarray, shape (k + 1,)
        ``w(j+1)·w*``; the proof shows it is at least ``j gamma``.
    squared_norm : ndarray, shape (k + 1,)
        ``||w(j+1)||^2``; the proof shows it is at most ``j R^2``.
    """
    history = check_points(weight_history, "weight_history")
    direction = check_vector(w_star, "w_star", history.shape[1])
    return history @ direction, np.einsum("ij,ij->i", history, history)
