"""The hard-margin separator through the origin, on its own so the grading sandbox can offer it alone.

``theory`` re-exports ``max_margin``; assignment ``04_convergence`` lets students call it
while every other reference function stays out of the grading kernel.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_binary_labels, check_points

#: A max-margin solution whose smallest margin is below ``1 - SEPARABLE_TOLERANCE``
#: (in units of the optimal margin) means the data are not separable.
SEPARABLE_TOLERANCE = 1e-7


class NotSeparableError(ValueError):
    """No hyperplane through the origin separates the data strictly (a ``ValueError``)."""


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
    NotSeparableError
        A ``ValueError``: no hyperplane through the origin separates the data strictly.
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
    already_augmented = bool(np.all(points[:, 0] == 1.0))
    not_separable = NotSeparableError(
        "the data are not linearly separable by a hyperplane through the origin "
        + ("(their first column is all ones, so no hyperplane w·x + b = 0 separates the other columns either)"
           if already_augmented else "(with a bias, pass augment(X))")
    )
    if abs(residual[-1]) < 1e-12:
        raise not_separable
    v = -residual[:d] / residual[-1]
    norm = float(np.linalg.norm(v))
    if norm == 0.0 or np.min(signed_points @ v) < 1 - SEPARABLE_TOLERANCE * max(1.0, norm):
        raise not_separable
    w_star = v / norm
    return w_star, float(np.min(signed_points @ w_star))
