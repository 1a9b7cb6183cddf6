"""The grade files a TA imports elsewhere: ``grades.csv`` (one row per submission) and
``grades_by_student.csv`` (one row per student). Every CSV goes through ``write_csv``."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Sequence

from .flags import summary
from .outcome import ClassRecord, Outcome

CSV_COLUMNS = ("student", "assignment", "status", "score", "max_score", "reason", "flags")


def write_grades_csv(path: Path, outcomes: list[Outcome]) -> None:
    """One row per submission: student, assignment, status, score, max_score, reason, flags.

    ``flags`` is short (``"augment: exec (line 3); ..."``), empty when nothing was flagged.
    The file is rewritten whole: ``outcomes`` are every submission of the class (see
    ``report.write_exports``, which reads them from the gradebook).
    """
    rows = {(o.student, o.assignment): [o.student, o.assignment, o.status, f"{o.score:g}", f"{o.max_score:g}", o.reason,
                                        summary(o.flags)] for o in outcomes}
    write_csv(path, CSV_COLUMNS, (rows[key] for key in sorted(rows)))


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Write a CSV a TA opens in a spreadsheet or imports into an LMS: all at once (never half-written)."""
    temporary = path.with_suffix(".csv.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    temporary.replace(path)


def write_grades_by_student(path: Path, record: ClassRecord) -> None:
    """One row per student: the score of each assignment (empty when not submitted), the total and the maximum."""
    def row(student: str) -> list[str]:
        scores = [record.submissions.get((student, a)) for a in record.assignments]
        total, _ = record.total(student)
        return [student, *("" if score is None else f"{score.score:g}" for score in scores), f"{total:g}", f"{record.max_total:g}"]

    write_csv(path, ["student", *record.assignments, "total", "max_score"], map(row, record.students))
