"""The time budget's hostile family (hand-ins that would run past their notebook's budget), graded in one batch beside an honest student.

The recipes are in ``grader/tests/fixtures/budget_class/`` (each reaches its hostile code in a top-level cell and, through
``perceptron_step``, during the hidden cases). A few of them are graded here with a short budget set in the copied
course's ``term.toml``, and restarts enough that the deadline, not the restarts, ends them. What is asserted is what
the grader recorded and what is left, never how long anything took: each is stopped at its deadline and reported
with the reason, the honest student keeps every point, no grading kernel (nor anything it forked) is left running,
and a 20 MB exception message is cut before any step after execution reads it (sizes).
``benchmarks/hostile_budget.py`` measures the time each costs, idle and under load.
"""

import json
import re
from pathlib import Path

import pytest

from conftest import fixture_course, sandboxes_left

from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import build_submission, copy_course, load_recipes
from course_grader.trusted.course.secret import load_or_create_secret
from course_grader.trusted.pipeline import grade
from course_grader.trusted.judging.grading_metadata import BUDGET, GRADING_METADATA, STOPPED_AT_DEADLINE, TIME_BUDGET
from course_grader.trusted.running.output_caps import MAX_TEXT_CHARS
from course_grader.trusted.running.sandbox import sandbox_problem

RECIPES = Path(__file__).resolve().parent / "fixtures" / "budget_class"
ASSIGNMENT = "02_algorithm"
#: Short enough that the stopped ones end within the test, long enough that the honest one (graded in the same batch,
#: beside them) finishes on a loaded machine: its outcome must not depend on the machine's speed.
LIMITS = {"notebook_seconds": 30, "cell_seconds": 10, "max_restarts": 1000}
#: Each would run past any budget: ignoring signals and catching BaseException (in its finally too), spinning
#: children that ignore signals, printing without end.
STOPPED = ("stubborn_hang", "forked_children", "endless_print")
HUGE_MESSAGE = "message_20mb"


def course_with_limits(root: Path, limits: dict[str, int]) -> Course:
    """A copy of the fixture course whose term.toml has ``limits``."""
    course = copy_course(fixture_course(), root)
    term = course.root / "term.toml"
    text = term.read_text(encoding="utf-8")
    for key, value in limits.items():
        text, found = re.subn(rf"(?m)^{key} = \d+", f"{key} = {value}", text)
        assert found == 1, key
    term.write_text(text, encoding="utf-8")
    return course


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    assert sandbox_problem() == "", f"these tests need the grading sandbox: {sandbox_problem()}"
    course = course_with_limits(tmp_path_factory.mktemp("budget_class"), LIMITS)
    recipes = load_recipes(RECIPES)
    for student in (*STOPPED, HUGE_MESSAGE, "honest"):
        build_submission(course, recipes[student], ASSIGNMENT, course.submitted / student / ASSIGNMENT)
    load_or_create_secret(course.root)
    outcomes = {outcome.student: outcome for outcome in grade(course, progress=False, jobs=2)}
    return {"course": course, "outcomes": outcomes, "sandboxes_left": sandboxes_left()}


def autograded(course: Course, student: str) -> Path:
    [path] = (course.root / "autograded" / student / ASSIGNMENT).glob("*.ipynb")
    return path


@pytest.mark.slow
def test_each_is_stopped_at_its_deadline_reported_with_the_reason_and_the_honest_one_keeps_its_points(batch):
    course, outcomes = batch["course"], batch["outcomes"]
    honest = outcomes["honest"]
    assert honest.status == "graded" and honest.score == honest.max_score > 0, honest
    for student in STOPPED:
        outcome = outcomes[student]
        assert outcome.status == "graded" and BUDGET in outcome.reason, (student, outcome.reason)
        notebook = json.loads(autograded(course, student).read_text(encoding="utf-8"))
        recorded = notebook["metadata"][GRADING_METADATA][TIME_BUDGET]
        assert recorded["seconds"] == LIMITS["notebook_seconds"] and recorded["stopped"] == STOPPED_AT_DEADLINE, student
        events = [event for _, event in recorded["timeline"]]
        after = events[events.index(STOPPED_AT_DEADLINE) + 1:]
        assert "kernel restarted" not in after and after[-1] == "the notebook ended", (student, events)
        assert len([event for event in after if event.startswith("cell ")]) <= 1, (student, events)  # the one it stopped
        assert "time budget for the notebook" in json.dumps(notebook["cells"]), student  # said where it stopped


@pytest.mark.slow
def test_no_kernel_nor_anything_a_kernel_forked_is_left_running(batch):
    # forked_children left eight children ignoring SIGINT, SIGTERM and SIGHUP, spinning: killed with their kernel.
    assert batch["sandboxes_left"] == []


@pytest.mark.slow
def test_a_20_mb_exception_message_is_cut_before_any_step_after_execution_reads_it(batch):
    course, outcome = batch["course"], batch["outcomes"][HUGE_MESSAGE]
    assert outcome.status == "graded" and outcome.score < outcome.max_score
    notebook = json.loads(autograded(course, HUGE_MESSAGE).read_text(encoding="utf-8"))
    errors = [output for cell in notebook["cells"] for output in cell.get("outputs", []) if output["output_type"] == "error"]
    assert any(output["evalue"].startswith("x" * 1000) for output in errors)  # the top-level cell's own error, kept cut
    longest = max(len(text) for output in errors for text in [output["ename"], output["evalue"], *output["traceback"]])
    assert longest < MAX_TEXT_CHARS + 100
    assert autograded(course, HUGE_MESSAGE).stat().st_size < 1_000_000
    [page] = (course.feedback / HUGE_MESSAGE / ASSIGNMENT).glob("*.html")
    assert page.stat().st_size < 1_000_000
