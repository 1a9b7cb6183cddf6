"""Checks of assignment 02_algorithm: perceptron_step, train_perceptron and choose_epoch_cap."""

from __future__ import annotations

import numpy as np

from perceptron_course import perceptron
from perceptron_course.datasets import linearly_separable
from course_grader.checks_api import (
    N_RANDOM_CASES, Case, Check, compare_arrays, compare_bool, compare_count, compare_number, compare_tuple,
    course_module, integer_weights_and_tiny_scores, lists_at_random, points_with_zero_score, power_of_two, random_integer_points, random_labels, sign,
    solution,
)

_contracts = course_module(__file__, "contracts")
_training = course_module(__file__, "training_data")
N_BOUNDARY_CASES = _training.N_BOUNDARY_CASES
epochs_to_converge = _training.epochs_to_converge
separable_integer_data = _training.separable_integer_data
training_cases = _training.training_cases


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
        cases.append(Case((np.round(rng.normal(size=d), 3), round(float(rng.normal()), 3), np.round(rng.normal(size=d), 3),
                           int(rng.choice([-1, 1]))), "random weights and point"))
    for _ in range(N_BOUNDARY_CASES):
        cases.append(_zero_score_step(rng))
    d = int(rng.integers(1, 5))
    cases.append(Case((rng.integers(-4, 5, size=d), int(rng.integers(-4, 5)), rng.integers(-4, 5, size=d), int(rng.choice([-1, 1]))),
                      "random integer input (w, b and x whole numbers): w_new must be floats"))
    cases += _tiny_margin_steps(rng)
    return cases


def _tiny_margin_steps(rng: np.random.Generator) -> list[Case]:
    """Two random steps whose margin ``y (w·x + b)`` is a tiny ``+2**-k`` (no mistake) and ``-2**-k`` (a mistake)."""
    w, b, X = integer_weights_and_tiny_scores(rng, 2, int(rng.integers(1, 5)))  # both rows tiny, one of each sign
    scores = X @ w + b
    steps = []
    for margin_sign, verdict in ((1, "not a mistake, nothing changes"), (-1, "a mistake")):
        row = int(rng.integers(2))
        label = margin_sign * int(np.sign(scores[row]))
        steps.append(Case((w.astype(float), float(b), X[row], label),
                          f"random point whose margin y (w·x + b) is a tiny {'+' if margin_sign > 0 else '-'}2**-k: {verdict} "
                          "(no rounding or tolerance around 0)"))
    return steps


def _zero_score_step(rng: np.random.Generator) -> Case:
    """A random step whose score ``w·x + b`` is exactly 0 (whole numbers, or their halves), either label."""
    d = int(rng.integers(1, 5))
    w, x = rng.integers(-4, 5, size=d), rng.integers(-4, 5, size=d)
    b, label = -int(w @ x), int(rng.choice([-1, 1]))
    if rng.random() < 0.5:
        return Case((w.astype(float) / 2, b / 2, x.astype(float), label),
                    f"random point whose score is exactly 0, label {label:+d}: a mistake under the rule y (w·x + b) <= 0")
    return Case((w, b, x, label),
                f"random integer point whose score is exactly 0, label {label:+d}: a mistake under the rule y (w·x + b) <= 0")


