"""``perceptron-course status``: what the grading service is doing, for the TA, whether or not it runs.

Reads the course lock (is a service running: its pid and since when) and the service's journal
(``journal``: waiting, grading now, done in the last hour, failures with reasons), read-only: it never
waits for the service, and works after it stopped or was killed. Each section is summarised by student
and shows at most ``ROWS`` of them (one screen, whatever a flood of hand-ins left), the students with the
latest news first; ``full`` lists every one. Each hand-in's wait runs from its arrival (the scan that
first listed it) by the service's own clock.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict

from ..course.commands import grader_command
from ..course.course import Course
from ..course.safe_text import terminal_text
from ..gradebook.writer_lock import lock_holder
from .journal import CHOSEN, COLLECTED, GRADING, HELD, JOURNAL_FILE, LIMITED, REFUSED, RELEASED, STANDS, Handin, Journal

HOUR = 3600.0
#: Students shown per section unless the full list is asked for (``status --all``).
ROWS = 8


def _at(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _seconds(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _by_student(handins: list[Handin], describe, rows: int | None) -> list[str]:
    """One line per student (latest news first): how many, and ``describe`` of the latest of theirs; at most
    ``rows`` students (``None``: all), then how many more."""
    groups: dict[str, list[Handin]] = defaultdict(list)
    for handin in handins:
        groups[handin.student or "?"].append(handin)
    ordered = sorted(groups.items(), key=lambda item: -max(h.seq for h in item[1]))
    shown = ordered if rows is None else ordered[:rows]
    lines = []
    for student, theirs in shown:
        latest = max(theirs, key=lambda h: h.seq)
        count = f"{len(theirs)} hand-ins, latest: " if len(theirs) > 1 else ""
        lines.append(f"  {student}: {count}{describe(latest)}")
    if len(ordered) > len(shown):
        lines.append(f"  ... and {len(ordered) - len(shown)} more students (status --all lists them)")
    return lines


def status_lines(course: Course, now: float | None = None, *, full: bool = False) -> list[str]:
    """The status as lines of text, made inert for a terminal (student names are data).

    Parameters
    ----------
    course
        The course.
    now
        The moment (the service's clock) waits are measured to; default: now.
    full
        Every student of each section, not the first ``ROWS``.
    """
    now = time.time() if now is None else now
    rows = None if full else ROWS
    holder = lock_holder(course.root)
    if holder is None:
        lines = ["service: not running"]
    elif holder.command == "serve":
        lines = [f"service: running (pid {holder.pid}, since {holder.since})"]
    else:
        lines = [f"service: not running; `{grader_command()} {holder.command}` holds the course (pid {holder.pid}, since {holder.since})"]
    path = course.reports / JOURNAL_FILE
    if not path.is_file():
        return [*lines, "no hand-in seen yet (the service has not run on this course)"]
    journal = Journal(path, read_only=True)
    try:
        waiting, grading = journal.in_state(COLLECTED), journal.in_state(GRADING)
        done = [h for h in journal.since(now - HOUR) if h.state in (RELEASED, LIMITED, HELD, REFUSED, CHOSEN)]
        failures = journal.in_state(REFUSED) + [h for h in journal.in_state(RELEASED)
                                                 if h.score is None or "release_feedback failed" in h.reason]
        stands = {h.seq: journal.last_note(h.seq, STANDS) for h in [*done, *failures]}
    finally:
        journal.close()

    def with_stands(handin: Handin, text: str) -> str:
        return text + (f"; {stands[handin.seq]}" if stands.get(handin.seq) else "")

    def outcome(handin: Handin) -> str:
        if handin.state == RELEASED and handin.score is not None:
            what = f"{handin.score:g}/{handin.max_score:g}"
        elif handin.state == RELEASED:
            what = "not graded"
        else:
            what = handin.state
        waited = (f", released {_seconds(handin.released_at - handin.arrival)} after it arrived"
                  if handin.released_at is not None else "")
        return with_stands(handin, f"{handin.assignment} hand-in {handin.seq}: {what}{waited} ({_at(handin.arrival)})")

    lines.append(f"waiting: {len(waiting)}" + ("" if waiting else " (nothing)"))
    lines += _by_student(waiting, lambda h: f"{h.assignment} (since {_at(h.arrival)}, waiting {_seconds(now - h.arrival)}; "
                                            f"hand-in {h.seq})", rows)
    lines.append(f"grading now: {len(grading)}" + ("" if grading else " (nothing)"))
    lines += [f"  {h.student}/{h.assignment} (hand-in {h.seq}, arrived {_at(h.arrival)}, {_seconds(now - h.arrival)} ago)"
              for h in (grading if full else grading[:ROWS])]
    lines.append(f"done in the last hour: {len(done)}")
    lines += _by_student(done, outcome, rows)
    lines.append(f"failures: {len(failures)}" + ("" if failures else " (none)"))
    lines += _by_student(failures, lambda h: with_stands(h, f"{h.assignment or '?'} hand-in {h.seq} ({h.origin}): "
                                                            f"{h.reason}"), rows)
    return [terminal_text(line, keep="") for line in lines]
