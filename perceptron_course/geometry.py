"""Geometry of a linear separator ``w·x + b = 0``.

Conventions (the course's, held by its tests): points are rows of an ``(n, d)`` array,
labels are -1/+1, and the positive side is where ``w·x + b >= 0``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_binary_labels, check_points, check_vector


def augment(X) -> np.ndarray:
    """Prepend a column of ones, so that ``w·x + b`` becomes ``(b, w)·(1, x)``.

    Parameters
    ----------
    X : array_like, shape (n, d)

    Returns
    -------
    ndarray, shape (n, d + 1)
        A new float array; column 0 is all ones.
    """
    points = check_points(X)
    return np.hstack([np.ones((points.shape[0], 1)), points])


def scores(w, b: float, X) -> np.ndarray:
    """Raw scores ``w·x_i + b`` of every row.

    Parameters
    ----------
    w : array_like, shape (d,)
    b : float
    X : array_like, shape (n, d)

    Returns
    -------
    ndarray, shape (n,)
    """
    points = check_points(X)
    weights = check_vector(w, "w", points.shape[1])
    return points @ weights + float(b)


def _nonzero_norm(w: np.ndarray) -> float:
    norm = float(np.linalg.norm(w))
    if norm == 0.0:
        raise ValueError("w is the zero vector: it defines no hyperplane")
    return norm


def signed_distance(w, b: float, X) -> np.ndarray:
    """Signed Euclidean distance ``(w·x + b) / ||w||`` of every row to the hyperplane.

    Positive on the side ``w`` points to.

    Parameters
    ----------
    w : array_like, shape (d,), not zero
    b : float
    X : array_like, shape (n, d)

    Returns
    -------
    ndarray, shape (n,)
    """
    weights = check_vector(w, "w")
    return scores(weights, b, X) / _nonzero_norm(weights)


def project(x, direction) -> np.ndarray:
    """Orthogonal projection of ``x`` onto the line spanned by ``direction``.

    Parameters
    ----------
    x, direction : array_like, shape (d,); ``direction`` not zero

    Returns
    -------
    ndarray, shape (d,)
        ``(x·u) u`` with ``u = direction / ||direction||``.
    """
    vector = check_vector(x, "x")
    axis = check_vector(direction, "direction", vector.shape[0])
    unit = axis / _nonzero_norm(axis)
    return float(vector @ unit) * unit


def point_margins(w, b: float, X, y) -> np.ndarray:
    """Geometric margin ``y_i (w·x_i + b) / ||w||`` of every point.

    Positive for a point on its correct side, negative on the wrong side.

    Returns
    -------
    ndarray, shape (n,)
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    return labels * signed_distance(w, b, points)


def set_margin(w, b: float, X, y) -> float:
    """Margin of a data set with respect to the separator ``(w, b)``: the smallest point margin.

    Negative when some point is misclassified.
    """
    return float(np.min(point_margins(w, b, X, y)))
