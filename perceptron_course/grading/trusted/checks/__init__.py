"""What the assignments' hidden tests check: each student function against the reference.

A hidden test cell is one line, e.g. ``check_predict(predict)``. Each ``check_*``
runs the student's function and the reference on at least 20 seeded random cases
plus the edge cases that separate right from almost right, and raises an
``AssertionError`` whose message names the behaviour that failed, never the code
that tested it. Every call gets fresh copies of its inputs, and numpy warnings
and Python warnings raised by student code are silenced, so nothing reaches
stderr (nbgrader scores a test cell that writes to stderr as 0).

Student code runs in the same kernel before the hidden tests, so this module
defends itself. Every assignment's setup cell imports it before any student
cell runs, and it keeps the numpy functions, builtins and reference functions
it relies on from that moment: if student code has replaced one of them, the
check refuses to run and says which. While a student function runs, a profiler
watches for calls into the reference library (under any name it was imported
as): a part that calls the reference instead of implementing scores 0 and the
message says why. Helpers an assignment allows (``max_margin`` in assignment 4,
``datasets`` and ``plotting`` everywhere) stay allowed.
"""

from __future__ import annotations

import builtins
import copy
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .... import geometry, multiclass, perceptron, theory, variants
from ....datasets import linearly_separable, six_point_example, two_point_example, xor

N_RANDOM_CASES = 20
MAX_REPORTED = 3


@dataclass
class Case:
    """One call: the arguments, and the behaviour a wrong answer reveals."""

    args: tuple
    behaviour: str
    kwargs: dict = field(default_factory=dict)


class StudentError(AssertionError):
    """A hidden test failed; the message is meant for the student."""


# ----------------------------------------------------------------------------- self-defence

_NUMPY_USED = ("allclose", "array", "array_equal", "asarray", "all", "any", "arange", "argmax", "column_stack",
               "errstate", "hstack", "isclose", "isfinite", "isin", "ix_", "ones", "shares_memory", "unique",
               "vstack", "where", "zeros")
_BUILTINS_USED = ("AssertionError", "Exception", "NotImplementedError", "abs", "bool", "enumerate", "float",
                  "getattr", "int", "isinstance", "len", "list", "max", "min", "range", "sorted", "str", "sum",
                  "tuple", "type", "zip")
_REFERENCE_MODULES = (geometry, perceptron, theory, multiclass, variants)


def _public_functions(module) -> dict[str, Any]:
    return {name: value for name, value in vars(module).items() if callable(value) and not name.startswith("_")}


_ORIGINALS: dict[str, Any] = {
    **{f"numpy.{name}": getattr(np, name) for name in _NUMPY_USED},
    "numpy.linalg.norm": np.linalg.norm,
    **{f"builtins.{name}": getattr(builtins, name) for name in _BUILTINS_USED},
    **{f"{module.__name__}.{name}": value for module in _REFERENCE_MODULES for name, value in _public_functions(module).items()},
}


def _current(qualified: str) -> Any:
    if qualified.startswith("builtins."):
        return getattr(builtins, qualified.removeprefix("builtins."), None)
    if qualified == "numpy.linalg.norm":
        return np.linalg.norm
    if qualified.startswith("numpy."):
        return getattr(np, qualified.removeprefix("numpy."), None)
    module_name, _, name = qualified.rpartition(".")
    return getattr(sys.modules[module_name], name, None)


def replaced_names() -> list[str]:
    """What student code has replaced among the things the hidden tests rely on."""
    replaced = [name for name, original in _ORIGINALS.items() if _current(name) is not original]
    # Replaced even before this module was imported: a numpy function that numpy did not write.
    replaced += [f"numpy.{name}" for name in _NUMPY_USED
                 if callable(getattr(np, name)) and not str(getattr(getattr(np, name), "__module__", "numpy")).startswith("numpy")
                 and f"numpy.{name}" not in replaced]
    return replaced


def _refuse_if_tampered(name: str) -> None:
    replaced = replaced_names()
    if replaced:
        raise StudentError(
            f"The hidden tests of {name} cannot run: your code replaced {', '.join(replaced[:4])}. "
            "Do not reassign library functions or builtins; this part scores 0 until you remove that code."
        )


