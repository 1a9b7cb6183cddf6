"""Checks of assignment 05_multiclass: ovr_train, ovr_predict and multiclass_train."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from perceptron_course import multiclass
from course_grader.checks_api import (
    N_RANDOM_CASES, Case, Check, compare_arrays, course_module, compare_tuple, Difference, holds_a_bool, lists_at_random,
    wrong_type,
    python_literal,
)

_contracts = course_module(__file__, "contracts")
_augmented_inputs = course_module(__file__, "augmented_inputs")


#: Random cases of a check drawn on a stated boundary (integer input, ties between classes).
N_BOUNDARY_CASES = 6


def _class_data(rng: np.random.Generator, *, integer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    k, d = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    n = int(rng.integers(k, 40))
    centres = rng.normal(scale=4, size=(k, d))
    labels = rng.integers(0, k, size=n)
    labels[:k] = np.arange(k)
    labels = rng.permutation(labels)
    X = np.round(centres[labels] + rng.normal(size=(n, d)), 3)
    if integer:
        X = np.round(X).astype(np.int64)
    names = np.array(["cat", "dog", "emu", "fox"])[labels] if rng.random() < 0.3 else labels * 2 + 1
    return X, names


class KeptRuns:
    """A deterministic trainer ``(X, y, max_epochs) -> model`` that keeps its last runs.

    Drawing a random case trains the reference for up to 40 epochs to choose the cap; the
    case's expected answer is the run with that cap. A run whose classes all converged stopped
    there, so any cap at or after that epoch gives the same run; that run is given back here
    rather than trained again (about half of the random cases).
    """

    def __init__(self, trainer: Callable, keep: int = 64) -> None:
        self.trainer, self.keep = trainer, keep
        self._runs: dict[bytes, tuple[int, Any]] = {}  # by the data: (the cap it was trained with, the model)

    def run(self, X, y, max_epochs: int):
        key = _data_key(X, y)
        kept = self._runs.get(key) if key is not None else None
        if kept is not None:
            cap, model = kept
            if max_epochs == cap or (np.all(model.converged) and max_epochs >= np.max(model.epochs)):
                return model
        model = self.trainer(X, y, max_epochs=max_epochs)
        if key is not None:
            if len(self._runs) >= self.keep:
                self._runs.clear()
            self._runs[key] = (max_epochs, model)
        return model


def _data_key(X, y) -> bytes | None:
    """The points and labels as bytes with their shapes and types (equal keys, equal data), or ``None`` for objects."""
    points, labels = np.asarray(X), np.asarray(y)
    if points.dtype.hasobject or labels.dtype.hasobject:  # their bytes are addresses, which a later object may reuse
        return None
    return repr((points.shape, points.dtype.str, labels.shape, labels.dtype.str)).encode() + points.tobytes() + labels.tobytes()


def _trainer_cases(trainer: KeptRuns, visible: list[Case]) -> Callable[[np.random.Generator], list[Case]]:
    """Cases of a ``(X, y, max_epochs) -> (W, b)`` trainer: the visible ones, edge cases, random classes.

    Random cases get a cap of 30, or the last epoch in which the reference still
    updates (so one epoch too few or too many shows).
    """

    def cases(rng: np.random.Generator) -> list[Case]:
        named = list(visible) + [
            Case((np.array([[1, 0], [0, 1], [-1, -1], [2, 2]]), np.array([0, 1, 2, 0])), "integer input", {"max_epochs": 20}),
            Case((np.array([[1.0], [2.0], [3.0]]), np.array([2, 0, 1])), "a single feature (d = 1), one point per class",
                 {"max_epochs": 10}),
            Case((np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]), np.array(["b", "b", "a", "a"])),
                 "string labels on non-separable data (XOR), which must stop after max_epochs", {"max_epochs": 4}),
        ]
        for index in range(N_RANDOM_CASES + N_BOUNDARY_CASES):
            integer = index >= N_RANDOM_CASES
            X, y = _class_data(rng, integer=integer)
            epochs = int(np.max(trainer.run(X, y, max_epochs=40).epochs))
            cap = int(rng.choice([30, max(epochs - 1, 1), epochs]))
            what = "random classes" + (" with integer input" if integer else "")
            named.append(Case((X, y), f"{what} (labels any sortable values; max_epochs = {cap})", {"max_epochs": cap}))
        return lists_at_random(rng, named, ("X", "y"), ("X", "y"))

    return cases


def _weights_of(trainer: KeptRuns) -> Callable[..., Any]:
    def reference(X, y, max_epochs):
        model = trainer.run(X, y, max_epochs=max_epochs)
        return model.W, model.b

    return reference


_MATRICES = compare_tuple(("W", "b"), (compare_arrays(exact=False, what="W of shape (K, d)", returns="ndarray of float"),
                                         compare_arrays(exact=False, what="b of shape (K,)", returns="ndarray of float")),
                          a_tuple=True)

_SIX_X = np.array([[0.0, 3.0], [3.0, 0.0], [-3.0, -3.0], [0.0, 4.0], [4.0, 0.0], [-4.0, -4.0]])
def _trainer_contract(X, y, max_epochs) -> str:
    """The docstrings: one label per row of X, at least two classes, max_epochs an int >= 1."""
    return _contracts.broken(_contracts.rows_of(X, y), _contracts.classes_at_least_two(y),
                             _contracts.count_at_least_one(max_epochs, "max_epochs"))


_ONE_VS_REST = KeptRuns(multiclass.train_one_vs_rest)
OVR_TRAIN = Check(
    "ovr_train", ("X", "y"),
    _trainer_cases(_ONE_VS_REST,
                   [Case((_SIX_X, np.array([0, 1, 2, 0, 1, 2])), "the visible test's six points", {"max_epochs": 50})]),
    _weights_of(_ONE_VS_REST), _MATRICES, precondition=lambda X, y, max_epochs: _trainer_contract(X, y, max_epochs),
)


_MULTICLASS = KeptRuns(multiclass.train_multiclass)
MULTICLASS_TRAIN = Check(
    "multiclass_train", ("X", "y"),
    _trainer_cases(_MULTICLASS,
                   [Case((_SIX_X[:3], np.array([0, 1, 2])), "the visible test's three points", {"max_epochs": 50})]),
    _weights_of(_MULTICLASS), _MATRICES, precondition=lambda X, y, max_epochs: _trainer_contract(X, y, max_epochs),
)


def _reference_predict(W, b, classes, X):
    model = multiclass.LinearMulticlass(np.asarray(classes), np.asarray(W, float), np.asarray(b, float), 0, 0, False)
    return multiclass.predict_multiclass(model, X)


def _compare_predicted(received: Any, expected: np.ndarray) -> Difference | None:
    got = _as_label_array(received)
    if got is None or got.shape != expected.shape:
        return Difference(f"something that is not an array of shape {expected.shape} of labels",
                          python_literal(expected, limit=1500), python_literal(received, limit=1500))
    if holds_a_bool(received):  # np.asarray makes [True, 7] the classes [1, 7]: bools are not classes
        return Difference("something that is not an array of labels (it holds True/False)",
                          python_literal(expected, limit=1500), python_literal(received, limit=1500),
                          hint="return the classes themselves (entries of classes), not True/False")
    # Compared as Python values, never cast: 10.75 is not the class 10, and "cat_WRONG" is not "cat".
    if [_plain(value) for value in got.ravel().tolist()] == [_plain(value) for value in expected.ravel().tolist()]:
        return wrong_type(received, _compare_predicted.returns, python_literal(expected, limit=1500))
    return Difference("wrong labels", python_literal(expected, limit=1500), python_literal(got, limit=1500))


_compare_predicted.returns = "ndarray"  # type: ignore[attr-defined]  # "ndarray, shape (n,)": the classes' own dtype


def _as_label_array(received: Any) -> np.ndarray | None:
    """``received`` as an array of labels, or ``None`` (not a sequence, or a ragged one)."""
    if not isinstance(received, (list, tuple, np.ndarray)):
        return None
    try:
        return np.asarray(received)
    except (ValueError, TypeError, OverflowError):
        return None


def _plain(value):
    """A label as a comparable Python value: a number (bools are not classes) or a string."""
    if isinstance(value, bool):
        return ("bool", value)
    return ("number", float(value)) if isinstance(value, (int, float)) else ("text", str(value))


def _predict_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([-5.0, -5.0]), np.array(["cat", "dog"]),
              np.array([[2.0, 1.0], [0.0, 3.0]])), "the visible test's points (every score negative)"),
        Case((np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]), np.array([-5.0, -4.0, -6.0]), np.array([0, 1, 2]),
              np.array([[0.5, 0.2], [0.1, 0.3]])),
             "every score negative: predict the class with the largest raw score (argmax), not by thresholding"),
        Case((np.zeros((3, 2)), np.zeros(3), np.array(["a", "b", "c"]), np.array([[1.0, 2.0]])),
             "a tie, which goes to the first class (numpy's argmax)"),
    ]
    for _ in range(N_RANDOM_CASES):
        k, d, n = int(rng.integers(2, 6)), int(rng.integers(1, 5)), int(rng.integers(1, 30))
        cases.append(Case((np.round(rng.normal(size=(k, d)), 3), np.round(rng.normal(size=k), 3), _random_classes(rng, k),
                           np.round(rng.normal(size=(n, d)), 3)), "random weights"))
    cases += [_random_tie_case(rng) for _ in range(N_BOUNDARY_CASES)]
    return lists_at_random(rng, cases, ("W", "b", "classes", "X"), ("X",))


def _random_classes(rng: np.random.Generator, k: int) -> np.ndarray:
    """``k`` distinct labels in a random order (numbers or strings): classes[k] belongs to row k, sorted or not."""
    if rng.random() < 0.3:
        return rng.permutation(np.array(["ant", "bee", "cat", "dog", "emu", "fox"]))[:k]
    return rng.choice(np.arange(-20, 80), size=k, replace=False)


def _random_tie_case(rng: np.random.Generator) -> Case:
    """Random integer weights where two classes share a row and a bias, on points where that pair scores highest.

    Drawn until the tie decides some point, so that taking the last of the tied classes
    instead of the first (numpy's argmax) gives other labels.
    """
    while True:
        k, d, n = int(rng.integers(2, 6)), int(rng.integers(1, 4)), int(rng.integers(2, 12))
        W, b = rng.integers(-2, 3, size=(k, d)), rng.integers(-2, 3, size=k)
        first, second = (int(i) for i in rng.choice(k, size=2, replace=False))
        W[first] = 3 * rng.choice([-1, 1], size=d)
        W[second], b[second] = W[first], b[first]
        X = rng.integers(-3, 4, size=(n, d))
        towards = rng.random(n) < 0.6
        X[towards] = rng.integers(1, 3, size=(int(towards.sum()), 1)) * W[first] // 3
        scores = X @ W.T + b
        first_of_ties = np.argmax(scores, axis=1)
        last_of_ties = k - 1 - np.argmax(scores[:, ::-1], axis=1)
        if np.any(first_of_ties != last_of_ties):
            return Case((W, b, _random_classes(rng, k), X),
                        "random integer weights where two classes tie (same row and bias): a tie goes to the first of them")


OVR_PREDICT = Check("ovr_predict", ("W", "b", "classes", "X"), _predict_cases, _reference_predict, _compare_predicted)

CHECKS = (OVR_TRAIN, OVR_PREDICT, MULTICLASS_TRAIN)


# ----------------------------------------------------------------------------- kesler_points

from course_grader.checks_api import random_cases  # noqa: E402 - the part added last


def _kesler_data(rng: np.random.Generator, *, k: int | None = None, d: int | None = None, integer: bool = False,
                 unsorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Random points of ``k`` classes (every class present), numbers or strings; ``unsorted``: the first label seen is
    not the smallest class, so blocks in order of appearance differ from blocks in sorted order."""
    k = int(rng.integers(2, 6)) if k is None else k
    d = int(rng.integers(1, 5)) if d is None else d
    n = int(rng.integers(k, 2 * k + 4))
    index = rng.permutation(np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)]))
    if unsorted and index[0] == 0:
        index[[0, int(np.flatnonzero(index != 0)[0])]] = index[[int(np.flatnonzero(index != 0)[0]), 0]]
    X = rng.integers(-5, 6, size=(n, d)) if integer else np.round(rng.normal(scale=2.0, size=(n, d)), 3)
    names = np.sort(rng.choice(np.array(["ant", "bee", "cat", "dog", "emu", "fox"]), size=k, replace=False)) \
        if rng.random() < 0.3 else np.sort(rng.choice(np.arange(-20, 80), size=k, replace=False))
    return X, names[index]


