"""Checks of assignment 02_algorithm: perceptron_step, train_perceptron and choose_epoch_cap."""

from __future__ import annotations

import numpy as np

from .... import perceptron
from ....datasets import linearly_separable, xor
from .framework import (
    N_RANDOM_CASES, Case, Check, compare_arrays, compare_bool, compare_count, compare_number, compare_tuple,
)


def reference_step(w, b, x, y):
    """The reference of one perceptron step (the library trains whole runs only)."""
    w, x = np.asarray(w, dtype=float), np.asarray(x, dtype=float)
    if perceptron.is_mistake(float(x @ w + b), int(y), "margin"):
        return w + y * x, float(b + y), True
    return w, float(b), False


def _step_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.zeros(2), 0.0, np.array([1.0, 2.0]), 1), "the visible test's first step at w = 0 (score exactly 0: a mistake)"),
        Case((np.array([1.0, 2.0]), 1.0, np.array([1.0, 2.0]), 1), "the visible test's second step (correctly classified: nothing changes)"),
        Case((np.zeros(3), 0.0, np.array([1.0, 2.0, 3.0]), 1), "a point with score exactly 0 and label +1, which must count as a mistake"),
        Case((np.zeros(2), 0.0, np.array([1.0, -1.0]), -1), "a point with score exactly 0 and label -1, which must count as a mistake"),
        Case((np.array([1.0, 1.0]), 0.5, np.array([2.0, 2.0]), 1), "a correctly classified point, which must not change w or b"),
        Case((np.array([1.0, 1.0]), 0.5, np.array([2.0, 2.0]), -1), "a misclassified point: w <- w + y x and b <- b + y"),
        Case((np.array([2]), 1, np.array([-3]), 1), "integer input with d = 1"),
    ]
    for _ in range(N_RANDOM_CASES):
        d = int(rng.integers(1, 6))
        cases.append(Case((rng.normal(size=d), float(rng.normal()), rng.normal(size=d), int(rng.choice([-1, 1]))),
                          "random weights and point"))
    return cases


PERCEPTRON_STEP = Check(
    "perceptron_step", ("w", "b", "x", "y"), _step_cases, reference_step,
    compare_tuple(("w_new", "b_new", "mistake"),
                  (compare_arrays(exact=False, what="new weights of shape (d,)"), compare_number(), compare_bool())),
)


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
        n, d = int(rng.integers(2, 40)), int(rng.integers(1, 5))
        X, y = linearly_separable(n, d, margin=float(rng.uniform(0.02, 0.2)), seed=int(rng.integers(1 << 30)))
        epochs = epochs_to_converge(X, y)
        cap = int(rng.choice([100, epochs, max(epochs - 1, 1)]))
        cases.append(Case((X, y), f"random separable data (max_epochs = {cap}; it converges in {epochs} epochs)",
                          {"max_epochs": cap}))
    return cases


def _reference_train(X, y, max_epochs):
    run = perceptron.train(X, y, max_epochs=max_epochs)
    return run.w, run.b, run.n_mistakes, run.converged


def _train_cases(rng: np.random.Generator) -> list[Case]:
    four_X, four_y = np.array([[2.0, 1.0], [-1.0, -2.0], [1.0, 3.0], [-2.0, -1.0]]), np.array([1, -1, 1, -1])
    visible = [
        Case((four_X, four_y), "the visible test's four separable points", {"max_epochs": 100}),
        Case((np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]), np.array([-1, -1, 1, 1])),
             "the visible test's XOR points", {"max_epochs": 5}),
    ]
    return training_cases(rng, visible=visible)


TRAIN_PERCEPTRON = Check(
    "train_perceptron", ("X", "y"), _train_cases, _reference_train,
    compare_tuple(("w", "b", "n_mistakes", "converged"),
                  (compare_arrays(exact=False, what="weights of shape (d,)"), compare_number(what="a number b"),
                   compare_count("an int"), compare_bool())),
)


def _reference_cap(X_train, y_train, X_dev, y_dev, caps):
    """The smallest cap among those with the best dev accuracy of the reference perceptron."""
    runs = {cap: perceptron.train(X_train, y_train, max_epochs=cap) for cap in caps}
    accuracy = {cap: perceptron.accuracy(run.w, run.b, X_dev, y_dev) for cap, run in runs.items()}
    best = max(accuracy.values())
    return min(cap for cap, value in accuracy.items() if value == best)


def _noisy_split(rng: np.random.Generator, n_train: int, n_dev: int, flip: float):
    X, y = linearly_separable(n_train + n_dev, int(rng.integers(1, 4)), margin=0.02, seed=int(rng.integers(1 << 30)))
    y = np.where(rng.random(len(y)) < flip, -y, y)  # label noise: not separable, so the cap matters
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _cap_cases(rng: np.random.Generator) -> list[Case]:
    four_X, four_y = np.array([[2.0, 1.0], [-1.0, -2.0], [1.0, 3.0], [-2.0, -1.0]]), np.array([1, -1, 1, -1])
    cases = [
        Case((four_X, four_y, np.array([[3.0, 3.0], [-3.0, -2.0]]), np.array([1, -1]), [10, 1, 50]),
             "the visible test's separable points, where every cap ties: the smallest cap wins"),
        Case((four_X, four_y, np.array([[3.0, 3.0]]), np.array([1]), [7]), "a single candidate cap"),
    ]
    noisy = _noisy_split(np.random.default_rng(4), 30, 15, 0.2)
    cases.append(Case((*noisy, [25, 3, 12, 1, 6]), "noisy data with caps out of order (the smallest best cap, not the first)"))
    for _ in range(N_RANDOM_CASES):
        split = _noisy_split(rng, int(rng.integers(8, 40)), int(rng.integers(3, 20)), float(rng.uniform(0.05, 0.3)))
        caps = [int(cap) for cap in rng.choice(np.arange(1, 31), size=int(rng.integers(2, 7)), replace=False)]
        cases.append(Case((*split, caps), "random noisy data and caps"))
    return cases


CHOOSE_EPOCH_CAP = Check("choose_epoch_cap", ("X_train", "y_train", "X_dev", "y_dev", "caps"), _cap_cases,
                         _reference_cap, compare_count("one of the caps (an int)"))

CHECKS = (PERCEPTRON_STEP, TRAIN_PERCEPTRON, CHOOSE_EPOCH_CAP)
