"""``perceptron-course refresh``: everything a TA or a student reads, rewritten from the gradebook.

After grading written answers by hand in the formgrader (a manual score and a comment in
the gradebook), the feedback pages, ``grades.csv``, ``grades_by_student.csv`` and the report
are out of date. ``refresh`` rewrites them from the gradebook (and the ledger, for failures
and flags): the feedback of each submission whose grades or comments changed since its
pages were written, with nbgrader's ``generate_feedback`` on the autograded notebooks
through the course's exporter (see ``feedback.py``), then the exports and the report.
No student code runs, so it takes seconds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .running.autograde import feedback_under_submitted_names, quiet_nbgrader_warnings
from .course.course import Course, CourseError, nbgrader_api, nbgrader_error_line
from .course.intake import take_in
from .course.files import open_pages_for_exchange
from .judging.kernel_imports import import_rules
from .course.late_policy import apply_term
from .gradebook.ledger import LedgerWriter, read_ledger
from .gradebook.outcome import Isolation, Key
from .outputs.report import write_exports
from .gradebook.reveal import course_schedule, feedback_state, schedule_config
from .gradebook.writer_lock import course_lock
from .course.safe_text import quoted
from .course.selection import choose_assignments


@dataclass
class Refreshed:
    """What ``refresh`` did: the feedback it rewrote, the feedback already up to date, and what failed (with why)."""

    submissions: list[Key] = field(default_factory=list)
    unchanged: list[Key] = field(default_factory=list)
    failed: dict[Key, str] = field(default_factory=dict)
    term_differences: list[str] = field(default_factory=list)  #: what the gradebook held otherwise than term.toml


#: The isolation line the report shows when no graded submission recorded its own.
UNKNOWN_ISOLATION = Isolation(sandbox=True, memory_mb=0, note="")


def graded_submissions(course: Course, assignments: list[str], students: list[str] | None) -> list[Key]:
    """``(student, assignment)`` of every submission in the gradebook whose autograded notebooks are there."""
    found = []
    with nbgrader_api(course).gradebook as gradebook:
        for assignment in assignments:
            try:
                submissions = gradebook.assignment_submissions(assignment)
            except Exception:  # noqa: BLE001 - nbgrader's MissingEntry: never graded
                continue
            found += [(submission.student.id, assignment) for submission in submissions
                      if not students or submission.student.id in students]
    return sorted(key for key in found if (course.root / "autograded" / key[0] / key[1]).is_dir())


def refresh(course: Course, *, assignments: list[str] | None = None, students: list[str] | None = None,
            everything: bool = False, now: dt.datetime | None = None) -> Refreshed:
    """Rewrite the feedback whose grades changed in the gradebook (or all of it), then all the exports.

    A page is rewritten when the grades and comments it shows differ from the gradebook's
    (``ledger.gradebook_state``), when what the reveal schedule lets it show changed (a due date
    passed: ``reveal.feedback_state``, read at ``now``, a timezone-aware time, default the clock),
    or when it is missing; ``everything`` rewrites every page
    (after changing the feedback template). Only graded submissions of ``assignments`` and
    ``students`` (all when empty) are looked at. Runs no student code. A submission whose
    feedback cannot be written keeps its old page and is listed in the result's ``failed``;
    the exports always cover the whole class.

    Raises
    ------
    CourseError
        For an unknown assignment, or a student with no graded submission among those chosen.
    CourseBusy
        If ``grade`` or ``serve`` is working on the course (``writer_lock``).
    """
    with course_lock(course.root, "refresh"):
        return _refresh_locked(course, assignments, students, everything, now)


def _refresh_locked(course: Course, assignments: list[str] | None, students: list[str] | None, everything: bool,
                    now: dt.datetime | None) -> Refreshed:
    quiet_nbgrader_warnings()
    chosen = choose_assignments(course, assignments)
    found = graded_submissions(course, chosen, students)
    unknown = sorted(set(students or []) - {student for student, _ in found})
    if unknown:
        raise CourseError(f"no graded submission from student {', '.join(unknown)} "
                          f"{'in ' + ', '.join(chosen) if assignments else 'in the gradebook'}")
    schedule = course_schedule(course, now)
    refreshed = Refreshed(term_differences=apply_term(course).differences)  # lateness as term.toml has it now
    _refresh(course, found, schedule, everything, refreshed)
    write_exports(course, UNKNOWN_ISOLATION)
    return refreshed


def _refresh(course: Course, found: list[Key], schedule, everything: bool, refreshed: Refreshed) -> None:
    ledger = read_ledger(course)
    api = nbgrader_api(course, schedule_config(schedule))
    with api.gradebook as gradebook:
        states = {key: feedback_state(gradebook, *key, schedule) for key in found}
    writer = LedgerWriter(course, ledger)
    try:
        _refresh_pages(course, api, found, ledger, states, everything, refreshed, writer)
    finally:
        writer.flush()


def rewrite_changed_pages(course: Course, keys: list[Key], schedule) -> Refreshed:
    """Rewrite the feedback of those of ``keys`` that are graded and whose pages no longer show the gradebook
    (after ``grade``: an extension or a late policy that changed the lateness of a submission not regraded)."""
    chosen = sorted({assignment for _, assignment in keys})
    graded = set(graded_submissions(course, chosen, None)) & set(keys)
    refreshed = Refreshed()
    _refresh(course, sorted(graded), schedule, False, refreshed)
    return refreshed


def _refresh_pages(course, api, found, ledger, states, everything, refreshed: "Refreshed", writer: LedgerWriter) -> None:
    """Rewrite each feedback page whose state changed (every page with ``everything``)."""
    for key in found:
        entry = ledger.get(key)
        shown = entry.feedback_of if entry is not None else ""
        if not everything and shown and shown == states[key] and has_feedback(course, *key):
            refreshed.unchanged.append(key)
            continue
        result = api.generate_feedback(key[1], key[0], force=True)
        if not result["success"]:
            refreshed.failed[key] = quoted(nbgrader_error_line(result), 200)
            continue
        refreshed.submissions.append(key)
        # nbgrader rewrote the folder: the copy under the name the student handed in (fetch_feedback's) again
        feedback_under_submitted_names(course, *key, take_in(course, *key, import_rules(course.root, key[1])).handed_in_as)
        open_pages_for_exchange(course.feedback / key[0] / key[1])
        if entry is not None:
            entry.feedback_of = states[key]
            writer.changed()


def has_feedback(course: Course, student: str, assignment: str) -> bool:
    """Whether every notebook of ``assignment`` has a feedback page for ``student``."""
    folder = course.feedback / student / assignment
    return all((folder / f"{name}.html").is_file() for name in course.notebook_names(assignment))
