"""Ctrl+C in a batch: a real ``perceptron-course grade`` gets SIGINT as a terminal sends it (to its whole
process group); it ends with one line and exit status 130, keeps what it graded, and the next run resumes."""

import csv
import json
import os
import signal
import subprocess
import time

import pytest
from conftest import fixture_course
from nbgrader.api import Gradebook

from test_lab import SCRIPTS

from perceptron_course.grading.trusted.example_class import build_example_class, copy_course
from perceptron_course.grading.trusted.report import INTERRUPTED_NOTE

ASSIGNMENTS = ["02_algorithm", "03_worked_example"]  # 5 students: 10 submissions, one of them refused at intake
WAIT_LIMIT_SECONDS = 600  # a cap on waiting for the first result, not a measurement


def start_grading(course, *arguments: str) -> subprocess.Popen:
    """``perceptron-course grade`` started from a subfolder of the course (it finds the course), in its own process group."""
    command = [str(SCRIPTS / "perceptron-course"), "grade", "--quiet", *arguments]
    for assignment in ASSIGNMENTS:
        command += ["--assignment", assignment]
    return subprocess.Popen(command, cwd=course.submitted, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def graded_in_gradebook(course) -> set[tuple[str, str]]:
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        return {(submission.student.id, assignment) for assignment in ASSIGNMENTS
                for submission in gradebook.assignment_submissions(assignment)}


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_ends_a_batch_with_one_line_keeps_what_was_graded_and_the_next_run_resumes(tmp_path, jobs):
    course = copy_course(fixture_course(), tmp_path / "course")
    written = [key for key in build_example_class(course, fixture_course() / "example_class") if key[1] in ASSIGNMENTS]
    ledger = course.reports / "grading.json"
    grading = start_grading(course, "--jobs", jobs)
    deadline = time.monotonic() + WAIT_LIMIT_SECONDS
    while not ledger.exists() and grading.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # until the first submission is graded and kept
    assert grading.poll() is None, grading.communicate()
    os.killpg(grading.pid, signal.SIGINT)  # Ctrl+C in the terminal
    out, err = grading.communicate(timeout=WAIT_LIMIT_SECONDS)

    assert grading.returncode == 130, out + err
    assert "Traceback" not in err and "Error" not in err, err
    [line] = err.strip().splitlines()
    graded, left = (int(word) for word in (line.split(" graded and kept")[0].split()[-1], line.split(" left;")[0].split()[-1]))
    assert line.startswith("perceptron-course: interrupted: ") and "run the same `perceptron-course grade` again" in line
    assert graded >= 1 and left >= 1 and graded + left == len(written)

    kept = {(entry["student"], entry["assignment"]): entry["status"] for entry in json.loads(ledger.read_text())}
    assert len(kept) == graded
    with course.grades_csv.open(newline="") as handle:
        rows = {(row["student"], row["assignment"]): row["status"] for row in csv.DictReader(handle)}
    assert rows == kept  # grades.csv is rewritten for exactly what was graded
    assert {key for key, status in rows.items() if status == "graded"} == graded_in_gradebook(course)
    assert not list(course.root.glob(".grading-*")), "the work areas are removed"
    assert INTERRUPTED_NOTE in (course.reports / "report.md").read_text(encoding="utf-8")  # the report says what it left out

    if jobs == "1":
        return
    resumed = start_grading(course, "--jobs", jobs)
    out, err = resumed.communicate(timeout=WAIT_LIMIT_SECONDS)
    assert resumed.returncode == 0, out + err
    skipped = sum(status == "graded" for status in kept.values())  # a refused submission is looked at again
    assert f"{skipped} skipped: already graded and unchanged" in out
    [summary] = [line for line in out.splitlines() if " graded, " in line and " failed" in line]
    counts = summary.replace(",", " ").split()
    assert int(counts[0]) + int(counts[counts.index("graded") + 1].replace("none", "0")) == len(written) - skipped, summary
    with course.grades_csv.open(newline="") as handle:
        assert sorted((row["student"], row["assignment"]) for row in csv.DictReader(handle)) == sorted(written)
