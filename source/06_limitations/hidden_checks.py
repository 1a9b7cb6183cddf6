"""Checks of assignment 06_limitations: xor_features, kernel_perceptron, averaged_perceptron, hinge_sgd and mlp_forward."""

from __future__ import annotations

import numpy as np

from perceptron_course import theory, variants
from perceptron_course.datasets import linearly_separable, xor
from perceptron_course.geometry import augment
from course_grader.checks_api import (
    N_RANDOM_CASES, as_float_array, call_text, Case, Check, compare_arrays, compare_count, compare_labels,
    compare_number, compare_tuple, course_module, lists_at_random, power_of_two, python_literal, random_integer_points,
    random_labels, random_points, Reply, safe_case_failure, signs_like,
)

_contracts = course_module(__file__, "contracts")
_training = course_module(__file__, "training_data")
boundary_cases = _training.boundary_cases


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
    cases.append(Case((_points_on_an_axis(rng),), "random points on an axis (a coordinate exactly 0, the origin too): "
                      "the features must be finite numbers", context=("axis",)))
    cases.append(Case((corners.astype(int),), "the four corners as integers (X array_like: whole numbers): the features "
                      "must still be floats", context=("sample", corner_labels)))
    # array_like: some fresh samples (random cases of their own) come as Python lists
    fresh = [i for i, case in enumerate(cases) if case.context[0] == "fresh"]
    for i in rng.choice(fresh, size=3, replace=False).tolist():
        case = cases[i]
        cases[i] = Case((case.args[0].tolist(),), case.behaviour + ", passed as Python lists (array_like)", context=case.context)
    return cases


def _points_on_an_axis(rng: np.random.Generator) -> np.ndarray:
    """The origin and random points with one coordinate exactly 0 (which one, at random): where x1 x2 is 0."""
    points = np.round(rng.normal(size=(int(rng.integers(3, 8)), 2)), 3)
    points[np.arange(len(points)), rng.integers(2, size=len(points))] = 0.0
    points[int(rng.integers(len(points)))] = 0.0
    return points


#: What ``_separator`` gives when the solver could not answer: the sample and its fresh sample are left unjudged.
UNANSWERED = np.zeros(0)


def _separator(features: np.ndarray, labels: np.ndarray) -> np.ndarray | None:
    """The max-margin separator ``(b, w)`` of mapped points, ``None`` if they are not separable, ``UNANSWERED`` if
    the solver gave up (separable, but no max-margin separator found: never the student's failure)."""
    points = augment(features)
    # The max-margin separator is a combination of the points: solved in an orthonormal basis of their span (at most
    # n dimensions, whatever k is) and at unit scale, and mapped back, it is the same separator, found in a small,
    # well-scaled problem whatever dimension and scale a student's map chose.
    _, singular, rows = np.linalg.svd(points, full_matrices=False)
    basis = rows[singular > singular[0] * 1e-10].T if singular.size and singular[0] > 0 else rows[:0].T
    if basis.shape[1] == 0:
        return None  # every mapped point is 0 (its score is 0 for any separator)
    coordinates = points @ basis
    try:
        weights, _ = theory.max_margin(coordinates / np.abs(coordinates).max(), labels)
    except theory.NotSeparableError:
        return None
    except ArithmeticError:
        return UNANSWERED
    return basis @ weights


