"""The hidden checks: they pass the source solutions and correct variants, and catch each bug by name.

They run here in process, through the same wire format as in the grading kernel
(``checks.run_in_process``): what they decide is what the grader decides.
"""

import os
import re
import runpy
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course_grader.trusted.judging import checks
from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks import compare, judge, second_calls
from course_grader.trusted.judging.checks.cases import Case
from course_grader.trusted.judging.wire import Unsupported
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.course.course import Course
from course_grader.trusted.judging.checks import run_in_process
from course_grader.trusted.judging.verdicts import declarations, split_hidden

REPO = Path(__file__).resolve().parents[2]
COURSE = Course.open(REPO)
#: Every check of the course, from each assignment's source/<assignment>/hidden_checks.py.
CHECKS = course_checks(REPO)
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


def declared_parts() -> list[tuple[str, str, str]]:
    """(assignment, graded cell, function) for every check a hidden-test region declares."""
    parts = []
    for assignment in COURSE.assignments():
        for name in COURSE.notebook_names(assignment):
            notebook = nbformat.read(COURSE.source / assignment / f"{name}.ipynb", as_version=4)
            for cell in notebook.cells:
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("grade") and cell.cell_type == "code":
                    parts += [(assignment, meta["grade_id"], d.target) for d in declarations(split_hidden(cell.source)[1], CHECKS.of(assignment))]
    return parts


PARTS = [(assignment, function) for assignment, _, function in declared_parts()]


def assignment_of(function: str) -> str:
    """The assignment whose part checks ``function``, whatever the term calls it."""
    found = [assignment for assignment, name in PARTS if name == function]
    assert found, f"no part of this course checks {function}: this test is of a part the course no longer has"
    return found[0]


def check(function_name: str, function) -> None:
    """Raise AssertionError with the student's message unless ``function`` passes its check."""
    getattr(checks, f"check_{function_name}")(function)


def test_every_graded_code_cell_declares_exactly_its_own_check():
    declared = declared_parts()
    graded_code = {(a, cell) for a in COURSE.assignments() for cell in COURSE.graded_cells(a)
                   if cell.startswith("test_")}
    assert {(a, cell) for a, cell, _ in declared} == graded_code
    assert all(cell == f"test_{function}" for _, cell, function in declared)
    assert set(function for _, _, function in declared) <= set(CHECKS), "a hidden-test region declares a check that does not exist"


@pytest.mark.parametrize(("assignment", "function"), PARTS, ids=[p[1] for p in PARTS])
def test_source_solution_passes(assignment, function):
    check(function, solution_namespace(assignment)[function])


@pytest.mark.parametrize(("assignment", "function"), PARTS, ids=[p[1] for p in PARTS])
def test_alternative_correct_solution_passes(assignment, function):
    check(function, solution_namespace(assignment, ALTERNATIVE.get(assignment, {}))[function])


@pytest.mark.parametrize(("assignment", "function"), PARTS, ids=[p[1] for p in PARTS])
def test_a_stub_is_reported_as_not_implemented(assignment, function):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"write {function}: see its docstring")

    with pytest.raises(AssertionError, match="not implemented yet"):
        check(function, stub)


BUG_MESSAGES = {
    "predict": "labels other than -1 and \\+1",
    "perceptron_step": "correctly classified point, which must not change w or b",
    "train_perceptron": "a wrong b",
    "is_mistake": "score 0, label \\+1",
    "perceptron_trace": "append a copy of w",
    "mistake_bound": "augmented points",
    "ovr_train": "a wrong W",
    "ovr_predict": "not by thresholding",
    "kernel_perceptron": "a wrong value",
    "kesler_points": "the first of np.unique",
}


@pytest.mark.parametrize("function", sorted(set(BUG_MESSAGES) & {f for _, f in PARTS}))
def test_each_typical_bug_is_caught_and_named(function):
    assignment = next(a for a, f in PARTS if f == function)
    namespace = solution_namespace(assignment, BUGGY.get(assignment, {}))
    with pytest.raises(AssertionError, match=BUG_MESSAGES[function]):
        check(function, namespace[function])


#: Parts that call another part: a bug there is a bug here too.
CALLS = {"choose_epoch_cap": "train_perceptron"}


def test_buggy_student_keeps_every_correct_part():
    for assignment, function in PARTS:
        if function not in BUGGY.get(assignment, {}) and CALLS.get(function) not in BUGGY.get(assignment, {}):
            check(function, solution_namespace(assignment, BUGGY.get(assignment, {}))[function])


def test_more_near_misses_are_caught():
    def sign_zero_negative(w, b, X):
        return np.where(np.asarray(X, float) @ np.asarray(w, float) + b > 0, 1, -1)

    with pytest.raises(AssertionError, match="score is exactly 0 and must predict \\+1"):
        checks.check_predict(sign_zero_negative)

    def radius_about_the_centre(X):
        X = np.asarray(X, float)
        return float(np.max(np.linalg.norm(X - X.mean(axis=0), axis=1)))

    with pytest.raises(AssertionError, match="from the origin"):
        checks.check_radius(radius_about_the_centre)

    def averaged_stopping_early(X, y, epochs):
        namespace = solution_namespace(assignment_of("train_perceptron"))
        w, b, _, _ = namespace["train_perceptron"](X, y, epochs)
        return w, b

    with pytest.raises(AssertionError, match="averaged_perceptron"):
        checks.check_averaged_perceptron(averaged_stopping_early)


def test_changing_an_argument_in_place_is_caught_even_when_the_answer_is_right():
    def in_place_step(w, b, x, y):
        if y * (w @ x + b) <= 0:
            x *= y  # the classic slip: the caller's point now has its label folded in
            return w + x, b + y, True
        return w, b, False

    with pytest.raises(AssertionError, match="changed its argument x in place"):
        checks.check_perceptron_step(in_place_step)

    def scribbling_augment(X):
        result = np.hstack([np.ones((len(X), 1)), np.asarray(X, dtype=float)])
        X[:] = 0
        return result

    with pytest.raises(AssertionError, match="changed its argument X in place"):
        checks.check_augment(scribbling_augment)


#: choose_epoch_cap that sorts the caller's caps list in place (``caps.sort()``): the answer stays right.
SORTS_CAPS_IN_PLACE = '''def choose_epoch_cap(X_train, y_train, X_dev, y_dev, caps):
    X_dev = np.asarray(X_dev, dtype=float)
    caps.sort()  # the caller's list, reordered in place
    best_cap, best_accuracy = None, -1.0
    for cap in caps:
        w, b, _, _ = train_perceptron(X_train, y_train, cap)
        accuracy = np.mean(np.where(X_dev @ w + b >= 0, 1, -1) == np.asarray(y_dev))
        if accuracy > best_accuracy:
            best_cap, best_accuracy = cap, accuracy
    return int(best_cap)
'''


if "choose_epoch_cap" in CHECKS:  # a course that drops its assignment has no such check, and no such test
    def test_changing_a_list_argument_in_place_is_caught():
        # caps.sort() reordered the caller's list and once scored full marks (only arrays were judged).
        assignment = next(a for a, f in PARTS if f == "choose_epoch_cap")
        sorting = solution_namespace(assignment, {"choose_epoch_cap": SORTS_CAPS_IN_PLACE})
        verdict = run_in_process(CHECKS["choose_epoch_cap"], sorting["choose_epoch_cap"])
        assert "changed its argument caps in place" in verdict.message() and "the caller's list" in verdict.message()
        assert run_in_process(CHECKS["choose_epoch_cap"], solution_namespace(assignment)["choose_epoch_cap"]).passed


