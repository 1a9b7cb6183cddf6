"""The ledger's fingerprints: what makes a submission 'unchanged', and what keeps a manual grade."""

import os
from pathlib import Path

import nbformat
from conftest import fixture_course

from course_grader.trusted.course.example_class import copy_course, solved_notebook
from course_grader.trusted.gradebook.ledger import (WRITE_EVERY_SECONDS, Entry, LedgerWriter, fingerprint, read_ledger,
                                                       write_ledger)



def hand_in(course, student: str, edit=None) -> Path:
    notebook = solved_notebook(course, "04_convergence", "convergence")
    for cell in notebook.cells:
        if edit:
            edit(cell)
    folder = course.submitted / student / "04_convergence"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / "convergence.ipynb")
    return folder / "convergence.ipynb"


def edit_cell(grade_id: str, text: str):
    def edit(cell):
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            cell.source = text
    return edit


def test_a_fingerprint_tells_what_changed(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    hand_in(course, "ada")
    first = fingerprint(course, "ada", "04_convergence")
    assert first.submitted and first == fingerprint(course, "ada", "04_convergence")  # by content, every time
    assert set(first.answers) == {f"convergence/{cell}" for cell in course.graded_cells("04_convergence")}

    hand_in(course, "ada", edit_cell("radius", "def radius(X):\n    return 1.0"))  # code changed, written answer not
    code = fingerprint(course, "ada", "04_convergence")
    assert code.submitted != first.submitted
    assert code.answers["convergence/why_augmented"] == first.answers["convergence/why_augmented"]
    assert code.answers["convergence/test_radius"] != first.answers["convergence/test_radius"]  # a test cell follows the code

    hand_in(course, "ada", edit_cell("why_augmented", "Another answer."))
    assert fingerprint(course, "ada", "04_convergence").answers["convergence/why_augmented"] != first.answers["convergence/why_augmented"]


def test_a_new_timestamp_is_a_new_hand_in(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    hand_in(course, "ada")
    before = fingerprint(course, "ada", "04_convergence").submitted
    (course.submitted / "ada" / "04_convergence" / "timestamp.txt").write_text("2026-11-23 10:00:00 UTC")
    assert fingerprint(course, "ada", "04_convergence").submitted != before


def test_a_renamed_resubmission_and_a_changed_stored_output_are_new_hand_ins(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    first = hand_in(course, "ada")
    before = fingerprint(course, "ada", "04_convergence")
    notebook = nbformat.read(first, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="debug\n" * 1000)]
    nbformat.write(notebook, first)
    # The grader drops stored outputs before running, but the hidden cases are drawn from every byte handed in
    # (attack round 12): new outputs draw new cases, so the hand-in is graded again.
    with_outputs = fingerprint(course, "ada", "04_convergence")
    assert with_outputs.submitted not in ("", before.submitted)
    assert fingerprint(course, "ada", "04_convergence") == with_outputs  # the same bytes: nothing to regrade

    renamed = first.with_name("convergence-1.ipynb")  # an LMS's name for a resubmission, beside the first one
    edit_cell("radius", "def radius(X):\n    return 2.0")(next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "radius"))
    nbformat.write(notebook, renamed)
    assert fingerprint(course, "ada", "04_convergence").submitted not in ("", before.submitted, with_outputs.submitted)  # the latest copy counts


def test_a_submission_the_intake_refuses_has_no_fingerprint(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    notebook = hand_in(course, "ada")
    os.link(notebook, tmp_path / "elsewhere.ipynb")  # a hard link: refused at intake, so always graded (and refused)
    assert fingerprint(course, "ada", "04_convergence").submitted == ""


def test_a_damaged_ledger_reads_as_empty_and_bad_entries_are_dropped(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    course.reports.mkdir()
    (course.reports / "grading.json").write_text("{not json", encoding="utf-8")
    assert read_ledger(course) == {}
    write_ledger(course, {("ada", "01_geometry"): Entry("ada", "01_geometry", "graded", submitted="abc")})
    text = (course.reports / "grading.json").read_text(encoding="utf-8")
    (course.reports / "grading.json").write_text(text[:-1] + ', {"student": "bo"}, 7]', encoding="utf-8")
    assert list(read_ledger(course)) == [("ada", "01_geometry")] and read_ledger(course)[("ada", "01_geometry")].submitted == "abc"


def test_a_batch_writes_its_ledger_at_most_every_interval_and_at_its_end(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    ledger = {}
    now = [100.0]
    writer = LedgerWriter(course, ledger, clock=lambda: now[0])

    def merged(student: str) -> None:
        ledger[(student, "01_geometry")] = Entry(student, "01_geometry", "graded")
        writer.changed()

    merged("ada")  # the first merge is written at once
    assert set(read_ledger(course)) == {("ada", "01_geometry")}
    now[0] += WRITE_EVERY_SECONDS / 2
    merged("ben")  # too soon: kept in memory
    assert set(read_ledger(course)) == {("ada", "01_geometry")}
    now[0] += WRITE_EVERY_SECONDS
    merged("cy")  # the interval has passed: everything so far is written
    assert set(read_ledger(course)) == {("ada", "01_geometry"), ("ben", "01_geometry"), ("cy", "01_geometry")}
    merged("dee")
    writer.flush()  # the batch's end (or Ctrl+C)
    assert set(read_ledger(course)) == {(s, "01_geometry") for s in ("ada", "ben", "cy", "dee")}
