"""The hard-margin separator through the origin, on its own so the grading sandbox can offer it alone.

``theory`` re-exports ``max_margin``; assignment ``04_convergence`` lets students call it
while every other reference function stays out of the grading kernel.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_binary_labels, check_points

#: A max-margin solution whose smallest margin is below ``1 - SEPARABLE_TOLERANCE``
#: (in units of the optimal margin) is not accepted as it comes from the solver.
SEPARABLE_TOLERANCE = 1e-7


class NotSeparableError(ValueError):
    """No hyperplane through the origin separates the data strictly (a ``ValueError``)."""


def max_margin(X, y) -> tuple[np.ndarray, float]:
    """The unit-norm max-margin separator through the origin and its margin.

    Solves the hard-margin SVM without intercept, ``min ||v||`` subject to
    ``y_i v·x_i >= 1``, as a least-distance programme reduced to non-negative
    least squares (Lawson & Hanson 1974, ch. 23) and solved by
    ``scipy.optimize.nnls``, on the points scaled to a largest norm of 1 (the
    margin scales with them, the direction does not). The support points NNLS
    finds then give ``v`` once more, as the least-norm solution of
    ``y_i v·x_i = 1`` on them, which removes the solver's rounding. Then
    ``w* = v / ||v||`` and ``gamma = 1 / ||v||``. Whether the data are separable
    is never decided by a solver's rounding: when the solution does not hold every
    constraint, a linear programme (``scipy.optimize.linprog``, HiGHS) decides,
    and a separable set is then solved by SLSQP from its feasible point (an
    ``ArithmeticError`` if that fails too: a wrong margin is never returned).

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
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    signed_points = labels[:, None] * points  # rows z_i = y_i x_i; want z_i·v >= 1
    scale = float(np.max(np.linalg.norm(signed_points, axis=1)))
    already_augmented = bool(np.all(points[:, 0] == 1.0))
    if scale == 0.0 or not np.isfinite(scale):
        raise _not_separable(already_augmented)
    unit_points = signed_points / scale
    v = _least_distance(unit_points)
    if v is None or not _holds(unit_points, v):
        v = _arbitrated(unit_points, already_augmented)
    w_star = v / np.linalg.norm(v)
    return w_star, float(np.min(signed_points @ w_star))


def _not_separable(already_augmented: bool) -> NotSeparableError:
    return NotSeparableError(
        "the data are not linearly separable by a hyperplane through the origin "
        + ("(their first column is all ones, so no hyperplane w·x + b = 0 separates the other columns either)"
           if already_augmented else "(with a bias, pass augment(X))"))


def _holds(points: np.ndarray, v: np.ndarray) -> bool:
    """Whether ``v`` is a nonzero solution of ``points @ v >= 1`` up to the tolerance."""
    norm = float(np.linalg.norm(v))
    return bool(np.isfinite(norm) and norm > 0.0
                and np.min(points @ v) >= 1 - SEPARABLE_TOLERANCE * max(1.0, norm))


def _least_distance(points: np.ndarray) -> np.ndarray | None:
    """``argmin ||v||`` subject to ``points @ v >= 1`` by NNLS, polished on its support; ``None`` if NNLS finds none."""
    from scipy.optimize import nnls  # imported here: scipy.optimize alone takes half a second

    n, d = points.shape
    # LDP: min ||v|| s.t. G v >= h, with G = Z, h = 1. NNLS on E = [G^T; h^T], f = e_{d+1}.
    E = np.vstack([points.T, np.ones((1, n))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    try:
        u, _ = nnls(E, f, maxiter=50 * max(n, d + 1))
    except RuntimeError:  # too many iterations: let the linear programme decide
        return None
    residual = E @ u - f
    if abs(residual[-1]) < 1e-12:
        return None
    v = -residual[:d] / residual[-1]
    support = u > 0
    if np.any(support):
        polished = np.linalg.lstsq(points[support], np.ones(int(support.sum())), rcond=None)[0]
        if _holds(points, polished) and np.linalg.norm(polished) <= np.linalg.norm(v) * (1 + 1e-9):
            return polished
    return v


def _arbitrated(points: np.ndarray, already_augmented: bool) -> np.ndarray:
    """The max-margin ``v`` when NNLS gave no usable answer: a linear programme decides separability, SLSQP solves."""
    from scipy.optimize import linprog, minimize

    n, d = points.shape
    feasible = linprog(np.zeros(d), A_ub=-points, b_ub=-np.ones(n), bounds=[(None, None)] * d, method="highs")
    if feasible.status != 0:
        raise _not_separable(already_augmented)
    start = np.asarray(feasible.x, dtype=float)
    solved = minimize(lambda v: 0.5 * float(v @ v), start, jac=lambda v: v, method="SLSQP",
                      constraints=[{"type": "ineq", "fun": lambda v: points @ v - 1.0, "jac": lambda v: points}],
                      options={"ftol": 1e-15, "maxiter": 1000})
    candidate = np.asarray(solved.x, dtype=float)
    if not (_holds(points, candidate) and np.linalg.norm(candidate) <= np.linalg.norm(start) * (1 + 1e-9)):
        raise ArithmeticError("the data are separable, but no solver found their max-margin separator")
    return candidate
