"""The online perceptron: worked examples, conventions, scikit-learn agreement, properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Perceptron

from perceptron_course.datasets import linearly_separable, six_point_example, two_point_example, xor
from perceptron_course.geometry import augment
from perceptron_course.perceptron import is_mistake, mistakes, predict, train
from perceptron_course.theory import mistake_bound


def weights_of(history):
    return [w.tolist() for w, _ in history]


# ---------------------------------------------------------------- worked examples, both rules


def test_two_point_example_sign_rule_matches_the_lecture():
    run = train(*two_point_example(), bias=False, rule="sign")
    assert weights_of(run.history) == [[0, 0, 0], [-1, -2, -1], [0, -1, 1]]
    # x_o is right at w = 0 (sign(0) = +1); x_x is wrong; then x_o is wrong at w(2).
    assert run.update_indices.tolist() == [1, 0]
    assert run.converged and run.n_mistakes == 2 and run.epochs == 3


def test_two_point_example_margin_rule_differs_in_the_middle_and_ends_the_same():
    run = train(*two_point_example(), bias=False, rule="margin")
    assert weights_of(run.history) == [[0, 0, 0], [1, 1, 2], [0, -1, 1]]
    assert run.update_indices.tolist() == [0, 1]
    assert run.converged and run.epochs == 2


def test_six_point_example_sign_rule_matches_the_lecture():
    run = train(*six_point_example(), bias=False, rule="sign")
    assert weights_of(run.history) == [[0, 0], [1, -2], [2, -1], [3, 1]]
    assert run.converged
    X, y = six_point_example()
    assert np.array_equal(predict(run.w, run.b, X), y)


def test_six_point_example_margin_rule_gives_the_same_history():
    # Checked by hand: the scores of exactly 0 (points 1 and 5 of the first pass) fall on
    # label -1 points, where both rules call a mistake, so the runs coincide.
    run = train(*six_point_example(), bias=False, rule="margin")
    assert weights_of(run.history) == [[0, 0], [1, -2], [2, -1], [3, 1]]
    assert run.update_indices.tolist() == [0, 2, 4]
    assert run.converged and run.epochs == 2
    X, y = six_point_example()
    assert np.all(y * (X @ run.w) > 0)


def test_strict_inequality_would_never_leave_zero_but_margin_rule_does():
    X, y = two_point_example()
    assert not (y[0] * 0.0 < 0)  # the buggy strict rule sees no mistake at w = 0
    assert is_mistake(0.0, 1, "margin") and is_mistake(0.0, -1, "margin")
    assert not is_mistake(0.0, 1, "sign") and is_mistake(0.0, -1, "sign")
    assert train(X, y, bias=False).n_mistakes > 0


def test_vectorised_and_scalar_mistake_rules_agree():
    scores = np.array([-2.0, -0.0, 0.0, 1e-300, 3.0])
    for rule in ("margin", "sign"):
        for label in (-1, 1):
            expected = [is_mistake(s, label, rule) for s in scores]
            assert mistakes(scores, np.full(5, label), rule).tolist() == expected


def test_predict_uses_sign_zero_positive_and_returns_ints():
    labels = predict(np.array([1.0, -1.0]), 0.0, np.array([[1.0, 1.0], [0.0, 1.0], [2.0, 1.0]]))
    assert labels.tolist() == [1, -1, 1]
    assert labels.dtype.kind == "i"


# ---------------------------------------------------------------- bias, history, determinism


@pytest.mark.parametrize("rule", ["margin", "sign"])
@pytest.mark.parametrize("seed", range(10))
def test_bias_is_exactly_augmentation(rule, seed):
    X, y = linearly_separable(40, 3, margin=0.05, seed=seed)
    with_bias = train(X, y, bias=True, rule=rule)
    augmented = train(augment(X), y, bias=False, rule=rule)
    assert np.array_equal(with_bias.w, augmented.w[1:])
    assert with_bias.b == augmented.w[0]
    assert np.array_equal(with_bias.weight_history, augmented.weight_history)
    assert with_bias.update_indices.tolist() == augmented.update_indices.tolist()
    assert augmented.b == 0.0


def test_history_entries_are_independent_copies_and_end_at_the_final_weights():
    X, y = linearly_separable(30, 2, seed=3)
    run = train(X, y)
    history = run.history
    assert len(history) == run.n_mistakes + 1
    assert np.all(history[0][0] == 0) and history[0][1] == 0.0
    assert np.array_equal(history[-1][0], run.w) and history[-1][1] == run.b
    history[1][0][:] = 99.0
    assert not np.any(run.history[1][0] == 99.0)
    assert len({id(w) for w, _ in history}) == len(history)


def test_history_replays_the_updates_step_by_step():
    X, y = linearly_separable(25, 2, seed=4)
    run = train(X, y, record_steps=True)
    w, b = np.zeros(2), 0.0
    expected = [(w.copy(), b)]
    for step in run.steps:
        assert step.score == pytest.approx(X[step.index] @ w + b)
        if step.mistake:
            w, b = w + y[step.index] * X[step.index], b + y[step.index]
            expected.append((w.copy(), b))
    assert len(expected) == len(run.history)
    for (w_run, b_run), (w_ref, b_ref) in zip(run.history, expected):
        assert np.array_equal(w_run, w_ref) and b_run == b_ref


def test_run_arrays_are_read_only():
    run = train(*six_point_example(), bias=False)
    with pytest.raises(ValueError):
        run.w[0] = 1.0


def test_input_arrays_are_not_modified():
    X, y = linearly_separable(20, 2, seed=5)
    X_before, y_before = X.copy(), y.copy()
    train(X, y, shuffle=True, seed=1)
    assert np.array_equal(X, X_before) and np.array_equal(y, y_before)


def test_shuffling_is_seeded_and_leaves_global_state_alone():
    X, y = linearly_separable(60, 2, margin=0.01, seed=6)
    np.random.seed(123)
    global_before = np.random.random()
    np.random.seed(123)
    first = train(X, y, shuffle=True, seed=7)
    assert np.random.random() == global_before
    second = train(X, y, shuffle=True, seed=np.random.default_rng(7))
    assert np.array_equal(first.weight_history, second.weight_history)
    unshuffled = train(X, y)
    other = train(X, y, shuffle=True, seed=8)
    assert not np.array_equal(first.update_indices, unshuffled.update_indices)
    assert not np.array_equal(first.update_indices, other.update_indices)


def test_order_matters_but_both_orders_separate():
    X, y = six_point_example()
    forward = train(X, y, bias=False)
    backward = train(X[::-1], y[::-1], bias=False)
    assert not np.array_equal(forward.w, backward.w)
    for run in (forward, backward):
        assert np.array_equal(predict(run.w, 0.0, X), y)


# ---------------------------------------------------------------- non-separable data


def test_xor_stops_at_the_cap_unconverged():
    run = train(*xor(), max_epochs=25)
    assert run.epochs == 25 and not run.converged
    assert run.n_mistakes >= 25  # at least one mistake in every pass


def test_separable_data_converge_and_classify_everything():
    X, y = linearly_separable(100, 4, margin=0.05, seed=9)
    run = train(X, y)
    assert run.converged
    assert np.all(y * (X @ run.w + run.b) > 0)


# ---------------------------------------------------------------- scikit-learn, bit for bit


@pytest.mark.parametrize("seed", range(30))
def test_matches_sklearn_perceptron_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(5, 80), rng.integers(1, 8)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1, 1)
    y[:2] = [-1, 1]  # both classes present
    if seed % 3 == 0:
        X = np.round(X * 3)  # integer data: exact zero scores happen
    epochs = int(rng.integers(1, 15))
    ours = train(X, y, max_epochs=epochs)
    theirs = Perceptron(shuffle=False, eta0=1, alpha=0, tol=None, max_iter=epochs).fit(X, y)
    assert np.array_equal(ours.w, theirs.coef_[0])
    assert ours.b == theirs.intercept_[0]


# ---------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 60),
    d=st.integers(1, 5),
    margin=st.floats(0.02, 0.3),
    bias=st.booleans(),
)
def test_mistakes_never_exceed_the_bound(seed, n, d, margin, bias):
    X, y = linearly_separable(n, d, margin=margin, bias=bias, seed=seed)
    run = train(X, y, bias=bias)
    assert run.converged
    assert run.n_mistakes <= mistake_bound(X, y, bias=bias) * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 50), d=st.integers(1, 5), scale=st.sampled_from([100.0, 0.01]))
def test_mistakes_are_invariant_to_scaling_without_bias(seed, n, d, scale):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1, 1)
    original = train(X, y, bias=False, max_epochs=20)
    scaled = train(X * scale, y, bias=False, max_epochs=20)
    assert scaled.update_indices.tolist() == original.update_indices.tolist()
    assert scaled.converged == original.converged


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), d=st.integers(1, 4), bias=st.booleans(),
       rule=st.sampled_from(["margin", "sign"]), shuffle=st.booleans(), integer=st.booleans())
def test_the_weights_after_some_passes_are_what_training_with_that_cap_returns(seed, n, d, bias, rule, shuffle, integer):
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(n, d)) if integer else np.round(rng.normal(size=(n, d)), 3)  # integers: scores of exactly 0
    y = np.where(rng.random(n) < 0.5, -1, 1)
    run = train(X, y, bias=bias, rule=rule, shuffle=shuffle, seed=seed, max_epochs=12)
    for cap in range(1, 13 if not run.converged else run.epochs + 4):
        w, b = run.weights_after(cap)
        capped = train(X, y, bias=bias, rule=rule, shuffle=shuffle, seed=seed, max_epochs=cap)
        assert np.array_equal(w, capped.w) and b == capped.b  # bit for bit
    if not run.converged:
        with pytest.raises(ValueError, match="without converging"):
            run.weights_after(13)
