"""`perceptron-course check` finds what only the tests found before, on a scratch copy of this course: a lecture that
sends students to an assignment the term no longer has, an assignment naming a lecture that does not exist, the
students' README naming a file the bundle lacks, and stale recipes of the example class."""

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO, copy_course_to
from term_edits import edit_term
from term_edits import rename_assignment as rename_in_term

from course_grader.trusted.cli import main
from course_grader.trusted.course.course import Course
from course_grader.trusted.course_check import (check_assignment_numbers, check_example_class, check_lectures,
                                                check_student_readme)
from course_grader.trusted.course.example_class import load_recipes, solutions_by_test_cell
from course_grader.trusted.course.student_readme import DOCS_PAGE, lecture_pointers, render, write_docs_page

COURSE = Course.open(REPO)


def scratch_course(tmp_path: Path) -> Path:
    root = copy_course_to(tmp_path / "course", REPO)  # configuration, term, source, release, header
    for name in ("notebooks", "example_class"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    return root


def rename_assignment(root: Path, old: str, new: str) -> None:
    """Rename an assignment in the term and its folders, and nothing else (no lecture, no recipe edited)."""
    rename_in_term(root, old, new)
    for folder in ("source", "release"):
        (root / folder / old).rename(root / folder / new)


def pointed_assignment() -> tuple[str, str]:
    """(lecture file, assignment of the term) for a lecture that sends students to an assignment."""
    return next((lecture, name) for lecture, names in lecture_pointers(COURSE).items() for name in names
                if name in COURSE.term().assignment_names)


def test_the_shipped_course_has_none_of_these_problems():
    term = COURSE.term()
    assert check_lectures(COURSE, term) == []
    assert check_student_readme(COURSE, term) == []
    assert check_example_class(COURSE, term) == []
    assert check_assignment_numbers(COURSE, term) == []


def test_a_lecture_pointing_at_a_renamed_assignment_is_named(tmp_path):
    lecture, old = pointed_assignment()
    root = scratch_course(tmp_path)
    rename_assignment(root, old, f"{old}_renamed")
    course = Course.open(root)

    problems = check_lectures(course, course.term())

    assert any(p.startswith(f"notebooks/{lecture} sends students to assignments/{old}/, which is not an assignment of term.toml")
               for p in problems), problems
    readme = render(course, course.term())  # the README never sends students to a lecture the bundle lacks
    assert check_student_readme(course, course.term()) == [], readme


def test_an_assignment_naming_a_lecture_that_does_not_exist_is_named(tmp_path):
    root = scratch_course(tmp_path)
    assignment = COURSE.term().assignment_names[0]
    notebook = root / "source" / assignment / f"{COURSE.notebook_names(assignment)[0]}.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    intro = next(cell for cell in cells["cells"] if cell["cell_type"] == "markdown")
    intro["source"] = "".join(intro["source"]) + "\n\nRead `notebooks/00_no_such_lecture.ipynb` first."
    notebook.write_text(json.dumps(cells), encoding="utf-8")
    course = Course.open(root)

    problems = check_lectures(course, course.term())

    assert problems == [f"source/{assignment}/{notebook.name} names the lecture notebooks/00_no_such_lecture.ipynb, which "
                        f"does not exist: name the lecture as it is now in notebooks/ (then run `perceptron-course release`)"]


def test_the_students_readme_naming_a_file_the_bundle_lacks_is_named(tmp_path):
    root = scratch_course(tmp_path)
    course = Course.open(root)
    readme = render(course, course.term())
    named = sorted(set(re.findall(r"assignments/[^/`\s]+/[^`\s]+\.ipynb", readme)))
    assert named, "the README names an assignment's notebook"
    (root / "release" / named[0].removeprefix("assignments/")).unlink()  # the bundle copies release/

    problems = check_student_readme(course, course.term())

    assert any(p.startswith(f"the students' README names {named[0]}, which the student bundle will not hold") for p in problems), problems


def test_recipes_naming_a_renamed_assignment_or_a_renamed_cell_are_stale(tmp_path):
    recipes = load_recipes(REPO / "example_class")
    student, assignment = next((s, a) for s, r in recipes.items() for a in (r.get("CELLS") or {}) if a in COURSE.term().assignment_names)
    cell = sorted(recipes[student]["CELLS"][assignment])[0]
    root = scratch_course(tmp_path)
    notebook = next(p for p in (root / "source" / assignment).glob("*.ipynb") if f'"grade_id": "{cell}"' in p.read_text(encoding="utf-8"))
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    for c in cells["cells"]:
        if c["metadata"].get("nbgrader", {}).get("grade_id") == cell:
            c["metadata"]["nbgrader"]["grade_id"] = f"{cell}_v2"
    notebook.write_text(json.dumps(cells), encoding="utf-8")
    course = Course.open(root)

    problems = check_example_class(course, course.term())
    assert any(p.startswith(f"example_class/{student}.py: CELLS of {assignment} names {cell}") for p in problems), problems

    renamed = next(a for a in COURSE.term().assignment_names if a != assignment)
    named_by = sorted(s for s, r in recipes.items() if any(renamed in (r.get(k) or {}) for k in ("CELLS", "LOSES", "FILES", "FAILS", "EDITS"))
                      or renamed in r.get("ASSIGNMENTS", ()))
    rename_assignment(root, renamed, f"{renamed}_renamed")
    course = Course.open(root)
    problems = check_example_class(course, course.term())
    for named in named_by:
        assert any(p.startswith(f"example_class/{named}.py: ") and f"names {renamed}, which is not an assignment of term.toml" in p
                   for p in problems), (named, problems)


def test_the_course_s_students_page_left_as_it_was_before_a_rename_is_named(tmp_path):
    _, old = pointed_assignment()
    root = scratch_course(tmp_path)
    (root / DOCS_PAGE).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / DOCS_PAGE, root / DOCS_PAGE)
    assert check_student_readme(Course.open(root), Course.open(root).term()) == []
    rename_assignment(root, old, f"{old}_renamed")  # the README's list of assignments changes
    course = Course.open(root)

    assert check_student_readme(course, course.term()) == [
        f"{DOCS_PAGE.as_posix()} is not the students' README of this term (term.toml, the assignments or the lectures "
        f"changed since it was written): run `perceptron-course students-readme` and commit it"]
    write_docs_page(course)
    assert check_student_readme(course, course.term()) == []


