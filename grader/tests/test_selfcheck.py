"""The student's self-check: runs a saved assignment and says what passes, fails, is missing."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import fixture_course

from course_grader import intake_rules, selfcheck
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import solutions_by_test_cell

COURSE_ROOT = fixture_course()  # the grader's own course, released: a course checkout, as the self-check finds it
GEOMETRY = COURSE_ROOT / "release" / "01_geometry" / "geometry.ipynb"
# The self-check judges a notebook against the course's release: what 01_geometry's parts are, and how many points
# each is worth, comes from the fixture course's source/.
GEOMETRY_TESTS = list(solutions_by_test_cell(Course.open(COURSE_ROOT), "01_geometry"))



@pytest.fixture
def tmp_path(tmp_path):
    """A checkout of the fixture course (config, term, source, release): the self-check finds what a hand-in must be
    in the course above the notebook, as in a course checkout (a student's install carries its bundle's copy)."""
    from course_grader.trusted.course.example_class import copy_course

    copy_course(COURSE_ROOT, tmp_path)
    return tmp_path


CORRECT_AUGMENT = '''def augment(X):
    X = np.asarray(X, dtype=float)
    return np.hstack([np.ones((X.shape[0], 1)), X])
'''
# The classic bug the visible test names: np.sign(0) is 0, not +1.
BUGGY_PREDICT = '''def predict(w, b, X):
    return np.sign(np.asarray(X) @ w + b).astype(int)
'''


def fill(notebook, function: str, code: str) -> None:
    """Replace the body of the solution cell that defines ``function``."""
    (cell,) = [c for c in notebook.cells if c.cell_type == "code" and c.source.lstrip().startswith(f"def {function}(")]
    cell.source = code


def write_geometry(tmp_path: Path, **solutions: str) -> Path:
    notebook = nbformat.read(GEOMETRY, as_version=4)
    for function, code in solutions.items():
        fill(notebook, function, code)
    path = tmp_path / "geometry.ipynb"
    nbformat.write(notebook, path)
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "course_grader.selfcheck", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_reports_pass_fail_and_missing_parts_with_their_messages(tmp_path):
    path = write_geometry(tmp_path, augment=CORRECT_AUGMENT, predict=BUGGY_PREDICT)
    before = path.read_bytes()

    report = selfcheck.check_notebook(path)

    assert [(part.grade_id, part.status) for part in report.parts] == [
        ("test_augment", "passes"), ("test_predict", "fails"),
        *[(grade_id, "not implemented") for grade_id in GEOMETRY_TESTS if grade_id not in ("test_augment", "test_predict")],
    ]
    assert [part.title.split(" ", 1)[0] for part in report.parts] == [f"{n}." for n in range(1, len(report.parts) + 1)]
    assert report.parts[1].message.startswith("AssertionError: expected [1, -1, 1]")
    assert "signed_distance" in report.parts[2].message
    assert report.other_errors == []
    assert not report.ready
    assert path.read_bytes() == before, "the self-check must not change the student's file"


@pytest.mark.slow
def test_command_prints_one_screen_and_exits_1_until_every_test_passes(tmp_path):
    result = run_cli(str(write_geometry(tmp_path, augment=CORRECT_AUGMENT, predict=BUGGY_PREDICT)))

    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) <= 24, result.stdout
    assert f"1 of {len(GEOMETRY_TESTS)} visible tests pass; 1 fail; {len(GEOMETRY_TESTS) - 2} not implemented yet." in lines
    assert any(line.strip().startswith("FAILS") and "Prediction" in line for line in lines)
    assert result.stderr == "", "kernel noise on stderr would clutter the student's screen"


@pytest.mark.slow
def test_a_crashing_setup_cell_and_a_dead_kernel_are_reported(tmp_path):
    notebook = nbformat.read(GEOMETRY, as_version=4)
    notebook.cells.insert(2, nbformat.v4.new_code_cell("import not_a_module_anywhere"))
    notebook.cells.insert(4, nbformat.v4.new_code_cell("import os\nos._exit(1)"))
    for cell in notebook.cells[5:]:  # outputs saved from an earlier session are not results
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = 7, [nbformat.v4.new_output("stream", text="all good\n")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(notebook, path)

    report = selfcheck.check_notebook(path)

    assert any("kernel died" in error for error in report.other_errors), report.other_errors
    assert any("ModuleNotFoundError" in error for error in report.other_errors), report.other_errors
    assert {part.status for part in report.parts} == {"not run"}


ENDLESS_CELL_SECONDS = 15


@pytest.mark.slow
def test_an_endless_loop_is_stopped_and_named_and_the_rest_still_runs(tmp_path):
    endless = "def augment(X):\n    while True:\n        pass\n"
    path = write_geometry(tmp_path, augment=endless, predict=BUGGY_PREDICT)

    # Each cell's limit: long enough for the cells before the loop (imports) on a loaded machine, so that the loop,
    # and only the loop, is stopped.
    report = selfcheck.check_notebook(path, timeout=ENDLESS_CELL_SECONDS)

    assert report.parts[0].status == "fails"
    assert report.parts[0].message.startswith(f"stopped after {ENDLESS_CELL_SECONDS} s"), report.parts[0].message
    assert report.parts[1].status == "fails", "cells after the stopped one must still run"


@pytest.mark.slow
def test_agrees_with_nbgraders_validator_on_every_assignment_of_a_buggy_student(tmp_path):
    from nbgrader.validator import Validator

    from course_grader.trusted.course.course import Course
    from course_grader.trusted.course.example_class import build_submission, load_recipes

    course = Course.open(COURSE_ROOT)
    recipe = load_recipes(COURSE_ROOT / "example_class")["cy_buggy"]
    failing = set()
    for assignment in course.assignments():
        build_submission(course, recipe, assignment, tmp_path / assignment)
        (path,) = (tmp_path / assignment).glob("*.ipynb")
        test_sources = {
            cell.source.strip(): cell.metadata.nbgrader.grade_id
            for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")
        }

        report = selfcheck.check_notebook(path)
        failed = Validator(ignore_checksums=True).validate(str(path)).get("failed", [])

        assert {part.grade_id for part in report.parts} == set(test_sources.values())
        assert {part.grade_id for part in report.parts if part.status != "passes"} == {
            test_sources[cell["source"]] for cell in failed
        }, assignment
        failing |= {(assignment, part.grade_id) for part in report.parts if part.status == "fails"}
    # np.sign(0) == 0 breaks the visible test of predict (example_class/cy_buggy.py).
    assert ("01_geometry", "test_predict") in failing


@pytest.mark.slow
def test_the_reference_solutions_are_ready_to_hand_in_in_every_assignment(tmp_path):
    from course_grader.trusted.course.course import Course
    from course_grader.trusted.course.example_class import solved_notebook

    course = Course.open(COURSE_ROOT)
    not_ready = {}
    for assignment in course.assignments():
        for name in course.notebook_names(assignment):
            path = tmp_path / assignment / f"{name}.ipynb"
            path.parent.mkdir()
            nbformat.write(solved_notebook(course, assignment, name), path)
            report = selfcheck.check_notebook(path)
            if not report.ready:
                not_ready[assignment] = selfcheck.format_report(report)

    assert not_ready == {}, "a correct answer must never be flagged"


@pytest.mark.slow
def test_written_answers_are_listed_as_to_write_until_written(tmp_path):
    release = COURSE_ROOT / "release" / "04_convergence" / "convergence.ipynb"
    notebook = nbformat.read(release, as_version=4)
    answers = [c for c in notebook.cells if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")]
    assert answers, "04_convergence has a written answer graded by hand"
    path = tmp_path / "convergence.ipynb"
    nbformat.write(notebook, path)

    unwritten = selfcheck.check_notebook(path)
    answers[0].source = "# My answer\nBecause the bias is one more weight of the augmented points."
    nbformat.write(notebook, path)
    written = selfcheck.check_notebook(path)

    assert [a.status for a in unwritten.answers] == ["to write"] * len(answers)
    assert "written answers still to write" in selfcheck.format_report(unwritten)
    assert written.answers[0].status == "written"
    assert written.answers[0].title == unwritten.answers[0].title
    assert "In your own words" in written.answers[0].title
    assert [p.title for p in written.parts] == [p.title for p in unwritten.parts], "an answer's own heading is not a part title"


def test_a_missing_or_broken_file_exits_2_with_the_reason(tmp_path, capsys):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json", encoding="utf-8")

    assert selfcheck.main([str(tmp_path / "missing.ipynb")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert selfcheck.main([str(broken)]) == 2
    assert "not a readable notebook" in capsys.readouterr().err


def test_a_notebook_asking_for_a_kernel_that_is_not_installed_exits_2(tmp_path, capsys):
    notebook = nbformat.read(GEOMETRY, as_version=4)
    notebook.metadata.kernelspec = {"name": "no-such-kernel", "display_name": "gone", "language": "python"}
    path = tmp_path / "other_kernel.ipynb"
    nbformat.write(notebook, path)

    assert selfcheck.main([str(path)]) == 2
    assert "kernel 'no-such-kernel', which is not installed" in capsys.readouterr().err


def test_a_self_check_started_inside_a_self_check_does_nothing(monkeypatch, capsys):
    monkeypatch.setenv(selfcheck.NESTED_MARKER, "1")

    assert selfcheck.main([str(GEOMETRY)]) == 0
    assert "not run from inside a self-check" in capsys.readouterr().out


def test_cell_timeout_is_the_term_files_and_the_graders():
    from course_grader.trusted.course.course import Course, load_config

    course = Course.open(COURSE_ROOT)
    assert selfcheck.cell_timeout(COURSE_ROOT) == course.term().limits.cell_seconds == load_config(course).Execute.timeout
    assert "CELL_TIMEOUT_SECONDS" not in Path(selfcheck.__file__).read_text(encoding="utf-8")  # no second constant


def test_selfcheck_needs_no_grading_code_and_no_nbgrader():
    imported = {
        alias.name if isinstance(node, ast.Import) else node.module
        for node in ast.walk(ast.parse(Path(selfcheck.__file__).read_text(encoding="utf-8")))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert not {name for name in imported if name and ("grading" in name or "nbgrader" in name)}, imported


# ---------------------------------------------------------------------------- the self-check is the grader's intake

SOLVED_BY_HAND = {  # correct solutions, each written here (not taken from source/)
    "augment": CORRECT_AUGMENT,
    "predict": "def predict(w, b, X):\n    scores = np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b\n"
               "    return np.where(scores >= 0, 1, -1)\n",
    "signed_distance": "def signed_distance(w, b, X):\n    w = np.asarray(w, dtype=float)\n"
                       "    return (np.asarray(X, dtype=float) @ w + b) / np.linalg.norm(w)\n",
    "set_margin": "def set_margin(w, b, X, y):\n    w = np.asarray(w, dtype=float)\n"
                  "    return float(np.min(np.asarray(y) * (np.asarray(X, dtype=float) @ w + b)) / np.linalg.norm(w))\n",
}


def hand_in(folder: Path, file_name: str, edit=None) -> Path:
    """A correct geometry notebook handed in as ``file_name``, after ``edit(notebook)``."""
    notebook = nbformat.read(GEOMETRY, as_version=4)
    for function, code in SOLVED_BY_HAND.items():
        fill(notebook, function, code)
    if edit is not None:
        edit(notebook)
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / file_name)
    return folder / file_name


def _debug_output(notebook) -> None:
    """50 MB of stored debug output: 2,500,000 lines of 20 characters."""
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", text="debug: step 1234567\n" * 2_500_000)]


def _imports_reference(notebook) -> None:
    fill(notebook, "predict", "from perceptron_fixture.perceptron import predict\n")


def _deletes_solution(notebook) -> None:
    notebook.cells = [c for c in notebook.cells if not c.source.lstrip().startswith("def signed_distance(")]


def _marks_solution_graded(notebook) -> None:
    """Attack round 13 (finding 5): nbgrader's toolbar makes a solution cell an "autograded answer" with points."""
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "predict":
            cell.metadata["nbgrader"].update(grade=True, points=50)


