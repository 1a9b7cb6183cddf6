"""The reveal schedule: failed hidden cases by their behaviour until each student's due date, then in full.

End to end on a tiny class (two students of 01_geometry whose ``predict`` gets ``sign(0)`` wrong;
bob has a two-day extension) through the real ``grade`` and ``refresh``, with the moment given
(never the machine's clock); the feedback pages are read back from disk.
"""

from __future__ import annotations

import datetime as dt
import html
import re
import warnings

import nbformat
import pytest
from conftest import fixture_course
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course_grader.trusted.judging.checks.cases import Case, Check, Difference
from course_grader.trusted.judging.checks.judge import Verdict, judge_replies
from course_grader.trusted.course.course import Course, CourseError, nbgrader_api
from course_grader.trusted.course.example_class import copy_course, solved_notebook
from course_grader.trusted.judging.grading_metadata import GRADING_METADATA
from course_grader.trusted.gradebook.reveal import (
    UNKNOWN_BEHAVIOUR, conceal, course_schedule, details_shown, due_date, feedback_state,
)
from course_grader.trusted.judging.verdicts import FAILED_BEHAVIOURS, VERDICT_ERROR, verdict_output
from course_grader.trusted.judging.wire import Reply

ASSIGNMENT = "01_geometry"
#: 17:00 in Paris is 16:00 UTC: the gradebook keeps UTC.
DUE = dt.datetime(2026, 11, 27, 16, 0, tzinfo=dt.timezone.utc)
BOB_EXTENSION = dt.timedelta(days=2)
#: np.sign(0) is 0: a point with score exactly 0 is predicted 0 instead of +1.
SIGN_ZERO_BUG = "def predict(w, b, X):\n    return np.sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b)\n"


