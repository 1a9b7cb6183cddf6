"""A two-layer perceptron (one hidden layer) in plain NumPy: the road from the perceptron to neural networks.

``f(x) = v·tanh(W x + c) + d``, predicted label ``sign(f(x))`` with ``sign(0) = +1``.
Trained by full-batch gradient descent on the logistic loss ``log(1 + exp(-y f(x)))``
(a smooth cousin of the perceptron criterion), with gradients by backpropagation.
Small on purpose: enough to solve XOR, short enough to read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_binary_labels, check_points, check_positive_int
from .perceptron import sign


@dataclass(frozen=True)
class MLP:
    """Weights of ``f(x) = v·tanh(W x + c) + d``.

    Attributes
    ----------
    W : ndarray, shape (h, d)
    c : ndarray, shape (h,)
    v : ndarray, shape (h,)
    d : float
    """

    W: np.ndarray
    c: np.ndarray
    v: np.ndarray
    d: float


def init_mlp(n_features: int, n_hidden: int, seed: int | np.random.Generator | None = 0) -> MLP:
    """Small random weights (standard normal scaled by ``1/sqrt(fan-in)``), zero biases."""
    rng = np.random.default_rng(seed)
    return MLP(
        W=rng.normal(size=(n_hidden, n_features)) / np.sqrt(n_features),
        c=np.zeros(n_hidden),
        v=rng.normal(size=n_hidden) / np.sqrt(n_hidden),
        d=0.0,
    )


def mlp_decision_function(model: MLP, X) -> np.ndarray:
    """Scores ``f(x)`` of every row of ``X``; shape (n,)."""
    return np.tanh(check_points(X) @ model.W.T + model.c) @ model.v + model.d


def mlp_predict(model: MLP, X) -> np.ndarray:
    """Labels ``sign(f(x))`` with ``sign(0) = +1``; int array of shape (n,)."""
    return sign(mlp_decision_function(model, X))


def logistic_loss(model: MLP, X, y) -> float:
    """Mean of ``log(1 + exp(-y f(x)))`` over the rows."""
    labels = check_binary_labels(y, check_points(X).shape[0])
    return float(np.mean(np.logaddexp(0.0, -labels * mlp_decision_function(model, X))))


def loss_gradient(model: MLP, X, y) -> MLP:
    """The gradient of ``logistic_loss`` with respect to every weight, by backpropagation.

    Returns
    -------
    MLP
        The partial derivatives, laid out like the weights.
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    hidden = np.tanh(points @ model.W.T + model.c)  # (n, h)
    scores = hidden @ model.v + model.d
    # d/df log(1 + exp(-y f)) = -y sigmoid(-y f), written with tanh to stay finite.
    d_scores = -labels * 0.5 * (1 - np.tanh(labels * scores / 2)) / len(labels)
    d_hidden = np.outer(d_scores, model.v) * (1 - hidden**2)  # (n, h)
    return MLP(W=d_hidden.T @ points, c=d_hidden.sum(axis=0), v=hidden.T @ d_scores, d=float(d_scores.sum()))


def train_mlp(
    X,
    y,
    *,
    n_hidden: int = 4,
    learning_rate: float = 0.5,
    n_steps: int = 2000,
    seed: int | np.random.Generator | None = 0,
) -> MLP:
    """Full-batch gradient descent on the logistic loss from ``init_mlp(d, n_hidden, seed)``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    n_hidden : int >= 1
    learning_rate : float > 0
    n_steps : int >= 1
    seed : int, numpy.random.Generator or None

    Returns
    -------
    MLP
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    model = init_mlp(points.shape[1], check_positive_int(n_hidden, "n_hidden"), seed)
    for _ in range(check_positive_int(n_steps, "n_steps")):
        grad = loss_gradient(model, points, labels)
        model = MLP(
            W=model.W - learning_rate * grad.W,
            c=model.c - learning_rate * grad.c,
            v=model.v - learning_rate * grad.v,
            d=model.d - learning_rate * grad.d,
        )
    return model
