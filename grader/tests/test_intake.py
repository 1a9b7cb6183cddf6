"""The intake rules shared by the grader and the self-check (``grader/course_grader/intake_rules.py``), on hand-ins
as students make them: renamed files, several copies, stored outputs, deleted and edited cells, forbidden imports."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import LIBRARY_PACKAGE, fixture_course

from course_grader import intake_rules
from course_grader.intake_rules import IntakeError, copy_number, examine, load_manifest, manifest_json, released_assignments
from course_grader.trusted.course.term import load_term
from course_grader.trusted.judging.check_registry import load_assignment_checks
from course_grader.trusted.judging.kernel_imports import import_rules, library_modules
from course_grader.trusted.running import sandbox

COURSE_ROOT = fixture_course()  # the grader's own course, released
ASSIGNMENTS = released_assignments(COURSE_ROOT / "release", lambda name: import_rules(COURSE_ROOT, name))
GEOMETRY = ASSIGNMENTS["01_geometry"]


def released(assignment: str = "01_geometry", name: str = "geometry", course_root: Path = COURSE_ROOT) -> dict:
    """A notebook as released by the fixture course, or by ``course_root``."""
    return json.loads((course_root / "release" / assignment / f"{name}.ipynb").read_text(encoding="utf-8"))


def as_bytes(notebook: dict) -> bytes:
    return json.dumps(notebook).encode("utf-8")


def ids_of(notebook: dict) -> list[str | None]:
    return [cell["metadata"].get("nbgrader", {}).get("grade_id") for cell in notebook["cells"]]


def without(notebook: dict, *grade_ids: str) -> dict:
    edited = copy.deepcopy(notebook)
    edited["cells"] = [cell for cell in edited["cells"] if cell["metadata"].get("nbgrader", {}).get("grade_id") not in grade_ids]
    return edited


def test_the_manifest_a_student_s_install_carries_is_what_release_holds():
    assert sorted(ASSIGNMENTS) == sorted(p.name for p in (COURSE_ROOT / "release").iterdir() if p.is_dir())
    assert all(assignment.cells for assignment in ASSIGNMENTS.values())
    shipped = load_manifest(manifest_json(ASSIGNMENTS))
    assert shipped == ASSIGNMENTS  # names, notebooks and every released cell
    assert {name: a.imports for name, a in shipped.items()} == {name: a.imports for name, a in ASSIGNMENTS.items()}
    assert [cell.metadata for cell in shipped["01_geometry"].cells] == [cell.metadata for cell in GEOMETRY.cells]


def test_the_import_rules_come_from_the_term_s_library_and_each_assignment_s_allowed_imports():
    library = load_term(COURSE_ROOT).library
    assert library.package == LIBRARY_PACKAGE and library.student_modules and library.blocked
    for name, assignment in ASSIGNMENTS.items():
        rules = assignment.imports
        assert (rules.package, rules.student_modules, rules.blocked) == (
            library.package, library.student_modules, library.blocked), name
        granted = {entry for entry in (load_assignment_checks(COURSE_ROOT, name).allowed_imports or ())
                   if entry.startswith(f"{LIBRARY_PACKAGE}.") and entry.count(".") == 2
                   and entry.split(".")[1] not in library.student_modules}
        assert {f"{LIBRARY_PACKAGE}.{module}.{n}" for module, names in rules.grants.items() for n in names} == granted, name
    assert dict(ASSIGNMENTS["04_convergence"].imports.grants) == {"theory": frozenset({"max_margin"})}


@pytest.mark.parametrize("assignment", ["01_geometry", "04_convergence"])
def test_what_the_intake_refuses_is_what_the_sandbox_s_view_stubs(tmp_path, assignment):
    """For every module of the library, the intake refuses its import exactly when the grading kernel's view holds a
    stub that raises ImportError in its place; a granted name is importable, another name of its module is not."""
    rules = ASSIGNMENTS[assignment].imports
    view = sandbox.build_student_view(tmp_path / "view", rules) / LIBRARY_PACKAGE
    modules = library_modules(LIBRARY_PACKAGE)
    assert modules and set(rules.student_modules) - {"_validation"} <= set(modules)
    for module in modules:
        stubbed = "is not available while grading" in (view / f"{module}.py").read_text(encoding="utf-8")
        assert stubbed == (module not in rules.student_modules and module not in rules.grants), (assignment, module)
        if module not in rules.grants:
            refused = intake_rules.refused_import(f"{LIBRARY_PACKAGE}.{module}", [], rules)
            assert stubbed == (refused == f"{LIBRARY_PACKAGE}.{module}"), (assignment, module, refused)
    for module, names in rules.grants.items():
        assert intake_rules.refused_import(f"{LIBRARY_PACKAGE}.{module}", sorted(names), rules) == ""
        assert intake_rules.refused_import(f"{LIBRARY_PACKAGE}.{module}", ["radius"], rules) == f"{LIBRARY_PACKAGE}.{module}"
    for blocked in rules.blocked:
        assert intake_rules.refused_import(blocked, ["Perceptron"], rules) == blocked


@pytest.mark.parametrize("stem, expected", [
    ("geometry", ("geometry", 0)), ("geometry-1", ("geometry", 1)), ("geometry (2)", ("geometry", 2)),
    ("geometry(3)", ("geometry", 3)), ("my-work", ("my-work", 0)), ("2024-geometry", ("2024-geometry", 0)),
])
def test_copy_numbers_as_lms_and_browsers_write_them(stem, expected):
    assert copy_number(stem) == expected


def test_the_one_notebook_of_a_hand_in_is_graded_whatever_its_name():
    intake = examine({"Geometry homework FINAL.ipynb": as_bytes(released())}, GEOMETRY, ASSIGNMENTS)
    assert intake.refused == "" and intake.graded_file == "Geometry homework FINAL.ipynb"
    assert intake.notes == ["Geometry homework FINAL.ipynb is graded as geometry.ipynb (the name it was handed out with)"]


def test_of_several_copies_the_latest_is_graded_and_the_others_are_named():
    files = {"geometry.ipynb": as_bytes(released()), "geometry-2.ipynb": as_bytes(released()),
             "geometry-1.ipynb": as_bytes(released()), "algorithm.ipynb": as_bytes(released("02_algorithm", "algorithm")),
             "notes.ipynb": b"{broken"}
    intake = examine(files, GEOMETRY, ASSIGNMENTS)
    assert intake.graded_file == "geometry-2.ipynb"
    assert intake.notes[1] == ("geometry-2.ipynb is graded; algorithm.ipynb is ignored (the notebook of 02_algorithm), "
                               "geometry-1.ipynb is ignored (an earlier copy), geometry.ipynb is ignored (an earlier copy), "
                               "notes.ipynb is ignored (not a notebook)")


def test_another_assignments_notebook_is_refused_and_named():
    intake = examine({"geometry.ipynb": as_bytes(released("02_algorithm", "algorithm"))}, GEOMETRY, ASSIGNMENTS)
    assert intake.notebook is None
    assert "holds none of the cells of 01_geometry" in intake.refused and "the notebook of 02_algorithm" in intake.refused


def test_stored_outputs_of_any_size_are_dropped_before_the_limits_apply():
    notebook = released()
    augment = ids_of(notebook).index("augment")
    notebook["cells"][augment]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "debug\n" * 9_000_000}]
    data = as_bytes(notebook)
    assert len(data) > 50_000_000
    intake = examine({"geometry.ipynb": data}, GEOMETRY, ASSIGNMENTS)
    assert intake.refused == "" and intake.notebook["cells"][ids_of(intake.notebook).index("augment")]["outputs"] == []
    # 9,000,000 lines of "debug\\n" (7 bytes each in JSON): 63,000,000 bytes, 60 MiB
    assert "geometry.ipynb carried 60 MiB of stored outputs: they are dropped before grading" in intake.notes


def test_what_is_run_must_still_fit_the_limits():
    notebook = released()
    notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "x" * (6 * 1024 * 1024)})
    intake = examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS)
    assert intake.refused == "geometry.ipynb is larger than the grader reads (5 MiB) once its stored outputs are dropped"
    confetti = b"[" + b"0," * intake_rules.MAX_JSON_VALUES + b"0]"  # 8 MB, but 4 million Python objects
    assert "is in more pieces than the grader reads" in examine({"g.ipynb": confetti}, GEOMETRY, ASSIGNMENTS).refused
    huge = b" " * (intake_rules.MAX_FILE_BYTES + 1)
    assert "larger than the grader reads (128 MiB, stored outputs included)" in examine({"g.ipynb": huge}, GEOMETRY, ASSIGNMENTS).refused


@pytest.mark.parametrize("kind", ["markdown", "code"])
def test_text_and_code_cells_have_limits_of_their_own(kind):
    """Code too: 5 MiB of ``a;`` in one cell (round 11's ``astbomb``) took 15-26 s and 4.5 GB to parse for its imports."""
    per_cell, in_all = ((intake_rules.MAX_TEXT_CELL, intake_rules.MAX_TEXT_TOTAL) if kind == "markdown"
                        else (intake_rules.MAX_CODE_CELL, intake_rules.MAX_CODE_TOTAL))
    filler = "a;" if kind == "code" else "ab"

    def with_cells(*sizes: int) -> str:
        notebook = released()
        notebook["cells"] += [{"cell_type": kind, "metadata": {}, "source": (filler * size)[:size],
                               **({"outputs": [], "execution_count": None} if kind == "code" else {})} for size in sizes]
        return examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS).refused

    what = "text" if kind == "markdown" else "code"
    expected = (f"geometry.ipynb is refused: its {what} cells are too long (at most {per_cell:,} characters each, "
                f"{in_all:,} in all)")
    assert with_cells(per_cell) == ""
    assert with_cells(per_cell + 1) == expected
    assert with_cells(*[per_cell] * (in_all // per_cell + 1)) == expected


def test_a_deleted_solution_cell_is_named_missing_and_put_back_empty_where_it_was():
    notebook = without(released(), "predict", "test_augment")
    intake = examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS)
    assert [grade_id for grade_id in ids_of(intake.notebook) if grade_id] == [cell.grade_id for cell in GEOMETRY.cells]
    restored = intake.notebook["cells"][ids_of(intake.notebook).index("predict")]
    assert 'raise NotImplementedError("write predict' in restored["source"]
    assert intake.notes == ["the cell where you write predict (predict) is missing: it is put back empty, "
                            "so the tests of predict score 0",
                            "deleted cells are put back from the assignment: test_augment"]


def test_an_edited_locked_cell_is_named():
    notebook = released()
    notebook["cells"][ids_of(notebook).index("test_predict")]["source"] = "pass"
    intake = examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS)
    assert intake.notes == ["the test cell test_predict was edited: the grader runs the original"]


