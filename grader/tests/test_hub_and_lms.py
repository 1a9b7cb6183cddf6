"""The TA's week with nbgrader's own commands: a hub's exchange and an LMS's zip in, feedback and grades out.

Every step is the real command a TA or a student types (``nbgrader release_assignment``,
``fetch_assignment``, ``submit``, ``collect``, ``zip_collect``, ``release_feedback``,
``fetch_feedback``), run as a program over an exchange folder in a temporary directory, with
``perceptron-course grade`` in the middle; what each person gets is read back from disk.
"""

from __future__ import annotations

import csv
import os
import subprocess
import shutil
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from conftest import fixture_course

from course_grader.testing.programs import nbgrader_program
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import copy_course, solved_notebook
from course_grader.trusted.outputs.exports import CANVAS_GRADES, CANVAS_ROSTER
from course_grader.trusted.cli import main
from course_grader.trusted.pipeline import grade
from course_grader.trusted.refresh import refresh
from course_grader.trusted.course.term import LMS_PATTERNS

COURSE_ROOT = fixture_course()  # the grader's own course, released
BIN = Path(sys.executable).parent
COURSE_ID = "fixture"  # the fixture course's id (grader/tests/fixtures/course/term.toml)
ASSIGNMENT = "01_geometry"


def nbgrader(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    """Run the real ``nbgrader`` program of this environment, as a TA or a student would (its own ``main``:
    ``course_grader.testing.programs``)."""
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([*nbgrader_program(), *args], cwd=cwd, env=environment, capture_output=True, text=True,
                            timeout=300)
    if check:
        assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def rows_of(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {(row["student"], row["assignment"]): row for row in csv.DictReader(handle)}


# ---------------------------------------------------------------------------- JupyterHub: the exchange


HUB_FILES = {"ada": "geometry.ipynb", "bob": "geometry.ipynb", "cy": "geometry (1).ipynb"}


@pytest.fixture(scope="module")
def hub_week(tmp_path_factory):
    """Release, two students fetch and submit, collect, grade (ada late, bob with an extension), release feedback."""
    root = tmp_path_factory.mktemp("hub")
    course = copy_course(fixture_course(), root / "course")
    exchange = root / "exchange"
    exchange.mkdir()
    (root / "course" / "nbgrader_config.py").write_text(
        (root / "course" / "nbgrader_config.py").read_text() + f"\nc.Exchange.root = {str(exchange)!r}\n")
    # The due date and bob's extension are term.toml's; `perceptron-course release` puts the date in the gradebook
    edit_term(course, f'name = "{ASSIGNMENT}"\n', f'name = "{ASSIGNMENT}"\ndue = "2020-01-01 00:00"\n')
    add_extension(course, "bob", hours=5000 * 7 * 24)
    assert main(["release", "--root", str(course.root), "--assignment", ASSIGNMENT]) == 0
    nbgrader("release_assignment", ASSIGNMENT, f"--course={COURSE_ID}", cwd=course.root)
    homes = {}
    for student, file_name in HUB_FILES.items():  # cy renamed the notebook in JupyterLab before submitting
        home = homes[student] = root / student
        home.mkdir()
        flags = [f"--course={COURSE_ID}", f"--Exchange.root={exchange}", f"--Exchange.cache={root / ('cache-' + student)}"]
        nbgrader("fetch_assignment", ASSIGNMENT, *flags, cwd=home)
        (home / ASSIGNMENT / "geometry.ipynb").unlink()
        nbformat.write(solved_notebook(course, ASSIGNMENT, "geometry"), home / ASSIGNMENT / file_name)
        nbgrader("submit", ASSIGNMENT, *flags, f"--student={student}", cwd=home)
    nbgrader("collect", ASSIGNMENT, f"--course={COURSE_ID}", cwd=course.root)
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=1)}
    nbgrader("release_feedback", ASSIGNMENT, f"--course={COURSE_ID}", cwd=course.root)
    for student, home in homes.items():
        nbgrader("fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}", f"--Exchange.root={exchange}",
                 f"--Exchange.cache={root / ('cache-' + student)}", f"--student={student}", cwd=home)
    return {"course": course, "homes": homes, "outcomes": outcomes}


