"""Grading many submissions at once, in parallel, with one writer of the gradebook.

nbgrader autogrades one notebook at a time (https://github.com/jupyter/nbgrader/issues/174) and SQLite promises
no safe concurrent writers. So each submission is graded as a *job* in a private
work area (a copy of its config, source and submission, and a copy of a gradebook
that already knows the source cells), by any ``concurrent.futures.Executor`` whose
workers are processes. The main process alone then copies the results into the
course (``autograded/``, ``feedback/``) and writes the scores into the course's
gradebook, in a fixed order, so one worker or ten give the same course.

A worker that dies (killed, out of memory) breaks a ``ProcessPoolExecutor`` and
every job in flight with it; those jobs are graded again, and the one whose
worker dies twice is reported as failed with the reason. The rest completes.

Ctrl+C is the main process's alone: workers ignore it, and the main process stops
them (``stop_workers``) and raises ``KeyboardInterrupt`` once what was merged is kept.

A TA's manual grade survives a regrade: nbgrader's autograde marks every answer with a
manual score as needing a manual grade again, so the grades a job keeps (``kept_manual``,
decided by the main process: the answer's text did not change) are set back to graded,
in the job's gradebook before its feedback is written and in the course's when merged.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sqlite3
import sys
import threading
import time
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..course.course import Course, copy_course_settings, nbgrader_api
from ..course.files import name_problem, open_pages_for_exchange, real_folder, replace_tree, write_new
from .autograde import feedback_under_submitted_names, grade_submission, quiet_nbgrader_warnings
from ..course.intake import SECRET_FILE as SUBMISSION_SECRET_FILE, TIMESTAMP_FILE, TakenIn, take_in
from ..judging.kernel_imports import import_rules
from ..course.lateness import submission_lateness
from ...intake_rules import IntakeError
from ..gradebook.outcome import FAILED, GRADED, Isolation, Outcome
from .executor import kernel_started_early
from .kernel_pool import (ZygoteError, grading_kernel, private_runtime_dir, remove_abandoned_zygotes, warm_kernels,
                          zygote_for_this_thread)
from ..course.nbgrader_patches import release_scratch_gradebooks, tune_nbgrader
from .resources import data_budget, kernel_usage, measured
from ..course.safe_text import quoted
from ..course.secret import SECRET_FILE, read_secret

#: Fault injection for tests: ``kill-worker:<student>/<assignment>`` makes the worker grading
#: that submission die, as an out-of-memory kill would.
FAULT_VARIABLE = "COURSE_GRADER_FAULT"


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
    #: ``notebook/grade_id`` of each answer whose manual grade (by a TA) this grading keeps
    kept_manual: tuple[str, ...] = ()
    #: the moment the feedback reads the reveal schedule at (ISO 8601 with a zone; ``""``: the worker's clock)
    reveal_as_of: str = ""

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
    copy_course_settings(course_root, area)
    shutil.copytree(course_root / "source", area / "source")  # all of it: to name a notebook's true assignment
    if (course_root / "release").is_dir():  # what a deleted cell is put back from
        shutil.copytree(course_root / "release", area / "release", symlinks=True)
    shutil.copy2(job.template_gradebook, area / "gradebook.db")
    course = Course.open(area)
    try:
        taken = take_in(Course.open(course_root), job.student, job.assignment, import_rules(course_root, job.assignment))
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


def _inject_fault(job: GradeJob) -> None:
    if os.environ.get(FAULT_VARIABLE) == f"kill-worker:{job.student}/{job.assignment}" and multiprocessing.parent_process():
        os._exit(70)


def grade_job(job: GradeJob) -> Outcome:
    """Grade one submission in its private area (runs in a worker process)."""
    try:
        return _grade_job(job)
    finally:
        release_scratch_gradebooks(job.area)
        if _STOPPING:  # (nbgrader catches every exception) its kernel, cgroups and temporary folders are cleaned up by now
            os._exit(128 + signal.SIGTERM)


def _grade_job(job: GradeJob) -> Outcome:
    quiet_nbgrader_warnings()
    tune_nbgrader()
    _inject_fault(job)
    course, refused, taken = _prepare_area(job)
    if refused:
        return Outcome(job.student, job.assignment, FAILED, 0.0, sum(course.graded_cells(job.assignment).values()), refused)
    isolation = Isolation(sandbox=job.sandbox, memory_mb=job.memory_mb, note="")
    with data_budget(), measured() as used, private_runtime_dir(isolation) as runtime, \
            grading_kernel(isolation, runtime, import_rules(job.course_root, job.assignment)) as config:
        config.ResilientExecute.grading_secret = read_secret(Path(job.course_root) / SECRET_FILE).hex()
        # The checks come from the TA's course itself, not the area's copy of source/: a worker loads each
        # assignment's hidden_checks.py once for all its jobs (check_registry), and a check's files stay put.
        config.ResilientExecute.course_root = job.course_root
        config.ResilientExecute.submission_digest = taken.digest  # every byte handed in: what the cases are drawn from
        if job.reveal_as_of:
            config.RevealSchedule.as_of = job.reveal_as_of
        api = nbgrader_api(course, config)
        with kernel_started_early(api.config):
            outcome = grade_submission(api, course, job.student, job.assignment, kept_manual=set(job.kept_manual),
                                       checks_root=Path(job.course_root))
        if warm_kernels(isolation):  # every kernel of the submission has ended: its keeper measured it
            used.update(kernel_usage(*zygote_for_this_thread().usage(runtime)))
    outcome.resources = used
    feedback_under_submitted_names(course, job.student, job.assignment, taken.handed_in_as)
    if taken.notes:  # what the intake repaired, for the report's "needed repair" (the feedback page says it too)
        outcome.reason = "; ".join(["repaired: " + "; ".join(taken.notes), *filter(None, [outcome.reason])])
    return outcome


def worker_failure(job: GradeJob, max_score: float, error: BaseException) -> Outcome:
    if isinstance(error, BrokenProcessPool) or type(error).__name__ == "KilledWorker":  # (a cluster's, Dask's)
        what = f"the grading worker died ({type(error).__name__}: killed, or out of memory) while grading this submission"
    else:
        what = f"grading this submission failed in its worker ({type(error).__name__}: {quoted(str(error), 200)})"
    return Outcome(job.student, job.assignment, FAILED, 0.0, max_score,
                   f"{what}; grade it again with --student {job.student} --assignment {job.assignment}")


def run_jobs(
    jobs: list[GradeJob],
    *,
    workers: int,
    executor: Executor | None,
    max_score: Callable[[str], float],
    on_done: Callable[[GradeJob, Outcome], None] = lambda job, outcome: None,
    pool: ProcessPoolExecutor | None = None,
) -> dict[tuple[str, str], Outcome]:
    """Run every job; return each outcome by ``(student, assignment)``.

    With no executor and one worker, jobs run here, one after the other. Otherwise
    they go to ``executor`` (or to a process pool of ``workers``: ``pool``, from
    ``warm_pool``, if given). Jobs lost with a dead worker are retried: together in a
    fresh pool, then one by one.
    ``on_done(job, outcome)`` runs here, in this process, as each final outcome arrives.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl+C, once the workers of its own pool are stopped (jobs given to ``executor``
        are cancelled if they have not started); every ``on_done`` called before stays done.
    """
    with _interrupts_caught() as interrupt, _abandoned_zygotes_removed():
        if executor is None and workers <= 1:
            return _run_here(jobs, interrupt.guarded(on_done), interrupt)
        outcomes: dict[tuple[str, str], Outcome] = {}
        on_done = interrupt.guarded(on_done)
        lost = _submit_all(jobs, executor, workers, outcomes, max_score, on_done, pool=pool)
        if lost:
            lost = _submit_all(lost, None, workers, outcomes, max_score, on_done)
        for job in lost:  # still lost: alone, so a dying worker takes nothing else with it
            _submit_all([job], None, 1, outcomes, max_score, on_done, last_try=True)
        return outcomes


@contextmanager
def _abandoned_zygotes_removed():
    """After the batch, what the zygotes of killed workers left behind is removed (never failing the batch)."""
    try:
        yield
    finally:
        try:
            remove_abandoned_zygotes()
        except OSError:
            pass


def _run_here(jobs: list[GradeJob], on_done, interrupt: "_Interrupt") -> dict[tuple[str, str], Outcome]:
    outcomes = {}
    for job in jobs:
        outcome = grade_job(job)
        interrupt.check()  # nbgrader turns Ctrl+C into a failed autograde: that outcome is not kept
        outcomes[job.key] = outcome
        on_done(job, outcome)
    return outcomes


class _Interrupt:
    """Ctrl+C during a batch: raises ``KeyboardInterrupt`` at once, except while an outcome is merged (then after it)."""

    def __init__(self) -> None:
        self.received = False
        self.merging = False

    def handle(self, number, frame) -> None:
        self.received = True
        silence_unwinding()
        if not self.merging:
            raise KeyboardInterrupt

    def check(self) -> None:
        if self.received:
            raise KeyboardInterrupt

    def guarded(self, on_done):
        def merge_whole(job, outcome):
            self.merging = True
            try:
                on_done(job, outcome)
            finally:
                self.merging = False
            self.check()
        return merge_whole


@contextmanager
def _interrupts_caught():
    """Handle Ctrl+C with an ``_Interrupt`` while the block runs (in the main thread, if nobody else handles it)."""
    interrupt = _Interrupt()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield interrupt
        return
    signal.signal(signal.SIGINT, interrupt.handle)
    try:
        yield interrupt
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _submit_all(jobs, executor, workers, outcomes, max_score, on_done, last_try=False, pool=None) -> list[GradeJob]:
    """Submit ``jobs``; record outcomes; return the jobs lost to a broken pool (unless ``last_try``).

    Without ``executor``, the pool (``pool``, or a new one of ``workers``) is this batch's: shut down at the end.
    """
    pool = executor or pool or _new_pool(workers)
    lost, pending = [], {}

    def lose(job: GradeJob, error: BaseException) -> None:
        """A job lost with its worker (the machine's doing, not the submission's): once more, or on the last try, failed."""
        if last_try:
            outcomes[job.key] = worker_failure(job, max_score(job.assignment), error)
            on_done(job, outcomes[job.key])
        else:
            lost.append(job)

    try:
        for position, job in enumerate(jobs):
            try:
                pending[pool.submit(grade_job, job)] = job
            except BrokenProcessPool as error:  # a worker died before the rest were submitted: they are lost with it
                for unsubmitted in jobs[position:]:
                    lose(unsubmitted, error)
                break
        while pending:
            # Each future is dropped once read: a cluster (Dask) keeps the result of a future still
            # referenced, and computes it again when the worker holding it dies, after the batch is done.
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                try:
                    outcomes[job.key] = future.result()
                except (BrokenProcessPool, ZygoteError) as error:
                    lose(job, error)
                    continue
                except Exception as error:  # noqa: BLE001 - a distributed executor's own failures
                    outcomes[job.key] = worker_failure(job, max_score(job.assignment), error)
                on_done(job, outcomes[job.key])
            del done, future
    except KeyboardInterrupt:
        if executor is None:
            stop_workers(pool)
        else:
            for future in pending:
                future.cancel()
        raise
    finally:
        if executor is None:
            pool.shutdown(wait=True, cancel_futures=True)  # at once after stop_workers
    return sorted(lost, key=lambda job: job.key)


def _new_pool(workers: int, warm: Isolation | None = None) -> ProcessPoolExecutor:
    """A pool whose workers leave Ctrl+C to the batch; with ``warm``, each starts its zygote as it starts."""
    return ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(warm,))


@contextmanager
def warm_pool(workers: int, isolation: Isolation):
    """A pool of ``workers`` grading processes that start now, each starting its zygote, while the batch gets ready.

    The batch's own preparation (recording the source cells, the template gradebook) takes
    about as long as a zygote's start (a second): done meanwhile, the first jobs find their
    zygotes warm. Yields the pool for ``run_jobs``; on leaving it is shut down (on Ctrl+C,
    its workers are stopped at once).
    """
    pool = _new_pool(workers, warm=isolation)
    try:
        for _ in range(workers):  # the pool starts a worker for each task submitted while none is idle
            pool.submit(int)
        yield pool
    except KeyboardInterrupt:
        stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(warm: Isolation | None) -> None:
    """A new worker: Ctrl+C is the batch's; with ``warm``, what its first job would set up is set up now
    (nbgrader's tunings, its zygote). A failure here is met again, and reported, by that job."""
    _worker_leaves_interrupts_to_the_batch()
    _die_with_parent()
    if warm is None:
        return
    try:
        quiet_nbgrader_warnings()
        tune_nbgrader()
        if warm_kernels(warm):
            zygote_for_this_thread()
    except Exception:  # noqa: BLE001 - never the pool's failure (it would break the pool)
        pass


#: How long stopped workers get to clean up (their kernel, cgroups and work area) before they are killed.
STOP_GRACE_SECONDS = 1.0


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop a pool's workers at once: each gets ``SIGTERM`` (it cleans up, silently), and ``SIGKILL`` after a grace.

    A sandboxed kernel dies with its worker (bubblewrap's ``--die-with-parent``).
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor offers no public list
    pool.shutdown(wait=False, cancel_futures=True)  # its own thread cancels what has not started
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(1.0)


def _worker_leaves_interrupts_to_the_batch() -> None:
    """In a worker: Ctrl+C (sent to the terminal's whole process group) does nothing here, since the
    main process stops the batch; ``SIGTERM`` (from ``stop_workers``) ends the job silently, its
    clean-up included."""
    signal.signal(signal.SIGINT, lambda number, frame: None)  # a Python handler: kernels started from here get the default back
    signal.signal(signal.SIGTERM, _end_silently)


#: Linux's ``prctl`` option: the signal this process gets when its parent ends.
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In a worker: end with the process that started it, however it ends (a SIGKILLed ``serve`` or ``grade``).

    Otherwise a worker outlives it, waiting forever for work, holding its zygote and the pipes of its
    parent's caller (whose ``stdout`` then never closes). Its sandboxed kernels die with it (``--die-with-parent``).
    """
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the worker finds its queue closed at its next job instead
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent ended before the line above
        os._exit(1)


class WorkerStopped(BaseException):
    """Raised in a worker by ``SIGTERM``: the job unwinds (cleaning up), then the worker exits."""


_STOPPING = []  #: not empty once this worker was told to stop


def _end_silently(number, frame) -> None:
    _STOPPING.append(number)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one ends it at once
    _kill_children()
    raise WorkerStopped


def _kill_children() -> None:
    """``SIGKILL`` every child process of this one: its kernels (their sandboxes die with them), so that
    the clean-up that follows does not wait for a kernel to shut down."""
    me = str(os.getpid())
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                parent = handle.read().rsplit(b")", 1)[1].split()[1].decode()
            if parent == me:
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, IndexError):
            continue


def silence_unwinding() -> None:
    """Drop what interrupted asyncio tasks, coroutines and loggers print from now on (after Ctrl+C).

    The batch reports the interruption in one line; the half-run kernel's tasks and the
    coroutines Ctrl+C left unfinished would otherwise print pages of tracebacks.
    """
    import logging

    logging.disable(logging.CRITICAL)
    sys.unraisablehook = lambda unraisable: None


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
    open_pages_for_exchange(course.feedback / relative)
    if outcome.status == GRADED:
        _copy_scores(area / "gradebook.db", gradebook, job)
        outcome.seconds_late, outcome.late_penalty = submission_lateness(gradebook.find_submission(job.assignment, job.student))
        outcome.feedback = [course.feedback / relative / path.name for path in outcome.feedback]
    else:
        try:
            gradebook.remove_submission(job.assignment, job.student)  # no stale scores of an earlier grading
        except Exception:  # noqa: BLE001 - nothing was there
            gradebook.db.rollback()
    return outcome


def _copy_scores(area_gradebook: Path, gradebook, job: GradeJob) -> None:
    """Copy the automatic scores, comments and flags of a job into the course's gradebook.

    A TA's manual score and comment are never written here; an answer whose manual grade
    the job keeps (``job.kept_manual``) stays graded.
    """
    from nbgrader.api import Gradebook

    from ..gradebook.gradebook_rows import grades_and_comments

    kept = set(job.kept_manual)
    with Gradebook(f"sqlite:///{area_gradebook}") as graded:
        submission = graded.find_submission(job.assignment, job.student)
        gradebook.update_or_create_student(job.student)
        target = gradebook.update_or_create_submission(job.assignment, job.student, timestamp=submission.timestamp)
        # Each notebook's rows by name in one query each, not nbgrader's find_grade and find_comment: each of
        # those is a query of five tables, and flushes every change before it (a fifth of a merge's time).
        target_notebooks = {notebook.name: notebook for notebook in target.notebooks}
        for notebook in submission.notebooks:
            target_notebook = target_notebooks[notebook.name]
            target_notebook.flagged = notebook.flagged
            target_notebook.late_submission_penalty = notebook.late_submission_penalty
            grades, comments = grades_and_comments(graded, notebook)
            target_grades, target_comments = grades_and_comments(gradebook, target_notebook)
            for name, grade in grades.items():
                copy = target_grades[name]
                copy.auto_score = grade.auto_score
                if not (f"{notebook.name}/{name}" in kept and copy.manual_score is not None):
                    copy.needs_manual_grade = grade.needs_manual_grade
            for name, comment in comments.items():
                target_comments[name].auto_comment = comment.auto_comment
        gradebook.db.commit()


def manual_grades_to_keep(gradebook, student: str, assignment: str, unchanged: set[str]) -> tuple[str, ...]:
    """``notebook/grade_id`` of each answer a TA graded by hand (a manual score, no longer needing one) among ``unchanged``."""
    from ..gradebook.gradebook_rows import grades_and_comments

    try:
        submission = gradebook.find_submission(assignment, student)
    except Exception:  # noqa: BLE001 - nbgrader's MissingEntry: never graded
        return ()
    return tuple(sorted(
        f"{notebook.name}/{name}"
        for notebook in submission.notebooks
        for name, grade in grades_and_comments(gradebook, notebook)[0].items()
        if grade.manual_score is not None and not grade.needs_manual_grade and f"{notebook.name}/{name}" in unchanged
    ))


def default_workers() -> int:
    """One worker per core."""
    return os.cpu_count() or 1
