"""Replayable grades: the record kept for every graded submission, and `perceptron-course explain` regrading it."""

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import nbformat
import numpy as np
import pytest

from conftest import FIXTURE_COURSE, fixture_course, tree_state

from course_grader.trusted.gradebook import records
from course_grader.trusted.judging.case_sets import case_set_id, checker_id, secret_id
from course_grader.trusted.judging.check_registry import course_checks
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import prepare_cases
from course_grader.trusted.cli import main
from course_grader.trusted.course.example_class import copy_course, solved_notebook
from course_grader.trusted.gradebook.ledger import read_ledger
from course_grader.trusted.pipeline import grade
from course_grader.trusted.judging.grading_metadata import GRADING_METADATA, LIMIT_LABELS
from course_grader.trusted.course.secret import SECRET_FILE, read_secret

ASSIGNMENT = "01_geometry"
CHECKS = course_checks(FIXTURE_COURSE)
PARTS = {f"geometry/test_{name}": name for name in ("augment", "predict", "signed_distance", "set_margin")}
#: sign(0) = 0: wrong on every point with a score of exactly 0 (the buggy example student's predict).
SIGN_BUG = "import numpy as np\n\ndef predict(w, b, X):\n    return np.sign(np.asarray(X) @ np.asarray(w) + b).astype(int)\n"


def hand_in(course, student: str, predict_source: str | None = None) -> Path:
    notebook = solved_notebook(course, ASSIGNMENT, "geometry")
    if predict_source is not None:
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "predict":
                cell.source = predict_source
    folder = course.submitted / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / "geometry.ipynb")
    return folder / "geometry.ipynb"


#: What a student could write into their notebook's metadata where the grader records limits and case sets.
FORGED_METADATA = {GRADING_METADATA: {"limits_hit": list(LIMIT_LABELS),
                                     "case_sets": {"predict": {"case_set": "forged", "checker": "forged"}}}}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One student's 01_geometry (every part right, with forged grading metadata), graded once: the cheapest real grade."""
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("explain") / "course")
    path = hand_in(course, "ada")
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.update(FORGED_METADATA)
    nbformat.write(notebook, path)
    outcomes = grade(course, progress=False, jobs=1)
    assert [o.status for o in outcomes] == ["graded"]
    return course, outcomes[0]