HAND_INS = {  # student: (file name, edit, the part the grader must give 0, or None)
    "renamed": ("geometry (1).ipynb", None, None),
    "oversized": ("geometry.ipynb", _debug_output, None),
    "imports_reference": ("geometry-1.ipynb", _imports_reference, "test_predict"),
    "deleted_solution": ("geometry.ipynb", _deletes_solution, "test_signed_distance"),
    "marked_graded": ("geometry.ipynb", _marks_solution_graded, None),
}


@pytest.mark.slow
def test_a_green_self_check_means_the_grader_runs_the_notebook_as_it_is(tmp_path):
    from course_grader.trusted.course.example_class import copy_course
    from course_grader.trusted.pipeline import grade

    course = copy_course(COURSE_ROOT, tmp_path / "course")
    reports = {}
    for student, (file_name, edit, _) in HAND_INS.items():
        path = hand_in(course.submitted / student / "01_geometry", file_name, edit)
        reports[student] = selfcheck.check_notebook(path)
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=1)}
    for student, (file_name, _, lost) in HAND_INS.items():
        report, outcome = reports[student], outcomes[student]
        assert outcome.status == "graded", (student, outcome.reason)
        assert report.ready == (lost is None) == (outcome.score == outcome.max_score), (student, report, outcome)
        for part in report.parts:  # the same parts pass, and the same fail
            full = course.graded_cells("01_geometry")[part.grade_id]
            assert (part.status == "passes") == (outcome.cell_scores[part.grade_id] == full), (student, part, outcome.cell_scores)
        assert {grade_id for grade_id, score in outcome.cell_scores.items() if score == 0} == ({lost} if lost else set())
        # what the self-check says of the file is what the grader says: the same notes, word for word
        assert all(note in outcome.reason for note in report.intake_notes), (student, report.intake_notes, outcome.reason)
    assert any("geometry (1).ipynb is graded as geometry.ipynb" in note for note in reports["renamed"].intake_notes)
    assert any("MiB of stored outputs: they are dropped before grading" in note for note in reports["oversized"].intake_notes)
    assert any("imports perceptron_fixture.perceptron, which is not available while grading" in note
               for note in reports["imports_reference"].intake_notes)
    assert any("the cell where you write signed_distance (signed_distance) is missing" in note
               for note in reports["deleted_solution"].intake_notes)
    assert any("the cell where you write predict (predict) had its nbgrader settings changed (grade, points)" in note
               for note in reports["marked_graded"].intake_notes)
    formatted = selfcheck.format_report(reports["deleted_solution"])
    assert "is missing: it is put back empty" in formatted and "run the cell that defines it" not in formatted