_LIBRARY = Path(__file__).resolve().parents[3]
_GRADING = Path(__file__).resolve().parents[2]
#: Reference modules any solution may use (data and figures).
ALWAYS_ALLOWED = ("perceptron_course.datasets", "perceptron_course.plotting")


class _ReferenceWatch:
    """A ``sys.setprofile`` hook recording calls into the reference library, allowed helpers aside."""

    def __init__(self, allowed: tuple[str, ...]):
        self.allowed = set(allowed)
        self.inside_allowed = 0
        self.calls: list[str] = []

    def __call__(self, frame, event, arg):
        if event not in ("call", "return"):
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(str(_LIBRARY)) or filename.startswith(str(_GRADING)):
            return
        module = "perceptron_course." + Path(filename).stem
        qualified = f"{module}.{frame.f_code.co_name}"
        if event == "return":
            if self.inside_allowed:
                self.inside_allowed -= 1
        elif self.inside_allowed or module in ALWAYS_ALLOWED or qualified in self.allowed:
            self.inside_allowed += 1
        elif qualified not in self.calls:
            self.calls.append(qualified)


def _call(function: Callable, case: Case, name: str, *, copy_arguments: bool = True, allowed: tuple[str, ...] = ()) -> Any:
    """Call ``function`` on (copies of) the case's arguments, quietly, watching for reference calls."""
    args, kwargs = (copy.deepcopy(case.args), copy.deepcopy(case.kwargs)) if copy_arguments else (case.args, case.kwargs)
    watch = _ReferenceWatch(allowed)
    previous = sys.getprofile()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        sys.setprofile(watch)
        try:
            result = function(*args, **kwargs)
        except NotImplementedError:
            raise StudentError(f"{name} is not implemented yet (it raised NotImplementedError).") from None
        except Exception as error:  # noqa: BLE001 - any crash is the student's to see
            raise StudentError(
                f"{name} raised {type(error).__name__}: {error} (case: {case.behaviour})."
            ) from None
        finally:
            sys.setprofile(previous)
    if watch.calls:
        raise StudentError(
            f"{name} calls the reference library ({watch.calls[0]}) instead of implementing it: this part "
            "scores 0. Write it yourself with NumPy."
        )
    return result


