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


# ----------------------------------------------------------------------------- max_margin against other solvers

from hypothesis import example, given, settings, strategies as st  # noqa: E402


@st.composite
def small_labelled_sets(draw):
    """Small integer point sets (sometimes with a leading 1, as augmented data), at scales from 1e-3 to 1e3, and labels."""
    n, d = draw(st.integers(1, 8)), draw(st.integers(1, 3))
    points = np.array(draw(st.lists(st.lists(st.integers(-9, 9), min_size=d, max_size=d), min_size=n, max_size=n)), dtype=float)
    if draw(st.booleans()):
        points = np.hstack([np.ones((n, 1)), points])
    labels = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    if draw(st.booleans()):  # a repeated point (scipy's NNLS once stopped short on one)
        row = draw(st.integers(0, n - 1))
        points, labels = np.vstack([points, points[row]]), np.append(labels, labels[row])
    return points * 10.0 ** draw(st.integers(-3, 3)), labels


def _separable_by_linear_programme(X, y) -> bool:
    from scipy.optimize import linprog

    signed = y[:, None] * X
    return linprog(np.zeros(X.shape[1]), A_ub=-signed, b_ub=-np.ones(len(y)), bounds=[(None, None)] * X.shape[1],
                   method="highs").status == 0


def _best_margin_by_active_sets(X, y) -> float:
    """The best margin through the origin, exactly, by trying every active set: for each set S of at most
    ``rank(Z)`` signed points ``z_i = y_i x_i``, the least-norm ``w`` with ``z_i . w = 1`` on S; the shortest such
    ``w`` with ``z_j . w >= 1`` at every point is the hard-margin solution (its own active set is among those tried),
    and the margin is ``1 / ||w||``. No solver that can stop early: a few hundred small least-squares solves.
    """
    from itertools import combinations

    signed = y[:, None] * X / float(np.max(np.linalg.norm(X, axis=1)))  # the margin scales with the points
    rank = np.linalg.matrix_rank(signed)
    shortest = np.inf
    for size in range(1, rank + 1):
        for active in combinations(range(len(y)), size):
            rows = signed[list(active)]
            w = np.linalg.lstsq(rows, np.ones(size), rcond=None)[0]  # the least-norm solution, if there is one
            if np.allclose(rows @ w, 1.0, atol=1e-9) and np.all(signed @ w >= 1.0 - 1e-9):
                shortest = min(shortest, float(np.linalg.norm(w)))
    return float(np.max(np.linalg.norm(X, axis=1))) / shortest


@settings(max_examples=300, deadline=None)
@given(small_labelled_sets())
@example((np.array([[1, 0, -5], [1, 7, -6], [1, -3, 6], [1, 0, 0], [1, 9, -3], [1, 7, 3], [1, 2, 1], [1, 3, -1]]) * 1000.0,
          np.array([1, 1, -1, 1, 1, -1, 1, 1])))  # where a dual's iterative solver needed the scaling
@example((np.array([[1.0, 3.0], [1.0, 1.0], [1.0, 0.0]]), np.array([-1, 1, 1])))  # where L-BFGS-B on the dual stopped short
def test_max_margin_agrees_with_a_linear_programme_and_with_every_active_set(data):
    X, y = data
    separable = _separable_by_linear_programme(X, y)
    if not separable:
        with pytest.raises(NotSeparableError):
            max_margin(X, y)
        return
    w_star, gamma = max_margin(X, y)
    assert np.isclose(np.linalg.norm(w_star), 1.0) and gamma > 0
    assert gamma == pytest.approx(float(np.min(y * (X @ w_star))), rel=1e-12)
    assert gamma == pytest.approx(_best_margin_by_active_sets(X, y), rel=1e-6)  # the best margin


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_max_margin_of_a_wide_margin_set_at_any_scale(scale):
    # margin 6 of the points (0, 6, +-1), the kind of set the grader draws: separable at every scale
    X = np.array([[0.0, 6.0, 1.0], [0.0, 6.0, -1.0], [0.0, -7.0, 0.0]]) * scale
    w_star, gamma = max_margin(X, np.array([1, 1, -1]))
    assert np.allclose(w_star, [0.0, 1.0, 0.0]) and gamma == pytest.approx(6.0 * scale)


def test_when_nnls_gives_no_usable_answer_a_linear_programme_decides(monkeypatch):
    from perceptron_course import _max_margin

    X, y = six_point_example()
    expected = max_margin(X, y)
    monkeypatch.setattr(_max_margin, "_least_distance", lambda points: None)  # as if NNLS had given up
    w_star, gamma = max_margin(X, y)
    assert np.allclose(w_star, expected[0], atol=1e-6) and gamma == pytest.approx(expected[1], rel=1e-6)
    monkeypatch.setattr(_max_margin, "_least_distance", lambda points: np.zeros(points.shape[1]) + 1e-3)  # a wrong v
    assert max_margin(X, y)[1] == pytest.approx(expected[1], rel=1e-6)
    with pytest.raises(NotSeparableError):
        max_margin(*xor())


def test_the_set_on_which_nnls_stopped_short_is_separable_with_margin_2():
    # Drawn for a proof_terms case: scipy's NNLS returned a point with min y v·x = 0.66 < 1,
    # and max_margin said "not separable"; the grader failed the submission with no feedback.
    X = np.array([[2, 1], [-2, -3], [4, -3], [3, -2], [3, 0], [2, -2], [-2, 1], [3, 0]])
    y = np.array([-1, 1, -1, -1, -1, -1, 1, -1])
    w_star, gamma = max_margin(augment(X), y)
    assert np.allclose(w_star, [0.0, -1.0, 0.0], atol=1e-9) and gamma == pytest.approx(2.0)
    assert mistake_bound(X, y) == pytest.approx(np.max(np.sum(augment(X) ** 2, axis=1)) / 4.0)