@pytest.mark.slow
def test_timestamps_are_carried_as_nbgrader_does(hub_week):
    course = hub_week["course"]
    for student in HUB_FILES:
        submitted = (course.submitted / student / ASSIGNMENT / "timestamp.txt").read_text()
        for folder in ("autograded", "feedback"):
            assert (course.root / folder / student / ASSIGNMENT / "timestamp.txt").read_text() == submitted


@pytest.mark.slow
def test_lateness_from_the_due_date_and_the_extension(hub_week):
    course, outcomes = hub_week["course"], hub_week["outcomes"]
    assert outcomes["ada"].score == outcomes["ada"].max_score == 8
    assert outcomes["ada"].seconds_late > 365 * 24 * 3600 and outcomes["bob"].seconds_late == 0
    rows = rows_of(course.grades_csv)
    assert float(rows[("ada", ASSIGNMENT)]["hours_late"]) > 365 * 24 and rows[("bob", ASSIGNMENT)]["hours_late"] == ""
    assert rows[("ada", ASSIGNMENT)]["late_penalty"] == ""  # the course's LateSubmissionPlugin: "none"
    report = (course.reports / "report.md").read_text()
    assert "8/8 (late " in report and "| bob | 8/8 |" in report


@pytest.mark.slow
def test_students_fetch_their_feedback_page(hub_week):
    for student, home in hub_week["homes"].items():
        page_name = HUB_FILES[student].replace(".ipynb", ".html")  # nbgrader matches a page to the submitted name
        pages = sorted((home / ASSIGNMENT / "feedback").glob(f"*/{page_name}"))
        assert len(pages) == 1, f"{student} got no feedback page"
        page = pages[0].read_text()
        assert "Feedback: geometry" in page and "8 / 8" in page
        assert ("after the due date" in page) == (student != "bob")
        assert ("Before grading: geometry (1).ipynb is graded as geometry.ipynb" in page) == (student == "cy")


@pytest.mark.slow
def test_refresh_keeps_the_page_under_the_name_handed_in(hub_week):
    from course_grader.trusted.refresh import refresh

    folder = hub_week["course"].feedback / "cy" / ASSIGNMENT
    graded = (folder / "geometry.html").read_bytes()
    assert (folder / "geometry (1).html").read_bytes() == graded
    assert ("cy", ASSIGNMENT) in refresh(hub_week["course"], everything=True).submissions  # nbgrader rewrites the folder
    assert (folder / "geometry (1).html").read_bytes() == (folder / "geometry.html").read_bytes() == graded


@pytest.mark.slow
def test_the_zero_penalty_of_nbgrader_takes_the_points_of_a_late_submission(hub_week, tmp_path):
    course = copy_course(hub_week["course"].root, tmp_path / "course")
    shutil.copytree(hub_week["course"].root / "submitted", course.root / "submitted")
    shutil.copy2(hub_week["course"].root / "gradebook.db", course.root / "gradebook.db")
    edit_term(course, 'policy = "none"', 'policy = "zero"')
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=1, students=["ada", "bob"])}
    full = outcomes["ada"].max_score
    assert outcomes["ada"].late_penalty == full and outcomes["ada"].final_score == 0
    assert outcomes["bob"].late_penalty == 0 and outcomes["bob"].final_score == full
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["late_penalty"] == f"{full:g}"
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["score"] == f"{full:g}"  # nbgrader's, before the penalty
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["final_score"] == "0"  # after it, as every other file
    assert by_student(course)["ada"] == "0" and by_student(course)["bob"] == f"{full:g}"
    assert "after the due date" in page_of(course, "ada")

    # An extension granted after grading: term.toml, then refresh (no regrade, no --force)
    term_before = (course.root / "term.toml").read_text(encoding="utf-8")
    add_extension(course, "ada", hours=100 * 365 * 24)
    refresh(course)
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["late_penalty"] == ""
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["hours_late"] == ""
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["final_score"] == f"{full:g}"
    assert by_student(course)["ada"] == f"{full:g}"
    assert "after the due date" not in page_of(course, "ada")

    # Taken back, then a plain grade (ada's hand-in unchanged: skipped, not regraded) applies that too
    (course.root / "term.toml").write_text(term_before, encoding="utf-8")
    run = grade(course, progress=False, jobs=1, students=["ada"])
    assert run.skipped == [("ada", ASSIGNMENT)] and list(run) == []
    assert rows_of(course.grades_csv)[("ada", ASSIGNMENT)]["late_penalty"] == f"{full:g}"
    assert by_student(course)["ada"] == "0" and "after the due date" in page_of(course, "ada")
    assert any(difference.startswith(f"ada/{ASSIGNMENT}: the gradebook gave an extension") for difference in run.term_differences)