def _as_float_array(value: Any, name: str, what: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise StudentError(f"{name} must return {what}; got {type(value).__name__}.") from None


def _same_array(got: Any, expected: np.ndarray, name: str, case: Case, *, exact: bool, what: str) -> None:
    got_array = _as_float_array(got, name, what)
    if got_array.shape != expected.shape:
        raise StudentError(
            f"{name} returned shape {got_array.shape}, expected {expected.shape} (case: {case.behaviour})."
        )
    equal = np.array_equal(got_array, expected) if exact else np.allclose(got_array, expected, rtol=1e-9, atol=1e-9)
    if not equal:
        raise StudentError(f"{name} returned a wrong value: {case.behaviour}.")


def _array_compare(name: str, *, exact: bool, what: str):
    """A ``compare`` for functions returning one array: same shape, same values."""

    def compare(got, expected, case):
        _same_array(got, np.asarray(expected, dtype=float), name, case, exact=exact, what=what)

    return compare


def _compare_each(
    student: Callable,
    reference: Callable,
    cases: Iterable[Case],
    name: str,
    compare: Callable[[Any, Any, Case], None],
    allowed: tuple[str, ...] = (),
) -> None:
    """Run every case; report each distinct failed behaviour (at most ``MAX_REPORTED``).

    Failures on named edge cases are reported before failures on random cases
    (those whose behaviour starts with "random"): they say more about the bug.
    """
    _refuse_if_tampered(name)
    failures: list[str] = []
    for case in sorted(cases, key=lambda case: case.behaviour.startswith("random")):
        expected = reference(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
        try:
            compare(_call(student, case, name, allowed=allowed), expected, case)
        except StudentError as failure:
            if str(failure) not in failures:
                failures.append(str(failure))
            if "not implemented yet" in str(failure) or "reference library" in str(failure):
                break
    if failures:
        shown = failures[:MAX_REPORTED]
        more = f"\n(and {len(failures) - len(shown)} more)" if len(failures) > len(shown) else ""
        raise StudentError("\n".join(shown) + more)


def _random_points(rng: np.random.Generator) -> np.ndarray:
    n, d = int(rng.integers(1, 30)), int(rng.integers(1, 6))
    return rng.normal(size=(n, d))


def _random_labels(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, -1, 1)


# ----------------------------------------------------------------------------- 01 geometry


def check_augment(augment: Callable) -> None:
    """``augment(X) -> (n, d+1)`` float array with a leading column of ones."""
    rng = np.random.default_rng(101)
    cases = [Case((_random_points(rng),), "random points") for _ in range(N_RANDOM_CASES)]
    cases += [
        Case((np.array([[3.0]]),), "a single point with a single feature (n = 1, d = 1)"),
        Case((np.arange(6).reshape(3, 2),), "integer input must give a float array with a column of ones"),
    ]

    compare = _array_compare("augment", exact=True, what="an array of shape (n, d + 1)")
    _compare_each(augment, geometry.augment, cases, "augment", compare)


def _labels_compare(name: str):
    def compare(got, expected, case):
        got_array = _as_float_array(got, name, "an array of -1/+1 labels")
        if got_array.shape == expected.shape and not np.all(np.isin(got_array, (-1, 1))):
            raise StudentError(f"{name} must return only -1 and +1 (case: {case.behaviour}).")
        _same_array(got_array, expected.astype(float), name, case, exact=True, what="an array of -1/+1 labels")

    return compare


def check_predict(predict: Callable) -> None:
    """``predict(w, b, X) -> (n,)`` labels -1/+1 with ``sign(0) = +1``."""
    rng = np.random.default_rng(102)
    cases = []
    for _ in range(N_RANDOM_CASES):
        X = _random_points(rng)
        cases.append(Case((rng.normal(size=X.shape[1]), float(rng.normal()), X), "random weights and points"))
    grid = np.array([[0, 0], [1, 1], [2, -1], [-1, 2], [3, 0]])
    cases += [
        Case((np.zeros(2), 0.0, grid), "a score of exactly 0 must predict +1 (sign(0) = +1)"),
        Case((np.array([1, 2]), 0, grid), "points on the boundary (score exactly 0) must predict +1, with integer input"),
        Case((np.array([-1.0]), 0.5, np.array([[2.0]])), "a single point with a single feature (n = 1, d = 1)"),
    ]
    _compare_each(predict, perceptron.predict, cases, "predict", _labels_compare("predict"))


def check_signed_distance(signed_distance: Callable) -> None:
    """``signed_distance(w, b, X) -> (n,)`` floats ``(w·x + b) / ||w||``."""
    rng = np.random.default_rng(103)
    cases = []
    for _ in range(N_RANDOM_CASES):
        X = _random_points(rng)
        w = rng.normal(size=X.shape[1]) * rng.choice([0.01, 1.0, 100.0])
        cases.append(Case((w, float(rng.normal()), X), "random weights, including long and short w"))
    cases += [
        Case((np.array([3, 4]), -5, np.array([[3, 4], [0, 0]])), "integer input; the distance divides by ||w||"),
        Case((np.array([2.0]), 0.0, np.array([[-1.5]])), "a single point with a single feature (n = 1, d = 1)"),
    ]

    compare = _array_compare("signed_distance", exact=False, what="an array of shape (n,)")
    _compare_each(signed_distance, geometry.signed_distance, cases, "signed_distance", compare)


def _scalar_compare(name: str):
    def compare(got, expected, case):
        got_array = _as_float_array(got, name, "a number")
        if got_array.size != 1:
            raise StudentError(f"{name} must return one number; got shape {got_array.shape}.")
        if not np.isclose(float(got_array.ravel()[0]), float(expected), rtol=1e-7, atol=1e-9):
            raise StudentError(f"{name} returned a wrong value: {case.behaviour}.")

    return compare


def check_set_margin(set_margin: Callable) -> None:
    """``set_margin(w, b, X, y) -> float``: the smallest ``y_i (w·x_i + b) / ||w||``."""
    rng = np.random.default_rng(104)
    cases = []
    for _ in range(N_RANDOM_CASES):
        X = _random_points(rng)
        w, b = rng.normal(size=X.shape[1]), float(rng.normal())
        y = np.where(X @ w + b >= 0, 1, -1)
        if rng.random() < 0.4:
            y[0] = -y[0]
        cases.append(Case((w, b, X, y), "random data, some with a misclassified point (negative margin)"))
    cases += [
        Case((np.array([1.0, 0.0]), 0.0, np.array([[2.0, 0.0], [-1.0, 5.0], [0.5, 1.0]]), np.array([1, -1, -1])),
             "a misclassified point gives a negative margin: the smallest, not the smallest in absolute value"),
        Case((np.array([2, 0]), 1, np.array([[1, 1]]), np.array([1])), "a single point, integer input"),
    ]
    _compare_each(set_margin, geometry.set_margin, cases, "set_margin", _scalar_compare("set_margin"))


# ----------------------------------------------------------------------------- 02 algorithm


def _reference_step(w, b, x, y):
    score = float(np.asarray(x, dtype=float) @ np.asarray(w, dtype=float) + b)
    if perceptron.is_mistake(score, int(y), "margin"):
        return np.asarray(w, dtype=float) + y * np.asarray(x, dtype=float), float(b + y), True
    return np.asarray(w, dtype=float), float(b), False


def check_perceptron_step(perceptron_step: Callable) -> None:
    """``perceptron_step(w, b, x, y) -> (w_new, b_new, mistake)`` with the rule ``y (w·x + b) <= 0``."""
    rng = np.random.default_rng(201)
    cases = []
    for _ in range(N_RANDOM_CASES):
        d = int(rng.integers(1, 6))
        cases.append(Case((rng.normal(size=d), float(rng.normal()), rng.normal(size=d), int(rng.choice([-1, 1]))),
                          "random weights and point"))
    cases += [
        Case((np.zeros(3), 0.0, np.array([1.0, 2.0, 3.0]), 1), "a point with score exactly 0 must count as a mistake"),
        Case((np.zeros(2), 0.0, np.array([1.0, -1.0]), -1), "a point with score exactly 0 must count as a mistake"),
        Case((np.array([1.0, 1.0]), 0.5, np.array([2.0, 2.0]), 1), "a correctly classified point must not change w or b"),
        Case((np.array([1.0, 1.0]), 0.5, np.array([2.0, 2.0]), -1), "a misclassified point updates w <- w + y x and b <- b + y"),
        Case((np.array([2]), 1, np.array([-3]), 1), "integer input with d = 1"),
    ]

    def compare(got, expected, case):
        if not isinstance(got, tuple) or len(got) != 3:
            raise StudentError("perceptron_step must return a tuple (w_new, b_new, mistake).")
        _same_array(got[0], expected[0], "perceptron_step", case, exact=False, what="new weights w of shape (d,)")
        _scalar_compare("perceptron_step (b_new)")(got[1], expected[1], case)
        if bool(got[2]) != expected[2]:
            raise StudentError(f"perceptron_step returned the wrong mistake flag: {case.behaviour}.")

    _compare_each(perceptron_step, _reference_step, cases, "perceptron_step", compare)
    w, x = np.zeros(2), np.array([1.0, 2.0])
    _call(perceptron_step, Case((w, 0.0, x, 1), "a mistake at w = 0"), "perceptron_step", copy_arguments=False)
    if np.any(w != 0) or np.any(x != [1.0, 2.0]):
        raise StudentError("perceptron_step must return new weights and leave its arguments unchanged (no w += ...).")


def _training_cases(seed: int) -> list[Case]:
    """Random separable data sets, then the edge cases (both lists are used)."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(N_RANDOM_CASES):
        n, d = int(rng.integers(2, 40)), int(rng.integers(1, 5))
        X, y = linearly_separable(n, d, margin=float(rng.uniform(0.02, 0.2)), seed=int(rng.integers(1 << 30)))
        cases.append(Case((X, y), "random separable data", {"max_epochs": 100}))
    xor_X, xor_y = xor()
    cases += [
        Case((np.array([[1.0, 2.0], [-1.0, -1.0]]), np.array([1, -1])),
             "the first point is positive with score exactly 0 at w = 0: it must count as a mistake",
             {"max_epochs": 100}),
        Case((xor_X, xor_y), "non-separable data (XOR) must stop after max_epochs with converged False",
             {"max_epochs": 7}),
        Case((np.array([[2.0]]), np.array([-1])), "a single point (n = 1, d = 1)", {"max_epochs": 10}),
        Case((np.array([[1, 0], [0, 1], [-1, -1], [2, 2]]), np.array([1, 1, -1, 1])),
             "integer input", {"max_epochs": 50}),
        Case((np.array([[0.0, 1.0], [0.0, 2.0], [1.0, 0.0]]), np.array([1, 1, -1])),
             "data that need a bias b", {"max_epochs": 100}),
    ]
    return cases


def _reference_train(X, y, max_epochs):
    run = perceptron.train(X, y, max_epochs=max_epochs)
    return run.w, run.b, run.n_mistakes, run.converged


def check_train_perceptron(train_perceptron: Callable) -> None:
    """``train_perceptron(X, y, max_epochs) -> (w, b, n_mistakes, converged)``, bias on, rule ``<= 0``."""

    def compare(got, expected, case):
        if not isinstance(got, tuple) or len(got) != 4:
            raise StudentError("train_perceptron must return a tuple (w, b, n_mistakes, converged).")
        b = _as_float_array(got[1], "train_perceptron", "a number b")
        if b.size != 1 or not np.isclose(float(b.ravel()[0]), expected[1], rtol=1e-9, atol=1e-9):
            raise StudentError("train_perceptron returned a wrong bias b: every mistake must also update b <- b + y.")
        _same_array(got[0], expected[0], "train_perceptron (w)", case, exact=False, what="weights of shape (d,)")
        if _as_float_array(got[2], "train_perceptron", "an int").size != 1 or int(got[2]) != expected[2]:
            raise StudentError(f"train_perceptron counted the wrong number of mistakes: {case.behaviour}.")
        if bool(got[3]) != expected[3]:
            raise StudentError(f"train_perceptron returned the wrong converged flag: {case.behaviour}.")

    _compare_each(train_perceptron, _reference_train, _training_cases(202), "train_perceptron", compare)


# ----------------------------------------------------------------------------- 03 worked example


def check_is_mistake(is_mistake: Callable) -> None:
    """``is_mistake(score, label, rule) -> bool`` for the ``"margin"`` and ``"sign"`` rules."""
    cases = [
        Case((score, label, rule), f"rule {rule!r}, score {score}, label {label:+d}"
             + (" (a score of exactly 0 is the case that separates the rules)" if score == 0 else ""))
        for rule in ("margin", "sign")
        for label in (-1, 1)
        for score in (-2.5, -1e-12, 0.0, -0.0, 1e-12, 3.0)
    ]

    def compare(got, expected, case):
        if not isinstance(got, (bool, np.bool_)):
            raise StudentError(f"is_mistake must return a bool; got {type(got).__name__}.")
        if bool(got) != expected:
            raise StudentError(f"is_mistake is wrong for {case.behaviour}.")

    _compare_each(is_mistake, perceptron.is_mistake, cases, "is_mistake", compare)


def _reference_trace(X, y, rule, max_epochs):
    return list(perceptron.train(X, y, bias=False, rule=rule, max_epochs=max_epochs).weight_history)


def check_perceptron_trace(perceptron_trace: Callable) -> None:
    """``perceptron_trace(X, y, rule, max_epochs) -> list`` of weight vectors, zero start first, no bias."""
    cases = [
        Case((*two_point_example(), "sign", 10), "the lecture's 2-point example with the sign rule"),
        Case((*two_point_example(), "margin", 10), "the 2-point example with the margin rule (a score of 0 at the start is a mistake)"),
        Case((*six_point_example(), "sign", 10), "the lecture's 6-point example"),
        Case((*xor(), "margin", 3), "non-separable data (XOR): stop after max_epochs"),
    ]
    for case in _training_cases(301)[:N_RANDOM_CASES]:
        X, y = case.args
        cases.append(Case((np.hstack([np.ones((len(X), 1)), X]), y, "margin", 100), "random separable data"))

    def compare(got, expected, case):
        try:
            steps = [np.asarray(w, dtype=float) for w in got]
        except (TypeError, ValueError):
            raise StudentError("perceptron_trace must return a list of weight vectors.") from None
        if len(steps) != len(expected):
            raise StudentError(
                f"perceptron_trace returned {len(steps)} weight vectors, expected {len(expected)} "
                f"(the zero start plus one per update): {case.behaviour}."
            )
        if len(steps) > 2 and all(step is steps[-1] or np.shares_memory(step, steps[-1]) for step in steps[1:-1]):
            raise StudentError("perceptron_trace stored the same array over and over: append a copy of w after each update.")
        _same_array(np.array(steps), np.array(expected), "perceptron_trace", case, exact=False, what="weight vectors")

    _compare_each(perceptron_trace, _reference_trace, cases, "perceptron_trace", compare)


# ----------------------------------------------------------------------------- 04 convergence


def check_radius(radius: Callable) -> None:
    """``radius(X) -> float``: ``max_i ||x_i||`` from the origin."""
    rng = np.random.default_rng(401)
    cases = [Case((_random_points(rng) + rng.normal(size=1) * 5,), "random points, not centred") for _ in range(N_RANDOM_CASES)]
    cases += [
        Case((np.array([[10.0, 0.0], [12.0, 0.0]]),), "the radius is measured from the origin, not from the data's centre"),
        Case((np.array([[-3]]),), "a single point (n = 1, d = 1), integer input"),
    ]
    _compare_each(radius, theory.radius, cases, "radius", _scalar_compare("radius"))


def check_proof_terms(proof_terms: Callable) -> None:
    """``proof_terms(history, w_star) -> (alignment, squared_norm)``, each of shape (k + 1,)."""
    cases = []
    separable = [case for case in _training_cases(402) if "XOR" not in case.behaviour]
    for case in separable:
        X, y = case.args
        data = np.hstack([np.ones((len(X), 1)), X])
        history = perceptron.train(data, y, bias=False, max_epochs=100).weight_history
        w_star, _ = theory.max_margin(data, y)
        cases.append(Case((np.array(history), w_star), case.behaviour))

    def compare(got, expected, case):
        if not isinstance(got, tuple) or len(got) != 2:
            raise StudentError("proof_terms must return a tuple (alignment, squared_norm).")
        _same_array(got[0], expected[0], "proof_terms (alignment w·w*)", case, exact=False, what="an array of shape (k + 1,)")
        _same_array(got[1], expected[1], "proof_terms (squared norm ||w||^2)", case, exact=False, what="an array of shape (k + 1,)")

    _compare_each(proof_terms, theory.proof_quantities, cases, "proof_terms", compare)


def check_mistake_bound(mistake_bound: Callable) -> None:
    """``mistake_bound(X, y) -> float``: ``(R / gamma) ** 2`` of the augmented data."""
    cases = [Case(case.args, case.behaviour) for case in _training_cases(403)[:N_RANDOM_CASES]]
    cases += [
        Case((np.array([[10.0, 0.0], [11.0, 0.0], [10.0, 1.0], [11.0, 1.0]]), np.array([-1, 1, -1, 1])),
             "data far from the origin: R and gamma must be those of the augmented data (1, x)"),
        Case((np.array([[1, 2], [-1, -1]]), np.array([1, -1])), "integer input"),
    ]

    def compare(got, expected, case):
        _scalar_compare("mistake_bound")(got, expected, case)

    _compare_each(mistake_bound, lambda X, y: theory.mistake_bound(X, y, bias=True), cases, "mistake_bound", compare,
                  allowed=("perceptron_course.theory.max_margin",))


# ----------------------------------------------------------------------------- 05 multiclass


def _multiclass_cases(seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(N_RANDOM_CASES):
        k, d, n = int(rng.integers(2, 5)), int(rng.integers(1, 4)), int(rng.integers(3, 40))
        centres = rng.normal(scale=4, size=(k, d))
        labels = rng.integers(0, k, size=n)
        labels[:k] = np.arange(k)
        X = centres[labels] + rng.normal(size=(n, d))
        names = np.array(["cat", "dog", "emu", "fox"])[labels] if rng.random() < 0.3 else labels * 2 + 1
        cases.append(Case((X, names, int(rng.integers(1, 30))), "random classes (labels any sortable values)"))
    cases += [
        Case((np.array([[1, 0], [0, 1], [-1, -1], [2, 2]]), np.array([0, 1, 2, 0]), 20), "integer input"),
        Case((np.array([[1.0], [2.0], [3.0]]), np.array([2, 0, 1]), 10), "a single feature (d = 1), one point per class"),
    ]
    return cases


def _matrices_compare(name: str):
    def compare(got, expected, case):
        if not isinstance(got, tuple) or len(got) != 2:
            raise StudentError(f"{name} must return a tuple (W, b).")
        _same_array(got[0], expected[0], f"{name} (W)", case, exact=False, what="W of shape (K, d)")
        _same_array(got[1], expected[1], f"{name} (b)", case, exact=False, what="b of shape (K,)")

    return compare


def _check_weight_matrix_trainer(student: Callable, trainer: Callable, seed: int, name: str) -> None:
    """Compare a student's ``(X, y, max_epochs) -> (W, b)`` with a reference multiclass trainer."""

    def reference(X, y, max_epochs):
        model = trainer(X, y, max_epochs=max_epochs)
        return model.W, model.b

    _compare_each(student, reference, _multiclass_cases(seed), name, _matrices_compare(name))


def check_ovr_train(ovr_train: Callable) -> None:
    """``ovr_train(X, y, max_epochs) -> (W, b)``: row ``k`` is the perceptron of ``np.unique(y)[k]`` against the rest."""
    _check_weight_matrix_trainer(ovr_train, multiclass.train_one_vs_rest, 501, "ovr_train")


def check_ovr_predict(ovr_predict: Callable) -> None:
    """``ovr_predict(W, b, classes, X) -> (n,)`` labels by ``argmax`` of the raw scores."""
    rng = np.random.default_rng(502)

    def reference(W, b, classes, X):
        model = multiclass.LinearMulticlass(np.asarray(classes), np.asarray(W, float), np.asarray(b, float), 0, 0, False)
        return multiclass.predict_multiclass(model, X)

    cases = []
    for _ in range(N_RANDOM_CASES):
        k, d, n = int(rng.integers(2, 6)), int(rng.integers(1, 5)), int(rng.integers(1, 30))
        cases.append(Case((rng.normal(size=(k, d)), rng.normal(size=k), np.arange(k) * 10, rng.normal(size=(n, d))),
                          "random weights"))
    cases += [
        Case((np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]), np.array([-5.0, -4.0, -6.0]), np.array([0, 1, 2]),
              np.array([[0.5, 0.2], [0.1, 0.3]])),
             "every score negative: predict the class with the largest raw score (argmax), not by thresholding"),
        Case((np.zeros((3, 2)), np.zeros(3), np.array(["a", "b", "c"]), np.array([[1.0, 2.0]])),
             "ties go to the first class (numpy's argmax)"),
    ]

    def compare(got, expected, case):
        got_array = np.asarray(got)
        if got_array.shape != expected.shape or not np.array_equal(got_array.astype(expected.dtype), expected):
            raise StudentError(f"ovr_predict returned wrong labels: {case.behaviour}.")

    _compare_each(ovr_predict, reference, cases, "ovr_predict", compare)


