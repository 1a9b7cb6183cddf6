"""Beyond the convergence theorem: the non-separable case, tightness, separability as a linear programme.

- ``hinge_deviations`` and ``freund_schapire_bound``: Freund and Schapire's (1999) mistake bound
  ``((R + D) / gamma) ** 2`` for any data, separable or not, with ``D`` from the hinge deviations;
- ``tight_example``: data on which the perceptron makes exactly ``(R / gamma) ** 2`` mistakes;
- ``separation_certificate``: a linear programme decides separability, and returns the proof
  either way (a strict separator, or Gordan's certificate that none exists);
- ``smallest_enclosing_ball``: the radius of the smallest ball containing the data (any centre),
  beside ``theory.radius``, the smallest ball centred at the origin.

Every function works on the points as the perceptron sees them: with a bias, pass ``augment(X)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_binary_labels, check_points, check_positive_int, check_vector

__all__ = ["SeparationCertificate", "freund_schapire_bound", "hinge_deviations", "separation_certificate",
           "smallest_enclosing_ball", "tight_example"]


def hinge_deviations(u, X, y, gamma: float) -> np.ndarray:
    """How far each point falls short of margin ``gamma`` along the unit direction of ``u``.

    ``d_i = max(0, gamma - y_i u·x_i / ||u||)``: zero for a point at margin ``gamma`` or more,
    positive for a point inside the band or on the wrong side.

    Parameters
    ----------
    u : array_like, shape (d,)
        Any nonzero direction (its length does not matter).
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    gamma : float > 0
        The target margin.

    Returns
    -------
    ndarray, shape (n,), non-negative
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    direction = check_vector(u, "u", points.shape[1])
    norm = float(np.linalg.norm(direction))
    if norm == 0.0:
        raise ValueError("u must be nonzero")
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0; got {gamma}")
    return np.maximum(0.0, gamma - labels * (points @ direction) / norm)


def freund_schapire_bound(u, X, y, gamma: float, *, n_passes: int = 1) -> float:
    """Freund and Schapire's bound ``((R + D) / gamma) ** 2`` on the perceptron's mistakes.

    For any unit ``u`` and any ``gamma > 0``, the perceptron through the origin (rule ``<= 0``, from
    ``w = 0``) makes at most this many mistakes on the sequence that visits the rows of ``X``
    ``n_passes`` times, in any order. ``R`` is ``max_i ||x_i||``; ``D`` is the norm of the hinge
    deviations over the whole sequence, ``sqrt(n_passes * sum_i d_i ** 2)``. On separable data with
    ``gamma`` at most the margin of ``u``, ``D = 0`` and this is the Block-Novikoff bound.

    Parameters
    ----------
    u : array_like, shape (d,)
    X : array_like, shape (n, d)
        The points the perceptron sees (``augment(X)`` for a run with a bias).
    y : array_like of -1/+1, shape (n,)
    gamma : float > 0
    n_passes : int >= 1
        Epochs of the run: every pass adds the same deviations again.

    Returns
    -------
    float
    """
    n_passes = check_positive_int(n_passes, "n_passes")
    deviations = hinge_deviations(u, X, y, gamma)
    radius = float(np.max(np.linalg.norm(check_points(X), axis=1)))
    total_deviation = float(np.sqrt(n_passes * np.sum(deviations**2)))
    return ((radius + total_deviation) / gamma) ** 2


