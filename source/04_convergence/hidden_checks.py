"""Checks of assignment 04_convergence: radius, proof_terms, mistake_bound and proof_squeeze."""

from __future__ import annotations

import numpy as np

from perceptron_course import geometry, perceptron, theory
from perceptron_course.datasets import six_point_example
from course_grader.checks_api import (
    COMMON_IMPORTS, N_RANDOM_CASES, Case, Check, compare_arrays, compare_number, compare_tuple, course_module,
    lists_at_random, power_of_two, random_integer_points, random_labels, random_points, sign,
)

_contracts = course_module(__file__, "contracts")
_training = course_module(__file__, "training_data")
_augmented_inputs = course_module(__file__, "augmented_inputs")
short_separable_data = _training.short_separable_data
training_cases = _training.training_cases



def _radius_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[3.0, 4.0], [1.0, 0.0]]),), "the visible test's points (the longest row has norm 5)"),
        Case((np.array([[10.0, 0.0], [12.0, 0.0]]),), "points far from the origin: the radius is measured from the origin, not from the data's centre"),
        Case((np.array([[-3]]),), "a single point (n = 1, d = 1), integer input"),
    ]
    cases += [Case((np.round(random_points(rng) + rng.normal(size=1) * 5, 3),), "random points, not centred")
              for _ in range(N_RANDOM_CASES)]
    cases += [Case((random_integer_points(rng, low=-9, high=10),), "random integer points") for _ in range(4)]
    cases.append(Case((_whole_radius_points(rng),), "random integer points whose radius is a whole number (returned as a float)"))
    return lists_at_random(rng, cases, ("X",), ("X",))


RADIUS = Check("radius", ("X",), _radius_cases, theory.radius, compare_number(returns="float"))


def _whole_radius_points(rng: np.random.Generator) -> np.ndarray:
    """Integer points (entries -4 to 4, d <= 4, so norms of at most 8) and, among them, a longest row m e_j, m 9 to 12."""
    X = random_integer_points(rng)
    longest = np.zeros((1, X.shape[1]), dtype=X.dtype)
    longest[0, int(rng.integers(X.shape[1]))] = int(rng.choice([-1, 1])) * int(rng.integers(9, 13))
    return np.insert(X, int(rng.integers(len(X) + 1)), longest, axis=0)


def _proof_cases(rng: np.random.Generator) -> list[Case]:
    cases = [Case((np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 3.0]]), np.array([0.6, 0.8])), "the visible test's history")]
    for case in training_cases(rng, visible=[]):
        if "XOR" in case.behaviour:
            continue
        X, y = case.args
        data = np.hstack([np.ones((len(X), 1)), X])
        history = perceptron.train(data, y, bias=False, max_epochs=100).weight_history
        try:
            w_star, _ = theory.max_margin(data, y)
        except (theory.NotSeparableError, ArithmeticError):  # the solver gave up on this draw: a case left out, never failed
            continue
        cases.append(Case((np.array(history), w_star), case.behaviour.split(" (max_epochs")[0]))
    for _ in range(2):
        cases.append(_signed_alignment_case(rng))
        cases.append(_integer_history_case(rng))
    return cases


def _integer_history_case(rng: np.random.Generator) -> Case:
    """A run's history on integer points, as an int array (every weight is whole), and a random unit w_star."""
    X = random_integer_points(rng, int(rng.integers(2, 9)), int(rng.integers(1, 4)))
    data = _augmented_inputs.with_column_of_ones(X)  # integers stay integers
    history = np.array(perceptron.train(data, random_labels(rng, len(X)), bias=False, max_epochs=5).weight_history)
    w_star = rng.normal(size=data.shape[1])
    return Case((history.astype(np.int64), w_star / np.linalg.norm(w_star)),
                "an integer history (a run on integer points, as an int array), which must give float arrays")


