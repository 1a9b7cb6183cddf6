"""The NumPy two-layer perceptron: its gradients, and XOR."""

import numpy as np

from perceptron_course.datasets import xor
from perceptron_course.mlp import MLP, init_mlp, logistic_loss, loss_gradient, mlp_predict, train_mlp
from perceptron_course.theory import is_separable


def test_backpropagation_equals_finite_differences():
    X, y = xor(3, noise=0.3, seed=1)
    model = init_mlp(2, 3, seed=5)
    model = MLP(W=model.W, c=model.c + 0.1, v=model.v, d=0.2)
    grad = loss_gradient(model, X, y)
    step = 1e-6
    for name in ("W", "c", "v"):
        value = getattr(model, name)
        for index in np.ndindex(value.shape):
            bumped = [value.copy(), value.copy()]
            bumped[0][index] += step
            bumped[1][index] -= step
            losses = [logistic_loss(MLP(**{**model.__dict__, name: b}), X, y) for b in bumped]
            assert abs((losses[0] - losses[1]) / (2 * step) - getattr(grad, name)[index]) < 1e-7
    up, down = (logistic_loss(MLP(**{**model.__dict__, "d": model.d + s}), X, y) for s in (step, -step))
    assert abs((up - down) / (2 * step) - grad.d) < 1e-7


def test_a_hidden_layer_solves_xor_which_no_line_does():
    X, y = xor(10, noise=0.2, seed=0)
    assert not is_separable(X, y)
    model = train_mlp(X, y, n_hidden=4, seed=0)
    assert np.array_equal(mlp_predict(model, X), y)
    corners, labels = xor()
    assert np.array_equal(mlp_predict(model, corners), labels)


def test_training_lowers_the_loss_and_is_repeatable():
    X, y = xor(5, noise=0.2, seed=2)
    start = logistic_loss(init_mlp(2, 4, seed=3), X, y)
    trained = train_mlp(X, y, n_hidden=4, seed=3, n_steps=300)
    again = train_mlp(X, y, n_hidden=4, seed=3, n_steps=300)
    assert logistic_loss(trained, X, y) < start / 2
    assert np.array_equal(trained.W, again.W) and trained.d == again.d
