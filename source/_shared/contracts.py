"""What this course's docstrings promise of a graded function's inputs, written as checks' preconditions.

A check's ``precondition`` (``course_grader.checks_api.Check``) returns what its arguments break of the docstring
(``""`` when they keep every promise). The grader refuses a second call whose inputs break it, and the course's tests
(``tests/course/test_second_call_contract.py``) hold every case and every second call of every check to it. Each
helper here says one promise; ``broken`` joins them. A check loads this module with
``course_module(__file__, "contracts")``; like the hidden checks, nothing in ``source/_shared/`` is released.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def broken(*failures: str) -> str:
    """The promises broken, joined (``""`` when none is)."""
    return "; ".join(failure for failure in failures if failure)


def labels(y: Any, name: str = "y") -> str:
    """``y`` holds labels -1 or +1 only, and at least one."""
    values = np.asarray(y)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isin(values, (-1, 1))):
        return f"{name} holds something else than labels -1/+1"
    return ""


def label(value: Any, name: str = "y") -> str:
    """One label, -1 or +1."""
    return "" if value in (-1, 1) else f"{name} = {value!r} is not -1 or +1"


def count_at_least_one(value: Any, name: str) -> str:
    """A whole number >= 1 (an epoch cap, a number of passes)."""
    return "" if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1 \
        else f"{name} = {value!r} is not an int >= 1"


def rows_of(X: Any, y: Any, x_name: str = "X", y_name: str = "y") -> str:
    """``X`` is a matrix with one row per entry of ``y``."""
    points, values = np.asarray(X), np.asarray(y)
    if points.ndim != 2 or values.ndim != 1 or len(points) != len(values):
        return f"{x_name} is not a matrix with one row per entry of {y_name}"
    return ""


def nonzero(w: Any, name: str = "w") -> str:
    """A vector that is not the zero vector."""
    return "" if np.any(np.asarray(w, dtype=float) != 0) else f"{name} is the zero vector"


def unit(w: Any, name: str = "w_star") -> str:
    """A vector of length 1."""
    vector = np.asarray(w, dtype=float)
    return "" if vector.ndim == 1 and np.isclose(np.linalg.norm(vector), 1.0, rtol=1e-9, atol=1e-12) \
        else f"{name} is not of unit length"


def separates_through_origin(X: Any, y: Any, w: Any, name: str = "w_star") -> str:
    """``w`` puts every point of ``X`` strictly on the side of its label ``y``: y_i w·x_i > 0 for all i."""
    scores = np.asarray(y, dtype=float) * (np.asarray(X, dtype=float) @ np.asarray(w, dtype=float))
    return "" if np.all(scores > 0) else f"{name} does not separate (X, y) through the origin"


def a_run_on(X: Any, y: Any, history: Any) -> str:
    """``history`` is a perceptron run on ``(X, y)`` without bias: row 0 the zero vector, and each next row the one
    before it plus ``y_i x_i`` for some point i."""
    points, values, rows = np.asarray(X, dtype=float), np.asarray(y, dtype=float), np.asarray(history, dtype=float)
    if rows.ndim != 2 or len(rows) == 0 or rows.shape[1] != points.shape[1] or np.any(rows[0] != 0):
        return "history is not a run: its row 0 is not the zero vector of the points' dimension"
    steps = np.diff(rows, axis=0)
    updates = values[:, None] * points  # the update each point makes
    made = np.all(np.isclose(steps[:, None, :], updates[None, :, :], rtol=1e-9, atol=1e-9), axis=2).any(axis=1)
    return "" if np.all(made) else "history is not a run on (X, y): some step is no y_i x_i"


def classes_at_least_two(y: Any, name: str = "y") -> str:
    """``y`` holds at least two distinct labels."""
    return "" if len(np.unique(np.asarray(y))) >= 2 else f"{name} holds fewer than two classes"