@pytest.mark.parametrize("sent, after, changed", [
    ([3, 1, 2], [3, 1, 2], False), ([3, 1, 2], [1, 2, 3], True), ([3, 1, 2], [3, 1, 2, 4], True),
    ([3, 1, 2], [3.0, 1, 2], True), ([3, 1, 2], (3, 1, 2), True), ([1.5, float("nan")], [1.5, float("nan")], False),
    ([np.int32(4)], [np.int64(4)], False), ([[1.0, 2.0], [3.0]], [[1.0, 2.0], [3.0, 0.0]], True),
    ((np.zeros(2), [1]), (np.zeros(2), [1]), False), ((np.zeros(2), [1]), (np.ones(2), [1]), True),
    ((np.zeros(2), [1]), (np.zeros(2), []), True), ({"a": [1, 2]}, {"a": [1, 2]}, False), ({"a": [1, 2]}, {"a": [2, 1]}, True),
    ({"a": np.zeros(2)}, {"a": np.zeros(3)}, True), ([1, 2], Unsupported("list"), True),
    (3, 4, False),  # a number cannot change in place: only what the kernel could write into counts
])
def test_every_mutable_argument_is_judged_by_value_against_what_was_sent(sent, after, changed):
    check = CHECKS["choose_epoch_cap"]
    case = Case((sent,), "a case")
    assert judge.changed_arguments(check, case, [after]) == (check.parameters[0] if changed else "")


def _train(X, y, max_epochs, *, epochs_run):
    """A correct perceptron except for how many epochs it runs and when it says it converged."""
    X = np.hstack([np.ones((len(X), 1)), np.asarray(X, float)])
    w, n_mistakes, converged = np.zeros(X.shape[1]), 0, False
    for _ in range(epochs_run(max_epochs)):
        mistakes = 0
        for x, label in zip(X, y):
            if label * (w @ x) <= 0:
                w, mistakes = w + label * x, mistakes + 1
        n_mistakes += mistakes
        if mistakes == 0:
            converged = True
            break
    return w[1:], float(w[0]), n_mistakes, converged


def failed_behaviours(function_name: str, function) -> str:
    """Every failure message of a check, not only the ones a student is shown."""
    return "\n".join(run_in_process(CHECKS[function_name], function, secret=b"test secret 0123", student="t").failures)


def test_an_epoch_cap_off_by_one_is_caught_by_the_cases_on_the_boundary():
    checks.check_train_perceptron(lambda X, y, max_epochs: _train(X, y, max_epochs, epochs_run=lambda cap: cap))
    one_too_few = failed_behaviours("train_perceptron", lambda X, y, cap: _train(X, y, cap, epochs_run=lambda c: c - 1))
    assert "converges exactly on its last allowed epoch" in one_too_few
    one_too_many = failed_behaviours("train_perceptron", lambda X, y, cap: _train(X, y, cap, epochs_run=lambda c: c + 1))
    assert "needs one epoch more than allowed" in one_too_many


def test_other_correct_styles_keep_full_marks():
    checks.check_is_mistake(lambda score, label, rule: np.bool_(label * score <= 0) if rule == "margin"
                            else np.bool_((1 if score >= 0 else -1) != label))
    checks.check_augment(lambda X: np.column_stack([np.ones(len(X)), np.asarray(X, float)]))
    checks.check_radius(lambda X: np.max(np.sqrt(np.sum(np.asarray(X, float) ** 2, axis=1))))  # a NumPy scalar
    correct_step = solution_namespace(assignment_of("perceptron_step"))["perceptron_step"]
    checks.check_perceptron_step(lambda w, b, x, y: (lambda w_new, b_new, mistake: (w_new, np.asarray(b_new)[()], np.bool_(mistake)))(
        *correct_step(w, b, x, y)))  # NumPy scalars for b (of its kind: int64 for an int b) and the bool


def test_right_values_of_another_type_than_the_docstring_promises_fail_with_a_message_naming_both():
    correct_step = solution_namespace(assignment_of("perceptron_step"))["perceptron_step"]
    with pytest.raises(AssertionError, match="right values as a list where the docstring promises a tuple"):
        checks.check_perceptron_step(lambda w, b, x, y: list(correct_step(w, b, x, y)))
    with pytest.raises(AssertionError, match="right values as a list where the docstring promises an ndarray of float"):
        checks.check_augment(lambda X: [[1.0, *row] for row in np.asarray(X, float).tolist()])
    correct_predict = solution_namespace(assignment_of("predict"))["predict"]
    with pytest.raises(AssertionError, match="dtype float64 where the docstring promises an ndarray of int"):
        checks.check_predict(lambda w, b, X: correct_predict(w, b, X).astype(float))


def test_right_numbers_of_another_scalar_type_than_the_docstring_promises_fail_with_a_message_naming_both():
    """A count the docstring calls an int must be a Python int (a NumPy integer is not one, nor a whole float), and
    a float a float (a NumPy float64 is one; an int, or an array of one entry, is not)."""
    limitations = solution_namespace(assignment_of("hinge_sgd"))
    for n_steps_as, named in ((float, "a Python float"), (np.int64, "a NumPy int64")):
        with pytest.raises(AssertionError, match=f"right value as {named} where the docstring promises an int as n_steps"):
            checks.check_hinge_sgd(lambda *args: (lambda w, b, n: (w, b, n_steps_as(n)))(*limitations["hinge_sgd"](*args)))
    convergence = solution_namespace(assignment_of("radius"))
    with pytest.raises(AssertionError, match=r"right value as an ndarray of shape \(1,\) where the docstring promises a float"):
        checks.check_radius(lambda X: np.atleast_1d(convergence["radius"](X)))
    algorithm = solution_namespace(assignment_of("train_perceptron"))
    with pytest.raises(AssertionError, match="right value as a Python int where the docstring promises a float as b"):
        checks.check_train_perceptron(lambda *args, **kwargs: (lambda w, b, n, c: (w, int(b), n, c))(
            *algorithm["train_perceptron"](*args, **kwargs)))


def docstring_return_types(function) -> tuple[str | None, ...]:
    """The type of each value a numpydoc "Returns" section lists, as a check declares it: ``"ndarray of float"``,
    ``"ndarray of int"`` (``float64`` is a float, ``int`` any integer) or ``"ndarray"``, a ``"list of ndarray"``, a
    ``"float"``, an ``"int"`` or ``"float or int"``; ``None`` for anything else (a bool, which ``compare_bool`` always holds to its type)."""
    section = function.__doc__.split("Returns\n    -------\n")[1]
    types = []
    for line in section.split("\n"):
        if not line.strip():
            break
        if line.startswith("    ") and not line.startswith("     "):
            written = line.strip().partition(" : ")[2] or line.strip()
            found = re.match(r"(list of )?ndarray( of (float|int))?", written)
            scalar = re.fullmatch(r"float or int|float|int", written)
            types.append(f"{found.group(1) or ''}ndarray{found.group(2) or ''}" if found else scalar.group(0) if scalar else None)
    return tuple(types)


