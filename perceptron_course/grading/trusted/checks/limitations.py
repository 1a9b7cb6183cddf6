"""Checks of assignment 06_limitations: xor_features, kernel_perceptron and averaged_perceptron."""

from __future__ import annotations

import numpy as np

from .... import theory, variants
from ....datasets import linearly_separable, xor
from ..wire import Reply, python_literal
from .algorithm import boundary_cases
from .framework import (
    N_RANDOM_CASES, Case, Check, as_float_array, call_text, compare_arrays, compare_number, compare_tuple, lists_at_random,
    random_integer_points, random_labels, safe_case_failure,
)

#: Random cases of a check drawn on a stated boundary (the epoch cap, integer input, separable data).
N_BOUNDARY_CASES = 6
#: Most features per point xor_features may return (the judge solves a max-margin problem on them).
MAX_XOR_FEATURES = 1000

# ----------------------------------------------------------------------------- xor_features


def _xor_feature_cases(rng: np.random.Generator) -> list[Case]:
    """Noisy XOR samples (labels ride along as context), a fresh sample beside each, then points alone.

    Separability of one finite sample proves little: any map that memorises points (a one-hot
    id per point seen) makes every finite sample separable. A feature map makes XOR separable
    when a separator found on one sample also separates a fresh sample it has never seen.
    """
    corners, corner_labels = xor()
    samples = [(corners, corner_labels, "the visible test's four corners")]
    for _ in range(N_RANDOM_CASES):
        X, y = xor(3, noise=0.15, seed=int(rng.integers(1 << 30)))
        samples.append((X, y, "random noisy XOR clusters (12 points around the corners)"))
    cases = [Case((X,), what, context=("sample", y)) for X, y, what in samples]
    for k in range(1, len(samples)):
        X, y = xor(3, noise=0.15, seed=int(rng.integers(1 << 30)))
        cases.append(Case((X,), "random fresh noisy XOR sample, classified by a separator found on another sample",
                          context=("fresh", k, y)))
    cases += [Case((X[i : i + 1],), "random point of a noisy XOR sample, alone", context=("point", k, i))
              for k, (X, _, _) in enumerate(samples) for i in range(len(X))]
    # array_like: some fresh samples (random cases of their own) come as Python lists
    fresh = [i for i, case in enumerate(cases) if case.context[0] == "fresh"]
    for i in rng.choice(fresh, size=3, replace=False).tolist():
        case = cases[i]
        cases[i] = Case((case.args[0].tolist(),), case.behaviour + ", passed as Python lists (array_like)", context=case.context)
    return cases


def _separator(features: np.ndarray, labels: np.ndarray) -> np.ndarray | None:
    """The max-margin separator ``(b, w)`` of mapped points, or ``None`` if they are not separable."""
    if not theory.is_separable(features, labels, bias=True):
        return None
    weights, _ = theory.max_margin(np.hstack([np.ones((len(features), 1)), features]), labels)
    return weights