def _signed_alignment_case(rng: np.random.Generator) -> Case:
    """A history (zero first row) and a unit w_star with some alignment below 0: the alignment is signed."""
    while True:
        k, d = int(rng.integers(2, 8)), int(rng.integers(1, 4))
        history = np.vstack([np.zeros((1, d)), np.round(rng.normal(scale=2.0, size=(k, d)), 3)])
        w_star = rng.normal(size=d)
        w_star /= np.linalg.norm(w_star)
        if np.any(history @ w_star < -1e-3):
            return Case((history, w_star), "random weights, some pointing away from w_star: a negative alignment stays negative")


def _whole(value) -> bool:
    """Whether ``value`` is an array of integers (multiplied in place, it takes only whole factors)."""
    return isinstance(value, np.ndarray) and value.dtype.kind in "iu"


def _proof_terms_contract(history, w_star) -> str:
    """The docstring: history of shape (k + 1, d), w_star of shape (d,) and of unit norm."""
    rows = np.asarray(history)
    if rows.ndim != 2 or np.asarray(w_star).shape != (rows.shape[1],):
        return "history is not of shape (k + 1, d) with w_star of shape (d,)"
    return _contracts.unit(w_star)


def _proof_terms_second_call(rng: np.random.Generator, case: Case) -> dict:
    """The history multiplied by a power of two, w_star by a sign only: it stays of unit length."""
    history, _ = case.args
    return {"history": power_of_two(rng, whole=_whole(history)), "w_star": sign(rng)}


PROOF_TERMS = Check(
    "proof_terms", ("history", "w_star"), _proof_cases, theory.proof_quantities,
    compare_tuple(("alignment", "squared_norm"),
                  (compare_arrays(exact=False, what="an array of shape (k + 1,)", returns="ndarray of float"),
                   compare_arrays(exact=False, what="an array of shape (k + 1,)", returns="ndarray of float")), a_tuple=True),
    precondition=_proof_terms_contract, second_call=_proof_terms_second_call,
)


def _bound_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[2.0, 0.0], [-2.0, 0.0]]), np.array([1, -1])), "the visible test's two points ((R / gamma)^2 = 5 / 4)"),
        Case((np.array([[10.0, 0.0], [11.0, 0.0], [10.0, 1.0], [11.0, 1.0]]), np.array([-1, 1, -1, 1])),
             "data far from the origin: R and gamma must be those of the augmented points (1, x)"),
        Case((np.array([[1, 2], [-1, -1]]), np.array([1, -1])), "integer input"),
    ]
    random = [case for case in training_cases(rng, visible=[]) if case.is_random]
    cases += [Case(case.args, case.behaviour.split(" (max_epochs")[0]) for case in random]
    ones_in_front = "{}, with a first column already all ones: it is augmented all the same, to points (1, 1, x)"
    cases.append(Case((_augmented_inputs.with_column_of_ones(np.array([[2.0, 0.0], [-2.0, 0.0]])), np.array([1, -1])),
                      ones_in_front.format("two points on a line, (2, 0) and (-2, 0)")))
    cases += [Case((_augmented_inputs.with_column_of_ones(case.args[0]), case.args[1]), ones_in_front.format("random data"))
              for case in random[:_training.N_BOUNDARY_CASES]]
    return lists_at_random(rng, cases, ("X", "y"), ("X", "y"))


def _reference_bound(X, y):
    return theory.mistake_bound(X, y, bias=True)


def _bound_contract(X, y) -> str:
    """The docstring: labels -1/+1, one per row of X, linearly separable with an offset."""
    failure = _contracts.broken(_contracts.rows_of(X, y), _contracts.labels(y))
    return failure or ("" if theory.is_separable(np.asarray(X, dtype=float), np.asarray(y), bias=True)
                       else "(X, y) is not linearly separable with an offset")


def _bound_second_call(rng: np.random.Generator, case: Case) -> dict:
    """X multiplied by a power of two (the augmented points change, so the bound does), y by one sign: still
    separable with an offset."""
    X, _ = case.args
    return {"X": power_of_two(rng, whole=_whole(X)), "y": sign(rng)}


MISTAKE_BOUND = Check("mistake_bound", ("X", "y"), _bound_cases, _reference_bound, compare_number(returns="float"),
                      precondition=_bound_contract, second_call=_bound_second_call)


