"""Input checks shared by every public function.

Each check raises a ``ValueError`` whose message names the argument and the
problem, so a student or TA knows what to fix without reading a traceback.
"""

from __future__ import annotations

import numpy as np

RULES = ("margin", "sign")


def check_points(X, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite, non-empty float array of shape ``(n, d)``."""
    try:
        array = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric; could not convert it: {error}") from None
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_points, n_features); got shape {array.shape}"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: it has no points (shape {array.shape})")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or inf; clean the data before using it")
    return array


def check_vector(v, name: str, length: int | None = None) -> np.ndarray:
    """Return ``v`` as a finite float vector of shape ``(length,)``."""
    try:
        array = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric; could not convert it: {error}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got shape {array.shape}")
    if length is not None and array.shape[0] != length:
        raise ValueError(f"{name} must have length {length} to match X; got length {array.shape[0]}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or inf")
    return array


def _check_label_shape(y, n_points: int) -> np.ndarray:
    array = np.asarray(y)
    if array.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels; got shape {array.shape}")
    if array.shape[0] != n_points:
        raise ValueError(f"X has {n_points} points but y has {array.shape[0]} labels")
    return array


def check_binary_labels(y, n_points: int) -> np.ndarray:
    """Return ``y`` as an int array of -1/+1 labels of shape ``(n_points,)``."""
    array = _check_label_shape(y, n_points)
    found = np.unique(array)
    if not np.isin(found, (-1, 1)).all():
        raise ValueError(
            f"labels must be -1 or +1; found {found.tolist()} "
            "(map 0/1 labels with y = 2 * y - 1)"
        )
    return array.astype(int)


def check_class_labels(y, n_points: int) -> np.ndarray:
    """Return ``y`` as a 1-D array of shape ``(n_points,)`` holding at least two classes."""
    array = _check_label_shape(y, n_points)
    if np.unique(array).size < 2:
        raise ValueError(f"y must hold at least two classes; found {np.unique(array).tolist()}")
    return array


def check_rule(rule: str) -> str:
    """Return ``rule`` if it names a mistake rule, else raise."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    return rule


def check_positive_int(value, name: str) -> int:
    """Return ``value`` as an int >= 1 (``max_epochs``, ``n_points``, ...)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1; got {value}")
    return int(value)
