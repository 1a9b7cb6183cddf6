"""Bug witnesses of 02_algorithm: for each graded function, common bugs and correct implementations written otherwise.

Written from the docstrings of this assignment's source notebook (what each stub promises), not from its checks: each
bug breaks one promise a student can break by accident. The course's tests (``tests/course/test_bug_witnesses.py``)
judge each with the function's hidden check over many secrets: every bug must fail on every draw, every correct one
must pass on every draw. This file is optional, like any part's witnesses (docs/adding-a-part.md); it stays here with
the check, never released (``nbgrader_config.py``'s ``CourseDirectory.ignore``) and never bundled.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def _float(X) -> np.ndarray:
    return np.asarray(X, dtype=float)


def _aug(X) -> np.ndarray:
    X = _float(X)
    return np.hstack([np.ones((X.shape[0], 1)), X])


def _step(w, b, x, y, *, mistake: Callable[[float], bool] = lambda margin: margin <= 0):
    w, x = _float(w), _float(x)
    if mistake(y * (w @ x + b)):
        return w + y * x, b + y, True
    return w.copy(), b, False


def _step_in_place(w, b, x, y):
    if y * (np.dot(w, x) + b) <= 0:
        w += y * x
        return w, b + y, True
    return w, b, False


PERCEPTRON_STEP_BUGS = {
    "strict < 0": lambda w, b, x, y: _step(w, b, x, y, mistake=lambda margin: margin < 0),
    "w changed in place (w += y x)": _step_in_place,
    "b never updated": lambda w, b, x, y: (lambda new: (new[0], b, new[2]))(_step(w, b, x, y)),
    "the sign rule (sign(0) = +1) instead of y (w·x + b) <= 0":
        lambda w, b, x, y: (lambda s: (_float(w) + y * _float(x), b + y, True) if (1 if s >= 0 else -1) != y
                            else (_float(w), b, False))(float(_float(w) @ _float(x) + b)),
    "mistake as 0/1": lambda w, b, x, y: (lambda new: (new[0], new[1], int(new[2])))(_step(w, b, x, y)),
    "updates with x only (w + x)": lambda w, b, x, y: (lambda new: (_float(w) + _float(x), b + y, True) if new[2] else new)(_step(w, b, x, y)),
    "the caller's w itself when nothing changes": lambda w, b, x, y: (lambda new: new if new[2] else (w, b, False))(_step(w, b, x, y)),
    "a list, not a tuple": lambda w, b, x, y: list(_step(w, b, x, y)),
    "a tolerance around 0 (np.isclose(margin, 0) is a mistake)": lambda w, b, x, y: _step(
        w, b, x, y, mistake=lambda margin: margin <= 0 or bool(np.isclose(margin, 0.0))),
    "b always a float (float(b + y)), an int b too": lambda w, b, x, y: (lambda new: (new[0], float(new[1]), new[2]))(
        _step(w, b, x, y)),
}
PERCEPTRON_STEP_CORRECT = {
    "np.bool_ and NumPy numbers (b + m y: a NumPy int for an int b)": lambda w, b, x, y: (
        lambda m: (_float(w) + m * y * _float(x), b + m * y, m))(np.bool_(y * (np.dot(w, x) + b) <= 0)),
}


def _train(X, y, max_epochs, *, epochs=lambda cap: cap, bias=True, strict=False, count_last_only=False,
           converged_rule="clean epoch", order=None, stop=True):
    """The online perceptron with one knob per bug."""
    X, y = _float(X), np.asarray(y)
    if order is not None:
        X, y = X[order(len(X))], y[order(len(X))]
    w, b, n_mistakes, ran = np.zeros(X.shape[1]), 0.0, 0, 0
    converged = False
    for _ in range(epochs(max_epochs)):
        ran += 1
        mistakes = 0
        for x_i, y_i in zip(X, y):
            margin = y_i * (w @ x_i + (b if bias else 0.0))
            if margin < 0 if strict else margin <= 0:
                w = w + y_i * x_i
                if bias:
                    b += y_i
                mistakes += 1
        n_mistakes = mistakes if count_last_only else n_mistakes + mistakes
        converged = mistakes == 0
        if converged and stop:
            break
    if converged_rule == "stopped before the cap":
        converged = ran < max_epochs
    return w, float(b), n_mistakes, converged


TRAIN_PERCEPTRON_BUGS = {
    "integer weights for integer input": lambda X, y, max_epochs: (lambda w, *rest: (w.astype(np.asarray(X).dtype), *rest))(
        *_train(X, y, max_epochs)),
    "one epoch too few": lambda X, y, max_epochs: _train(X, y, max_epochs, epochs=lambda c: c - 1),
    "one epoch too many": lambda X, y, max_epochs: _train(X, y, max_epochs, epochs=lambda c: c + 1),
    "converged only if it stopped before the cap": lambda X, y, max_epochs: _train(X, y, max_epochs, converged_rule="stopped before the cap"),
    "no bias": lambda X, y, max_epochs: _train(X, y, max_epochs, bias=False),
    "strict < 0": lambda X, y, max_epochs: _train(X, y, max_epochs, strict=True),
    "n_mistakes of the last epoch only": lambda X, y, max_epochs: _train(X, y, max_epochs, count_last_only=True),
    "rows shuffled": lambda X, y, max_epochs: _train(X, y, max_epochs, order=lambda n: np.random.default_rng(0).permutation(n)),
    "rows visited backwards": lambda X, y, max_epochs: _train(X, y, max_epochs, order=lambda n: np.arange(n)[::-1]),
    "arrays only (X.shape on a list)": lambda X, y, max_epochs: _train(X, y, max_epochs) if isinstance(X, np.ndarray) and X.shape else None,
    "b an int (a start of 0 plus integer labels)": lambda X, y, max_epochs: (lambda w, b, *rest: (w, int(b), *rest))(
        *_train(X, y, max_epochs)),
    "n_mistakes a NumPy int64 (a sum of a mistakes array)": lambda X, y, max_epochs: (lambda w, b, n, c: (w, b, np.int64(n), c))(
        *_train(X, y, max_epochs)),
}
TRAIN_PERCEPTRON_CORRECT = {
    "runs every epoch": lambda X, y, max_epochs: _train(X, y, max_epochs, stop=False),
    "augmented weights": lambda X, y, max_epochs: (lambda w: (w[1:], float(w[0]), *_train(_aug(X), y, max_epochs, bias=False)[2:]))(
        _train(_aug(X), y, max_epochs, bias=False)[0]),
}


def correct_train_perceptron(X, y, max_epochs):
    return _train(X, y, max_epochs)


def _dev_accuracy(X_train, y_train, X_dev, y_dev, cap, *, sign=lambda s: np.where(s >= 0, 1, -1), train=correct_train_perceptron):
    w, b, _, _ = train(X_train, y_train, cap)
    return float(np.mean(sign(_float(X_dev) @ w + b) == np.asarray(y_dev)))


def _choose(X_train, y_train, X_dev, y_dev, caps, *, order=sorted, better=lambda new, best: new > best, start=-1.0,
            sign=lambda s: np.where(s >= 0, 1, -1)):
    best_cap, best = None, start
    for cap in order(caps):
        accuracy = _dev_accuracy(X_train, y_train, X_dev, y_dev, cap, sign=sign)
        if better(accuracy, best):
            best_cap, best = cap, accuracy
    return best_cap


CHOOSE_EPOCH_CAP_BUGS = {
    "None when every cap scores 0 (best accuracy starts at 0)": lambda *args: _choose(*args, start=0.0),
    "the first best cap in the order given": lambda *args: _choose(*args, order=list),
    "the largest among ties": lambda *args: _choose(*args, better=lambda new, best: new >= best),
    "np.sign on the dev scores (sign(0) = 0)": lambda *args: _choose(*args, sign=np.sign),
    "sign(0) = -1 on the dev scores": lambda *args: _choose(*args, sign=lambda s: np.where(s > 0, 1, -1)),
    "accuracy on the training set": lambda X_train, y_train, X_dev, y_dev, caps: _choose(X_train, y_train, X_train, y_train, caps),
    "the position of the cap, not the cap": lambda X_train, y_train, X_dev, y_dev, caps: sorted(caps).index(
        _choose(X_train, y_train, X_dev, y_dev, caps)),
    "a NumPy int64 (an entry of an array of the caps), not an int": lambda X_train, y_train, X_dev, y_dev, caps: np.asarray(
        sorted(caps))[int(np.argmax([_dev_accuracy(X_train, y_train, X_dev, y_dev, cap) for cap in sorted(caps)]))],
}
CHOOSE_EPOCH_CAP_CORRECT = {
    "max with a key": lambda X_train, y_train, X_dev, y_dev, caps: max(
        sorted(caps), key=lambda cap: (_dev_accuracy(X_train, y_train, X_dev, y_dev, cap), -cap)),
    "argmax over the sorted caps": lambda X_train, y_train, X_dev, y_dev, caps: int(sorted(caps)[int(np.argmax(
        [_dev_accuracy(X_train, y_train, X_dev, y_dev, cap) for cap in sorted(caps)]))]),
}


#: Each graded function of this assignment that has witnesses: (its common bugs, correct implementations written otherwise).
WITNESSES: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}