def check_multiclass_train(multiclass_train: Callable) -> None:
    """``multiclass_train(X, y, max_epochs) -> (W, b)``: the single-matrix multiclass perceptron."""
    _check_weight_matrix_trainer(multiclass_train, multiclass.train_multiclass, 503, "multiclass_train")


# ----------------------------------------------------------------------------- 06 limitations


def check_xor_features(xor_features: Callable) -> None:
    """``xor_features(X) -> (n, k)``: a point-wise feature map that makes XOR linearly separable."""
    _refuse_if_tampered("xor_features")
    for seed in range(N_RANDOM_CASES):
        X, y = xor(3, noise=0.15, seed=seed)
        case = Case((X,), "noisy XOR")
        mapped = _as_float_array(_call(xor_features, case, "xor_features"), "xor_features", "an array of shape (n, k)")
        if mapped.ndim != 2 or mapped.shape[0] != len(X):
            raise StudentError(f"xor_features must return one row per point, shape (n, k); got {mapped.shape}.")
        one_by_one = np.vstack([_as_float_array(_call(xor_features, Case((X[i : i + 1],), "one point"), "xor_features"),
                                                "xor_features", "an array") for i in range(len(X))])
        if not np.allclose(one_by_one, mapped):
            raise StudentError("xor_features must map each point on its own (a row must not depend on the other rows).")
        if not np.all(np.isfinite(mapped)) or not theory.is_separable(mapped, y, bias=True):
            raise StudentError("the mapped XOR points are not linearly separable.")


