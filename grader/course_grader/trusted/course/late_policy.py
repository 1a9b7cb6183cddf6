"""The gradebook follows the term file: due dates, extensions and late penalties.

nbgrader keeps an assignment's due date on its gradebook row, a student's extension on their
*submission* row (``SubmittedAssignment.extension``: there is none before the student hands
in), and each notebook's late penalty on its ``SubmittedNotebook``, computed once, at autograde.
``follow_term`` writes ``term.toml``'s due dates into the gradebook and its extensions into the
submission rows that exist (it never creates one: a submission row makes nbgrader's
``generate_assignment`` refuse a changed cell), then recomputes every late penalty from the
term's policy, so that an extension granted or a policy changed after grading takes effect on
the next ``grade`` or ``refresh``. A due date or an extension the gradebook held otherwise
(set in the formgrader) is overwritten and reported, with the ``term.toml`` line that keeps it.

``TermLatePenalty`` is the same rule as nbgrader's ``LateSubmissionPlugin``, for nbgrader's own
``AssignLatePenalties`` (``nbgrader_config.py`` names it), so nbgrader's commands agree.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float

from .term import LATE_POLICIES, LatePolicy, Term, local_text


class TermLatePenalty(LateSubmissionPlugin):
    """nbgrader's late-penalty plugin with the term's policy: none, zero, or a percentage per started day."""

    policy = Enum(LATE_POLICIES, default_value="none", help="term.toml's [late].policy").tag(config=True)
    percent_per_day = Float(10.0, help="percent of the notebook's points off per started day late").tag(config=True)
    max_percent = Float(100.0, help="cap on the percentage taken off").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        """The penalty of the notebook ``AssignLatePenalties`` (this plugin's parent) is processing."""
        max_score = score
        parent = self.parent
        if parent is not None and getattr(parent, "gradebook", None) is not None:
            notebook = parent.gradebook.find_submission_notebook(parent.notebook_id, parent.assignment_id, student_id)
            max_score = float(notebook.max_score or 0.0)
        penalty = LatePolicy(self.policy, self.percent_per_day, self.max_percent).penalty(score, max_score, total_seconds_late)
        return penalty or None


@dataclass
class Followed:
    """What ``follow_term`` changed in the gradebook, and the differences it overwrote (each a message)."""

    differences: list[str] = field(default_factory=list)
    penalties_changed: int = 0


def _naive_utc(moment: dt.datetime | None) -> dt.datetime | None:
    """A date as nbgrader stores it: UTC without a zone."""
    return None if moment is None else moment.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _as_term_line(term: Term, stored: dt.datetime) -> str:
    return f'due = "{local_text(term, stored.replace(tzinfo=dt.timezone.utc)).rsplit(" ", 1)[0]}"'


def _follow_due_dates(gradebook, term: Term, followed: Followed) -> None:
    from nbgrader.api import MissingEntry

    for assignment in term.assignments:
        wanted = _naive_utc(assignment.due)
        try:
            row = gradebook.find_assignment(assignment.name)
        except MissingEntry:
            gradebook.add_assignment(assignment.name, duedate=wanted)
            continue
        if row.duedate == wanted:
            continue
        if row.duedate is not None:
            followed.differences.append(
                f"{assignment.name}: the gradebook's due date was {local_text(term, row.duedate.replace(tzinfo=dt.timezone.utc))} "
                f"(set in the formgrader, with `nbgrader db`, or by an earlier term.toml), term.toml says "
                f"{local_text(term, assignment.due) if assignment.due else 'none'}; term.toml's is now in force. "
                f"To keep the other, write under name = \"{assignment.name}\" in term.toml: {_as_term_line(term, row.duedate)}")
        row.duedate = wanted
    gradebook.db.commit()


def _follow_extensions(gradebook, term: Term, followed: Followed, only: tuple[str, str] | None = None) -> None:
    names = set(term.assignment_names)
    for submission in _submissions(gradebook, only):
        assignment, student = submission.assignment.name, submission.student.id
        if assignment not in names:
            continue
        wanted = term.extension_of(student, assignment)
        if submission.extension == wanted:
            continue
        if submission.extension is not None:
            hours = submission.extension.total_seconds() / 3600
            followed.differences.append(
                f"{student}/{assignment}: the gradebook gave an extension of {hours:g} hours (set in the formgrader, "
                f"with nbgrader's API, or by an earlier term.toml) that term.toml "
                + ("does not have" if wanted is None else f"gives as {wanted.total_seconds() / 3600:g} hours")
                + "; term.toml's is now in force. To keep the other, add to term.toml:\n"
                  f"    [[extensions]]\n    student = \"{student}\"\n    assignment = \"{assignment}\"\n    hours = {hours:g}")
        submission.extension = wanted
    gradebook.db.commit()


def _submission_class():
    from nbgrader.api import SubmittedAssignment

    return SubmittedAssignment


def _submissions(gradebook, only: tuple[str, str] | None) -> list:
    """Every submission of the gradebook, or with ``only`` (student, assignment) that one (none if it has none)."""
    from nbgrader.api import MissingEntry

    if only is None:
        return gradebook.db.query(_submission_class()).all()
    student, assignment = only
    try:
        return [gradebook.find_submission(assignment, student)]
    except MissingEntry:
        return []


def recompute_penalties(gradebook, term: Term, only: tuple[str, str] | None = None) -> int:
    """Set every notebook's late penalty of the term's assignments from the term's policy (``only``: of that
    (student, assignment)'s submission); return how many changed."""
    names = set(term.assignment_names)
    changed = 0
    for submission in _submissions(gradebook, only):
        if submission.assignment.name not in names:
            continue
        seconds = float(submission.total_seconds_late or 0.0)
        for notebook in submission.notebooks:
            penalty = term.late.penalty(float(notebook.score or 0.0), float(notebook.max_score or 0.0), seconds) or None
            if (notebook.late_submission_penalty or None) != penalty:
                notebook.late_submission_penalty = penalty
                changed += 1
    gradebook.db.commit()
    return changed


def follow_term(gradebook, term: Term, only: tuple[str, str] | None = None) -> Followed:
    """Write the term's due dates and extensions into ``gradebook`` (an open nbgrader ``Gradebook``) and
    recompute the late penalties; the differences overwritten are in the result.

    ``only``: (student, assignment): the extension and penalties of that submission alone (the due dates, one row
    per assignment, all), as the service follows the term for the hand-in it has just merged.
    """
    followed = Followed()
    _follow_due_dates(gradebook, term, followed)
    _follow_extensions(gradebook, term, followed, only)
    followed.penalties_changed = recompute_penalties(gradebook, term, only)
    return followed


def apply_term(course) -> Followed:
    """``follow_term`` on the course's own gradebook, with the course's ``term.toml``."""
    from .course import nbgrader_api

    term = course.term()
    with nbgrader_api(course).gradebook as gradebook:
        return follow_term(gradebook, term)
