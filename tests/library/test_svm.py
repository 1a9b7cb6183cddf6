"""The linear SVM read in the lecture's notation: primal, dual, support vectors, KKT."""

import numpy as np
import pytest

from perceptron_course import theory
from perceptron_course.datasets import linearly_separable
from perceptron_course.svm import (dual_objective, fit_linear_svm, kkt_residuals, primal_objective, slacks,
                                   solve_dual_with_scipy)


def test_hard_margin_on_four_points_by_hand():
    # Closest opposite points (0, 1) and (0, -1): the boundary is x2 = 0, w = (0, 1), b = 0, margin 1.
    X = np.array([[0.0, 1.0], [2.0, 3.0], [0.0, -1.0], [-2.0, -3.0]])
    y = np.array([1, 1, -1, -1])
    svm = fit_linear_svm(X, y)
    np.testing.assert_allclose(svm.w, [0.0, 1.0], atol=1e-6)
    assert abs(svm.b) < 1e-6 and np.isclose(svm.margin, 1.0, atol=1e-6)
    assert svm.support.tolist() == [0, 2]
    np.testing.assert_allclose(svm.alpha[[0, 2]], [0.5, 0.5], atol=1e-6)


def test_hard_margin_agrees_with_the_least_distance_solver_on_augmented_data():
    X, y = linearly_separable(40, 2, margin=0.1, seed=4)
    svm = fit_linear_svm(X, y)
    # theory.max_margin (NNLS) on (1, x) penalises b too, so compare on data through the origin
    X0, y0 = linearly_separable(40, 2, margin=0.1, bias=False, seed=4)
    w_star, gamma = theory.max_margin(X0, y0)
    assert 0 < svm.margin
    assert np.min(y * (X @ svm.w + svm.b)) == pytest.approx(1.0, abs=1e-5)
    through_origin = fit_linear_svm(np.vstack([X0, -X0]), np.concatenate([y0, -y0]))  # symmetric: b = 0
    assert abs(through_origin.b) < 1e-6
    np.testing.assert_allclose(through_origin.w / np.linalg.norm(through_origin.w), w_star, atol=1e-5)
    assert through_origin.margin == pytest.approx(gamma, rel=1e-5)


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_soft_margin_meets_kkt_and_strong_duality_and_scipy(C):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(1.0, 1.0, (15, 2)), rng.normal(-1.0, 1.0, (15, 2))])  # overlapping classes
    y = np.repeat([1, -1], 15)
    svm = fit_linear_svm(X, y, C=C)
    assert all(value < 1e-5 * max(1.0, C) for value in kkt_residuals(svm, X, y).values()), kkt_residuals(svm, X, y)
    assert primal_objective(svm, X, y) == pytest.approx(dual_objective(svm.alpha, X, y), rel=1e-5)
    alpha = solve_dual_with_scipy(X, y, C)
    assert dual_objective(alpha, X, y) == pytest.approx(dual_objective(svm.alpha, X, y), rel=1e-5)
    np.testing.assert_allclose((alpha * y) @ X, svm.w, atol=1e-3)
    # points inside the band pay slack and sit at the top of the box
    inside = slacks(svm, X, y) > 1e-4
    assert inside.any() and np.allclose(svm.alpha[inside], C, rtol=1e-5)


def test_kkt_residuals_see_a_wrong_solution():
    X = np.array([[0.0, 1.0], [0.0, -1.0]])
    y = np.array([1, -1])
    svm = fit_linear_svm(X, y)
    wrong = type(svm)(w=2 * svm.w, b=svm.b, alpha=svm.alpha, C=svm.C)
    assert kkt_residuals(wrong, X, y)["stationarity"] > 0.5