def _reference_kernel_perceptron(K, y, max_epochs):
    n = len(y)
    index_points = np.arange(n, dtype=float)[:, None]

    def precomputed(A, B):
        return np.asarray(K, dtype=float)[np.ix_(A[:, 0].astype(int), B[:, 0].astype(int))]

    return variants.train_kernel(index_points, y, kernel=precomputed, bias=False, max_epochs=max_epochs).alpha


def check_kernel_perceptron(kernel_perceptron: Callable) -> None:
    """``kernel_perceptron(K, y, max_epochs) -> alpha``: per-point mistake counts, rule ``<= 0``, no bias."""
    cases = []
    for seed in range(N_RANDOM_CASES):
        X, y = xor(2, noise=0.2, seed=seed) if seed % 2 else linearly_separable(15, 2, margin=0.05, seed=seed)
        kernel = variants.polynomial_kernel if seed % 3 else (lambda A, B: variants.rbf_kernel(A, B, gamma=0.5))
        cases.append(Case((kernel(X, X), y, 30), "random data with a polynomial or RBF kernel"))
    X, y = xor()
    cases += [
        Case((variants.linear_kernel(X, X), y, 4), "non-separable (linear kernel on XOR): stop after max_epochs"),
        Case((np.array([[4.0]]), np.array([1]), 5), "a single point: a score of exactly 0 at the start is a mistake"),
        Case((np.array([[2, 1], [1, 2]]), np.array([1, -1]), 10), "integer Gram matrix"),
    ]

    compare = _array_compare("kernel_perceptron", exact=True,
                             what="alpha, an array of shape (n,) counting the mistakes on each point")
    _compare_each(kernel_perceptron, _reference_kernel_perceptron, cases, "kernel_perceptron", compare)


