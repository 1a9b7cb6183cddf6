"""A failed part whose function calls another failed part's function says so: fix that one first.

The student's ``choose_epoch_cap`` calls their own ``train_perceptron`` (as the fixture course's solution does); when
``train_perceptron`` fails its part, ``choose_epoch_cap``'s failures may be its consequence, and its message names it
(``GradedCells._name_failed_helpers``). A ``choose_epoch_cap`` wrong on its own keeps its message without the note.
Scores never change.
"""

from __future__ import annotations

import json

import pytest
from conftest import fixture_course

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade

NOTE = "note: your choose_epoch_cap calls your train_perceptron, whose own part fails its hidden tests too"

NEVER_LEARNS = '''def train_perceptron(X, y, max_epochs):
    X = np.asarray(X, dtype=float)
    return np.zeros(X.shape[1]), 0.0, 0, False
'''
LARGEST_CAP = '''def choose_epoch_cap(X_train, y_train, X_dev, y_dev, caps):
    return int(max(caps))
'''
RECIPES = {"helper_wrong": {"train_perceptron": NEVER_LEARNS}, "own_bug": {"choose_epoch_cap": LARGEST_CAP}}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("failed_helpers"))
    recipes = tmp_path_factory.mktemp("recipes")
    for student, cells in RECIPES.items():
        (recipes / f"{student}.py").write_text(
            f'BASE = "solutions"\nASSIGNMENTS = ["02_algorithm"]\nCELLS = {{"02_algorithm": {cells!r}}}\n', encoding="utf-8")
    build_example_class(course, recipes)
    return course, grade(course, progress=False, jobs=1)


def _verdict_text(course, student: str, test_cell: str) -> str:
    notebook = next((course.root / "autograded" / student / "02_algorithm").glob("*.ipynb"))
    cell = next(cell for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
                if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == test_cell)
    return "\n".join(str(output.get("evalue", "")) + str(output.get("text", "")) for output in cell.get("outputs", []))


@pytest.mark.slow
def test_a_part_that_calls_a_failed_part_names_it(graded):
    course, _ = graded
    cap = _verdict_text(course, "helper_wrong", "test_choose_epoch_cap")
    assert "choose_epoch_cap returned" in cap and NOTE in cap, cap
    assert cap.count("note: your choose_epoch_cap calls") == 1, cap  # said once, on the first failure
    assert "note: your train_perceptron calls" not in _verdict_text(course, "helper_wrong", "test_train_perceptron")


@pytest.mark.slow
def test_a_part_wrong_on_its_own_has_no_note(graded):
    course, _ = graded
    cap = _verdict_text(course, "own_bug", "test_choose_epoch_cap")
    assert "choose_epoch_cap returned" in cap and "note: your choose_epoch_cap calls" not in cap, cap


@pytest.mark.slow
def test_the_note_changes_no_score(graded):
    _, outcomes = graded
    lost = {outcome.student: {cell for cell, score in dict(outcome.cell_scores).items() if score == 0} for outcome in outcomes}
    assert lost == {"helper_wrong": {"test_train_perceptron", "test_choose_epoch_cap"}, "own_bug": {"test_choose_epoch_cap"}}
