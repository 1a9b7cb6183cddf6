"""Bug witnesses of 06_limitations: for each graded function, common bugs and correct implementations written otherwise.

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


XOR_FEATURES_BUGS = {
    "the points unchanged": lambda X: _float(X),
    "standardised over the sample": lambda X: (lambda P: (P - P.mean(axis=0)) / (P.std(axis=0) + 1e-12))(
        np.column_stack([_float(X), _float(X)[:, 0] * _float(X)[:, 1]])),
    "the squares only": lambda X: _float(X) ** 2,
    "the sum only": lambda X: _float(X).sum(axis=1, keepdims=True),
    "the sign of the product as p / |p| (NaN on an axis)": lambda X: (lambda p: (p / np.abs(p))[:, None])(
        _float(X)[:, 0] * _float(X)[:, 1]),
    "the input's own dtype (ints for integer points)": lambda X: (lambda P: np.column_stack([P, P[:, 0] * P[:, 1]]))(
        np.asarray(X)),
}
XOR_FEATURES_CORRECT = {
    "the product alone": lambda X: (_float(X)[:, 0] * _float(X)[:, 1])[:, None],
    "degree-2 monomials": lambda X: (lambda P: np.column_stack([P, P ** 2, P[:, :1] * P[:, 1:]]))(_float(X)),
    "the sign of the product": lambda X: np.sign(_float(X)[:, :1] * _float(X)[:, 1:]),
}


def _kernel(K, y, max_epochs, *, strict=False, epochs=lambda cap: cap, signed=False):
    K, y = _float(K), np.asarray(y)
    alpha = np.zeros(len(y), dtype=int)
    for _ in range(epochs(max_epochs)):
        mistakes = 0
        for j in range(len(y)):
            coefficient = alpha if signed else alpha * y
            margin = y[j] * np.sum(coefficient * K[:, j])
            if margin < 0 if strict else margin <= 0:
                alpha[j] += y[j] if signed else 1
                mistakes += 1
        if not mistakes:
            break
    return alpha


KERNEL_PERCEPTRON_BUGS = {
    "strict < 0": lambda K, y, cap: _kernel(K, y, cap, strict=True),
    "one epoch too few": lambda K, y, cap: _kernel(K, y, cap, epochs=lambda c: c - 1),
    "one epoch too many": lambda K, y, cap: _kernel(K, y, cap, epochs=lambda c: c + 1),
    "signed alpha (alpha += y)": lambda K, y, cap: _kernel(K, y, cap, signed=True),
}
KERNEL_PERCEPTRON_CORRECT = {
    "floats, never stopping early": lambda K, y, cap: _kernel(K, y, cap, epochs=lambda c: c).astype(float),
    "K[j] @ (alpha y)": lambda K, y, cap: _kernel(_float(K).T, y, cap),
}


def _averaged(X, y, epochs, *, stop=False, when="after", strict=False, divide="visits"):
    X = _float(X)
    w, b, w_sum, b_sum, visits = np.zeros(X.shape[1]), 0.0, np.zeros(X.shape[1]), 0.0, 0
    for _ in range(epochs):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if when == "before":
                w_sum, b_sum = w_sum + w, b_sum + b
            margin = y_i * (w @ x_i + b)
            if margin < 0 if strict else margin <= 0:
                w, b, mistakes = w + y_i * x_i, b + y_i, mistakes + 1
                if when == "updates":
                    w_sum, b_sum, visits = w_sum + w, b_sum + b, visits + 1
            if when == "after":
                w_sum, b_sum = w_sum + w, b_sum + b
        if stop and not mistakes:
            break
    count = {"visits": epochs * len(X), "epochs": epochs, "updates": max(visits, 1)}[divide if when != "updates" else "updates"]
    return w_sum / count, float(b_sum / count)


AVERAGED_PERCEPTRON_BUGS = {
    "stops at convergence": lambda X, y, e: _averaged(X, y, e, stop=True),
    "summed before the update": lambda X, y, e: _averaged(X, y, e, when="before"),
    "averaged over the updates only": lambda X, y, e: _averaged(X, y, e, when="updates"),
    "divided by the epochs": lambda X, y, e: _averaged(X, y, e, divide="epochs"),
    "strict < 0": lambda X, y, e: _averaged(X, y, e, strict=True),
}
AVERAGED_PERCEPTRON_CORRECT = {
    "a stacked history": lambda X, y, e: (lambda rows: (rows[:, 1:].mean(axis=0), float(rows[:, 0].mean())))(
        np.array([row for row in _averaged_rows(X, y, e)])),
}


def _averaged_rows(X, y, epochs):
    X = _aug(X)
    w = np.zeros(X.shape[1])
    for _ in range(epochs):
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i) <= 0:
                w = w + y_i * x_i
            yield w


def _hinge(X, y, learning_rate, lam, epochs, *, stop="", strict=False, shrink="always", after_shrink=False,
           perceptron_steps=False, regularise_b=False, decay=None, decimals=None):
    X = _float(X)
    w, b, n_steps = np.zeros(X.shape[1]), 0.0, 0
    factor = decay if decay is not None else 1 - learning_rate * lam
    for _ in range(epochs):
        mistakes = steps = 0
        for x_i, y_i in zip(X, y):
            z = y_i * (w @ x_i + b)
            if shrink == "always":
                w = factor * w
                if regularise_b:
                    b = factor * b
            if after_shrink:
                z = y_i * (w @ x_i + b)
            if decimals is not None:
                z = round(float(z), decimals)
            if z < 1 if strict else z <= 1:
                if shrink == "on steps":
                    w = factor * w
                w = w + learning_rate * y_i * x_i
                b = b + learning_rate * y_i
                n_steps += 1 if not perceptron_steps or z <= 0 else 0
                mistakes += z <= 0
                steps += 1
        if (stop == "no mistake" and not mistakes) or (stop == "no step" and not steps):
            break
    return w, float(b), n_steps


HINGE_SGD_BUGS = {
    "stops when an epoch makes no perceptron mistake": lambda *args: _hinge(*args, stop="no mistake"),
    "stops when an epoch takes no hinge step": lambda *args: _hinge(*args, stop="no step"),
    "strict z < 1": lambda *args: _hinge(*args, strict=True),
    "shrinks only on steps": lambda *args: _hinge(*args, shrink="on steps"),
    "z computed after the shrink": lambda *args: _hinge(*args, after_shrink=True),
    "n_steps counts perceptron mistakes (z <= 0)": lambda *args: _hinge(*args, perceptron_steps=True),
    "b regularised too": lambda *args: _hinge(*args, regularise_b=True),
    "shrinks by 1 - lam": lambda X, y, rate, lam, epochs: _hinge(X, y, rate, lam, epochs, decay=1 - lam),
    "lists, not ndarrays": lambda *args: (lambda w, b, n: (w.tolist(), np.float64(b), float(n)))(*_hinge(*args)),
    "z rounded to 6 decimals before the test": lambda *args: _hinge(*args, decimals=6),
    "n_steps a float, not an int": lambda *args: (lambda w, b, n: (w, b, float(n)))(*_hinge(*args)),
}
HINGE_SGD_CORRECT = {
    "a NumPy b": lambda *args: (lambda w, b, n: (w, np.float64(b), n))(*_hinge(*args)),
}


def _mlp(X, W, c, v, d, *, activation=np.tanh, bias=True, labels=lambda s: np.where(s >= 0, 1, -1), dtype=float,
         transpose=False):
    hidden = activation(np.asarray(X, dtype=dtype) @ np.asarray(W, dtype=dtype).T + (np.asarray(c, dtype=dtype) if bias else 0))
    scores = hidden @ np.asarray(v, dtype=dtype) + dtype(d)
    return (hidden.T if transpose else hidden), scores, labels(scores)


MLP_FORWARD_BUGS = {
    "strict > 0 labels": lambda *args: _mlp(*args, labels=lambda s: np.where(s > 0, 1, -1)),
    "np.sign labels": lambda *args: _mlp(*args, labels=lambda s: np.sign(s).astype(int)),
    "hidden transposed": lambda *args: _mlp(*args, transpose=True),
    "a sigmoid": lambda *args: _mlp(*args, activation=lambda a: 1 / (1 + np.exp(-a))),
    "c forgotten": lambda *args: _mlp(*args, bias=False),
    "float32": lambda *args: _mlp(*args, dtype=np.float32),
    "lists, not ndarrays": lambda *args: tuple(part.tolist() for part in _mlp(*args)),
    "tanh as (e^2a - 1) / (e^2a + 1), NaN once e^2a overflows": lambda *args: _mlp(
        *args, activation=lambda a: (lambda e: (e - 1) / (e + 1))(np.exp(2 * a))),
}
MLP_FORWARD_CORRECT = {
    "a loop over points": lambda X, W, c, v, d: (lambda H: (H, H @ _float(v) + d, np.where(H @ _float(v) + d >= 0, 1, -1)))(
        np.array([np.tanh(_float(W) @ x + _float(c)) for x in _float(X)]).reshape(len(_float(X)), len(_float(c)))),
}


#: Each graded function of this assignment that has witnesses: (its common bugs, correct implementations written otherwise).
WITNESSES: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}