@pytest.mark.parametrize("assignment, function", [(a, f) for a, f in PARTS if CHECKS.of(a)[f].judge is None])
def test_each_check_holds_the_returned_values_to_the_types_the_docstring_states(assignment, function):
    """A docstring that promises an ndarray (of floats, of ints), a float, an int or a tuple is the contract: the check
    declares the same types, so that right values in a list, ints where floats are promised, or a NumPy integer where
    an int is, fail with their own message.
    (A check with a judge of its own, such as xor_features's, which takes any map that makes XOR separable, says
    itself what it accepts.)"""
    check_ = CHECKS.of(assignment)[function]
    stated = docstring_return_types(solution_namespace(assignment)[function])
    declared = getattr(check_.compare, "returns", None)
    if len(stated) > 1:
        assert declared == ("tuple", stated), f"{function}: the docstring promises a tuple of {stated}; the check declares {declared}"
    else:
        assert declared == stated[0], f"{function}: the docstring promises {stated[0]}; the check declares {declared}"


def test_a_type_that_matters_is_named_in_its_own_message():
    with pytest.raises(AssertionError, match="wrap the test in bool"):
        checks.check_is_mistake(lambda score, label, rule: int(label * score <= 0))


def test_a_failed_case_shows_the_call_expected_and_received():
    wrong = solution_namespace(assignment_of("predict"), BUGGY[assignment_of("predict")])["predict"]
    with pytest.raises(AssertionError) as failure:
        checks.check_predict(wrong)
    message = str(failure.value)
    call = next(line.strip() for line in message.splitlines() if line.strip().startswith("predict("))
    namespace = {"np": np}
    received = eval(call, namespace, {"predict": wrong})  # the call in the message can be pasted and run
    expected_line = next(line for line in message.splitlines() if line.strip().startswith("expected:"))
    received_line = next(line for line in message.splitlines() if line.strip().startswith("received:"))
    assert np.array_equal(eval(received_line.split(":", 1)[1], namespace), received)
    assert not np.array_equal(eval(expected_line.split(":", 1)[1], namespace), received)


def test_hidden_checks_emit_nothing_on_stderr(capfd):
    def noisy_but_correct(w, b, X):
        with np.errstate(all="warn"):
            np.log(np.zeros(1))  # a RuntimeWarning inside student code
        return np.where(np.asarray(X, float) @ np.asarray(w, float) + b >= 0, 1, -1)

    checks.check_predict(noisy_but_correct)
    assert capfd.readouterr().err == ""


def test_the_secret_and_the_student_draw_the_cases():
    check_ = CHECKS["train_perceptron"]

    def random_inputs(secret: bytes, student: str) -> list:
        generator = case_generator(secret, check_.function, student, "the same code")
        # float data (small integer data may repeat by chance)
        return [np.asarray(case.args[0]) for case in check_.cases(generator) if case.behaviour.startswith("random separable data (")]

    same = random_inputs(b"course secret one", "ada"), random_inputs(b"course secret one", "ada")
    assert all(np.array_equal(a, b) for a, b in zip(*same))
    other_secret = random_inputs(b"course secret two", "ada")
    other_student = random_inputs(b"course secret one", "ben")
    assert not any(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(same[0], other_secret))
    assert not any(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(same[0], other_student))


def test_a_resubmission_draws_new_cases_and_a_regrade_the_same():
    check_ = CHECKS["train_perceptron"]

    def random_inputs(submission: str) -> list:
        generator = case_generator(b"course secret one", check_.function, "ada", submission)
        return [np.asarray(case.args[0]) for case in check_.cases(generator) if case.behaviour.startswith("random separable data (")]

    first, regrade, resubmitted = random_inputs("code v1"), random_inputs("code v1"), random_inputs("code v2")
    assert all(np.array_equal(a, b) for a, b in zip(first, regrade))
    assert not any(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(first, resubmitted))


def test_a_verdict_comes_from_returned_data_only():
    class Liar:
        """An object that claims to equal anything: the grader never asks it."""

        def __eq__(self, other):
            return True

        def __array__(self, *args, **kwargs):
            raise RuntimeError("never called on the trusted side")

    verdict = run_in_process(CHECKS["augment"], lambda X: Liar(), secret=b"s" * 16, student="x")
    assert not verdict.passed and "an object of type Liar" in verdict.message()


def test_silence_is_never_a_pass():
    from course_grader.trusted.judging.checks.judge import judge_replies

    check_ = CHECKS["augment"]
    cases = check_.cases(case_generator(b"s" * 16, "augment", "x"))
    verdict = judge_replies(check_, cases, [])
    assert not verdict.passed and "gave no answer" in verdict.message()


REFERENCE_CHECKS = [name for name, check_ in CHECKS.items() if check_.reference is not None and check_.judge is None]


@pytest.mark.parametrize("function_name", REFERENCE_CHECKS)
def test_answers_prepared_ahead_are_the_ones_the_verdict_uses(function_name):
    from course_grader.in_sandbox import harness
    from course_grader.trusted.judging.checks.judge import judge_replies, prepare_cases
    from course_grader.trusted.judging.wire import harness_request, read_replies

    check_ = CHECKS[function_name]
    prepared = prepare_cases(check_, case_generator(b"s" * 16, function_name, "x"))
    assert [case.behaviour for case in prepared.cases] == \
        [case.behaviour for case in check_.cases(case_generator(b"s" * 16, function_name, "x"))]
    lines: list[str] = []
    request = harness_request(function_name, prepared.cases, "@@m@@")
    harness.call_all({function_name: check_.reference}, request, emit=lines.append)
    replies, problem = read_replies("\n".join(lines), "@@m@@", len(prepared.cases))
    assert problem == "" and len(replies) == len(prepared.cases)
    assert judge_replies(check_, prepared.cases, replies, expected=prepared.expected).passed
    shifted = prepared.expected[1:] + prepared.expected[:1]  # answers of other cases: the verdict must notice
    assert not judge_replies(check_, prepared.cases, replies, expected=shifted).passed


def test_a_feature_map_that_memorises_points_does_not_pass_for_one_that_makes_xor_separable():
    checks.check_xor_features(lambda X: np.column_stack([np.asarray(X, float), np.prod(np.asarray(X, float), axis=1)]))
    seen: dict = {}

    def memoriser(X):
        ids = [seen.setdefault(tuple(np.round(x, 9)), len(seen)) for x in np.asarray(X, dtype=float)]
        features = np.zeros((len(ids), 400))
        features[np.arange(len(ids)), ids] = 1.0
        return features

    with pytest.raises(AssertionError, match="only the points it has seen"):
        checks.check_xor_features(memoriser)


def test_labels_must_be_the_classes_themselves():
    def almost(W, b, classes, X):
        index = np.argmax(np.asarray(X, float) @ np.asarray(W, float).T + b, axis=1)
        picked = np.asarray(classes)[index]
        return np.char.add(picked.astype(str), "_WRONG") if picked.dtype.kind == "U" else picked + 0.75

    with pytest.raises(AssertionError, match="wrong labels"):
        checks.check_ovr_predict(almost)


def test_a_feature_map_may_not_change_width_between_samples():
    calls = {"n": 0}

    def changing(X):
        calls["n"] += 1
        X = np.asarray(X, float)
        base = np.column_stack([X, np.prod(X, axis=1)])
        return np.column_stack([base, np.zeros((len(X), int(calls["n"] > 21)))])  # wider from the fresh samples on

    assert "same number of features" in failed_behaviours("xor_features", changing)


# ----------------------------------------------------------------------------- proof_squeeze, hinge_sgd, mlp_forward

