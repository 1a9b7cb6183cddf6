"""Item analysis: pass rate, discrimination and the most common failure of each part and behaviour.

The statistics are checked against figures computed here by other means (``numpy.corrcoef``,
and one worked out on paper); the behaviours against real verdicts; the files against a
read-back; the whole against a real graded class in ``test_pipeline.py``.
"""

import csv
import math

import numpy as np
import pytest
from conftest import FIXTURE_COURSE

from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks import run_in_process
from course_grader.trusted.judging.checks.cases import Case, Check
from course_grader.trusted.judging.checks.judge import judge_replies
from course_grader.trusted.outputs.item_analysis import (
    CSV_COLUMNS, EVERYONE_FAILS, EVERYONE_PASSES, PartResult, Submission, analyse_assignment, behaviour_name, behaviour_names,
    callouts,
    correlation,
    html_section, markdown_section, parse_parts, part_record, plot_item_analysis, write_item_csv,
)
from course_grader.trusted.course.safe_text import from_spreadsheet_cell
from course_grader.trusted.judging.wire import Reply

#: The checks of the grader's own course (not of whatever course holds the working folder).
CHECKS = course_checks(FIXTURE_COURSE)

NOT_IMPLEMENTED = "f is not implemented yet (it raises NotImplementedError): write it, then run its tests again."
WRONG_ON_ZERO = "f returned labels other than -1 and +1 on a score of exactly 0:"


def part(failure: str = "", **behaviours: str) -> PartResult:
    return PartResult(failure, {("f", name.replace("_", " ")): line for name, line in behaviours.items()})


def small_class() -> list[Submission]:
    """Five students, three parts: p1 (2 points, two behaviours), p2 (3 points), p3 (1 point, a written answer).

    eve's written answer waits for a TA: she is left out of p3, and p3 is left out of her total.
    """
    return [
        Submission("ada", {"p1": (2, 2), "p2": (3, 3), "p3": (1, 1)}, {"p1": part("", zero="", random="")}),
        Submission("ben", {"p1": (2, 2), "p2": (0, 3), "p3": (1, 1)}, {"p1": part("", zero="", random="")}),
        Submission("cy", {"p1": (0, 2), "p2": (3, 3), "p3": (0, 1)},
                   {"p1": part(WRONG_ON_ZERO, zero=WRONG_ON_ZERO, random="")}),
        Submission("dee", {"p1": (0, 2), "p2": (0, 3), "p3": (0, 1)},
                   {"p1": part(NOT_IMPLEMENTED, zero=NOT_IMPLEMENTED, random=NOT_IMPLEMENTED)}),
        Submission("eve", {"p1": (0, 2), "p2": (3, 3)}, {"p1": part(WRONG_ON_ZERO, zero=WRONG_ON_ZERO, random="")}),
    ]


def by_item(rows):
    return {(row.part, row.behaviour): row for row in rows}


def test_pass_rates_and_discrimination_agree_with_numpy_on_a_small_class():
    rows = by_item(analyse_assignment("01", ["p1", "p2", "p3"], small_class()))
    # totals as fractions of each student's scored points, worked out by hand
    totals = {"ada": 6 / 6, "ben": 3 / 6, "cy": 3 / 6, "dee": 0 / 6, "eve": 3 / 5}
    without = {"p1": {"ada": 4 / 4, "ben": 1 / 4, "cy": 3 / 4, "dee": 0 / 4, "eve": 3 / 3},
               "p2": {"ada": 3 / 3, "ben": 3 / 3, "cy": 0 / 3, "dee": 0 / 3, "eve": 0 / 2}}
    students = ["ada", "ben", "cy", "dee", "eve"]
    p1 = [1, 1, 0, 0, 0]
    assert (rows["p1", ""].n, rows["p1", ""].n_passed, rows["p1", ""].pass_rate) == (5, 2, 0.4)
    assert math.isclose(rows["p1", ""].discrimination.value, np.corrcoef(p1, [totals[s] for s in students])[0, 1])
    assert math.isclose(rows["p1", ""].discrimination_rest.value, np.corrcoef(p1, [without["p1"][s] for s in students])[0, 1])
    p2 = [1, 0, 1, 0, 1]
    assert rows["p2", ""].pass_rate == 0.6
    assert math.isclose(rows["p2", ""].discrimination.value, np.corrcoef(p2, [totals[s] for s in students])[0, 1])
    assert math.isclose(rows["p2", ""].discrimination_rest.value, np.corrcoef(p2, [without["p2"][s] for s in students])[0, 1])
    # p3 waits for a TA on eve: four students; her total above leaves p3 out
    assert (rows["p3", ""].n, rows["p3", ""].n_passed) == (4, 2)
    assert math.isclose(rows["p3", ""].discrimination.value, np.corrcoef([1, 1, 0, 0], [1, 3 / 6, 3 / 6, 0])[0, 1])
    # behaviours: "zero" fails for cy, dee, eve; "random" only for dee
    zero, random = rows["p1", "zero"], rows["p1", "random"]
    assert (zero.n, zero.n_passed, random.n, random.n_passed) == (5, 2, 5, 4)
    assert math.isclose(random.discrimination.value, np.corrcoef([1, 1, 1, 0, 1], [totals[s] for s in students])[0, 1])
    assert (zero.common_failure, zero.common_failure_count) == (WRONG_ON_ZERO, 2)  # cy and eve; dee's is another
    assert (rows["p1", ""].common_failure, rows["p1", ""].common_failure_count) == (WRONG_ON_ZERO, 2)
    assert rows["p2", ""].common_failure == "" and rows["p2", ""].common_failure_count == 0  # nothing recorded


