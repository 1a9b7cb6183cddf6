"""The perceptron: prediction and the online training loop.

``train`` is the reference every notebook and hidden test compares against. Its
loop over the rows is written out on purpose: it is the algorithm being taught.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ._validation import check_binary_labels, check_points, check_positive_int, check_rule
from .geometry import augment, scores

Seed = int | np.random.Generator | None


def sign(score: np.ndarray) -> np.ndarray:
    """Elementwise sign with ``sign(0) = +1``, as an int array of -1/+1."""
    return np.where(np.asarray(score) >= 0, 1, -1)


def predict(w, b: float, X) -> np.ndarray:
    """Predicted labels ``sign(w·x + b)`` with ``sign(0) = +1``.

    Parameters
    ----------
    w : array_like, shape (d,)
    b : float
    X : array_like, shape (n, d)

    Returns
    -------
    ndarray of int, shape (n,)
        Every entry is -1 or +1.
    """
    return sign(scores(w, b, X))


def mistakes(scores, labels, rule: str) -> np.ndarray:
    """Vectorised ``is_mistake`` on arrays of the same shape; a boolean array of that shape."""
    if rule == "margin":
        return labels * scores <= 0
    return (scores >= 0) != (labels > 0)


def is_mistake(score: float, label: int, rule: str) -> bool:
    """Whether a point with this raw score and label triggers an update.

    ``"margin"``: ``label * score <= 0`` (the convergence proof's rule, scikit-learn's).
    ``"sign"``: ``sign(score) != label`` with ``sign(0) = +1`` (the worked examples').
    They differ only on a score of exactly 0 with label +1.
    """
    if rule == "margin":
        return label * score <= 0
    return (1 if score >= 0 else -1) != label


class Step(NamedTuple):
    """One visit of one point during training."""

    epoch: int  #: 1-based pass number
    index: int  #: row of X visited
    score: float  #: ``w·x + b`` before any update
    mistake: bool  #: whether the point triggered an update


def epoch_orders(n_points: int, max_epochs: int, shuffle: bool, seed: Seed):
    """Yield the order of row indices for each epoch.

    Without shuffling, every epoch visits ``0 .. n-1``. With shuffling, each epoch
    draws a fresh permutation from ``numpy.random.default_rng(seed)``; global
    random state is never touched.
    """
    rng = np.random.default_rng(seed) if shuffle else None
    in_order = np.arange(n_points)
    for _ in range(max_epochs):
        yield rng.permutation(n_points) if shuffle else in_order


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class PerceptronRun:
    """Everything a training run did. Arrays are read-only.

    Attributes
    ----------
    w : ndarray, shape (d,)
        Final weights.
    b : float
        Final bias (0.0 when trained with ``bias=False``).
    n_mistakes : int
        Number of updates made.
    epochs : int
        Number of passes made over the data.
    converged : bool
        Whether the last pass made no mistake.
    update_indices : ndarray of int, shape (n_mistakes,)
        Row of ``X`` that triggered each update, in order.
    update_epochs : ndarray of int, shape (n_mistakes,)
        Pass (1-based) in which each update happened.
    update_visits : ndarray of int, shape (n_mistakes,)
        Visit counter (0-based, across passes) at which each update happened;
        the voted and pocket perceptrons read survival times from it.
    n_points : int
        Number of rows trained on (visits per pass).
    steps : tuple of Step
        Every visit, only when trained with ``record_steps=True``; else empty.
    """

    w: np.ndarray
    b: float
    n_mistakes: int
    epochs: int
    converged: bool
    update_indices: np.ndarray
    update_epochs: np.ndarray
    update_visits: np.ndarray
    n_points: int
    bias: bool
    rule: str
    _increments: np.ndarray = field(repr=False)
    steps: tuple[Step, ...] = field(default=(), repr=False)

    @cached_property
    def weight_history(self) -> np.ndarray:
        """Augmented weights ``(b, w)`` (or ``w`` without bias) after each update.

        Shape ``(n_mistakes + 1, d')``; row 0 is the zero start. The running sum
        adds the same increments in the same order as training did, so the
        rows are bit-for-bit the weights the loop held.
        """
        start = np.zeros((1, self._increments.shape[1]))
        return _frozen(np.cumsum(np.vstack([start, self._increments]), axis=0))

    def weights_after(self, epochs: int) -> tuple[np.ndarray, float]:
        """``(w, b)`` at the end of pass ``epochs``, or of training if it converged sooner (copies).

        Exactly what ``train`` returns with ``max_epochs=epochs`` and otherwise the same
        arguments: the first passes of a longer run are that run.

        Raises
        ------
        ValueError
            If ``epochs`` goes past the last pass of a run that did not converge (not known).
        """
        epochs = check_positive_int(epochs, "epochs")
        if epochs > self.epochs and not self.converged:
            raise ValueError(f"the run stopped after {self.epochs} passes without converging; pass {epochs} is not known")
        return self._w_b(self.weight_history[int(np.searchsorted(self.update_epochs, epochs, side="right"))])

    @property
    def history(self) -> list[tuple[np.ndarray, float]]:
        """``(w, b)`` pairs: the zero start, then the weights after every update (copies)."""
        return [self._w_b(row) for row in self.weight_history]

    def _w_b(self, row: np.ndarray) -> tuple[np.ndarray, float]:
        """A row of ``weight_history`` as ``(w, b)`` (copies; ``b`` is 0.0 without bias)."""
        return (row[1:].copy(), float(row[0])) if self.bias else (row.copy(), 0.0)


def train(
    X,
    y,
    *,
    bias: bool = True,
    rule: str = "margin",
    max_epochs: int = 1000,
    shuffle: bool = False,
    seed: Seed = None,
    record_steps: bool = False,
) -> PerceptronRun:
    """Train the online perceptron from ``w = 0, b = 0``.

    Each pass visits every row once; a point on which the current weights make a
    mistake (see ``rule``) triggers ``w <- w + y x`` and ``b <- b + y``. Training
    stops after a pass with no mistake or after ``max_epochs`` passes.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of -1/+1, shape (n,)
    bias : bool
        Learn ``b``. Exactly the run of ``bias=False`` on ``augment(X)``, with ``b == w_aug[0]``.
    rule : {"margin", "sign"}
        ``"margin"``: a mistake iff ``y (w·x + b) <= 0``. ``"sign"``: a mistake iff
        ``predict(w, b, x) != y``. They differ only on a score of exactly 0.
    max_epochs : int >= 1
        Cap on the number of passes: non-separable data stops here, unconverged.
    shuffle : bool
        Visit rows in a fresh random order each pass, drawn from ``seed``.
    seed : int, numpy.random.Generator or None
        Source of the permutations when ``shuffle=True``.
    record_steps : bool
        Keep every visit in ``run.steps`` (for traces of small examples).

    Returns
    -------
    PerceptronRun
    """
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    check_rule(rule)
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    data = augment(points) if bias else points

    rows = list(data)  # row views and Python ints, made once rather than at every visit
    label_of = labels.tolist()
    weights = np.zeros(data.shape[1])
    update_indices: list[int] = []
    update_epochs: list[int] = []
    update_visits: list[int] = []
    steps: list[Step] = []
    epoch, converged = 0, False

    for epoch, order in enumerate(epoch_orders(len(rows), max_epochs, shuffle, seed), start=1):
        mistakes_this_epoch = 0
        for position, i in enumerate(order.tolist()):
            score = float(rows[i] @ weights)
            mistake = is_mistake(score, label_of[i], rule)
            if record_steps:
                steps.append(Step(epoch, i, score, mistake))
            if mistake:
                weights = weights + label_of[i] * rows[i]
                update_indices.append(i)
                update_epochs.append(epoch)
                update_visits.append((epoch - 1) * len(rows) + position)
                mistakes_this_epoch += 1
        if mistakes_this_epoch == 0:
            converged = True
            break

    indices = np.array(update_indices, dtype=int)
    increments = labels[indices, None] * data[indices]
    return PerceptronRun(
        w=_frozen(weights[1:] if bias else weights),
        b=float(weights[0]) if bias else 0.0,
        n_mistakes=len(update_indices),
        epochs=epoch,
        converged=converged,
        update_indices=_frozen(indices),
        update_epochs=_frozen(np.array(update_epochs, dtype=int)),
        update_visits=_frozen(np.array(update_visits, dtype=int)),
        n_points=len(rows),
        bias=bias,
        rule=rule,
        _increments=_frozen(increments.reshape(len(indices), data.shape[1])),
        steps=tuple(steps),
    )


def accuracy(w, b: float, X, y) -> float:
    """Fraction of points that ``predict(w, b, X)`` labels correctly."""
    points = check_points(X)
    labels = check_binary_labels(y, points.shape[0])
    return float(np.mean(predict(w, b, points) == labels))