NEW_BUGS = {  # cy_buggy's bug in each new part, and the boundary (drawn afresh per student) that must catch it
    name: boundary for name, boundary in {
        "proof_squeeze": "a separator w_star far from unit length",
        "hinge_sgd": "exactly 1 (the kink: the step is taken)",
        "mlp_forward": "scores of exactly 0",
    }.items() if name in CHECKS  # the parts of a dropped assignment are not checked here
}


@pytest.mark.parametrize("function", sorted(NEW_BUGS))
def test_each_new_bug_is_caught_on_its_random_boundary_for_every_student(function):
    assignment = next(a for a, f in PARTS if f == function)
    buggy = solution_namespace(assignment, BUGGY.get(assignment, {}))[function]
    for student in ("ann", "bob", "cat", "dan", "eva"):
        failures = run_in_process(CHECKS[function], buggy, secret=b"another secret", student=student).failures
        on_boundary = [message for message in failures if NEW_BUGS[function] in message]
        assert on_boundary, (student, failures[:1])


@pytest.mark.parametrize("function", sorted(NEW_BUGS))
def test_new_boundaries_are_drawn_per_student(function):
    def boundaries(student: str) -> list[str]:
        cases = CHECKS[function].cases(case_generator(b"s" * 16, function, student))
        return [repr(case.args) for case in cases if not case.is_random and "visible test" not in case.behaviour]

    first, second = boundaries("ann"), boundaries("bob")
    assert len(first) >= 5 and len(first) == len(second)
    assert all(one != two for one, two in zip(first, second))


def test_new_boundaries_cover_integer_input_and_lists():
    for function in NEW_BUGS:
        cases = CHECKS[function].cases(case_generator(b"s" * 16, function, "ann"))
        integer = [case for case in cases if "integer input" in case.behaviour]
        lists = [case for case in cases if "Python lists" in case.behaviour]
        assert integer and all(np.asarray(case.args[0]).dtype.kind == "i" for case in integer), function
        assert lists and all(isinstance(case.args[0], list) for case in lists), function


def test_the_squeeze_reference_is_the_proof_on_real_runs():
    check_ = CHECKS["proof_squeeze"]
    from perceptron_course import theory

    cases = check_.cases(case_generator(b"s" * 16, "proof_squeeze", "ann"))
    for case in cases:
        table = check_.reference(*case.args)
        X, y, history, w_star = (np.asarray(value, dtype=float) for value in case.args)
        assert table.shape == (len(history), 4)
        assert np.all(table[:, 0] <= table[:, 1] + 1e-9) and np.all(table[:, 2] <= table[:, 3] + 1e-9), case.behaviour
        unit = w_star / np.linalg.norm(w_star)
        assert np.allclose(table[:, 1:3], np.column_stack(theory.proof_quantities(history, unit)))
    assert sum("(a run with a bias)" in case.behaviour for case in cases) > 0


def test_the_hinge_reference_without_regularisation_is_the_librarys_hinge_sgd():
    from perceptron_course import losses
    from perceptron_course.datasets import linearly_separable

    reference = CHECKS["hinge_sgd"].reference
    rng = np.random.default_rng(3)
    for seed in range(15):
        X, y = (linearly_separable(12, 3, margin=0.1, seed=seed) if seed % 2
                else (rng.normal(size=(10, 2)), np.where(rng.random(10) < 0.5, -1, 1)))
        learning_rate = float(rng.uniform(0.05, 1.0))
        run = losses.sgd(X, y, loss="hinge", learning_rate=learning_rate, max_epochs=8)
        w, b, n_steps = reference(X, y, learning_rate, 0.0, 8)
        assert np.allclose(w, run.w) and np.isclose(b, run.b) and n_steps == run.n_steps


def test_the_forward_pass_reference_is_the_librarys_mlp():
    from perceptron_course.mlp import init_mlp, mlp_decision_function, mlp_predict

    reference = CHECKS["mlp_forward"].reference
    X = np.random.default_rng(0).normal(size=(9, 3))
    model = init_mlp(3, 4, seed=1)
    model = type(model)(W=model.W, c=np.full(4, 0.3), v=model.v, d=-0.2)
    hidden, scores, labels = reference(X, model.W, model.c, model.v, model.d)
    assert hidden.shape == (9, 4)
    assert np.allclose(scores, mlp_decision_function(model, X)) and np.array_equal(labels, mlp_predict(model, X))


def test_new_near_misses_are_caught():
    convergence = solution_namespace(assignment_of("proof_squeeze"))

    def gamma_of_the_best_separator(X, y, history, w_star):  # gamma of max_margin, not of the w_star given
        table = convergence["proof_squeeze"](X, y, history, w_star)
        _, gamma = convergence["max_margin"](np.asarray(X, float), np.asarray(y))
        return np.column_stack([np.arange(len(table)) * gamma, table[:, 1:]])

    assert "proof_squeeze returned a wrong value" in failed_behaviours("proof_squeeze", gamma_of_the_best_separator)

    def counting_from_one(X, y, history, w_star):
        X, H, u = np.asarray(X, float), np.asarray(history, float), np.asarray(w_star, float) / np.linalg.norm(w_star)
        gamma, R_squared = np.min(np.asarray(y) * (X @ u)), np.max(np.sum(X**2, axis=1))
        j = np.arange(1, len(H) + 1)  # off by one: row 0 already counts an update
        return np.column_stack([j * gamma, H @ u, np.sum(H**2, axis=1), j * R_squared])

    assert "no update yet (k = 0)" in failed_behaviours("proof_squeeze", counting_from_one)

    limitations = solution_namespace(assignment_of("hinge_sgd"))

    def shrinking_only_on_steps(X, y, learning_rate, lam, epochs):
        X = np.asarray(X, float)
        w, b, n_steps = np.zeros(X.shape[1]), 0.0, 0
        for _ in range(epochs):
            for x_i, y_i in zip(X, y):
                if y_i * (w @ x_i + b) <= 1:
                    w = (1 - learning_rate * lam) * w + learning_rate * y_i * x_i
                    b, n_steps = b + learning_rate * y_i, n_steps + 1
        return w, b, n_steps

    assert "hinge_sgd returned a wrong w" in failed_behaviours("hinge_sgd", shrinking_only_on_steps)

    def regularising_b(X, y, learning_rate, lam, epochs):
        w, b, n_steps = limitations["hinge_sgd"](X, y, learning_rate, 0.0, epochs)
        return limitations["hinge_sgd"](X, y, learning_rate, lam, epochs)[0], b * (1 - learning_rate * lam), n_steps

    assert "hinge_sgd returned a wrong" in failed_behaviours("hinge_sgd", regularising_b)

    def strictly_positive_is_plus_one(X, W, c, v, d):
        hidden, scores, _ = limitations["mlp_forward"](X, W, c, v, d)
        return hidden, scores, np.where(scores > 0, 1, -1)

    assert "every score exactly 0" in failed_behaviours("mlp_forward", strictly_positive_is_plus_one)

    def hidden_transposed(X, W, c, v, d):
        hidden, scores, labels = limitations["mlp_forward"](X, W, c, v, d)
        return hidden.T, scores, labels

    assert "wrong shape" in failed_behaviours("mlp_forward", hidden_transposed)