def by_student(course: Course) -> dict[str, str]:
    with (course.root / "grades_by_student.csv").open(newline="") as handle:
        return {row["student"]: row[ASSIGNMENT] for row in csv.DictReader(handle)}


def page_of(course: Course, student: str) -> str:
    return (course.feedback / student / ASSIGNMENT / "geometry.html").read_text(encoding="utf-8")


def edit_term(course: Course, old: str, new: str) -> None:
    term = course.root / "term.toml"
    text = term.read_text(encoding="utf-8")
    assert old in text, old
    term.write_text(text.replace(old, new, 1), encoding="utf-8")


def add_extension(course: Course, student: str, *, hours: int) -> None:
    term = course.root / "term.toml"
    term.write_text(term.read_text(encoding="utf-8") + f'\n[[extensions]]\nstudent = "{student}"\n'
                    f'assignment = "{ASSIGNMENT}"\nhours = {hours}\n', encoding="utf-8")


# ---------------------------------------------------------------------------- an LMS: Canvas's zip


def _notebook_bytes(notebook) -> bytes:
    return nbformat.writes(notebook).encode("utf-8")


@pytest.fixture(scope="module")
def canvas_week(tmp_path_factory):
    """A Canvas "download submissions" zip, collected by the real zip_collect, graded, exported for Canvas."""
    root = tmp_path_factory.mktemp("canvas")
    course = copy_course(fixture_course(), root / "course")
    solved = solved_notebook(course, ASSIGNMENT, "geometry")
    untouched = nbformat.read(course.release / ASSIGNMENT / "geometry.ipynb", as_version=4)
    archive = course.root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zipped:
        zipped.writestr("lovelaceada_12345_67890_geometry.ipynb", _notebook_bytes(solved))
        # Carl handed in twice: Canvas renamed his second file; the latest counts
        zipped.writestr("babbagecarl_23456_70001_geometry.ipynb", _notebook_bytes(untouched))
        zipped.writestr("babbagecarl_LATE_23456_70002_geometry-1.ipynb", _notebook_bytes(solved))
        # Grace's browser saved her download as "geometry (1).ipynb" before she uploaded it
        zipped.writestr("hoppergrace_34567_70003_geometry (1).ipynb", _notebook_bytes(solved))
        # Two students named John Smith: Canvas writes the same name in their files, and the same file name
        zipped.writestr("smithjohn_56789_70004_geometry.ipynb", _notebook_bytes(solved))
        zipped.writestr("smithjohn_67890_70005_geometry.ipynb", _notebook_bytes(untouched))
    # the TA saves Canvas's own gradebook export beside the course
    (course.root / CANVAS_ROSTER).write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,01_geometry (4567),Homework zero (99)\n"
        "    Points Possible,,,,,8,5\n"
        '"Lovelace, Ada",12345,S001,ada.l,Section A,,5\n'
        '"Babbage, Carl",23456,S002,carl.b,Section B,,4\n'
        '"Hopper, Grace",34567,S003,grace.h,Section A,,3\n'
        '"Turing, Alan",45678,S004,alan.t,Section B,,2\n'
        '"Smith, John",56789,S005,john.s1,Section A,,1\n'
        '"Smith, John",67890,S006,john.s2,Section B,,1\n', encoding="utf-8")
    collected = nbgrader("zip_collect", ASSIGNMENT, cwd=course.root)
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=1)}
    return {"course": course, "outcomes": outcomes, "log": collected.stdout + collected.stderr}


