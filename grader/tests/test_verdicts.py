"""Verdicts no submission can forge: attackers, honest styles and realistic bugs, graded in one batch.

Every attacker in grader/tests/fixtures/verdict_class/ has deliberately wrong functions (alone they score
0/8), so any point an attacker gets is forged. Honest students write correct code in other styles
and keep full marks; each realistic bug loses exactly its part. The expected outcomes are written
here by hand.
"""

import html
import stat
import subprocess
from pathlib import Path

import nbformat
import pytest
from conftest import GRADER, fixture_course

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade
from course_grader.trusted.course.secret import SECRET_FILE

#: One of the longest files: its unit of work (``FileOrGroupScheduling``) starts first.
pytestmark = pytest.mark.xdist_group("test_verdicts")

COURSE_ROOT = fixture_course()  # the grader's own course, released
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "verdict_class"
GEOMETRY = {"test_augment", "test_predict", "test_signed_distance", "test_set_margin"}

ATTACKERS = ["wrong_only", "noop_checks", "import_hook", "input_transformer", "ast_transformer", "settrace_skip",
             "frame_peek", "code_swap", "lazy_array", "reference_by_exec", "hidden_leak", "visible_forger",
             "forged_replies", "lookup_table", "partial_credit", "strings_after"]
#: Cells each student loses; every other cell of what they submitted keeps full marks.
CELLS_LOST = {
    **{attacker: GEOMETRY for attacker in ATTACKERS},
    "sklearn_perceptron": {"test_train_perceptron", "test_choose_epoch_cap"},  # the latter calls the former
    "honest_ada": set(),
    "numpy_bools": set(),
    "lists_not_arrays": set(),
    "loop_style": set(),
    "epoch_off_by_one": {"test_train_perceptron", "test_choose_epoch_cap"},  # which calls train_perceptron
    # its train_perceptron and choose_epoch_cap (the source's) call the step on rows of X: the caller's X changes too
    "mutates_input": {"test_perceptron_step", "test_train_perceptron", "test_choose_epoch_cap"},
    "visible_crash": {"test_signed_distance"},
    "sign_strict": {"test_predict"},
    "bool_as_int": {"test_is_mistake"},
    "xor_memorizer": {"test_xor_features"},  # one-hot ids of the points seen: any finite sample is separable
    "xor_width_skip": {"test_xor_features"},  # the same, changing width on the fresh samples (second round)
    "labels_not_classes": {"test_ovr_predict"},  # 10.75 for the class 10, "cat_WRONG" for "cat" (second round)
    # third round: public cases answered from a table, the wrong convention elsewhere
    "table_predict": {"test_predict"},
    "table_step": {"test_perceptron_step"},
    "table_ovr_tie": {"test_ovr_predict"},
    "table_is_mistake": {"test_is_mistake"},
    # third round: realistic code the checks used to pass
    "int_augment": {"test_augment"},
    "sign_epoch_cap": {"test_choose_epoch_cap"},
    "breaks_on_lists": {"test_signed_distance"},
    # third round: replies that crashed the comparison and zeroed the whole submission
    "ragged_ovr_predict": {"test_ovr_predict"},
    "huge_ints": {"test_choose_epoch_cap", "test_radius", "test_mistake_bound", "test_proof_squeeze"},  # both call radius
    # third round: messages
    "bool_predict": {"test_predict"},
    "kernel_strict": {"test_kernel_perceptron"},
    "averaged_reset": {"test_averaged_perceptron"},
    "radius_first_rows": {"test_radius", "test_mistake_bound", "test_proof_squeeze"},  # both call radius
}
#: What the student reads in the feedback of the part they lose.
MESSAGES = {
    "sklearn_perceptron": ("not available while grading",),
    "epoch_off_by_one": ("train_perceptron returned a wrong",),
    "mutates_input": ("changed its argument x in place", "whichever function changed it"),
    "visible_crash": ('assert np.allclose(distances, [4.0, -1.0]), "expected [4, -1]',),
    "sign_strict": ("score is exactly 0 and must predict +1",),
    "bool_as_int": ("wrap the test in bool",),
    "lazy_array": ("an object of type _Lazy",),
    "input_transformer": ("augment",),
    "xor_memorizer": ("only the points it has seen",),
    "table_predict": ("a score of exactly 0 must predict +1",),
    "table_step": ("score is exactly 0",),
    "table_ovr_tie": ("a tie goes to the first of them",),
    "int_augment": ("integers where floats are expected",),
    "sign_epoch_cap": ("a wrong cap", "score is exactly 0"),
    "breaks_on_lists": ("passed as Python lists (array_like)", "TypeError"),
    "ragged_ovr_predict": ("not an array of shape", "[[0], [0, 0]"),
    "huge_ints": ("np.uint64(9223372036854775808)", "18446744073709551615"),
    "strings_after": ("changed its argument X in place",),
    "bool_predict": ("received: np.array([True", "not True and False"),
    "kernel_strict": ("expected 1, received 0",),
    "averaged_reset": ("the means are over all",),
}
#: What the feedback of a part must not say (a wrong cause, a value in the wrong type, a hint for code not written).
ABSENT = {
    "bool_predict": ("np.sign(0) is 0", "received: np.array([1.0"),
    "kernel_strict": ("received 0.0", "expected 1.0"),
    "averaged_reset": ("keeps counting after convergence",),
    "sign_epoch_cap": ("a wrong count",),
    "mutates_input": ("w += y * x",),
}
HIDDEN_CODE = ["BEGIN HIDDEN TESTS", "check_augment(augment)", "call_all", "__course_grader_harness", "def encode("]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("verdicts"))
    build_example_class(course, FIXTURES)
    first = grade(course, progress=False, jobs=1)
    second = grade(course, progress=False, jobs=1, force=True)  # the same submissions, regraded
    return {"course": course, "first": first, "second": second}