def test_a_discrimination_worked_out_on_paper():
    # item (1, 1, 0, 0), totals (1, 0.75, 0.5, 0): Σdx·dy = 0.625, Σdx² = 1, Σdy² = 0.546875, r = 0.625 / √0.546875
    assert math.isclose(correlation([1, 1, 0, 0], [1, 0.75, 0.5, 0]).value, 0.8451542547285166)
    assert math.isclose(correlation([0, 0, 1, 1], [1, 0.75, 0.5, 0]).value, -0.8451542547285166)  # shown, not clipped to 0


def test_an_undefined_discrimination_says_why():
    one = analyse_assignment("01", ["p1", "p2"], [Submission("ada", {"p1": (2, 2), "p2": (0, 3)})])
    assert all(row.discrimination.value is None for row in one)
    assert one[0].note() == f"{EVERYONE_PASSES}; discrimination undefined: fewer than 2 submissions"
    assert one[1].note() == f"{EVERYONE_FAILS}; discrimination undefined: fewer than 2 submissions"
    same = analyse_assignment("01", ["p1", "p2"], [Submission(s, {"p1": (2, 2), "p2": (0, 3)}) for s in ("ada", "ben", "cy")])
    assert same[0].discrimination.undefined == "every submission has the same score on it"
    equal_totals = analyse_assignment("01", ["p1", "p2"], [Submission("ada", {"p1": (2, 2), "p2": (0, 2)}),
                                                             Submission("ben", {"p1": (0, 2), "p2": (2, 2)})])
    assert equal_totals[0].discrimination.undefined == "every submission has the same total"
    assert math.isclose(equal_totals[0].discrimination_rest.value, -1.0)  # without the part, the totals differ
    alone = analyse_assignment("01", ["p1"], [Submission("ada", {"p1": (2, 2)}), Submission("ben", {"p1": (0, 2)})])
    assert alone[0].discrimination_rest.undefined == "no other part of the assignment is scored"
    assert math.isclose(alone[0].discrimination.value, 1.0)


def test_a_part_nobody_attempted_and_a_part_nobody_has_a_score_for():
    untouched = {"p1": part(NOT_IMPLEMENTED, zero=NOT_IMPLEMENTED)}
    rows = analyse_assignment("01", ["p1", "p2", "p3"], [
        Submission("ada", {"p1": (0, 2), "p2": (3, 3)}, untouched), Submission("ben", {"p1": (0, 2), "p2": (1, 3)}, untouched)])
    nobody = by_item(rows)
    assert nobody["p1", ""].callout == EVERYONE_FAILS and nobody["p1", ""].pass_rate == 0.0
    assert (nobody["p1", ""].common_failure, nobody["p1", ""].common_failure_count) == (NOT_IMPLEMENTED, 2)
    assert nobody["p1", ""].note() == f"{EVERYONE_FAILS}; discrimination undefined: every submission has the same score on it"
    assert nobody["p1", "zero"].callout == EVERYONE_FAILS
    waiting = nobody["p3", ""]  # both answers wait for a TA
    assert (waiting.n, waiting.pass_rate, waiting.callout) == (0, None, "")
    assert waiting.note() == "no graded submission has a result for it yet"
    assert any("everyone fails (0/2)" in line and "01/p1" in line for line in callouts(rows))
    assert "01/p1: everyone fails on 1 behaviour: zero" in callouts(rows)
    alone = analyse_assignment("01", ["p1"], [Submission("ada", {"p1": (0, 2)}, untouched)])
    assert callouts(alone) == ["01/p1: everyone fails (0/1)"]  # a behaviour tested on one submission says little


