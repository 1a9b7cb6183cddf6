"""The hidden-test checks: they pass the source solutions and catch each typical bug by name."""

import runpy
from pathlib import Path

import nbformat
import numpy as np
import pytest

from perceptron_course.grading.trusted import checks
from perceptron_course.grading.trusted.course import Course

REPO = Path(__file__).resolve().parents[1]
COURSE = Course.open(REPO)
BUGGY = runpy.run_path(str(REPO / "example_class" / "cy_buggy.py"))["CELLS"]
ALTERNATIVE = runpy.run_path(str(REPO / "example_class" / "ben_alternative.py"))["CELLS"]


def solution_namespace(assignment: str, overrides: dict | None = None) -> dict:
    """Run the setup and solution cells of an assignment's source, some replaced by other code."""
    namespace: dict = {}
    for name in COURSE.notebook_names(assignment):
        notebook = nbformat.read(COURSE.source / assignment / f"{name}.ipynb", as_version=4)
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and not meta.get("grade"):
                exec((overrides or {}).get(meta.get("grade_id"), cell.source), namespace)
    return namespace


# (assignment, function, check) for every graded part
PARTS = [
    ("01_geometry", "augment", checks.check_augment),
    ("01_geometry", "predict", checks.check_predict),
    ("01_geometry", "signed_distance", checks.check_signed_distance),
    ("01_geometry", "set_margin", checks.check_set_margin),
    ("02_algorithm", "perceptron_step", checks.check_perceptron_step),
    ("02_algorithm", "train_perceptron", checks.check_train_perceptron),
    ("03_worked_example", "is_mistake", checks.check_is_mistake),
    ("03_worked_example", "perceptron_trace", checks.check_perceptron_trace),
    ("04_convergence", "radius", checks.check_radius),
    ("04_convergence", "proof_terms", checks.check_proof_terms),
    ("04_convergence", "mistake_bound", checks.check_mistake_bound),
    ("05_multiclass", "ovr_train", checks.check_ovr_train),
    ("05_multiclass", "ovr_predict", checks.check_ovr_predict),
    ("05_multiclass", "multiclass_train", checks.check_multiclass_train),
    ("06_limitations", "xor_features", checks.check_xor_features),
    ("06_limitations", "kernel_perceptron", checks.check_kernel_perceptron),
    ("06_limitations", "averaged_perceptron", checks.check_averaged_perceptron),
]


def test_every_graded_cell_has_a_check():
    graded = {(a, cell.removeprefix("test_")) for a in COURSE.assignments() for cell in COURSE.graded_cells(a)}
    assert graded == {(a, f) for a, f, _ in PARTS}


@pytest.mark.parametrize(("assignment", "function", "check"), PARTS, ids=[p[1] for p in PARTS])
def test_source_solution_passes(assignment, function, check):
    check(solution_namespace(assignment)[function])


@pytest.mark.parametrize(("assignment", "function", "check"), PARTS, ids=[p[1] for p in PARTS])
def test_alternative_correct_solution_passes(assignment, function, check):
    check(solution_namespace(assignment, ALTERNATIVE[assignment])[function])


@pytest.mark.parametrize(("assignment", "function", "check"), PARTS, ids=[p[1] for p in PARTS])
def test_a_stub_is_reported_as_not_implemented(assignment, function, check):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="not implemented yet"):
        check(stub)


BUG_MESSAGES = {
    "predict": "score of exactly 0 must predict \\+1",
    "perceptron_step": "correctly classified point must not change",
    "train_perceptron": "wrong bias b",
    "is_mistake": "score 0.0, label \\+1",
    "perceptron_trace": "same array over and over",
    "mistake_bound": "augmented data",
    "ovr_train": "random classes",
    "ovr_predict": "not by thresholding",
    "kernel_perceptron": "wrong value",
}


@pytest.mark.parametrize("function", sorted(BUG_MESSAGES))
def test_each_typical_bug_is_caught_and_named(function):
    assignment = next(a for a, f, _ in PARTS if f == function)
    check = next(c for _, f, c in PARTS if f == function)
    namespace = solution_namespace(assignment, BUGGY[assignment])
    with pytest.raises(AssertionError, match=BUG_MESSAGES[function]):
        check(namespace[function])