@pytest.mark.parametrize("code, refused", [
    ("from perceptron_fixture.geometry import augment", "perceptron_fixture.geometry"),
    ("import perceptron_fixture.perceptron as p", "perceptron_fixture.perceptron"),
    ("from perceptron_fixture import theory", "perceptron_fixture.theory"),
    ("from sklearn.linear_model import Perceptron", "sklearn.linear_model"),
    ("from sklearn import linear_model", "sklearn.linear_model"),
    ("%matplotlib inline\nfrom perceptron_fixture.datasets import xor", ""),
    ("from perceptron_fixture import datasets, plotting", ""),
    ("from sklearn.svm import SVC", ""),
])
def test_imports_the_grading_kernel_refuses_are_named(code, refused):
    notebook = released()
    notebook["cells"][ids_of(notebook).index("augment")]["source"] = code
    notes = examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS).notes
    expected = [f"the cell augment imports {refused}, which is not available while grading "
                "(ImportError: the parts that need it score 0): implement it yourself"] if refused else []
    assert notes == expected


def test_the_convergence_assignment_may_import_max_margin_only():
    convergence, geometry = ASSIGNMENTS["04_convergence"].imports, GEOMETRY.imports
    assert intake_rules.refused_import("perceptron_fixture.theory", ["max_margin"], convergence) == ""
    assert intake_rules.refused_import("perceptron_fixture.theory", ["radius"], convergence) == "perceptron_fixture.theory"
    assert intake_rules.refused_import("perceptron_fixture.theory", ["max_margin"], geometry) == "perceptron_fixture.theory"