def test_a_behaviour_not_tested_on_a_submission_leaves_it_out():
    rows = by_item(analyse_assignment("01", ["p1"], [
        Submission("ada", {"p1": (2, 2)}, {"p1": part("", zero="", lists="")}),
        Submission("ben", {"p1": (0, 2)}, {"p1": part("f was not tested: ...")}),  # its cell was not run
        Submission("cy", {"p1": (0, 2)}),  # graded before behaviours were recorded
    ]))
    assert (rows["p1", ""].n, rows["p1", "zero"].n, rows["p1", "lists"].n) == (3, 1, 1)
    assert rows["p1", ""].common_failure == "f was not tested: ..."


def test_student_text_in_a_failure_never_acts(tmp_path):
    hostile = '<script>alert(1)</script>\x1b[2J | [link](javascript:x)'
    rows = analyse_assignment("01", ["p1"], [
        Submission("ada", {"p1": (0, 2)}, {"p1": part(f"f raised ValueError: {hostile}", zero=f"f raised ValueError: {hostile}")}),
        Submission("ben", {"p1": (2, 2)}, {"p1": part("", zero="")})])
    assert rows[0].common_failure == "f raised ValueError: <script>alert(1)</script>\\x1b[2J | [link](javascript:x)"
    page = html_section(rows, None)
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "\x1b" not in page
    markdown = markdown_section(rows, None)
    assert "<script" not in markdown and "&lt;script&gt;" in markdown and "\\[link\\]" in markdown and "\\|" in markdown
    write_item_csv(tmp_path / "items.csv", rows)
    assert "\x1b" not in (tmp_path / "items.csv").read_text(encoding="utf-8")


def test_the_csv_has_one_row_per_part_and_behaviour(tmp_path):
    rows = analyse_assignment("01", ["p1", "p2", "p3"], small_class())
    path = tmp_path / "item_analysis.csv"
    write_item_csv(path, rows)
    with path.open(newline="", encoding="utf-8") as handle:
        read = [{key: from_spreadsheet_cell(value) for key, value in row.items()} for row in csv.DictReader(handle)]
    assert tuple(read[0]) == CSV_COLUMNS
    assert [(row["part"], row["behaviour"]) for row in read] == [("p1", ""), ("p1", "zero"), ("p1", "random"), ("p2", ""), ("p3", "")]
    first = read[0]
    assert (first["submissions"], first["passed"], first["failed"], first["pass_rate"]) == ("5", "2", "3", "0.40")
    assert float(first["discrimination"]) == round(rows[0].discrimination.value, 2)
    assert (first["most_common_failure"], first["most_common_failure_count"]) == (WRONG_ON_ZERO, "2")
    one = tmp_path / "one.csv"
    write_item_csv(one, analyse_assignment("01", ["p1"], [Submission("ada", {"p1": (0, 2)}, {"p1": part("=1+1")})]))
    with one.open(newline="", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    assert row["discrimination"] == "" and row["note"] == f"{EVERYONE_FAILS}; discrimination undefined: fewer than 2 submissions"
    assert row["most_common_failure"] == "'=1+1"  # never a formula in a spreadsheet


# ------------------------------------------------------------------ what a verdict records


def predict_with_sign(w, b, X):
    return np.sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b)


def test_a_verdict_records_which_behaviours_failed():
    verdict = run_in_process(CHECKS["predict"], predict_with_sign)
    assert not verdict.passed
    assert verdict.behaviours["a single point with a single feature (n = 1, d = 1)"] == ""
    assert verdict.behaviours["random weights and points"] == ""
    zero = "w = 0 and b = 0, where every score is exactly 0 and must predict +1"
    assert verdict.behaviours[zero] == f"predict returned labels other than -1 and +1 on {zero}:"
    assert verdict.message().splitlines()[0] == verdict.behaviours["the visible test's points"]  # the first case to fail

    def stub(w, b, X):
        raise NotImplementedError

    untouched = run_in_process(CHECKS["predict"], stub)
    assert set(untouched.behaviours) == set(verdict.behaviours) and len(set(untouched.behaviours.values())) == 1
    assert next(iter(untouched.behaviours.values())).startswith("predict is not implemented yet")
    parsed = parse_parts({"parts": {"test_predict": part_record("", [verdict])}})["test_predict"]
    assert parsed.failure == verdict.message().splitlines()[0]
    assert parsed.behaviours[("predict", zero)] == verdict.behaviours[zero]
    assert parsed.behaviours[("predict", "random weights and points")] == ""


def test_a_judge_attributes_its_failures_to_behaviours():
    def memorise(X):  # one-hot per point seen: separable samples, a fresh sample is not
        X = np.asarray(X, dtype=float)
        return np.hstack([X, np.eye(len(X), 40)])

    verdict = run_in_process(CHECKS["xor_features"], memorise)
    assert not verdict.passed and verdict.behaviours
    failed = {name for name, line in verdict.behaviours.items() if line}
    assert failed and all(name.startswith("random") for name in failed)
    assert verdict.behaviours["the visible test's four corners"] == ""

    def fragile(cases, replies):
        raise KeyError("a bug in a judge")

    broken = Check("g", ("x",), lambda rng: [Case((1.0,), "one case")], judge=fragile)
    assert judge_replies(broken, broken.cases(None), [Reply(0, True, 1.0)]).behaviours == {}  # unknown


