"""Bad submissions in one batch with good ones: each is graded or reported, and nothing escapes.

Every fixture in grader/tests/fixtures/bad_class/ hands in 01_geometry (parts: augment, predict,
signed_distance, set_margin; 2 points each). The expected outcomes below are written by hand.
"""

import csv
import html
import re
import os
import socket
import threading
from pathlib import Path

import pytest

from conftest import FIXTURE_COURSE, fixture_course, sandboxes_left, tree_digest

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade
from course_grader.trusted.running.sandbox import sandbox_problem

#: One of the longest files: its unit of work (``FileOrGroupScheduling``) starts first.
pytestmark = pytest.mark.xdist_group("test_robustness")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bad_class"
ALL = {"test_augment", "test_predict", "test_signed_distance", "test_set_margin"}

CELLS_LOST = {
    "good_ada": set(),
    "loop_forever": {"test_augment"},
    "memory_hog": {"test_predict"},
    "kernel_exit": {"test_signed_distance"},
    "segfault": {"test_set_margin"},
    "sys_exit": set(),
    "syntax_error": {"test_predict"},
    "asks_input": {"test_signed_distance"},
    "huge_print": set(),
    "deleted_tests": set(),
    "deleted_test_buggy": {"test_predict"},
    "edited_test": {"test_predict"},
    "duplicated_ids": set(),
    "moved_cells": set(),
    "noisy_but_correct": set(),
    "tamper_numpy": {"test_set_margin"},  # replacing numpy in the kernel does not touch the grader's comparison
    "tamper_reference": {"test_predict"},  # nor does patching the reference (which the kernel cannot even import)
    "calls_reference": {"test_signed_distance"},
    "mallory": set(),
    "huge_image": set(),
    "dies_again_and_again": ALL,
}
NOT_NOTEBOOKS = {"not_json", "empty_file", "wrong_nbformat"}
FOREIGN = {"report_injection"}  # a notebook, but with none of this assignment's cells
MESSAGES = {  # what the student reads in the feedback of the failing cell
    "loop_forever": "CellTimeoutError",
    "memory_hog": "MemoryError",
    "kernel_exit": "KernelDied",
    "segfault": "KernelDied",
    "asks_input": "StdinNotImplementedError",
    "tamper_numpy": "set_margin returned a wrong value",
    "tamper_reference": "predict returned a wrong value",
    "calls_reference": "not available while grading: implement it yourself",
    "dies_again_and_again": "the grader gives up after 3 restarts",
}

#: Graded a second time (``--force``): one of each way a hand-in ends (full marks, a failing visible test, a dead
#: kernel, an edited test cell, a tampered reference, an output cut, an escape refused, no notebook, none of this
#: assignment's cells). The ones that wait out a time limit or restarts again and again are graded once.
REGRADED = {"good_ada", "syntax_error", "kernel_exit", "edited_test", "tamper_reference", "huge_image", "mallory",
            "not_json", "report_injection"}


