"""Checks of assignment 01_geometry: augment, predict, signed_distance, set_margin."""

from __future__ import annotations

import numpy as np

from perceptron_course import geometry, perceptron
from course_grader.checks_api import (
    N_RANDOM_CASES, Case, Check, compare_arrays, compare_labels, compare_number, integer_weights_and_boundary_points,
    integer_weights_and_tiny_scores, lists_at_random, random_integer_points,
    random_points,
)


#: Random cases per check with integer input (a stated boundary of every geometry function).
N_INTEGER_CASES = 4
#: Random cases of predict with points exactly on the boundary (score 0).
N_BOUNDARY_CASES = 8
#: Random cases of predict with points a tiny score away from the boundary, on either side.
N_TINY_SCORE_CASES = 3


def _nonzero(w: np.ndarray) -> np.ndarray:
    """``w``, or a unit vector if rounding made it zero (the docstrings promise a nonzero w)."""
    return w if np.any(w) else np.eye(len(w))[0]


def _first_column_ones(X: np.ndarray) -> np.ndarray:
    """``X`` with its first column set to ones: an input already in the form augment makes."""
    ones = np.array(X, dtype=float, copy=True)
    ones[:, 0] = 1.0
    return ones


def _augment_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[2.0, 3.0], [4.0, 5.0]]),), "the visible test's two points"),
        Case((np.array([[3.0]]),), "a single point with a single feature (n = 1, d = 1)"),
        Case((np.arange(6).reshape(3, 2),), "integer input, which must give a float array with a column of ones"),
        Case((np.array([[1.0, 2.0], [1.0, -3.0]]),), "a first column already all ones (an augmented matrix): it gets "
             "a new column of ones all the same"),
    ]
    cases += [Case((random_points(rng),), "random points") for _ in range(N_RANDOM_CASES)]
    cases += [Case((_first_column_ones(random_points(rng)),), "random points whose first column is already all ones "
                   "(an augmented matrix): it gets a new column of ones all the same") for _ in range(N_INTEGER_CASES)]
    cases += [Case((random_integer_points(rng),), "random integer points, which must give a float array")
              for _ in range(N_INTEGER_CASES)]
    return lists_at_random(rng, cases, ("X",), ("X",))


AUGMENT = Check("augment", ("X",), _augment_cases, geometry.augment,  # floats, for integer input too
                compare_arrays(exact=True, what="an array of shape (n, d + 1)", returns="ndarray of float"),
                new_arrays=True)  # "A new array"


def _predict_cases(rng: np.random.Generator) -> list[Case]:
    grid = np.array([[0, 0], [1, 1], [2, -1], [-1, 2], [3, 0]])
    cases = [
        Case((np.array([1.0, -1.0]), 0.0, np.array([[2.0, 1.0], [1.0, 2.0], [1.0, 1.0]])), "the visible test's points"),
        Case((np.zeros(2), 0.0, grid), "w = 0 and b = 0, where every score is exactly 0 and must predict +1"),
        Case((np.array([1, 2]), 0, grid), "points on the boundary (score exactly 0, which must predict +1), integer input"),
        Case((np.array([-1.0]), 0.5, np.array([[2.0]])), "a single point with a single feature (n = 1, d = 1)"),
    ]
    for _ in range(N_RANDOM_CASES):
        X = random_points(rng)
        cases.append(Case((np.round(rng.normal(size=X.shape[1]), 3), round(float(rng.normal()), 3), X), "random weights and points"))
    for _ in range(N_BOUNDARY_CASES):
        w, b, X = integer_weights_and_boundary_points(rng, int(rng.integers(2, 9)), int(rng.integers(1, 4)))
        scale = float(rng.choice([1.0, 0.5, 0.25]))  # halves keep every score exact
        if rng.random() < 0.5:
            cases.append(Case((w, b, X), "random integer points, some on the boundary (a score of exactly 0 must predict +1)"))
        else:
            cases.append(Case((w * scale, float(b) * scale, X.astype(float)),
                              "random points, some on the boundary (a score of exactly 0 must predict +1)"))
    for _ in range(N_TINY_SCORE_CASES):
        w, b, X = integer_weights_and_tiny_scores(rng, int(rng.integers(2, 9)), int(rng.integers(1, 4)))
        cases.append(Case((w, b, X), "random points, some with a score of a tiny 2**-k (k from 30 to 42) of either sign: "
                          "the score's sign decides, with no rounding or tolerance around 0"))
    return lists_at_random(rng, cases, ("w", "b", "X"), ("w", "X"))