def tight_example(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``d`` unit vectors ``e_1, ..., e_d``, all labelled ``+1``: the bound is reached.

    ``R = 1``; the best unit separator is ``(1, ..., 1) / sqrt(d)`` with margin ``1 / sqrt(d)``, so
    ``(R / gamma) ** 2 = d``. From ``w = 0`` every point scores 0 when it is first visited (``w`` is a
    sum of the other unit vectors), so the perceptron, in any order, makes exactly ``d`` mistakes.

    Returns
    -------
    X : ndarray, shape (d, d)
    y : ndarray of int, shape (d,), all +1
    """
    d = check_positive_int(d, "d")
    return np.eye(d), np.ones(d, dtype=int)


@dataclass(frozen=True)
class SeparationCertificate:
    """The answer of ``separation_certificate``, with its proof.

    Attributes
    ----------
    separable : bool
    separator : ndarray of shape (d,), or None
        When separable: a ``v`` with ``y_i v·x_i >= 1`` for every ``i`` (a strict separator through the origin).
    weights : ndarray of shape (n,), or None
        When not separable: ``lambda_i >= 0`` summing to 1 with ``sum_i lambda_i y_i x_i = 0``
        (Gordan's alternative: no ``v`` can have every ``y_i v·x_i > 0``, since their
        ``lambda``-weighted sum would be ``v·0 = 0``).
    """

    separable: bool
    separator: np.ndarray | None
    weights: np.ndarray | None


def separation_certificate(X, y) -> SeparationCertificate:
    """Decide strict separability through the origin by two linear programmes (SciPy's HiGHS).

    The first asks for ``v`` with ``y_i v·x_i >= 1`` for all ``i``: feasible exactly when some
    hyperplane through the origin separates strictly (scale any strict separator until its smallest
    score is 1). When it is infeasible, Gordan's theorem says the second is feasible: ``lambda >= 0``,
    ``sum lambda = 1``, ``sum_i lambda_i y_i x_i = 0``, a convex combination of the signed points that
    is the zero vector. Exactly one of the two holds; the one found is returned as its proof.

    Parameters
    ----------
    X : array_like, shape (n, d)
        With a bias, pass ``augment(X)``.
    y : array_like of -1/+1, shape (n,)

    Returns
    -------
    SeparationCertificate
    """
    from scipy.optimize import linprog

    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    signed = labels[:, None] * points
    n, d = signed.shape
    primal = linprog(np.zeros(d), A_ub=-signed, b_ub=-np.ones(n), bounds=[(None, None)] * d, method="highs")
    if primal.status == 0:
        return SeparationCertificate(True, np.asarray(primal.x, dtype=float), None)
    alternative = linprog(np.zeros(n), A_eq=np.vstack([signed.T, np.ones((1, n))]),
                          b_eq=np.concatenate([np.zeros(d), [1.0]]), bounds=[(0, None)] * n, method="highs")
    if alternative.status != 0:
        raise ArithmeticError("neither linear programme was solved: the data are too ill-conditioned to decide")
    return SeparationCertificate(False, None, np.asarray(alternative.x, dtype=float))


def smallest_enclosing_ball(X) -> tuple[np.ndarray, float]:
    """The centre and radius of the smallest ball containing every row of ``X`` (any centre).

    Solves the dual, ``max_lambda sum_i lambda_i ||x_i||^2 - ||sum_i lambda_i x_i||^2`` over the
    simplex, by SciPy's SLSQP; the centre is ``sum_i lambda_i x_i`` and the radius the largest
    distance from it (so the ball returned always contains every point).
    ``theory.radius(X)`` is the radius of the smallest ball centred at the **origin**, never smaller.

    Parameters
    ----------
    X : array_like, shape (n, d)

    Returns
    -------
    centre : ndarray, shape (d,)
    radius : float
    """
    from scipy.optimize import minimize

    points = check_points(X)
    n = points.shape[0]
    squared = np.einsum("ij,ij->i", points, points)

    def negative_dual(weights: np.ndarray) -> float:
        centre = weights @ points
        return float(centre @ centre - weights @ squared)

    def gradient(weights: np.ndarray) -> np.ndarray:
        return 2 * points @ (weights @ points) - squared

    solved = minimize(negative_dual, np.full(n, 1.0 / n), jac=gradient, method="SLSQP", bounds=[(0.0, 1.0)] * n,
                      constraints=[{"type": "eq", "fun": lambda w: np.sum(w) - 1.0, "jac": lambda w: np.ones(n)}],
                      options={"ftol": 1e-14, "maxiter": 500})
    centre = np.asarray(solved.x, dtype=float) @ points
    return centre, float(np.max(np.linalg.norm(points - centre, axis=1)))
