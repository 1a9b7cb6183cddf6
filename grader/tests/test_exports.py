"""The LMS export (Canvas's gradebook import format) on a class record written here by hand: no grading needed."""

from __future__ import annotations

import csv

import pytest

from course_grader.trusted.outputs.exports import read_canvas_roster, write_canvas_gradebook
from course_grader.trusted.gradebook.outcome import ClassRecord, Outcome

ROSTER = ("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Notes,01_geometry (4567),Current Score\n"
          "    Points Possible,,,,,,8,(read only)\n"
          '"Lovelace, Ada",12345,S001,ada.l,Section A,,,\n'
          '"Babbage, Carl",23456,S002,carl.b,Section B,,,\n'
          '"Student, Test",99999,,,Section A,,,\n'
          '"Lee, Sam",34567,S003,sam.lee,Section A,,,\n'
          '"Lee, Sam",34568,S004,sam.lee2,Section B,,,\n')


def record(**submissions: Outcome) -> ClassRecord:
    assignments = ["01_geometry", "02_algorithm"]
    return ClassRecord(assignments, {"01_geometry": 8.0, "02_algorithm": 10.0}, sorted({o.student for o in submissions.values()}),
                       {(o.student, o.assignment): o for o in submissions.values()}, frozenset(),
                       [(o.student, o.assignment, "why") for o in submissions.values() if o.reason == "waiting"])


def test_the_roster_is_read_as_canvas_writes_it(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    rows, columns = read_canvas_roster(path)
    assert [row.identity[1] for row in rows] == ["12345", "23456", "34567", "34568"]  # no points row, no test student
    assert columns == {"01_geometry": "01_geometry (4567)"}
    assert {"12345", "s001", "ada.l", "lovelaceada"} <= rows[0].names()


def test_scores_are_joined_by_any_canvas_identity_and_penalties_are_taken_off(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    class_record = record(
        a=Outcome("lovelaceada", "01_geometry", "graded", 8.0, 8.0, seconds_late=7200, late_penalty=3.0),
        b=Outcome("S002", "01_geometry", "failed", 0.0, 8.0, reason="not a valid notebook"),
        c=Outcome("S002", "02_algorithm", "graded", 6.0, 10.0, reason="waiting"),
        d=Outcome("leesam", "01_geometry", "graded", 8.0, 8.0),
        e=Outcome("grace", "01_geometry", "graded", 8.0, 8.0),
    )
    out = tmp_path / "canvas.csv"
    notes = write_canvas_gradebook(out, class_record, roster)
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01_geometry (4567)", "02_algorithm"]
    assert rows[1] == ["    Points Possible", "", "", "", "", "8", "10"]
    assert rows[2] == ["Lovelace, Ada", "12345", "S001", "ada.l", "Section A", "5", ""]
    assert rows[3] == ["Babbage, Carl", "23456", "S002", "carl.b", "Section B", "0", ""]  # failed: 0; waiting: blank
    assert rows[4][5:] == ["", ""] and rows[5][5:] == ["", ""]  # two Sam Lees: neither gets leesam's score
    assert len(rows) == 6
    assert notes == ["grace is not in the roster: left out", "leesam matches 2 students of the roster: left out",
                     "S002/02_algorithm: written answers await a TA, left blank"]


def test_a_file_that_is_not_canvas_export_is_named(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,email\nada,ada@example.org\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not Canvas's gradebook export: no column Student, ID"):
        write_canvas_gradebook(tmp_path / "out.csv", record(), roster)
