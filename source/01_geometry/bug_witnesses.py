"""Bug witnesses of 01_geometry: for each graded function, common bugs and correct implementations written otherwise.

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


AUGMENT_BUGS = {
    "integer input stays integer": lambda X: np.hstack([np.ones((len(X), 1), dtype=np.asarray(X).dtype), np.asarray(X)]),
    "ones in the last column": lambda X: np.hstack([_float(X), np.ones((len(X), 1))]),
    "arrays only (X.shape on a list)": lambda X: np.hstack([np.ones((X.shape[0], 1)), X.astype(float)]),
    "float32": lambda X: _aug(X).astype(np.float32),
    "a Python list of rows without the ones": lambda X: _float(X).tolist(),
    "unchanged when the first column is already all ones": lambda X: _float(X) if len(X) and np.all(_float(X)[:, 0] == 1) else _aug(X),
    "a cache keyed by id(X)": _caching.cached(_aug, _caching.by_id),
    "a cache keyed by the shape of X": _caching.cached(_aug, _caching.by_shape),
    "a list of lists, not an ndarray": lambda X: [[1.0, *row] for row in _float(X).tolist()],
}
AUGMENT_CORRECT = {
    "a cache keyed by the values of X": _caching.cached(_aug, _caching.by_value),
    "validates its input first": lambda X: (_aug(X) if np.ndim(X) == 2 else (_ for _ in ()).throw(ValueError("X must be 2-D"))),
    "np.insert": lambda X: np.insert(_float(X), 0, 1.0, axis=1),
    "np.c_": lambda X: np.c_[np.ones(len(_float(X))), _float(X)],
}


def _scores(w, b, X) -> np.ndarray:
    return _float(X) @ _float(w) + b


PREDICT_BUGS = {
    "float labels 1.0 / -1.0 (np.sign patched at 0)": lambda w, b, X: (lambda s: np.where(s == 0, 1, s))(np.sign(_scores(w, b, X))),
    "sign(0) = -1 (strict > 0)": lambda w, b, X: np.where(_scores(w, b, X) > 0, 1, -1),
    "np.sign (sign(0) = 0)": lambda w, b, X: np.sign(_scores(w, b, X)).astype(int),
    "bools instead of labels": lambda w, b, X: _scores(w, b, X) >= 0,
    "the bias forgotten": lambda w, b, X: np.where(_float(X) @ _float(w) >= 0, 1, -1),
    "w·x - b": lambda w, b, X: np.where(_float(X) @ _float(w) - b >= 0, 1, -1),
    "arrays only (X @ w on lists)": lambda w, b, X: np.where(X @ w + b >= 0, 1, -1),
    "a list comprehension, not an ndarray": lambda w, b, X: [1 if float(np.dot(w, x)) + b >= 0 else -1 for x in _float(X)],
    "a tolerance around 0 (scores above -1e-12 count as 0)": lambda w, b, X: np.where(_scores(w, b, X) >= -1e-12, 1, -1),
    "scores rounded to 9 decimals": lambda w, b, X: np.where(np.round(_scores(w, b, X), 9) >= 0, 1, -1),
}
PREDICT_CORRECT = {
    "2 [s >= 0] - 1": lambda w, b, X: 2 * (_scores(w, b, X) >= 0).astype(int) - 1,
    "np.sign patched at 0": lambda w, b, X: (lambda s: np.where(s == 0, 1, s))(np.sign(_scores(w, b, X))).astype(int),
    "int32 labels": lambda w, b, X: np.where(_scores(w, b, X) >= 0, 1, -1).astype(np.int32),
}

SIGNED_DISTANCE_BUGS = {
    "not divided by ||w||": lambda w, b, X: _scores(w, b, X),
    "divided by ||w||^2": lambda w, b, X: _scores(w, b, X) / np.dot(_float(w), _float(w)),
    "unsigned (absolute value)": lambda w, b, X: np.abs(_scores(w, b, X)) / np.linalg.norm(_float(w)),
    "the bias forgotten": lambda w, b, X: (_float(X) @ _float(w)) / np.linalg.norm(_float(w)),
    "divided by ||(w, b)||": lambda w, b, X: _scores(w, b, X) / np.linalg.norm(np.append(_float(w), b)),
    "float32": lambda w, b, X: (_scores(w, b, X) / np.linalg.norm(_float(w))).astype(np.float32),
}
SIGNED_DISTANCE_CORRECT = {
    "sqrt(w·w)": lambda w, b, X: _scores(w, b, X) / np.sqrt(np.dot(w, w)),
    "unit w first": lambda w, b, X: _float(X) @ (_float(w) / np.linalg.norm(_float(w))) + b / np.linalg.norm(_float(w)),
}


def _margins(w, b, X, y) -> np.ndarray:
    return np.asarray(y) * _scores(w, b, X) / np.linalg.norm(_float(w))


SET_MARGIN_BUGS = {
    "the smallest absolute margin": lambda w, b, X, y: float(np.min(np.abs(_margins(w, b, X, y)))),
    "not divided by ||w||": lambda w, b, X, y: float(np.min(np.asarray(y) * _scores(w, b, X))),
    "the labels forgotten": lambda w, b, X, y: float(np.min(_scores(w, b, X) / np.linalg.norm(_float(w)))),
    "the largest instead of the smallest": lambda w, b, X, y: float(np.max(_margins(w, b, X, y))),
    "the mean": lambda w, b, X, y: float(np.mean(_margins(w, b, X, y))),
    "every margin, not the smallest": lambda w, b, X, y: _margins(w, b, X, y),
}
SET_MARGIN_CORRECT = {
    "a NumPy scalar": lambda w, b, X, y: np.min(_margins(w, b, X, y)),
    "a loop": lambda w, b, X, y: min(float(label * (np.dot(w, x) + b)) for x, label in zip(_float(X), y)) / float(np.linalg.norm(w)),
}


#: Each graded function of this assignment that has witnesses: (its common bugs, correct implementations written otherwise).
WITNESSES: dict[str, tuple[dict[str, Callable], dict[str, Callable]]] = {
    name.removesuffix("_BUGS").lower(): (value, globals()[name.removesuffix("_BUGS") + "_CORRECT"])
    for name, value in dict(globals()).items() if name.endswith("_BUGS")
}