def test_buggy_student_keeps_every_correct_part():
    for assignment, function, check in PARTS:
        if function not in BUGGY[assignment]:
            check(solution_namespace(assignment, BUGGY[assignment])[function])


def test_more_near_misses_are_caught():
    def sign_zero_negative(w, b, X):
        return np.where(np.asarray(X, float) @ np.asarray(w, float) + b > 0, 1, -1)

    with pytest.raises(AssertionError, match="sign\\(0\\) = \\+1"):
        checks.check_predict(sign_zero_negative)

    def in_place_step(w, b, x, y):
        if y * (w @ x + b) <= 0:
            w += y * x
            return w, b + y, True
        return w, b, False

    with pytest.raises(AssertionError, match="leave its arguments unchanged"):
        checks.check_perceptron_step(in_place_step)

    def radius_about_the_centre(X):
        X = np.asarray(X, float)
        return float(np.max(np.linalg.norm(X - X.mean(axis=0), axis=1)))

    with pytest.raises(AssertionError, match="from the origin"):
        checks.check_radius(radius_about_the_centre)

    def averaged_stopping_early(X, y, epochs):
        namespace = solution_namespace("02_algorithm")
        w, b, _, _ = namespace["train_perceptron"](X, y, epochs)
        return w, b

    with pytest.raises(AssertionError, match="averaged_perceptron"):
        checks.check_averaged_perceptron(averaged_stopping_early)


def test_hidden_checks_emit_nothing_on_stderr(capfd):
    def noisy_but_correct(w, b, X):
        with np.errstate(all="warn"):
            np.log(np.zeros(1))  # a RuntimeWarning inside student code
        return np.where(np.asarray(X, float) @ np.asarray(w, float) + b >= 0, 1, -1)

    checks.check_predict(noisy_but_correct)
    assert capfd.readouterr().err == ""


def test_checks_never_mutate_the_callers_data():
    seen = []

    def recording_augment(X):
        seen.append(X)
        X[:] = 0  # a student who scribbles on the input must not corrupt later cases
        return np.hstack([np.ones((X.shape[0], 1)), X])

    with pytest.raises(AssertionError):
        checks.check_augment(recording_augment)
    assert len(seen) >= 1


# ------------------------------------------------------------------ shortcuts and tampering


def test_calling_the_reference_scores_zero_under_any_name():
    from perceptron_course.perceptron import predict as borrowed

    def predict(w, b, X):
        return borrowed(w, b, X)

    with pytest.raises(AssertionError, match="calls the reference library \\(perceptron_course.perceptron.predict\\)"):
        checks.check_predict(predict)

    import perceptron_course.geometry as g

    with pytest.raises(AssertionError, match="reference library"):
        checks.check_augment(lambda X: g.augment(X))


def test_allowed_helpers_stay_allowed():
    namespace = solution_namespace("04_convergence")  # its mistake_bound calls theory.max_margin
    checks.check_mistake_bound(namespace["mistake_bound"])

    from perceptron_course.theory import mistake_bound as borrowed

    with pytest.raises(AssertionError, match="perceptron_course.theory.mistake_bound"):
        checks.check_mistake_bound(lambda X, y: borrowed(X, y))


@pytest.mark.parametrize(
    ("module", "attribute"),
    [(np, "allclose"), (np, "array_equal"), (np.linalg, "norm"), (__import__("builtins"), "isinstance")],
)
def test_replacing_what_the_checks_use_is_detected(monkeypatch, module, attribute):
    original = getattr(module, attribute)
    monkeypatch.setattr(module, attribute, lambda *args, **kwargs: original(*args, **kwargs))
    with pytest.raises(AssertionError, match=f"your code replaced .*{attribute}"):
        checks.check_set_margin(solution_namespace("01_geometry")["set_margin"])


def test_patching_the_reference_is_detected(monkeypatch):
    import perceptron_course.perceptron as reference

    wrong = solution_namespace("01_geometry", BUGGY["01_geometry"])["predict"]
    monkeypatch.setattr(reference, "predict", wrong)  # make the reference agree with a wrong answer
    with pytest.raises(AssertionError, match="replaced perceptron_course.perceptron.predict"):
        checks.check_predict(wrong)