def _judge_xor_features(cases: list[Case], replies: list[Reply]) -> list[str]:
    failures = []
    mapped: dict[int, np.ndarray] = {}
    separators: dict[int, np.ndarray | None] = {}
    for k, (case, reply) in enumerate(zip(cases, replies)):
        if not reply.returned:
            failures.append(safe_case_failure(XOR_FEATURES, case, reply))
            continue
        features = as_float_array(reply.result)
        call = call_text(XOR_FEATURES, case)
        n = len(case.args[0])
        if features is None or features.ndim != 2 or features.shape[0] != n:
            shape = "" if features is None else f" of shape {features.shape}"
            failures.append(f"xor_features must return one row of features per point, shape ({n}, k); it returned "
                            f"something{shape} on {case.behaviour}:\n    {call}")
            continue
        if features.shape[1] > MAX_XOR_FEATURES:
            failures.append(f"xor_features returned {features.shape[1]} features per point (at most {MAX_XOR_FEATURES} "
                            f"are judged) on {case.behaviour}:\n    {call}")
            continue
        if not np.all(np.isfinite(features)):
            failures.append(f"xor_features returned NaN or infinite features on {case.behaviour}:\n    {call}")
            continue
        kind = case.context[0]
        if kind == "sample":
            mapped[k] = features
            separators[k] = _separator(features, case.context[1])
            if separators[k] is None:
                failures.append(f"the mapped points are not linearly separable on {case.behaviour}:\n    {call}\n"
                                f"  labels: {python_literal(case.context[1])}\n  received: {python_literal(features, limit=1500)}")
        elif kind == "fresh":
            _, sample, labels = case.context
            separator = separators.get(sample)
            if separator is None:
                continue  # the sample itself already failed, and said why
            if separator.shape[0] != features.shape[1] + 1:
                failures.append("xor_features must give every point the same number of features: a fresh sample got "
                                f"{features.shape[1]}, another sample {separator.shape[0] - 1}:\n    {call}")
                continue
            predicted = np.where(np.hstack([np.ones((n, 1)), features]) @ separator >= 0, 1, -1)
            if not np.array_equal(predicted, labels):
                failures.append("xor_features does not make XOR separable, only the points it has seen: a separator "
                                "found on one noisy sample misclassifies a fresh sample (a map must depend on the "
                                f"point's coordinates, not remember points):\n    {call}")
        else:
            _, sample, row = case.context
            whole = mapped.get(sample)
            if whole is not None and (whole.shape[1] != features.shape[1] or not np.allclose(whole[row], features[0])):
                failures.append("xor_features must map each point on its own: a row must not depend on the other rows "
                                f"(the point alone gave {python_literal(features[0])}, within its sample "
                                f"{python_literal(whole[row])}):\n    {call}")
    return list(dict.fromkeys(failures))


XOR_FEATURES = Check("xor_features", ("X",), _xor_feature_cases, judge=_judge_xor_features)

# ----------------------------------------------------------------------------- kernel_perceptron


def _reference_kernel_perceptron(K, y, max_epochs):
    index_points = np.arange(len(y), dtype=float)[:, None]

    def precomputed(A, B):
        return np.asarray(K, dtype=float)[np.ix_(A[:, 0].astype(int), B[:, 0].astype(int))]

    return variants.train_kernel(index_points, y, kernel=precomputed, bias=False, max_epochs=max_epochs).alpha


def _kernel_cases(rng: np.random.Generator) -> list[Case]:
    corners, corner_labels = xor()
    visible_K = (corners @ corners.T + 1.0) ** 2
    boundary_X, boundary_y = linearly_separable(12, 2, margin=0.05, bias=False, seed=5)
    cases = [
        Case((visible_K, corner_labels, 20), "the visible test's XOR corners with the kernel (x·z + 1)^2"),
        Case((variants.linear_kernel(corners, corners), corner_labels, 4), "non-separable (linear kernel on XOR): stop after max_epochs"),
        Case((np.array([[4.0]]), np.array([1]), 5), "a single point: a score of exactly 0 at the start is a mistake"),
        Case((np.array([[2, 1], [1, 2]]), np.array([1, -1]), 10), "an integer Gram matrix"),
    ]
    linear = variants.linear_kernel(boundary_X, boundary_X)
    cases += [Case((linear, boundary_y, cap), what) for cap, what in
              boundary_cases(boundary_X, boundary_y, "a linear kernel on separable data", bias=False)]
    for _ in range(N_RANDOM_CASES):
        seed = int(rng.integers(1 << 30))
        X, y = xor(2, noise=0.2, seed=seed) if rng.random() < 0.5 else linearly_separable(15, 2, margin=0.05, seed=seed)
        kernel = variants.polynomial_kernel if rng.random() < 0.6 else (lambda A, B: variants.rbf_kernel(A, B, gamma=0.5))
        cases.append(Case((kernel(X, X), y, int(rng.choice([3, 30]))), "random data with a polynomial or RBF kernel"))
    for _ in range(N_BOUNDARY_CASES):
        cases.append(_random_capped_kernel_case(rng))
    return lists_at_random(rng, cases, ("K", "y", "max_epochs"), ("K", "y"))


