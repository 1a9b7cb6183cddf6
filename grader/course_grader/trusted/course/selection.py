"""Which assignments and submissions a command works on, checked at once (no nbgrader import, no slow work).

A typo in ``--assignment`` or ``--student`` is the TA's to fix before anything runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .course import CONFIG_FILE, Course, CourseError
from .safe_text import terminal_text


#: Folders of a course that hold what students handed in: a configuration file found in them is a student's.
STUDENT_FOLDERS = ("submitted", "autograded", "feedback", "downloaded")


def find_course_root(start: Path) -> Path:
    """The nearest folder holding ``nbgrader_config.py``: ``start`` or one of its parents, as git finds its repository.

    A folder inside a course's student folders (``submitted/`` and the like) is never taken,
    even if it holds such a file: a configuration file is Python that nbgrader runs, and a
    student could hand one in.

    Raises
    ------
    CourseError
        If no folder up to the file system's root holds one.
    """
    start = start.expanduser().resolve()
    candidates = [folder for folder in [start, *start.parents] if (folder / CONFIG_FILE).is_file()]
    for candidate in candidates:
        outer = [course for course in candidates if course in candidate.parents]
        if not any(course / folder in [candidate, *candidate.parents] for course in outer for folder in STUDENT_FOLDERS):
            return candidate
    raise CourseError(f"no {CONFIG_FILE} in {start} or any folder above it; run this in the course folder or pass --root")


def choose_assignments(course: Course, assignments: list[str] | None) -> list[str]:
    """``assignments`` (all of the course's when empty), after checking each is one of the course's."""
    known = course.assignments()
    if not assignments:
        return known
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise CourseError(f"unknown assignment {', '.join(unknown)}; the course has {', '.join(known)}")
    return list(dict.fromkeys(assignments))


def select_submissions(course: Course, assignments: list[str] | None, students: list[str] | None, *,
                       warn: bool = True) -> list[tuple[str, str]]:
    """The ``(student, assignment)`` pairs to grade, after checking the filters name real things.

    With ``warn``, says on stderr which submitted folders belong to no assignment of the course.
    """
    chosen_assignments = set(choose_assignments(course, assignments))
    submissions = course.submissions()
    if not submissions:
        raise CourseError(f"nothing to grade: no submissions in {course.submitted}/<student>/<assignment>/")
    known_students = sorted({student for student, _ in submissions})
    unknown = [s for s in students or [] if s not in known_students]
    if unknown:
        raise CourseError(f"no submission from student {', '.join(unknown)}; students who submitted: {', '.join(known_students)}")
    stray = sorted({a for _, a in submissions if a not in course.assignments()})
    selected = [
        (student, assignment)
        for student, assignment in submissions
        if assignment in chosen_assignments and (not students or student in students)
    ]
    if stray and warn:
        print(terminal_text(f"warning: ignoring submitted folders of unknown assignments: {', '.join(stray)}"), file=sys.stderr)
    return selected