# ----------------------------------------------------------------------------- proof_squeeze


def _reference_squeeze(X, y, history, w_star):
    """Row j: ``[j gamma, history[j]·u, ||history[j]||^2, j R^2]`` with ``u = w_star / ||w_star||``."""
    points = np.asarray(X, dtype=float)
    unit = np.asarray(w_star, dtype=float) / np.linalg.norm(np.asarray(w_star, dtype=float))
    gamma = geometry.set_margin(unit, 0.0, points, y)
    alignment, squared_norm = theory.proof_quantities(history, unit)
    updates = np.arange(len(alignment), dtype=float)
    return np.column_stack([updates * gamma, alignment, squared_norm, updates * theory.radius(points) ** 2])


#: The lecture's 6-point example (no bias) run by the perceptron, rule ``<= 0``: its weights after 0, 1, 2, ... updates.
SIX_POINT_HISTORY = np.array([[0.0, 0.0], [1.0, -2.0], [2.0, -1.0], [3.0, 1.0]])


def _separable_through_origin(rng: np.random.Generator, n: int, d: int, *, integer: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points, labels and a (non-unit) true separator through the origin; no point on it."""
    while True:
        if integer:
            normal = rng.integers(-3, 4, size=d)
            X = rng.integers(-4, 5, size=(n, d))
        else:
            normal = np.round(rng.normal(size=d) * rng.uniform(0.2, 5.0), 3)
            X = np.round(rng.normal(size=(n, d)) * rng.uniform(0.3, 3.0), 3)  # rounded: a failed call reads short
        scores = X @ normal
        # A margin of at least 2% of the radius keeps the run short: at most (R / gamma)^2 = 2500 updates.
        wide_enough = 0 if integer else 0.02 * np.linalg.norm(normal) * np.max(np.linalg.norm(X, axis=1))
        if np.any(normal != 0) and np.all(np.abs(scores) > wide_enough):
            return X, np.where(scores > 0, 1, -1), normal


def _run_history(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.array(perceptron.train(X, y, bias=False, max_epochs=10_000).weight_history)


def _squeeze_case(X, y, w_star, behaviour: str) -> Case:
    return Case((X, y, _run_history(np.asarray(X, dtype=float), np.asarray(y)), w_star), behaviour)


def _not_the_widest_case(rng: np.random.Generator) -> Case:
    """A unit w_star whose own margin is well below the data's largest: gamma must be w_star's, not max_margin's.

    First among the cases: a student who takes gamma from ``max_margin`` (and normalises w_star) fails here, with a
    message that names that mistake, before the cases of a w_star far from unit length."""
    while True:
        X, y, normal = _separable_through_origin(rng, int(rng.integers(3, 10)), int(rng.integers(2, 4)))
        unit = normal / np.linalg.norm(normal)
        try:
            _, widest = theory.max_margin(X, y)
        except (theory.NotSeparableError, ArithmeticError):  # the solver gave up on this draw: draw again
            continue
        if geometry.set_margin(unit, 0.0, X, y) < 0.8 * widest:
            return _squeeze_case(X, y, unit, "a unit w_star that is not the max-margin separator: gamma is the margin "
                                             "of this w_star, min_i y_i u·x_i, not the largest margin (max_margin's)")


def _squeeze_cases(rng: np.random.Generator) -> list[Case]:
    six_X, six_y = six_point_example()
    cases = [_not_the_widest_case(rng),
             Case((six_X, six_y, SIX_POINT_HISTORY, np.array([2.0, 0.0])),
                  "the visible test: the 6-point example with w_star = (2, 0), not of unit length")]
    # Every stated boundary, drawn afresh for each student.
    X, y, normal = _separable_through_origin(rng, int(rng.integers(2, 8)), int(rng.integers(1, 4)))
    cases.append(Case((X, y, np.zeros((1, X.shape[1])), normal), "no update yet (k = 0): history is the zero vector alone"))
    X, y, normal = _separable_through_origin(rng, int(rng.integers(3, 12)), int(rng.integers(2, 4)))
    cases.append(_squeeze_case(X, y, normal * rng.uniform(3.0, 50.0), "a separator w_star far from unit length: use w_star / ||w_star||"))
    cases.append(_squeeze_case(X, y, normal * rng.uniform(0.01, 0.3), "a separator w_star much shorter than 1: use w_star / ||w_star||"))
    X, y, normal = _separable_through_origin(rng, int(rng.integers(3, 10)), int(rng.integers(2, 4)))
    closest = int(np.argmin(y * (X @ normal)))
    X, y = np.vstack([X, -X[closest]]), np.append(y, -y[closest])  # the mirror image has the same margin
    cases.append(_squeeze_case(X, y, normal, "a tie: two points share the smallest margin gamma"))
    X, y, normal = _separable_through_origin(rng, int(rng.integers(3, 10)), int(rng.integers(2, 4)), integer=True)
    run = _run_history(X.astype(float), y).astype(int)
    cases.append(Case((X, y, run, normal), "integer input (points, history and w_star are integer arrays)"))
    X, y, normal = _separable_through_origin(rng, int(rng.integers(2, 8)), int(rng.integers(1, 4)))
    run = _run_history(X, y)
    cases.append(Case((X.tolist(), y.tolist(), run.tolist(), normal.tolist()), "Python lists instead of arrays"))
    X, y, normal = _separable_through_origin(rng, 1, 1)
    cases.append(_squeeze_case(X, y, normal, "a single point with one feature (n = 1, d = 1)"))
    for _ in range(N_RANDOM_CASES):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 5))
        if rng.random() < 0.5:
            X, y, normal = _separable_through_origin(rng, n, d)
            what = "random data separable through the origin"
        else:
            raw, y = short_separable_data(rng)
            X = np.hstack([np.ones((len(raw), 1)), raw])
            try:
                normal, _ = theory.max_margin(X, y)
            except (theory.NotSeparableError, ArithmeticError):  # the solver gave up: the run's last weights separate too
                normal = _run_history(X, y)[-1]
            what = "random separable data, augmented with a leading 1 (a run with a bias)"
        history = _run_history(X, y)
        w_star = normal if rng.random() < 0.5 else history[-1]  # the run's own final weights separate the data too
        cases.append(Case((X, y, history, w_star * rng.uniform(0.5, 2.0)), what))
    return cases


def _squeeze_contract(X, y, history, w_star) -> str:
    """The docstring: labels -1/+1 for the rows of X, a run on (X, y), and w_star a separator through the origin."""
    return _contracts.broken(_contracts.rows_of(X, y), _contracts.labels(y)) or _contracts.broken(
        _contracts.a_run_on(X, y, history), _contracts.nonzero(w_star, "w_star"),
        _contracts.separates_through_origin(X, y, w_star))


def _squeeze_second_call(rng: np.random.Generator, case: Case) -> dict:
    """Another run on other data, consistent: the points times a, the labels times s, the run times a s (the
    perceptron's run on (a X, s y)), the separator times a s b with b > 0 (it still separates them)."""
    a, s, b = power_of_two(rng, whole=True), sign(rng), power_of_two(rng, positive=True, whole=True)
    return {"X": a, "y": s, "history": a * s, "w_star": a * s * b}


PROOF_SQUEEZE = Check(
    "proof_squeeze", ("X", "y", "history", "w_star"), _squeeze_cases, _reference_squeeze,
    compare_arrays(exact=False, what="an array of shape (k + 1, 4): [j gamma, alignment, squared norm, j R^2] per row",
                   returns="ndarray of float"),
    precondition=_squeeze_contract, second_call=_squeeze_second_call,
)


CHECKS = (RADIUS, PROOF_TERMS, MISTAKE_BOUND, PROOF_SQUEEZE)

#: What a submission may import without a flag: the common imports, and the max-margin solver the
#: exercise hands to students (proof_squeeze takes w_star from it).
ALLOWED_IMPORTS = COMMON_IMPORTS | {"perceptron_course.theory.max_margin"}
