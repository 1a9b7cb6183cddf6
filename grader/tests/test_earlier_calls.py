"""A failed first call whose answer came from an earlier call says so, with calls that reproduce it when pasted.

Once every cell has run, the grader makes each failed first call again alone, right after the cell that defines the
function ran again (``GradedCells._show_earlier_calls``). A function right on it there kept state from a call
before (a visible test's, or an earlier hidden case's): its message then says so and lists the calls, in the order
the grader made them, which are run here, as a student would paste them, to check that they give the wrong answer
again. A function wrong on the call alone keeps its message as it was. The course is a copy of the grader's fixture
course whose predict check starts with a case the visible test's first call does not make (so that a memo the visible
test fills fails a first call, not a second one).
"""

from __future__ import annotations

import ast
import html
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import fixture_course

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.judging.checks.judge import DEPENDS_NOTE, EARLIER_CALLS_NOTE, LONE_REPEATS, VARIES_NOTE
from course_grader.trusted.pipeline import grade

VISIBLE_POINTS = "np.array([[2.0, 1.0], [1.0, 2.0], [1.0, 1.0]])"
#: The first case of the patched predict check: the visible test's points with w = 0, a call its visible test makes
#: second, after a call on the same shape.
FIRST_CASE = f'        Case((np.zeros(2), 0.0, {VISIBLE_POINTS}), "w = 0 on the visible test\'s points"),\n'

MEMO_BY_SHAPE = '''_answers = {}

def predict(w, b, X):
    X = np.asarray(X, dtype=float)
    if X.shape not in _answers:  # a memo keyed by the shape: the first answer for a shape is given for every X of it
        _answers[X.shape] = np.where(X @ np.asarray(w, dtype=float) + b >= 0, 1, -1)
    return _answers[X.shape]
'''
STRICT_SIGN = '''def predict(w, b, X):
    return np.where(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b > 0, 1, -1)
'''
#: A stand-in for an answer drawn at random that a test can rely on: right only while its cell has run exactly twice
#: (the grader's first lone call comes right after its first run again), wrong on every other call, however many
#: earlier calls there were; re-running the cell does not reset the count, as it does not reseed a generator.
RIGHT_ONCE = '''import builtins
builtins._predict_cell_runs = getattr(builtins, "_predict_cell_runs", 0) + 1

def predict(w, b, X):
    scores = np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b
    right = np.where(scores >= 0, 1, -1)
    return right if builtins._predict_cell_runs == 2 else -right
'''
RECIPES = {"memo_by_shape": MEMO_BY_SHAPE, "strict_sign": STRICT_SIGN, "right_once": RIGHT_ONCE}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("earlier_calls"))
    checks = course.source / "01_geometry" / "hidden_checks.py"
    text = checks.read_text(encoding="utf-8")
    anchor = "    grid = np.array([[0, 0], [1, 1], [2, -1], [-1, 2], [3, 0]])\n    cases = [\n"
    assert anchor in text, "the fixture's predict cases changed: update FIRST_CASE's anchor"
    checks.write_text(text.replace(anchor, anchor + FIRST_CASE), encoding="utf-8")
    recipes = tmp_path_factory.mktemp("recipes")
    for student, code in RECIPES.items():
        (recipes / f"{student}.py").write_text(
            f'BASE = "solutions"\nASSIGNMENTS = ["01_geometry"]\nCELLS = {{"01_geometry": {{"predict": {code!r}}}}}\n',
            encoding="utf-8")
    build_example_class(course, recipes)
    outcomes = grade(course, progress=False, jobs=1)
    return course, outcomes


