"""Ctrl+C in a batch: a real ``course-grader grade`` gets SIGINT as a terminal sends it (to its whole
process group); it ends with one line and exit status 130, keeps what it graded, and the next run resumes."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_COURSE, fixture_course
from nbgrader.api import Gradebook

from test_lab import SCRIPTS

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.outputs.report import INTERRUPTED_NOTE

ASSIGNMENTS = ["02_algorithm", "03_worked_example"]  # 5 students: 10 submissions, one of them refused at intake
WAIT_LIMIT_SECONDS = 600  # a cap on waiting for the first result, not a measurement


#: Runs its arguments as a program with SIGINT back at its default. A process started with SIGINT ignored (the
#: suite run as a background job of a script: the shell ignores SIGINT there, and children inherit that) would
#: start ``grade`` with it ignored too; ``grade`` then rightly leaves it ignored (as Python does, it keeps a
#: SIGINT its parent ignored, as ``nohup`` and ``&`` ask) and the Ctrl+C these tests send would do nothing.
#: A terminal's ``grade`` starts with the default, so that is what the tests give it, whatever started pytest.
#: (A wrapper that execs, not ``preexec_fn``: no Python runs between fork and exec in this threaded process.)
WITH_DEFAULT_SIGINT = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                       "os.execv(sys.argv[1], sys.argv[1:])"]


def start_grading(course, *arguments: str) -> subprocess.Popen:
    """``course-grader grade`` started from a subfolder of the course (it finds the course), in its own process
    group, with SIGINT at its default as in a terminal (``WITH_DEFAULT_SIGINT``)."""
    command = [*WITH_DEFAULT_SIGINT, str(SCRIPTS / "course-grader"), "grade", "--quiet", *arguments]
    for assignment in ASSIGNMENTS:
        command += ["--assignment", assignment]
    return subprocess.Popen(command, cwd=course.submitted, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def graded_in_gradebook(course) -> set[tuple[str, str]]:
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        return {(submission.student.id, assignment) for assignment in ASSIGNMENTS
                for submission in gradebook.assignment_submissions(assignment)}


def interrupt_after_first_kept(course, grading: subprocess.Popen) -> tuple[str, str]:
    """Ctrl+C (to the whole process group, as a terminal sends it) once the batch has kept a submission; its output."""
    ledger = course.reports / "grading.json"

    def written() -> tuple[int, int] | None:  # the ledger is replaced whole, by a new file, each time it is written
        try:
            status = ledger.stat()
        except FileNotFoundError:
            return None
        return status.st_ino, status.st_mtime_ns

    before = written()
    deadline = time.monotonic() + WAIT_LIMIT_SECONDS
    while written() in (None, before) and grading.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # until the first submission is graded and kept
    assert grading.poll() is None, grading.communicate()
    os.killpg(grading.pid, signal.SIGINT)
    out, err = grading.communicate(timeout=WAIT_LIMIT_SECONDS)
    assert running_in_group(grading.pid) == []  # nothing of the batch is left running: workers, the comparison of code
    return out, err


def running_in_group(group: int) -> list[str]:
    """The processes of process group ``group`` that are not zombies (an exited child not yet reaped by init): their command lines."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (name)": state, ppid, pgrp, ...
            command = (stat.parent / "cmdline").read_bytes()  # empty once a process has let go of its memory, exiting
            if int(fields[2]) == group and fields[0] != "Z" and command:
                found.append(command.replace(b"\0", b" ").decode(errors="replace"))
        except (OSError, IndexError, ValueError):
            continue  # a process that ended meanwhile
    return found


def hint_counts(err: str) -> tuple[int, int]:
    """The one line Ctrl+C leaves: ``(graded, left)``; it names the command that grades exactly the rest."""
    [line] = err.strip().splitlines()
    assert line.startswith("course-grader: interrupted: ") and "run `course-grader grade --resume`" in line, line
    return tuple(int(word) for word in (line.split(" graded and kept")[0].split()[-1], line.split(" left;")[0].split()[-1]))


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_ends_a_batch_with_one_line_keeps_what_was_graded_and_the_next_run_resumes(tmp_path, jobs):
    course = copy_course(fixture_course(), tmp_path / "course")
    written = [key for key in build_example_class(course, fixture_course() / "example_class") if key[1] in ASSIGNMENTS]
    ledger = course.reports / "grading.json"
    grading = start_grading(course, "--jobs", jobs)
    out, err = interrupt_after_first_kept(course, grading)

    assert grading.returncode == 130, out + err
    assert "Traceback" not in err and "Error" not in err, err
    graded, left = hint_counts(err)
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
    resumed = start_grading(course, "--jobs", jobs, "--resume")
    out, err = resumed.communicate(timeout=WAIT_LIMIT_SECONDS)
    assert resumed.returncode == 0, out + err
    assert graded_count(out) == left  # exactly what was left
    with course.grades_csv.open(newline="") as handle:
        assert sorted((row["student"], row["assignment"]) for row in csv.DictReader(handle)) == sorted(written)
    assert not (course.reports / "grading_left.json").exists()


def graded_count(out: str) -> int:
    """Submissions graded (or failed) by a run, from its summary line."""
    [summary] = [line for line in out.splitlines() if " graded, " in line and " failed" in line]
    counts = summary.replace(",", " ").split()
    return int(counts[0]) + int(counts[counts.index("graded") + 1].replace("none", "0"))


@pytest.mark.slow
def test_after_ctrl_c_in_grade_force_resume_regrades_exactly_the_rest(tmp_path):
    # `grade --force` again would regrade everyone; a plain `grade` would leave the rest with their old grades.
    course = copy_course(fixture_course(), tmp_path / "course")
    written = [key for key in build_example_class(course, FIXTURE_COURSE / "example_class") if key[1] in ASSIGNMENTS]
    first = start_grading(course, "--jobs", "2")
    assert first.communicate(timeout=WAIT_LIMIT_SECONDS) and first.returncode == 0
    ledger = course.reports / "grading.json"

    out, err = interrupt_after_first_kept(course, start_grading(course, "--jobs", "2", "--force"))
    graded, left = hint_counts(err)
    assert graded >= 1 and left >= 1 and graded + left == len(written)
    after_force = {(e["student"], e["assignment"]): e for e in json.loads(ledger.read_text())}
    left_keys = {tuple(key) for key in json.loads((course.reports / "grading_left.json").read_text())}
    assert len(left_keys) == left  # what the hint counts is what --resume will grade

    plain = start_grading(course, "--jobs", "2")  # a plain grade leaves the rest as they were graded before --force
    out, _ = plain.communicate(timeout=WAIT_LIMIT_SECONDS)
    looked_at_again = {key for key in written if after_force[key]["status"] != "graded"}  # a refused one: always
    assert plain.returncode == 0 and graded_count(out) == len(looked_at_again)
    resumed = start_grading(course, "--jobs", "2", "--resume")
    out, err = resumed.communicate(timeout=WAIT_LIMIT_SECONDS)
    assert resumed.returncode == 0, out + err
    assert graded_count(out) == len(left_keys - looked_at_again)  # the rest of the forced regrade, no more
    assert not (course.reports / "grading_left.json").exists()
    again = start_grading(course, "--jobs", "2", "--resume")  # nothing left: said so
    _, err = again.communicate(timeout=WAIT_LIMIT_SECONDS)
    assert again.returncode != 0 and "nothing to resume" in err
