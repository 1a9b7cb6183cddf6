"""``perceptron-course refresh``: everything a TA or a student reads, rewritten from the gradebook.

After grading written answers by hand in the formgrader (a manual score and a comment in
the gradebook), the feedback pages, ``grades.csv``, ``grades_by_student.csv`` and the report
are out of date. ``refresh`` rewrites them from the gradebook (and the ledger, for failures
and flags): feedback with nbgrader's ``generate_feedback`` on the autograded notebooks,
through the course's exporter (see ``feedback.py``), then the exports and the report.
No student code runs, so it takes seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .autograde import nbgrader_error_line, quiet_nbgrader_warnings
from .course import Course, CourseError, nbgrader_api
from .outcome import Key
from .report import write_exports
from .safe_text import quoted
from .sandbox import Isolation
from .selection import choose_assignments


@dataclass
class Refreshed:
    """What ``refresh`` rewrote: the feedback of ``submissions``, and the ones whose feedback failed, with why."""

    submissions: list[Key] = field(default_factory=list)
    failed: dict[Key, str] = field(default_factory=dict)


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


def refresh(course: Course, *, assignments: list[str] | None = None, students: list[str] | None = None) -> Refreshed:
    """Rewrite the feedback of every graded submission (or of those chosen) and all the exports, from the gradebook.

    Runs no student code. A submission whose feedback cannot be written keeps its old
    page and is listed in the result's ``failed``; the exports always cover the whole class.
    """
    quiet_nbgrader_warnings()
    chosen = choose_assignments(course, assignments)
    found = graded_submissions(course, chosen, students)
    unknown = sorted(set(students or []) - {student for student, _ in found})
    if unknown:
        raise CourseError(f"no graded submission from student {', '.join(unknown)} "
                          f"{'in ' + ', '.join(chosen) if assignments else 'in the gradebook'}")
    refreshed = Refreshed()
    api = nbgrader_api(course)
    for student, assignment in found:
        result = api.generate_feedback(assignment, student, force=True)
        if result["success"]:
            refreshed.submissions.append((student, assignment))
        else:
            refreshed.failed[(student, assignment)] = quoted(nbgrader_error_line(result), 200)
    write_exports(course, UNKNOWN_ISOLATION)
    return refreshed