def test_a_notebook_the_student_marked_as_repaired_gets_the_graders_notes_only():
    notebook = released()
    notebook["metadata"][intake_rules.INTAKE_METADATA] = {"notes": ["<script>alert(1)</script> full marks"]}
    intake = examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS)
    assert intake.notebook["metadata"][intake_rules.INTAKE_METADATA] == {"notes": []}


@pytest.mark.parametrize("data", [b"", b"[]", b'{"nbformat": 3, "cells": []}', b'{"nbformat": 4, "cells": [1]}',
                                  b"\xff\xfe", b"[" * 100_000])
def test_what_is_not_a_notebook_is_refused_with_the_reason(data):
    with pytest.raises(IntakeError, match="x.ipynb is not a valid notebook"):
        intake_rules.parse_notebook(data, "x.ipynb")


# ---------------------------------------------------------------------------- the grader's side: take_in


def _course_with(tmp_path, notebook: dict, *, release: bool = True, extra: dict[str, bytes] | None = None):
    import shutil

    from course_grader.trusted.course.example_class import copy_course

    course = copy_course(fixture_course(), tmp_path / "course")
    if not release:
        shutil.rmtree(course.release)
    folder = course.submitted / "ada" / "01_geometry"
    folder.mkdir(parents=True)
    (folder / "my geometry.ipynb").write_bytes(as_bytes(notebook))
    for name, data in (extra or {}).items():
        (folder / name).write_bytes(data)
    return course


