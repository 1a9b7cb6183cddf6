"""The grade files a TA imports elsewhere: ``grades.csv`` (one row per submission),
``grades_by_student.csv`` (one row per student) and ``canvas_grades.csv`` (Canvas's gradebook
import format). Every CSV goes through ``write_csv``."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..judging.flags import summary
from ..course.lateness import hours_late
from ..gradebook.outcome import ClassRecord, Outcome
from ..course.safe_text import from_spreadsheet_cell, spreadsheet_cell

CSV_COLUMNS = ("student", "assignment", "status", "score", "max_score", "reason", "flags", "hours_late", "late_penalty",
               "final_score")


def write_grades_csv(path: Path, outcomes: list[Outcome]) -> None:
    """One row per submission: student, assignment, status, score, max_score, reason, flags, hours_late, late_penalty,
    final_score.

    ``flags`` is short (``"augment: exec (line 3); ..."``), empty when nothing was flagged.
    ``score`` is nbgrader's (before the late penalty); ``hours_late`` is empty for a submission
    on time or without a time (``timestamp.txt``), ``late_penalty`` the points nbgrader's
    ``LateSubmissionPlugin`` takes off, and ``final_score`` the score that counts, after it (what
    ``grades_by_student.csv``, the LMS export, the report and the feedback page show).

    The file is rewritten whole: ``outcomes`` are every submission of the class (see
    ``report.write_exports``, which reads them from the gradebook).
    """
    rows = {(o.student, o.assignment): [o.student, o.assignment, o.status, f"{o.score:g}", f"{o.max_score:g}", o.reason,
                                        summary(o.flags), hours_late(o.seconds_late), f"{o.late_penalty:g}" if o.late_penalty else "",
                                        f"{o.final_score:g}"]
            for o in outcomes}
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
    """One row per student: the score of each assignment (late penalty taken off; empty when not submitted), the total and the maximum."""
    def row(student: str) -> list[str]:
        scores = [record.submissions.get((student, a)) for a in record.assignments]
        total, _ = record.total(student)
        return [student, *("" if score is None else f"{score.final_score:g}" for score in scores), f"{total:g}", f"{record.max_total:g}"]

    write_csv(path, ["student", *record.assignments, "total", "max_score"], map(row, record.students))


# ---------------------------------------------------------------------------- Canvas

CANVAS_GRADES = "canvas_grades.csv"
#: Where the TA saves Canvas's own gradebook export (*Grades → Export → CSV*): the identities come from it.
CANVAS_ROSTER = "canvas_roster.csv"
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
_CANVAS_COLUMN_ID = re.compile(r"^(?P<name>.*?)\s*\((?P<id>\d+)\)$")


@dataclass(frozen=True)
class RosterRow:
    """One student of Canvas's gradebook export."""

    identity: tuple[str, ...]  #: the values of ``CANVAS_IDENTITY``, in order

    def names(self) -> set[str]:
        """Every form of this student an nbgrader id may take: the Canvas ids, the login, and the name as
        Canvas writes it in a downloaded file (``Lovelace, Ada`` -> ``lovelaceada``)."""
        student, canvas_id, sis_user, sis_login, _ = self.identity
        return {value.strip().lower() for value in (canvas_id, sis_user, sis_login) if value.strip()} | \
            ({re.sub(r"[^a-z0-9]", "", student.lower())} - {""})


def read_canvas_roster(path: Path) -> tuple[list[RosterRow], dict[str, str]]:
    """The students of Canvas's gradebook export, and its assignment columns by assignment name.

    Canvas writes a ``Points Possible`` row (and sometimes a ``Student, Test`` row) below its
    header: they are not students. A column ``01_geometry (4567)`` is Canvas's assignment 4567:
    the export writes into that column, so Canvas updates the assignment instead of making one.
    """
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in ("Student", "ID") if column not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name} is not Canvas's gradebook export: no column {', '.join(missing)}")
        columns = {}
        for column in reader.fieldnames or []:
            match = _CANVAS_COLUMN_ID.match(column)
            if match:
                columns.setdefault(match.group("name"), column)
        rows = [RosterRow(tuple((row.get(column) or "").strip() for column in CANVAS_IDENTITY)) for row in reader
                if (row.get("Student") or "").strip() not in ("", "Points Possible", "Student, Test")]
    return rows, columns


