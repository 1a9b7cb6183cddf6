"""Voted, averaged, pocket and kernel perceptrons."""

from functools import partial

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier

from perceptron_course.datasets import iris_binary, linearly_separable, xor
from perceptron_course.perceptron import predict, train
from perceptron_course.variants import (
    averaged_weights,
    kernel_decision_function,
    kernel_predict,
    linear_kernel,
    polynomial_kernel,
    predict_voted,
    rbf_kernel,
    train_kernel,
    train_pocket,
    train_voted,
)


def standardised_versicolor_virginica():
    X, y = iris_binary("versicolor", "virginica")
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def averaged_by_hand(X, y, epochs):
    """Freund & Schapire's definition written as a plain loop: sum the weights after every visit."""
    w, b = np.zeros(X.shape[1]), 0.0
    total_w, total_b = np.zeros(X.shape[1]), 0.0
    for _ in range(epochs):
        for x, label in zip(X, y):
            if label * (x @ w + b) <= 0:
                w, b = w + label * x, b + label
            total_w, total_b = total_w + w, total_b + b
    n_visits = epochs * len(X)
    return total_w / n_visits, total_b / n_visits


@pytest.mark.parametrize("seed", range(5))
def test_averaged_weights_equal_the_running_sum_definition(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 3))
    y = np.where(rng.random(25) < 0.5, -1, 1)
    model = train_voted(X, y, epochs=7)
    w, b = averaged_weights(model)
    w_ref, b_ref = averaged_by_hand(X, y, 7)
    assert np.allclose(w, w_ref) and b == pytest.approx(b_ref)
    assert model.counts.sum() == 7 * 25


def test_voted_counts_after_convergence_go_to_the_final_vector():
    X, y = linearly_separable(20, 2, margin=0.2, seed=1)
    run = train(X, y, max_epochs=50)
    model = train_voted(X, y, epochs=50)
    assert run.converged and run.epochs < 50
    assert model.counts[-1] >= (50 - run.epochs + 1) * len(X) - len(X)
    assert np.array_equal(model.vectors[-1], np.concatenate([[run.b], run.w]))


def test_voted_prediction_is_the_weighted_vote_of_signs():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, 1, -1)
    model = train_voted(X, y, epochs=5)
    test_points = rng.normal(size=(40, 2))
    votes = np.zeros(40)
    for (b_k, *w_k), c_k in zip(model.vectors, model.counts):
        votes += c_k * np.where(test_points @ np.array(w_k) + b_k >= 0, 1, -1)
    assert np.array_equal(predict_voted(model, test_points), np.where(votes >= 0, 1, -1))


def test_averaged_and_voted_beat_the_unstable_last_iterate_on_non_separable_iris():
    X, y = standardised_versicolor_virginica()
    last_iterate = [np.mean(predict(*_final(train(X, y, max_epochs=e)), X) == y) for e in range(10, 20)]
    model = train_voted(X, y, epochs=20)
    averaged = np.mean(predict(*averaged_weights(model), X) == y)
    voted = np.mean(predict_voted(model, X) == y)
    assert np.ptp(last_iterate) > 0.02  # the last iterate jumps around between epochs
    assert averaged >= 0.95 and voted >= 0.95


def test_averaged_weights_equal_sklearn_averaged_sgd_perceptron():
    X, y = standardised_versicolor_virginica()
    w, b = averaged_weights(train_voted(X, y, epochs=20))
    sklearn_model = SGDClassifier(
        loss="perceptron", penalty=None, alpha=0, learning_rate="constant", eta0=1,
        average=True, shuffle=False, max_iter=20, tol=None,
    ).fit(X, y)
    assert np.allclose(w, sklearn_model.coef_[0], rtol=1e-12)
    assert b == pytest.approx(sklearn_model.intercept_[0], rel=1e-12)


def _final(run):
    return run.w, run.b


def pocket_online(X, y, epochs):
    """Gallant's pocket with ratchet as an online loop, checking the pocket at every mistake."""
    w, streak = np.zeros(X.shape[1] + 1), 0
    pocket, pocket_streak, pocket_correct = w.copy(), -1, -1
    aug = np.hstack([np.ones((len(X), 1)), X])

    def consider():
        nonlocal pocket, pocket_streak, pocket_correct
        correct = int(np.sum(y * (aug @ w) > 0))
        if streak > pocket_streak and correct > pocket_correct:
            pocket, pocket_streak, pocket_correct = w.copy(), streak, correct

    for _ in range(epochs):
        for x, label in zip(aug, y):
            if label * (x @ w) <= 0:
                consider()
                w, streak = w + label * x, 0
            else:
                streak += 1
    consider()
    return pocket, pocket_correct


def test_pocket_equals_the_online_algorithm():
    X, y = standardised_versicolor_virginica()
    pocket = train_pocket(X, y, max_epochs=30, shuffle=False)
    expected, expected_correct = pocket_online(X, y, 30)
    assert pocket.n_correct == expected_correct
    assert np.array_equal(pocket.w, expected[1:]) and pocket.b == expected[0]


def test_the_ratchet_never_lets_the_pocket_get_worse():
    X, y = standardised_versicolor_virginica()
    correct = [train_pocket(X, y, max_epochs=e, shuffle=False).n_correct for e in range(1, 31)]
    assert all(later >= earlier for earlier, later in zip(correct, correct[1:]))
    assert correct[-1] > correct[0]


def test_pocket_on_separable_data_returns_a_separator():
    X, y = linearly_separable(50, 2, margin=0.05, seed=4)
    pocket = train_pocket(X, y, max_epochs=100)
    assert pocket.n_correct == len(y)


def test_linear_kernel_perceptron_is_the_perceptron():
    X, y = linearly_separable(40, 3, margin=0.05, seed=5)
    X = np.round(X * 20)  # integer data: both computations are exact
    for bias in (True, False):
        model = train_kernel(X, y, kernel=linear_kernel, bias=bias, max_epochs=50)
        run = train(X, y, bias=bias, max_epochs=50)
        assert np.array_equal(model.alpha, np.bincount(run.update_indices, minlength=len(X)))
        assert model.b == run.b and model.converged == run.converged
        assert np.array_equal(kernel_decision_function(model, X), X @ run.w + run.b)


@pytest.mark.parametrize("kernel", [polynomial_kernel, partial(rbf_kernel, gamma=0.5)])
def test_kernel_perceptron_solves_xor(kernel):
    X, y = xor(5, noise=0.1, seed=0)
    model = train_kernel(X, y, kernel=kernel)
    assert model.converged
    assert np.array_equal(kernel_predict(model, X), y)
    assert model.n_mistakes == model.alpha.sum() and np.all(model.alpha >= 0)


def test_kernel_alpha_counts_only_mistakes():
    X, y = xor()
    model = train_kernel(X, y, kernel=polynomial_kernel, rule="sign", max_epochs=10)
    # Replay: alpha_j grows exactly when point j is misclassified under the rule.
    alpha = np.zeros(4, dtype=int)
    gram = polynomial_kernel(X, X) + 1.0
    for _ in range(model.epochs):
        for j in range(4):
            score = (alpha * y) @ gram[:, j]
            if (1 if score >= 0 else -1) != y[j]:
                alpha[j] += 1
    assert np.array_equal(model.alpha, alpha)


def test_rbf_kernel_matches_its_definition():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    expected = np.array([[np.exp(-0.7 * np.sum((a - b) ** 2)) for b in B] for a in A])
    assert np.allclose(rbf_kernel(A, B, gamma=0.7), expected)