def _random_capped_kernel_case(rng: np.random.Generator) -> Case:
    """A random integer Gram matrix (linear or quadratic kernel on integer points) capped at, or one before, its convergence."""
    while True:
        X = random_integer_points(rng, int(rng.integers(2, 10)), int(rng.integers(1, 4)), -3, 4)
        w, b = rng.integers(-3, 4, size=X.shape[1]), int(rng.integers(-2, 3))
        scores = X @ w + b
        X, y = X[scores != 0], np.where(scores[scores != 0] > 0, 1, -1)
        if len(X) == 0:
            continue
        gram = X @ X.T + 1 if rng.random() < 0.5 else (X @ X.T + 1) ** 2
        index_points = np.arange(len(y), dtype=float)[:, None]

        def precomputed(A, B, gram=gram):
            return gram[np.ix_(A[:, 0].astype(int), B[:, 0].astype(int))].astype(float)

        run = variants.train_kernel(index_points, y, kernel=precomputed, bias=False, max_epochs=200)
        if not run.converged:
            continue
        cap = int(rng.choice([run.epochs, max(run.epochs - 1, 1)]))
        return Case((gram, y, cap), f"random integer Gram matrix of separable points (max_epochs = {cap}; "
                    f"it converges in {run.epochs} epochs)")


KERNEL_PERCEPTRON = Check(
    "kernel_perceptron", ("K", "y", "max_epochs"), _kernel_cases, _reference_kernel_perceptron,
    compare_arrays(exact=True, what="alpha, an array of shape (n,) counting the mistakes on each point"),
)

# ----------------------------------------------------------------------------- averaged_perceptron


def _reference_averaged(X, y, epochs):
    return variants.averaged_weights(variants.train_voted(X, y, epochs=epochs))


def _averaged_cases(rng: np.random.Generator) -> list[Case]:
    cases = [
        Case((np.array([[1.0, 0.0]]), np.array([1]), 2), "the visible test's single point over two epochs"),
        Case((np.array([[1.0], [-1.0]]), np.array([1, 1]), 1), "the visible test's two points (a score of 0 is a mistake)"),
        Case((*linearly_separable(10, 2, margin=0.2, seed=3), 20),
             "separable data over 20 epochs, past convergence: the means are over all 20 * n visits"),
        Case((np.array([[1, 1], [-1, 2]]), np.array([1, -1]), 3), "integer input"),
    ]
    for _ in range(N_RANDOM_CASES):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 5))
        X = rng.normal(size=(n, d))
        cases.append(Case((X, random_labels(rng, n), int(rng.integers(1, 10))), "random, mostly non-separable data"))
    for _ in range(N_BOUNDARY_CASES):
        X = random_integer_points(rng, int(rng.integers(2, 10)), int(rng.integers(1, 4)), -3, 4)
        w, b = rng.integers(-3, 4, size=X.shape[1]), int(rng.integers(-2, 3))
        y = np.where(X @ w + b >= 0, 1, -1)
        cases.append(Case((X, y, int(rng.integers(3, 12))), "random integer separable data: the means are over all "
                          "epochs * n visits, past convergence too"))
    return lists_at_random(rng, cases, ("X", "y", "epochs"), ("X", "y"))


AVERAGED_PERCEPTRON = Check(
    "averaged_perceptron", ("X", "y", "epochs"), _averaged_cases, _reference_averaged,
    compare_tuple(("w_avg", "b_avg"), (compare_arrays(exact=False, what="weights of shape (d,)"), compare_number())),
)

CHECKS = (XOR_FEATURES, KERNEL_PERCEPTRON, AVERAGED_PERCEPTRON)
