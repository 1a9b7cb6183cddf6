"""term.toml's due dates and extensions written into a gradebook: for the whole class, or for one submission."""

import datetime as dt
from pathlib import Path

import pytest
from conftest import fixture_course
from nbgrader.api import Gradebook

from course_grader.trusted.course.late_policy import follow_term
from course_grader.trusted.course.term import parse_term

ASSIGNMENT = "01_geometry"
pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")  # nbgrader's SQLAlchemy use, as in test_report


def term_with_extensions(hours: dict[str, int]):
    """The fixture course's term, ``ASSIGNMENT`` due in 2020, with an extension of ``hours[student]`` for each student."""
    file = Path(fixture_course()) / "term.toml"
    text = file.read_text(encoding="utf-8").replace(f'name = "{ASSIGNMENT}"\n',
                                                    f'name = "{ASSIGNMENT}"\ndue = "2020-01-01 00:00"\n', 1)
    text += "".join(f'\n[[extensions]]\nstudent = "{student}"\nassignment = "{ASSIGNMENT}"\nhours = {count}\n'
                    for student, count in hours.items())
    return parse_term(text, file)


def gradebook_with_submissions(path: Path, students: list[str]) -> Gradebook:
    gradebook = Gradebook(f"sqlite:///{path}")
    gradebook.add_assignment(ASSIGNMENT)
    for student in students:
        gradebook.add_student(student)
        gradebook.add_submission(ASSIGNMENT, student, timestamp=dt.datetime(2020, 1, 2))
    return gradebook


def extensions(gradebook: Gradebook, students: list[str]) -> dict[str, float | None]:
    found = {}
    for student in students:
        extension = gradebook.find_submission(ASSIGNMENT, student).extension
        found[student] = None if extension is None else extension.total_seconds() / 3600
    return found


def test_one_submission_followed_leaves_the_classmates_rows_as_they_were(tmp_path):
    students = ["ada", "bob", "cy"]
    term = term_with_extensions({"ada": 5, "bob": 7})
    with gradebook_with_submissions(tmp_path / "gradebook.db", students) as gradebook:
        follow_term(gradebook, term, only=("bob", ASSIGNMENT))
        assert extensions(gradebook, students) == {"ada": None, "bob": 7, "cy": None}
        assert gradebook.find_assignment(ASSIGNMENT).duedate == dt.datetime(2020, 1, 1)  # due dates: every assignment's
        follow_term(gradebook, term)
        assert extensions(gradebook, students) == {"ada": 5, "bob": 7, "cy": None}


def test_one_submission_followed_where_the_gradebook_has_none_changes_nothing(tmp_path):
    term = term_with_extensions({"ada": 5})
    with gradebook_with_submissions(tmp_path / "gradebook.db", ["bob"]) as gradebook:
        followed = follow_term(gradebook, term, only=("ada", ASSIGNMENT))
        assert followed.penalties_changed == 0 and extensions(gradebook, ["bob"]) == {"bob": None}