# The reference is the source notebook's own solution: the library trains whole runs and has no single step,
# so the answer to a step would otherwise be written twice (here and in the solution cell). Elsewhere the
# library is what the lectures teach, and stays the reference.
PERCEPTRON_STEP = Check(
    "perceptron_step", ("w", "b", "x", "y"), _step_cases, solution("perceptron_step", __file__),
    compare_tuple(("w_new", "b_new", "mistake"),
                  (compare_arrays(exact=False, what="new weights of shape (d,)", returns="ndarray of float"),
                   compare_number(returns="float or int"),
                   compare_bool()), a_tuple=True),
    new_arrays=True,  # "A new array: w itself is not modified"
)


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
    cases = training_cases(rng, visible=visible)
    for _ in range(N_BOUNDARY_CASES // 2):
        X, y, _, _ = _noisy_split(rng, int(rng.integers(4, 30)), 0, 0.3)
        cap = int(rng.integers(1, 12))
        cases.append(Case((X, y), f"random noisy data, maybe not separable, which must stop after max_epochs = {cap} "
                          "(converged only if the last epoch made no mistake)", {"max_epochs": cap}))
    return lists_at_random(rng, cases, ("X", "y"), ("X", "y"))


TRAIN_PERCEPTRON = Check(
    "train_perceptron", ("X", "y"), _train_cases, _reference_train,
    compare_tuple(("w", "b", "n_mistakes", "converged"),
                  (compare_arrays(exact=False, what="weights of shape (d,)", returns="ndarray of float"),
                   compare_number(what="a number b", returns="float"),
                   compare_count("an int", returns="int"), compare_bool()), a_tuple=True),
    precondition=lambda X, y, max_epochs: _contracts.broken(_contracts.rows_of(X, y), _contracts.labels(y),
                                                            _contracts.count_at_least_one(max_epochs, "max_epochs")),
)


def _reference_cap(X_train, y_train, X_dev, y_dev, caps):
    """The smallest cap among those with the best dev accuracy of the reference perceptron."""
    run = perceptron.train(X_train, y_train, max_epochs=max(caps))  # each cap's run is its first passes
    accuracy = {cap: perceptron.accuracy(*run.weights_after(cap), X_dev, y_dev) for cap in caps}
    best = max(accuracy.values())
    return min(cap for cap, value in accuracy.items() if value == best)


def _cap_by_np_sign(X_train, y_train, X_dev, y_dev, caps):
    """What ``_reference_cap`` gives when dev labels are predicted with ``np.sign`` (sign(0) = 0, never a label)."""
    run = perceptron.train(X_train, y_train, max_epochs=max(caps))
    weights = {cap: run.weights_after(cap) for cap in caps}
    accuracy = {cap: float(np.mean(np.sign(np.asarray(X_dev, float) @ w + b) == y_dev)) for cap, (w, b) in weights.items()}
    best = max(accuracy.values())
    return min(cap for cap, value in accuracy.items() if value == best)


def _zero_score_dev_case(rng: np.random.Generator) -> Case | None:
    """Random integer data whose dev set holds points with a score of exactly 0 under one cap's weights.

    Drawn until the answer with sign(0) = +1 differs from the one ``np.sign`` gives, so the
    convention decides the case (``None`` if no draw of a few does).
    """
    for _ in range(30):
        n, d = int(rng.integers(4, 14)), int(rng.integers(1, 4))
        X, y = random_integer_points(rng, n, d, -3, 4), random_labels(rng, n)
        caps = [int(cap) for cap in rng.choice(np.arange(1, 10), size=int(rng.integers(2, 5)), replace=False)]
        favoured = perceptron.train(X, y, max_epochs=int(rng.choice(caps)))
        zeros = points_with_zero_score(rng, favoured.w, favoured.b, int(rng.integers(1, 4)), -3, 4)
        if not len(zeros):
            continue
        others = random_integer_points(rng, int(rng.integers(0, 4)), d, -3, 4).astype(float)
        X_dev = np.vstack([zeros, others])
        y_dev = np.concatenate([np.ones(len(zeros), dtype=np.int64), random_labels(rng, len(others))])
        order = rng.permutation(len(X_dev))
        X_dev, y_dev = X_dev[order], y_dev[order]
        if _reference_cap(X, y, X_dev, y_dev, caps) != _cap_by_np_sign(X, y, X_dev, y_dev, caps):
            return Case((X, y, X_dev, y_dev, caps), "random integer data with dev points whose score is exactly 0 "
                        "(they are predicted +1: sign(0) = +1)")
    return None


def _separable_cap_case(rng: np.random.Generator) -> Case:
    """Random separable data with caps around its convergence: every cap from convergence on ties."""
    X, y = separable_integer_data(rng) if rng.random() < 0.5 else linearly_separable(
        int(rng.integers(6, 30)), int(rng.integers(1, 4)), margin=0.05, seed=int(rng.integers(1 << 30)))
    split = max(len(X) * 2 // 3, 1)
    epochs = epochs_to_converge(X[:split], y[:split])
    caps = sorted({max(epochs - 1, 1), epochs, epochs + int(rng.integers(1, 5)), int(rng.integers(1, epochs + 8))})
    caps = [int(cap) for cap in rng.permutation(caps)]
    return Case((X[:split], y[:split], X[split:], y[split:], caps),
                "random separable data, where every cap from convergence on ties: the smallest best cap wins")


def _every_cap_scores_zero_case(rng: np.random.Generator) -> Case:
    """Random training data, caps, and dev points every cap's perceptron misclassifies: each cap scores 0.

    The dev points are drawn at random and kept where all caps predict the same label (sign(0) = +1),
    then given the other label. Every cap ties at accuracy 0, so the answer is the smallest cap, still
    one of the caps (a search that only keeps a cap when it beats 0 returns nothing).
    """
    while True:
        n, d = int(rng.integers(3, 20)), int(rng.integers(1, 4))
        X, y = (separable_integer_data(rng) if rng.random() < 0.5
                else linearly_separable(n, d, margin=0.05, seed=int(rng.integers(1 << 30))))
        caps = [int(cap) for cap in rng.choice(np.arange(1, 12), size=int(rng.integers(1, 5)), replace=False)]
        run = perceptron.train(X, y, max_epochs=max(caps))
        weights = [run.weights_after(cap) for cap in caps]
        candidates = np.round(rng.normal(scale=2.0, size=(40, X.shape[1])), 2)
        predicted = np.array([np.where(candidates @ w + b >= 0, 1, -1) for w, b in weights])
        agreed = np.flatnonzero(np.all(predicted == predicted[0], axis=0))
        if len(agreed):
            keep = rng.choice(agreed, size=min(len(agreed), int(rng.integers(1, 6))), replace=False)
            return Case((X, y, candidates[keep], -predicted[0][keep], caps),
                        "random data with a dev set that every cap's perceptron gets wrong: every cap scores 0, "
                        "so every cap ties and the smallest cap wins (still one of the caps)")


def _noisy_split(rng: np.random.Generator, n_train: int, n_dev: int, flip: float):
    X, y = linearly_separable(n_train + n_dev, int(rng.integers(1, 4)), margin=0.02, seed=int(rng.integers(1 << 30)))
    y = np.where(rng.random(len(y)) < flip, -y, y)  # label noise: not separable, so the cap matters
    X = np.round(X, 3)  # a failed call reads short
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
        caps = [int(cap) for cap in rng.choice(np.arange(1, 31), size=int(rng.integers(1, 7)), replace=False)]
        cases.append(Case((*split, caps), "random noisy data and caps"))
    for _ in range(N_BOUNDARY_CASES // 2):
        cases.append(_separable_cap_case(rng))
    cases += [_every_cap_scores_zero_case(rng) for _ in range(2)]
    zero_cases = [_zero_score_dev_case(rng) for _ in range(N_BOUNDARY_CASES // 2)]
    cases += [case for case in zero_cases if case is not None]
    return lists_at_random(rng, cases, ("X_train", "y_train", "X_dev", "y_dev", "caps"), ("X_train", "y_train", "X_dev", "y_dev"))


def _cap_contract(X_train, y_train, X_dev, y_dev, caps) -> str:
    """The docstring: labels -1/+1 for the rows of each set, and caps a list of ints >= 1."""
    counts = "" if isinstance(caps, list) and caps else "caps is not a non-empty list"
    return _contracts.broken(_contracts.rows_of(X_train, y_train, "X_train", "y_train"), _contracts.labels(y_train, "y_train"),
                             _contracts.rows_of(X_dev, y_dev, "X_dev", "y_dev"), _contracts.labels(y_dev, "y_dev"),
                             counts, *(_contracts.count_at_least_one(cap, "a cap") for cap in caps or []))


CHOOSE_EPOCH_CAP = Check("choose_epoch_cap", ("X_train", "y_train", "X_dev", "y_dev", "caps"), _cap_cases,
                         _reference_cap, compare_count("one of the caps (an int)", noun="cap", returns="int"), precondition=_cap_contract,
                         # the data multiplied, labels flipped per set; the caps as sent (a cap times -1 is none)
                         second_call=lambda rng, case: {"X_train": power_of_two(rng, whole=True), "y_train": sign(rng),
                                                        "X_dev": power_of_two(rng, whole=True), "y_dev": sign(rng)})

CHECKS = (PERCEPTRON_STEP, TRAIN_PERCEPTRON, CHOOSE_EPOCH_CAP)
