"""Grading many submissions at once, in parallel, with one writer of the gradebook.

nbgrader autogrades one notebook at a time (its issue #174) and SQLite promises
no safe concurrent writers. So each submission is graded as a *job* in a private
work area (a copy of its config, source and submission, and a copy of a gradebook
that already knows the source cells), by any ``concurrent.futures.Executor`` whose
workers are processes. The main process alone then copies the results into the
course (``autograded/``, ``feedback/``) and writes the scores into the course's
gradebook, in a fixed order, so one worker or ten give the same course.

A worker that dies (killed, out of memory) breaks a ``ProcessPoolExecutor`` and
every job in flight with it; those jobs are graded again, and the one whose
worker dies twice is reported as failed with the reason. The rest completes.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .course import Course, nbgrader_api
from .files import name_problem, real_folder, replace_tree, write_new
from .autograde import grade_submission, quiet_nbgrader_warnings
from .intake import SECRET_FILE as SUBMISSION_SECRET_FILE, TIMESTAMP_FILE, TakenIn, take_in
from ...intake_rules import IntakeError
from .outcome import FAILED, GRADED, Outcome
from .preprocessors import kernel_started_early
from .sandbox import Isolation, grading_kernel, private_runtime_dir
from .secret import SECRET_FILE, read_secret

#: Fault injection for tests: ``kill-worker:<student>/<assignment>`` makes the worker grading
#: that submission die, as an out-of-memory kill would.
FAULT_VARIABLE = "PERCEPTRON_COURSE_FAULT"


@dataclass(frozen=True)
class GradeJob:
    """Everything a worker needs to grade one submission (plain, picklable data)."""

    course_root: str
    area: str  #: private work area, inside the course root (so the sandbox hides it)
    template_gradebook: str
    student: str
    assignment: str
    sandbox: bool
    memory_mb: int

    @property
    def key(self) -> tuple[str, str]:
        return self.student, self.assignment


def _prepare_area(job: GradeJob) -> tuple[Course, str, TakenIn]:
    """A minimal course holding this one submission, why it is refused (or ``""``), and what the intake repaired.

    The submission is read by ``take_in`` (``lstat``, ``O_NOFOLLOW``, size caps, the rules of
    ``intake_rules``); only the notebooks it gives, under their expected names, and a valid
    ``timestamp.txt`` (and nbgrader's ``submission_secret.txt``) are written into the area, as new files (nbgrader's autograde then reads
    the timestamp for lateness and carries it into ``autograded/`` and ``feedback/``).
    """
    course_root, area = Path(job.course_root), Path(job.area)
    shutil.rmtree(area, ignore_errors=True)
    area.mkdir(parents=True)
    shutil.copy2(course_root / "nbgrader_config.py", area / "nbgrader_config.py")
    shutil.copytree(course_root / "source", area / "source")  # all of it: to name a notebook's true assignment
    if (course_root / "release").is_dir():  # what a deleted cell is put back from
        shutil.copytree(course_root / "release", area / "release", symlinks=True)
    shutil.copy2(job.template_gradebook, area / "gradebook.db")
    course = Course.open(area)
    try:
        taken = take_in(Course.open(course_root), job.student, job.assignment)
    except IntakeError as error:
        return course, str(error), TakenIn()
    if taken.refused:
        return course, taken.refused, taken
    destination = real_folder(area, Path("submitted") / job.student / job.assignment)
    for name, data in taken.notebooks.items():
        write_new(destination / name, data)
    if taken.timestamp is not None:
        write_new(destination / TIMESTAMP_FILE, taken.timestamp)
    if taken.submission_secret is not None:
        write_new(destination / SUBMISSION_SECRET_FILE, taken.submission_secret)
    return course, "", taken


def _feedback_under_submitted_names(course: Course, job: GradeJob, taken: TakenIn) -> None:
    """A copy of each feedback page under the name the notebook was handed in as (``geometry (1).html``):
    ``nbgrader release_feedback`` and ``fetch_feedback`` match a page to the submitted notebook by that name."""
    folder = course.feedback / job.student / job.assignment
    for name, stem in taken.handed_in_as.items():
        page = folder / f"{name}.html"
        if page.is_file() and not page.is_symlink() and not os.path.lexists(folder / f"{stem}.html"):
            write_new(folder / f"{stem}.html", page.read_bytes())


def _inject_fault(job: GradeJob) -> None:
    if os.environ.get(FAULT_VARIABLE) == f"kill-worker:{job.student}/{job.assignment}" and multiprocessing.parent_process():
        os._exit(70)


def grade_job(job: GradeJob) -> Outcome:
    """Grade one submission in its private area (runs in a worker process)."""
    quiet_nbgrader_warnings()
    _inject_fault(job)
    course, refused, taken = _prepare_area(job)
    if refused:
        return Outcome(job.student, job.assignment, FAILED, 0.0, sum(course.graded_cells(job.assignment).values()), refused)
    isolation = Isolation(sandbox=job.sandbox, memory_mb=job.memory_mb, note="")
    with private_runtime_dir() as runtime, grading_kernel(isolation, runtime, job.assignment) as config:
        config.ResilientExecute.grading_secret = read_secret(Path(job.course_root) / SECRET_FILE).hex()
        api = nbgrader_api(course, config)
        with kernel_started_early(api.config):
            outcome = grade_submission(api, course, job.student, job.assignment)
    _feedback_under_submitted_names(course, job, taken)
    if taken.notes:  # what the intake repaired, for the report's "needed repair" (the feedback page says it too)
        outcome.reason = "; ".join(["repaired: " + "; ".join(taken.notes), *filter(None, [outcome.reason])])
    return outcome


def worker_failure(job: GradeJob, max_score: float, error: BaseException) -> Outcome:
    reason = (f"the grading worker died ({type(error).__name__}: killed, or out of memory) while grading this "
              f"submission; grade it again with --student {job.student} --assignment {job.assignment}")
    return Outcome(job.student, job.assignment, FAILED, 0.0, max_score, reason)


def run_jobs(
    jobs: list[GradeJob],
    *,
    workers: int,
    executor: Executor | None,
    max_score: Callable[[str], float],
    on_done: Callable[[GradeJob, Outcome], None] = lambda job, outcome: None,
) -> dict[tuple[str, str], Outcome]:
    """Run every job; return each outcome by ``(student, assignment)``.

    With no executor and one worker, jobs run here, one after the other. Otherwise
    they go to ``executor`` (or to a process pool of ``workers``). Jobs lost with a
    dead worker are retried: together in a fresh pool, then one by one.
    ``on_done(job, outcome)`` runs here, in this process, as each final outcome arrives.
    """
    if executor is None and workers <= 1:
        outcomes = {}
        for job in jobs:
            outcomes[job.key] = grade_job(job)
            on_done(job, outcomes[job.key])
        return outcomes

    outcomes: dict[tuple[str, str], Outcome] = {}
    lost = _submit_all(jobs, executor, workers, outcomes, max_score, on_done)
    if lost:
        lost = _submit_all(lost, None, workers, outcomes, max_score, on_done)
    for job in lost:  # still lost: alone, so a dying worker takes nothing else with it
        _submit_all([job], None, 1, outcomes, max_score, on_done, last_try=True)
    return outcomes


def _submit_all(jobs, executor, workers, outcomes, max_score, on_done, last_try=False) -> list[GradeJob]:
    """Submit ``jobs``; record outcomes; return the jobs lost to a broken pool (unless ``last_try``)."""
    pool = executor or ProcessPoolExecutor(max_workers=workers)
    lost = []
    try:
        futures = {pool.submit(grade_job, job): job for job in jobs}
        for future in as_completed(futures):
            job = futures[future]
            try:
                outcomes[job.key] = future.result()
            except BrokenProcessPool as error:
                if not last_try:
                    lost.append(job)
                    continue
                outcomes[job.key] = worker_failure(job, max_score(job.assignment), error)
            except Exception as error:  # noqa: BLE001 - a distributed executor's own failures
                outcomes[job.key] = worker_failure(job, max_score(job.assignment), error)
            on_done(job, outcomes[job.key])
    finally:
        if executor is None:
            pool.shutdown(wait=True, cancel_futures=True)
    return sorted(lost, key=lambda job: job.key)


def copy_gradebook(source: Path, destination: Path) -> None:
    """A consistent copy of an SQLite gradebook (the backup API, not a file copy)."""
    origin, copy = sqlite3.connect(source), sqlite3.connect(destination)
    try:
        origin.backup(copy)
    finally:
        copy.close()
        origin.close()


def merge_result(course: Course, job: GradeJob, outcome: Outcome, gradebook, *, keep_files: bool = True) -> Outcome:
    """Bring one job's files and scores into the course (main process only); return the outcome with course paths.

    With ``keep_files`` false, the submission's earlier output in the course is removed instead.
    """
    area = Path(job.area)
    relative = Path(job.student) / job.assignment
    plain_names = not (name_problem(job.student, "student") or name_problem(job.assignment, "assignment"))
    for folder in ("autograded", "feedback") if plain_names else ():  # never through a link, never elsewhere
        replace_tree(area / folder / relative if keep_files else area / "nothing", course.root, Path(folder) / relative)
    if outcome.status == GRADED:
        _copy_scores(area / "gradebook.db", gradebook, job)
        outcome.seconds_late, outcome.late_penalty = lateness(gradebook, job.student, job.assignment)
        outcome.feedback = [course.feedback / relative / path.name for path in outcome.feedback]
    else:
        try:
            gradebook.remove_submission(job.assignment, job.student)  # no stale scores of an earlier grading
        except Exception:  # noqa: BLE001 - nothing was there
            gradebook.db.rollback()
    return outcome


def _copy_scores(area_gradebook: Path, gradebook, job: GradeJob) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{area_gradebook}") as graded:
        submission = graded.find_submission(job.assignment, job.student)
        gradebook.update_or_create_student(job.student)
        gradebook.update_or_create_submission(job.assignment, job.student, timestamp=submission.timestamp)
        for notebook in submission.notebooks:
            target_notebook = gradebook.find_submission_notebook(notebook.name, job.assignment, job.student)
            target_notebook.flagged = notebook.flagged
            target_notebook.late_submission_penalty = notebook.late_submission_penalty
            for grade in notebook.grades:
                copy = gradebook.find_grade(grade.name, notebook.name, job.assignment, job.student)
                copy.auto_score, copy.needs_manual_grade = grade.auto_score, grade.needs_manual_grade
            for comment in notebook.comments:
                copy = gradebook.find_comment(comment.name, notebook.name, job.assignment, job.student)
                copy.auto_comment = comment.auto_comment
        gradebook.db.commit()


def lateness(gradebook, student: str, assignment: str) -> tuple[float, float]:
    """Seconds past the due date (extension included) and the late penalty of a graded submission, as nbgrader has them."""
    submission = gradebook.find_submission(assignment, student)
    penalty = sum(float(notebook.late_submission_penalty or 0.0) for notebook in submission.notebooks)
    return float(submission.total_seconds_late or 0.0), penalty


def default_workers() -> int:
    """One worker per core."""
    return os.cpu_count() or 1