def test_cases_never_answered_fail_their_behaviours():
    check = Check("f", ("x",), lambda rng: [Case((1.0,), "first"), Case((2.0,), "second"), Case((3.0,), "third")],
                  reference=lambda x: x, compare=lambda received, expected: None)
    verdict = judge_replies(check, check.cases(None), [Reply(0, True, 1.0)], "did not return within 15 s")
    assert verdict.behaviours["first"] == ""
    assert verdict.behaviours["second"] == verdict.behaviours["third"] == "f did not return within 15 s on this call:"
    assert len(verdict.failures) == 1  # said once


def test_recorded_parts_in_metadata_are_read_defensively():
    assert parse_parts(None) == {} and parse_parts({"parts": ["x"]}) == {} and parse_parts({"parts": {"a": 3}}) == {}
    assert parse_parts({"parts": {"a": {"failure": 1, "checks": {"f": {"b": ""}, "g": 2}}}}) == {
        "a": PartResult("1", {("f", "b"): ""})}


@pytest.mark.slow
def test_the_grader_records_each_part_and_replaces_what_the_notebook_claimed():
    from test_preprocessors import execute

    from course_grader.trusted.judging.grading_metadata import GRADING_METADATA

    forged = {GRADING_METADATA: {"parts": {"test_1": {"failure": "", "checks": {"augment": {"x": ""}}}, "test_9": {}}}}
    wrong = "import numpy as np\ndef augment(X):\n    return np.asarray(X, dtype=float)\n"
    test = "### BEGIN HIDDEN TESTS\ncheck_augment(augment)\n### END HIDDEN TESTS\n"
    notebook = execute([wrong, test], test_cells=[1], notebook_metadata=forged)
    parts = parse_parts(notebook.metadata[GRADING_METADATA])
    assert list(parts) == ["test_1"]
    assert parts["test_1"].failure.startswith("augment returned an array of the wrong shape")
    assert parts["test_1"].behaviours[("augment", "the visible test's two points")].startswith("augment returned")
    assert ("augment", "x") not in parts["test_1"].behaviours


def test_random_cases_are_named_by_what_they_share():
    assert behaviour_name("random separable data (max_epochs = 5; it converges in 5 epochs)") == \
        "random separable data (max_epochs exactly the epochs it needs)"
    assert behaviour_name("random classes (labels any sortable values; max_epochs = 4)") == \
        "random classes (labels any sortable values; max_epochs = N)"
    assert behaviour_name("a single point (n = 1, d = 1)") == "a single point (n = 1, d = 1)"
    # a case drawn as Python lists counts for its behaviour and for "lists" on their own
    assert behaviour_names("random separable data (max_epochs = 100; it converges in 6 epochs), with X, y passed as Python "
                           "lists (array_like)") == ["random separable data (max_epochs above the epochs it needs)",
                                                     "X, y passed as Python lists (array_like)"]
    assert behaviour_names("random fresh sample, passed as Python lists (array_like)") == [
        "random fresh sample", "its arguments passed as Python lists (array_like)"]
    assert behaviour_names("random points") == ["random points"]
    recorded = {"parts": {"t": {"failure": "g returned a wrong b on random data (max_epochs = 3; it converges in 4 epochs):",
                                "checks": {"g": {"random data (max_epochs = 2; it converges in 3 epochs)": "",
                                                 "random data (max_epochs = 3; it converges in 4 epochs)": "g returned a wrong b on "
                                                 "random data (max_epochs = 3; it converges in 4 epochs):"}}}}}
    line = "g returned a wrong b on random data (max_epochs below the epochs it needs):"
    assert parse_parts(recorded) == {"t": PartResult(line, {("g", "random data (max_epochs below the epochs it needs)"): line})}


def test_the_figure_plots_each_part_with_a_discrimination_on_the_axes_given():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = analyse_assignment("01", ["p1", "p2", "p3"], small_class())
    rows += analyse_assignment("02", ["q1"], [Submission("ada", {"q1": (1, 1)})])  # undefined: not plotted
    fig, ax = plt.subplots()
    assert plot_item_analysis(rows, ax=ax) is ax
    points = np.vstack([collection.get_offsets() for collection in ax.collections])
    expected = [(row.pass_rate, row.discrimination.value) for row in rows if not row.behaviour and row.part != "q1"]
    assert np.allclose(points, expected)
    assert [text.get_text() for text in ax.texts] == ["1", "2", "3"]  # the table's numbers
    assert "1 with undefined discrimination not shown" in ax.get_title()
    plt.close(fig)
