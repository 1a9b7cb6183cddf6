"""Checks of assignment 04_convergence: radius, proof_terms and mistake_bound."""

from __future__ import annotations

import numpy as np

from .... import perceptron, theory
from .algorithm import training_cases
from .framework import (
    N_RANDOM_CASES, Case, Check, compare_arrays, compare_number, compare_tuple, lists_at_random, random_integer_points,
    random_points,
)


def _radius_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[3.0, 4.0], [1.0, 0.0]]),), "the visible test's points (the longest row has norm 5)"),
        Case((np.array([[10.0, 0.0], [12.0, 0.0]]),), "points far from the origin: the radius is measured from the origin, not from the data's centre"),
        Case((np.array([[-3]]),), "a single point (n = 1, d = 1), integer input"),
    ]
    cases += [Case((np.round(random_points(rng) + rng.normal(size=1) * 5, 3),), "random points, not centred")
              for _ in range(N_RANDOM_CASES)]
    cases += [Case((random_integer_points(rng, low=-9, high=10),), "random integer points") for _ in range(4)]
    return lists_at_random(rng, cases, ("X",), ("X",))


RADIUS = Check("radius", ("X",), _radius_cases, theory.radius, compare_number())


def _proof_cases(rng: np.random.Generator) -> list[Case]:
    cases = [Case((np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 3.0]]), np.array([0.6, 0.8])), "the visible test's history")]
    for case in training_cases(rng, visible=[]):
        if "XOR" in case.behaviour:
            continue
        X, y = case.args
        data = np.hstack([np.ones((len(X), 1)), X])
        history = perceptron.train(data, y, bias=False, max_epochs=100).weight_history
        w_star, _ = theory.max_margin(data, y)
        cases.append(Case((np.array(history), w_star), case.behaviour.split(" (max_epochs")[0]))
    return cases


PROOF_TERMS = Check(
    "proof_terms", ("history", "w_star"), _proof_cases, theory.proof_quantities,
    compare_tuple(("alignment", "squared_norm"), (compare_arrays(exact=False, what="an array of shape (k + 1,)"),
                                                  compare_arrays(exact=False, what="an array of shape (k + 1,)"))),
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
    return lists_at_random(rng, cases, ("X", "y"), ("X", "y"))


def _reference_bound(X, y):
    return theory.mistake_bound(X, y, bias=True)


MISTAKE_BOUND = Check("mistake_bound", ("X", "y"), _bound_cases, _reference_bound, compare_number())

CHECKS = (RADIUS, PROOF_TERMS, MISTAKE_BOUND)
