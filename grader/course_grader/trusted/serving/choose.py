"""``perceptron-course use-handin``: the TA says which of a student's hand-ins ``grade`` grades next.

The service never lets a hand-in it could not grade, or one it held, replace a graded attempt in
``submitted/`` (``service.standing``, ``service.begin``). A TA who decides otherwise says so with this
command: it puts the archived hand-in (``handins/<student>/<assignment>/<number>/``) into
``submitted/<student>/<assignment>/`` and journals the decision; ``perceptron-course grade`` then grades
it. It holds the course's lock (never beside a running service) and, past the term's ``[serve] attempts``,
refuses unless the TA says ``beyond_limit``.
"""

from __future__ import annotations

from pathlib import Path

from ..course.course import Course, CourseError
from ..course.files import replace_tree
from ..gradebook.writer_lock import course_lock
from . import inbox
from .journal import ATTEMPTS, CHOSEN, COLLECTED, Journal

#: The journal's event of a TA's decision (``use_handin``).
TA_CHOSE = "ta-chose"


def use_handin(course: Course, student: str, assignment: str, number: int, *, beyond_limit: bool = False) -> str:
    """Install hand-in ``number`` of ``student``'s ``assignment`` in ``submitted/`` for ``grade``; the line to print.

    Parameters
    ----------
    course
        The course.
    student, assignment
        Whose hand-in, to which assignment.
    number
        The hand-in's number in the service's journal (``status`` and the student's page show it).
    beyond_limit
        Install it even when the student used every graded attempt ``[serve] attempts`` allows.

    Raises
    ------
    CourseError
        When no such hand-in was kept, or it would be one attempt more than the term allows (without
        ``beyond_limit``); ``writer_lock.CourseBusy`` when another command holds the course.
    """
    with course_lock(course.root, "use-handin"):
        path = course.reports / "serve_journal.sqlite"
        if not path.is_file():
            raise CourseError(f"no hand-in was taken in by the service on {course.root} (no journal)")
        journal = Journal(path)
        try:
            rows = {h.seq: h for h in journal.of(student, assignment)}
            if number not in rows:
                raise CourseError(f"no hand-in number {number} of {student} to {assignment} in the journal; "
                                  f"its hand-ins: {sorted(rows) or 'none'}")
            folder = inbox.archived(course, student, assignment, number)
            if not folder.is_dir() or not inbox.handed_in_notebooks(folder):
                raise CourseError(f"hand-in {number} of {student} to {assignment} was not kept ({rows[number].state}: "
                                  f"{rows[number].reason})")
            row = rows[number]
            if row.state in (COLLECTED, "seen"):
                raise CourseError(f"hand-in {number} of {student} to {assignment} waits for the service, which grades "
                                  "it (within the term's limits) when it runs again")
            allowed = course.term().serve.attempts
            used = sum(1 for h in rows.values() if h.state in ATTEMPTS and h.seq != number)
            new_attempt = row.state not in ATTEMPTS  # a graded attempt put back is no attempt more
            if new_attempt and allowed and used >= allowed and not beyond_limit:
                raise CourseError(f"{student} has used all {allowed} graded attempts at {assignment}: grading hand-in "
                                  f"{number} too needs --beyond-limit")
            replace_tree(folder, course.root, Path("submitted") / student / assignment)
            reason = ("put in submitted/ by the TA (use-handin) for `grade`"
                      + (", beyond the attempts allowed" if new_attempt and allowed and used >= allowed else ""))
            if new_attempt:
                journal.move(number, CHOSEN, reason)
            journal.note(number, TA_CHOSE, reason)
        finally:
            journal.close()
    return (f"hand-in {number} of {student} to {assignment} is in submitted/; `perceptron-course grade --student "
            f"{student} --assignment {assignment}` grades it")
