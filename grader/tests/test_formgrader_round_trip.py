"""The TA's round trip in the real tools: grade, grade a written answer by hand in the formgrader, refresh.

A class with one student's 04_convergence is graded by ``perceptron-course grade``; its written
answer (``why_augmented``) waits for a TA. ``perceptron-course lab`` serves the course; Debian's
Chromium, driven by Playwright, opens the submission in nbgrader's formgrader, types a score and
a comment into the answer's boxes (saved as the formgrader saves them); then
``perceptron-course refresh`` runs, and the feedback page (opened in the browser) shows the
score and the comment, the report no longer lists the answer as awaiting, and ``grades.csv``
counts the score. A later ``grade --force`` keeps them. On failure a screenshot is saved under
the test's tmp dir and its path printed.
"""

import csv
import re
import subprocess

import nbformat
import pytest
from conftest import fixture_course
from nbgrader.api import Gradebook

from test_browser import CHROMIUM, CHROMIUM_ARGS, sync_api
from test_lab import SCRIPTS, serving_lab

from course_grader.trusted.course.commands import grader_command
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import copy_course, solved_notebook

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's Chromium is missing (/usr/bin/chromium): apt-get install chromium"),
]

ASSIGNMENT, NOTEBOOK, ANSWER = "04_convergence", "convergence", "why_augmented"
OTHER_ANSWER = "why_squeeze"  #: the assignment's other written answer
STUDENT = "ada"
SCORE = "1.5"
COMMENT = "Right idea: R and gamma of the points the algorithm sees. Say why the bias counts as a weight."