def _judge_xor_features(cases: list[Case], replies: list[Reply]) -> list[tuple[Case, str]]:
    """Each failed case with its message (a message said once, at its first case)."""
    failures: list[tuple[Case, str]] = []
    mapped: dict[int, np.ndarray] = {}
    separators: dict[int, np.ndarray | None] = {}
    for k, (case, reply) in enumerate(zip(cases, replies)):
        if not reply.returned:
            failures.append((case, safe_case_failure(XOR_FEATURES, case, reply)))
            continue
        features = as_float_array(reply.result)
        call = call_text(XOR_FEATURES, case)
        n = len(case.args[0])
        if features is None or features.ndim != 2 or features.shape[0] != n:
            shape = "" if features is None else f" of shape {features.shape}"
            failures.append((case, f"xor_features must return one row of features per point, shape ({n}, k); it returned "
                                    f"something{shape} on {case.behaviour}:\n    {call}"))
            continue
        if features.shape[1] > MAX_XOR_FEATURES:
            failures.append((case, f"xor_features returned {features.shape[1]} features per point (at most {MAX_XOR_FEATURES} "
                                    f"are judged) on {case.behaviour}:\n    {call}"))
            continue
        if not np.all(np.isfinite(features)):
            failures.append((case, f"xor_features returned NaN or infinite features on {case.behaviour}:\n    {call}"))
            continue
        if not (isinstance(reply.result, np.ndarray) and reply.result.dtype.kind == "f"):
            returned = (f"an ndarray of {reply.result.dtype}" if isinstance(reply.result, np.ndarray)
                        else f"a {type(reply.result).__name__}")
            failures.append((case, f"xor_features must return an ndarray of float, as its docstring says; it returned "
                                    f"{returned} on {case.behaviour}:\n    {call}\n  (np.asarray(X, dtype=float) first "
                                    "gives float features whatever the input)"))
            continue
        kind = case.context[0]
        if kind == "sample":
            mapped[k] = features
            separators[k] = _separator(features, case.context[1])
            if separators[k] is None:
                failures.append((case, f"the mapped points are not linearly separable on {case.behaviour}:\n    {call}\n"
                                        f"  labels: {python_literal(case.context[1])}\n  received: {python_literal(features, limit=1500)}"))
        elif kind == "fresh":
            _, sample, labels = case.context
            separator = separators.get(sample)
            if separator is None or separator is UNANSWERED:
                continue  # the sample itself already failed, and said why (or the solver could not judge it)
            if separator.shape[0] != features.shape[1] + 1:
                failures.append((case, "xor_features must give every point the same number of features: a fresh sample got "
                                        f"{features.shape[1]}, another sample {separator.shape[0] - 1}:\n    {call}"))
                continue
            predicted = np.where(np.hstack([np.ones((n, 1)), features]) @ separator >= 0, 1, -1)
            if not np.array_equal(predicted, labels):
                failures.append((case, "xor_features does not make XOR separable, only the points it has seen: a separator "
                                        "found on one noisy sample misclassifies a fresh sample (a map must depend on the "
                                        f"point's coordinates, not remember points):\n    {call}"))
        elif kind == "point":
            _, sample, row = case.context
            whole = mapped.get(sample)
            if whole is not None and (whole.shape[1] != features.shape[1] or not np.allclose(whole[row], features[0])):
                failures.append((case, "xor_features must map each point on its own: a row must not depend on the other rows "
                                        f"(the point alone gave {python_literal(features[0])}, within its sample "
                                        f"{python_literal(whole[row])}):\n    {call}"))
    first_case_of: dict[str, Case] = {}
    for case, message in failures:
        first_case_of.setdefault(message, case)
    return [(case, message) for message, case in first_case_of.items()]


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
    boundary_X = np.round(boundary_X, 3)  # a failed call reads short
    cases = [
        Case((visible_K, corner_labels, 20), "the visible test's XOR corners with the kernel (x·z + 1)^2"),
        Case((variants.linear_kernel(corners, corners), corner_labels, 4), "non-separable (linear kernel on XOR): stop after max_epochs"),
        Case((np.array([[4.0]]), np.array([1]), 5), "a single point: a score of exactly 0 at the start is a mistake"),
        Case((np.array([[2, 1], [1, 2]]), np.array([1, -1]), 10), "an integer Gram matrix"),
    ]
    linear = np.round(variants.linear_kernel(boundary_X, boundary_X), 6)  # products of 3-decimal numbers, without float noise
    cases += [Case((linear, boundary_y, cap), what) for cap, what in
              boundary_cases(boundary_X, boundary_y, "a linear kernel on separable data", bias=False)]
    for _ in range(N_RANDOM_CASES):
        seed = int(rng.integers(1 << 30))
        X, y = xor(2, noise=0.2, seed=seed) if rng.random() < 0.5 else linearly_separable(15, 2, margin=0.05, seed=seed)
        kernel = variants.polynomial_kernel if rng.random() < 0.6 else (lambda A, B: variants.rbf_kernel(A, B, gamma=0.5))
        # Multiples of 1/1024 (a call still reads short): every score sum_i alpha_i y_i K_ij is then exact in float64,
        # so a score of exactly 0 is a true tie whatever order a student sums in (3 decimals made ties that the
        # summation order decided, failing correct code).
        gram = np.round(kernel(X, X) * 1024) / 1024
        cases.append(Case((gram, y, int(rng.choice([3, 30]))), "random data with a polynomial or RBF kernel"))
    for _ in range(N_BOUNDARY_CASES):
        cases.append(_random_capped_kernel_case(rng))
    cases.append(_cut_short_kernel_case(rng))
    return lists_at_random(rng, cases, ("K", "y", "max_epochs"), ("K", "y"))