def explain_cli(capsys, course, *argv):
    status = main(["explain", *argv, "--root", str(course.root)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def part_row(output: str, part: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(part + " "))


# ------------------------------------------------------------------ the record


@pytest.mark.slow
def test_a_graded_submission_has_a_full_record_without_the_secret(graded):
    course, outcome = graded
    path = course.reports / "records" / "ada" / f"{ASSIGNMENT}.json"
    text = path.read_text(encoding="utf-8")
    record = json.loads(text)
    secret = read_secret(course.root / SECRET_FILE)
    assert secret.hex() not in text.lower() and secret.hex().upper() not in text
    assert not any(secret.hex()[i:i + 16] in text for i in range(len(secret.hex()) - 15))  # not even a piece of it

    assert record["submission"] == read_ledger(course)[("ada", ASSIGNMENT)].submitted != ""
    assert record["course_commit"] == "not a git checkout"  # a copied course, outside any repository
    assert record["grader"]["version"] == "0.1.0" and re.fullmatch(r"[0-9a-f]{24}", record["grader"]["source"])
    assert record["secret_id"] == secret_id(secret) and re.fullmatch(r"[0-9a-f]{24}", record["case_set"])
    assert {"python", "numpy", "scipy", "scikit-learn", "nbgrader", "ipykernel", "bubblewrap"} <= set(record["environment"])
    assert record["environment"]["numpy"] == np.__version__
    assert record["isolation"]["sandbox"] is True
    assert set(record["resources"]) == {"wall_seconds", "grader_cpu_seconds", "kernels", "kernel_cpu_seconds",
                                        "kernel_peak_memory_mib"}
    assert all(isinstance(value, float) and value >= 0 for value in record["resources"].values())
    # measured by the zygote's keeper: at least one kernel, which used CPU and memory (numpy alone is tens of MiB)
    assert record["resources"]["kernels"] >= 1 and record["resources"]["kernel_cpu_seconds"] > 0
    assert record["resources"]["kernel_peak_memory_mib"] > 10
    assert record["limits_hit"] == []  # what the grader saw, not what the notebook's metadata claimed
    autograded = (course.root / "autograded" / "ada" / ASSIGNMENT / "geometry.ipynb").read_text(encoding="utf-8")
    assert "forged" not in text and "forged" not in autograded and secret.hex() not in autograded
    assert set(record["parts"]) == set(PARTS)
    for part, function in PARTS.items():
        entry = record["parts"][part]
        assert entry["graded_by"] == "tests" and entry["score"] == entry["max_score"] == outcome.cell_scores[part.split("/")[1]]
        assert list(entry["checks"]) == [function]
        assert all(re.fullmatch(r"[0-9a-f]{24}", value) for value in entry["checks"][function].values())
    assert len({entry["checks"][f]["case_set"] for entry, f in ((record["parts"][p], f) for p, f in PARTS.items())}) == 4


def test_case_set_ids_follow_the_secret_and_the_cases_and_hide_the_secret():
    check = CHECKS["predict"]
    prepared = prepare_cases(check, case_generator(b"s" * 32, "predict", "ada", "code"))
    first = case_set_id(b"s" * 32, "predict", prepared)
    assert first == case_set_id(b"s" * 32, "predict", prepare_cases(check, case_generator(b"s" * 32, "predict", "ada", "code")))
    assert first != case_set_id(b"t" * 32, "predict", prepared)  # another secret
    fewer = dataclasses.replace(prepared, cases=prepared.cases[:-1], expected=prepared.expected[:-1])
    assert first != case_set_id(b"s" * 32, "predict", fewer)  # other cases
    flipped = dataclasses.replace(prepared, expected=[-np.asarray(e) for e in prepared.expected])
    assert first != case_set_id(b"s" * 32, "predict", flipped)  # another reference
    assert secret_id(b"s" * 32) != secret_id(b"t" * 32) and (b"s" * 32).hex() not in secret_id(b"s" * 32)
    edited = dataclasses.replace(check, compare=lambda received, expected: None)
    assert checker_id(edited) != checker_id(check) == checker_id(CHECKS["predict"])


def test_the_course_commit_is_git_s_or_says_why_not(tmp_path, monkeypatch):
    course = copy_course(fixture_course(), tmp_path / "course")
    assert records.course_commit(course.root) == "not a git checkout"
    git = ["git", "-C", str(course.root), "-c", "user.name=TA", "-c", "user.email=ta@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    assert records.course_commit(course.root) == "not a git checkout (git: a repository without a commit)"
    subprocess.run([*git, "add", "nbgrader_config.py", "term.toml", "source"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "course"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert records.course_commit(course.root) == head
    notebook = course.source / ASSIGNMENT / "geometry.ipynb"
    notebook.write_text(notebook.read_text() + "\n")
    dirty = head + " (with uncommitted changes in source/, nbgrader_config.py or term.toml)"
    assert records.course_commit(course.root) == dirty
    notebook.write_text(notebook.read_text()[:-1])
    assert records.course_commit(course.root) == head
    term = course.root / "term.toml"
    seconds = course.term().limits.cell_seconds
    term.write_text(term.read_text().replace(f"cell_seconds = {seconds}", f"cell_seconds = {seconds + 5}"))  # a limit grades too
    assert records.course_commit(course.root) == dirty
    monkeypatch.setattr(records.shutil, "which", lambda name: None)
    assert records.course_commit(course.root) == "not a git checkout (git is not installed)"


# ------------------------------------------------------------------ explain


@pytest.mark.slow
def test_explain_reproduces_a_grade_and_touches_nothing(graded, capsys):
    course, _ = graded
    before = tree_state(course.root)
    status, output, error = explain_cli(capsys, course, "ada", ASSIGNMENT)
    assert status == 0, output + error
    for part in PARTS:
        assert part_row(output, part).split()[1:] == ["2/2", "2/2", "same"]
    assert "What differs from the record: nothing" in output
    assert "Result: reproduces" in output
    assert tree_state(course.root) == before  # gradebook, autograded/, feedback/, exports, records; no scratch left


@pytest.mark.slow
def test_explain_notices_a_changed_checker(graded, capsys):
    course, _ = graded
    # the instructor edits the check beside the assignment: it now expects every label flipped (its answers, in
    # the case set id, and its code change)
    checks_file = course.source / ASSIGNMENT / "hidden_checks.py"
    original = checks_file.read_text(encoding="utf-8")
    checks_file.write_text(original + (
        "\nimport dataclasses as _dataclasses\n"
        "CHECKS = tuple(_dataclasses.replace(check, reference=lambda *args, _reference=check.reference, **kwargs: "
        "-np.asarray(_reference(*args, **kwargs))) if check.function == 'predict' else check for check in CHECKS)\n"),
        encoding="utf-8")
    try:
        status, output, _ = explain_cli(capsys, course, "ada", ASSIGNMENT)
    finally:
        checks_file.write_text(original, encoding="utf-8")
    assert status == 1
    assert part_row(output, "geometry/test_predict").split()[1:4] == ["2/2", "0/2", "DIFFERS"]
    assert "checker of predict changed; cases of predict changed" in part_row(output, "geometry/test_predict")
    for part, function in PARTS.items():  # the file of every check of the assignment changed: said, scores the same
        if part != "geometry/test_predict":
            assert part_row(output, part).split()[1:4] == ["2/2", "2/2", "same"]
            assert f"checker of {function} changed" in part_row(output, part)
    assert "- the checker of augment, predict, set_margin, signed_distance: its check, comparison or reference code changed" in output
    assert "- the cases drawn for predict" in output and "the submission" not in output and "course secret" not in output
    assert "cases of augment" not in output  # their cases and answers are the same: only predict's reference changed
    assert "Result: does NOT reproduce: 1 part scored differently (geometry/test_predict)" in output
    assert "Most likely because of the checker of augment, predict, set_margin, signed_distance" in output


@pytest.mark.slow
def test_explain_notices_a_changed_submission(graded, capsys):
    course, _ = graded
    notebook = course.submitted / "ada" / ASSIGNMENT / "geometry.ipynb"
    graded_bytes = notebook.read_bytes()
    hand_in(course, "ada", SIGN_BUG)
    try:
        status, output, _ = explain_cli(capsys, course, "ada", ASSIGNMENT)
    finally:
        notebook.write_bytes(graded_bytes)
    assert status == 1
    assert part_row(output, "geometry/test_predict").split()[1:4] == ["2/2", "0/2", "DIFFERS"]
    assert "- the submission: its files are not those graded" in output
    assert "Most likely because of the submission" in output
    assert "checker" not in output  # the checks are the same; their cases are drawn from the new code


@pytest.mark.slow
def test_explain_does_not_claim_reproduction_for_other_content_with_the_same_scores(graded, capsys):
    # Attack round 12 (item 1): a hand-in that kept the digest of the graded one while its content differed was said
    # to reproduce. Now the content is compared first: a tag changed, the same (full) scores, and no reproduction.
    course, _ = graded
    notebook = course.submitted / "ada" / ASSIGNMENT / "geometry.ipynb"
    graded_bytes = notebook.read_bytes()
    edited = nbformat.reads(graded_bytes.decode("utf-8"), as_version=4)
    next(cell for cell in edited.cells if cell.cell_type == "markdown").metadata["tags"] = ["not code at all"]
    notebook.write_text(nbformat.writes(edited), encoding="utf-8")
    try:
        status, output, _ = explain_cli(capsys, course, "ada", ASSIGNMENT)
    finally:
        notebook.write_bytes(graded_bytes)
    assert status == 1
    for part, function in PARTS.items():  # the same scores, on new cases (drawn from every byte handed in)
        assert part_row(output, part).split()[1:4] == ["2/2", "2/2", "same"]
        assert f"cases of {function} changed" in part_row(output, part)
    assert "- the submission: its files are not those graded" in output
    assert "Result: does NOT reproduce: the hand-in regraded is not the one recorded" in output
    assert "Result: reproduces" not in output


def test_explain_refuses_an_unknown_student_or_assignment(capsys, tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    hand_in(course, "ada")
    status, _, error = explain_cli(capsys, course, "zed", ASSIGNMENT)
    assert status == 2 and "no submission from student zed" in error and "ada" in error
    status, _, error = explain_cli(capsys, course, "ada", "07_deep")
    assert status == 2 and "unknown assignment 07_deep" in error
    status, _, error = explain_cli(capsys, course, "ada", "02_algorithm")
    assert status == 2 and "ada handed in no 02_algorithm" in error
    status, _, error = explain_cli(capsys, course, "ada\x1b[2J", ASSIGNMENT)
    assert status == 2 and "\x1b" not in error and "ada\\x1b[2J" in error  # a name is data on the TA's terminal
    assert not (course.root / "autograded").exists() and not list(course.root.glob(".explain-*"))


@pytest.mark.slow
def test_without_a_record_explain_compares_with_the_gradebook_only(graded, capsys):
    course, _ = graded
    path = course.reports / "records" / "ada" / f"{ASSIGNMENT}.json"
    kept = path.read_bytes()
    path.unlink()  # as for a submission graded before records were kept
    try:
        before = tree_state(course.root)
        status, output, _ = explain_cli(capsys, course, "ada", ASSIGNMENT)
        assert tree_state(course.root) == before
    finally:
        path.write_bytes(kept)
    assert status == 0
    assert "no replay record" in output and "comparing with the gradebook's automatic scores only" in output
    for part in PARTS:
        assert part_row(output, part).split()[1:] == ["2/2", "2/2", "same"]
    assert "- nothing but the scores can be compared: there is no replay record" in output


@pytest.mark.slow
def test_a_failed_grading_leaves_no_record_and_explain_says_the_regrade_failed(tmp_path, capsys):
    course = copy_course(fixture_course(), tmp_path / "course")
    folder = course.submitted / "bo" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / "geometry.ipynb").write_text("{not a notebook", encoding="utf-8")
    assert [o.status for o in grade(course, progress=False, jobs=1)] == ["failed"]
    assert not (course.reports / "records" / "bo").exists()
    status, output, _ = explain_cli(capsys, course, "bo", ASSIGNMENT)
    assert status == 1
    assert "no replay record" in output and "the regrade FAILED: " in output and "not a valid notebook" in output
    assert "Result: does NOT reproduce (the regrade failed" in output


def test_explain_needs_the_course_secret_and_creates_nothing(capsys, tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    hand_in(course, "ada")
    before = tree_state(course.root)
    status, _, error = explain_cli(capsys, course, "ada", ASSIGNMENT)
    assert status == 2 and "cannot replay a grade: no course secret" in error
    assert tree_state(course.root) == before  # no gradebook created, no scratch left


def test_cases_dropped_for_want_of_a_reference_answer_reach_the_record():
    from course_grader.trusted.judging.case_sets import CASE_SETS_KEY, recorded_case_sets

    written = {CASE_SETS_KEY: {"proof_terms": {"case_set": "a", "checker": "b",
                                               "dropped": ["random separable data (the reference raised ArithmeticError)"]},
                               "radius": {"case_set": "c", "checker": "d", "dropped": [3]}}}
    recorded = recorded_case_sets(written)
    assert recorded["proof_terms"]["dropped"] == ["random separable data (the reference raised ArithmeticError)"]
    assert recorded["radius"] == {"case_set": "c", "checker": "d"}  # a malformed list is not kept
