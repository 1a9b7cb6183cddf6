"""The bundled example class: submissions assembled from recipes in ``example_class/``.

Each ``example_class/<student>.py`` is a recipe, not a notebook, so it always
matches the current ``release/``. It defines:

- ``BASE``: ``"solutions"`` (start from the source solutions) or ``"release"``
  (start from the untouched student version);
- ``CELLS`` (optional): ``{assignment: {grade_id: new source}}``, the student's
  own code for some cells;
- ``FILES`` (optional): ``{assignment: {file name: text}}``, raw files written
  as they are (a broken notebook, a stray file);
- ``EDITS`` (optional): ``{assignment: function(notebook) -> notebook}``, for
  edits the other keys cannot express (deleting or duplicating cells);
- ``ASSIGNMENTS`` (optional): the assignments handed in (default: all; one the
  course no longer has is skipped).

and what the student should get, which the tests check after a real autograde:

- ``LOSES`` (optional): ``{assignment: [test cell grade_id, ...]}``, the cells
  the student's bugs fail (a ``"release"`` base also loses every test of a
  function it leaves a stub, and written answers wait for a TA);
- ``FAILS`` (optional): ``{assignment: reason}``, hand-ins the grader reports as
  failed, with ``reason`` in its message.
"""

from __future__ import annotations

import copy
import runpy
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .course import Course


def solution_source(source: str) -> str:
    """A solution cell as its author wrote it: the solution delimiters removed."""
    lines = [line for line in source.split("\n") if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line]
    return "\n".join(lines)


def solved_notebook(course: Course, assignment: str, name: str):
    """The release notebook with every solution cell filled in from the source."""
    release = nbformat.read(course.release / assignment / f"{name}.ipynb", as_version=4)
    source = nbformat.read(course.source / assignment / f"{name}.ipynb", as_version=4)
    solutions = {
        cell.metadata["nbgrader"]["grade_id"]: solution_source(cell.source)
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    solved = copy.deepcopy(release)
    for cell in solved.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = solutions[grade_id]
    return solved


def build_submission(course: Course, recipe: dict, assignment: str, destination: Path) -> None:
    """Write one student's submission of one assignment into ``destination``."""
    destination.mkdir(parents=True, exist_ok=True)
    files = recipe.get("FILES", {}).get(assignment, {})
    for name in course.notebook_names(assignment):
        if f"{name}.ipynb" in files:
            continue
        if recipe["BASE"] == "solutions":
            notebook = solved_notebook(course, assignment, name)
        else:
            notebook = nbformat.read(course.release / assignment / f"{name}.ipynb", as_version=4)
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in recipe.get("CELLS", {}).get(assignment, {}):
                cell.source = recipe["CELLS"][assignment][grade_id]
        edit = recipe.get("EDITS", {}).get(assignment)
        if edit is not None:
            notebook = edit(notebook)
        nbformat.write(notebook, destination / f"{name}.ipynb")
    for name, text in files.items():
        (destination / name).write_text(text, encoding="utf-8")


def load_recipes(folder: Path) -> dict[str, dict]:
    """Every ``<student>.py`` recipe of the example class, by student id."""
    return {path.stem: runpy.run_path(str(path)) for path in sorted(folder.glob("*.py")) if not path.name.startswith("_")}


def build_example_class(course: Course, recipes_folder: Path) -> list[tuple[str, str]]:
    """Fill ``course.submitted`` from the recipes; returns the ``(student, assignment)`` pairs written.

    A recipe may list ``ASSIGNMENTS`` to submit only some assignments (those the course has).
    """
    written = []
    for student, recipe in load_recipes(recipes_folder).items():
        for assignment in [a for a in recipe.get("ASSIGNMENTS", course.assignments()) if a in course.assignments()]:
            build_submission(course, recipe, assignment, course.submitted / student / assignment)
            written.append((student, assignment))
    return written


def copy_course(course_root: Path, destination: Path) -> Course:
    """Copy what grading needs (config, source, release, the header and footer notebooks) into a fresh course root."""
    from .release_check import copy_release_settings

    destination.mkdir(parents=True, exist_ok=True)
    copy_release_settings(Course.open(course_root), destination)
    for folder in ("source", "release"):
        shutil.copytree(course_root / folder, destination / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return Course.open(destination)


# ---------------------------------------------------------------------------- what the recipes expect


def solutions_by_test_cell(course: Course, assignment: str) -> dict[str, list[str]]:
    """``grade_id`` of every autograded test cell of ``assignment``, with the solution code cells it tests.

    The course's convention: a test cell tests the solution code cells between it and the previous test cell.
    """
    tested: dict[str, list[str]] = {}
    for name in course.notebook_names(assignment):
        pending: list[str] = []
        for cell in nbformat.read(course.source / assignment / f"{name}.ipynb", as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
                pending.append(meta["grade_id"])
            elif cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                tested[meta["grade_id"]], pending = pending, []
    return tested


@dataclass(frozen=True)
class ExpectedGrade:
    """What one example student should get for one assignment."""

    cell_scores: dict[str, float]  # every graded cell: its points, or 0 where lost
    failed_reason: str = ""  # non-empty: the hand-in is reported failed, with this in its reason

    @property
    def score(self) -> float:
        return sum(self.cell_scores.values())


def expected_example_grades(course: Course, recipes_folder: Path) -> dict[tuple[str, str], ExpectedGrade]:
    """What each example student should get, by ``(student, assignment)``, from the recipes and the source's points.

    A recipe (``example_class/<student>.py``, see this module's docstring) says what
    it expects with ``LOSES`` (``{assignment: [test cell grade_id, ...]}``: the cells its bugs fail) and ``FAILS``
    (``{assignment: reason}``: hand-ins reported as failed). Besides those, a student whose ``BASE`` is the release
    loses every test cell of a function it left a stub; written answers score 0 until a TA grades them; every other
    graded cell earns its points. Entries for an assignment the course no longer has are ignored; an entry naming a
    cell the assignment does not have is a stale recipe, and fails here with the file and cell named.
    """
    expected = {}
    for student, recipe in load_recipes(recipes_folder).items():
        for assignment in [a for a in recipe.get("ASSIGNMENTS", course.assignments()) if a in course.assignments()]:
            points = course.graded_cells(assignment)
            if assignment in recipe.get("FAILS", {}):
                expected[student, assignment] = ExpectedGrade({cell: 0.0 for cell in points}, recipe["FAILS"][assignment])
                continue
            lost = set(recipe.get("LOSES", {}).get(assignment, ()))
            stale = lost - set(points)
            assert not stale, (f"example_class/{student}.py: LOSES names {sorted(stale)} in {assignment}, which "
                               f"source/{assignment} has no graded cell of: update the recipe")
            if recipe["BASE"] == "release":
                written = recipe.get("CELLS", {}).get(assignment, {})
                lost |= {test for test, solutions in solutions_by_test_cell(course, assignment).items()
                         if any(solution not in written for solution in solutions)}
            lost |= set(course.manually_graded_cells(assignment))
            expected[student, assignment] = ExpectedGrade({cell: 0.0 if cell in lost else value for cell, value in points.items()})
    return expected