def _cut_short_kernel_case(rng: np.random.Generator) -> Case:
    """A random integer Gram matrix and labels, with a cap after which the run would still make mistakes."""
    while True:
        X = random_integer_points(rng, int(rng.integers(2, 9)), int(rng.integers(1, 3)), -2, 3)
        gram, y = X @ X.T + int(rng.integers(0, 2)), random_labels(rng, len(X))
        cap = int(rng.integers(1, 5))
        if not np.array_equal(_reference_kernel_perceptron(gram, y, cap), _reference_kernel_perceptron(gram, y, cap + 1)):
            return Case((gram, y, cap), f"random integer Gram matrix and labels that still make mistakes after "
                        f"max_epochs = {cap}: the run stops there")


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


def _kernel_contract(K, y, max_epochs) -> str:
    """The docstring: a square, symmetric Gram matrix, one label -1/+1 per row, max_epochs an int >= 1."""
    gram = np.asarray(K, dtype=float)
    square = gram.ndim == 2 and gram.shape == (len(np.asarray(y)),) * 2 and np.array_equal(gram, gram.T)
    return _contracts.broken("" if square else "K is not a symmetric n x n Gram matrix of the n labels",
                             _contracts.labels(y), _contracts.count_at_least_one(max_epochs, "max_epochs"))


def _kernel_second_call(rng: np.random.Generator, case: Case) -> dict:
    """K times one positive power of two (a Gram matrix stays one, whole entries whole), and a sign of its own for
    each label (another labelling of the same points: one sign for every label leaves alpha as it was). Without this,
    a K whose entries are all -1 or +1 would be read as labels and get a sign per entry, which breaks its symmetry."""
    K, y = case.args[0], case.args[1]
    whole = all(float(entry).is_integer() for entry in np.asarray(K, dtype=float).ravel())
    return {"K": power_of_two(rng, positive=True, whole=whole), "y": signs_like(rng, y)}


KERNEL_PERCEPTRON = Check(
    "kernel_perceptron", ("K", "y", "max_epochs"), _kernel_cases, _reference_kernel_perceptron,
    compare_arrays(exact=True, what="alpha, an array of shape (n,) counting the mistakes on each point", returns="ndarray"),
    precondition=_kernel_contract, second_call=_kernel_second_call,
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
        X = np.round(rng.normal(size=(n, d)), 3)
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
    compare_tuple(("w_avg", "b_avg"), (compare_arrays(exact=False, what="weights of shape (d,)", returns="ndarray of float"),
                                       compare_number(returns="float")), a_tuple=True),
    precondition=lambda X, y, epochs: _contracts.broken(_contracts.rows_of(X, y), _contracts.labels(y),
                                                        _contracts.count_at_least_one(epochs, "epochs")),
)


# ----------------------------------------------------------------------------- hinge_sgd


def _hinge_sgd_run(X, y, learning_rate, lam, epochs, stop_when: str = "") -> tuple[np.ndarray, float, int, int]:
    """SGD on ``lam/2 ||w||^2 + max(0, 1 - y (w·x + b))``, point by point; also counts visits with ``z == 1`` exactly.

    ``stop_when`` runs the early stops a student may add, to draw cases where they show: after an epoch
    with no perceptron mistake (``"no mistake"``, z <= 0) or with no hinge step (``"no step"``, z <= 1).
    """
    points, labels = np.asarray(X, dtype=float), np.asarray(y).tolist()
    w, b, n_steps, at_kink = np.zeros(points.shape[1]), 0.0, 0, 0
    for _ in range(int(epochs)):
        mistakes = steps = 0
        for x_i, y_i in zip(points, labels):
            z = y_i * (float(x_i @ w) + b)
            w = (1.0 - learning_rate * lam) * w
            at_kink += z == 1.0
            mistakes += z <= 0.0
            if z <= 1.0:
                w = w + learning_rate * y_i * x_i
                b = b + learning_rate * y_i
                n_steps += 1
                steps += 1
        if (stop_when == "no mistake" and not mistakes) or (stop_when == "no step" and not steps):
            break
    return w, float(b), n_steps, at_kink


