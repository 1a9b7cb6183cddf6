"""How late a submission was, in words for a person (report, feedback) and in hours for a spreadsheet (CSV)."""

from __future__ import annotations


def submission_lateness(submission) -> tuple[float, float]:
    """Seconds past the due date (extension included) and the late penalty of a graded submission,
    as nbgrader's gradebook has them (a ``SubmittedAssignment``)."""
    penalty = sum(float(notebook.late_submission_penalty or 0.0) for notebook in submission.notebooks)
    return float(submission.total_seconds_late or 0.0), penalty


def late_text(seconds: float) -> str:
    """``2 d 3 h``, ``5 h 10 min`` or ``12 min``: how late, for a person."""
    minutes = int(seconds // 60)
    days, hours, minutes = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} d {hours} h"
    return f"{hours} h {minutes} min" if hours else f"{max(minutes, 1)} min"


def hours_late(seconds: float) -> str:
    """Hours past the due date for a CSV (two decimals), empty when on time or when no time is known."""
    return f"{seconds / 3600:.2f}" if seconds > 0 else ""


def late_sentence(seconds: float, penalty: float) -> str:
    """The feedback page's line on lateness, or ``""`` when the submission was on time (or has no time)."""
    if seconds <= 0:
        return ""
    cost = f"; late penalty: {penalty:g} points" if penalty else "; no points were taken off for it"
    return f"Handed in {late_text(seconds)} after the due date (your extension included, if you had one){cost}."
