"""The convergence theorem (Block 1962, Novikoff 1962) in numbers.

If every ``||x_i|| <= R`` and a unit ``w*`` has ``y_i w*·x_i >= gamma > 0`` for all
``i``, the perceptron (through the origin, mistake rule ``y w·x <= 0``) makes at
most ``(R / gamma) ** 2`` updates. The proof tracks two quantities after ``k``
updates: ``w(k+1)·w* >= k gamma`` and ``||w(k+1)||^2 <= k R^2``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_binary_labels, check_points, check_vector
from .geometry import augment

#: A max-margin solution whose smallest margin is below ``1 - SEPARABLE_TOLERANCE``
#: (in units of the optimal margin) means the data are not separable.
SEPARABLE_TOLERANCE = 1e-7


def radius(X) -> float:
    """``R = max_i ||x_i||``, measured from the origin (not from the data's centre).

    Parameters
    ----------
    X : array_like, shape (n, d)
    """
    return float(np.max(np.linalg.norm(check_points(X), axis=1)))


def max_margin(X, y) -> tuple[np.ndarray, float]:
    """The unit-norm max-margin separator through the origin and its margin.

    Solves the hard-margin SVM without intercept, ``min ||v||`` subject to
    ``y_i v·x_i >= 1``, as a least-distance programme reduced to non-negative
    least squares (Lawson & Hanson 1974, ch. 23) and solved by
    ``scipy.optimize.nnls``. Then ``w* = v / ||v||`` and ``gamma = 1 / ||v||``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)

    Returns
    -------
    w_star : ndarray, shape (d,), unit norm
    gamma : float > 0
        ``min_i y_i w*·x_i``.

    Raises
    ------
    ValueError
        If no hyperplane through the origin separates the data strictly.
    """
    from scipy.optimize import nnls  # imported here: scipy.optimize alone takes half a second

    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    signed_points = labels[:, None] * points  # rows z_i = y_i x_i; want z_i·v >= 1
    n, d = signed_points.shape
    # LDP: min ||v|| s.t. G v >= h, with G = Z, h = 1. NNLS on E = [G^T; h^T], f = e_{d+1}.
    E = np.vstack([signed_points.T, np.ones((1, n))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    u, _ = nnls(E, f, maxiter=50 * max(n, d + 1))
    residual = E @ u - f
    not_separable = ValueError(
        "the data are not linearly separable by a hyperplane through the origin "
        "(with a bias, pass augment(X))"
    )
    if abs(residual[-1]) < 1e-12:
        raise not_separable
    v = -residual[:d] / residual[-1]
    norm = float(np.linalg.norm(v))
    if norm == 0.0 or np.min(signed_points @ v) < 1 - SEPARABLE_TOLERANCE * max(1.0, norm):
        raise not_separable
    w_star = v / norm
    return w_star, float(np.min(signed_points @ w_star))


def is_separable(X, y, *, bias: bool = True) -> bool:
    """Whether some hyperplane (with an offset when ``bias=True``) separates the classes strictly."""
    try:
        max_margin(augment(X) if bias else X, y)
    except ValueError as error:
        if "not linearly separable" in str(error):
            return False
        raise
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
