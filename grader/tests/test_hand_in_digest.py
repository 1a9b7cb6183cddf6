"""The hidden cases of a hand-in are drawn from everything it holds, encoded without ambiguity (attack round 12, item 1)."""

import copy

import nbformat
import numpy as np
import pytest
from conftest import FIXTURE_COURSE, fixture_course
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.course.hand_in_digest import hand_in_digest, notebook_digest

#: The checks of the grader's own course (not of whatever course holds the working folder).
CHECKS = course_checks(FIXTURE_COURSE)

SECRET = b"a course secret of 32 bytes....."


def _notebook():
    code = new_code_cell("x = 1", id="c1", outputs=[new_output("stream", name="stdout", text="1\n")])
    text = new_markdown_cell("![a](attachment:a.png)", id="m1", attachments={"a.png": {"image/png": "iVBORw0KGgo="}})
    return new_notebook(cells=[code, text], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})


def _draw(digest: str) -> np.ndarray:
    """The first random input of augment's cases for this hand-in."""
    cases = CHECKS["augment"].cases(case_generator(SECRET, "augment", "ada", digest))
    return next(np.asarray(case.args[0]) for case in cases if case.is_random)


def _digest(notebook) -> str:
    return hand_in_digest({"geometry.ipynb": nbformat.writes(notebook).encode("utf-8")})


EDITS = {
    "a code cell's source": lambda nb: setattr(nb.cells[0], "source", "x = 2"),
    "an output": lambda nb: nb.cells[0].outputs[0].__setitem__("text", "2\n"),
    "an attachment": lambda nb: nb.cells[1].attachments["a.png"].__setitem__("image/png", "iVBORw0KGgp="),
    "a markdown cell": lambda nb: setattr(nb.cells[1], "source", "![b](attachment:a.png)"),
    "a tag that skips a cell": lambda nb: nb.cells[0].metadata.__setitem__("tags", ["skip-execution"]),
    "the notebook's metadata": lambda nb: nb.metadata.__setitem__("title", "mine"),
    "a cell's id": lambda nb: setattr(nb.cells[0], "id", "c2"),
    "a cell's type": lambda nb: setattr(nb.cells[1], "cell_type", "raw") or nb.cells[1].pop("attachments"),
}


@pytest.mark.parametrize("what", sorted(EDITS))
def test_a_change_to_anything_a_hand_in_holds_draws_new_cases(what):
    first, second = _notebook(), _notebook()
    EDITS[what](second)
    assert _digest(first) != _digest(second)
    assert notebook_digest(first) != notebook_digest(second)
    assert not np.array_equal(_draw(_digest(first)), _draw(_digest(second)))


def test_the_same_hand_in_keeps_its_cases():
    assert _digest(_notebook()) == _digest(copy.deepcopy(_notebook()))
    assert np.array_equal(_draw(_digest(_notebook())), _draw(_digest(_notebook())))


