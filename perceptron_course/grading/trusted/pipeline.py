"""The TA's pipeline, a thin layer over nbgrader's API.

``release`` regenerates ``release/`` from ``source/``. ``grade`` autogrades every
submission under ``submitted/``, writes feedback without hidden tests, exports
``grades.csv`` and a report. A submission that cannot be graded (not a notebook,
a missing notebook, a crash of nbgrader) gets a row with score 0 and the reason;
the batch always goes on, and nothing under ``submitted/`` is modified.
"""

from __future__ import annotations

import csv
import re
import sys
import tempfile
import warnings
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path

from .course import Course, CourseError, nbgrader_api
from .files import UnsafeFileError, folder_problems, name_problem, read_capped
from .flags import Flag, Review, review_submission, summary
from .sandbox import choose_isolation
from .secret import load_or_create_secret

GRADED, FAILED = "graded", "failed"
#: Most cells a submitted notebook may have (the assignments have about 25), and most characters of text
#: (Markdown, raw) per cell and in all (an assignment's own text is about 8,000).
MAX_CELLS = 500
MAX_TEXT_CELL = 10_000
MAX_TEXT_TOTAL = 60_000


@dataclass
class Outcome:
    """What grading one submission gave."""

    student: str
    assignment: str
    status: str  #: ``"graded"`` or ``"failed"``
    score: float
    max_score: float
    reason: str = ""  #: why it failed, or what the grader had to repair
    cell_scores: dict[str, float] = field(default_factory=dict)  #: score of each graded cell
    feedback: list[Path] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)  #: suspicious code found before it ran (never scored)
    unanalysed: list[str] = field(default_factory=list)  #: cells the static review could not parse


ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception|Exit|Interrupt)\b")


