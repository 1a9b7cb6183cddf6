"""The TA's pipeline, a thin layer over nbgrader's API.

``release`` regenerates ``release/`` from ``source/``. ``grade`` autogrades every
submission under ``submitted/`` that changed since it was last graded, writes feedback
without hidden tests, and rewrites ``grades.csv``, ``grades_by_student.csv`` and the
report from the gradebook. A submission that cannot be graded (not a notebook, a missing
notebook, a crash of nbgrader) gets a row with score 0 and the reason; the batch always
goes on, and nothing under ``submitted/`` is modified. A regrade never reopens an answer
a TA graded by hand, unless its text changed. Ctrl+C stops a batch and keeps what was
graded (``BatchInterrupted``); the next ``grade`` goes on from there.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
import sys
import tempfile
import threading
from contextlib import closing, nullcontext
from dataclasses import dataclass
from concurrent.futures import Executor, Future
from pathlib import Path

from .course.commands import grader_command
from .running.autograde import quiet_nbgrader_warnings
from .judging.check_registry import ready_to_grade
from .running.batch import (GradeJob, copy_gradebook, default_workers, manual_grades_to_keep, merge_result, run_jobs, silence_unwinding,
                    warm_pool)
from .course.course import Course, CourseError, nbgrader_api, nbgrader_error_line
from .course.files import replace_text
from .course.late_policy import apply_term
from .course.nbgrader_patches import SCRATCH_PREFIX, release_scratch_gradebooks, tune_nbgrader
from .gradebook.ledger import LEFT_FILE, Entry, Fingerprint, LedgerWriter, entry_for, fingerprint, read_ledger, read_left, write_left
from .gradebook.outcome import FAILED, GRADED, Key, Outcome
from .gradebook.records import GradingContext, keep_record
from .gradebook.writer_lock import course_lock
from .outputs.report import prepare_plotting, write_exports
from .gradebook.reveal import Schedule, course_schedule, feedback_state
from .course.safe_text import quoted
from .running.sandbox import choose_isolation
from .course.secret import load_or_create_secret
from .course.selection import choose_assignments, select_submissions
from .outputs.similarity import compare_in_background, stop_comparison

__all__ = ["BatchInterrupted", "GradingRun", "grade", "record_source_cells", "release", "select_submissions"]

def refuse_released_hidden_checks(release_folder: Path, assignments: list[str]) -> None:
    """Raise ``CourseError`` (after deleting the copies) if nbgrader copied a hidden_checks.py into the student
    versions it generated in ``release_folder``."""
    from .judging.check_registry import HIDDEN_CHECKS_FILE

    leaked = [path for assignment in assignments for path in (release_folder / assignment).rglob(HIDDEN_CHECKS_FILE)]
    for path in leaked:
        path.unlink()
    if leaked:
        raise CourseError(f"nbgrader copied {', '.join(str(p.relative_to(release_folder)) for p in leaked)} into the "
                          f"student versions (deleted again): add {HIDDEN_CHECKS_FILE!r} to c.CourseDirectory.ignore in "
                          "nbgrader_config.py")


def release(course: Course, assignments: list[str] | None = None) -> list[str]:
    """Regenerate ``release/<assignment>/`` from ``source/`` with ``nbgrader generate_assignment``.

    The notebooks of both folders are stored without run-time metadata (outputs, execution
    counts, ``language_info`` versions, view state: see ``notebook_format``), so a save in
    JupyterLab that changed no content shows no change. nbgrader writes into a temporary folder;
    each ``release/<assignment>/`` is replaced only once every assignment generated, so a failed
    release leaves ``release/`` as it was. The gradebook then follows ``term.toml`` (due dates,
    extensions: ``late_policy.follow_term``). Returns the assignment ids released.

    Raises
    ------
    CourseError
        If one fails (nbgrader's refusal to change cells that have submissions explained).
    """
    from .course.late_policy import apply_term
    from .course.notebook_format import course_notebooks, normalise_files

    chosen = choose_assignments(course, assignments)
    course.term()  # a broken term file is reported before anything is written
    normalise_files([path for path in course_notebooks(course.root, chosen) if course.source in path.parents])
    with tempfile.TemporaryDirectory(prefix=".course-grader-release-", dir=course.root) as scratch:
        api = nbgrader_api(course, release_directory=scratch)
        for assignment in chosen:
            result = api.generate_assignment(assignment, force=True)
            if not result["success"]:
                raise CourseError(release_failure(assignment, nbgrader_error_line(result)))
        fresh = Path(scratch)
        refuse_released_hidden_checks(fresh, chosen)
        normalise_files([path for path in fresh.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts])
        course.release.mkdir(exist_ok=True)
        for assignment in chosen:
            _swap_in(fresh / assignment, course.release / assignment)
    apply_term(course)
    return chosen


#: nbgrader's refusal to add or remove a cell of an assignment that has submissions in the gradebook.
SUBMISSIONS_ASSOCIATED = "submissions associated"


def release_failure(assignment: str, nbgrader_says: str) -> str:
    """What a failed ``generate_assignment`` means for the TA, and what to do (``release/`` is left as it was)."""
    if SUBMISSIONS_ASSOCIATED in nbgrader_says:
        return (f"cannot release {assignment}: you added or removed a graded cell (or changed a grade id) of an assignment "
                f"the gradebook already holds submissions of, and nbgrader will not change the cells those submissions "
                f"were graded against. release/ is unchanged. Either put the cell back as it was, or, if no student has "
                f"handed it in for real yet (test submissions only), remove those submissions first: "
                f"`nbgrader db assignment remove {assignment} --force` (this deletes their grades), then release again. "
                f"(nbgrader said: {nbgrader_says})")
    return f"generate_assignment {assignment} failed: {nbgrader_says}; release/ is unchanged"


def _swap_in(fresh: Path, target: Path) -> None:
    """Replace the folder ``target`` by ``fresh`` (same file system), keeping ``target`` until ``fresh`` is in place."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    fresh.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def record_source_cells(course: Course, assignments: list[str]) -> None:
    """Make the gradebook know every source cell, without touching ``release/``.

    nbgrader only autogrades assignments whose cells ``generate_assignment`` has
    recorded; a fresh clone has no gradebook yet. The student versions it writes
    on the way go to a temporary folder. An assignment is skipped when neither what
    the recording reads (its source, the configuration, the code that processes them) nor
    what it wrote in the gradebook changed since (``reports/recorded_sources.json``).
    """
    recorded = _read_recorded_sources(course)
    changed = [assignment for assignment in assignments if recorded.get(assignment) != _source_state(course, assignment)]
    if not changed:
        return
    with tempfile.TemporaryDirectory(prefix="course-grader-release-") as scratch:
        api = nbgrader_api(course, release_directory=scratch)
        for assignment in changed:
            result = api.generate_assignment(assignment, force=True)
            if not result["success"]:
                if nbgrader_error_line(result).startswith("KeyboardInterrupt"):  # nbgrader catches even Ctrl+C
                    raise KeyboardInterrupt
                raise CourseError(f"cannot record the cells of {assignment}: {nbgrader_error_line(result)}")
            recorded[assignment] = _source_state(course, assignment)
    _write_recorded_sources(course, recorded)


RECORDED_SOURCES_FILE = "recorded_sources.json"
#: The cells ``generate_assignment`` records for one assignment, as the gradebook holds them (nbgrader's tables).
_RECORDED_CELLS = (
    "SELECT n.name, n.kernelspec, b.name, b.type, g.max_score, g.cell_type, t.max_score, t.cell_type "
    "FROM base_cell b JOIN notebook n ON b.notebook_id = n.id JOIN assignment a ON n.assignment_id = a.id "
    "LEFT JOIN grade_cells g ON g.id = b.id LEFT JOIN task_cells t ON t.id = b.id WHERE a.name = ?",
    "SELECT n.name, s.name, s.cell_type, s.locked, s.source, s.checksum "
    "FROM source_cell s JOIN notebook n ON s.notebook_id = n.id JOIN assignment a ON n.assignment_id = a.id WHERE a.name = ?",
)


def _source_state(course: Course, assignment: str) -> list[str]:
    """What recording ``assignment``'s cells reads, and what the gradebook holds of them, as two digests.

    A gradebook that cannot be read, or lacks the assignment, gives a state no recording
    left, so the cells are recorded again.
    """
    import hashlib

    import nbgrader

    from .running import preprocessors

    inputs = hashlib.sha256(nbgrader.__version__.encode())
    folders = [course.source, course.source / assignment]
    files = [path for folder in folders if folder.is_dir() for path in sorted(folder.iterdir()) if path.is_file()]
    header = course.term().header_path()  # of the term, what generate_assignment reads: the header and the course id
    for path in [course.root / "nbgrader_config.py", Path(preprocessors.__file__), *files, *([header] if header else [])]:
        inputs.update(b"\0%s\0%d\0" % (path.name.encode(), path.stat().st_size) + path.read_bytes())
    inputs.update(b"\0course_id\0" + course.term().course.id.encode())
    cells = hashlib.sha256()
    try:
        read_only = (course.root / "gradebook.db").resolve().as_uri() + "?mode=ro"  # (the URI quotes '?', '#' and '%')
        with closing(sqlite3.connect(read_only, uri=True)) as gradebook:
            rows = [sorted(map(repr, gradebook.execute(query, (assignment,)))) for query in _RECORDED_CELLS]
    except sqlite3.Error:
        rows = []
    cells.update(repr(rows).encode())
    return [inputs.hexdigest(), cells.hexdigest() if rows and rows[0] else ""]


def _read_recorded_sources(course: Course) -> dict[str, list[str]]:
    try:
        data = json.loads((course.reports / RECORDED_SOURCES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, list)} if isinstance(data, dict) else {}


def _write_recorded_sources(course: Course, recorded: dict[str, list[str]]) -> None:
    course.reports.mkdir(exist_ok=True)
    replace_text(course.reports / RECORDED_SOURCES_FILE, json.dumps(recorded, sort_keys=True, indent=1))


def _check_writable(course: Course) -> None:
    try:
        with tempfile.NamedTemporaryFile(dir=course.root, prefix=".write-test-"):
            pass
    except OSError as error:
        raise CourseError(f"cannot write in {course.root} ({error.strerror}); grading writes autograded/, feedback/ and grades.csv there") from None


class GradingRun(list):
    """The outcomes of the submissions graded now (a list, in the order graded), and those skipped.

    Attributes
    ----------
    skipped : list of (student, assignment)
        Submissions already graded whose submitted files did not change (``force`` regrades them).
    """

    def __init__(self, outcomes=(), skipped=()) -> None:
        super().__init__(outcomes)
        self.skipped: list[Key] = list(skipped)
        self.term_differences: list[str] = []  # what the gradebook held otherwise than term.toml (late_policy)


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl+C stopped a batch: ``graded`` submissions are kept (gradebook, feedback, exports), ``left`` are not."""

    def __init__(self, graded: int, left: int, skipped: int) -> None:
        super().__init__(f"{graded} graded, {left} left")
        self.graded, self.left, self.skipped = graded, left, skipped


def _unchanged_answers(entry: Entry | None, now: Fingerprint) -> set[str]:
    """``notebook/grade_id`` of the answers whose hash is the one recorded when last graded."""
    if entry is None or entry.status != GRADED:
        return set()
    return {key for key, digest in now.answers.items() if entry.answers.get(key) == digest}


def _is_current(course: Course, entry: Entry | None, now: Fingerprint, in_gradebook: bool) -> bool:
    """Whether a submission was graded from exactly the files submitted now (and its grades and notebooks are still there)."""
    return (entry is not None and entry.status == GRADED and bool(now.submitted) and entry.submitted == now.submitted
            and in_gradebook and (course.root / "autograded" / entry.student / entry.assignment).is_dir())


def _in_gradebook(gradebook, student: str, assignment: str) -> bool:
    try:
        gradebook.find_submission(assignment, student)
    except Exception:  # noqa: BLE001 - nbgrader's MissingEntry
        return False
    return True


def grade(
    course: Course,
    *,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    progress: bool = True,
    jobs: int | None = None,
    executor: Executor | None = None,
    unsandboxed: bool = False,
    force: bool = False,
    now: dt.datetime | None = None,
    resume: bool = False,
) -> GradingRun:
    """Autograde what changed, write feedback, rewrite ``grades.csv`` and the report; return the outcomes.

    A submission already graded whose submitted files did not change is skipped (listed in
    the result's ``skipped``) unless ``force``. A regrade keeps the manual grade and comment
    of every answer a TA graded whose text did not change.

    Parameters
    ----------
    jobs : int, optional
        Worker processes (default: one per core; 1 grades here, serially).
    executor : concurrent.futures.Executor, optional
        Runs the grading jobs instead of a local process pool, e.g. a Dask client's
        ``get_executor()``; its workers must be processes that see the course folder.
    unsandboxed : bool
        Run student code even where the sandbox cannot run, with the grader's own rights (the TA's
        ``--unsafe-no-sandbox``); without it, grading where the sandbox cannot run is refused.
    force : bool
        Regrade submissions that did not change too.
    resume : bool
        Grade exactly what the last interrupted batch left (``reports/grading_left.json``), each
        regraded whether or not it changed, as that batch would have (with or without ``force``);
        ``assignments`` and ``students`` narrow it further.
    now : datetime, optional
        The moment the reveal schedule is read at for the feedback written now (timezone-aware;
        default: the clock, read once for the whole batch). See ``reveal``.

    Raises
    ------
    CourseError
        For a problem the TA must fix, e.g. grading where the sandbox cannot run.
    BatchInterrupted
        On Ctrl+C, once what was graded is kept and the exports are rewritten for it.
    CourseBusy
        If ``serve`` or another ``grade`` is working on the course (``writer_lock``), at once.
    """
    with course_lock(course.root, "grade"):
        return _grade_locked(course, assignments=assignments, students=students, progress=progress, jobs=jobs,
                             executor=executor, unsandboxed=unsandboxed, force=force, now=now, resume=resume)


def _grade_locked(course: Course, *, assignments, students, progress, jobs, executor, unsandboxed, force, now,
                  resume) -> GradingRun:
    """``grade``, the course's lock held."""
    quiet_nbgrader_warnings()
    selected = select_submissions(course, assignments, students)  # first: a typo is reported at once
    left_before = read_left(course)
    if resume:
        if not left_before:
            raise CourseError(f"nothing to resume: no interrupted `{grader_command()} grade` left submissions to grade "
                              f"({course.reports / LEFT_FILE} is missing); run `{grader_command()} grade`")
        selected, force = [key for key in selected if key in set(left_before)], True
    _check_writable(course)
    # A hidden_checks.py that does not load, or a source solution a check's reference comes from that does not
    # run, stops the batch here, before any work, rather than failing every student's part.
    ready_to_grade(course.root, sorted({assignment for _, assignment in selected}))
    isolation = choose_isolation(course.term().limits.memory_mib, unsandboxed=unsandboxed)  # before any work: refusing must not wait for anything
    schedule = course_schedule(course, now)
    followed = apply_term(course)  # due dates and extensions as term.toml has them, before any job copies the gradebook
    ledger = read_ledger(course)
    workers = jobs or default_workers()
    # A submission never graded is graded whatever its fingerprint: then the batch's own pool starts
    # now, its workers' zygotes warming while the fingerprints are taken (a second for a class).
    surely_graded = force or any(ledger.get(key) is None or ledger[key].status != GRADED for key in selected)
    with _batch_pool(workers, isolation, executor) if surely_graded else nullcontext() as pool:
        fingerprints = {key: fingerprint(course, *key) for key in selected}
        with nbgrader_api(course).gradebook as gradebook:
            current = {key for key in selected
                       if _is_current(course, ledger.get(key), fingerprints[key], _in_gradebook(gradebook, *key))}
            kept = {key: manual_grades_to_keep(gradebook, *key, _unchanged_answers(ledger.get(key), fingerprints[key]))
                    for key in selected}
        to_grade = [key for key in selected if force or key not in current]
        skipped = [key for key in selected if key not in to_grade]
        merged: dict[Key, Outcome] = {}
        compared = None
        try:
            if to_grade:
                compared = _grade_batch(course, to_grade, fingerprints, kept, ledger, merged, isolation, schedule,
                                        progress=progress, workers=workers, executor=executor, pool=pool)
        except KeyboardInterrupt:
            silence_unwinding()
            # What this batch had still to grade (with --force, unchanged ones too), for `grade --resume`.
            write_left(course, [key for key in left_before if key not in merged]
                       + [key for key in to_grade if key not in merged])
            write_exports(course, isolation, interrupted=True)  # at once: without the class-wide comparison of code
            raise BatchInterrupted(len(merged), len(to_grade) - len(merged), len(skipped)) from None
    # The submissions graded now have their rows: their extensions, and every late penalty, follow term.toml;
    # a page whose lateness changed since it was written (an extension granted after grading) is written again.
    followed.differences += apply_term(course).differences
    _lateness_from_gradebook(course, merged)
    from .refresh import rewrite_changed_pages

    rewrite_changed_pages(course, selected, schedule)
    if left_before:
        write_left(course, [key for key in left_before if key not in merged])
    write_exports(course, isolation, compared=compared)
    run = GradingRun([merged[key] for key in to_grade], skipped)
    run.term_differences = followed.differences
    return run


def _lateness_from_gradebook(course: Course, outcomes: dict[Key, Outcome]) -> None:
    """Set each graded outcome's lateness and penalty from the course's gradebook (which follows term.toml now)."""
    from nbgrader.api import MissingEntry

    from .course.lateness import submission_lateness

    with nbgrader_api(course).gradebook as gradebook:
        for (student, assignment), outcome in outcomes.items():
            try:
                outcome.seconds_late, outcome.late_penalty = submission_lateness(gradebook.find_submission(assignment, student))
            except MissingEntry:
                continue


def _batch_pool(workers: int, isolation, executor: Executor | None, pool=None):
    """A context giving the batch's own warm pool (``batch.warm_pool``), or ``pool`` if there is one already;
    ``None`` when the jobs go to ``executor`` or run here, one after the other."""
    if pool is not None or executor is not None or workers <= 1:
        return nullcontext(pool)
    return warm_pool(workers, isolation)


def _shown_in_feedback(job: GradeJob, schedule: Schedule) -> str:
    """``reveal.feedback_state`` of the job's own gradebook, from which its feedback was written (at ``schedule.as_of``)."""
    from nbgrader.api import Gradebook

    area_gradebook = Path(job.area) / "gradebook.db"
    if not area_gradebook.is_file():
        return ""
    with Gradebook(f"sqlite:///{area_gradebook}") as gradebook:
        return feedback_state(gradebook, job.student, job.assignment, schedule)


@dataclass
class Merging:
    """What bringing graded jobs into the course needs: one ``grade`` run's, or the service's for its whole life.

    Used in the one process that writes the gradebook (``gradebook``, open), the ledger (``ledger``, written through
    ``writer``) and the grading records.
    """

    course: Course
    gradebook: object  #: nbgrader's ``Gradebook`` of the course, open
    ledger: dict[Key, Entry]
    writer: LedgerWriter
    fingerprints: dict[Key, Fingerprint]  #: of each job's submitted files, taken before it was graded
    isolation: object
    schedule: Schedule
    context: GradingContext


def merge_outcome(merging: Merging, job: GradeJob, outcome: Outcome) -> Outcome:
    """Bring one graded job into the course: its files and scores (``batch.merge_result``), its ledger entry, its record.

    An output that cannot be kept fails that submission alone (its reason says why), never the caller.
    """
    course, gradebook = merging.course, merging.gradebook
    try:
        merged = merge_result(course, job, outcome, gradebook)
    except Exception as error:  # noqa: BLE001 - one submission's output, never the batch
        failed = Outcome(job.student, job.assignment, FAILED, 0.0, outcome.max_score,
                         f"its graded output could not be kept ({type(error).__name__}: {quoted(str(error), 200)})",
                         flags=outcome.flags)
        merged = merge_result(course, job, failed, gradebook, keep_files=False)
    shown = _shown_in_feedback(job, merging.schedule) if merged.status == GRADED else ""
    submitted = merging.fingerprints[job.key]
    merging.ledger[job.key] = entry_for(merged, submitted, merging.isolation, shown)
    merging.writer.changed()
    keep_record(course, merging.context, Path(job.area), merged, submitted.submitted, merging.isolation)
    return merged


def _grade_batch(course: Course, selected: list[Key], now: dict[Key, Fingerprint], kept: dict[Key, tuple[str, ...]],
                 ledger: dict[Key, Entry], merged: dict[Key, Outcome], isolation, schedule: Schedule, *, progress: bool,
                 workers: int, executor: Executor | None, pool=None) -> Future | None:
    """Grade ``selected``; each outcome goes into the gradebook, ``merged`` and the ledger as it arrives.

    Returns the class-wide comparison of code (``similarity.compare_in_background``), started as the jobs
    start when they run in other processes (else ``None``: the report compares at the end).
    """
    from tqdm.auto import tqdm

    # A pool of this batch's own (unless ``grade`` started it) starts its workers and their zygotes now, while this process gets ready.
    with _batch_pool(workers, isolation, executor, pool) as pool:
        tune_nbgrader()  # the merges below open each job's gradebook too
        record_source_cells(course, sorted({assignment for _, assignment in selected}))
        secret = load_or_create_secret(course.root)  # here, once: workers only read it
        context = GradingContext.now(course, secret)  # what every replay record of this run shares (records.py)
        # The report needs matplotlib at the end (a second to import): imported meanwhile, while this process mostly waits.
        threading.Thread(target=prepare_plotting, name="prepare-plotting", daemon=True).start()
        max_score = {a: sum(course.graded_cells(a).values()) for a in course.assignments()}
        # (a cluster may still be writing a work area here when the batch is done: a failed clean-up never fails the batch)
        with tempfile.TemporaryDirectory(dir=course.root, prefix=SCRATCH_PREFIX, ignore_cleanup_errors=True) as scratch:
            template = Path(scratch) / "template.db"
            copy_gradebook(course.root / "gradebook.db", template)
            batch = [GradeJob(str(course.root), str(Path(scratch) / f"job-{k}"), str(template), student, assignment,
                              isolation.sandbox, isolation.memory_mb, kept[(student, assignment)], schedule.as_of.isoformat())
                     for k, (student, assignment) in enumerate(selected)]
            with nbgrader_api(course).gradebook as gradebook, \
                    tqdm(total=len(batch), desc="grading", unit="submission", file=sys.stderr, disable=not progress) as bar:

                def merge(job, outcome):  # here, in the one process that writes the gradebook
                    try:
                        _merge(job, outcome)
                    finally:
                        release_scratch_gradebooks(job.area)
                        shutil.rmtree(job.area, ignore_errors=True)  # now, while the workers grade: not all at the end
                    bar.update()

                def _merge(job, outcome):
                    merged[job.key] = merge_outcome(merging, job, outcome)

                writer = LedgerWriter(course, ledger)
                merging = Merging(course, gradebook, ledger, writer, now, isolation, schedule, context)
                # The report's comparison of code (it reads what was handed in) beside the jobs, when they run in other
                # processes: in this one, a thread holding the interpreter (a long regular expression on a hostile
                # hand-in) would delay the kernel's replies past a cell's time limit. Serially, it runs at the end.
                in_other_processes = executor is not None or workers > 1
                compared = compare_in_background(course, course.assignments()) if in_other_processes else None
                try:
                    run_jobs(batch, workers=workers, executor=executor, pool=pool,
                             max_score=max_score.__getitem__, on_done=merge)
                except KeyboardInterrupt:
                    if compared is not None:  # its process, a daemon, is not waited for: os._exit skips that
                        stop_comparison(compared)
                    raise
                finally:
                    writer.flush()  # every merged submission is in it, Ctrl+C included
    return compared