def check_averaged_perceptron(averaged_perceptron: Callable) -> None:
    """``averaged_perceptron(X, y, epochs) -> (w_avg, b_avg)`` over every visit of ``epochs`` passes."""
    rng = np.random.default_rng(601)
    cases = []
    for _ in range(N_RANDOM_CASES):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 5))
        X = rng.normal(size=(n, d))
        cases.append(Case((X, _random_labels(rng, n), int(rng.integers(1, 10))), "random, mostly non-separable data"))
    cases += [
        Case((*linearly_separable(10, 2, margin=0.2, seed=3), 20),
             "separable data: the average keeps counting after convergence, for all epochs"),
        Case((np.array([[1, 1], [-1, 2]]), np.array([1, -1]), 3), "integer input"),
    ]

    def reference(X, y, epochs):
        return variants.averaged_weights(variants.train_voted(X, y, epochs=epochs))

    def compare(got, expected, case):
        if not isinstance(got, tuple) or len(got) != 2:
            raise StudentError("averaged_perceptron must return a tuple (w_avg, b_avg).")
        _same_array(got[0], expected[0], "averaged_perceptron (w)", case, exact=False, what="weights of shape (d,)")
        _scalar_compare("averaged_perceptron (b)")(got[1], expected[1], case)

    _compare_each(averaged_perceptron, reference, cases, "averaged_perceptron", compare)
