"""Bug witnesses of 04_convergence: for each graded function, common bugs and correct implementations written otherwise.

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
from perceptron_course import theory

_caching = course_module(__file__, "caching_witnesses")


def _float(X) -> np.ndarray:
    return np.asarray(X, dtype=float)


def _aug(X) -> np.ndarray:
    X = _float(X)
    return np.hstack([np.ones((X.shape[0], 1)), X])


RADIUS_BUGS = {
    "about the centre": lambda X: float(np.max(np.linalg.norm(_float(X) - _float(X).mean(axis=0), axis=1))),
    "squared": lambda X: float(np.max(np.sum(_float(X) ** 2, axis=1))),
    "the largest coordinate": lambda X: float(np.max(np.abs(_float(X)))),
    "the mean norm": lambda X: float(np.mean(np.linalg.norm(_float(X), axis=1))),
    "the norm of the whole matrix": lambda X: float(np.linalg.norm(_float(X))),
    "an array of one entry (norms[-1:]), not a float": lambda X: np.sort(np.linalg.norm(_float(X), axis=1))[-1:],
    "an int for integer input": lambda X: (lambda r: int(r) if float(r).is_integer() else r)(
        float(np.max(np.linalg.norm(_float(X), axis=1)))),
}
RADIUS_CORRECT = {
    "a NumPy scalar": lambda X: np.max(np.sqrt(np.sum(_float(X) ** 2, axis=1))),
    "a generator": lambda X: max(float(np.hypot.reduce(row)) if len(row) else 0.0 for row in _float(X)),
}

PROOF_TERMS_BUGS = {
    "the norm, not squared": lambda H, u: (_float(H) @ _float(u), np.linalg.norm(_float(H), axis=1)),
    "row 0 skipped": lambda H, u: (_float(H)[1:] @ _float(u), np.sum(_float(H)[1:] ** 2, axis=1)),
    "absolute alignment": lambda H, u: (np.abs(_float(H) @ _float(u)), np.sum(_float(H) ** 2, axis=1)),
    "the two swapped": lambda H, u: (np.sum(_float(H) ** 2, axis=1), _float(H) @ _float(u)),
    "squared norm over the columns": lambda H, u: (_float(H) @ _float(u), np.sum(_float(H) ** 2, axis=0)),
    "one array of two rows": lambda H, u: np.vstack([_float(H) @ _float(u), np.sum(_float(H) ** 2, axis=1)]),
    "a cache keyed by id(history)": _caching.cached(lambda H, u: (_float(H) @ _float(u), np.sum(_float(H) ** 2, axis=1)), _caching.by_id),
    "lists, not ndarrays": lambda H, u: ([float(np.dot(h, u)) for h in _float(H)], [float(np.dot(h, h)) for h in _float(H)]),
    "an integer squared_norm for an integer history": lambda H, u: (np.asarray(H) @ _float(u), np.sum(np.asarray(H) ** 2, axis=1)),
}
PROOF_TERMS_CORRECT = {
    "einsum": lambda H, u: (np.einsum("ij,j->i", _float(H), _float(u)), np.einsum("ij,ij->i", _float(H), _float(H))),
    "w_star normalised again (it is of unit length already)":
        lambda H, u: (_float(H) @ (_float(u) / np.linalg.norm(_float(u))), np.sum(_float(H) ** 2, axis=1)),
    "checks that w_star is of unit length": lambda H, u: _unit_checked(H, u),
    "a cache keyed by the values": _caching.cached(lambda H, u: (_float(H) @ _float(u), np.sum(_float(H) ** 2, axis=1)), _caching.by_value),
}


def _unit_checked(H, u):
    if not np.isclose(np.linalg.norm(_float(u)), 1.0):
        raise ValueError("w_star must be of unit length")
    return _float(H) @ _float(u), np.einsum("ij,ij->i", _float(H), _float(H))


def _bound(X, y, *, augmented=True, centre=False, square=True):
    data = _aug(X) if augmented else _float(X)
    _, gamma = theory.max_margin(data, y)
    points = data - data.mean(axis=0) if centre else data
    ratio = np.max(np.linalg.norm(points, axis=1)) / gamma
    return float(ratio ** 2 if square else ratio)


MISTAKE_BOUND_BUGS = {
    "not augmented": lambda X, y: _bound(X, y, augmented=False) if theory.is_separable(X, y, bias=False) else 0.0,
    "R about the centre": lambda X, y: _bound(X, y, centre=True),
    "R / gamma, not squared": lambda X, y: _bound(X, y, square=False),
    "R of the raw points": lambda X, y: float((np.max(np.linalg.norm(_float(X), axis=1)) / theory.max_margin(_aug(X), y)[1]) ** 2),
    "not augmented when the first column is already all ones":
        lambda X, y: _bound(X, y, augmented=not np.all(_float(X)[:, 0] == 1.0)),
}
MISTAKE_BOUND_CORRECT = {
    "np.column_stack": lambda X, y: float((lambda data: (np.max(np.sum(data ** 2, axis=1)) / theory.max_margin(data, y)[1] ** 2))(
        np.column_stack([np.ones(len(_float(X))), _float(X)]))),
}


def _squeeze(X, y, history, w_star, *, normalise=True, first=0, gamma_of=None, centre=False, absolute=False):
    X, H, w = _float(X), _float(history), _float(w_star)
    u = w / np.linalg.norm(w) if normalise else w
    margins = np.asarray(y) * (X @ u)
    gamma = np.min(np.abs(margins)) if absolute else np.min(margins)
    if gamma_of is not None:
        gamma = gamma_of(X, y)
    points = X - X.mean(axis=0) if centre else X
    j = np.arange(first, first + len(H))
    return np.column_stack([j * gamma, H @ u, np.sum(H ** 2, axis=1), j * np.max(np.sum(points ** 2, axis=1))])


PROOF_SQUEEZE_BUGS = {
    "w_star not divided by its norm": lambda *args: _squeeze(*args, normalise=False),
    "j counted from 1": lambda *args: _squeeze(*args, first=1),
    "gamma of the max-margin separator": lambda *args: _squeeze(*args, gamma_of=lambda X, y: theory.max_margin(X, y)[1]),
    "R about the centre": lambda *args: _squeeze(*args, centre=True),
    "a cache keyed by the shapes": _caching.cached(_squeeze, _caching.by_shape),
    "a list of rows, not an ndarray": lambda *args: _squeeze(*args).tolist(),
}
PROOF_SQUEEZE_CORRECT = {
    "gamma as the smallest |y_i u·x_i|": lambda *args: _squeeze(*args, absolute=True),
    "checks that w_star separates the data": lambda X, y, history, w_star: _separation_checked(X, y, history, w_star),
    "a cache keyed by the values": _caching.cached(_squeeze, _caching.by_value),
}


def _separation_checked(X, y, history, w_star):
    if not np.all(np.asarray(y) * (_float(X) @ _float(w_star)) > 0):
        raise ValueError("w_star does not separate (X, y)")
    if np.any(_float(history)[0] != 0):
        raise ValueError("row 0 of history must be the zero vector")
    return _squeeze(X, y, history, w_star)


#: Each graded function of this assignment that has witnesses: (its common bugs, correct implementations written otherwise).
WITNESSES: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}
