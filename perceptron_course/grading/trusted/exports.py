"""The grade files a TA imports elsewhere: ``grades.csv`` (one row per submission) and
``grades_by_student.csv`` (one row per student). Every CSV goes through ``write_csv``."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Sequence

from .flags import summary
from .outcome import ClassRecord, Outcome
from .safe_text import from_spreadsheet_cell, spreadsheet_cell

CSV_COLUMNS = ("student", "assignment", "status", "score", "max_score", "reason", "flags")


def write_grades_csv(path: Path, outcomes: list[Outcome]) -> None:
    """One row per submission: student, assignment, status, score, max_score, reason, flags.

    ``flags`` is short (``"augment: exec (line 3); ..."``), empty when nothing was flagged.

    Rows of submissions not graded this time (``--student``, ``--assignment``) are kept.
    """
    rows = {}
    if path.exists():
        with path.open(newline="", encoding="utf-8") as handle:
            rows = {(row[0], row[1]): row for row in read_csv_rows(handle)}
    for o in outcomes:
        rows[(o.student, o.assignment)] = [o.student, o.assignment, o.status, f"{o.score:g}", f"{o.max_score:g}", o.reason,
                                           summary(o.flags)]
    write_csv(path, CSV_COLUMNS, (rows[key] for key in sorted(rows)))


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Write a CSV a TA opens in a spreadsheet or imports into an LMS: all at once (never half-written).

    Every cell goes through ``spreadsheet_cell``: a student id or a reason that starts like a
    formula (``=``, ``+``, ``-``, ``@``, tab, CR) is written as text, numbers stay numbers.
    """
    temporary = path.with_suffix(".csv.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([spreadsheet_cell(cell) for cell in header])
        writer.writerows([spreadsheet_cell(cell) for cell in row] for row in rows)
    temporary.replace(path)


def read_csv_rows(handle) -> Iterable[list[str]]:
    """The rows of a ``grades.csv`` that ``write_csv`` wrote, as the values it was given, in ``CSV_COLUMNS`` order."""
    for row in csv.DictReader(handle):
        yield [from_spreadsheet_cell(row.get(column) or "") for column in CSV_COLUMNS]


def write_grades_by_student(path: Path, record: ClassRecord) -> None:
    """One row per student: the score of each assignment (empty when not submitted), the total and the maximum."""
    def row(student: str) -> list[str]:
        scores = [record.submissions.get((student, a)) for a in record.assignments]
        total, _ = record.total(student)
        return [student, *("" if score is None else f"{score.score:g}" for score in scores), f"{total:g}", f"{record.max_total:g}"]

    write_csv(path, ["student", *record.assignments, "total", "max_score"], map(row, record.students))
