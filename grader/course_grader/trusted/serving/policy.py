"""What the service does with a hand-in before grading it: ``term.toml``'s ``[serve]`` (attempts, cool-down, late).

Attempts are counted from the journal: a hand-in given to a grader (or put in ``submitted/`` by the TA's
``use-handin``) is an attempt; a superseded, limited, held or refused one is not. Days and cool-downs run on the service's own clock (when it
first saw a hand-in), never on a time the student's side wrote; lateness reads the hand-in's time
as ``grade`` and nbgrader do (``timestamp.txt``), against the student's own due date (extensions
included).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ..course.term import Term, local_text
from .journal import ATTEMPTS, Handin

GRADE, LIMIT, HOLD = "grade", "limit", "hold"


@dataclass(frozen=True)
class Decision:
    """``grade`` it, or not (``limit``: a page says why and when the next attempt opens; ``hold``: kept for the TA)."""

    action: str
    reason: str = ""
    opens_at: dt.datetime | None = None


def student_due(term: Term, student: str, assignment: str) -> dt.datetime | None:
    """The student's own due date (the assignment's, or their extension's), ``None`` without one."""
    due = term.due(assignment)
    extension = term.extension_of(student, assignment)
    return due + extension if due is not None and extension is not None else due


def handed_in_at(text: str) -> dt.datetime | None:
    """nbgrader's timestamp of a hand-in as a timezone-aware time (``None`` when it does not read as one)."""
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(text.strip()).replace(tzinfo=dt.timezone.utc) if text.strip() else None
    except (ValueError, OverflowError, TypeError):
        return None


def decide(term: Term, handin: Handin, earlier: list[Handin], now: float | None = None) -> Decision:
    """The decision for ``handin`` given the student's ``earlier`` hand-ins of the same assignment, at ``now``: by
    default the moment the service saw it arrive (``seen_at``), not when a worker is free for it, so that a hand-in
    kept waiting (behind the student's own slow attempt) is not let past a cool-down or into the next day's attempts.

    The one place the service's limits are decided, always in this order: the attempts in all, the attempts of
    the day, the cool-down, then lateness (``hold``). A hand-in past the attempts is limited whether or not it is
    late, so that holding it (for the TA's ``use-handin`` and ``grade``) never opens one attempt more.
    """
    policy = term.serve
    now = handin.seen_at if now is None else now
    attempts = sorted(h.seen_at for h in earlier if h.state in ATTEMPTS and h.seq != handin.seq)
    zone = ZoneInfo(term.course.timezone)
    now_local = dt.datetime.fromtimestamp(now, zone)
    if policy.attempts and len(attempts) >= policy.attempts:
        return Decision(LIMIT, f"You have used all {policy.attempts} graded attempts at {handin.assignment}.")
    if policy.attempts_per_day:
        today = [seen for seen in attempts if dt.datetime.fromtimestamp(seen, zone).date() == now_local.date()]
        if len(today) >= policy.attempts_per_day:
            tomorrow = dt.datetime.combine(now_local.date() + dt.timedelta(days=1), dt.time(), zone)
            return Decision(LIMIT, f"You have used the {policy.attempts_per_day} graded attempts of today at "
                                   f"{handin.assignment}.", tomorrow)
    if policy.cooldown_minutes and attempts:
        opens = dt.datetime.fromtimestamp(attempts[-1], zone) + dt.timedelta(minutes=policy.cooldown_minutes)
        if now_local < opens:
            return Decision(LIMIT, f"A graded attempt at {handin.assignment} opens {policy.cooldown_minutes:g} minutes "
                                   "after the last one.", opens)
    due = student_due(term, handin.student, handin.assignment)
    moment = handed_in_at(handin.handed_in)
    if policy.late == HOLD and due is not None and moment is not None and moment > due:
        return Decision(HOLD, f"Handed in after the due date ({local_text(term, due)}): kept for the TA, who decides "
                              "whether it is graded.")
    return Decision(GRADE)


def attempts_lines(term: Term, student: str, assignment: str, rows: list[Handin], now: float) -> list[str]:
    """What a student's page says of her attempts at ``assignment``: used, left, and when the next graded one opens.

    Parameters
    ----------
    term
        The term (its ``[serve]`` as it is now).
    student, assignment
        Whose attempts, at what.
    rows
        The student's hand-ins of ``assignment`` in the journal, as they are now.
    now
        The service's clock.

    Returns
    -------
    list of str
        Plain sentences (escaped by the page that shows them).
    """
    policy = term.serve
    used = sum(1 for h in rows if h.state in ATTEMPTS)
    lines = [f"Graded attempts used: {used} of {policy.attempts} ({max(0, policy.attempts - used)} left)."
             if policy.attempts else f"Graded attempts used: {used} (no limit in all)."]
    if policy.attempts_per_day:
        zone = ZoneInfo(term.course.timezone)
        today = dt.datetime.fromtimestamp(now, zone).date()
        count = sum(1 for h in rows if h.state in ATTEMPTS and dt.datetime.fromtimestamp(h.seen_at, zone).date() == today)
        lines.append(f"Today: {count} of {policy.attempts_per_day} graded attempts.")
    following = Handin(max((h.seq for h in rows), default=0) + 1, "", student, assignment, "", now, "collected", "", "",
                       None, None, None, None)
    decision = decide(term, following, rows, now)
    if decision.action == LIMIT and decision.opens_at is None:
        lines.append("You have no graded attempt left at this assignment.")
    elif decision.action == LIMIT:
        lines.append(f"Your next graded attempt opens at {local_text(term, decision.opens_at)}.")
    else:
        lines.append("You can hand in again now for a graded attempt.")
    return lines