def _with_ones_in_front(case: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    X, y = case
    return _augmented_inputs.with_column_of_ones(X), y


def _kesler_cases(rng: np.random.Generator) -> list[Case]:
    visible_X = np.array([[0.0, 3.0], [3.0, 0.0], [-3.0, -3.0]])
    cases = [
        Case((visible_X, np.array([0, 1, 2])), "the visible test's three points, one per class"),
        Case((visible_X[:2], np.array(["dog", "cat"])), "the visible test's two points, labelled 'dog' then 'cat' (K = 2): block 0 belongs "
             "to 'cat', the first of np.unique(y)"),
        Case(_kesler_data(rng, k=2), "two classes (K = 2): one Kesler point per point"),
        Case(_kesler_data(rng, k=int(rng.integers(3, 6)), unsorted=True),
             "labels not met in sorted order: block k belongs to classes[k], classes = np.unique(y)"),
        Case(_kesler_data(rng, d=1), "a single feature (d = 1): blocks of length 2"),
        Case(_kesler_data(rng, integer=True), "integer input"),
    ]
    cases += random_cases(rng, lambda rng: _kesler_data(rng), "random classes (numbers or strings)", count=6)
    cases += random_cases(rng, lambda rng: _kesler_data(rng, integer=True), "random classes with integer input", count=2)
    cases += random_cases(rng, lambda rng: _with_ones_in_front(_kesler_data(rng)),
                          "random classes, with a first column already all ones: it is augmented all the same, to "
                          "points (1, 1, x)", count=3)
    return lists_at_random(rng, cases, ("X", "y"), ("X", "y"))


def _reference_kesler(X, y):
    return multiclass.kesler_points(X, y, bias=True)[0]


KESLER_POINTS = Check("kesler_points", ("X", "y"), _kesler_cases, _reference_kesler,
                      compare_arrays(exact=False, what="an array of shape (n (K - 1), K (d + 1))",
                                     returns="ndarray of float"))
CHECKS = (*CHECKS, KESLER_POINTS)
