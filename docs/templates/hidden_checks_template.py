"""Hidden checks of assignment NN_topic (a template: copy it to source/<assignment>/hidden_checks.py).

One ``Check`` per graded part, listed in ``CHECKS`` at the end. The four below show the common
shapes; keep the ones you need, rename them after your functions, delete the rest:

- ``scale``: returns an array, compared to a tolerance;
- ``classify``: returns -1/+1 labels, compared exactly (a tie, a score of exactly 0, drawn at random);
- ``spread``: returns one number;
- ``walk``: returns a run's history (one row per step, the start first).

Each reference is the function of the same name in the notebook's solution cell (``solution``),
run on the grader's side. Where a library function is what the lecture teaches, use it instead
(``reference=geometry.augment``). This file is never released, never bundled, never sent to a
student's kernel. See docs/adding-a-part.md.
"""

from __future__ import annotations

import numpy as np

from course_grader.checks_api import (
    Case, Check, compare_arrays, compare_history, compare_labels, compare_number, lists_at_random,
    points_with_zero_score, random_cases, random_integer_points, random_points, solution,
)

# ----------------------------------------------------------------------------- an array, to a tolerance


def _scale_cases(rng: np.random.Generator) -> list[Case]:
    """Named cases first (public: feedback shows them), then random ones drawn from ``rng`` only."""
    cases = [
        Case((np.array([[1.0, 2.0]]), 2.0), "the visible test's point"),
        Case((np.array([[3]]), -1.0), "integer input (n = 1, d = 1), which must give floats"),
    ]
    cases += random_cases(rng, lambda rng: (random_points(rng), round(float(rng.normal()), 3)), "random points and factor")
    # every stated boundary is drawn at random too: integer input here
    cases += random_cases(rng, lambda rng: (random_integer_points(rng), float(rng.integers(-3, 4))),
                          "random integer points", count=4)
    # ``array_like`` in the docstring: some random cases pass X as Python lists
    return lists_at_random(rng, cases, ("X", "factor"), ("X",))


SCALE = Check("scale", ("X", "factor"), _scale_cases, solution("scale", __file__),
              compare_arrays(exact=False, what="an array of shape (n, d)", rtol=1e-9, atol=1e-9))

# ----------------------------------------------------------------------------- labels


def _classify_cases(rng: np.random.Generator) -> list[Case]:
    w, b = np.array([1.0, -1.0]), 0.0
    cases = [Case((w, b, np.array([[2.0, 1.0], [1.0, 1.0]])), "the visible test (the second point scores exactly 0)")]
    cases += random_cases(rng, lambda rng: (np.round(rng.normal(size=2), 3), 0.5,
                                            np.round(rng.normal(size=(int(rng.integers(1, 20)), 2)), 3)), "random points")
    for _ in range(6):  # the stated boundary, a score of exactly 0, at random places
        w = rng.integers(-3, 4, size=3)
        w[rng.integers(3)] = rng.choice([-2, -1, 1, 2])
        on_boundary = points_with_zero_score(rng, w, 1, n=3)
        X = np.vstack([random_integer_points(rng, 3, 3).astype(float), on_boundary])
        cases.append(Case((w.astype(float), 1.0, rng.permutation(X)), "random points, some with a score of exactly 0"))
    return cases


CLASSIFY = Check("classify", ("w", "b", "X"), _classify_cases, solution("classify", __file__), compare_labels())

# ----------------------------------------------------------------------------- a number


def _spread_cases(rng: np.random.Generator) -> list[Case]:
    cases = [Case((np.array([[3.0, 4.0], [0.0, 0.0]]),), "the visible test's two points")]
    cases += random_cases(rng, lambda rng: (random_points(rng),), "random points")
    return lists_at_random(rng, cases, ("X",), ("X",))


SPREAD = Check("spread", ("X",), _spread_cases, solution("spread", __file__), compare_number(rtol=1e-7, atol=1e-9))

# ----------------------------------------------------------------------------- a run's history


def _walk_cases(rng: np.random.Generator) -> list[Case]:
    cases = [Case((np.array([1.0, 0.0]), 3), "the visible test's three steps"),
             Case((np.array([2.0]), 0), "no step at all: the history is the start alone")]
    cases += random_cases(rng, lambda rng: (np.round(rng.normal(size=int(rng.integers(1, 4))), 3), int(rng.integers(0, 6))),
                          "random start and number of steps")
    return cases


WALK = Check("walk", ("step", "n_steps"), _walk_cases, solution("walk", __file__),
             compare_history("the position after each step, the start first: shape (n_steps + 1, d)"))

#: Every check of this assignment: one per graded test cell, whose hidden-test region calls check_<function>(<function>).
CHECKS = (SCALE, CLASSIFY, SPREAD, WALK)

# Optional: what a submission may import without a flag for a TA (the default is COMMON_IMPORTS).
# from course_grader.checks_api import COMMON_IMPORTS
# ALLOWED_IMPORTS = COMMON_IMPORTS | {"scipy.optimize"}
