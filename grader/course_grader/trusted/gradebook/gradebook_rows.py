"""A submitted notebook's grades and comments, read from nbgrader's gradebook in one query each.

nbgrader's preprocessors look up each cell's row on its own: ``Gradebook.find_grade`` and
``find_comment`` join five tables for one row, and ``SaveAutoGrades`` commits after every cell.
A submission's rows all exist once autograde has created the submission, so ``SaveAutoGradesAtOnce``
(``running/preprocessors.py``) and ``GetGradesAndWaiting`` (``feedback.py``) read them all at once here,
by the name of their cell, and fall back to nbgrader's lookup for a name not found (which
raises ``MissingEntry`` as before). The grader's own readers of a submission's grades (its
scores, the merge into the course's gradebook, the ledger's state, the replay record) do too.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from nbgrader.api import BaseCell, Comment, Grade, Gradebook, SubmittedNotebook


@dataclass(frozen=True)
class NotebookRows:
    """One submitted notebook's rows, each by its cell's ``grade_id``."""

    notebook: str
    assignment: str
    student: str
    submitted: SubmittedNotebook
    grades: dict[str, Grade]
    comments: dict[str, Comment]


def submitted_notebook_rows(gradebook: Gradebook, notebook: str, assignment: str, student: str) -> NotebookRows:
    """The rows of ``student``'s notebook ``notebook`` of ``assignment``, in the gradebook's session.

    Raises ``MissingEntry`` (nbgrader's) when the submission has no such notebook.
    """
    submitted = gradebook.find_submission_notebook(notebook, assignment, student)
    return NotebookRows(notebook, assignment, student, submitted, *grades_and_comments(gradebook, submitted))


def grades_and_comments(gradebook: Gradebook, submitted: SubmittedNotebook) -> tuple[dict[str, Grade], dict[str, Comment]]:
    """A submitted notebook's grades and comments, each by its cell's ``grade_id``: one query each.

    Through ``submitted.grades`` instead, each grade's ``name`` loads its cell on its own.
    """
    db = gradebook.db
    grades = db.query(BaseCell.name, Grade).join(Grade.cell).filter(Grade.notebook_id == submitted.id)
    comments = db.query(BaseCell.name, Comment).join(Comment.cell).filter(Comment.notebook_id == submitted.id)
    return dict(grades.all()), dict(comments.all())


@contextmanager
def opened_rows(preprocessor, resources: dict) -> Iterator[NotebookRows]:  # noqa: ANN001 - an nbgrader preprocessor
    """As nbgrader's gradebook preprocessors begin: their ids from ``resources``, their gradebook opened; then the rows.

    Sets ``notebook_id``, ``assignment_id``, ``student_id``, ``db_url`` and ``gradebook`` on
    ``preprocessor``; the gradebook is closed when the block ends.
    """
    ids = resources["nbgrader"]
    preprocessor.notebook_id, preprocessor.assignment_id = ids["notebook"], ids["assignment"]
    preprocessor.student_id, preprocessor.db_url = ids["student"], ids["db_url"]
    preprocessor.gradebook = Gradebook(preprocessor.db_url)
    with preprocessor.gradebook:
        yield submitted_notebook_rows(preprocessor.gradebook, preprocessor.notebook_id, preprocessor.assignment_id,
                                      preprocessor.student_id)


def grade_of(gradebook: Gradebook, rows: NotebookRows, grade_id: str) -> Grade:
    """The row of cell ``grade_id`` in ``rows``, or nbgrader's own lookup of it."""
    found = rows.grades.get(grade_id)
    if found is not None:
        return found
    return gradebook.find_grade(grade_id, rows.notebook, rows.assignment, rows.student)


def comment_of(gradebook: Gradebook, rows: NotebookRows, grade_id: str) -> Comment:
    """The comment row of cell ``grade_id`` in ``rows``, or nbgrader's own lookup of it."""
    found = rows.comments.get(grade_id)
    if found is not None:
        return found
    return gradebook.find_comment(grade_id, rows.notebook, rows.assignment, rows.student)


def submission_scores(gradebook: Gradebook, assignment: str, student: str) -> tuple[float, float, dict[str, float]]:
    """Total score, maximum, and the score of each graded cell (by ``grade_id``) of a submission.

    The cells' scores in one query (reading them through each notebook's grades loaded each
    grade's cell on its own). Raises ``MissingEntry`` (nbgrader's) when there is no such submission.
    """
    submission = gradebook.find_submission(assignment, student)
    scores = (gradebook.db.query(BaseCell.name, Grade.score).join(Grade.cell).join(Grade.notebook)
              .filter(SubmittedNotebook.assignment_id == submission.id))
    return float(submission.score), float(submission.max_score), {name: float(score) for name, score in scores.all()}
