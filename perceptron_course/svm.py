"""The max-margin problem written out: the linear SVM, primal and dual, and its KKT conditions.

Soft-margin primal (the hard margin is ``C -> infinity``)::

    min_{w, b, xi}  ||w||^2 / 2 + C sum_i xi_i
    subject to      y_i (w·x_i + b) >= 1 - xi_i,  xi_i >= 0.

Its dual::

    max_alpha  sum_i alpha_i - 1/2 sum_ij alpha_i alpha_j y_i y_j x_i·x_j
    subject to 0 <= alpha_i <= C,  sum_i alpha_i y_i = 0,

with ``w = sum_i alpha_i y_i x_i``. The points with ``alpha_i > 0`` are the support
vectors. The solver is scikit-learn's ``SVC(kernel="linear")`` (libsvm); this module
only reads its answer in the lecture's notation and checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_binary_labels, check_points

#: ``C`` standing in for the hard margin (``C = infinity``) on data that are separable: the
#: answer is the hard-margin one when every ``alpha_i < C``. ``primal_objective`` and the
#: ``slackness`` residual multiply libsvm's tiny numerical slacks (about 1e-8) by ``C``; for
#: tight checks pass the smallest ``C`` above the largest ``alpha_i``.
HARD_MARGIN_C = 1e6


@dataclass(frozen=True)
class LinearSVM:
    """A solved linear SVM in the lecture's notation.

    Attributes
    ----------
    w : ndarray, shape (d,)
    b : float
    alpha : ndarray, shape (n,)
        Dual variables, ``0 <= alpha_i <= C``; zero off the support vectors.
    C : float
    """

    w: np.ndarray
    b: float
    alpha: np.ndarray
    C: float

    @property
    def support(self) -> np.ndarray:
        """Indices of the support vectors (``alpha_i > 0``), ascending."""
        return np.flatnonzero(self.alpha > 0)

    @property
    def margin(self) -> float:
        """The geometric margin of the band, ``1 / ||w||``."""
        return float(1.0 / np.linalg.norm(self.w))


def fit_linear_svm(X, y, *, C: float = HARD_MARGIN_C, tol: float = 1e-8) -> LinearSVM:
    """Solve the soft-margin SVM with scikit-learn's ``SVC(kernel="linear")``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    C : float > 0
        The price of a unit of slack; the default stands for the hard margin.
    tol : float
        libsvm's stopping tolerance (tight, so that the KKT checks are meaningful).

    Returns
    -------
    LinearSVM
    """
    from sklearn.svm import SVC  # imported here: the library imports fast without scikit-learn

    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    model = SVC(kernel="linear", C=C, tol=tol).fit(points, labels)
    alpha = np.zeros(points.shape[0])
    # dual_coef_ holds alpha_i y_i for the support vectors.
    alpha[model.support_] = np.abs(model.dual_coef_[0])
    return LinearSVM(w=model.coef_[0].copy(), b=float(model.intercept_[0]), alpha=alpha, C=float(C))


def slacks(svm: LinearSVM, X, y) -> np.ndarray:
    """``xi_i = max(0, 1 - y_i (w·x_i + b))``: how far each point falls short of the band; shape (n,)."""
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    return np.maximum(0.0, 1.0 - labels * (points @ svm.w + svm.b))


def primal_objective(svm: LinearSVM, X, y) -> float:
    """``||w||^2 / 2 + C sum_i xi_i`` at the solution."""
    return float(svm.w @ svm.w / 2 + svm.C * slacks(svm, X, y).sum())


def dual_objective(alpha, X, y) -> float:
    """``sum_i alpha_i - 1/2 ||sum_i alpha_i y_i x_i||^2`` for any ``alpha`` of shape (n,)."""
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    alpha = np.asarray(alpha, dtype=float)
    w = (alpha * labels) @ points
    return float(alpha.sum() - w @ w / 2)


def kkt_residuals(svm: LinearSVM, X, y) -> dict[str, float]:
    """How far the solution is from each KKT condition of the soft-margin SVM (all 0 at the optimum).

    Returns
    -------
    dict
        ``stationarity``: ``max |w - sum_i alpha_i y_i x_i|``;
        ``balance``: ``|sum_i alpha_i y_i|``;
        ``box``: how far some ``alpha_i`` leaves ``[0, C]``;
        ``primal``: how far some ``y_i f(x_i)`` falls below ``1 - xi_i``;
        ``slackness``: ``max_i alpha_i (y_i f(x_i) - 1 + xi_i)`` and ``max_i (C - alpha_i) xi_i``
        (complementary slackness: a point inside the band has ``alpha_i = C``,
        a point beyond it has ``alpha_i = 0``).
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    functional = labels * (points @ svm.w + svm.b)
    xi = slacks(svm, points, labels)
    alpha = svm.alpha
    return {
        "stationarity": float(np.max(np.abs(svm.w - (alpha * labels) @ points))),
        "balance": float(abs(alpha @ labels)),
        "box": float(max(0.0, -alpha.min(), (alpha - svm.C).max())),
        "primal": float(max(0.0, np.max(1 - xi - functional))),
        "slackness": float(max(np.max(np.abs(alpha * (functional - 1 + xi))), np.max((svm.C - alpha) * xi))),
    }


def solve_dual_with_scipy(X, y, C: float) -> np.ndarray:
    """The dual solved by a general-purpose solver (SciPy's SLSQP), as an independent check.

    Only for small ``n`` (tens of points): SLSQP is dense and slow.

    Returns
    -------
    alpha : ndarray, shape (n,)
    """
    from scipy.optimize import minimize

    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0]).astype(float)
    signed = labels[:, None] * points
    gram = signed @ signed.T

    def negative_dual(alpha: np.ndarray) -> float:
        return float(alpha @ gram @ alpha / 2 - alpha.sum())

    def gradient(alpha: np.ndarray) -> np.ndarray:
        return gram @ alpha - 1

    result = minimize(
        negative_dual,
        np.zeros(len(labels)),
        jac=gradient,
        bounds=[(0.0, C)] * len(labels),
        constraints=[{"type": "eq", "fun": lambda alpha: alpha @ labels, "jac": lambda alpha: labels}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 1000},
    )
    if not result.success:
        raise RuntimeError(f"SLSQP did not converge: {result.message}")
    return result.x
