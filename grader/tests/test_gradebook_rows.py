"""Saving and reading a submitted notebook's rows at once gives what nbgrader's cell-by-cell preprocessors give."""

from __future__ import annotations

import copy
import shutil
import warnings
from pathlib import Path

import nbgrader.api
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import GetGrades, SaveAutoGrades
from nbgrader.utils import compute_checksum
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SAWarning

from course_grader.trusted.course.nbgrader_patches import head_revision
from course_grader.trusted.outputs.feedback import GetGradesAndWaiting
from course_grader.trusted.gradebook.gradebook_rows import grade_of, submission_scores, submitted_notebook_rows
from course_grader.trusted.running.preprocessors import SaveAutoGradesAtOnce

ASSIGNMENT, NOTEBOOK, STUDENT = "a1", "nb", "ada"


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, task: bool = False, points: float = 0) -> dict:
    return {"nbgrader": {"grade": grade, "solution": solution, "task": task, "grade_id": grade_id, "points": points,
                         "locked": not solution, "schema_version": 3}}


def graded_notebook():
    """One cell of each kind nbgrader saves a row for, with the outcomes autograde leaves."""
    untouched = new_code_cell("def radius(X):\n    raise NotImplementedError()", metadata=_meta("answer_radius", solution=True))
    untouched.metadata.nbgrader["checksum"] = compute_checksum(untouched)
    answered = new_code_cell("def margin(w, b, X, y):\n    return 1.0", metadata=_meta("answer_margin", solution=True))
    answered.metadata.nbgrader["checksum"] = "written before the student answered"
    passed = new_code_cell("assert True", metadata=_meta("test_margin", grade=True, points=2))
    failed = new_code_cell("assert False", metadata=_meta("test_radius", grade=True, points=3),
                           outputs=[new_output("error", ename="AssertionError", evalue="", traceback=[])])
    written = new_markdown_cell("The bound is loose because ...", metadata=_meta("written", grade=True, solution=True, points=4))
    task = new_markdown_cell("Explain the plot.", metadata=_meta("task_plot", task=True, points=1))
    return new_notebook(cells=[untouched, answered, passed, failed, written, task])


@pytest.fixture
def gradebook_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", head_revision)  # not the `alembic` program on PATH
    path = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{path}") as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        for cell in graded_notebook().cells:
            meta = cell.metadata.nbgrader
            gradebook.add_source_cell(meta["grade_id"], NOTEBOOK, ASSIGNMENT, cell_type=cell.cell_type, locked=meta["locked"],
                                      source=cell.source, checksum=meta.get("checksum"))
            if meta["grade"]:
                gradebook.add_grade_cell(meta["grade_id"], NOTEBOOK, ASSIGNMENT, max_score=meta["points"], cell_type=cell.cell_type)
            if meta["solution"]:
                gradebook.add_solution_cell(meta["grade_id"], NOTEBOOK, ASSIGNMENT)
            if meta["task"]:
                gradebook.add_task_cell(meta["grade_id"], NOTEBOOK, ASSIGNMENT, max_score=meta["points"], cell_type=cell.cell_type)
        gradebook.add_student(STUDENT)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SAWarning)  # SQLAlchemy's notes on nbgrader's session use
            gradebook.add_submission(ASSIGNMENT, STUDENT)
        gradebook.find_grade("test_margin", NOTEBOOK, ASSIGNMENT, STUDENT).manual_score = 1.5  # a TA's grade from before
        gradebook.db.commit()
    return path


def _resources(path: Path) -> dict:
    return {"nbgrader": {"notebook": NOTEBOOK, "assignment": ASSIGNMENT, "student": STUDENT, "db_url": f"sqlite:///{path}"}}


def _saved(path: Path) -> dict:
    with Gradebook(f"sqlite:///{path}") as gradebook:
        notebook = gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT)
        grades = {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade, g.score) for g in notebook.grades}
        comments = {c.name: (c.auto_comment, c.manual_comment) for c in notebook.comments}
        return {"grades": grades, "comments": comments, "score": notebook.score}


def _lookups_and_commits(path: Path, run) -> tuple[int, int]:
    """How many row lookups (``SELECT``) and commits ``run()`` sends to the gradebook at ``path``."""
    sent, commits = [], []

    def lookup(conn, cursor, statement, *_):  # noqa: ANN001 - SQLAlchemy's event arguments
        if conn.engine.url.database == str(path) and statement.startswith("SELECT") and "sqlite_master" not in statement:
            sent.append(statement)

    def commit(conn):  # noqa: ANN001
        if conn.engine.url.database == str(path):
            commits.append(conn)

    event.listen(Engine, "before_cursor_execute", lookup)
    event.listen(Engine, "commit", commit)
    try:
        run()
    finally:
        event.remove(Engine, "before_cursor_execute", lookup)
        event.remove(Engine, "commit", commit)
    return len(sent), len(commits)