@pytest.mark.slow
def test_zip_collect_files_each_hand_in_under_the_canvas_user_id_out_of_the_box(canvas_week):
    course = canvas_week["course"]
    found = {(p.parent.parent.name, p.name) for p in course.submitted.glob(f"*/{ASSIGNMENT}/*.ipynb")}
    assert found == {("12345", "geometry.ipynb"), ("23456", "geometry.ipynb"), ("23456", "geometry-1.ipynb"),
                     ("34567", "geometry (1).ipynb"), ("56789", "geometry.ipynb"), ("67890", "geometry.ipynb")}, canvas_week["log"]


@pytest.mark.slow
def test_two_students_with_one_name_are_two_students_named_as_the_roster_names_them(canvas_week):
    course, outcomes = canvas_week["course"], canvas_week["outcomes"]
    assert (outcomes["56789"].status, outcomes["56789"].score) == ("graded", 8)  # each John Smith's own hand-in
    assert (outcomes["67890"].status, outcomes["67890"].score) == ("graded", 0)
    assert "ignored" not in outcomes["56789"].reason + outcomes["67890"].reason
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:  # what the formgrader shows
        names = {student.id: (student.first_name, student.last_name) for student in gradebook.students}
    assert names["56789"] == names["67890"] == ("John", "Smith") and names["12345"] == ("Ada", "Lovelace")
    with (course.root / CANVAS_GRADES).open(newline="", encoding="utf-8") as handle:
        by_id = {row["ID"]: row for row in csv.DictReader(handle)}
    assert (by_id["56789"]["01_geometry (4567)"], by_id["67890"]["01_geometry (4567)"]) == ("8", "0")


def test_a_clash_stops_zip_collect_naming_both_files_and_collects_nothing(tmp_path):
    # A pattern that takes the name as the id (as this course's did): two John Smiths give one student
    course = copy_course(COURSE_ROOT, tmp_path / "course")
    config = course.root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.FileNameCollectorPlugin.named_regexp = "
                      "r'.*/(?P<student_id>[^/_]+)_(?:LATE_)?\\d+_\\d+_(?P<file_id>[^/]+\\.ipynb)$'\n")
    archive = course.root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    untouched = nbformat.read(course.release / ASSIGNMENT / "geometry.ipynb", as_version=4)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zipped:
        for name in ("smithjohn_56789_70004_geometry.ipynb", "smithjohn_67890_70005_geometry.ipynb"):
            zipped.writestr(name, _notebook_bytes(untouched))
    done = nbgrader("zip_collect", ASSIGNMENT, cwd=course.root, check=False)
    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert "smithjohn_56789_70004_geometry.ipynb" in said and "smithjohn_67890_70005_geometry.ipynb" in said, said
    assert "two files give student 'smithjohn' the same file 'geometry.ipynb'" in said
    assert not list(course.submitted.glob("*/*/*.ipynb"))  # nothing collected for anyone: nothing half-done


@pytest.mark.slow
def test_renamed_and_resubmitted_notebooks_are_graded_and_say_so(canvas_week):
    course, outcomes = canvas_week["course"], canvas_week["outcomes"]
    assert {s: (o.status, o.score) for s, o in outcomes.items()} == {
        "12345": ("graded", 8), "23456": ("graded", 8), "34567": ("graded", 8), "56789": ("graded", 8), "67890": ("graded", 0)}
    assert "geometry-1.ipynb is graded as geometry.ipynb" in outcomes["23456"].reason
    assert "geometry.ipynb is ignored (an earlier copy)" in outcomes["23456"].reason
    assert "geometry (1).ipynb is graded as geometry.ipynb" in outcomes["34567"].reason
    page = (course.feedback / "34567" / ASSIGNMENT / "geometry.html").read_text()
    assert "Before grading: geometry (1).ipynb is graded as geometry.ipynb" in page
    assert "geometry (1).ipynb is graded as geometry.ipynb" in (course.reports / "report.md").read_text()


