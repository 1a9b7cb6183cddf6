"""One-vs-rest and the multiclass perceptron."""

import numpy as np
import pytest
from sklearn.linear_model import Perceptron

from perceptron_course.datasets import digits, iris
from perceptron_course.multiclass import decision_function, predict_multiclass, train_multiclass, train_one_vs_rest
from perceptron_course.perceptron import train


@pytest.mark.parametrize("rule", ["margin", "sign"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_one_vs_rest_single_pass_equals_k_separate_runs(rule, shuffle):
    X, y = digits()
    X, y = X[:400], y[:400]
    model = train_one_vs_rest(X, y, rule=rule, max_epochs=6, shuffle=shuffle, seed=3)
    for k, label in enumerate(model.classes):
        run = train(X, np.where(y == label, 1, -1), rule=rule, max_epochs=6, shuffle=shuffle, seed=3)
        assert np.array_equal(model.W[k], run.w) and model.b[k] == run.b
        assert model.n_mistakes[k] == run.n_mistakes
        assert model.epochs[k] == run.epochs and model.converged[k] == run.converged


def test_one_vs_rest_equals_separate_runs_on_float_data_with_early_convergence():
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=6, size=(4, 3))
    y = rng.integers(0, 4, size=120)
    X = centres[y] + rng.normal(size=(120, 3))
    model = train_one_vs_rest(X, y, max_epochs=200)
    for k in range(4):
        run = train(X, np.where(y == k, 1, -1), max_epochs=200)
        assert np.array_equal(model.W[k], run.w) and model.b[k] == run.b and model.epochs[k] == run.epochs


def test_one_vs_rest_predicts_by_argmax_of_raw_scores():
    X, y = iris()
    model = train_one_vs_rest(X, y, max_epochs=50)
    scores = decision_function(model, X)
    assert scores.shape == (150, 3)
    assert np.array_equal(predict_multiclass(model, X), np.argmax(X @ model.W.T + model.b, axis=1))


def test_ties_go_to_the_first_class():
    X, y = iris()
    model = train_multiclass(X, y, max_epochs=1)
    zero = model.__class__(model.classes, np.zeros_like(model.W), np.zeros(3), 0, 0, False)
    assert np.all(predict_multiclass(zero, X) == model.classes[0])


def test_multiclass_rules_differ_only_on_ties():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([0, 1])
    margin = train_multiclass(X, y, bias=False, rule="margin", max_epochs=1)
    sign = train_multiclass(X, y, bias=False, rule="sign", max_epochs=1)
    # Row 0 of class 0 at W = 0: a tie. Only the margin rule calls it a mistake.
    assert margin.n_mistakes == 2 and sign.n_mistakes == 1
    assert np.array_equal(margin.W, [[1.0, -1.0], [-1.0, 1.0]])
    assert np.array_equal(sign.W, [[0.0, -1.0], [0.0, 1.0]])


def test_multiclass_update_by_hand():
    X = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 1.0]])
    y = np.array([2, 0, 1])
    model = train_multiclass(X, y, bias=False, rule="margin", max_epochs=1)
    W = np.zeros((3, 2))
    # row 0 (class 2): all tied at 0, rival = class 0 -> W[2] += x, W[0] -= x
    W[2] += X[0]
    W[0] -= X[0]
    # row 1 (class 0): scores W x = (-1, 0, 1) -> rival 2 -> update
    W[0] += X[1]
    W[2] -= X[1]
    # row 2 (class 1): scores (-3, 0, 3) -> rival 2 -> update
    W[1] += X[2]
    W[2] -= X[2]
    assert np.array_equal(model.W, W) and model.n_mistakes == 3


@pytest.mark.parametrize("trainer", [train_one_vs_rest, train_multiclass])
def test_accuracy_on_digits_is_close_to_sklearn(trainer):
    X, y = digits()
    train_rows, test_rows = slice(0, 1200), slice(1200, None)
    model = trainer(X[train_rows], y[train_rows], max_epochs=20)
    ours = np.mean(predict_multiclass(model, X[test_rows]) == y[test_rows])
    theirs = Perceptron(shuffle=False, tol=None, max_iter=20).fit(X[train_rows], y[train_rows]).score(X[test_rows], y[test_rows])
    assert ours > 0.85 and ours >= theirs - 0.05
