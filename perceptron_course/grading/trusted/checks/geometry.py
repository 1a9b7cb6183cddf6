"""Checks of assignment 01_geometry: augment, predict, signed_distance, set_margin."""

from __future__ import annotations

import numpy as np

from .... import geometry, perceptron
from .framework import N_RANDOM_CASES, Case, Check, compare_arrays, compare_labels, compare_number, random_points


def _augment_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[2.0, 3.0], [4.0, 5.0]]),), "the visible test's two points"),
        Case((np.array([[3.0]]),), "a single point with a single feature (n = 1, d = 1)"),
        Case((np.arange(6).reshape(3, 2),), "integer input, which must give a float array with a column of ones"),
    ]
    return cases + [Case((random_points(rng),), "random points") for _ in range(N_RANDOM_CASES)]


AUGMENT = Check("augment", ("X",), _augment_cases, geometry.augment,
                compare_arrays(exact=True, what="an array of shape (n, d + 1)"))


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
        cases.append(Case((rng.normal(size=X.shape[1]), float(rng.normal()), X), "random weights and points"))
    return cases


PREDICT = Check("predict", ("w", "b", "X"), _predict_cases, perceptron.predict, compare_labels())


def _distance_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([3.0, 4.0]), -5.0, np.array([[3.0, 4.0], [0.0, 0.0]])), "the visible test's points"),
        Case((np.array([3, 4]), -5, np.array([[3, 4], [0, 0]])), "integer input (the distance divides by ||w||)"),
        Case((np.array([30.0, 40.0]), -50.0, np.array([[3.0, 4.0]])), "w and b scaled by 10, which must not change the distance"),
        Case((np.array([2.0]), 0.0, np.array([[-1.5]])), "a single point with a single feature (n = 1, d = 1)"),
    ]
    for _ in range(N_RANDOM_CASES):
        X = random_points(rng)
        w = rng.normal(size=X.shape[1]) * rng.choice([0.01, 1.0, 100.0])
        cases.append(Case((w, float(rng.normal()), X), "random weights, including long and short w"))
    return cases


SIGNED_DISTANCE = Check("signed_distance", ("w", "b", "X"), _distance_cases, geometry.signed_distance,
                        compare_arrays(exact=False, what="an array of shape (n,)"))


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
        w, b = rng.normal(size=X.shape[1]), float(rng.normal())
        y = np.where(X @ w + b >= 0, 1, -1)
        if rng.random() < 0.4:
            y[0] = -y[0]
        cases.append(Case((w, b, X, y), "random data, some with a misclassified point (negative margin)"))
    return cases


SET_MARGIN = Check("set_margin", ("w", "b", "X", "y"), _margin_cases, geometry.set_margin, compare_number())

CHECKS = (AUGMENT, PREDICT, SIGNED_DISTANCE, SET_MARGIN)