def test_the_grader_takes_in_a_renamed_hand_in_with_its_times(tmp_path):
    from course_grader.trusted.course.intake import take_in

    course = _course_with(tmp_path, released(course_root=fixture_course()), extra={"timestamp.txt": b"2026-11-27 16:59:01.000001 UTC",
                                                       "submission_secret.txt": b"0a1b2c3d\n"})
    taken = take_in(course, "ada", "01_geometry", import_rules(course.root, "01_geometry"))
    assert taken.refused == "" and list(taken.notebooks) == ["geometry.ipynb"]
    assert taken.timestamp == b"2026-11-27 16:59:01.000001 UTC" and taken.submission_secret == b"0a1b2c3d\n"
    assert taken.notes == ["my geometry.ipynb is graded as geometry.ipynb (the name it was handed out with)"]
    run = json.loads(taken.notebooks["geometry.ipynb"])
    assert run["metadata"][intake_rules.INTAKE_METADATA] == {"notes": taken.notes}


@pytest.mark.parametrize("timestamp, secret", [(b"yesterday-ish", b"../../etc"), (b"\xff", b"a" * 300)])
def test_a_timestamp_that_is_no_date_and_a_secret_that_is_not_plain_are_left_behind(tmp_path, timestamp, secret):
    from course_grader.trusted.course.intake import take_in

    course = _course_with(tmp_path, released(course_root=fixture_course()), extra={"timestamp.txt": timestamp, "submission_secret.txt": secret})
    taken = take_in(course, "ada", "01_geometry", import_rules(course.root, "01_geometry"))
    assert taken.timestamp is None and taken.submission_secret is None
    assert "timestamp.txt does not hold a date: ignored, so lateness is not known" in taken.notes


def test_without_release_no_solution_or_hidden_test_is_put_back(tmp_path):
    from course_grader.trusted.course.intake import take_in

    course = _course_with(tmp_path, without(released(course_root=fixture_course()), "predict", "test_predict"), release=False)
    taken = take_in(course, "ada", "01_geometry", import_rules(course.root, "01_geometry"))
    text = taken.notebooks["geometry.ipynb"].decode()
    assert "BEGIN" not in text and "check_predict" not in text and "np.where" not in text
    assert not any("was edited" in note for note in taken.notes)
    assert any("the solution cell predict is missing" in note for note in taken.notes)


def test_pasted_and_foreign_cell_ids_are_named_and_cell_ids_made_unique():
    notebook = released()
    pasted = copy.deepcopy(notebook["cells"][ids_of(notebook).index("test_predict")])
    foreign = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "perceptron_step", "solution": True, "grade": False,
                                                              "locked": False, "schema_version": 3}},
               "source": "x = 1", "outputs": [], "execution_count": None, "id": pasted["id"]}
    notebook["cells"] += [pasted, foreign]
    intake = examine({"geometry.ipynb": as_bytes(notebook)}, GEOMETRY, ASSIGNMENTS)
    assert intake.notes == [
        "the cell test_predict appears 2 times: only the first is graded, the copies run as ordinary cells",
        "a cell carries the id perceptron_step, which is not a cell of 01_geometry: it runs as an ordinary cell"]
    cell_ids = [cell["id"] for cell in intake.notebook["cells"]]
    assert len(set(cell_ids)) == len(cell_ids)