def set_schedule(course: Course, show_details: str) -> None:
    term = course.root / "term.toml"
    text, replaced = re.subn(r'^show_details = .*$', f'show_details = "{show_details}"',
                             term.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert replaced == 1
    term.write_text(text, encoding="utf-8")


def set_due_date_and_bobs_extension(course: Course) -> None:
    """The assignment due 17:00 in Paris, bob two days later, in term.toml (the gradebook follows it)."""
    term = course.root / "term.toml"
    text = term.read_text(encoding="utf-8").replace('timezone = "UTC"', 'timezone = "Europe/Paris"', 1)
    text = text.replace(f'name = "{ASSIGNMENT}"\n', f'name = "{ASSIGNMENT}"\ndue = "2026-11-27 17:00"\n', 1)
    text += (f'\n[[extensions]]\nstudent = "bob"\nassignment = "{ASSIGNMENT}"\n'
             f'hours = {BOB_EXTENSION.total_seconds() / 3600:g}\n')
    term.write_text(text, encoding="utf-8")
    assert course.term().due(ASSIGNMENT) == DUE and course.term().extension_of("bob", ASSIGNMENT) == BOB_EXTENSION


def page(course: Course, student: str) -> str:
    """The student's feedback page as text (entities decoded)."""
    return html.unescape((course.feedback / student / ASSIGNMENT / "geometry.html").read_text(encoding="utf-8"))


def hidden_failure(course: Course, student: str) -> str:
    """The full message of the failed hidden tests of predict, from the autograded notebook (what the TA sees)."""
    notebook = nbformat.read(course.root / "autograded" / student / ASSIGNMENT / "geometry.ipynb", as_version=4)
    [cell] = [cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_predict"]
    [failure] = [output for output in cell.outputs if output.get("ename") == VERDICT_ERROR]
    return failure["evalue"]


def details(message: str) -> list[str]:
    """The lines of a failure message that only the full version shows: the call, expected and received."""
    found = [line.strip() for line in message.splitlines()
             if line.strip().startswith(("predict(", "expected:", "received:"))]
    assert any(line.startswith("predict(") for line in found) and any(line.startswith("expected:") for line in found)
    return found


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The class graded the day before the due date, with the schedule "after_due_date"."""
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("reveal") / "course")
    set_schedule(course, "after_due_date")
    for student in ("ada", "bob"):
        notebook = solved_notebook(course, ASSIGNMENT, "geometry")
        [cell] = [cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "predict"]
        cell.source = SIGN_ZERO_BUG
        folder = course.submitted / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / "geometry.ipynb")
    from course_grader.trusted.pipeline import grade, record_source_cells

    record_source_cells(course, [ASSIGNMENT])
    set_due_date_and_bobs_extension(course)  # bob's reaches the gradebook once his submission has a row there
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=1, now=DUE - dt.timedelta(days=1))}
    assert {student: o.score for student, o in outcomes.items()} == {"ada": 6, "bob": 6}, outcomes
    return course


@pytest.mark.slow
def test_before_the_due_date_a_failed_hidden_case_shows_only_its_behaviour(graded_class):
    course = graded_class
    for student, due in (("ada", "2026-11-27 16:00 UTC"), ("bob", "2026-11-29 16:00 UTC")):
        full = hidden_failure(course, student)  # the TA's view keeps everything
        shown = page(course, student)
        assert "predict gave a wrong answer on " in shown and "score exactly 0" in shown
        assert f"shown in this feedback after your due date, {due} (your extension included" in shown
        for line in details(full):
            assert line not in shown, (student, line)
        assert "2 / 2" in shown and "0 / 2" in shown  # scores are not held back


@pytest.mark.slow
def test_refresh_reveals_each_student_after_their_own_due_date(graded_class):
    from course_grader.trusted.refresh import refresh

    course = graded_class
    bob_before = page(course, "bob")

    first = refresh(course, now=DUE + dt.timedelta(hours=1))  # ada's due date has passed, bob's has not
    assert first.submissions == [("ada", ASSIGNMENT)] and first.unchanged == [("bob", ASSIGNMENT)]
    ada = page(course, "ada")
    assert all(line in ada for line in details(hidden_failure(course, "ada")))
    assert "after your due date" not in ada
    assert page(course, "bob") == bob_before

    second = refresh(course, now=DUE + BOB_EXTENSION + dt.timedelta(minutes=1))
    assert second.submissions == [("bob", ASSIGNMENT)] and second.unchanged == [("ada", ASSIGNMENT)]
    assert all(line in page(course, "bob") for line in details(hidden_failure(course, "bob")))

    third = refresh(course, now=DUE + dt.timedelta(days=30))
    assert third.submissions == [] and len(third.unchanged) == 2

    # The default, "now": everything at once, whatever the date; switching the schedule back conceals again.
    set_schedule(course, "after_due_date")
    assert refresh(course, now=DUE - dt.timedelta(days=1)).submissions == [("ada", ASSIGNMENT), ("bob", ASSIGNMENT)]
    assert "after your due date" in page(course, "ada")
    set_schedule(course, "now")
    assert refresh(course, now=DUE - dt.timedelta(days=1)).submissions == [("ada", ASSIGNMENT), ("bob", ASSIGNMENT)]
    for student in ("ada", "bob"):
        assert all(line in page(course, student) for line in details(hidden_failure(course, student)))
        assert "after your due date" not in page(course, student)


# ---------------------------------------------------------------------- the pieces, without nbgrader runs

PREDICT = Check("predict", ("w", "b", "X"), lambda rng: [], reference=lambda w, b, X: [1],
                compare=lambda received, expected: None if received == expected else Difference(
                    "a wrong value", repr(expected), repr(received)))


def test_a_verdicts_behaviour_message_names_the_behaviours_and_no_call_or_value():
    cases = [Case(([0.0], 0.0, [[1.0]]), "a point with score exactly 0, which must be predicted +1"),
             Case(([1.0], 0.5, [[3.25]]), "random points"),
             Case(([2.0], 0.5, [[7.5]]), "random points, second")]
    replies = [Reply(0, True, [0]), Reply(1, False, None, ("ValueError", "bad X=[[3.25]]")), Reply(2, True, [1])]
    verdict = judge_replies(PREDICT, cases, replies)

    assert not verdict.passed and len(verdict.failures) == 2
    full, concealed = verdict.message(), verdict.behaviour_message()
    assert "predict([0.0], 0.0, [[1.0]])" in full and "expected: [1]" in full and "3.25" in full
    assert concealed == ("predict gave a wrong answer on a point with score exactly 0, which must be predicted +1.\n\n"
                         "predict raised ValueError on random points.")


def test_a_case_that_changed_its_argument_is_summarised_so():
    import numpy as np

    case = Case((np.zeros(1), 0.0, np.array([[3.25]])), "random points")
    reply = Reply(0, True, [1], args_after=[np.zeros(1), 0.0, np.array([[0.0]])])
    verdict = judge_replies(PREDICT, [case], [reply])

    assert "in place" in verdict.message() and "3.25" in verdict.message()
    assert verdict.behaviour_message() == "predict changed its argument X in place on random points."


def test_a_verdict_without_summaries_is_named_only_as_a_failed_hidden_case():
    verdict = Verdict("predict", 20, ["predict returned 3 on predict([1], 2, [[3]])"] * 3)
    assert verdict.behaviour_message() == "predict failed a hidden case.\n\n(and 1 more failed case of 20)"


def _graded_cell(grade_id: str, messages: list[str]):
    outputs = [new_output("stream", name="stdout", text="visible tests pass\n")]
    outputs += [verdict_output(Verdict("predict", 9, [message])) for message in messages]
    return new_code_cell("### BEGIN HIDDEN TESTS\ncheck_predict(predict)\n### END HIDDEN TESTS", outputs=outputs,
                         metadata={"nbgrader": {"grade": True, "grade_id": grade_id, "points": 2}})


def test_conceal_replaces_each_failed_verdict_by_its_recorded_behaviour_and_fails_closed():
    notebook = new_notebook(cells=[_graded_cell("test_predict", ["predict(1) expected: 2"]),
                                   _graded_cell("test_other", ["other(SECRET_A) expected: SECRET_B", "other(SECRET_C)"])])
    notebook.metadata[GRADING_METADATA] = {"limits_hit": [], FAILED_BEHAVIOURS: {"test_predict": ["predict gave a wrong answer on zeros."],
                                                                                  "test_other": ["other raised KeyError on ties."]}}
    conceal(notebook, DUE)

    errors = [output for cell in notebook.cells for output in cell.outputs if output.output_type == "error"]
    assert [output.evalue.split("\n\n")[0] for output in errors] == [
        "predict gave a wrong answer on zeros.", "other raised KeyError on ties.", UNKNOWN_BEHAVIOUR]
    assert all("after your due date, 2026-11-27 16:00 UTC" in output.evalue for output in errors)
    assert "SECRET" not in "".join(output.evalue + "".join(output.traceback) for output in errors)
    assert "expected: " not in "".join(output.evalue for output in errors)
    assert notebook.cells[0].outputs[0].text == "visible tests pass\n"


def test_details_are_shown_at_and_after_the_due_date_and_always_without_one():
    before, at = DUE - dt.timedelta(seconds=1), DUE.astimezone(dt.timezone(dt.timedelta(hours=1)))
    assert not details_shown("after_due_date", DUE, before)
    assert details_shown("after_due_date", DUE, at)  # the same instant, written in Paris time
    assert details_shown("after_due_date", None, before)  # no due date: everything now
    assert details_shown("now", DUE, before)
    with pytest.raises(ValueError, match="timezone"):
        details_shown("after_due_date", DUE, dt.datetime(2026, 11, 27))


def test_the_due_date_comes_from_the_gradebook_with_the_extension_and_marks_the_state(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    set_schedule(course, "after_due_date")
    with nbgrader_api(course).gradebook as gradebook, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert due_date(gradebook, ASSIGNMENT, "ada") is None  # no such assignment yet
        gradebook.update_or_create_assignment(ASSIGNMENT)
        assert due_date(gradebook, ASSIGNMENT, "ada") is None  # no due date
        gradebook.update_or_create_assignment(ASSIGNMENT, duedate="2026-11-27 17:00:00 Europe/Paris")
        gradebook.update_or_create_student("bob")
        gradebook.update_or_create_submission(ASSIGNMENT, "bob", extension=BOB_EXTENSION)
        assert due_date(gradebook, ASSIGNMENT, "ada") == DUE
        assert due_date(gradebook, ASSIGNMENT, "bob") == DUE + BOB_EXTENSION

        early, late = course_schedule(course, DUE - dt.timedelta(days=1)), course_schedule(course, DUE + dt.timedelta(days=9))
        concealed, shown = feedback_state(gradebook, "bob", ASSIGNMENT, early), feedback_state(gradebook, "bob", ASSIGNMENT, late)
        assert concealed.startswith(shown) and concealed != shown and "2026-11-29T16:00:00+00:00" in concealed


def test_an_unknown_schedule_is_a_clear_error(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    set_schedule(course, "tomorrow")
    with pytest.raises(CourseError, match="reveal.show_details: must be one of 'now', 'after_due_date'; got 'tomorrow'"):
        course_schedule(course)
    set_schedule(course, "now")
    with pytest.raises(ValueError, match="timezone"):
        course_schedule(course, dt.datetime(2026, 11, 27))
    # An older nbgrader_config.py, whose feedback does not run the schedule: said, not ignored.
    set_schedule(course, "after_due_date")
    config = course.root / "nbgrader_config.py"
    with config.open("a", encoding="utf-8") as edited:
        edited.write("\nc.GenerateFeedback.preprocessors = [name for name in c.GenerateFeedback.preprocessors\n"
                     "                                   if not name.endswith('.RevealSchedule')]\n")
    with pytest.raises(CourseError, match="does not name 'course_grader.trusted.gradebook.reveal.RevealSchedule'"):
        course_schedule(course)
