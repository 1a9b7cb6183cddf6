"""How late a submission was, in words for a person (report, feedback) and in hours for a spreadsheet (CSV)."""

from __future__ import annotations

from ...selfcheck import duration_text as late_text  # the self-check says durations the same way


def submission_lateness(submission) -> tuple[float, float]:
    """Seconds past the due date (extension included) and the late penalty of a graded submission,
    as nbgrader's gradebook has them (a ``SubmittedAssignment``)."""
    penalty = sum(float(notebook.late_submission_penalty or 0.0) for notebook in submission.notebooks)
    return float(submission.total_seconds_late or 0.0), penalty


def hours_late(seconds: float) -> str:
    """Hours past the due date for a CSV (two decimals), empty when on time or when no time is known."""
    return f"{seconds / 3600:.2f}" if seconds > 0 else ""


def late_sentence(seconds: float, penalty: float) -> str:
    """The feedback page's line on lateness, or ``""`` when the submission was on time (or has no time)."""
    if seconds <= 0:
        return ""
    cost = f"; late penalty: {points_text(penalty)}" if penalty else "; no points were taken off for it"
    return f"Handed in {late_text(seconds)} after the due date (your extension included, if you had one){cost}."


def points_text(points: float) -> str:
    """``1 point``, ``2 points``, ``0.5 points``: a number of points in words for a person."""
    return f"{points:g} point" + ("" if points == 1 else "s")