def test_a_file_larger_than_the_grader_reads_is_refused_by_the_self_check_too(tmp_path):
    path = tmp_path / "geometry.ipynb"
    path.write_bytes(b" " * (intake_rules.MAX_FILE_BYTES + 1))
    report = selfcheck.check_notebook(path)
    assert not report.ready and "larger than the grader reads (128 MiB, stored outputs included)" in report.refused
    assert "the grader refuses this file, so it would score 0" in selfcheck.format_report(report)


# ---------------------------------------------------------------------------- the due date

DUE = {"01_geometry": __import__("datetime").datetime(2026, 11, 27, 16, 0, tzinfo=__import__("datetime").timezone.utc)}


def _at(day: int, hour: int, minute: int = 0):
    import datetime as dt

    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.timezone.utc)


def test_the_due_date_is_shown_before_it_and_a_warning_after_it_that_names_extensions():
    before = selfcheck.due_date_notice("01_geometry", _at(25, 12), DUE)
    after = selfcheck.due_date_notice("01_geometry", _at(28, 18, 30), DUE)

    assert before.startswith("Due date of 01_geometry: 2026-11-27 16:00 UTC") and "in 2 d 4 h" in before
    assert "WARNING" not in before and "extension" in before
    assert after.startswith("WARNING: the due date of 01_geometry, 2026-11-27 16:00 UTC") and "passed 1 d 2 h ago" in after
    assert "extensions are per student and not known to this check" in after
    assert selfcheck.due_date_notice("01_geometry", DUE["01_geometry"], DUE).startswith("WARNING")  # due means passed
    assert selfcheck.due_date_notice("02_algorithm", _at(25, 12), DUE) == ""  # no due date carried
    assert selfcheck.due_date_notice(None, _at(25, 12), DUE) == ""  # not one of the course's notebooks
    with pytest.raises(ValueError, match="timezone"):
        selfcheck.due_date_notice("01_geometry", _at(25, 12).replace(tzinfo=None), DUE)