def test_saving_at_once_saves_what_nbgrader_saves_cell_by_cell(gradebook_file: Path, tmp_path: Path):
    theirs = tmp_path / "theirs.db"
    shutil.copy(gradebook_file, theirs)
    their_lookups, their_commits = _lookups_and_commits(
        theirs, lambda: SaveAutoGrades().preprocess(graded_notebook(), _resources(theirs)))
    our_lookups, our_commits = _lookups_and_commits(
        gradebook_file, lambda: SaveAutoGradesAtOnce().preprocess(graded_notebook(), _resources(gradebook_file)))
    saved = _saved(gradebook_file)
    assert saved == _saved(theirs)
    assert saved["grades"]["test_radius"][:3] == (0.0, None, False) and saved["grades"]["written"][2] is True
    assert saved["grades"]["test_margin"][:3] == (2.0, 1.5, True)  # the TA's grade stays, and asks for a look again
    assert saved["comments"]["answer_radius"][0] == "No response." and saved["comments"]["answer_margin"][0] is None
    # the course checked, the notebook found, its grades and its comments; then one commit: not one of each per cell
    opening_lookups, opening_commits = _lookups_and_commits(gradebook_file, lambda: Gradebook(f"sqlite:///{gradebook_file}").close())
    # nbgrader: a lookup and a commit for each of the 7 rows it saves; here the notebook, its grades, its comments, one commit
    assert their_commits - opening_commits == 7 and their_lookups - opening_lookups >= 7
    assert (our_lookups - opening_lookups, our_commits - opening_commits) == (3, 1)


def test_the_feedback_reads_at_once_what_nbgrader_reads_cell_by_cell(gradebook_file: Path):
    SaveAutoGradesAtOnce().preprocess(graded_notebook(), _resources(gradebook_file))
    theirs, their_resources = GetGrades().preprocess(graded_notebook(), _resources(gradebook_file))
    ours, our_resources = GetGradesAndWaiting().preprocess(graded_notebook(), _resources(gradebook_file))
    with Gradebook(f"sqlite:///{gradebook_file}") as gradebook:
        waiting = {g.name: g.needs_manual_grade for g in gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT).grades}
    for their_cell, our_cell in zip(theirs.cells, ours.cells):
        expected = copy.deepcopy(their_cell.metadata.nbgrader)
        if "score" in expected:
            expected["needs_manual_grade"] = waiting[expected["grade_id"]]
        assert our_cell.metadata.nbgrader == expected
    assert {key: our_resources["nbgrader"][key] for key in their_resources["nbgrader"]} == their_resources["nbgrader"]
    assert our_resources["nbgrader"]["seconds_late"] == 0.0 and our_resources["nbgrader"]["max_score"] == 10


def test_a_cell_the_notebook_has_no_row_for_is_nbgraders_missing_entry(gradebook_file: Path):
    with Gradebook(f"sqlite:///{gradebook_file}") as gradebook:
        rows = submitted_notebook_rows(gradebook, NOTEBOOK, ASSIGNMENT, STUDENT)
        assert sorted(rows.grades) == ["task_plot", "test_margin", "test_radius", "written"]
        with pytest.raises(MissingEntry):
            grade_of(gradebook, rows, "pasted_from_elsewhere")
        with pytest.raises(MissingEntry):
            submitted_notebook_rows(gradebook, "another_notebook", ASSIGNMENT, STUDENT)


def test_a_submissions_scores_are_those_its_notebooks_grades_hold(gradebook_file: Path):
    SaveAutoGradesAtOnce().preprocess(graded_notebook(), _resources(gradebook_file))
    with Gradebook(f"sqlite:///{gradebook_file}") as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, STUDENT)
        through_relationships = {grade.name: grade.score for notebook in submission.notebooks for grade in notebook.grades}
        lookups, _ = _lookups_and_commits(gradebook_file, lambda: submission_scores(gradebook, ASSIGNMENT, STUDENT))
        score, max_score, cells = submission_scores(gradebook, ASSIGNMENT, STUDENT)
    assert cells == through_relationships == {"test_margin": 1.5, "test_radius": 0.0, "written": 0.0, "task_plot": 0.0}  # a TA's grade wins
    # the submission, its score and its maximum (columns nbgrader loads when read), then every cell's score at once
    assert (score, max_score) == (1.5, 10.0) and lookups == 4
