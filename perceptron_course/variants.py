"""Perceptrons that generalise better than the last iterate.

- voted and averaged perceptron (Freund & Schapire 1999),
- pocket perceptron with ratchet (Gallant 1990),
- kernel (dual) perceptron, whose ``alpha_i`` count the mistakes made on point ``i``.

The voted, averaged and pocket perceptrons read everything they need off one
ordinary ``train`` run: which weights existed and for how many visits each survived.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._validation import (
    check_binary_labels,
    check_points,
    check_positive_int,
    check_rule,
)
from .geometry import augment
from .perceptron import PerceptronRun, Seed, _frozen, epoch_orders, is_mistake, mistakes, sign, train


# --------------------------------------------------------------------------- voted and averaged


@dataclass(frozen=True)
class VotedPerceptron:
    """The weight vectors of a run and how many visits each one survived.

    Attributes
    ----------
    vectors : ndarray, shape (m, d')
        Every weight vector the run held, the zero start first; augmented
        ``(b, w)`` when ``bias`` is true.
    counts : ndarray of int, shape (m,)
        Visits after which each vector was the current one (Freund & Schapire's ``c_k``);
        they add up to ``epochs * n``.
    bias : bool
    epochs : int
        Passes over the data (always the requested number).
    """

    vectors: np.ndarray
    counts: np.ndarray
    bias: bool
    epochs: int


def survival_counts(run: PerceptronRun, epochs: int) -> np.ndarray:
    """How many visits each of ``run``'s weight vectors stayed current.

    Vector ``k`` becomes current at the visit of update ``k`` and stays until the
    next update; the last one stays to the end of ``epochs`` passes (a converged
    run makes no further updates, so stopping early changes nothing).

    Returns
    -------
    ndarray of int, shape (n_mistakes + 1,)
    """
    boundaries = np.concatenate([[0], run.update_visits, [epochs * run.n_points]])
    return np.diff(boundaries)


def train_voted(
    X,
    y,
    *,
    bias: bool = True,
    rule: str = "margin",
    epochs: int = 10,
    shuffle: bool = False,
    seed: Seed = None,
) -> VotedPerceptron:
    """Run the perceptron for ``epochs`` passes and keep every vector with its survival count.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    bias, rule, shuffle, seed
        As in ``perceptron.train``.
    epochs : int >= 1
        Exact number of passes (the vote needs a fixed budget).

    Returns
    -------
    VotedPerceptron
    """
    epochs = check_positive_int(epochs, "epochs")
    run = train(X, y, bias=bias, rule=rule, max_epochs=epochs, shuffle=shuffle, seed=seed)
    return VotedPerceptron(
        vectors=run.weight_history,
        counts=_frozen(survival_counts(run, epochs)),
        bias=bias,
        epochs=epochs,
    )


def _split(weights: np.ndarray, bias: bool) -> tuple[np.ndarray, float]:
    return (weights[1:], float(weights[0])) if bias else (weights, 0.0)


def _points_seen(model, X) -> np.ndarray:
    points = check_points(X)
    return augment(points) if model.bias else points


def averaged_weights(model: VotedPerceptron) -> tuple[np.ndarray, float]:
    """The averaged perceptron: the mean of the current weights over every visit.

    Returns
    -------
    w : ndarray, shape (d,)
    b : float
        ``sum_k c_k (w_k, b_k) / sum_k c_k``.
    """
    average = model.counts @ model.vectors / model.counts.sum()
    return _split(average, model.bias)


def predict_voted(model: VotedPerceptron, X) -> np.ndarray:
    """Voted prediction ``sign(sum_k c_k sign(w_k·x + b_k))``, ``sign(0) = +1``.

    Returns
    -------
    ndarray of int, shape (n,)
    """
    votes = sign(_points_seen(model, X) @ model.vectors.T)
    return sign(votes @ model.counts)


# --------------------------------------------------------------------------- pocket


@dataclass(frozen=True)
class PocketRun:
    """The pocket perceptron's answer: the best weights seen, not the last ones.

    Attributes
    ----------
    w : ndarray, shape (d,)
    b : float
    n_correct : int
        Training points the pocket weights get right (under the run's rule).
    run : PerceptronRun
        The ordinary run the pocket watched.
    """

    w: np.ndarray
    b: float
    n_correct: int
    run: PerceptronRun


def train_pocket(
    X,
    y,
    *,
    bias: bool = True,
    rule: str = "margin",
    max_epochs: int = 100,
    shuffle: bool = True,
    seed: Seed = 0,
) -> PocketRun:
    """Pocket algorithm with ratchet (Gallant 1990).

    Along an ordinary run, keep in the pocket the weights with the longest streak
    of consecutive correctly classified visits; the ratchet replaces the pocket
    only if the newcomer also gets strictly more training points right.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    bias, rule, max_epochs, shuffle, seed
        As in ``perceptron.train`` (shuffling is on by default, as Gallant draws
        points at random).

    Returns
    -------
    PocketRun
    """
    run = train(X, y, bias=bias, rule=rule, max_epochs=max_epochs, shuffle=shuffle, seed=seed)
    data = _points_seen(run, X)
    labels = np.asarray(y)
    # Vector k was created by a mistake, so its correct streak is one less than its survival.
    streaks = survival_counts(run, run.epochs) - (np.arange(run.n_mistakes + 1) > 0)
    pocket, pocket_streak, pocket_correct = 0, -1, -1
    for k, streak in enumerate(streaks):
        if streak > pocket_streak:
            correct = int(np.sum(~mistakes(data @ run.weight_history[k], labels, rule)))
            if correct > pocket_correct:
                pocket, pocket_streak, pocket_correct = k, int(streak), correct
    w, b = _split(run.weight_history[pocket].copy(), bias)
    return PocketRun(w=_frozen(w), b=b, n_correct=pocket_correct, run=run)


# --------------------------------------------------------------------------- kernel (dual)

Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]


def linear_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``K[i, j] = a_i·b_j``; shapes (n, d), (m, d) -> (n, m)."""
    return A @ B.T


def polynomial_kernel(A: np.ndarray, B: np.ndarray, degree: int = 2, coef0: float = 1.0) -> np.ndarray:
    """``K[i, j] = (a_i·b_j + coef0) ** degree``; shapes (n, d), (m, d) -> (n, m)."""
    return (A @ B.T + coef0) ** degree


def rbf_kernel(A: np.ndarray, B: np.ndarray, gamma: float = 1.0) -> np.ndarray:
    """``K[i, j] = exp(-gamma ||a_i - b_j||^2)``; shapes (n, d), (m, d) -> (n, m)."""
    squared = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(squared, 0.0))


@dataclass(frozen=True)
class KernelRun:
    """A trained kernel perceptron.

    Attributes
    ----------
    alpha : ndarray of int, shape (n,)
        Mistakes made on each training point (the dual counts).
    X_train : ndarray, shape (n, d)
    y_train : ndarray of int, shape (n,)
    kernel : callable
        ``kernel(A, B) -> (len(A), len(B))``.
    bias : bool
        Score ``sum_i alpha_i y_i (K(x_i, x) + 1)``: a bias ``b = sum_i alpha_i y_i``.
    n_mistakes, epochs, converged
        As in ``PerceptronRun``.
    """

    alpha: np.ndarray
    X_train: np.ndarray
    y_train: np.ndarray
    kernel: Kernel
    bias: bool
    n_mistakes: int
    epochs: int
    converged: bool

    @property
    def b(self) -> float:
        """The bias ``sum_i alpha_i y_i`` (0.0 without bias)."""
        return float(self.alpha @ self.y_train) if self.bias else 0.0


def _gram(kernel: Kernel, A: np.ndarray, B: np.ndarray, bias: bool) -> np.ndarray:
    return kernel(A, B) + (1.0 if bias else 0.0)


def train_kernel(
    X,
    y,
    *,
    kernel: Kernel = polynomial_kernel,
    bias: bool = True,
    rule: str = "margin",
    max_epochs: int = 1000,
    shuffle: bool = False,
    seed: Seed = None,
) -> KernelRun:
    """The kernel (dual) perceptron: the perceptron with ``w = sum_i alpha_i y_i phi(x_i)``.

    The score of point ``j`` is ``sum_i alpha_i y_i K(x_i, x_j)`` (plus ``b``); a
    mistake (see ``rule``) on point ``j`` adds one to ``alpha_j``. With the linear
    kernel this is exactly ``perceptron.train``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    kernel : callable
        ``kernel(A, B) -> ndarray (len(A), len(B))``, e.g. ``linear_kernel``,
        ``polynomial_kernel`` or ``functools.partial(rbf_kernel, gamma=0.5)``.
    bias, rule, max_epochs, shuffle, seed
        As in ``perceptron.train``.

    Returns
    -------
    KernelRun
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    check_rule(rule)
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    gram = _gram(kernel, points, points, bias)
    alpha = np.zeros(len(points), dtype=int)
    scores = np.zeros(len(points))  # scores[j] = sum_i alpha_i y_i gram[i, j], kept up to date
    epoch, converged = 0, False
    for epoch, order in enumerate(epoch_orders(len(points), max_epochs, shuffle, seed), start=1):
        mistakes_this_epoch = 0
        for j in order:
            if is_mistake(scores[j], labels[j], rule):
                alpha[j] += 1
                scores += labels[j] * gram[j]
                mistakes_this_epoch += 1
        if mistakes_this_epoch == 0:
            converged = True
            break
    return KernelRun(
        alpha=_frozen(alpha),
        X_train=_frozen(points.copy()),
        y_train=_frozen(labels.copy()),
        kernel=kernel,
        bias=bias,
        n_mistakes=int(alpha.sum()),
        epochs=epoch,
        converged=converged,
    )


def kernel_decision_function(model: KernelRun, X) -> np.ndarray:
    """Scores ``sum_i alpha_i y_i K(x_i, x)`` (plus ``b``) of every row of ``X``; shape (n,)."""
    points = check_points(X)
    return _gram(model.kernel, points, model.X_train, model.bias) @ (model.alpha * model.y_train)


def kernel_predict(model: KernelRun, X) -> np.ndarray:
    """Labels ``sign(score)`` with ``sign(0) = +1``; int array of shape (n,)."""
    return sign(kernel_decision_function(model, X))
