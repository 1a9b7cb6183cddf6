"""Perceptrons for more than two classes.

- one-vs-rest: one binary perceptron per class ``e`` (``e`` against the rest),
  prediction ``argmax_e (w_e·x + b_e)`` of the raw scores;
- the multiclass perceptron: one weight matrix ``W``, prediction ``argmax_e W[e]·x``,
  and on a mistake ``W[y] += x``, ``W[y_hat] -= x``.

Ties in an ``argmax`` go to the class listed first in ``classes`` (NumPy's ``argmax``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_class_labels, check_points, check_positive_int, check_rule
from .geometry import augment
from .perceptron import Seed, _frozen, epoch_orders, mistakes

#: Rows scored together in one matrix product by ``train_one_vs_rest``.
BLOCK_ROWS = 32


@dataclass(frozen=True)
class LinearMulticlass:
    """A trained multiclass linear model.

    Attributes
    ----------
    classes : ndarray, shape (K,)
        The labels, sorted; row ``e`` of ``W`` scores ``classes[e]``.
    W : ndarray, shape (K, d)
    b : ndarray, shape (K,)
        Zeros when trained without bias.
    n_mistakes : ndarray of int, shape (K,) for one-vs-rest, or int
        Updates made by each binary perceptron, or by the multiclass perceptron.
    epochs : ndarray of int, shape (K,), or int
        Passes each binary perceptron needed (one-vs-rest), or passes made.
    converged : ndarray of bool, shape (K,), or bool
    """

    classes: np.ndarray
    W: np.ndarray
    b: np.ndarray
    n_mistakes: np.ndarray | int
    epochs: np.ndarray | int
    converged: np.ndarray | bool


def decision_function(model: LinearMulticlass, X) -> np.ndarray:
    """Raw scores ``W x + b`` of every row; shape (n, K)."""
    points = check_points(X)
    if points.shape[1] != model.W.shape[1]:
        raise ValueError(f"X has {points.shape[1]} features; the model was trained on {model.W.shape[1]}")
    return points @ model.W.T + model.b


def predict_multiclass(model: LinearMulticlass, X) -> np.ndarray:
    """``classes[argmax_e score_e(x)]`` for every row; ties go to the first class. Shape (n,)."""
    return model.classes[np.argmax(decision_function(model, X), axis=1)]


def _prepare(X, y, bias: bool, rule: str, max_epochs: int):
    points = check_points(X)
    labels = check_class_labels(y, points.shape[0])
    check_rule(rule)
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    classes, class_index = np.unique(labels, return_inverse=True)
    data = augment(points) if bias else points
    return data, classes, class_index, max_epochs


def _split_bias(W_aug: np.ndarray, bias: bool) -> tuple[np.ndarray, np.ndarray]:
    if bias:
        return _frozen(W_aug[:, 1:].copy()), _frozen(W_aug[:, 0].copy())
    return _frozen(W_aug), _frozen(np.zeros(len(W_aug)))


def train_one_vs_rest(
    X,
    y,
    *,
    bias: bool = True,
    rule: str = "margin",
    max_epochs: int = 1000,
    shuffle: bool = False,
    seed: Seed = None,
) -> LinearMulticlass:
    """One binary perceptron per class (that class ``+1``, the rest ``-1``), all in one pass.

    Every row is scored by all ``K`` perceptrons at once and each one that errs
    (see ``rule``) updates, so the result is that of ``K`` separate calls of
    ``perceptron.train`` with the same arguments (bit for bit whenever no score
    lies within rounding error of 0, e.g. always on integer data). A perceptron
    that has had a clean pass makes no further mistakes in any order, so the
    passes go on until all ``K`` are clean or ``max_epochs`` is reached.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        Any labels with at least two classes.
    bias, rule, max_epochs, shuffle, seed
        As in ``perceptron.train``.

    Returns
    -------
    LinearMulticlass
        With per-class ``n_mistakes``, ``epochs`` and ``converged``.
    """
    data, classes, class_index, max_epochs = _prepare(X, y, bias, rule, max_epochs)
    n_classes = len(classes)
    targets = np.where(class_index[:, None] == np.arange(n_classes), 1, -1)  # (n, K) of -1/+1
    W = np.zeros((n_classes, data.shape[1]))
    n_mistakes = np.zeros(n_classes, dtype=int)
    epochs_needed = np.full(n_classes, max_epochs)
    converged = np.zeros(n_classes, dtype=bool)

    for epoch, order in enumerate(epoch_orders(len(data), max_epochs, shuffle, seed), start=1):
        mistakes_this_epoch = np.zeros(n_classes, dtype=int)
        start = 0
        while start < len(order):
            # Score a block of upcoming rows at once: until the first row on which some
            # class errs, no weight changes, so those rows need nothing more.
            block = order[start : start + BLOCK_ROWS]
            erring = mistakes(data[block] @ W.T, targets[block], rule)  # (rows, K)
            rows_with_mistakes = np.flatnonzero(erring.any(axis=1))
            if len(rows_with_mistakes) == 0:
                start += len(block)
                continue
            first = rows_with_mistakes[0]
            i, classes_erring = block[first], erring[first]
            W[classes_erring] += targets[i, classes_erring, None] * data[i]
            mistakes_this_epoch += classes_erring
            start += first + 1
        newly_clean = (mistakes_this_epoch == 0) & ~converged
        epochs_needed[newly_clean] = epoch
        converged |= newly_clean
        n_mistakes += mistakes_this_epoch
        if converged.all():
            break

    W_out, b_out = _split_bias(W, bias)
    return LinearMulticlass(classes, W_out, b_out, _frozen(n_mistakes), _frozen(epochs_needed), _frozen(converged))


def train_multiclass(
    X,
    y,
    *,
    bias: bool = True,
    rule: str = "margin",
    max_epochs: int = 1000,
    shuffle: bool = False,
    seed: Seed = None,
) -> LinearMulticlass:
    """The single-matrix multiclass perceptron (Crammer & Singer's additive update).

    For a row ``x`` of class ``t`` with scores ``s = W x``:

    - ``rule="margin"`` (default): a mistake iff ``s[t] <= max_{e != t} s[e]``,
      the rival being the highest-scoring other class (first among ties);
    - ``rule="sign"``: a mistake iff the prediction ``argmax_e s[e]`` (first among
      ties) is not ``t``, the rival being that prediction.

    On a mistake ``W[t] += x`` and ``W[rival] -= x``. As in the binary case the
    rules differ only on ties, and from ``W = 0`` only the ``"margin"`` rule
    updates on the first row of class 0.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,), at least two classes
    bias, max_epochs, shuffle, seed
        As in ``perceptron.train``.
    rule : {"margin", "sign"}

    Returns
    -------
    LinearMulticlass
    """
    data, classes, class_index, max_epochs = _prepare(X, y, bias, rule, max_epochs)
    W = np.zeros((len(classes), data.shape[1]))
    n_mistakes, epoch, converged = 0, 0, False
    for epoch, order in enumerate(epoch_orders(len(data), max_epochs, shuffle, seed), start=1):
        mistakes_this_epoch = 0
        for i in order:
            scores = W @ data[i]
            true = class_index[i]
            if rule == "margin":
                others = scores.copy()
                others[true] = -np.inf
                rival = int(np.argmax(others))
                mistake = scores[true] <= scores[rival]
            else:
                rival = int(np.argmax(scores))
                mistake = rival != true
            if mistake:
                W[true] += data[i]
                W[rival] -= data[i]
                mistakes_this_epoch += 1
        n_mistakes += mistakes_this_epoch
        if mistakes_this_epoch == 0:
            converged = True
            break
    W_out, b_out = _split_bias(W, bias)
    return LinearMulticlass(classes, W_out, b_out, n_mistakes, epoch, converged)


def kesler_points(X, y, *, bias: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kesler's construction: the multiclass problem as one binary problem through the origin.

    A point ``x`` of class ``t`` (augmented to ``(1, x)`` when ``bias=True``) gives ``K - 1`` points
    of ``R^(K d)``, one per rival ``r != t``: ``x`` in block ``t``, ``-x`` in block ``r``, zeros
    elsewhere, all labelled ``+1``. For the stacked weights ``vec(W)`` (the rows of ``W`` one after
    the other), ``vec(W)·z = s_t - s_r``: the point is right iff class ``t`` beats ``r``, and the
    multiclass update ``W_t += x, W_r -= x`` is the binary update ``vec(W) += z``. So the multiclass
    perceptron is a perceptron on these points, and the convergence theorem bounds its mistakes by
    ``(R_K / gamma_K) ** 2``, with ``R_K = sqrt(2) max ||x||`` and ``gamma_K`` their margin.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,), at least two classes
    bias : bool
        Augment the points first, as ``train_multiclass`` does.

    Returns
    -------
    Z : ndarray, shape (n (K - 1), K d'), with d' = d + 1 when ``bias`` else d
        The Kesler points (labels all +1).
    point : ndarray of int, shape (n (K - 1),)
        The row of ``X`` each one comes from.
    rival : ndarray of int, shape (n (K - 1),)
        The index (in the sorted classes) of the rival class of each one.
    """
    points = check_points(X)
    labels = check_class_labels(y, points.shape[0])
    _, class_index = np.unique(labels, return_inverse=True)
    data = augment(points) if bias else points
    n, width = data.shape
    n_classes = int(class_index.max()) + 1
    rows, point, rival = [], [], []
    for i in range(n):
        for r in range(n_classes):
            if r == class_index[i]:
                continue
            z = np.zeros((n_classes, width))
            z[class_index[i]] = data[i]
            z[r] = -data[i]
            rows.append(z.ravel())
            point.append(i)
            rival.append(r)
    return np.array(rows), np.array(point, dtype=int), np.array(rival, dtype=int)
