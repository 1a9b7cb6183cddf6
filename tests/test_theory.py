"""Radius, max margin, the mistake bound and the proof's two inequalities."""

import numpy as np
import pytest
from scipy.optimize import nnls

from perceptron_course.datasets import linearly_separable, six_point_example, two_point_example, xor
from perceptron_course.geometry import augment
from perceptron_course.perceptron import train
from perceptron_course.theory import NotSeparableError, is_separable, max_margin, mistake_bound, proof_quantities, radius


def test_radius_is_measured_from_the_origin():
    X = np.array([[10.0, 0.0], [12.0, 0.0]])
    assert radius(X) == 12.0  # not 1.0, the radius about the centre


def test_max_margin_of_a_symmetric_pair():
    X = np.array([[2.0, 1.0], [-2.0, -1.0]])
    y = np.array([1, -1])
    w_star, gamma = max_margin(X, y)
    assert np.allclose(w_star, np.array([2.0, 1.0]) / np.sqrt(5))
    assert gamma == pytest.approx(np.sqrt(5))


def test_max_margin_of_the_six_point_example_by_hand():
    X, y = six_point_example()
    w_star, gamma = max_margin(X, y)
    assert np.linalg.norm(w_star) == pytest.approx(1.0)
    margins = y * (X @ w_star)
    assert margins.min() == pytest.approx(gamma)
    assert np.sum(np.isclose(margins, gamma, rtol=1e-7)) >= 2  # at least two support points


@pytest.mark.parametrize("seed", range(8))
def test_max_margin_satisfies_the_optimality_conditions(seed):
    # v = w*/gamma solves min ||v||^2 s.t. y_i v·x_i >= 1 iff it is feasible and (KKT)
    # v = sum_i a_i y_i x_i with a_i >= 0 only on points where the constraint is tight.
    X, y = linearly_separable(30, 3, margin=0.05, bias=False, seed=seed)
    w_star, gamma = max_margin(X, y)
    v = w_star / gamma
    signed = y[:, None] * X
    assert np.all(signed @ v >= 1 - 1e-9)
    support = np.isclose(signed @ v, 1.0, atol=1e-7)
    coefficients, residual = nnls(signed[support].T, v)
    assert residual < 1e-7 * np.linalg.norm(v)
    # and a worse direction really has a smaller margin
    nudged = w_star + 0.01 * np.random.default_rng(seed).normal(size=3)
    assert np.min(signed @ (nudged / np.linalg.norm(nudged))) < gamma


@pytest.mark.parametrize("data", [xor(), (np.array([[1.0], [2.0]]), np.array([1, -1]))])
def test_not_separable_raises_a_clear_error(data):
    with pytest.raises(NotSeparableError, match="not linearly separable") as raised:
        max_margin(*data)
    assert isinstance(raised.value, ValueError)  # what callers caught before it had a class of its own
    assert not is_separable(*data, bias=False)


def test_the_error_suggests_augment_only_for_data_not_yet_augmented():
    X, y = xor()
    with pytest.raises(NotSeparableError, match=r"pass augment\(X\)"):
        max_margin(X, y)
    with pytest.raises(NotSeparableError, match="first column is all ones") as raised:
        max_margin(np.hstack([np.ones((len(y), 1)), X]), y)
    assert "augment" not in str(raised.value)


def test_bad_input_is_an_error_not_a_verdict_of_separability():
    with pytest.raises(ValueError, match="label") as raised:
        is_separable(np.array([[1.0], [2.0]]), np.array([1, 2]))
    assert not isinstance(raised.value, NotSeparableError)


def test_separable_only_with_a_bias():
    X = np.array([[1.0], [2.0]])
    y = np.array([1, -1])
    assert is_separable(X, y, bias=True)
    assert not is_separable(X, y, bias=False)


def test_mistake_bound_uses_augmented_data_with_a_bias():
    X, y = linearly_separable(40, 2, margin=0.1, seed=2)
    aug = augment(X)
    assert mistake_bound(X, y) == pytest.approx((radius(aug) / max_margin(aug, y)[1]) ** 2)


def test_naive_bound_from_raw_data_can_be_exceeded_but_the_right_one_holds():
    # Points far from the origin along x1, separated at x1 = 10.5: the raw data's best
    # separator with an offset has a large margin, yet the run on augmented data needs many updates.
    X = np.array([[10.0, 0.0], [11.0, 0.0], [10.0, 1.0], [11.0, 1.0]])
    y = np.array([-1, 1, -1, 1])
    run = train(X, y)
    centred = X - X.mean(axis=0)
    naive = (radius(centred) / 0.5) ** 2  # R about the centre, gamma of the offset separator x1 = 10.5
    assert run.n_mistakes > naive
    assert run.n_mistakes <= mistake_bound(X, y)


def test_proof_inequalities_hold_at_every_update():
    X, y = linearly_separable(80, 3, margin=0.05, bias=False, seed=11)
    w_star, gamma = max_margin(X, y)
    run = train(X, y, bias=False)
    alignment, squared_norm = proof_quantities(run.weight_history, w_star)
    k = np.arange(run.n_mistakes + 1)
    assert np.all(alignment >= k * gamma - 1e-9)
    assert np.all(squared_norm <= k * radius(X) ** 2 + 1e-9)


def test_two_point_example_respects_its_bound():
    X, y = two_point_example()
    run = train(X, y, bias=False)
    assert run.n_mistakes <= mistake_bound(X, y, bias=False)
