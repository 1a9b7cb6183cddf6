"""The TA's pipeline, a thin layer over nbgrader's API.

``release`` regenerates ``release/`` from ``source/``. ``grade`` autogrades every
submission under ``submitted/``, writes feedback without hidden tests, exports
``grades.csv`` and a report. A submission that cannot be graded (not a notebook,
a missing notebook, a crash of nbgrader) gets a row with score 0 and the reason;
the batch always goes on, and nothing under ``submitted/`` is modified.
"""

from __future__ import annotations

import sys
import tempfile
from concurrent.futures import Executor
from pathlib import Path

from ...intake_rules import write_manifest
from .autograde import nbgrader_error_line, quiet_nbgrader_warnings
from .batch import GradeJob, copy_gradebook, default_workers, merge_result, run_jobs
from .course import Course, CourseError, nbgrader_api
from .exports import write_grades_csv
from .outcome import FAILED, Outcome
from .report import write_report
from .safe_text import quoted, terminal_text
from .sandbox import choose_isolation
from .secret import load_or_create_secret

#: The course folder this package belongs to (an editable install of the repository), if any.
PACKAGE_COURSE = Path(__file__).resolve().parents[3]


def release(course: Course, assignments: list[str] | None = None) -> list[str]:
    """Regenerate ``release/<assignment>/`` from ``source/`` with ``nbgrader generate_assignment``.

    The notebooks of both folders are stored without run-time metadata (outputs, execution
    counts, ``language_info`` versions, view state: see ``notebook_format``), so a save in
    JupyterLab that changed no content shows no change. Returns the assignment ids
    released. Raises ``CourseError`` if one fails.
    """
    from .notebook_format import course_notebooks, normalise_files

    chosen = _choose_assignments(course, assignments)
    normalise_files([path for path in course_notebooks(course.root, chosen) if course.source in path.parents])
    api = nbgrader_api(course)
    for assignment in chosen:
        result = api.generate_assignment(assignment, force=True)
        if not result["success"]:
            raise CourseError(f"generate_assignment {assignment} failed: {nbgrader_error_line(result)}")
    normalise_files([path for path in course_notebooks(course.root, chosen) if course.release in path.parents])
    if course.root == PACKAGE_COURSE:  # the self-check's copy of the released cells ships with this package
        write_manifest(course.release)
    return chosen


def record_source_cells(course: Course, assignments: list[str]) -> None:
    """Make the gradebook know every source cell, without touching ``release/``.

    nbgrader only autogrades assignments whose cells ``generate_assignment`` has
    recorded; a fresh clone has no gradebook yet. The student versions it writes
    on the way go to a temporary folder.
    """
    with tempfile.TemporaryDirectory(prefix="perceptron-release-") as scratch:
        api = nbgrader_api(course, release_directory=scratch)
        for assignment in assignments:
            result = api.generate_assignment(assignment, force=True)
            if not result["success"]:
                raise CourseError(f"cannot record the cells of {assignment}: {nbgrader_error_line(result)}")


def _choose_assignments(course: Course, assignments: list[str] | None) -> list[str]:
    known = course.assignments()
    if not assignments:
        return known
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise CourseError(f"unknown assignment {', '.join(unknown)}; the course has {', '.join(known)}")
    return list(assignments)


def _check_writable(course: Course) -> None:
    try:
        with tempfile.NamedTemporaryFile(dir=course.root, prefix=".write-test-"):
            pass
    except OSError as error:
        raise CourseError(f"cannot write in {course.root} ({error.strerror}); grading writes autograded/, feedback/ and grades.csv there") from None


def select_submissions(course: Course, assignments: list[str] | None, students: list[str] | None) -> list[tuple[str, str]]:
    """The ``(student, assignment)`` pairs to grade, after checking the filters name real things."""
    chosen_assignments = set(_choose_assignments(course, assignments))
    submissions = course.submissions()
    if not submissions:
        raise CourseError(f"nothing to grade: no submissions in {course.submitted}/<student>/<assignment>/")
    known_students = sorted({student for student, _ in submissions})
    unknown = [s for s in students or [] if s not in known_students]
    if unknown:
        raise CourseError(f"no submission from student {', '.join(unknown)}; students who submitted: {', '.join(known_students)}")
    stray = sorted({a for _, a in submissions if a not in course.assignments()})
    selected = [
        (student, assignment)
        for student, assignment in submissions
        if assignment in chosen_assignments and (not students or student in students)
    ]
    if stray:
        print(terminal_text(f"warning: ignoring submitted folders of unknown assignments: {', '.join(stray)}"), file=sys.stderr)
    return selected


def grade(
    course: Course,
    *,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    progress: bool = True,
    jobs: int | None = None,
    executor: Executor | None = None,
    unsandboxed: bool = False,
) -> list[Outcome]:
    """Autograde, write feedback, export ``grades.csv`` and the report; return every outcome.

    Parameters
    ----------
    jobs : int, optional
        Worker processes (default: one per core; 1 grades here, serially).
    executor : concurrent.futures.Executor, optional
        Runs the grading jobs instead of a local process pool, e.g. a Dask client's
        ``get_executor()``; its workers must be processes that see the course folder.
    unsandboxed : bool
        As root, run student code even where the sandbox cannot run (the TA's ``--unsandboxed``).

    Raises
    ------
    CourseError
        For a problem the TA must fix, e.g. grading as root where the sandbox cannot run.
    """
    from tqdm.auto import tqdm

    quiet_nbgrader_warnings()
    _check_writable(course)
    isolation = choose_isolation(unsandboxed=unsandboxed)  # first: refusing must not wait for anything
    selected = select_submissions(course, assignments, students)
    record_source_cells(course, sorted({assignment for _, assignment in selected}))
    load_or_create_secret(course.root)  # here, once: workers only read it
    max_score = {a: sum(course.graded_cells(a).values()) for a in course.assignments()}
    with tempfile.TemporaryDirectory(dir=course.root, prefix=".grading-") as scratch:
        template = Path(scratch) / "template.db"
        copy_gradebook(course.root / "gradebook.db", template)
        batch = [GradeJob(str(course.root), str(Path(scratch) / f"job-{k}"), str(template), student, assignment,
                          isolation.sandbox, isolation.memory_mb)
                 for k, (student, assignment) in enumerate(selected)]
        merged: dict[tuple[str, str], Outcome] = {}
        with nbgrader_api(course).gradebook as gradebook, \
                tqdm(total=len(batch), desc="grading", unit="submission", file=sys.stderr, disable=not progress) as bar:

            def merge(job, outcome):  # here, in the one process that writes the gradebook
                try:
                    merged[job.key] = merge_result(course, job, outcome, gradebook)
                except Exception as error:  # noqa: BLE001 - one submission's output, never the batch
                    failed = Outcome(job.student, job.assignment, FAILED, 0.0, outcome.max_score,
                                     f"its graded output could not be kept ({type(error).__name__}: {quoted(str(error), 200)})",
                                     flags=outcome.flags)
                    merged[job.key] = merge_result(course, job, failed, gradebook, keep_files=False)
                bar.update()

            run_jobs(batch, workers=jobs or default_workers(), executor=executor,
                     max_score=max_score.__getitem__, on_done=merge)
        outcomes = [merged[job.key] for job in batch]
    write_grades_csv(course.grades_csv, outcomes)
    write_report(course, outcomes, isolation)
    return outcomes