def test_gamma_of_max_margin_is_told_first_by_its_own_case_not_by_the_length_of_w_star():
    """P13: a proof_squeeze that normalises w_star but takes gamma from max_margin reads first the case that names that
    mistake (a unit w_star that is not the widest separator), never "far from unit length"."""
    witnesses = runpy.run_path(str(COURSE.source / assignment_of("proof_squeeze") / "bug_witnesses.py"))["WITNESSES"]
    bug = witnesses["proof_squeeze"][0]["gamma of the max-margin separator"]
    for student in ("ann", "bob", "cat"):
        first_case = CHECKS["proof_squeeze"].cases(case_generator(b"p13 secret", "proof_squeeze", student))[0]
        assert "max_margin" in first_case.behaviour and "unit length" not in first_case.behaviour, first_case.behaviour
        verdict = run_in_process(CHECKS["proof_squeeze"], bug, secret=b"p13 secret", student=student)
        assert verdict.failures, student
        assert verdict.failures[0].startswith(f"proof_squeeze returned a wrong value on {first_case.behaviour}"), \
            (student, verdict.failures[0][:300])
        assert "unit length" not in verdict.message().splitlines()[0], (student, verdict.message()[:300])


def test_new_parts_accept_other_correct_styles():
    limitations = solution_namespace(assignment_of("hinge_sgd"))
    checks.check_hinge_sgd(lambda *args: (lambda w, b, n: (w, np.float64(b), n))(*limitations["hinge_sgd"](*args)))  # b a NumPy float
    checks.check_mlp_forward(lambda *args: (lambda hidden, scores, labels: (hidden, scores, labels.astype(np.int8)))(
        *limitations["mlp_forward"](*args)))
    convergence = solution_namespace(assignment_of("proof_squeeze"))
    checks.check_proof_squeeze(lambda *args: np.asfortranarray(convergence["proof_squeeze"](*args)))
    for wrong_type in (lambda *args: list(limitations["hinge_sgd"](*args)),
                       lambda *args: (lambda w, b, n: (w.tolist(), b, n))(*limitations["hinge_sgd"](*args))):
        with pytest.raises(AssertionError, match="right values as a list where the docstring promises"):
            checks.check_hinge_sgd(wrong_type)


# ----------------------------------------------------------------------------- the comparison is total

from functools import lru_cache  # noqa: E402

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from course_grader.trusted.judging.checks.cases import Check  # noqa: E402
from course_grader.trusted.judging.checks.compare import (compare_arrays, compare_bool, compare_count,  # noqa: E402
                                                          compare_labels, compare_number)
from course_grader.trusted.judging.checks.judge import judge_replies, prepare_cases  # noqa: E402
from course_grader.checks_api import compare_history  # noqa: E402
from course_grader.trusted.judging.wire import Reply  # noqa: E402
from course_grader.testing.wire_strategies import KNOWN_HOSTILE, wire_values  # noqa: E402 - beside the tests that use them

#: The longest verdict message: two failed cases, each a call (cut at 2,000 characters) and two values (1,500 each).
MAX_MESSAGE_CHARS = 15_000
received_values = wire_values | st.lists(wire_values, min_size=1, max_size=4).map(tuple)


@lru_cache(maxsize=None)
def prepared_cases(function_name: str):
    check_ = CHECKS[function_name]
    return prepare_cases(check_, case_generator(b"property secret", function_name, "p"))


def verdict_on(function_name: str, values: list, after: list):
    """The verdict when the kernel answers the check's real cases with ``values`` (cycled) and ``after``."""
    check_ = CHECKS[function_name]
    prepared = prepared_cases(function_name)
    replies = [Reply(i, True, result=values[i % len(values)], args_after=after) for i in range(len(prepared.cases))]
    if check_.judge is None:  # a few cases suffice: each is judged on its own
        picked = sorted({i % len(prepared.cases) for i in (0, 2, 5, len(prepared.cases) - 1)})
        return judge_replies(check_, [prepared.cases[i] for i in picked], [replies[i] for i in picked],
                             expected=[prepared.expected[i] for i in picked])
    return judge_replies(check_, prepared.cases, replies)


#: Replies drawn per check. The adoption rehearsal (``test_adoption.py``) draws fewer: its edits add checks, which
#: it must see through the wire, but change none of the comparisons the draws explore.
WIRE_EXAMPLES = int(os.environ.get("COURSE_TESTS_WIRE_EXAMPLES", "40"))


