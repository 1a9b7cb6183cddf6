"""The written questions: each has a model answer and a rubric in the source, and what a model answer claims is computed.

Every expectation comes from the source notebooks: the cells a question shows (run here), and the model answer's
own words, which are checked against the course's library (the SVM by scikit-learn's libsvm, not the notebook's SciPy).
"""

import re
from fractions import Fraction

import nbformat
import numpy as np
import pytest

from course_grader.trusted.course.course import Course
from conftest import REPO

COURSE = Course.open(REPO)


def _cells(assignment: str) -> dict:
    """The source cells of an assignment, by grade_id."""
    cells = {}
    for name in COURSE.notebook_names(assignment):
        notebook = nbformat.read(COURSE.source / assignment / f"{name}.ipynb", as_version=4)
        cells.update({cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in notebook.cells})
    return cells


def _run(assignment: str, *grade_ids: str) -> dict:
    """Run the named read-only cells of the source (after its setup cell) and return their namespace."""
    cells, namespace = _cells(assignment), {}
    for grade_id in ("setup", *grade_ids):
        exec(cells[grade_id].source, namespace)
    return namespace


def _holding(grade_id: str) -> str:
    """The assignment of this term whose source has the cell ``grade_id`` (skip when none has: a dropped question)."""
    found = [assignment for assignment in COURSE.assignments() if grade_id in _cells(assignment)]
    if not found:
        pytest.skip(f"no assignment of this term has the question {grade_id}")
    return found[0]


WRITTEN = [(assignment, grade_id) for assignment in COURSE.assignments()
           for grade_id in COURSE.manually_graded_cells(assignment)]