def _predict_feedback(course, student: str) -> str:
    """The text of the verdict under the predict test cell of the student's graded notebook."""
    notebook = next((course.root / "autograded" / student / "01_geometry").glob("*.ipynb"))
    cell = next(cell for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
                if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_predict")
    return "\n".join(str(output.get("text", "")) + str(output.get("evalue", "")) + "".join(output.get("traceback", []))
                     for output in cell.get("outputs", []))


def _visible_tests(course) -> str:
    """The visible part of the released predict test cell."""
    notebook = next((course.release / "01_geometry").glob("*.ipynb"))
    cell = next(cell for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
                if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_predict")
    return "".join(cell["source"])


def _pasted_calls(message: str) -> list[str]:
    """The lines of Python the message gives after its "to reproduce it" line, comments removed."""
    after = message.split("then these calls in the order the grader made them:", 1)[1]
    lines = []
    for line in after.splitlines()[1:]:
        if not line.startswith("    "):
            break
        code = line.strip()
        if code and not code.startswith("#"):
            lines.append(code)
    return lines


@pytest.mark.slow
def test_a_memo_filled_by_the_visible_test_is_named_and_its_calls_reproduce_the_wrong_answer(graded):
    course, _ = graded
    feedback = html.unescape(_predict_feedback(course, "memo_by_shape"))
    assert EARLIER_CALLS_NOTE in feedback, feedback
    calls = _pasted_calls(feedback)
    assert calls and calls[-1].endswith("# answered wrong"), feedback
    # As the student would: the definitions, the test cell's visible part (its assertion fails on this memo: a hint),
    # then the calls pasted; the last gives the "received" value of the message again.
    namespace: dict = {"np": np}
    exec(MEMO_BY_SHAPE, namespace)
    try:
        exec(_visible_tests(course), namespace)
    except AssertionError:
        pass
    for line in calls[:-1]:
        exec(line, namespace)
    received = eval(calls[-1].split("  #")[0], namespace)
    shown = re.search(r"received: (.+)", feedback.split(EARLIER_CALLS_NOTE)[0]).group(1)
    assert np.array_equal(received, eval(shown, {"np": np})), (received, shown)
    alone: dict = {"np": np}
    exec(MEMO_BY_SHAPE, alone)
    expected = re.search(r"expected: (.+)", feedback).group(1)
    assert np.array_equal(eval(calls[-1].split("  #")[0], alone), eval(expected, {"np": np}))  # alone: right


@pytest.mark.slow
def test_a_function_wrong_on_the_call_alone_keeps_its_message_without_a_note(graded):
    course, outcomes = graded
    feedback = html.unescape(_predict_feedback(course, "strict_sign"))
    assert "predict returned" in feedback and "received:" in feedback, feedback
    assert EARLIER_CALLS_NOTE not in feedback and DEPENDS_NOTE not in feedback, feedback


@pytest.mark.slow
def test_a_call_answered_right_alone_once_and_wrong_when_made_again_is_named_as_varying_not_as_state(graded):
    """Made alone again after its cell ran again, the failed call was right once, then wrong on each of the repeats:
    the message says the answers vary from one call to the next (as a shuffle's do), never that earlier calls left
    state, and gives the call to make a few times."""
    course, _ = graded
    feedback = html.unescape(_predict_feedback(course, "right_once"))
    made = LONE_REPEATS + 1
    assert f"made again alone {made} times" in feedback, feedback
    assert f"answered right 1 time and wrong {made - 1} times" in feedback, feedback
    assert "draws random numbers" in feedback and EARLIER_CALLS_NOTE not in feedback, feedback
    if feedback.count("predict returned") > 1:
        assert VARIES_NOTE in feedback and DEPENDS_NOTE not in feedback, feedback
    call = feedback.split("to see its answers change:", 1)[1].splitlines()[1].strip()
    assert call.startswith("predict(") and ast.parse(call), call
    memo = html.unescape(_predict_feedback(course, "memo_by_shape"))
    assert "draws random numbers" not in memo and VARIES_NOTE not in memo, memo


@pytest.mark.slow
def test_the_lone_calls_change_messages_only(graded):
    """Both students lose predict's cell alone, and the grading's record hit no limit (the lone calls are the grader's)."""
    course, outcomes = graded
    assert {outcome.student for outcome in outcomes} == set(RECIPES)
    for outcome in outcomes:
        assert outcome.status == "graded", (outcome.student, outcome.reason)
        assert {cell for cell, score in dict(outcome.cell_scores).items() if score == 0} == {"test_predict"}, outcome.cell_scores
        notebook = next((course.root / "autograded" / outcome.student / "01_geometry").glob("*.ipynb"))
        record = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]
        limits = [value["limits_hit"] for value in record.values() if isinstance(value, dict) and "limits_hit" in value]
        assert limits == [[]], (outcome.student, limits)


def test_the_pasted_calls_are_the_grader_s_calls_in_its_order():
    """A function wrong on its seventh call only (the first call of case 4, after three cases' first and second calls)
    is called through the real request, harness and parser; the calls ``earlier_calls`` writes, pasted into a fresh
    namespace, give that wrong answer on their last line, and every earlier line was answered right."""
    from course_grader.in_sandbox import harness
    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.checks.draws import case_generator
    from course_grader.trusted.judging.checks.judge import earlier_calls, judge_replies, prepare_cases
    from course_grader.trusted.judging.wire import harness_request, new_marker, read_replies

    check = course_checks(Path(fixture_course())).of("01_geometry")["set_margin"]
    prepared = prepare_cases(check, case_generator(b"\x01" * 32, "set_margin", "student", "digest"))

    def counting(reference):
        made = [0]

        def set_margin(*args, **kwargs):
            made[0] += 1
            answer = reference(*args, **kwargs)
            return answer + 1.0 if made[0] == 7 else answer  # wrong on the seventh call alone

        return set_margin

    marker, lines = new_marker(), []
    request = harness_request(check.function, prepared.cases, marker, prepared.again)
    harness.call_all({check.function: counting(check.reference)}, request, emit=lines.append)
    replies, stopped = read_replies("\n".join(lines), marker, len(prepared.cases))
    verdict = judge_replies(check, prepared.cases, replies, stopped, prepared.expected, prepared.again,
                            prepared.again_expected)
    assert verdict.first_call_to_retry == 3 and verdict.failed_cases == [3], verdict.failures
    pasted = _pasted_calls(earlier_calls(check, prepared.cases, prepared.again, 3))
    namespace = {"np": np, "set_margin": counting(check.reference)}
    for line in pasted[:-1]:
        exec(textwrap.dedent(line.split("  #")[0]), namespace)
    again = eval(pasted[-1].split("  #")[0], namespace)
    assert again == replies[3].result and again != prepared.expected[3]


def test_the_pasted_calls_parse_as_python():
    """The reproduction text is Python: ``earlier_calls`` on a check of the fixture course, parsed line by line."""
    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.checks.draws import case_generator
    from course_grader.trusted.judging.checks.judge import earlier_calls, prepare_cases

    check = course_checks(Path(fixture_course())).of("01_geometry")["set_margin"]
    prepared = prepare_cases(check, case_generator(b"\x01" * 32, "set_margin", "student", "digest"))
    text = earlier_calls(check, prepared.cases, prepared.again, 3)
    for line in _pasted_calls(text):
        ast.parse(textwrap.dedent(line.split("  #")[0]))
    assert len(_pasted_calls(text)) > 3  # three earlier cases, each a first and a second call, then the failed one


def test_a_first_call_that_leads_after_an_earlier_second_call_failed_is_made_alone_and_its_calls_reproduce_it():
    """A norm cached by len(w) gets a second call wrong first (w scaled, the norm kept), but the failure shown first is
    a later first call's, which alone is right: that call is the one to make again alone, and the calls ``earlier_calls``
    writes for it, pasted into a fresh namespace, give its wrong answer again (held-out corpus 6: two such messages
    did not reproduce when pasted)."""
    from course_grader.in_sandbox import harness
    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.checks.draws import case_generator
    from course_grader.trusted.judging.checks.judge import earlier_calls, judge_replies, prepare_cases
    from course_grader.trusted.judging.wire import harness_request, new_marker, read_replies

    check = course_checks(Path(fixture_course())).of("01_geometry")["set_margin"]
    prepared = prepare_cases(check, case_generator(b"\x02" * 32, "set_margin", "student", "digest"))

    def norm_cached_by_length():
        norms: dict = {}

        def set_margin(w, b, X, y):
            w = np.asarray(w, dtype=float)
            norms.setdefault(len(w), float(np.linalg.norm(w)))
            return float(np.min(np.asarray(y) * (np.asarray(X, dtype=float) @ w + b)) / norms[len(w)])

        return set_margin

    marker, lines = new_marker(), []
    harness.call_all({"set_margin": norm_cached_by_length()}, harness_request("set_margin", prepared.cases, marker,
                                                                             prepared.again), emit=lines.append)
    replies, stopped = read_replies("\n".join(lines), marker, len(prepared.cases))
    verdict = judge_replies(check, prepared.cases, replies, stopped, prepared.expected, prepared.again,
                            prepared.again_expected)
    position = verdict.first_call_to_retry
    assert position is not None and verdict.failed_cases[0] == position, (verdict.failed_cases, verdict.failures[0])
    assert "the call the grader made right after it" not in verdict.failures[0]  # a first call leads
    alone = norm_cached_by_length()(*prepared.cases[position].args)
    assert np.isclose(alone, prepared.expected[position])  # alone it is right: the message needs the calls before it
    pasted = _pasted_calls(earlier_calls(check, prepared.cases, prepared.again, position))
    namespace = {"np": np, "set_margin": norm_cached_by_length()}
    for line in pasted[:-1]:
        exec(textwrap.dedent(line.split("  #")[0]), namespace)
    again = eval(pasted[-1].split("  #")[0], namespace)
    assert np.isclose(again, replies[position].result) and not np.isclose(again, prepared.expected[position])