@pytest.mark.parametrize("function_name", sorted(CHECKS))
@settings(max_examples=WIRE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(values=st.lists(received_values, min_size=1, max_size=3), after=st.lists(wire_values, max_size=5))
def test_any_reply_the_wire_accepts_gives_a_verdict_never_an_exception(function_name, values, after):
    verdict = verdict_on(function_name, values, after)
    message = verdict.message()
    assert isinstance(message, str) and len(message) <= MAX_MESSAGE_CHARS
    assert "could not" not in message  # each comparison says what differed; the last-resort boundary is not needed


@pytest.mark.parametrize("function_name", sorted(CHECKS))
def test_replies_that_once_crashed_the_comparison_are_failed_cases(function_name):
    for value in KNOWN_HOSTILE:
        verdict = verdict_on(function_name, [value], [value, "1.0", np.array(["a", "b"]), 2**63])
        assert not verdict.passed, (function_name, value)
        assert len(verdict.message()) <= MAX_MESSAGE_CHARS and "could not" not in verdict.message()


COMPARATORS = [compare_arrays(exact=True, what="x"), compare_arrays(exact=False, what="x"), compare_number(),
               compare_count(), compare_bool(), compare_labels(), compare_history(), compare_history(exact=True)]
EXPECTED = [np.array([1.0, -1.0]), np.array([[0.5]]), 3, 2.5, True, np.array([1, -1, 1]), np.zeros((0, 2))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(received=received_values, compare_index=st.integers(0, len(COMPARATORS) - 1),
       expected_index=st.integers(0, len(EXPECTED) - 1))
@example(received=[[1, 2], [3]], compare_index=0, expected_index=0)
@example(received=2**63, compare_index=3, expected_index=2)
@example(received="1.0", compare_index=2, expected_index=3)
def test_every_comparator_returns_a_difference_or_none(received, compare_index, expected_index):
    compare, expected = COMPARATORS[compare_index], EXPECTED[expected_index]
    if compare_index in (2, 3) and np.ndim(expected) != 0 or compare_index == 4 and not isinstance(expected, bool):
        expected = 1  # what these comparators are given by their checks: one number, or a bool
    difference = compare(received, expected)
    assert difference is None or all(len(text) <= 2_000 for text in (difference.expected, difference.received, difference.detail))


def test_a_comparator_that_breaks_gives_a_failed_case_naming_the_case():
    def fragile(received, expected):
        raise ZeroDivisionError("a bug in a comparator")

    check_ = Check("f", ("x",), lambda rng: [Case((1.0,), "the case named here")], lambda x: x, fragile)
    verdict = judge_replies(check_, check_.cases(None), [Reply(0, True, result=1.0, args_after=[1.0])])
    assert not verdict.passed
    assert "the case named here" in verdict.message() and "could not compare (ZeroDivisionError)" in verdict.message()
    assert "f(1.0)" in verdict.message()


def test_a_judge_that_breaks_gives_a_failed_verdict():
    def fragile(cases, replies):
        raise KeyError("a bug in a judge")

    check_ = Check("g", ("x",), lambda rng: [Case((1.0,), "one case")], judge=fragile)
    verdict = judge_replies(check_, check_.cases(None), [Reply(0, True, result=1.0, args_after=[1.0])])
    assert not verdict.passed and "could not judge (KeyError)" in verdict.message()


def test_augment_must_return_floats_for_integer_input_too():
    with pytest.raises(AssertionError, match="dtype int64 where the docstring promises an ndarray of float"):
        checks.check_augment(lambda X: np.hstack([np.ones((len(X), 1), dtype=np.asarray(X).dtype), np.asarray(X)]))


def test_every_stated_boundary_is_drawn_at_random():
    """A table of the public cases' answers passes no part: each boundary also comes in random cases."""
    generator = case_generator(b"s" * 16, "x", "y")
    behaviours = {name: [case.behaviour for case in check_.cases(generator) if case.is_random] for name, check_ in CHECKS.items()}
    assert all(len(found) >= 5 for found in behaviours.values()), {k: len(v) for k, v in behaviours.items()}
    boundary = {
        "predict": "exactly 0", "perceptron_step": "exactly 0", "choose_epoch_cap": "exactly 0",
        "is_mistake": "exactly 0", "ovr_predict": "tie", "perceptron_trace": "'sign'", "kernel_perceptron": "max_epochs = ",
        "train_perceptron": "integer", "augment": "integer", "signed_distance": "integer", "set_margin": "integer",
        "radius": "integer", "mistake_bound": "integer", "ovr_train": "integer", "multiclass_train": "integer",
        "averaged_perceptron": "integer",
    }
    for name, word in boundary.items():
        if name in behaviours:  # a part of a dropped assignment is not checked here
            assert any(word in behaviour for behaviour in behaviours[name]), (name, word)
    array_like = ["augment", "predict", "signed_distance", "set_margin", "train_perceptron", "choose_epoch_cap",
                  "perceptron_trace", "radius", "mistake_bound", "ovr_train", "ovr_predict", "multiclass_train",
                  "xor_features", "kernel_perceptron", "averaged_perceptron"]
    for name in (name for name in array_like if name in behaviours):
        assert any("Python lists" in behaviour for behaviour in behaviours[name]), name


def _strict_predict(w, b, X):
    return np.where(np.asarray(X, float) @ np.asarray(w, float) + b > 0, 1, -1)


def _strict_step(w, b, x, y):
    if y * (np.dot(w, x) + b) < 0:
        return w + y * x, b + y, True
    return np.asarray(w, float), float(b), False


def _last_of_ties(W, b, classes, X):
    scores = np.asarray(X, float) @ np.asarray(W, float).T + b
    return np.asarray(classes)[len(b) - 1 - np.argmax(scores[:, ::-1], axis=1)]


#: A wrong convention a student could hide behind a table of the public cases, and what the check then reports.
TABLE_LOOKUPS = {
    "predict": (_strict_predict, "exactly 0"),
    "perceptron_step": (_strict_step, "exactly 0"),
    "ovr_predict": (_last_of_ties, "tie"),
    "is_mistake": (lambda score, label, rule: bool(score < 0), ""),
}


@pytest.mark.parametrize("function", [f for _, f in PARTS if f in TABLE_LOOKUPS])
def test_table_lookups_of_the_public_cases_fail(function):
    """Students who answer the named cases from a table and use the wrong convention elsewhere lose the part."""
    wrong, behaviour = TABLE_LOOKUPS[function]
    right = solution_namespace(dict((f, a) for a, f in PARTS)[function])[function]
    keys = {repr(case.args) for case in CHECKS[function].cases(case_generator(b"t", "x", "y")) if not case.is_random}

    def student(*args):
        return (right if repr(args) in keys else wrong)(*args)

    failed = failed_behaviours(function, student)
    assert failed and behaviour in failed


def test_np_sign_in_choose_epoch_cap_loses_the_part():
    namespace = solution_namespace(assignment_of("train_perceptron"))
    train = namespace["train_perceptron"]

    def with_np_sign(X_train, y_train, X_dev, y_dev, caps):
        best_cap, best = None, -1.0
        for cap in sorted(caps):
            w, b, _, _ = train(X_train, y_train, cap)
            accuracy = np.mean(np.sign(np.asarray(X_dev, float) @ w + b) == np.asarray(y_dev))
            if accuracy > best:
                best_cap, best = cap, accuracy
        return best_cap

    for student in ("a", "b", "c"):
        failures = run_in_process(CHECKS["choose_epoch_cap"], with_np_sign, secret=b"cap secret", student=student).failures
        assert any("exactly 0" in failure and "a wrong cap" in failure for failure in failures), student


def test_a_function_that_breaks_on_lists_loses_an_array_like_part():
    def needs_an_array(w, b, X):
        return (X @ w + b) / np.linalg.norm(w)

    assert "Python lists" in failed_behaviours("signed_distance", needs_an_array)


def test_messages_show_values_in_their_own_type():
    counts = compare_arrays(exact=True, what="alpha")(np.array([0, 1]), np.array([2, 1]))
    assert counts.detail == "first difference at index 0: expected 2, received 0"
    flags = compare_labels()(np.array([True, False]), np.array([1, -1]))
    assert flags.received == "np.array([True, False])" and "np.sign" not in flags.hint
    signs = compare_labels()(np.array([0.0, -1.0]), np.array([1, -1]))
    assert "np.sign(0) is 0" in signs.hint
    assert compare_count("one of the caps", noun="cap")(3, 5).what == "a wrong cap"


@pytest.mark.parametrize("trainer_name", ["train_one_vs_rest", "train_multiclass"])
def test_a_kept_multiclass_run_is_the_run_training_with_that_cap_gives(trainer_name):
    from perceptron_course import multiclass
    multiclass_checks = CHECKS.assignments[assignment_of("multiclass_train")].module
    KeptRuns, _class_data = multiclass_checks.KeptRuns, multiclass_checks._class_data

    trainer = getattr(multiclass, trainer_name)
    trained = []
    kept = KeptRuns(lambda X, y, max_epochs: trained.append(max_epochs) or trainer(X, y, max_epochs=max_epochs))
    rng = np.random.default_rng(7)
    reused = 0
    for k in range(40):
        X, y = _class_data(rng, integer=k % 2 == 1)
        uncapped = kept.run(X, y, max_epochs=40)
        stop = int(np.max(uncapped.epochs))
        for cap in sorted({1, max(stop - 1, 1), stop, stop + 1, 30, 40}):
            before = len(trained)
            got = kept.run(X.tolist() if cap % 2 else X, y, max_epochs=cap)  # as a case passes them: sometimes as lists
            reused += len(trained) == before
            fresh = trainer(X, y, max_epochs=cap)
            for field in ("W", "b", "n_mistakes", "epochs", "converged", "classes"):
                assert np.array_equal(getattr(got, field), getattr(fresh, field)), (k, cap, field)
    assert reused > 40  # what is given back rather than trained again: a run that converged, asked again at or after its end


def test_a_case_the_reference_cannot_answer_is_dropped_and_named_never_failed():
    from course_grader.trusted.judging.checks.cases import Case, Check
    from course_grader.trusted.judging.checks.compare import compare_number
    from course_grader.trusted.judging.checks.judge import prepare_cases

    def reference(x):
        if x == 3:
            raise ArithmeticError("the solver gave up")
        return 2.0 * x

    check_ = Check("double", ("x",), lambda rng: [Case((x,), f"random number {x}") for x in range(5)], reference, compare_number())
    prepared = prepare_cases(check_, np.random.default_rng(0))
    assert [case.args for case in prepared.cases] == [(0,), (1,), (2,), (4,)]
    assert prepared.dropped == ("random number 3 (the reference raised ArithmeticError)",)
    assert run_in_process(check_, lambda x: 2.0 * x).passed
    assert not run_in_process(check_, lambda x: 2.0 * x + (x == 4)).passed


# ----------------------------------------------------------------------------- messages


def _visible_test_calls(assignment: str, function: str) -> list[dict]:
    """The arguments (by parameter name) of every call the visible tests of ``function``'s cell make to it."""
    import inspect

    namespace = solution_namespace(assignment)
    solution = namespace[function]
    signature = inspect.signature(solution)
    calls: list[dict] = []

    def recording(*args, **kwargs):
        calls.append(dict(signature.bind(*args, **kwargs).arguments))
        return solution(*args, **kwargs)

    for name in COURSE.notebook_names(assignment):
        notebook = nbformat.read(COURSE.source / assignment / f"{name}.ipynb", as_version=4)
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == f"test_{function}":
                exec(split_hidden(cell.source)[0], {**namespace, function: recording})
    return calls


def _same_arguments(one: dict, other: dict) -> bool:
    return one.keys() == other.keys() and all(
        np.shape(one[key]) == np.shape(other[key]) and np.array_equal(np.asarray(one[key]), np.asarray(other[key]))
        for key in one)


@pytest.mark.parametrize(("assignment", "function"), PARTS, ids=[p[1] for p in PARTS])
def test_a_case_called_the_visible_test_is_a_call_the_visible_test_makes(assignment, function):
    import inspect

    calls = _visible_test_calls(assignment, function)
    parameters = list(inspect.signature(solution_namespace(assignment)[function]).parameters)
    named = [case for case in CHECKS[function].cases(case_generator(b"s" * 16, function, "ann"))
             if "visible test" in case.behaviour and "another sample" not in case.behaviour]
    assert calls
    for case in named:
        arguments = {**dict(zip(parameters, case.args)), **case.kwargs}
        assert any(_same_arguments(arguments, call) for call in calls), case.behaviour


def test_no_message_of_the_bug_witnesses_has_an_empty_part():
    witnessed = 0
    for assignment in COURSE.assignments():
        path = COURSE.source / assignment / "bug_witnesses.py"  # optional, beside the part's check
        for function, (bugs, _) in (runpy.run_path(str(path))["WITNESSES"] if path.is_file() else {}).items():
            witnessed += 1
            check_ = CHECKS.of(assignment)[function]
            for name, bug in bugs.items():
                verdict = run_in_process(check_, bug, secret=b"messages", student="m")
                assert not verdict.passed, (function, name)
                for message in verdict.failures:
                    for line in message.splitlines():
                        assert line.strip() not in ("expected:", "received:", "hint:"), (function, name, message)
    assert witnessed or not any((COURSE.source / a / "bug_witnesses.py").is_file() for a in COURSE.assignments())


def test_a_long_call_reads_short_then_whole_to_paste():
    from course_grader.trusted.judging.checks.cases import SHORT_CALL_CHARS, call_text

    check_ = CHECKS["train_perceptron"]
    cases = check_.cases(case_generator(b"s" * 16, "train_perceptron", "ann"))
    long_case = max(cases, key=lambda case: case.size())
    text = call_text(check_, long_case)
    short, title, whole = text.splitlines()
    assert len(short) <= SHORT_CALL_CHARS and short.startswith("train_perceptron(X, y, max_epochs=")
    assert f"X: an array of shape {np.shape(long_case.args[0])}" in short
    assert title.strip() == "the whole call, to paste in a cell:"
    pasted = eval(whole.strip().replace("train_perceptron(", "(lambda *a, **k: (a, k))("), {"np": np})
    assert np.array_equal(pasted[0][0], long_case.args[0]) and pasted[1] == long_case.kwargs
    short_case = min(cases, key=lambda case: case.size())
    assert "\n" not in call_text(check_, short_case)


def test_float32_is_named_as_the_difference():
    limitations = solution_namespace(assignment_of("mlp_forward"))

    def float32_forward(X, W, c, v, d):
        return tuple(part.astype(np.float32) if part.dtype.kind == "f" else part for part in limitations["mlp_forward"](X, W, c, v, d))

    message = failed_behaviours("mlp_forward", float32_forward)
    assert "returned float32 values instead of float64 as hidden" in message and "float32 precision" in message
    assert "a wrong" not in message.split("\n")[0]


def test_a_sample_the_solver_cannot_judge_never_fails_a_feature_map(monkeypatch):
    from perceptron_course import theory

    def giving_up(X, y):
        raise ArithmeticError("the data are separable, but no solver found their max-margin separator")

    monkeypatch.setattr(theory, "max_margin", giving_up)
    assert run_in_process(CHECKS["xor_features"], lambda X: np.column_stack([np.asarray(X, float), np.prod(np.asarray(X, float), axis=1)])).passed


# Attack round 12 (item 3): numbers returned as text (``['1.25']``, dtype ``<U``) got full marks in 04_convergence,
# since the comparisons cast what they received to float. Every comparison now requires numbers.
NOT_NUMBERS = {"text": lambda value: np.asarray(value).astype(str), "a string": lambda value: str(float(np.ravel(value)[0])),
               "text in a list": lambda value: [str(item) for item in np.ravel(value)],
               "bools": lambda value: np.ones(np.shape(value), dtype=bool),
               # attack round 13 (finding 3): one bool among numbers made NumPy read the whole list as numbers
               "a bool among numbers": lambda value: _first_entry_as(np.asarray(value).tolist(), True),
               "a NumPy bool among numbers": lambda value: _first_entry_as(np.asarray(value).tolist(), np.True_),
               "a bool in an object array": lambda value: np.array(_first_entry_as(np.asarray(value).tolist(), True),
                                                                   dtype=object)}


def _first_entry_as(value, entry):
    """``value`` (a number or nested lists of numbers) with its first number replaced by ``entry``."""
    if not isinstance(value, list):
        return entry
    return [_first_entry_as(value[0], entry), *value[1:]]


@pytest.mark.parametrize("form", sorted(NOT_NUMBERS))
@pytest.mark.parametrize("compare, expected", [
    (compare.compare_number(), 1.25), (compare.compare_count(), 1),
    (compare.compare_arrays(exact=True, what="an array"), np.array([1.0, 1.0])),
    (compare.compare_arrays(exact=False, what="an array"), np.array([[1.0], [1.0]])),
    (compare.compare_labels(), np.array([1, 1])),
])
def test_a_comparison_requires_numbers_not_text_or_bools(compare, expected, form):
    received = NOT_NUMBERS[form](expected)
    assert compare(np.asarray(expected), expected) is None  # the same values as numbers pass
    difference = compare(received, expected)
    assert difference is not None and ("not" in difference.what or "other than" in difference.what), (form, difference)
    assert ("True" if "bool" in form else "text") in difference.hint, (form, difference)


# A course that drops the assignment of ovr_predict has no such check, and no such test.
if "ovr_predict" in CHECKS:
    @pytest.mark.parametrize("received, expected", [
        ([True, 7, True], np.array([1, 7, 1])), ([np.True_, 0], np.array([1, 0])), (np.array([True, False]), np.array([1, 0])),
    ])
    def test_ovr_predict_refuses_bools_among_its_classes(received, expected):
        _compare_predicted = CHECKS["ovr_predict"].compare  # this course's check, from its hidden_checks.py

        assert _compare_predicted(np.asarray(received).astype(int), expected) is None  # the same values as numbers pass
        difference = _compare_predicted(received, expected)
        assert difference is not None and "not" in difference.what, difference


def test_bools_among_numbers_are_still_refused_after_the_wire():
    from course_grader.trusted.judging.wire import decode_value, encode

    for value in ([True, -1, True], [np.True_, 2.5], [[1.0], [True]]):
        rebuilt = decode_value(encode(value))
        assert compare.as_float_array(rebuilt) is None, rebuilt
    assert compare.compare_labels()(decode_value(encode([True, -1, True])), np.array([1, -1, 1])) is not None


def test_an_in_place_change_hidden_from_the_harness_s_report_still_fails(monkeypatch):
    # Attack round 12 (item 2): a perceptron_step that adds y x to the caller's w in place, in a kernel where student
    # code had replaced json.dumps (reached through a class attribute) so that the harness reported every argument
    # unchanged: 3/3. The harness now calls each case again on the same objects; the second answer is judged here.
    import json

    from course_grader.trusted.judging.checks import run_in_process

    def perceptron_step(w, b, x, y):
        mistake = bool(y * (np.dot(w, x) + b) <= 0)
        if mistake:
            w += y * np.asarray(x, dtype=float)  # the caller's array
            b = b + y
        return w, b, mistake

    honest = lambda w, b, x, y: perceptron_step(np.array(w, dtype=float), b, x, y)  # noqa: E731
    real_dumps = json.dumps
    sent: list = []

    class Box:  # what the attacker reached json through
        module = json

    def lying_dumps(value, *args, **kwargs):
        if isinstance(value, dict) and value.get("function") == "perceptron_step":
            sent[:] = value["calls"]
        if isinstance(value, dict) and "args_after" in value and sent:
            value = {**value, "args_after": sent[value["index"]]["args"]}  # "unchanged", says the report
            value.pop("shares", None)  # "and nothing returned is an argument"
        return real_dumps(value, *args, **kwargs)

    assert run_in_process(CHECKS["perceptron_step"], honest).passed
    assert not run_in_process(CHECKS["perceptron_step"], perceptron_step).passed
    monkeypatch.setattr(Box.module, "dumps", lying_dumps)
    from course_grader.trusted.judging.wire import harness_request

    request = harness_request("perceptron_step", CHECKS["perceptron_step"].cases(
        case_generator(b"s" * 16, "perceptron_step", "instructor")), "@@m@@")
    lying_dumps(request)  # the attacker read the request (the harness cell holds it)
    verdict = run_in_process(CHECKS["perceptron_step"], perceptron_step, secret=b"s" * 16)
    monkeypatch.undo()
    assert not verdict.passed
    assert not any("changed its argument" in failure for failure in verdict.failures)  # the report lied ...
    assert any(second_calls.SECOND_CALL in failure for failure in verdict.failures)  # ... the second answer did not


def test_the_second_call_keeps_the_arrays_and_takes_the_next_case_s_numbers_so_replaying_the_first_answer_fails(monkeypatch):
    # A hook that rewrites the report could also copy the first answer into the second: the second call's numbers come
    # from the next case, so its right answer is another one, which needs the arrays' values as they were sent.
    import json

    from course_grader.trusted.judging.checks import run_in_process
    from course_grader.trusted.judging.checks.judge import prepare_cases
    from course_grader.trusted.judging.checks.second_calls import second_call

    check = CHECKS["perceptron_step"]
    prepared = prepare_cases(check, case_generator(b"s" * 16, "perceptron_step", "instructor"))
    for index, case in enumerate(prepared.cases):
        again = second_call(prepared.cases, index)
        assert all(mine is theirs for mine, theirs in zip(case.args, again.args) if isinstance(mine, (np.ndarray, list)))
    differing = sum(not _same_answer(first, second) for first, second in zip(prepared.expected, prepared.again_expected))
    assert differing >= len(prepared.cases) // 3  # most second calls have another right answer

    def perceptron_step(w, b, x, y):
        mistake = bool(y * (np.dot(w, x) + b) <= 0)
        if mistake:
            w += y * np.asarray(x, dtype=float)
            b = b + y
        return w, b, mistake

    real_dumps = json.dumps

    def replaying_dumps(value, *args, **kwargs):
        if isinstance(value, dict) and "again" in value:
            value = {**value, "again": value["result"]}  # "the same answer, of course"
            value.pop("shares", None)  # the kernel's own report of what it returned: a hook hides it too
        return real_dumps(value, *args, **kwargs)

    monkeypatch.setattr(json, "dumps", replaying_dumps)
    verdict = run_in_process(check, perceptron_step, secret=b"s" * 16)
    honest = run_in_process(check, lambda w, b, x, y: perceptron_step(np.array(w, dtype=float), b, x, y), secret=b"s" * 16)
    monkeypatch.undo()
    assert not verdict.passed and any(second_calls.SECOND_CALL in failure for failure in verdict.failures)
    assert not honest.passed  # replaying is wrong for an honest function too: the second answer is judged on its own


def _same_answer(first, second) -> bool:
    return all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(first, second))


def _first_symmetric_matrix(cases: list) -> tuple[int, int] | None:
    """(case index, argument position) of the first argument that is a square symmetric matrix of 2 rows or more."""
    for index, case in enumerate(cases):
        for position, value in enumerate(case.args):
            if (isinstance(value, np.ndarray) and value.ndim == 2 and value.shape[0] == value.shape[1] > 1
                    and np.array_equal(value, value.T)):
                return index, position
    return None


def _symmetric_matrix_arguments() -> list[tuple[str, str, int, int]]:
    """(assignment, function, case index, argument position) of every check with a case whose argument is a Gram
    matrix, read from one draw of the course's cases."""
    found = []
    for assignment, function in PARTS:
        where = _first_symmetric_matrix(CHECKS.of(assignment)[function].cases(np.random.default_rng(0)))
        if where is not None:
            found.append((assignment, function, *where))
    return found


@pytest.mark.parametrize("assignment, function, index, position", _symmetric_matrix_arguments())
def test_a_second_call_keeps_a_symmetric_matrix_of_plus_and_minus_ones_within_the_precondition(assignment, function,
                                                                                               index, position):
    """A symmetric matrix whose entries are all -1 or +1 (the Gram matrix of the points 1 and -1, which random integer
    points give now and then) looks like labels: multiplied entry by entry, it would lose its symmetry, and the grader
    would refuse the whole notebook (held-out corpus 6 under one secret). Its second call keeps the precondition on
    every draw."""
    check = CHECKS.of(assignment)[function]
    base = check.cases(np.random.default_rng(0))[index]
    points = np.where(np.arange(base.args[position].shape[0]) % 2 == 0, 1, -1)[:, None]
    args = list(base.args)
    args[position] = points @ points.T
    case = Case(tuple(args), "a symmetric matrix of -1 and +1", base.kwargs)
    assert second_calls.precondition_failure(check, case) == "", "the matrix of -1 and +1 keeps the docstring's promise"
    first = check.reference(*case.args, **case.kwargs)
    for draw in range(200):
        follow, _ = second_calls.witnessing_second_call(check, [case], 0, first, np.random.default_rng(draw))
        assert second_calls.precondition_failure(check, follow) == "", (draw, follow.args)