def _differs(one: tuple, other: tuple) -> bool:
    return not (np.allclose(one[0], other[0], rtol=1e-6, atol=1e-6) and np.isclose(one[1], other[1], rtol=1e-6, atol=1e-6)
                and one[2] == other[2])


def _every_epoch_case(rng: np.random.Generator, stop_when: str) -> Case:
    """Random data on which stopping early (``stop_when``, see ``_hinge_sgd_run``) gives another answer.

    ``"no step"`` differs only with ``lam > 0``: an epoch without a hinge step still shrinks w.
    """
    while True:
        n, d = int(rng.integers(2, 12)), int(rng.integers(1, 4))
        X, y = linearly_separable(n, d, margin=float(rng.uniform(0.1, 0.5)), seed=int(rng.integers(1 << 30)))
        X = np.round(X, 3)  # a short call in the message
        learning_rate = float(np.round(rng.uniform(0.2, 1.0), 3))
        lam = 0.0 if stop_when == "no mistake" and rng.random() < 0.5 else float(np.round(rng.uniform(0.05, 0.5), 3))
        epochs = int(rng.integers(3, 12))
        full = _hinge_sgd_run(X, y, learning_rate, lam, epochs)
        if _differs(full, _hinge_sgd_run(X, y, learning_rate, lam, epochs, stop_when)):
            why = ("an epoch without a perceptron mistake (z <= 0) still takes hinge steps while z <= 1" if stop_when == "no mistake"
                   else "an epoch without a hinge step still shrinks w by 1 - learning_rate * lam")
            return Case((X, y, learning_rate, lam, epochs),
                        f"random separable data run for exactly epochs = {epochs} passes: {why}")


def _reference_hinge_sgd(X, y, learning_rate, lam, epochs):
    w, b, n_steps, _ = _hinge_sgd_run(X, y, learning_rate, lam, epochs)
    return w, b, n_steps


#: Learning rates and regularisation strengths that keep every weight a short binary fraction: exact arithmetic.
_EXACT_RATES = ((1.0, 0.0), (1.0, 0.5), (0.5, 0.5), (2.0, 0.25), (0.5, 0.0), (1.0, 0.25))