def test_the_report_shows_the_due_date_notice_under_its_first_line_even_for_a_refused_file():
    notice = selfcheck.due_date_notice("01_geometry", _at(28, 18), DUE)
    ran = selfcheck.SelfCheckReport(Path("geometry.ipynb"), [selfcheck.PartResult("1. Augment", "test_augment", "passes")],
                                    [], [], 3.0, due_notice=notice)
    refused = selfcheck.SelfCheckReport(Path("geometry.ipynb"), [], [], [], 0.0, (), "too large", notice)

    assert selfcheck.format_report(ran).splitlines()[2] == notice
    assert notice in selfcheck.format_report(refused).splitlines()
    assert "WARNING" not in selfcheck.format_report(selfcheck.SelfCheckReport(Path("geometry.ipynb"), [], [], [], 3.0))


def test_a_bad_entry_in_the_bundled_due_dates_is_left_out(monkeypatch):
    monkeypatch.setattr(selfcheck, "course_settings", lambda start=None: {"due_dates": {
        "01_geometry": "2026-11-27T16:00:00+00:00", "02_algorithm": "next friday",
        "03_worked_example": "2026-11-27T16:00:00"}})  # no zone: which day would that be?

    assert selfcheck.due_dates() == DUE


def outputs_text(cell) -> str:
    return "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")


