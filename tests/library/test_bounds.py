"""Freund and Schapire's bound, the tight example, separability as a linear programme, the enclosing ball, Kesler."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptron_course.bounds import (freund_schapire_bound, hinge_deviations, separation_certificate,
                                      smallest_enclosing_ball, tight_example)
from perceptron_course.datasets import iris_binary, linearly_separable, xor
from perceptron_course.geometry import augment
from perceptron_course.multiclass import kesler_points, train_multiclass
from perceptron_course.perceptron import train
from perceptron_course.theory import is_separable, max_margin, mistake_bound, radius


def test_hinge_deviations_by_hand():
    X = np.array([[2.0, 0.0], [0.5, 0.0], [-1.0, 0.0]])
    y = np.array([1, 1, 1])
    assert np.allclose(hinge_deviations(np.array([3.0, 0.0]), X, y, 1.0), [0.0, 0.5, 2.0])  # the length of u is ignored
    with pytest.raises(ValueError):
        hinge_deviations(np.zeros(2), X, y, 1.0)
    with pytest.raises(ValueError):
        hinge_deviations(np.ones(2), X, y, 0.0)


def test_freund_schapire_is_block_novikoff_on_separable_data():
    X, y = linearly_separable(40, 3, margin=0.1, bias=False, seed=0)
    w_star, gamma = max_margin(X, y)
    assert np.all(hinge_deviations(w_star, X, y, gamma) < 1e-9)
    assert freund_schapire_bound(w_star, X, y, gamma) == pytest.approx(mistake_bound(X, y, bias=False))


@pytest.mark.parametrize("epochs", [1, 3, 10])
def test_freund_schapire_bounds_a_run_on_data_that_are_not_separable(epochs):
    X, y = iris_binary("versicolor", "virginica")
    data = augment((X - X.mean(axis=0)) / X.std(axis=0))
    assert not is_separable(data, y, bias=False)
    run = train(data, y, bias=False, max_epochs=epochs)
    u = np.array([0.0, -0.2, -0.2, 0.7, 0.6])  # any direction: the bound holds for every u and gamma
    for gamma in (0.05, 0.2, 0.5):
        assert run.n_mistakes <= freund_schapire_bound(u, data, y, gamma, n_passes=epochs)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30))
def test_the_tight_example_reaches_the_bound_in_any_order(d):
    X, y = tight_example(d)
    order = np.random.default_rng(d).permutation(d)
    run = train(X[order], y[order], bias=False)
    assert run.n_mistakes == d
    assert mistake_bound(X, y, bias=False) == pytest.approx(d)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 12), st.integers(1, 3))
def test_exactly_one_certificate_holds_and_it_checks_out(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.choice([-1, 1], size=n)
    found = separation_certificate(X, y)
    assert found.separable == is_separable(X, y, bias=False)
    if found.separable:
        assert found.weights is None and np.min(y * (X @ found.separator)) >= 1 - 1e-7
    else:
        assert found.separator is None and np.all(found.weights >= -1e-9)
        assert np.isclose(found.weights.sum(), 1) and np.allclose(found.weights @ (y[:, None] * X), 0, atol=1e-7)


def test_xor_certificate_is_the_four_corners_with_equal_weights():
    X, y = xor()
    found = separation_certificate(augment(X), y)
    assert not found.separable and np.allclose(found.weights, 0.25)


@pytest.mark.parametrize("seed", range(5))
def test_smallest_enclosing_ball_contains_everything_and_no_smaller_ball_around_it_does(seed):
    X = np.random.default_rng(seed).normal(size=(25, 2)) + 3.0
    centre, r = smallest_enclosing_ball(X)
    distances = np.linalg.norm(X - centre, axis=1)
    assert np.all(distances <= r + 1e-12)
    assert np.sum(distances > r * (1 - 1e-6)) >= 2, "at least two points on the sphere"
    assert r < radius(X), "the ball centred at the origin is larger for data away from it"
    for shift in ([0.05, 0.0], [0.0, -0.05], [0.03, 0.03]):  # moving the centre only makes the ball larger
        assert np.max(np.linalg.norm(X - (centre + shift), axis=1)) > r


def test_smallest_enclosing_ball_of_two_points_is_their_midpoint():
    centre, r = smallest_enclosing_ball(np.array([[0.0, 0.0], [4.0, 0.0]]))
    assert np.allclose(centre, [2.0, 0.0], atol=1e-6) and r == pytest.approx(2.0, abs=1e-6)


def three_clusters(seed=1):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 3.0], [3.0, -1.0], [-3.0, -1.0]])
    return np.vstack([rng.normal(c, 0.6, (15, 2)) for c in centres]), np.repeat([0, 1, 2], 15)


def test_kesler_points_score_the_difference_of_two_classes():
    X, y = three_clusters()
    Z, point, rival = kesler_points(X, y)
    assert Z.shape == (len(y) * 2, 3 * 3)
    W = np.random.default_rng(0).normal(size=(3, 3))
    scores = augment(X) @ W.T
    assert np.allclose(Z @ W.ravel(), scores[point, y[point]] - scores[point, rival])
    assert np.all(rival != y[point])


def test_multiclass_perceptron_obeys_the_kesler_bound():
    X, y = three_clusters()
    Z, _, _ = kesler_points(X, y)
    _, gamma = max_margin(Z, np.ones(len(Z), dtype=int))
    assert radius(Z) == pytest.approx(np.sqrt(2) * radius(augment(X)))
    for seed in range(5):
        run = train_multiclass(X, y, shuffle=True, seed=seed)
        assert run.converged and run.n_mistakes <= (radius(Z) / gamma) ** 2