def test_a_reason_a_recipe_expects_naming_an_assignment_the_term_lacks_is_named(tmp_path):
    first, second = COURSE.term().assignment_names[:2]
    recipes = tmp_path / "example_class"
    recipes.mkdir()
    gone = f"{second}_renamed"
    (recipes / "mallory.py").write_text(f'BASE = "solutions"\nASSIGNMENTS = [{first!r}]\n'
                                        f'FAILS = {{{first!r}: "looks like the notebook of {gone}"}}\n', encoding="utf-8")
    (recipes / "honest.py").write_text(f'BASE = "solutions"\nFAILS = {{{first!r}: "looks like the notebook of {second}"}}\n',
                                       encoding="utf-8")

    assert check_example_class(COURSE, COURSE.term(), recipes) == [
        f"example_class/mallory.py: the reason FAILS expects for {first} ('looks like the notebook of {gone}') names "
        f"{gone}, which is not an assignment of term.toml: name the assignment as it is now"]


def test_a_recipe_from_the_release_leaving_a_part_a_stub_unsaid_is_named(tmp_path):
    # As after a new part: an alternative student (his own code for the rest) hands the new part in as released.
    assignment = COURSE.term().assignment_names[0]
    tested = solutions_by_test_cell(COURSE, assignment)
    stub = next(cells[0] for cells in tested.values() if cells)
    written = {cell: "pass" for cells in tested.values() for cell in cells if cell != stub}
    lost = sorted(t for t, cells in tested.items() if stub in cells)
    recipes = tmp_path / "example_class"
    recipes.mkdir()
    for student, loses in (("ben_new_part", {}), ("ben_stub_meant", {assignment: lost})):
        (recipes / f"{student}.py").write_text(f'BASE = "release"\nASSIGNMENTS = [{assignment!r}]\n'
                                               f'CELLS = {{{assignment!r}: {written!r}}}\nLOSES = {loses!r}\n', encoding="utf-8")
    (recipes / "dee_as_released.py").write_text(f'BASE = "release"\nASSIGNMENTS = [{assignment!r}]\n', encoding="utf-8")

    assert check_example_class(COURSE, COURSE.term(), recipes) == [
        f"example_class/ben_new_part.py: starts from the release but has no code in CELLS for {assignment}'s {stub}: that "
        f"student hands in the released stub and loses {', '.join(lost)}; write the student's own version in CELLS, or "
        f"name those tests in LOSES if the stub is meant"]


def test_an_assignment_numbered_as_it_was_before_a_reorder_or_a_drop_is_named(tmp_path):
    names = COURSE.term().assignment_names
    first, last_place = names[0], len(names) + 1
    root = scratch_course(tmp_path)
    notebook = root / "source" / first / f"{COURSE.notebook_names(first)[0]}.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    cells["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": "# Assignment 1: the first one"})
    notebook.write_text(json.dumps(cells), encoding="utf-8")
    lecture = sorted((root / "notebooks").glob("*.ipynb"))[0]
    cells = json.loads(lecture.read_text(encoding="utf-8"))
    cells["cells"].append({"cell_type": "markdown", "metadata": {}, "source":
                           f"**Assignment 1** (`assignments/{first}/`) goes with this lecture; assignment {last_place} too."})
    lecture.write_text(json.dumps(cells), encoding="utf-8")
    course = Course.open(root)
    assert not [p for p in check_assignment_numbers(course, course.term()) if "Assignment 1" in p]  # first in the term

    edit_term(root, lambda data: data["assignments"].append(data["assignments"].pop(0)))  # the first moves to the end
    course = Course.open(root)
    then = " (then `perceptron-course release`)"
    problems = check_assignment_numbers(course, course.term())

    where = notebook.relative_to(root).as_posix()
    assert f"{where}: its title says \"Assignment 1\", but {first} is assignment {len(names)} in term.toml's order: " \
           f"make it \"Assignment {len(names)}\"{then}" in problems, problems
    assert f"notebooks/{lecture.name}: \"Assignment 1\" names assignments/{first}/, which is assignment {len(names)} in " \
           f"term.toml's order: make it \"Assignment {len(names)}\"" in problems, problems
    assert f"notebooks/{lecture.name} mentions assignment {last_place}, but term.toml has {len(names)} assignments: " \
           f"renumber it, or rewrite the sentence if that assignment was dropped" in problems, problems


@pytest.mark.slow
def test_check_exits_1_and_prints_each_problem(tmp_path, capsys):
    lecture, old = pointed_assignment()
    root = scratch_course(tmp_path)
    rename_assignment(root, old, f"{old}_renamed")

    assert main(["check", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"notebooks/{lecture} sends students to assignments/{old}/" in out