def _integer_data(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.integers(-2, 3, size=(n, d)), random_labels(rng, n)


def _kink_case(rng: np.random.Generator) -> Case:
    """Small integer data and exact rates on which some visit meets ``z == 1`` exactly (the step is taken)."""
    for _ in range(500):
        X, y = _integer_data(rng, int(rng.integers(1, 6)), int(rng.integers(1, 3)))
        learning_rate, lam = _EXACT_RATES[int(rng.integers(len(_EXACT_RATES)))]
        epochs = int(rng.integers(1, 5))
        if _hinge_sgd_run(X, y, learning_rate, lam, epochs)[3]:
            return Case((X.astype(float), y, learning_rate, lam, epochs), "a visit with z = y (w·x + b) exactly 1 (the kink: the step is taken)")
    point = float(rng.choice([-1.0, 1.0]))  # a point at the origin: z = y b is 0, then exactly 1
    return Case((np.array([[0.0]]), np.array([point]).astype(int), 1.0, 0.0, 2), "a visit with z exactly 1 (the kink: the step is taken)")


def _near_kink_case(rng: np.random.Generator, side: int) -> Case:
    """One point x in {-1, 1}^d (d + 1 a power of two) and learning_rate (1 + side 2**-k) / (d + 1), lam = 0: the
    first visit steps (z = 0), and the second meets z = learning_rate (||x||^2 + 1) = 1 + side 2**-k exactly."""
    d = int(rng.choice([1, 3, 7]))
    x, label = rng.choice([-1.0, 1.0], size=(1, d)), random_labels(rng, 1)
    k = int(rng.integers(24, 45))
    learning_rate = (1.0 + side * 2.0 ** -k) / (d + 1)
    after = "just past the kink: no step" if side > 0 else "just before the kink: a step"
    return Case((x, label, learning_rate, 0.0, int(rng.integers(2, 5))),
                f"a second visit with z = 1 {'+' if side > 0 else '-'} 2**-{k} exactly, {after} (no rounding of z)")


def _hinge_cases(rng: np.random.Generator) -> list[Case]:
    visible_X, visible_y = np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([1, -1])
    cases = [
        Case((visible_X, visible_y, 0.5, 0.0, 3), "the visible test: two points, lam = 0 (after epoch 1 every point is "
             "correct, but z = 1 is still charged: two more hinge steps)"),
        Case((visible_X, visible_y, 0.5, 0.5, 1), "the visible test with lam = 0.5 (each visit shrinks w before its step)"),
        _kink_case(rng),
        _kink_case(rng),
        _near_kink_case(rng, +1),
        _near_kink_case(rng, -1),
        _every_epoch_case(rng, "no mistake"),
        _every_epoch_case(rng, "no step"),
    ]
    X = random_points(rng)
    cases.append(Case((X, random_labels(rng, len(X)), float(rng.uniform(0.05, 1.0)), 0.0, int(rng.integers(1, 6))), "lam = 0: no shrinking, only hinge steps"))
    X = random_points(rng)
    learning_rate = float(rng.uniform(0.1, 2.0))
    cases.append(Case((X, random_labels(rng, len(X)), learning_rate, 1.0 / learning_rate, int(rng.integers(1, 5))),
                      "learning_rate * lam = 1: every visit first shrinks w to zero"))
    X, y = _integer_data(rng, int(rng.integers(2, 10)), int(rng.integers(1, 4)))
    learning_rate, lam = _EXACT_RATES[int(rng.integers(len(_EXACT_RATES)))]
    cases.append(Case((X, y, int(learning_rate) if learning_rate >= 1 else learning_rate, lam, int(rng.integers(1, 5))),
                      "integer input (points, labels and possibly the learning rate are integers)"))
    X = random_points(rng)
    cases.append(Case((X.tolist(), random_labels(rng, len(X)).tolist(), float(rng.uniform(0.1, 1.0)), float(rng.uniform(0, 0.5)),
                       int(rng.integers(1, 4))), "Python lists instead of arrays"))
    cases.append(Case((rng.normal(size=(1, 1)), random_labels(rng, 1), float(rng.uniform(0.1, 1.0)), float(rng.uniform(0, 0.5)),
                       int(rng.integers(1, 6))), "a single point with one feature (n = 1, d = 1)"))
    X = random_points(rng)
    cases.append(Case((X, random_labels(rng, len(X)), float(rng.uniform(0.1, 1.0)), float(rng.uniform(0, 0.5)), 1),
                      "a single epoch (epochs = 1)"))
    for _ in range(N_RANDOM_CASES):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 5))
        if rng.random() < 0.5:
            X, y = linearly_separable(n, d, margin=float(rng.uniform(0.02, 0.2)), seed=int(rng.integers(1 << 30)))
            what = "random separable data"
        else:
            X, y = rng.normal(size=(n, d)), random_labels(rng, n)
            what = "random, mostly non-separable data"
        learning_rate = round(float(rng.uniform(0.01, 1.0)), 3)
        cases.append(Case((np.round(X, 3), y, learning_rate, round(float(rng.uniform(0.0, 1.0)), 3), int(rng.integers(1, 10))), what))
    return cases


def _hinge_contract(X, y, learning_rate, lam, epochs) -> str:
    """The docstring: labels -1/+1 for the rows of X, learning_rate > 0, lam >= 0 with learning_rate * lam <= 1, and
    epochs an int >= 1 (the numbers are tied: a learning rate of one case with the lam of another can break it)."""
    rates = "" if learning_rate > 0 and lam >= 0 and learning_rate * lam <= 1 else \
        f"learning_rate = {learning_rate!r} and lam = {lam!r} break learning_rate > 0, lam >= 0, learning_rate * lam <= 1"
    return _contracts.broken(_contracts.rows_of(X, y), _contracts.labels(y), rates,
                             _contracts.count_at_least_one(epochs, "epochs"))


HINGE_SGD = Check(
    "hinge_sgd", ("X", "y", "learning_rate", "lam", "epochs"), _hinge_cases, _reference_hinge_sgd,
    compare_tuple(("w", "b", "n_steps"), (compare_arrays(exact=False, what="weights of shape (d,)", returns="ndarray of float"),
                                          compare_number(returns="float"), compare_count("the number of hinge steps", returns="int")), a_tuple=True),
    precondition=_hinge_contract,
)

# ----------------------------------------------------------------------------- mlp_forward


def _reference_mlp_forward(X, W, c, v, d):
    hidden = np.tanh(np.asarray(X, dtype=float) @ np.asarray(W, dtype=float).T + np.asarray(c, dtype=float))
    scores = hidden @ np.asarray(v, dtype=float) + float(d)
    return hidden, scores, np.where(scores >= 0, 1, -1)