PREDICT = Check("predict", ("w", "b", "X"), _predict_cases, perceptron.predict, compare_labels(returns="ndarray of int"))


def _distance_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([3.0, 4.0]), -5.0, np.array([[3.0, 4.0], [0.0, 0.0]])), "the visible test's points"),
        Case((np.array([3, 4]), -5, np.array([[3, 4], [0, 0]])), "integer input (the distance divides by ||w||)"),
        Case((np.array([30.0, 40.0]), -50.0, np.array([[3.0, 4.0]])), "w and b scaled by 10, which must not change the distance"),
        Case((np.array([2.0]), 0.0, np.array([[-1.5]])), "a single point with a single feature (n = 1, d = 1)"),
    ]
    for _ in range(N_RANDOM_CASES):
        X = random_points(rng)
        w = _nonzero(np.round(rng.normal(size=X.shape[1]), 3)) * rng.choice([0.01, 1.0, 100.0])
        cases.append(Case((w, round(float(rng.normal()), 3), X), "random weights, including long and short w"))
    for _ in range(N_INTEGER_CASES):
        X = random_integer_points(rng)
        w = rng.integers(-5, 6, size=X.shape[1])
        w[int(rng.integers(len(w)))] = int(rng.choice([-3, 3, 4]))
        cases.append(Case((w, int(rng.integers(-5, 6)), X), "random integer input (the distance divides by ||w||)"))
    return lists_at_random(rng, cases, ("w", "b", "X"), ("w", "X"))


SIGNED_DISTANCE = Check("signed_distance", ("w", "b", "X"), _distance_cases, geometry.signed_distance,
                        compare_arrays(exact=False, what="an array of shape (n,)", returns="ndarray of float"))


def _margin_cases(rng: np.random.Generator) -> list[Case]:
    visible_X, visible_y = np.array([[2.0, 0.0], [-1.0, 5.0], [-3.0, 1.0]]), np.array([1, -1, -1])
    cases = [
        Case((np.array([1.0, 0.0]), 0.0, visible_X, visible_y), "the visible test's points"),
        Case((np.array([1.0, 0.0]), 0.0, visible_X, -visible_y), "every label flipped: the margin is the worst point's, negative"),
        Case((np.array([1.0, 0.0]), 0.0, np.array([[2.0, 0.0], [-1.0, 5.0], [0.5, 1.0]]), np.array([1, -1, -1])),
             "a misclassified point, which gives a negative margin: the smallest, not the smallest in absolute value"),
        Case((np.array([2, 0]), 1, np.array([[1, 1]]), np.array([1])), "a single point, integer input"),
    ]
    for _ in range(N_RANDOM_CASES):
        X = random_points(rng)
        w, b = _nonzero(np.round(rng.normal(size=X.shape[1]), 3)), round(float(rng.normal()), 3)
        y = np.where(X @ w + b >= 0, 1, -1)
        if rng.random() < 0.4:
            y[int(rng.integers(len(y)))] *= -1
        cases.append(Case((w, b, X, y), "random data, some with a misclassified point (negative margin)"))
    for _ in range(N_INTEGER_CASES):
        X = random_integer_points(rng)
        w = rng.integers(-3, 4, size=X.shape[1])
        w[int(rng.integers(len(w)))] = int(rng.choice([-2, 1, 2]))
        y = np.where(rng.random(len(X)) < 0.5, -1, 1)
        cases.append(Case((w, int(rng.integers(-3, 4)), X, y), "random integer input, any labels (the margin may be negative)"))
    return lists_at_random(rng, cases, ("w", "b", "X", "y"), ("w", "X", "y"))


SET_MARGIN = Check("set_margin", ("w", "b", "X", "y"), _margin_cases, geometry.set_margin, compare_number(returns="float"))

CHECKS = (AUGMENT, PREDICT, SIGNED_DISTANCE, SET_MARGIN)
