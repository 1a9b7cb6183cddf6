"""A hostile written answer in the live formgrader, in Debian's Chromium: nothing runs, and the TA's score lands
on that answer.

A student writes, as the written answer of 04_convergence, ``javascript:`` links in every markdown and HTML
form (inline, reference, autolink, tag, entity-encoded, escaped so that only a second markdown pass would make
them live), and headings and ids equal to the other parts' grade ids (``grader/tests/fixtures/formgrader/hostile_answer.md``).
The submission is graded for real (sandbox, nbgrader), the formgrader is started with ``perceptron-course lab``,
and the TA opens the submission: every link of the answer is clicked, no ``javascript:`` URL runs (each would
set ``window.__pwned``), no dialog opens, and a score typed into the answer's box is saved to that answer's
grade in the gradebook, and to no other part.
"""

import time
from pathlib import Path

import pytest
from conftest import fixture_course

from test_browser import CHROMIUM, CHROMIUM_ARGS, sync_api
from test_lab import serving_lab

from course_grader.trusted.course.example_class import build_submission, copy_course

HOSTILE_ANSWER = (Path(__file__).resolve().parent / "fixtures" / "formgrader" / "hostile_answer.md").read_text(encoding="utf-8")
ASSIGNMENT, NOTEBOOK, STUDENT = "04_convergence", "convergence", "writer"
ANSWER = "why_augmented"  #: the written answer's grade id
OTHER_PARTS = ("test_radius", "test_mistake_bound", "test_proof_terms")  #: ids the answer tries to take over
SAVE_PATIENCE_SECONDS = 60  # a cap on waiting for the formgrader's save, not a measurement

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's Chromium is missing (/usr/bin/chromium): apt-get install chromium"),
]


@pytest.fixture
def graded_course(tmp_path):
    """A course whose one submission (solutions, and the hostile written answer) is graded by ``grade``."""
    from course_grader.trusted.pipeline import grade

    course = copy_course(fixture_course(), tmp_path / "course")
    recipe = {"BASE": "solutions", "CELLS": {ASSIGNMENT: {ANSWER: HOSTILE_ANSWER}}}
    build_submission(course, recipe, ASSIGNMENT, course.submitted / STUDENT / ASSIGNMENT)
    [outcome] = grade(course, progress=False, jobs=1)
    assert outcome.status == "graded", outcome.reason
    return course


@pytest.fixture
def formgrader(graded_course, tmp_path):
    """``perceptron-course lab`` on the graded course; yields (base url, token)."""
    with serving_lab(graded_course.root, tmp_path) as (base, token, _):
        yield base, token


def manual_scores(course) -> dict[str, float | None]:
    """The gradebook's manual score of every part of the submission, by grade id."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT)
        return {grade.name: grade.manual_score for grade in notebook.grades}


def submission_id(course) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        return gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT).id


def test_a_hostile_written_answer_runs_nothing_and_its_score_lands_on_it(graded_course, formgrader, tmp_path):
    base, token = formgrader
    assert all(score is None for score in manual_scores(graded_course).values())
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            user_data_dir=str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000},
            extra_http_headers={"Authorization": f"token {token}"})  # the formgrader's own API calls too
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        console: list[str] = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        page.on("response", lambda response: console.append(f"{response.status} {response.request.method} {response.url}")
                if "/formgrader/api/" in response.url else None)
        try:
            page.goto(f"{base}/formgrader/submissions/{submission_id(graded_course)}/")
            box = page.locator(f"input.score#{ANSWER}")
            box.wait_for(timeout=60_000)
            answer = page.locator(".nbgrader_cell", has=box).locator(".rendered_html")
            sync_api.expect(answer).to_contain_text("markdown link")  # the answer is shown, as text
            assert page.evaluate("window.__pwned") is None  # nothing ran while the page loaded

            links = answer.locator("a")
            assert links.count() >= 5
            for index in range(links.count()):
                link = links.nth(index)
                if link.is_visible():
                    link.click(no_wait_after=True, timeout=10_000)
                else:  # e.g. a heading's anchor, shown on hover: activated as a click would
                    link.evaluate("element => element.click()")
                assert page.evaluate("window.__pwned") is None, link.evaluate("element => element.outerHTML")
            assert page.url.startswith(f"{base}/formgrader/submissions/")  # no link led away
            assert dialogs == []

            # Each id the answer tried to claim still names the part's own score box, and nothing in the answer has one.
            for grade_id in OTHER_PARTS:
                assert page.evaluate(f"document.getElementById({grade_id!r}).className") == "score tabbable", grade_id
            assert answer.locator("[id]").count() == 0

            box.fill("1.5")
            box.press("Tab")  # the formgrader saves a score when its box changes
            deadline = time.monotonic() + SAVE_PATIENCE_SECONDS
            while manual_scores(graded_course)[ANSWER] is None and time.monotonic() < deadline:
                time.sleep(0.3)
        except Exception:
            screenshot = tmp_path / "formgrader-failure.png"
            page.screenshot(path=str(screenshot), full_page=True)
            print(f"screenshot of the failure: {screenshot}\nJupyterLab log: {tmp_path / 'lab.log'}")
            print("browser console and formgrader requests:", *console, sep="\n")
            raise
        finally:
            context.close()
    scores = manual_scores(graded_course)
    assert scores[ANSWER] == 1.5, console
    assert all(scores[grade_id] is None for grade_id in OTHER_PARTS), scores