@pytest.mark.parametrize(("assignment", "grade_id"), WRITTEN)
def test_every_written_question_has_a_model_answer_and_a_rubric_that_the_release_hides(assignment, grade_id):
    source = _cells(assignment)[grade_id].source
    solution = re.search(r"### BEGIN SOLUTION(.*)### END SOLUTION", source, flags=re.S)
    assert solution, f"source/{assignment}: the answer cell {grade_id} has no model answer between the SOLUTION lines"
    assert "Model answer" in solution.group(1) and "Rubric for the TA" in solution.group(1), \
        f"source/{assignment}: {grade_id} needs a **Model answer.** and a **Rubric for the TA** inside its solution region"
    released = [cell for name in COURSE.notebook_names(assignment)
                for cell in nbformat.read(COURSE.release / assignment / f"{name}.ipynb", as_version=4).cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    assert released, f"release/{assignment} has no cell {grade_id}: run `perceptron-course release --assignment {assignment}`"
    assert all("Model answer" not in cell.source and "Rubric" not in cell.source for cell in released), \
        f"release/{assignment}: {grade_id} shows the model answer: run `perceptron-course release`"


def _points_of(text: str, group: str) -> set[int]:
    found = re.search(re.escape(group) + r"\$: points ([\d, ]+)[;.]", text)
    assert found, f"the model answer names no points for {group}"
    return {int(i) for i in found.group(1).split(",")}


def test_the_kkt_model_answer_is_the_solved_svm_of_the_question():
    from perceptron_course.svm import fit_linear_svm, kkt_residuals

    assignment = _holding("why_kkt")
    answer, shown = _cells(assignment)["why_kkt"].source, _run(assignment, "kkt_svm")
    X, y, C = shown["X_svm"], shown["y_svm"], shown["C_svm"]
    svm = fit_linear_svm(X, y, C=C)
    assert max(kkt_residuals(svm, X, y).values()) < 1e-6
    # the notebook's SciPy primal is libsvm's solution
    assert np.allclose(shown["w_svm"], svm.w, atol=1e-6) and np.isclose(shown["b_svm"], svm.b, atol=1e-6)
    stated = re.search(r"\$w = \(([-\d.]+), ([-\d.]+)\)\$, \$b = ([-\d.]+)\$", answer)
    assert stated, "the model answer states the solution w and b"
    assert np.allclose([float(value) for value in stated.groups()], [*svm.w, svm.b], atol=1e-6)
    zero, inside, top = (_points_of(answer, group) for group in (r"\alpha_i = 0", r"0 < \alpha_i < C", r"\alpha_i = C"))
    tolerance = 1e-6
    assert zero == set(np.flatnonzero(svm.alpha < tolerance))
    assert inside == set(np.flatnonzero((svm.alpha > tolerance) & (svm.alpha < C - tolerance)))
    assert top == set(np.flatnonzero(svm.alpha > C - tolerance))
    assert zero | inside | top == set(range(len(y))), "every point in one group"
    functional = y * (X @ svm.w + svm.b)  # the reasons the answer gives: beyond, on and short of the band
    assert np.all(functional[sorted(zero)] > 1 + 1e-6) and np.allclose(functional[sorted(inside)], 1, atol=1e-6)
    assert np.all(functional[sorted(top)] < 1 - 1e-6)
    values = dict(re.findall(r"\\alpha_(\d+) = (\d+/\d+)\$", answer.split("band values are:")[1].split("all strictly")[0]))
    assert {int(i) for i in values} == inside
    for i, value in values.items():
        assert np.isclose(svm.alpha[int(i)], float(Fraction(value)), atol=1e-6), (i, value, svm.alpha[int(i)])
    # the points the answer deletes leave (w, b) where it was
    kept = sorted(inside | top)
    smaller = fit_linear_svm(X[kept], y[kept], C=C)
    assert np.allclose(smaller.w, svm.w, atol=1e-6) and np.isclose(smaller.b, svm.b, atol=1e-6)


def test_the_comparable_scores_answer_reads_the_cell_it_explains():
    assignment = _holding("why_argmax")
    answer, shown = _cells(assignment)["why_argmax"].source, _run(assignment, "argmax_demo")
    first = shown["points"][0]
    before = first @ shown["W_two"].T + shown["b_two"]
    after = first @ shown["W_scaled"].T + shown["b_scaled"]
    claim = (f"the point $({first[0]:g}, {first[1]:g})$ scores ${before[0]:g}$ for cat and ${before[1]:g}$ for dog")
    assert claim in answer
    assert f"it scores ${after[1]:g}$ for dog and is predicted dog" in answer
    assert shown["same_signs"] and np.argmax(before) == 0 and np.argmax(after) == 1


def _number_after(text: str, words: str) -> float:
    """The number the model answer gives right after ``words`` (``$`` and spaces skipped)."""
    found = re.search(re.escape(words) + r"\s*\$?\s*([\d.]+)", text)
    assert found, f"the model answer gives no number after {words!r}"
    return float(found.group(1))


def test_the_non_separable_answer_reads_the_bounds_the_cell_prints():
    from perceptron_course.bounds import freund_schapire_bound
    from perceptron_course.perceptron import train

    assignment = _holding("why_nonseparable")
    answer, shown = _cells(assignment)["why_nonseparable"].source, _run(assignment, "nonseparable_bounds")
    Z, y, u, bound_of = shown["Z_ns"], shown["y_ns"], shown["u_ns"], shown["fs_bound"]
    for passes in (1, 10):  # the cell's bound is the library's, and its mistakes are the library's perceptron's
        for gamma in (0.001, 1.0, 1000.0):
            assert np.isclose(bound_of(gamma, passes)[0], freund_schapire_bound(u, Z, y, gamma, n_passes=passes))
        assert shown["perceptron_mistakes"](passes) == train(Z[:, 1:], y, max_epochs=passes).n_mistakes
    wrong_side = int(np.sum(y * (Z @ u) <= 0))
    assert f"the {['no', 'one', 'two', 'three', 'four', 'five'][wrong_side]} points on\n   the wrong side" in answer
    assert np.isclose(_number_after(answer, "$D$ stays near"), bound_of(0.001, 1)[1], atol=0.005)
    assert round(bound_of(0.001, 1)[0] / 1e6) == _number_after(answer, "the bound says nothing (about")
    assert np.isclose(_number_after(answer, "visits ($"), bound_of(1000.0, 1)[0], atol=0.05)
    gammas = np.geomspace(0.001, 1000.0, 601)
    best = min(gammas, key=lambda gamma: bound_of(gamma, 1)[0])
    one_pass, ten_passes = shown["perceptron_mistakes"](1), shown["perceptron_mistakes"](10)
    assert (f"smallest (about ${round(bound_of(best, 1)[0])}$ near $\\gamma = {best:.1f}$, against ${one_pass}$ mistakes "
            "made)") in answer
    D_one, D_ten = bound_of(1.0, 1)[1], bound_of(1.0, 10)[1]
    assert np.isclose(D_ten / D_one, np.sqrt(10))
    assert f"${D_one:.2f}$ to\n   ${D_ten:.2f}$ at $\\gamma = 1$" in answer
    best_ten = min(gammas, key=lambda gamma: bound_of(gamma, 10)[0])
    assert f"about ${round(bound_of(best_ten, 10)[0] / 10)}$ here, against about ${round(ten_passes / 10)}$ made" in answer