def test_an_assignment_as_released_is_parsed_once_and_again_when_its_file_changes(tmp_path):
    from course_grader.trusted.course.example_class import copy_course
    from course_grader.trusted.course.intake import expected_assignment

    course = copy_course(fixture_course(), tmp_path / "course")
    first = expected_assignment(course, "01_geometry", "geometry")
    assert expected_assignment(course, "01_geometry", "geometry").cells is first.cells  # not parsed again
    copy = copy_course(course.root, tmp_path / "copy")  # a job's copy of the course: the same bytes
    assert expected_assignment(copy, "01_geometry", "geometry").cells is first.cells
    path = course.release / "01_geometry" / "geometry.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    solution = next(cell for cell in notebook["cells"] if cell["metadata"].get("nbgrader", {}).get("grade_id") == "augment")
    solution["source"] = "def augment(X):\n    raise NotImplementedError  # changed\n"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    again = expected_assignment(course, "01_geometry", "geometry")
    assert again.cells is not first.cells
    assert "# changed" in next(cell.source for cell in again.cells if cell.grade_id == "augment")


def test_grading_settings_a_student_changed_are_put_back_as_released_and_named():
    """Attack round 13, finding 5: a solution cell marked graded stopped nbgrader's autograde (0 for a correct hand-in)."""
    algorithm = ASSIGNMENTS["02_algorithm"]
    notebook = released("02_algorithm", "algorithm")
    step = notebook["cells"][ids_of(notebook).index("perceptron_step")]["metadata"]["nbgrader"]
    step.update(grade=True, points=50)
    tests = notebook["cells"][ids_of(notebook).index("test_perceptron_step")]["metadata"]["nbgrader"]
    tests.update(points="<b>100</b>", locked=False)
    intake = examine({"algorithm.ipynb": as_bytes(notebook)}, algorithm, ASSIGNMENTS)
    as_released = {cell.grade_id: cell.metadata["nbgrader"] for cell in algorithm.cells}
    for cell in intake.notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in as_released:
            for key in intake_rules.GRADING_KEYS:
                assert cell["metadata"]["nbgrader"].get(key) == as_released[grade_id].get(key), (grade_id, key)
    assert intake.notes == [
        "the cell where you write perceptron_step (perceptron_step) had its nbgrader settings changed (grade, points): "
        "the grader uses the assignment's",
        "the test cell test_perceptron_step had its nbgrader settings changed (points, locked): the grader uses the assignment's"]
    assert examine({"algorithm.ipynb": as_bytes(released("02_algorithm", "algorithm"))}, algorithm, ASSIGNMENTS).notes == []


def test_the_self_check_names_a_solution_cell_marked_graded_and_lists_each_part_once(tmp_path):
    from course_grader.selfcheck import take_in as self_check_take_in
    from course_grader.trusted.course.example_class import copy_course

    notebook = released("02_algorithm", "algorithm")
    step = notebook["cells"][ids_of(notebook).index("perceptron_step")]["metadata"]["nbgrader"]
    step.update(grade=True, points=50)
    path = tmp_path / "course" / "work" / "algorithm.ipynb"  # in a course checkout: its release/ says what is expected
    copy_course(fixture_course(), tmp_path / "course")
    path.parent.mkdir()
    path.write_bytes(as_bytes(notebook))
    taken, assignment, notes, refused = self_check_take_in(path)
    assert (assignment.name, refused) == ("02_algorithm", "")
    assert any("perceptron_step (perceptron_step) had its nbgrader settings changed (grade, points)" in note for note in notes)
    graded = [cell.metadata.nbgrader.grade_id for cell in taken.cells if cell.metadata.get("nbgrader", {}).get("grade")]
    assert "perceptron_step" not in graded
