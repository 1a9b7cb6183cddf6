"""Grading one submission with nbgrader: autograde, scores, flags, feedback; never raises for a bad submission."""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import Collection

from ..course.course import Course, nbgrader_error_line
from ..course.files import write_new
from ..judging.flags import Review, review_submission
from ..judging.grading_metadata import limits_hit
from ..gradebook.outcome import FAILED, GRADED, Outcome
from ..course.safe_text import quoted




def read_scores(api, student: str, assignment: str) -> tuple[float, float, dict[str, float]]:
    """Total score, maximum and per-cell scores of a graded submission, from the gradebook."""
    from ..gradebook.gradebook_rows import submission_scores  # nbgrader's gradebook: imported by a grading job, not by every command

    with api.gradebook as gradebook:
        return submission_scores(gradebook, assignment, student)


def grade_submission(api, course: Course, student: str, assignment: str, *, kept_manual: Collection[str] = (),
                     checks_root: Path | None = None) -> Outcome:
    """Autograde one submission and write its feedback; never raises for a bad submission.

    The submission is one the intake took in (``batch._prepare_area`` wrote the notebooks it gave,
    valid and under their expected names, into the job's own course). ``kept_manual`` names
    (``notebook/grade_id``) the answers whose manual grade stays: nbgrader's autograde marks them as
    needing one again, and they are set back before scores and feedback are read. ``checks_root`` is the
    course whose hidden_checks.py say what the assignment allows to import (``course`` when not given).
    """
    max_score = sum(course.graded_cells(assignment).values())
    reviews = review_submission(course, course.submitted / student / assignment, assignment, checks_root=checks_root)
    flags = [flag for review in reviews.values() for flag in review.flags]
    unanalysed = [cell for review in reviews.values() for cell in review.unanalysed]
    result = api.autograde(assignment, student, force=True, create=True)
    if not result["success"]:
        return Outcome(student, assignment, FAILED, 0.0, max_score, f"autograde failed: {quoted(nbgrader_error_line(result), 200)}",
                       flags=flags, unanalysed=unanalysed)
    mark_flagged(api, student, assignment, reviews)
    keep_manual_grades(api, student, assignment, kept_manual)
    for path in sorted((course.root / "autograded" / student / assignment).glob("*.ipynb")):
        merge_stream_outputs(path)
    score, max_score, cells = read_scores(api, student, assignment)
    feedback = api.generate_feedback(assignment, student, force=True)
    outcome = Outcome(student, assignment, GRADED, score, max_score, cell_scores=cells, reason=_limits_reason(course, student, assignment),
                      flags=flags, unanalysed=unanalysed)
    if feedback["success"]:
        outcome.feedback = sorted((course.feedback / student / assignment).glob("*.html"))
    else:
        outcome.reason = f"graded, but feedback failed: {quoted(nbgrader_error_line(feedback), 200)}"
    return outcome


def keep_manual_grades(api, student: str, assignment: str, kept: Collection[str]) -> None:
    """Mark the answers ``kept`` (``notebook/grade_id``) that hold a manual score as graded (autograde reopened them)."""
    if not kept:
        return
    with api.gradebook as gradebook:
        submission = gradebook.find_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if f"{notebook.name}/{grade.name}" in kept and grade.manual_score is not None:
                    grade.needs_manual_grade = False
        gradebook.db.commit()


def merge_stream_outputs(path) -> None:
    """Join each run of consecutive stream outputs of one stream (stdout, stderr) in a graded notebook into one output.

    How a kernel's prints are cut into messages depends on timing; joined, a regrade of the
    same submission gives the same notebook and the same feedback, byte for byte.
    """
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - nbgrader wrote it; if it cannot be read back, it stays as it is
        return
    changed = False
    for cell in notebook.cells:
        merged, texts = [], []  # texts[i]: the parts of merged[i]'s text, joined once (linear in the outputs)
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (previous is not None and output.get("output_type") == "stream" and previous.get("output_type") == "stream"
                    and previous.get("name") == output.get("name")):
                texts[-1].append(str(output.get("text", "")))
                changed = True
            else:
                merged.append(output)
                texts.append([str(output.get("text", ""))] if output.get("output_type") == "stream" else [])
        for output, parts in zip(merged, texts):
            if len(parts) > 1:
                output["text"] = "".join(parts)
        if cell.cell_type == "code":
            cell.outputs = merged
    if changed:
        replace_read_only(Path(path), nbformat.writes(notebook))


def replace_read_only(path: Path, text: str) -> None:
    """Give ``path`` the content ``text``, keeping its mode: a new file renamed over it.

    nbgrader leaves what it writes read-only (``permissions``, 444): a grader that is not root (a service's own user)
    cannot open it for writing, but can replace it in a folder of its own.
    """
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)  # left by a grader killed here
    write_new(partial, text.encode("utf-8"))
    partial.chmod(stat.S_IMODE(path.lstat().st_mode))
    os.replace(partial, path)


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

    found = []
    for path in sorted((course.root / "autograded" / student / assignment).glob("*.ipynb")):
        found += limits_hit(nbformat.read(path, as_version=4))
    return f"graded; limits hit: {'; '.join(dict.fromkeys(found))}" if found else ""


def quiet_nbgrader_warnings() -> None:
    """Silence warnings nbgrader raises on every submission; they are not the TA's to fix."""
    warnings.filterwarnings("ignore", module="nbgrader")
    warnings.filterwarnings("ignore", message=".*not in session.*")  # its SQLAlchemy use
    warnings.filterwarnings("ignore", message="Cell is missing an id field")  # cells it restores


def feedback_under_submitted_names(course: Course, student: str, assignment: str, handed_in_as: dict[str, str]) -> None:
    """A copy of each feedback page under the name the notebook was handed in as (``geometry (1).html``).

    ``nbgrader release_feedback`` and ``fetch_feedback`` match a page to the submitted notebook by
    that name; ``handed_in_as`` maps ``geometry`` to ``geometry (1)`` (``intake.TakenIn``).
    """
    folder = course.feedback / student / assignment
    for name, stem in handed_in_as.items():
        page = folder / f"{name}.html"
        if page.is_file() and not page.is_symlink() and not os.path.lexists(folder / f"{stem}.html"):
            write_new(folder / f"{stem}.html", page.read_bytes())