class ConnectionCounter:
    """A TCP listener on loopback that counts who connects (the sandbox must stop mallory)."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.server.close()


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    assert sandbox_problem() == "", f"these tests need the grading sandbox: {sandbox_problem()}"
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("bad"))  # the course's own config, timeouts included
    build_example_class(course, FIXTURES)
    submitted_before, release_before = tree_digest(course.submitted), tree_digest(course.release)
    counter = ConnectionCounter()
    os.environ["PERCEPTRON_TEST_PORT"] = str(counter.port)
    try:
        first = grade(course, progress=False, jobs=1)  # two test files grade at once on two cores
        first_csv = course.grades_csv.read_text()
        second = grade(course, students=sorted(REGRADED), progress=False, jobs=1, force=True)  # the same, regraded
    finally:
        os.environ.pop("PERCEPTRON_TEST_PORT", None)
        counter.close()
    return {
        "course": course, "first": first, "second": second, "first_csv": first_csv, "connections": counter.connections,
        "submitted_before": submitted_before, "release_before": release_before, "sandboxes_left": sandboxes_left(),
    }


def by_student(outcomes):
    return {o.student: o for o in outcomes}


@pytest.mark.slow
def test_every_bad_submission_gets_the_expected_score(batch):
    outcomes = by_student(batch["first"])
    assert set(outcomes) == set(CELLS_LOST) | NOT_NOTEBOOKS | FOREIGN
    for student, lost in CELLS_LOST.items():
        outcome = outcomes[student]
        assert outcome.status == "graded", (student, outcome.reason)
        expected = {cell: 0.0 if cell in lost else 2.0 for cell in ALL}
        assert outcome.cell_scores == expected, student
    for student in NOT_NOTEBOOKS:
        assert outcomes[student].status == "failed" and "not a valid notebook" in outcomes[student].reason
        assert outcomes[student].score == 0 and outcomes[student].max_score == 8


@pytest.mark.slow
def test_failures_are_explained_in_the_feedback(batch):
    course = batch["course"]
    for student, message in MESSAGES.items():
        html = (course.feedback / student / "01_geometry" / "geometry.html").read_text(encoding="utf-8")
        assert message in html, (student, message)
    huge = course.feedback / "huge_print" / "01_geometry" / "geometry.html"
    assert huge.stat().st_size < 2_000_000
    assert "more characters cut by the grader" in huge.read_text(encoding="utf-8")
    image = course.feedback / "huge_image" / "01_geometry" / "geometry.html"
    assert image.stat().st_size < 2_000_000
    assert "removed by the grader: over 1,000,000" in image.read_text(encoding="utf-8")
    autograded = course.root / "autograded" / "huge_image" / "01_geometry" / "geometry.ipynb"
    assert autograded.stat().st_size < 2_000_000


@pytest.mark.slow
def test_every_submission_has_a_row_and_grading_twice_changes_nothing(batch):
    rows = list(csv.DictReader(batch["first_csv"].splitlines()))
    assert len(rows) == len(CELLS_LOST) + len(NOT_NOTEBOOKS) + len(FOREIGN)
    assert all(row["reason"] for row in rows if row["status"] == "failed")
    first = {(o.student, o.status, o.score, tuple(sorted(o.cell_scores.items()))) for o in batch["first"]
             if o.student in REGRADED}
    second = {(o.student, o.status, o.score, tuple(sorted(o.cell_scores.items()))) for o in batch["second"]}
    assert {student for student, *_ in second} == REGRADED and first == second
    assert batch["course"].grades_csv.read_text() == batch["first_csv"]
    assert batch["sandboxes_left"] == []  # every kernel, crashed or not, was shut down with its submission


@pytest.mark.slow
def test_submissions_and_release_are_untouched(batch):
    course = batch["course"]
    assert tree_digest(course.submitted) == batch["submitted_before"]
    assert tree_digest(course.release) == batch["release_before"]
    assert not (course.release / "01_geometry" / "owned.txt").exists()


@pytest.mark.slow
def test_the_sandbox_blocks_every_escape_and_shows_it(batch):
    course = batch["course"]
    html = (course.feedback / "mallory" / "01_geometry" / "geometry.html").read_text(encoding="utf-8")
    for attempt in ("read source", "read another submission", "write the gradebook", "write into release",
                    "open a network connection"):
        assert f"BLOCKED {attempt}" in html and f"LEAKED {attempt}" not in html, attempt
    assert batch["connections"] == 0
    assert by_student(batch["first"])["good_ada"].score == 8  # the gradebook was not rewritten
    assert "bubblewrap sandbox" in (course.reports / "report.md").read_text()


@pytest.mark.slow
def test_feedback_never_shows_hidden_tests_or_their_code(batch):
    import course_grader.trusted.judging.checks as grader_checks

    check_files = [*(FIXTURE_COURSE / "source").glob("*/hidden_checks.py"), *Path(grader_checks.__file__).parent.glob("*.py")]
    checks_source = [line for path in sorted(check_files) for line in path.read_text().splitlines()]
    assert len(check_files) > 6 and checks_source
    secret_lines = {line.strip() for line in checks_source
                    if len(line.strip()) > 30 and not line.strip().startswith("#")}
    pages = list(batch["course"].feedback.rglob("*.html"))
    assert len(pages) == len(CELLS_LOST)
    for page in pages:
        text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))  # what a reader sees
        assert "BEGIN HIDDEN TESTS" not in text and "from course_grader.trusted.judging.checks import" not in text, page
        shown = {line.strip() for line in text.splitlines()}
        assert not secret_lines & shown, (page, secret_lines & shown)


def test_without_a_sandbox_grading_says_so_loudly(monkeypatch, capsys):
    from course_grader.trusted.running import sandbox
    from course_grader.trusted.outputs.report import isolation_line

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)  # without the opt-in it refuses (tests/test_sandbox.py)
    isolation = sandbox.choose_isolation(unsandboxed=True)
    assert not isolation.sandbox and "bubblewrap is not installed" in isolation.note
    assert "student code will run WITHOUT a sandbox" in capsys.readouterr().err
    assert isolation_line(isolation).startswith("**WARNING") and "--unsafe-no-sandbox" in isolation_line(isolation)
    monkeypatch.setenv(sandbox.SANDBOX_VARIABLE, "off")
    assert "turned off" in sandbox.sandbox_problem()


LIMITS = {  # which limit each submission hit, as the report names it
    "loop_forever": "a cell hit the time limit",
    "memory_hog": "a cell hit the memory limit",
    "kernel_exit": "the kernel died (restarted)",
    "dies_again_and_again": "the kernel kept dying: the remaining cells were not run",
    "huge_print": "output was cut",
    "huge_image": "a rich output was removed",
}


@pytest.mark.slow
def test_limits_hit_are_reported_for_the_ta(batch):
    outcomes = by_student(batch["first"])
    report = (batch["course"].reports / "report.md").read_text(encoding="utf-8")
    for student, label in LIMITS.items():
        assert label in outcomes[student].reason, (student, outcomes[student].reason)
        assert f"{student}/01_geometry: graded; limits hit:" in report
    assert outcomes["good_ada"].reason == ""


@pytest.mark.slow
def test_student_text_quoted_in_reasons_cannot_write_into_the_report(batch):
    outcome = by_student(batch["first"])["report_injection"]
    assert outcome.status == "failed" and "holds none of the cells of 01_geometry" in outcome.reason
    assert "\n" not in outcome.reason and "<" not in outcome.reason and "|" not in outcome.reason
    report = (batch["course"].reports / "report.md").read_text(encoding="utf-8")
    assert "## Note from the grader" not in report and "onerror" not in report.replace("onerror=?", "")
    assert "report_injection | 8/8" not in report
