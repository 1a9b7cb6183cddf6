"""docs/adding-a-part.md works: following it adds an autograded part that grades a correct and a wrong student.

The guide's ``bash ci`` blocks run in order, in a copy of the course, with this environment's
``.venv/bin`` first on PATH: they add the part (solution, visible test, hidden check with random
cases) to an assignment, run the source notebook, regenerate ``release/`` and grade a tiny class
with ``perceptron-course grade``. The scores come from the gradebook; what they must be comes from
the course copy (the part's points in its source).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import copy_course_to
from nbgrader.api import Gradebook

from course_grader.trusted.judging.check_registry import course_checks, registry_problems
from course_grader.trusted.course.course import Course
from course_grader.trusted.gradebook.reveal import concealed_note, course_schedule, due_date

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "adding-a-part.md"


def ci_blocks(guide: Path) -> list[str]:
    """The guide's fenced blocks opened with ```bash ci, in order (a fence closes at a line that is only ```)."""
    return re.findall(r"^```bash ci\n(.*?)^```$", guide.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_guide_has_commands_that_add_release_and_grade_a_part():
    blocks = ci_blocks(GUIDE)
    assert any("hidden_checks.py" in block for block in blocks)
    assert any("perceptron-course release" in block for block in blocks)
    assert any("perceptron-course grade" in block for block in blocks)


def example_assignment(guide: Path) -> tuple[str, str]:
    """The assignment and the notebook (its name, without ``.ipynb``) the guide's worked example adds its part to, as
    its first command names them: an instructor who renames that assignment renames it there too."""
    found = re.search(r'folder = Path\("source/([^"/]+)"\)\nnotebook = nbformat\.read\(folder / "([^"/]+)\.ipynb"',
                      "\n".join(ci_blocks(guide)))
    assert found, f"{guide.name}: its first command no longer names the assignment and notebook it adds a part to"
    return found[1], found[2]


@pytest.mark.slow
def test_following_the_guide_adds_a_part_that_grades_a_correct_and_a_wrong_student(tmp_path):
    copy = copy_course_to(tmp_path / "course")  # the term's header notebook among what it copies
    shutil.copytree(REPO / "docs", copy / "docs", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name in ("pyproject.toml", "notebooks/sanitize.cfg"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, copy / name)
    assignment, notebook = example_assignment(copy / "docs" / "adding-a-part.md")
    before = Course.open(copy).graded_cells(assignment)
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for block in ci_blocks(copy / "docs" / "adding-a-part.md"):
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=copy, env=environment,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    course = Course.open(copy)
    parts = course.graded_cells(assignment)
    added = sorted(set(parts) - set(before))
    assert len(added) == 1, added  # the guide added one graded part, with its own check
    new_part = added[0]
    function = new_part.removeprefix("test_")
    assert function in course_checks(copy).of(assignment) and registry_problems(copy) == registry_problems(REPO)
    assert not list(course.release.rglob("hidden_checks.py"))

    with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gradebook:
        scores = {student: {part: gradebook.find_grade(part, notebook, assignment, student).score for part in parts}
                  for student in ("ada", "bob")}
        bob_due = due_date(gradebook, assignment, "bob")
    assert scores["ada"] == parts  # every part, the new one included, full marks
    assert scores["bob"] == {**parts, new_part: 0.0}  # the wrong one loses exactly the new part's points
    feedback = (copy / "feedback" / "bob" / assignment / f"{notebook}.html").read_text(encoding="utf-8")
    if course_schedule(course).shown(bob_due):  # the term's [reveal] shows a failed case's call now
        assert f"{function} returned a wrong value" in feedback
    else:  # it shows them after bob's due date, and says so
        assert concealed_note(bob_due) in feedback