def roster_names(students: list[str], roster: Path) -> dict[str, tuple[str, str]]:
    """``student -> (first name, last name)`` from Canvas's export (``Lovelace, Ada``), for the students it names once."""
    rows, _ = read_canvas_roster(roster)
    matched, _ = _match_roster(students, rows)
    names = {}
    for student, row in matched.items():
        last, comma, first = row.identity[0].partition(",")
        names[student] = (first.strip(), last.strip()) if comma else ("", row.identity[0].strip())
    return names


def name_students(gradebook, names: dict[str, tuple[str, str]]) -> None:
    """Give each student of the gradebook the name the roster has (the formgrader and nbgrader's exports show it)."""
    known = {student.id: student for student in gradebook.students}
    for student, (first, last) in names.items():
        row = known.get(student)
        if row is not None and (row.first_name, row.last_name) != (first, last):
            row.first_name, row.last_name = first, last
    gradebook.db.commit()


def _match_roster(students: list[str], roster: list[RosterRow]) -> tuple[dict[str, RosterRow], list[str]]:
    """Each graded student's roster row, and a note for each student matched to none or to several."""
    matched, notes = {}, []
    for student in students:
        rows = [row for row in roster if student.lower() in row.names()]
        if len(rows) == 1:
            matched[student] = rows[0]
        elif rows:
            notes.append(f"{student} matches {len(rows)} students of the roster: left out")
        else:
            notes.append(f"{student} is not in the roster: left out")
    return matched, notes


def write_canvas_gradebook(path: Path, record: ClassRecord, roster: Path | None) -> list[str]:
    """Grades in Canvas's gradebook import format; returns notes for the report.

    Columns ``Student, ID, SIS User ID, SIS Login ID, Section`` (from ``roster``, Canvas's own
    gradebook export; without one, the nbgrader id stands in the ``Student`` and ``SIS Login ID``
    columns), then one column per assignment (Canvas's own column when the roster has it), and a
    ``Points Possible`` row. A score is the late penalty taken off; an assignment not handed in
    is blank (Canvas leaves the grade as it is); a submission with written answers still waiting
    for a TA is blank too, and named in the notes, so no provisional score becomes final.
    """
    notes: list[str] = []
    if roster is not None:
        roster_rows, canvas_columns = read_canvas_roster(roster)
        graded = sorted({student for student, _ in record.submissions})
        matched, notes = _match_roster(graded, roster_rows)
        people = [(row.identity, next((s for s, r in matched.items() if r == row), None)) for row in roster_rows]
    else:
        canvas_columns = {}
        people = [((student, "", "", student, ""), student) for student in record.students]
        notes.append(f"no {CANVAS_ROSTER}: the nbgrader id stands in the Student and SIS Login ID columns")
    waiting = {(student, assignment) for student, assignment, _ in record.awaiting_manual}
    for student, assignment in sorted(waiting):
        notes.append(f"{student}/{assignment}: written answers await a TA, left blank")

    def score(student: str | None, assignment: str) -> str:
        outcome = record.submissions.get((student, assignment)) if student else None
        if outcome is None or (student, assignment) in waiting:
            return ""
        return f"{outcome.final_score:g}"

    header = [*CANVAS_IDENTITY, *(canvas_columns.get(a, a) for a in record.assignments)]
    points = ["    Points Possible", "", "", "", "", *(f"{record.max_scores[a]:g}" for a in record.assignments)]
    rows = [[*identity, *(score(student, a) for a in record.assignments)] for identity, student in people]
    write_csv(path, header, [points, *rows])
    return notes