def _old_code_digest(notebook) -> str:
    """The digest before round 12: the code cells' sources joined by NUL (kept here to show the collision is real)."""
    import hashlib

    digest = hashlib.sha256()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            digest.update(cell.source.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def test_cells_a_separator_would_confuse_draw_different_cases():
    joined = new_notebook(cells=[new_code_cell("a = 1\0b = 2", id="c1")])
    apart = new_notebook(cells=[new_code_cell("a = 1", id="c1"), new_code_cell("b = 2", id="c2")])
    assert _old_code_digest(joined) == _old_code_digest(apart)  # the old digest: one cell "A\0B" against "A", "B"
    assert _digest(joined) != _digest(apart)
    assert hand_in_digest({"a": b"bc"}) != hand_in_digest({"ab": b"c"})
    assert hand_in_digest({"x.ipynb": b"1", "y.ipynb": b"2"}) != hand_in_digest({"x.ipynb": b"12"})


def test_the_parts_of_the_seed_are_never_confused():
    def first(function: str, student: str, submission: str) -> np.ndarray:
        return case_generator(SECRET, function, student, submission).random(4)

    assert not np.array_equal(first("augment", "ab", "c"), first("augment", "a", "bc"))
    assert not np.array_equal(first("augment", "ada", ""), first("augment", "ada\0", ""))
    assert not np.array_equal(first("augment", "ada", "d"), first("augment", "ada", "e"))
    assert np.array_equal(first("augment", "ada", "d"), first("augment", "ada", "d"))


def test_the_intake_draws_from_the_bytes_handed_in_outputs_included(tmp_path):
    from course_grader.trusted.course.example_class import copy_course, solved_notebook
    from course_grader.trusted.course.intake import take_in
    from course_grader.trusted.judging.kernel_imports import import_rules

    course = copy_course(fixture_course(), tmp_path / "course")
    solved = solved_notebook(course, "01_geometry", "geometry")
    with_output = copy.deepcopy(solved)
    code = next(cell for cell in with_output.cells if cell.cell_type == "code")
    code.outputs = [new_output("stream", name="stdout", text="a stored output\n")]
    taken = {}
    for student, notebook in (("ada", solved), ("ben", with_output)):
        folder = course.submitted / student / "01_geometry"
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / "geometry.ipynb")
        taken[student] = take_in(course, student, "01_geometry", import_rules(course.root, "01_geometry"))
    assert taken["ada"].notebooks == taken["ben"].notebooks  # what runs: outputs dropped
    assert taken["ada"].digest != taken["ben"].digest  # what the cases are drawn from: every byte handed in
    assert taken["ada"].digest == hand_in_digest({"geometry.ipynb": (course.submitted / "ada" / "01_geometry" / "geometry.ipynb").read_bytes()})


def _graded_predict(notebook, secret: bytes, digest: str):
    """The verdict on ``predict`` of ``notebook`` for the cases of ``digest``: its code cells run as the kernel runs them
    (skip-execution cells skipped), the visible test's calls first, then the harness on the hidden cases."""
    import runpy

    from course_grader.trusted.judging.checks.judge import judge_replies, prepare_cases
    from course_grader.trusted.judging.wire import harness_request, new_marker, read_replies
    from course_grader.in_sandbox import harness

    attack = runpy.run_path(str(ROUND12 / "_resubmission.py"))
    namespace = {"np": np}
    for cell in notebook.cells:
        if cell.cell_type == "code" and (cell.source.startswith("_table[") or cell.source == attack["PREDICT"]):
            if "skip-execution" not in cell.metadata.get("tags", []):
                exec(cell.source, namespace)  # noqa: S102 - the fixture's own code
    for args in attack["VISIBLE_CALLS"]:
        namespace["predict"](*args)
    check = CHECKS["predict"]
    prepared = prepare_cases(check, case_generator(secret, "predict", attack["STUDENT"], digest))
    marker, lines = new_marker(), []
    harness.call_all(namespace, harness_request("predict", prepared.cases, marker, prepared.again), emit=lines.append)
    replies, problem = read_replies("\n".join(lines), marker, len(prepared.cases))
    return judge_replies(check, prepared.cases, replies, problem, prepared.expected, prepared.again, prepared.again_expected)


ROUND12 = __import__("pathlib").Path(__file__).resolve().parent / "fixtures" / "attacks_forged_points"


def test_a_resubmission_that_answered_its_cases_from_a_table_now_draws_new_ones(tmp_path):
    import runpy

    from course_grader.trusted.course.example_class import copy_course

    attack = runpy.run_path(str(ROUND12 / "_resubmission.py"))
    course = copy_course(fixture_course(), tmp_path / "course")
    first = attack["first_hand_in"](course)
    second = attack["second_hand_in"](first, attack["labels_shown_in_feedback"](course, SECRET, first))
    # before round 12: one digest for both (their code cells are the same), so the table answers every case
    old = _old_code_digest(first)
    assert old == _old_code_digest(second)
    assert not _graded_predict(first, SECRET, old).passed  # 0/2 ...
    # ... and the resubmission would have needed the first's cases: with them, the table answers everything
    first_digest = hand_in_digest({"geometry.ipynb": nbformat.writes(first).encode("utf-8")})
    assert _graded_predict(second, SECRET, first_digest).passed
    # now: the second hand-in's own bytes draw its cases, and the table is of no use
    assert not _graded_predict(second, SECRET, _digest(second)).passed