def grader_cli(course: Course, *arguments: str) -> subprocess.CompletedProcess:
    """Run the TA's command in the course folder, as a TA does; fail with its output if it fails."""
    done = subprocess.run([str(SCRIPTS / "course-grader"), *arguments], cwd=course.root,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture
def graded_course(tmp_path) -> Course:
    """A course where ``ada`` handed in a solved 04_convergence, graded by ``perceptron-course grade``."""
    course = copy_course(fixture_course(), tmp_path / "course")
    (course.submitted / STUDENT / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(solved_notebook(course, ASSIGNMENT, NOTEBOOK), course.submitted / STUDENT / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    grader_cli(course, "grade", "--quiet", "--jobs", "1")
    return course


@pytest.fixture
def formgrader(graded_course, tmp_path):
    """``perceptron-course lab`` on the graded course; yields (base url, token)."""
    with serving_lab(graded_course.root, tmp_path, system_path=False) as (base, token, _):
        yield base, token


def awaiting(course: Course) -> str:
    """The report's section of the parts awaiting manual grading."""
    report = (course.reports / "report.md").read_text(encoding="utf-8")
    return report.split("## Awaiting manual grading", 1)[1].split("\n## ", 1)[0]


def written_answer_grade(course: Course):
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade(ANSWER, NOTEBOOK, ASSIGNMENT, STUDENT)
        comment = gradebook.find_comment(ANSWER, NOTEBOOK, ASSIGNMENT, STUDENT)
        return grade.manual_score, grade.needs_manual_grade, comment.manual_comment


def grade_by_hand(page, base: str, token: str, submission_id: str) -> None:
    """Log in with the token, open the submission in the formgrader, type a score and a comment for the written
    answer, and wait until the formgrader has saved both."""
    page.goto(f"{base}/login?next=/formgrader/submissions/{submission_id}/")
    login = page.locator("input#password_input")  # "Password or token"
    login.fill(token)
    with page.expect_response(lambda r: "/formgrader/api/comments" in r.url, timeout=60_000) as comments:
        login.press("Enter")
    assert comments.value.ok
    score = page.locator(f"input.score#{ANSWER}")
    comment = page.locator(f"textarea.comment#{ANSWER}-comment")
    # The formgrader's script marks the box once it has loaded the grade: typing before that is lost.
    sync_api.expect(score).to_have_class(re.compile(r"\bneeds_manual_grade\b"), timeout=60_000)
    with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT", timeout=30_000) as saved:
        score.fill(SCORE)
        score.press("Tab")  # the formgrader saves a score when it changes and loses focus
    assert saved.value.ok
    with page.expect_response(lambda r: "/formgrader/api/comment/" in r.url and r.request.method == "PUT", timeout=30_000) as saved:
        comment.fill(COMMENT)
        comment.press("Tab")
    assert saved.value.ok


def test_a_score_and_comment_typed_in_the_formgrader_reach_the_feedback_and_the_report(graded_course, formgrader, tmp_path):
    course, (base, token) = graded_course, formgrader
    page_path = course.feedback / STUDENT / ASSIGNMENT / f"{NOTEBOOK}.html"
    assert "not graded yet" in page_path.read_text(encoding="utf-8")
    assert f"{ASSIGNMENT}/{ANSWER}: 1 submission ({STUDENT})" in awaiting(course)
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        submission_id = gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT).id
        other = gradebook.find_grade(OTHER_ANSWER, NOTEBOOK, ASSIGNMENT, STUDENT)  # graded already (not in the browser)
        other.manual_score, other.needs_manual_grade = 2.0, False
        gradebook.db.commit()
        score_before = gradebook.find_submission(ASSIGNMENT, STUDENT).score

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            grade_by_hand(page, base, token, submission_id)
            assert written_answer_grade(course) == (float(SCORE), False, COMMENT)

            done = grader_cli(course, "refresh")
            assert "rewrote the feedback of 1 graded submissions" in done.stdout

            page.goto(page_path.as_uri())
            answer = page.locator(".nbgrader_cell", has_text="Student's answer").filter(has_text=COMMENT)
            sync_api.expect(answer).to_contain_text(f"Score: {SCORE} / 2.0")
            summary = page.locator("table.summary tr", has_text="In your own words: the bias")
            sync_api.expect(summary).to_contain_text(f"{SCORE} / 2")
            sync_api.expect(summary).not_to_contain_text("not graded yet")
        except Exception:
            screenshot = tmp_path / "browser-failure.png"
            page.screenshot(path=str(screenshot), full_page=True)
            print(f"screenshot of the failure: {screenshot}\nJupyterLab log: {tmp_path / 'lab.log'}")
            raise
        finally:
            browser.close()

    assert f"{ASSIGNMENT}/{ANSWER}" not in awaiting(course) and "0 parts (grade them in the formgrader)" in awaiting(course)
    with course.grades_csv.open(newline="", encoding="utf-8") as handle:
        [row] = [row for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT]
    assert float(row["score"]) == score_before + float(SCORE)
    with (course.root / "canvas_grades.csv").open(newline="", encoding="utf-8") as handle:  # the LMS export agrees
        [canvas] = [line for line in csv.DictReader(handle) if line["Student"] == STUDENT]
    assert float(canvas[ASSIGNMENT]) == float(row["score"])  # no longer blank: nothing of it awaits a TA

    feedback = page_path.read_bytes()
    grader_cli(course, "grade", "--quiet", "--jobs", "1", "--force")  # a regrade keeps the TA's grade
    assert written_answer_grade(course) == (float(SCORE), False, COMMENT)
    assert page_path.read_bytes() == feedback and f"{ASSIGNMENT}/{ANSWER}" not in awaiting(course)


def gradebook_state(course: Course) -> list[tuple]:
    """Every grade and comment of the student's submission, as the gradebook holds them."""
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT)
        return sorted([(grade.name, grade.auto_score, grade.manual_score, grade.needs_manual_grade) for grade in notebook.grades]
                      + [(comment.name, comment.auto_comment, comment.manual_comment) for comment in notebook.comments])


def test_the_formgraders_autograde_button_changes_nothing_and_names_the_command_to_run(graded_course, formgrader, tmp_path):
    # nbgrader's autograde forces: it removed autograded/<student>/<assignment> and reset the grades before the
    # course's grader refused to run; its refusal now comes first, and says what to run instead.
    course, (base, token) = graded_course, formgrader
    autograded = course.root / "autograded" / STUDENT / ASSIGNMENT
    files_before = {path.relative_to(autograded): path.read_bytes() for path in autograded.rglob("*") if path.is_file()}
    state_before = gradebook_state(course)
    assert files_before and state_before

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{base}/login?next=/formgrader/manage_submissions/{ASSIGNMENT}")
            login = page.locator("input#password_input")
            login.fill(token)
            login.press("Enter")
            button = page.locator("tr", has_text=STUDENT).locator("a:has(.glyphicon-flash)")
            with page.expect_response(lambda r: r.url.endswith(f"/submission/{ASSIGNMENT}/{STUDENT}/autograde"), timeout=300_000) as answer:
                button.click()
            assert answer.value.ok
            modal = page.locator("#error-modal")
            sync_api.expect(modal).to_contain_text(f"{grader_command()} grade --student {STUDENT} --assignment {ASSIGNMENT}",
                                                   timeout=60_000)
            sync_api.expect(modal).to_contain_text("Nothing was changed here")
        except Exception:
            screenshot = tmp_path / "browser-failure.png"
            page.screenshot(path=str(screenshot), full_page=True)
            print(f"screenshot of the failure: {screenshot}\nJupyterLab log: {tmp_path / 'lab.log'}")
            raise
        finally:
            browser.close()

    assert {path.relative_to(autograded): path.read_bytes() for path in autograded.rglob("*") if path.is_file()} == files_before
    assert gradebook_state(course) == state_before