#: A 2-2-1 network that computes XOR on the corners (±1, ±1): h1 ~ [x1 + x2 > -1], h2 ~ [x1 + x2 > 1].
XOR_NETWORK = (np.array([[5.0, 5.0], [5.0, 5.0]]), np.array([5.0, -5.0]), np.array([1.0, -1.0]), -1.0)


def _random_network(rng: np.random.Generator, n_features: int, n_hidden: int):
    return (rng.normal(size=(n_hidden, n_features)) * rng.uniform(0.3, 3.0), rng.normal(size=n_hidden),
            rng.normal(size=n_hidden) * rng.uniform(0.3, 3.0), float(rng.normal()))


def _zero_score_case(rng: np.random.Generator) -> Case:
    """Integer points and weights (one hidden unit, d = 0) where some pre-activation, hence some score, is exactly 0."""
    while True:
        n, n_features = int(rng.integers(3, 10)), int(rng.integers(1, 4))
        X, W, c = rng.integers(-2, 3, size=(n, n_features)), rng.integers(-2, 3, size=(1, n_features)), rng.integers(-1, 2, size=1)
        pre = X @ W.T + c
        if np.any(pre == 0) and np.any(pre != 0):
            return Case((X, W, c, np.array([float(rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0]))]), 0.0),
                        "scores of exactly 0 (integer points and weights, d = 0): sign(0) = +1")


def _large_pre_activation_case(rng: np.random.Generator) -> Case:
    """Random points and network, with two points more whose first pre-activation is about +a and -a (a from 400 to
    2000): past where e^(2a) overflows a float64 (a > 355), tanh is +-1."""
    X = random_points(rng)
    W, c, v, d = _random_network(rng, X.shape[1], int(rng.integers(1, 5)))
    along = W[0] / float(W[0] @ W[0])  # (a along) W[0] = a
    size = float(rng.uniform(400.0, 2000.0))
    X = np.vstack([X, np.round(size * along, 3), np.round(-size * along, 3)])
    return Case((X, W, c, v, d), "two points with pre-activations of about +-a, a in the hundreds or thousands, where tanh "
                "is +-1 (no overflow to NaN)")


def _mlp_cases(rng: np.random.Generator) -> list[Case]:
    corners = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    cases = [Case((corners, *XOR_NETWORK), "the visible test: the 2-2-1 network that computes XOR"), _zero_score_case(rng), _zero_score_case(rng)]
    X = random_points(rng)
    W, c, v, _ = _random_network(rng, X.shape[1], int(rng.integers(1, 5)))
    cases.append(Case((X, W, c, np.zeros_like(v), 0.0), "every score exactly 0 (v = 0 and d = 0): every label +1"))
    X = rng.integers(-3, 4, size=(int(rng.integers(2, 8)), 2))
    cases.append(Case((X, rng.integers(-2, 3, size=(2, 2)), rng.integers(-2, 3, size=2), rng.integers(-2, 3, size=2), int(rng.integers(-2, 3))),
                      "integer input (points and every weight, d a Python int)"))
    X = random_points(rng)
    W, c, v, d = _random_network(rng, X.shape[1], int(rng.integers(1, 4)))
    cases.append(Case((X.tolist(), W.tolist(), c.tolist(), v.tolist(), d), "Python lists instead of arrays"))
    X = rng.normal(size=(1, 1))
    cases.append(Case((X, *_random_network(rng, 1, 1)), "a single point, one feature, one hidden unit (n = d = h = 1)"))
    cases.append(_large_pre_activation_case(rng))
    for _ in range(N_RANDOM_CASES):
        X = random_points(rng)
        cases.append(Case((X, *_random_network(rng, X.shape[1], int(rng.integers(1, 7)))), "random network on random points"))
    return cases


MLP_FORWARD = Check(
    "mlp_forward", ("X", "W", "c", "v", "d"), _mlp_cases, _reference_mlp_forward,
    compare_tuple(("hidden", "scores", "labels"),
                  (compare_arrays(exact=False, what="hidden activations of shape (n, h)", returns="ndarray of float"),
                   compare_arrays(exact=False, what="scores of shape (n,)", returns="ndarray of float"),
                   compare_labels("labels of shape (n,), -1/+1 with sign(0) = +1", returns="ndarray of int")), a_tuple=True),
)


CHECKS = (XOR_FEATURES, KERNEL_PERCEPTRON, AVERAGED_PERCEPTRON, HINGE_SGD, MLP_FORWARD)