def feedback_text(course, student: str) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((course.feedback / student).rglob("*.html")))


@pytest.mark.slow
def test_each_student_scores_what_their_code_deserves(batch):
    outcomes = batch["first"]
    assert {o.student for o in outcomes} == set(CELLS_LOST)
    course = batch["course"]
    for outcome in outcomes:
        assert outcome.status == "graded", (outcome.student, outcome.reason)
        scores = dict(outcome.cell_scores)
        for written in course.manually_graded_cells(outcome.assignment):  # 0 until a TA grades them
            assert scores.pop(written) == 0
        lost = {cell for cell, score in scores.items() if score == 0}
        partial = {cell for cell, score in scores.items() if 0 < score}
        expected_lost = CELLS_LOST[outcome.student] & set(scores)
        assert lost == expected_lost, (outcome.student, outcome.assignment, sorted(lost))
        assert partial == set(scores) - expected_lost
        if outcome.student in ATTACKERS:
            assert outcome.score == 0, (outcome.student, outcome.cell_scores)


@pytest.mark.slow
def test_failures_say_what_differed(batch):
    course = batch["course"]
    for student, messages in MESSAGES.items():
        text = html.unescape(feedback_text(course, student))
        for message in messages:
            assert message in text, (student, message)
    for student, wrong_words in ABSENT.items():
        text = html.unescape(feedback_text(course, student))
        for words in wrong_words:
            assert words not in text, (student, words)


@pytest.mark.slow
def test_failed_random_cases_show_calls_of_bounded_length(batch):
    text = html.unescape(feedback_text(batch["course"], "radius_first_rows"))
    calls = [line.strip() for line in text.splitlines() if line.strip().startswith("radius(")]
    assert calls and max(len(call) for call in calls) <= 2_100, max(len(call) for call in calls)


@pytest.mark.slow
def test_no_feedback_shows_hidden_test_code(batch):
    course = batch["course"]
    for student in CELLS_LOST:
        text = feedback_text(course, student)
        assert text, student
        for marker in HIDDEN_CODE:
            assert marker not in text, (student, marker)


@pytest.mark.slow
def test_the_same_secret_regrades_identically(batch):
    first = {(o.student, o.assignment): o.cell_scores for o in batch["first"]}
    second = {(o.student, o.assignment): o.cell_scores for o in batch["second"]}
    assert first == second


@pytest.mark.slow
def test_the_secret_is_private_and_never_committed(batch):
    secret = batch["course"].root / SECRET_FILE
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    ignored = subprocess.run(["git", "check-ignore", "-q", SECRET_FILE], cwd=GRADER)  # this repository's rules
    assert ignored.returncode == 0, "grading_secret must be git-ignored"


@pytest.mark.slow
def test_graded_notebooks_hold_the_verdicts_not_the_hidden_tests_run(batch):
    course = batch["course"]
    notebook = nbformat.read(course.root / "autograded" / "honest_ada" / "01_geometry" / "geometry.ipynb", as_version=4)
    verdicts = [output.text for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade")
                for output in cell.outputs if output.get("output_type") == "stream" and "hidden tests pass" in output.text]
    assert len(verdicts) == 4


#: Attackers whose code needs nothing an honest solution would not: only their scores give them away.
PLAIN_LOOKING = {"wrong_only", "lookup_table", "xor_memorizer", "xor_width_skip", "labels_not_classes"}


@pytest.mark.slow
def test_suspicious_code_is_flagged_for_a_person_and_honest_code_is_not(batch):
    outcomes = batch["first"]
    flagged = {o.student for o in outcomes if o.flags}
    suspicious = (set(ATTACKERS) | {"sklearn_perceptron"}) - PLAIN_LOOKING
    assert suspicious <= flagged, sorted(suspicious - flagged)
    honest_or_buggy = {student for student in CELLS_LOST if student not in ATTACKERS and student != "sklearn_perceptron"}
    assert not (honest_or_buggy & flagged), sorted(honest_or_buggy & flagged)
    rows = (batch["course"].grades_csv).read_text(encoding="utf-8")
    assert "frame_peek,01_geometry" in rows and "_getframe" in rows


def test_a_test_cells_declarations_read_the_same_from_nbformat_text_and_from_plain_json_lines():
    from course_grader.trusted.judging.check_registry import course_checks
    from course_grader.trusted.judging.verdicts import DeclarationError, declared_in

    checks = course_checks(COURSE_ROOT).of("01_geometry")
    source = "assert augment([[1]]).shape == (1, 2)\n### BEGIN HIDDEN TESTS\ncheck_augment(augment)\n### END HIDDEN TESTS\n"
    as_text = declared_in(source, checks)
    as_lines = declared_in(source.splitlines(keepends=True), checks)  # how a notebook file on disk holds it
    assert [(d.check.function, d.target) for d in as_text] == [("augment", "augment")]
    assert as_lines == as_text
    assert declared_in("assert True\n", checks) == []  # no hidden region: nothing declared
    with pytest.raises(DeclarationError):
        declared_in(["### BEGIN HIDDEN TESTS\n", "import os; os.system('x')\n", "### END HIDDEN TESTS\n"], checks)
    with pytest.raises(DeclarationError, match="no check named check_radius in this assignment"):  # another assignment's
        declared_in("### BEGIN HIDDEN TESTS\ncheck_radius(radius)\n### END HIDDEN TESTS\n", checks)
