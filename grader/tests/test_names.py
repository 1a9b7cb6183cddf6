"""Names are data: what a student chose (folder names, ids) acts in no spreadsheet, terminal or report.

The whole batch (a folder named like a formula, one with terminal escapes, one that is not UTF-8,
graded with honest students) is in ``tests/test_sandbox.py``; these are the helpers it rests on.
"""

import csv
import io
import os

import pytest

from course_grader.trusted.outputs.exports import CSV_COLUMNS, read_csv_rows, write_csv, write_grades_csv
from course_grader.trusted.course.files import name_problem, readable_name
from course_grader.trusted.gradebook.outcome import FAILED, Outcome
from course_grader.trusted.course.safe_text import from_spreadsheet_cell, spreadsheet_cell, terminal_text

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)", "\t=1", "\r=1",
            " =1+1", "'=1"]
NUMBERS = ["-1", "+2.5", "0", "1e-3", "-0.25", "8"]


@pytest.mark.parametrize("cell", FORMULAS)
def test_a_cell_that_starts_like_a_formula_is_written_as_text_and_read_back_exactly(cell):
    written = spreadsheet_cell(cell)
    assert written.startswith("'") and from_spreadsheet_cell(written) == cell


@pytest.mark.parametrize("cell", NUMBERS + ["ada", "the reason: -1 points"])
def test_numbers_and_plain_text_are_left_as_they_are(cell):
    assert spreadsheet_cell(cell) == cell


def test_every_csv_a_ta_opens_has_no_formula_and_grades_read_back_the_same(tmp_path):
    path = tmp_path / "grades.csv"
    outcomes = [Outcome(name, "01_geometry", FAILED, 0.0, 8.0, reason=f"-{name}") for name in FORMULAS]
    outcomes.append(Outcome(readable_name(os.fsdecode(b"bad\xff")), "01_geometry", FAILED, -1.0, 8.0, reason="x"))
    write_grades_csv(path, outcomes)
    with path.open(newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert not [cell for cell in cells if cell.lstrip(" ").startswith(("=", "+", "@", "\t", "\r"))]
    assert not [cell for cell in cells if cell.startswith("-") and cell not in NUMBERS]
    assert "-1" in cells  # a score stays a number
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(read_csv_rows(handle))
    assert [row[0] for row in rows] == sorted(o.student for o in outcomes)
    assert {row[0]: row[CSV_COLUMNS.index("reason")] for row in rows} == {o.student: o.reason for o in outcomes}


def test_a_csv_cell_that_is_not_utf8_is_written_with_visible_escapes(tmp_path):
    write_csv(tmp_path / "x.csv", ["student"], [[os.fsdecode(b"bad\xff")]])
    assert (tmp_path / "x.csv").read_text(encoding="utf-8").splitlines() == ["student", "bad\\udcff"]


def test_terminal_text_shows_controls_and_keeps_line_breaks():
    hostile = "ada\x1b]52;c;Y3VybA==\x07\x1b[2J\u202edlrow\x9b1m\udcff\nnext line\ttab"
    shown = terminal_text(hostile)
    assert shown == "ada\\x1b]52;c;Y3VybA==\\x07\\x1b[2J\\u202edlrow\\x9b1m\\udcff\nnext line\\x09tab"
    assert terminal_text("héllo, wörld → ∑") == "héllo, wörld → ∑"
    io.TextIOWrapper(io.BytesIO(), encoding="utf-8").write(shown)  # printable on any UTF-8 terminal


@pytest.mark.parametrize("raw, reason", [
    (b"bad\xff\xfename", "is not valid UTF-8"),
    (b"ada\x1b[2J", "is not a plain name"),
    (b'=HYPERLINK("x")', "is not a plain name"),
])
def test_a_folder_name_that_is_not_plain_is_shown_escaped_and_refused_with_its_reason(raw, reason):
    name = readable_name(os.fsdecode(raw))
    assert name.encode("utf-8") and "\x1b" not in name
    assert reason in name_problem(name, "student")


def test_a_plain_folder_name_is_kept_and_accepted():
    assert readable_name("ada.lovelace-1") == "ada.lovelace-1" and name_problem("ada.lovelace-1", "student") == ""