@pytest.mark.slow
def test_the_canvas_export_imports_as_canvas_reads_it(canvas_week):
    course = canvas_week["course"]
    with (course.root / CANVAS_GRADES).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01_geometry (4567)", *course.assignments()[1:]]
    assert rows[1][0].strip() == "Points Possible" and rows[1][1:5] == ["", "", "", ""]
    assert rows[1][5:] == [f"{points:g}" for points in (8, *[sum(course.graded_cells(a).values()) for a in course.assignments()[1:]])]
    by_id = {row[1]: row for row in rows[2:]}
    assert by_id["12345"][:6] == ["Lovelace, Ada", "12345", "S001", "ada.l", "Section A", "8"]
    assert by_id["23456"][:6] == ["Babbage, Carl", "23456", "S002", "carl.b", "Section B", "8"]
    assert by_id["34567"][5] == "8"
    assert by_id["45678"][5:] == [""] * 6  # Alan handed nothing in: Canvas keeps what it has
    assert all(cell == "" for row in rows[2:] for cell in row[6:])  # other assignments: not handed in
    assert "total" not in rows[0] and "max_score" not in rows[0]


@pytest.mark.slow
def test_written_answers_awaiting_a_ta_are_left_blank_in_the_canvas_export(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    assignment = next(a for a in course.assignments() if course.manually_graded_cells(a))
    name = course.notebook_names(assignment)[0]
    folder = course.submitted / "ada" / assignment
    folder.mkdir(parents=True)
    nbformat.write(solved_notebook(course, assignment, name), folder / f"{name}.ipynb")
    grade(course, progress=False, jobs=1)
    with (course.root / CANVAS_GRADES).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[1]["SIS Login ID"] == "ada" and rows[1][assignment] == ""
    report = (course.reports / "report.md").read_text()
    assert f"ada/{assignment}: written answers await a TA, left blank" in report


# ---------------------------------------------------------------------------- the patterns of other LMSs, as the README gives them


#: The README's names of each LMS's file names, and term.toml's [handin].lms for them.
TERM_LMS = {"Canvas": "canvas", "Moodle": "moodle", "Moodle without folders": "moodle_files", "Blackboard": "blackboard"}


def term_pattern(lms: str) -> str:
    """The ``named_regexp`` nbgrader's configuration takes when term.toml names ``lms``."""
    return LMS_PATTERNS[TERM_LMS[lms]]


def test_nbgraders_configuration_takes_the_pattern_of_the_lms_the_term_names(tmp_path):
    from course_grader.trusted.course.course import load_config

    course = copy_course(COURSE_ROOT, tmp_path / "course")
    for lms in TERM_LMS.values():
        term = course.root / "term.toml"
        text = term.read_text(encoding="utf-8")
        term.write_text(text.replace(f'lms = "{course.term().handin.lms}"', f'lms = "{lms}"', 1), encoding="utf-8")
        assert load_config(course).FileNameCollectorPlugin.named_regexp == LMS_PATTERNS[lms]


@pytest.mark.parametrize("lms, path, student, file_id, timestamp", [
    ("Canvas", "/c/downloaded/01/extracted/lovelaceada_12345_67890_geometry.ipynb", "12345", "geometry.ipynb", None),
    ("Canvas", "/c/downloaded/01/extracted/lovelaceada_LATE_12345_67890_geometry-1.ipynb", "12345", "geometry-1.ipynb", None),
    ("Canvas", "/c/downloaded/01/extracted/sub/hoppergrace_34567_70003_geometry (1).ipynb", "34567", "geometry (1).ipynb", None),
    ("Moodle", "/c/downloaded/01/extracted/Ada Lovelace_1234567_assignsubmission_file_/geometry.ipynb", "1234567",
     "geometry.ipynb", None),
    ("Moodle without folders", "/c/downloaded/01/extracted/Ada Lovelace_1234567_assignsubmission_file_geometry.ipynb",
     "1234567", "geometry.ipynb", None),
    ("Blackboard", "/c/downloaded/01/extracted/Homework 1_ada_attempt_2026-11-27-16-59-01_geometry.ipynb", "ada",
     "geometry.ipynb", "2026-11-27-16-59-01"),
    # A student's own file name that imitates the LMS's: the id and time come from what the LMS wrote first.
    ("Canvas", "/c/downloaded/01/extracted/eve_111_222_mallory_333_444_geometry.ipynb", "111",
     "mallory_333_444_geometry.ipynb", None),
    ("Moodle", "/c/downloaded/01/extracted/Eve Smith_111_assignsubmission_file_/x_222_assignsubmission_file_geometry.ipynb",
     "111", "x_222_assignsubmission_file_geometry.ipynb", None),
    ("Moodle without folders",
     "/c/downloaded/01/extracted/Eve Smith_111_assignsubmission_file_x_222_assignsubmission_file_geometry.ipynb", "111",
     "x_222_assignsubmission_file_geometry.ipynb", None),
    ("Blackboard", "/c/downloaded/01/extracted/Homework 1_eve_attempt_2026-11-30-10-00-00_x_mallory_attempt_2099-01-01-00-00-00_"
     "geometry.ipynb", "eve", "x_mallory_attempt_2099-01-01-00-00-00_geometry.ipynb", "2026-11-30-10-00-00"),
])
def test_each_lms_pattern_reads_its_file_names_as_zip_collect_applies_it(lms, path, student, file_id, timestamp):
    import re

    pattern = term_pattern(lms)
    match = re.match(pattern, path)  # nbgrader's FileNameCollectorPlugin: re.match on the whole path
    assert match is not None, (pattern, path)
    assert match.group("student_id") == student and match.group("file_id") == file_id
    assert match.groupdict().get("timestamp") == timestamp


@pytest.mark.parametrize("lms, path", [
    # A student's own folder, inside the folder Moodle made for her, named like a classmate's (Moodle keeps a
    # submission's folders in its "in folders" download): read as the classmate's, it replaced her grade.
    ("Moodle", "/c/downloaded/01/extracted/Eve Smith_111_assignsubmission_file_/Ada Lovelace_222_assignsubmission_file_/"
               "geometry.ipynb"),
    ("Moodle", "/c/drop/01/Eve Smith_111_assignsubmission_file_/deeper/Ada Lovelace_222_assignsubmission_file_/g.ipynb"),
])
def test_a_folder_named_like_the_lms_s_inside_a_submission_names_nobody(lms, path):
    import re

    assert re.match(term_pattern(lms), path) is None


@pytest.mark.slow
def test_blackboard_attempts_are_collected_with_their_time_and_the_later_one_wins(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    term = course.root / "term.toml"
    term.write_text(term.read_text(encoding="utf-8").replace('lms = "canvas"', 'lms = "blackboard"', 1), encoding="utf-8")
    solved = _notebook_bytes(solved_notebook(course, ASSIGNMENT, "geometry"))
    untouched = (course.release / ASSIGNMENT / "geometry.ipynb").read_bytes()
    archive = course.root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "gradebook.zip", "w") as zipped:
        zipped.writestr("Homework 1_ada_attempt_2026-11-27-16-59-01_geometry.ipynb", untouched)
        zipped.writestr("Homework 1_ada_attempt_2026-11-28-09-00-00_geometry.ipynb", solved)
        zipped.writestr("Homework 1_ada_attempt_2026-11-28-09-00-00.txt", "Name: Ada Lovelace\n")
    nbgrader("zip_collect", ASSIGNMENT, cwd=course.root)
    folder = course.submitted / "ada" / ASSIGNMENT
    assert sorted(p.name for p in folder.iterdir()) == ["geometry.ipynb", "timestamp.txt"]
    assert (folder / "timestamp.txt").read_text().startswith("2026-11-28 09:00:00")
    assert (folder / "geometry.ipynb").read_bytes() == solved
