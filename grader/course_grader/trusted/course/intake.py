"""What the grader accepts as a submission: checked with ``lstat``, size-capped, read once, never followed.

Every rule here is applied before a submission's code runs; a submission that breaks one gets a
row in ``grades.csv`` with the reason, and the batch goes on. What a hand-in must be (which
file, its size, its cells, its imports) is decided by ``course_grader.intake_rules``, which
the student's self-check applies too: the same rules, in the same words.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...intake_rules import MAX_FILE_BYTES, Assignment, ImportRules, IntakeError, assignment_from_notebook, examine
from .course import Course
from .files import UnsafeFileError, folder_problems, name_problem, read_capped
from .hand_in_digest import hand_in_digest
from .safe_text import quoted

#: Largest ``timestamp.txt`` and ``submission_secret.txt`` read (nbgrader writes one short line in each).
MAX_TIMESTAMP_BYTES = 200
TIMESTAMP_FILE = "timestamp.txt"
#: What ``nbgrader submit`` writes beside the notebooks; ``release_feedback`` names the feedback page by it.
SECRET_FILE = "submission_secret.txt"
_PLAIN_SECRET = re.compile(rb"[A-Za-z0-9_-]{1,128}")
#: A notebook's name that may also name its feedback page (``release_feedback`` finds a page by the submitted name).
_PLAIN_FILE_STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.()+-]{0,99}")


@dataclass
class TakenIn:
    """A submission as the grader runs it: the notebooks under their expected names, and what was repaired."""

    notebooks: dict[str, bytes] = field(default_factory=dict)  #: ``geometry.ipynb`` -> the notebook to run (JSON)
    timestamp: bytes | None = None  #: ``timestamp.txt`` as collected, when it holds a date
    submission_secret: bytes | None = None  #: ``submission_secret.txt`` as collected, when it is plain
    handed_in_as: dict[str, str] = field(default_factory=dict)  #: ``geometry`` -> ``geometry (1)``: a notebook graded under another name
    #: ``hand_in_digest`` of the notebooks as handed in (before outputs are dropped): what the hidden cases are drawn from
    digest: str = ""
    notes: list[str] = field(default_factory=list)
    refused: str = ""


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


def expected_assignment(course: Course, assignment: str, notebook: str, imports: ImportRules | None = None) -> Assignment:
    """The cells of one notebook of an assignment as released (``release/``; ``source/`` when no release exists),
    with what its grading kernel can import (``imports``; none refused when not given)."""
    released = course.release / assignment / f"{notebook}.ipynb"
    path = released if released.is_file() else course.source / assignment / f"{notebook}.ipynb"
    return replace(_expected_from_file(assignment, notebook, path == released, path.read_bytes()),
                   imports=imports or ImportRules())


@functools.lru_cache(maxsize=64)
def _expected_from_file(assignment: str, notebook: str, released: bool, data: bytes) -> Assignment:
    """``expected_assignment`` of one file's bytes (``data``), parsed once per content.

    Every submission's intake names the owner of a foreign notebook from every assignment of the
    course (in the course, and again in each job's copy of it): without this, each parsed the
    course's notebooks again.
    """
    expected = assignment_from_notebook(assignment, notebook, json.loads(data.decode("utf-8")))
    if released:
        return expected
    # no release: solutions, answers and hidden tests must not reach a student's notebook (a deleted cell comes
    # back empty; nbgrader restores graded cells itself), and a test cell is not compared with its hidden tests
    return Assignment(assignment, notebook, tuple(
        replace(cell, source="") if cell.role in ("solution", "answer", "tests") else cell for cell in expected.cells))


def course_assignments(course: Course) -> dict[str, Assignment]:
    """Every notebook of the course as released, by assignment (to name the owner of a foreign notebook)."""
    return {a: expected_assignment(course, a, name) for a in course.assignments() for name in course.notebook_names(a)[:1]}


def _read(path: Path) -> bytes | IntakeError:
    try:
        return read_capped(path, limit=MAX_FILE_BYTES)
    except UnsafeFileError as error:
        return IntakeError(f"{path.name} is refused: {error}")


def _timestamp(folder: Path) -> tuple[bytes | None, str]:
    """``timestamp.txt`` of a submission when it holds a date nbgrader reads, and a note when it is ignored."""
    from nbgrader.utils import parse_utc

    path = folder / TIMESTAMP_FILE
    if not os.path.lexists(path):
        return None, ""
    try:
        data = read_capped(path, limit=MAX_TIMESTAMP_BYTES)
        parse_utc(data.decode("utf-8").strip())
    except (UnsafeFileError, UnicodeDecodeError, ValueError, OverflowError, TypeError):
        return None, f"{TIMESTAMP_FILE} does not hold a date: ignored, so lateness is not known"
    return data, ""


def _submission_secret(folder: Path) -> bytes | None:
    """``submission_secret.txt`` of a submission made with ``nbgrader submit``, when it is one plain token."""
    path = folder / SECRET_FILE
    if not os.path.lexists(path):
        return None
    try:
        data = read_capped(path, limit=MAX_TIMESTAMP_BYTES)
    except UnsafeFileError:
        return None
    return data if _PLAIN_SECRET.fullmatch(data.strip()) else None


def take_in(course: Course, student: str, assignment: str, imports: ImportRules) -> TakenIn:
    """Read a submission the way the grader runs it (``intake_rules``), never following a link.

    ``imports``: what the assignment's grading kernel can import (``judging.kernel_imports.import_rules``), so that a
    refused import is named before the code runs.

    The one notebook of the hand-in is taken whatever its name (an assignment of several
    notebooks needs their own names); stored outputs are dropped before the size limits
    apply; deleted cells are put back; ``timestamp.txt`` is kept when it holds a date.
    """
    refused = submission_problems(course, student, assignment)
    if refused:
        return TakenIn(refused=refused)
    folder = course.submitted / student / assignment
    names = course.notebook_names(assignment)
    handed_in = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".ipynb") and not entry.is_dir())
    others = course_assignments(course)
    taken = TakenIn()
    taken.timestamp, note = _timestamp(folder)
    taken.submission_secret = _submission_secret(folder)
    as_handed_in: dict[str, bytes] = {}
    for name in names:
        files = handed_in if len(names) == 1 else [f"{name}.ipynb"] if f"{name}.ipynb" in handed_in else []
        read = {file: _read(folder / file) for file in files}
        intake = examine(read, expected_assignment(course, assignment, name, imports), others)
        if intake.refused:
            return TakenIn(refused=quoted(intake.refused, 400))
        taken.notes += [quoted(text, 300) for text in intake.notes]
        taken.notebooks[f"{name}.ipynb"] = _as_valid_notebook(intake.notebook, intake.graded_file)
        original = read.get(intake.graded_file)
        # as handed in, stored outputs and all; a notebook put back whole (none handed in) as graded
        as_handed_in[f"{name}.ipynb"] = original if isinstance(original, bytes) else taken.notebooks[f"{name}.ipynb"]
        stem = intake.graded_file.removesuffix(".ipynb")
        if stem != name and _PLAIN_FILE_STEM.fullmatch(stem):
            taken.handed_in_as[name] = stem
    taken.notes += [note] if note else []
    taken.digest = hand_in_digest(as_handed_in)
    return taken


def _as_valid_notebook(notebook: dict, file_name: str) -> bytes:
    """The notebook validated by nbformat and written as nbformat writes it.

    Raises
    ------
    IntakeError
        If nbformat finds it invalid.
    """
    import nbformat

    try:
        node = nbformat.from_dict(notebook)
        nbformat.validate(node)
        return nbformat.writes(node).encode("utf-8")
    except Exception as error:  # noqa: BLE001 - every way of not being a valid notebook
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise IntakeError(f"{file_name} is not a valid notebook: {quoted(message, 120)}") from None
