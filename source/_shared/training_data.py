"""Training data for this course's hidden checks: named edge cases and random separable data sets with epoch caps
on their boundary.

Shared by every assignment whose functions train a perceptron (the algorithm, the worked example, the convergence
proof, the limitations), so that no assignment's ``hidden_checks.py`` imports another's: dropping one leaves the
others whole. A check loads it with ``course_module(__file__, "training_data")`` (the grader's check API); like the
hidden checks, nothing in ``source/_shared/`` is released.
"""

from __future__ import annotations

import numpy as np

from perceptron_course import perceptron
from perceptron_course.datasets import linearly_separable, xor
from course_grader.checks_api import N_RANDOM_CASES, Case, random_integer_points

#: Random cases of a check drawn on a stated boundary (a score of exactly 0, integer data, ...).
N_BOUNDARY_CASES = 6


def epochs_to_converge(X, y, *, bias: bool = True, rule: str = "margin") -> int:
    """Passes the reference needs on separable data, the last (clean) one included."""
    return perceptron.train(X, y, bias=bias, rule=rule, max_epochs=10_000).epochs


def boundary_cases(X, y, what: str, *, bias: bool = True, rule: str = "margin") -> list[tuple[int, str]]:
    """``(max_epochs, behaviour)`` pairs that sit on the epoch cap of this data set."""
    epochs = epochs_to_converge(X, y, bias=bias, rule=rule)
    return [
        (epochs, f"{what} that converges exactly on its last allowed epoch (max_epochs = {epochs})"),
        (epochs - 1, f"{what} that needs one epoch more than allowed (max_epochs = {epochs - 1})"),
    ]


def training_cases(rng: np.random.Generator, *, visible: list[Case]) -> list[Case]:
    """Named cases (the visible ones first, then edge cases), then random separable data sets.

    Random data sets get a cap of 100, or the exact epoch they converge on, or one less.
    """
    xor_X, xor_y = xor()
    boundary_X, boundary_y = linearly_separable(12, 2, margin=0.05, seed=7)
    cases = list(visible) + [
        Case((np.array([[1.0, 2.0], [-1.0, -1.0]]), np.array([1, -1])),
             "a first point that is positive with score exactly 0 at w = 0, which must count as a mistake", {"max_epochs": 100}),
        Case((xor_X, xor_y), "non-separable data (XOR), which must stop after max_epochs with converged False", {"max_epochs": 7}),
        Case((np.array([[2.0]]), np.array([-1])), "a single point (n = 1, d = 1)", {"max_epochs": 10}),
        Case((np.array([[1, 0], [0, 1], [-1, -1], [2, 2]]), np.array([1, 1, -1, 1])), "integer input", {"max_epochs": 50}),
        Case((np.array([[0.0, 1.0], [0.0, 2.0], [1.0, 0.0]]), np.array([1, 1, -1])), "data that need a bias b", {"max_epochs": 100}),
    ]
    cases += [Case((boundary_X, boundary_y), what, {"max_epochs": cap})
              for cap, what in boundary_cases(boundary_X, boundary_y, "separable data")]
    for _ in range(N_RANDOM_CASES):
        X, y = short_separable_data(rng)
        cases.append(_capped_case(rng, X, y, "random separable data"))
    for _ in range(N_BOUNDARY_CASES):
        X, y = separable_integer_data(rng)
        cases.append(_capped_case(rng, X, y, "random separable integer data"))
    return cases


def short_separable_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random separable data rounded to 3 decimals (a failed call reads short), drawn again if rounding joined the classes."""
    while True:
        n, d = int(rng.integers(2, 40)), int(rng.integers(1, 5))
        X, y = linearly_separable(n, d, margin=float(rng.uniform(0.02, 0.2)), seed=int(rng.integers(1 << 30)))
        X = np.round(X, 3)
        if perceptron.train(X, y, max_epochs=2_000).converged:
            return X, y


def _capped_case(rng: np.random.Generator, X: np.ndarray, y: np.ndarray, what: str) -> Case:
    """A training case with a cap of 100, or exactly the epochs it needs, or one less (drawn at random)."""
    epochs = epochs_to_converge(X, y)
    cap = int(rng.choice([100, epochs, max(epochs - 1, 1)]))
    return Case((X, y), f"{what} (max_epochs = {cap}; it converges in {epochs} epochs)", {"max_epochs": cap})


def separable_integer_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random int64 points labelled by a random integer hyperplane (no point on it), both labels present."""
    while True:
        d = int(rng.integers(1, 4))
        X = random_integer_points(rng, int(rng.integers(2, 16)), d)
        w, b = rng.integers(-3, 4, size=d), int(rng.integers(-2, 3))
        scores = X @ w + b
        keep = scores != 0
        X, y = X[keep], np.where(scores[keep] > 0, 1, -1)
        if len(set(y.tolist())) == 2:
            return X, y