def without_seconds(report: str) -> str:
    """The report with its run's duration left out (two runs take different times)."""
    import re

    return re.sub(r"in a fresh kernel in \d+ s", "in a fresh kernel in N s", report)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["as JupyterLab starts the kernel", "with the file named"])
def test_check_all_from_the_notebook_prints_what_the_command_prints(tmp_path, how):
    from nbclient import NotebookClient

    path = write_geometry(tmp_path, augment=CORRECT_AUGMENT, predict=BUGGY_PREDICT)
    notebook = nbformat.read(path, as_version=4)
    call = "check_all()" if how.startswith("as JupyterLab") else f"check_all({path.name!r})"
    notebook.cells.append(nbformat.v4.new_code_cell(f"from course_grader.selfcheck import check_all\n{call}"))
    nbformat.write(notebook, path)  # saved, as the student saves before checking
    command = run_cli(str(path))

    # The student's kernel, in the notebook's folder; JupyterLab names the notebook in JPY_SESSION_NAME.
    session = {"JPY_SESSION_NAME": str(path)} if how.startswith("as JupyterLab") else {}
    client = NotebookClient(notebook, timeout=300, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env={**{k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}, **session})

    shown = outputs_text(notebook.cells[-1])
    outputs = notebook.cells[-1].outputs
    assert outputs and {output.output_type for output in outputs} == {"stream"}  # no Out[…] under the report
    assert command.returncode == 1 and "2. Prediction (2 points)" in command.stdout
    assert without_seconds(shown) == without_seconds(command.stdout)
    assert "check_all does nothing while the notebook itself is being checked" not in shown  # nor in the nested run's report


