"""``perceptron-course status``: what the grading service is doing, for the TA, whether or not it runs.

Reads the course lock (is a service running: its pid and since when) and the service's journal
(``journal``: waiting per student, grading now, done in the last hour, failures with reasons),
read-only: it never waits for the service, and works after it stopped or was killed.
"""

from __future__ import annotations

import datetime as dt
import time

from ..course.course import Course
from ..gradebook.writer_lock import lock_holder
from ..course.safe_text import terminal_text
from .journal import COLLECTED, GRADING, HELD, JOURNAL_FILE, LIMITED, REFUSED, RELEASED, STANDS, Journal

HOUR = 3600.0


def _at(moment: float) -> str:
    return dt.datetime.fromtimestamp(moment, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def status_lines(course: Course, now: float | None = None) -> list[str]:
    """The status as lines of text (student names made inert for a terminal by the caller)."""
    now = time.time() if now is None else now
    holder = lock_holder(course.root)
    if holder is None:
        lines = ["service: not running"]
    elif holder.command == "serve":
        lines = [f"service: running (pid {holder.pid}, since {holder.since})"]
    else:
        lines = [f"service: not running; `perceptron-course {holder.command}` holds the course (pid {holder.pid}, since {holder.since})"]
    path = course.reports / JOURNAL_FILE
    if not path.is_file():
        return [*lines, "no hand-in seen yet (the service has not run on this course)"]
    journal = Journal(path, read_only=True)
    try:
        waiting, grading = journal.in_state(COLLECTED), journal.in_state(GRADING)
        done = [h for h in journal.since(now - HOUR) if h.state in (RELEASED, LIMITED, HELD, REFUSED)]
        failures = journal.in_state(REFUSED) + [h for h in journal.in_state(RELEASED)
                                                 if h.score is None or "release_feedback failed" in h.reason]
        stands = {h.seq: journal.last_note(h.seq, STANDS) for h in [*done, *failures]}
    finally:
        journal.close()
    by_student: dict[str, list[str]] = {}
    for handin in waiting:
        by_student.setdefault(handin.student, []).append(f"{handin.assignment} (since {_at(handin.seen_at)})")
    lines.append(f"waiting: {len(waiting)}" + ("" if waiting else " (nothing)"))
    lines += [f"  {student}: {', '.join(items)}" for student, items in sorted(by_student.items())]
    lines.append(f"grading now: {len(grading)}" + ("" if grading else " (nothing)"))
    lines += [f"  {h.student}/{h.assignment} (hand-in {h.seq}, arrived {_at(h.seen_at)})" for h in grading]
    lines.append(f"done in the last hour: {len(done)}")
    for handin in done:
        what = (f"{handin.score:g}/{handin.max_score:g}" if handin.state == RELEASED and handin.score is not None
                else handin.state)
        lines.append(f"  {handin.student}/{handin.assignment}: {what}" + (f"; {stands[handin.seq]}" if stands[handin.seq] else ""))
    lines.append(f"failures: {len(failures)}" + ("" if failures else " (none)"))
    lines += [f"  {h.student or '?'}/{h.assignment or '?'} ({h.origin}): {h.reason}"
              + (f"; {stands[h.seq]}" if stands[h.seq] else "") for h in failures]
    return [terminal_text(line, keep="") for line in lines]