def _last_error_line(result: dict) -> str:
    """The most telling line of a failed nbgrader call: its last ``SomeError: message``."""
    text = (result.get("error") or "") + "\n" + (result.get("log") or "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if ERROR_LINE.match(line) and "Please see" not in line:
            return line[:300]
    return lines[-1][:300] if lines else "nbgrader failed without a message"


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
            raise CourseError(f"generate_assignment {assignment} failed: {_last_error_line(result)}")
    normalise_files([path for path in course_notebooks(course.root, chosen) if course.release in path.parents])
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
                raise CourseError(f"cannot record the cells of {assignment}: {_last_error_line(result)}")


def _choose_assignments(course: Course, assignments: list[str] | None) -> list[str]:
    known = course.assignments()
    if not assignments:
        return known
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise CourseError(f"unknown assignment {', '.join(unknown)}; the course has {', '.join(known)}")
    return list(assignments)


def submission_problems(course: Course, student: str, assignment: str) -> str:
    """Why the grader refuses to read a submission folder at all, or ``""``.

    The ids must be plain names; ``submitted/<student>/<assignment>/`` and its parents must
    be real folders; every entry must be a folder or a singly linked regular file (no
    symbolic link, hard link, device, FIFO or socket). All judged with ``lstat``.
    """
    problems = [reason for reason in (name_problem(student, "student"), name_problem(assignment, "assignment")) if reason]
    if problems:
        return "; ".join(problems)
    refused = folder_problems(course.submitted / student / assignment, within=course.root)
    if refused:
        return ("refused, the submission folder holds what a notebook hand-in never does: "
                + "; ".join(quoted(problem, 120) for problem in refused[:5]))
    return ""


def read_submitted_notebook(path: Path):
    """The notebook at ``path`` read without following links and size-capped, then validated.

    Raises
    ------
    UnsafeFileError
        If the file cannot be read safely; ``ValueError`` and friends if it is not a notebook.
    """
    import nbformat

    notebook = nbformat.reads(read_capped(path).decode("utf-8"), as_version=4)
    if len(notebook.cells) > MAX_CELLS:  # every pass of nbgrader goes over every cell: refuse before any
        raise ValueError(f"it has {len(notebook.cells):,} cells; a submission may have at most {MAX_CELLS}")
    text = [cell.source for cell in notebook.cells if cell.cell_type != "code"]
    # nbconvert's Markdown filters take quadratic time on some text: bound what the feedback page renders
    if max(map(len, text), default=0) > MAX_TEXT_CELL or sum(map(len, text)) > MAX_TEXT_TOTAL:
        raise ValueError(f"its text cells are too long (at most {MAX_TEXT_CELL:,} characters each, {MAX_TEXT_TOTAL:,} in all)")
    nbformat.validate(notebook)
    return notebook


def unreadable_notebooks(course: Course, student: str, assignment: str) -> str:
    """Why a submission cannot be handed to nbgrader, or ``""`` if it can.

    The folder must pass ``submission_problems``; every notebook of the assignment's
    source must be there and must be a valid notebook (JSON, nbformat 4) of at most
    ``MAX_NOTEBOOK_BYTES``.
    """
    refused = submission_problems(course, student, assignment)
    if refused:
        return refused
    folder = course.submitted / student / assignment
    problems = []
    for name in course.notebook_names(assignment):
        path = folder / f"{name}.ipynb"
        if not path.is_file():
            found = sorted(quoted(p.name) for p in folder.iterdir()) if folder.is_dir() else []
            problems.append(f"{name}.ipynb is missing (found: {', '.join(found) or 'nothing'})")
            continue
        try:
            notebook = read_submitted_notebook(path)
        except UnsafeFileError as error:
            problems.append(f"{name}.ipynb is refused: {error}")
            continue
        except Exception as error:  # noqa: BLE001 - every way of not being a notebook
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            problems.append(f"{name}.ipynb is not a valid notebook: {quoted(message, 120)}")
            continue
        foreign = _foreign_notebook(course, assignment, notebook)
        if foreign:
            problems.append(f"{name}.ipynb {foreign}")
    return "; ".join(problems)


_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,:;=+/()'\"-]")


def quoted(text: str, limit: int = 40) -> str:
    """Student-controlled text made safe to quote in a reason: one line, plain characters, short.

    Reasons end up in ``grades.csv``, the Markdown and HTML reports and the terminal; a grade
    id or a file name chosen by a student must not write headings, tables or HTML there.
    """
    plain = _UNSAFE.sub("?", " ".join(str(text).split()))
    return plain if len(plain) <= limit else plain[: limit - 3] + "..."


def _foreign_notebook(course: Course, assignment: str, notebook) -> str:
    """A reason if the notebook holds nbgrader cells but none of this assignment's."""
    ids = [cell.metadata["nbgrader"]["grade_id"] for cell in notebook.cells
           if "grade_id" in cell.get("metadata", {}).get("nbgrader", {})]
    expected = set(course.cell_ids(assignment))
    if ids and not expected.intersection(ids):
        owners = [other for other in course.assignments() if set(ids) & set(course.cell_ids(other))]
        hint = f"; it looks like the notebook of {', '.join(owners)}" if owners else ""
        return f"holds none of the cells of {assignment} (its cells: {', '.join(quoted(i) for i in ids[:4])}){hint}"
    return ""


def read_scores(api, student: str, assignment: str) -> tuple[float, float, dict[str, float]]:
    """Total score, maximum and per-cell scores of a graded submission, from the gradebook."""
    with api.gradebook as gradebook:
        submission = gradebook.find_submission(assignment, student)
        cells = {grade.name: float(grade.score) for notebook in submission.notebooks for grade in notebook.grades}
        return float(submission.score), float(submission.max_score), cells


def grade_submission(api, course: Course, student: str, assignment: str) -> Outcome:
    """Autograde one submission and write its feedback; never raises for a bad submission."""
    max_score = sum(course.graded_cells(assignment).values())
    reason = unreadable_notebooks(course, student, assignment)
    if reason:
        return Outcome(student, assignment, FAILED, 0.0, max_score, reason)
    reviews = review_submission(course, course.submitted / student / assignment, assignment)
    flags = [flag for review in reviews.values() for flag in review.flags]
    unanalysed = [cell for review in reviews.values() for cell in review.unanalysed]
    result = api.autograde(assignment, student, force=True, create=True)
    if not result["success"]:
        return Outcome(student, assignment, FAILED, 0.0, max_score, f"autograde failed: {quoted(_last_error_line(result), 200)}",
                       flags=flags, unanalysed=unanalysed)
    mark_flagged(api, student, assignment, reviews)
    score, max_score, cells = read_scores(api, student, assignment)
    feedback = api.generate_feedback(assignment, student, force=True)
    outcome = Outcome(student, assignment, GRADED, score, max_score, cell_scores=cells, reason=_limits_reason(course, student, assignment),
                      flags=flags, unanalysed=unanalysed)
    if feedback["success"]:
        outcome.feedback = sorted((course.feedback / student / assignment).glob("*.html"))
    else:
        outcome.reason = f"graded, but feedback failed: {quoted(_last_error_line(feedback), 200)}"
    return outcome


def mark_flagged(api, student: str, assignment: str, reviews: dict[str, Review]) -> None:
    """Set nbgrader's ``flagged`` on each submitted notebook that has flags (for the formgrader).

    A flag is never cleared here: unflagging is the TA's decision, in the formgrader.
    """
    flagged = [name for name, review in reviews.items() if review.flags]
    if not flagged:
        return
    with api.gradebook as gradebook:
        for name in flagged:
            gradebook.find_submission_notebook(name, assignment, student).flagged = True
        gradebook.db.commit()


def _limits_reason(course: Course, student: str, assignment: str) -> str:
    """The grading limits a graded submission hit, for the report (``""`` when none)."""
    import nbformat

    from .preprocessors import limits_hit

    found = []
    for path in sorted((course.root / "autograded" / student / assignment).glob("*.ipynb")):
        found += limits_hit(nbformat.read(path, as_version=4))
    return f"graded; limits hit: {'; '.join(dict.fromkeys(found))}" if found else ""


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
        print(f"warning: ignoring submitted folders of unknown assignments: {', '.join(stray)}", file=sys.stderr)
    return selected


def quiet_nbgrader_warnings() -> None:
    """Silence warnings nbgrader raises on every submission; they are not the TA's to fix."""
    warnings.filterwarnings("ignore", module="nbgrader")
    warnings.filterwarnings("ignore", message=".*not in session.*")  # its SQLAlchemy use
    warnings.filterwarnings("ignore", message="Cell is missing an id field")  # cells it restores


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

    from .batch import GradeJob, copy_gradebook, default_workers, merge_result, run_jobs

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
    from .report import write_report

    write_report(course, outcomes, isolation)
    return outcomes


CSV_COLUMNS = ("student", "assignment", "status", "score", "max_score", "reason", "flags")


def write_grades_csv(path: Path, outcomes: list[Outcome]) -> None:
    """One row per submission: student, assignment, status, score, max_score, reason, flags.

    ``flags`` is short (``"augment: exec (line 3); ..."``), empty when nothing was flagged.

    Rows of submissions not graded this time (``--student``, ``--assignment``) are kept.
    """
    rows = {}
    if path.exists():
        with path.open(newline="", encoding="utf-8") as handle:
            rows = {(row["student"], row["assignment"]): [row.get(column) or "" for column in CSV_COLUMNS]
                    for row in csv.DictReader(handle)}
    for o in outcomes:
        rows[(o.student, o.assignment)] = [o.student, o.assignment, o.status, f"{o.score:g}", f"{o.max_score:g}", o.reason,
                                           summary(o.flags)]
    temporary = path.with_suffix(".csv.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows[key] for key in sorted(rows))
    temporary.replace(path)  # never a half-written grades.csv