def test_check_all_says_how_to_name_the_notebook_when_the_kernel_cannot_tell(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert selfcheck.notebook_of_this_kernel({}) is None
    assert selfcheck.check_all() is None
    assert 'give its file name, e.g. check_all("geometry.ipynb")' in capsys.readouterr().out
    monkeypatch.setenv(selfcheck.NESTED_MARKER, "1")  # inside the self-check's own run: nothing happens
    assert selfcheck.check_all(str(GEOMETRY)) is None
    assert "check_all does nothing" in capsys.readouterr().out


def test_the_notebook_of_a_kernel_is_found_by_the_names_front_ends_give(tmp_path, monkeypatch):
    notebook = tmp_path / "geometry.ipynb"
    notebook.write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert selfcheck.notebook_of_this_kernel({"__session__": str(notebook)}) == notebook  # a path on disk
    assert selfcheck.notebook_of_this_kernel({"__session__": "assignments/01_geometry/geometry.ipynb"}) == notebook  # server-relative
    assert selfcheck.notebook_of_this_kernel({"__vsc_ipynb_file__": str(notebook)}) == notebook  # VS Code
    monkeypatch.setenv("JPY_SESSION_NAME", "geometry.ipynb")
    assert selfcheck.notebook_of_this_kernel({}) == notebook
    assert selfcheck.notebook_of_this_kernel({"__session__": "console-1-abc"}) == notebook  # a console: the variable


@pytest.mark.slow
def test_a_hand_in_that_calls_check_all_is_graded_as_without_it_unflagged(tmp_path):
    # The README tells students to call check_all from a cell: the grader must neither flag it nor fail it,
    # and in the grading kernel it must start nothing.
    from course_grader.trusted import pipeline
    from course_grader.trusted.course.example_class import build_submission, copy_course

    def with_check_all(notebook):
        notebook.cells.append(nbformat.v4.new_code_cell(
            "from course_grader.selfcheck import check_all\ncheck_all()\ncheck_all('geometry.ipynb')"))
        return notebook

    course = copy_course(COURSE_ROOT, tmp_path / "course")
    for student, recipe in (("ada", {"BASE": "solutions"}), ("bea", {"BASE": "solutions", "EDITS": {"01_geometry": with_check_all}})):
        build_submission(course, recipe, "01_geometry", course.submitted / student / "01_geometry")
    outcomes = {outcome.student: outcome for outcome in pipeline.grade(course, progress=False, jobs=1)}

    assert outcomes["bea"].status == "graded" and outcomes["bea"].flags == []
    assert outcomes["bea"].cell_scores == outcomes["ada"].cell_scores and outcomes["bea"].score == outcomes["bea"].max_score
    graded = nbformat.read(course.root / "autograded" / "bea" / "01_geometry" / "geometry.ipynb", as_version=4)
    assert "check_all" in graded.cells[-1].source and graded.cells[-1].outputs == []  # no error, nothing started


def test_the_report_lists_tests_and_written_answers_in_the_notebooks_order(tmp_path):
    """A written answer between two tested parts is listed between them (not after every test)."""
    def heading(text):
        return nbformat.v4.new_markdown_cell(f"## {text}")

    def test(grade_id):
        return nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {"grade": True, "grade_id": grade_id,
                                                                               "points": 1, "solution": False}})

    answer = nbformat.v4.new_markdown_cell("Because it converges.", metadata={
        "nbgrader": {"grade": True, "grade_id": "why", "points": 1, "solution": True}})
    notebook = nbformat.v4.new_notebook(cells=[heading("3. Third"), test("t3"), heading("4. Fourth, written"), answer,
                                               heading("5. Fifth"), test("t5")])
    report = selfcheck.summarise(notebook, tmp_path / "n.ipynb", 1.0, None, 10)
    titles = [line.strip().split("  ", 1)[1].strip() for line in selfcheck.format_report(report).splitlines()
              if line.startswith("  ") and line.split()[0] in ("NOT", "PASSES", "WRITTEN", "FAILS")]
    assert titles == ["3. Third", "4. Fourth, written", "5. Fifth"]
