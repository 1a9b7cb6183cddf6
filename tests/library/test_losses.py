"""The perceptron as SGD on the perceptron criterion, and the hinge loss beside it."""

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier

from perceptron_course.datasets import linearly_separable
from perceptron_course.losses import functional_margins, hinge_loss, perceptron_criterion, sgd, zero_one_loss
from perceptron_course.perceptron import train


def test_losses_at_hand_picked_margins():
    z = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0])
    assert perceptron_criterion(z).tolist() == [2.0, 0.5, 0.0, 0.0, 0.0, 0.0]
    assert hinge_loss(z).tolist() == [3.0, 1.5, 1.0, 0.5, 0.0, 0.0]
    assert zero_one_loss(z).tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]


def test_functional_margins_by_hand():
    X = np.array([[1.0, 2.0], [-1.0, 0.0]])
    assert functional_margins([1.0, -1.0], 0.5, X, [1, -1]).tolist() == [-0.5, 0.5]


@pytest.mark.parametrize("learning_rate", [1.0, 0.01, 7.5])
def test_sgd_on_the_perceptron_criterion_is_the_perceptron(learning_rate):
    for seed in range(5):
        X, y = linearly_separable(40, 3, margin=0.05, seed=seed)
        run = train(X, y)
        descent = sgd(X, y, loss="perceptron", learning_rate=learning_rate)
        assert descent.n_steps == run.n_mistakes and descent.converged == run.converged
        np.testing.assert_allclose(descent.w, learning_rate * run.w, rtol=1e-12)
        np.testing.assert_allclose(descent.b, learning_rate * run.b, rtol=1e-12)


def test_sgd_on_the_hinge_matches_scikit_learn():
    X, y = linearly_separable(30, 2, margin=0.05, seed=3)
    ours = sgd(X, y, loss="hinge", learning_rate=0.1, max_epochs=5)
    theirs = SGDClassifier(loss="hinge", penalty=None, alpha=0.0, learning_rate="constant", eta0=0.1,
                           shuffle=False, max_iter=5, tol=None, average=False)
    theirs.fit(X, y)
    np.testing.assert_allclose(ours.w, theirs.coef_[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.b, theirs.intercept_[0], rtol=1e-10, atol=1e-12)


def test_hinge_sgd_leaves_every_point_beyond_functional_margin_one():
    X, y = linearly_separable(30, 2, margin=0.1, seed=1)
    run = sgd(X, y, loss="hinge", learning_rate=0.5, max_epochs=1000)
    assert run.converged and functional_margins(run.w, run.b, X, y).min() > 1
    assert functional_margins(*(lambda r: (r.w, r.b))(train(X, y)), X, y).min() > 0


def test_sgd_refuses_unknown_losses_and_bad_rates():
    X, y = linearly_separable(5, 2, seed=0)
    with pytest.raises(ValueError, match="loss"):
        sgd(X, y, loss="squared")
    with pytest.raises(ValueError, match="learning_rate"):
        sgd(X, y, learning_rate=0.0)
