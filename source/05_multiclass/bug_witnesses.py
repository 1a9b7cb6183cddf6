"""Bug witnesses of 05_multiclass: for each graded function, common bugs and correct implementations written otherwise.

Written from the docstrings of this assignment's source notebook (what each stub promises), not from its checks: each
bug breaks one promise a student can break by accident. The course's tests (``tests/course/test_bug_witnesses.py``)
judge each with the function's hidden check over many secrets: every bug must fail on every draw, every correct one
must pass on every draw. This file is optional, like any part's witnesses (docs/adding-a-part.md); it stays here with
the check, never released (``nbgrader_config.py``'s ``CourseDirectory.ignore``) and never bundled.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from course_grader.checks_api import course_module

_caching = course_module(__file__, "caching_witnesses")


def _float(X) -> np.ndarray:
    return np.asarray(X, dtype=float)


def _aug(X) -> np.ndarray:
    X = _float(X)
    return np.hstack([np.ones((X.shape[0], 1)), X])


def _ovr(X, y, max_epochs, *, classes=np.unique, strict=False, bias=True, epochs=lambda cap: cap):
    X, y = _float(X), np.asarray(y)
    labels = classes(y)
    W, b = np.zeros((len(labels), X.shape[1])), np.zeros(len(labels))
    for k, label in enumerate(labels):
        targets = np.where(y == label, 1, -1)
        for _ in range(epochs(max_epochs)):
            mistakes = 0
            for x_i, t in zip(X, targets):
                margin = t * (W[k] @ x_i + b[k])
                if margin < 0 if strict else margin <= 0:
                    W[k] += t * x_i
                    b[k] += t if bias else 0
                    mistakes += 1
            if not mistakes:
                break
    return W, b


def _in_order_of_appearance(y):
    return np.array(list(dict.fromkeys(np.asarray(y).tolist())))


OVR_TRAIN_BUGS = {
    "classes in order of appearance": lambda X, y, max_epochs: _ovr(X, y, max_epochs, classes=_in_order_of_appearance),
    "strict < 0": lambda X, y, max_epochs: _ovr(X, y, max_epochs, strict=True),
    "no bias": lambda X, y, max_epochs: _ovr(X, y, max_epochs, bias=False),
    "one epoch too few": lambda X, y, max_epochs: _ovr(X, y, max_epochs, epochs=lambda c: c - 1),
    "one epoch too many": lambda X, y, max_epochs: _ovr(X, y, max_epochs, epochs=lambda c: c + 1),
    "arrays only (y == label on a list)": lambda X, y, max_epochs: _ovr(X, y, max_epochs) if isinstance(y, np.ndarray) else None,
    "lists, not ndarrays": lambda X, y, max_epochs: tuple(part.tolist() for part in _ovr(X, y, max_epochs)),
}


def _ovr_shared_epochs(X, y, max_epochs):
    X, y = _float(X), np.asarray(y)
    classes = np.unique(y)
    T = np.where(y[None, :] == classes[:, None], 1, -1)
    W, b = np.zeros((len(classes), X.shape[1])), np.zeros(len(classes))
    for _ in range(max_epochs):
        clean = True
        for k in range(len(classes)):
            for x_i, t in zip(X, T[k]):
                if t * (W[k] @ x_i + b[k]) <= 0:
                    W[k], b[k], clean = W[k] + t * x_i, b[k] + t, False
        if clean:
            break
    return W, b


OVR_TRAIN_CORRECT = {
    "every class in each epoch": _ovr_shared_epochs,
}


def _scores_k(W, b, X):
    return _float(X) @ _float(W).T + _float(b)


OVR_PREDICT_BUGS = {
    "the first class with a positive score": lambda W, b, classes, X: np.asarray(classes)[np.argmax(_scores_k(W, b, X) >= 0, axis=1)],
    "argmin": lambda W, b, classes, X: np.asarray(classes)[np.argmin(_scores_k(W, b, X), axis=1)],
    "ties to the last class": lambda W, b, classes, X: np.asarray(classes)[
        len(classes) - 1 - np.argmax(_scores_k(W, b, X)[:, ::-1], axis=1)],
    "the bias forgotten": lambda W, b, classes, X: np.asarray(classes)[np.argmax(_float(X) @ _float(W).T, axis=1)],
    "a cache keyed by the number of classes": _caching.cached(lambda W, b, classes, X: np.asarray(classes)[np.argmax(_scores_k(W, b, X), axis=1)],
                                                      lambda W, b, classes, X: len(classes)),
    "indices, not classes": lambda W, b, classes, X: np.argmax(_scores_k(W, b, X), axis=1),
    "classes sorted first": lambda W, b, classes, X: np.sort(np.asarray(classes))[np.argmax(_scores_k(W, b, X), axis=1)],
    "a list, not an ndarray": lambda W, b, classes, X: [classes[int(k)] for k in np.argmax(_scores_k(W, b, X), axis=1)],
}
OVR_PREDICT_CORRECT = {
    "classes indexed by the argmax": lambda W, b, classes, X: np.asarray(classes)[np.argmax(_scores_k(W, b, X), axis=1)],
}


def _multiclass(X, y, max_epochs, *, rule="rival", bias=True, epochs=lambda cap: cap, rival_row=True):
    X = _float(X)
    classes, index = np.unique(y, return_inverse=True)
    W, b = np.zeros((len(classes), X.shape[1])), np.zeros(len(classes))
    for _ in range(epochs(max_epochs)):
        mistakes = 0
        for x_i, t in zip(X, index):
            scores = W @ x_i + b
            if rule == "rival":
                others = scores.copy()
                others[t] = -np.inf
                rival = int(np.argmax(others))
                wrong = scores[t] <= scores[rival]
            else:
                rival = int(np.argmax(scores))
                wrong = rival != t
            if wrong:
                W[t] += x_i
                b[t] += 1 if bias else 0
                if rival_row:
                    W[rival] -= x_i
                    b[rival] -= 1 if bias else 0
                mistakes += 1
        if not mistakes:
            break
    return W, b


MULTICLASS_TRAIN_BUGS = {
    "a mistake only when the argmax is another class (ties are not mistakes)": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, rule="argmax"),
    "no bias": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, bias=False),
    "one epoch too few": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, epochs=lambda c: c - 1),
    "one epoch too many": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, epochs=lambda c: c + 1),
    "the rival row never lowered": lambda X, y, max_epochs: _multiclass(X, y, max_epochs, rival_row=False),
}
MULTICLASS_TRAIN_CORRECT = {
    "never stopping early": lambda X, y, max_epochs: _multiclass(X, y, max_epochs),
    "W and b returned as views of one matrix": lambda X, y, max_epochs: _as_views(*_multiclass(X, y, max_epochs)),
}


def _kesler(X, y, *, order=None, augment="front", rival_sign=-1.0, by_rival=False):
    points, labels = _float(X), np.asarray(y)
    classes = np.unique(labels) if order is None else order(labels)
    index = [int(np.flatnonzero(classes == label)[0]) for label in labels]
    ones = np.ones((points.shape[0], 1))
    data = {"front": lambda: np.hstack([ones, points]), "end": lambda: np.hstack([points, ones]),
            "none": lambda: points}[augment]()
    K, width = len(classes), data.shape[1]
    pairs = [(i, r) for i in range(len(data)) for r in range(K) if r != index[i]]
    if by_rival:
        pairs.sort(key=lambda pair: pair[1])
    rows = []
    for i, r in pairs:
        z = np.zeros((K, width))
        z[index[i]] = data[i]
        z[r] = rival_sign * data[i]
        rows.append(z.ravel())
    return np.array(rows)


def _first_seen(labels):
    return np.array(list(dict.fromkeys(labels.tolist())))


KESLER_POINTS_BUGS = {
    "not augmented (no 1 in front)": lambda X, y: _kesler(X, y, augment="none"),
    "not augmented when the first column is already all ones":
        lambda X, y: _kesler(X, y, augment="none" if np.all(_float(X)[:, 0] == 1.0) else "front"),
    "the 1 at the end of each block": lambda X, y: _kesler(X, y, augment="end"),
    "the rival's block not negated": lambda X, y: _kesler(X, y, rival_sign=1.0),
    "classes in the order labels appear, not sorted": lambda X, y: _kesler(X, y, order=_first_seen),
    "rows grouped by rival, not by point": lambda X, y: _kesler(X, y, by_rival=True),
    "np.kron of one-hot differences, as lists, not an ndarray": lambda X, y: _kronecker(X, y),
}


def _kronecker(X, y):
    classes, index = np.unique(y, return_inverse=True)
    one_hot = np.eye(len(classes))
    return [np.kron(one_hot[t] - one_hot[r], np.concatenate([[1.0], x])).tolist()
            for x, t in zip(_float(X), index) for r in range(len(classes)) if r != t]


KESLER_POINTS_CORRECT = {
    "np.kron of one-hot differences": lambda X, y: np.array(_kronecker(X, y)),
}


def _as_views(W, b):
    """W and b as views into one matrix [W | b] (neither owns its data)."""
    stacked = np.column_stack([W, b])
    return stacked[:, :-1], stacked[:, -1]


#: Each graded function of this assignment that has witnesses: (its common bugs, correct implementations written otherwise).
WITNESSES: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}

