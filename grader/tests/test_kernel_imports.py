"""What a grading kernel may import of a course's library: one set of rules, from term.toml and ALLOWED_IMPORTS.

Each test makes a tiny course with a library of its own (``tinylib``: a student module, a graded module, and a
private helper that defines the one name an assignment is granted), so nothing here depends on any real course.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from course_grader import intake_rules
from course_grader.intake_rules import ImportRules, refused_import
from course_grader.trusted.course.course import CourseError
from course_grader.trusted.course.term import TermError, load_term
from course_grader.trusted.judging import check_registry, kernel_imports
from course_grader.trusted.running import sandbox

TERM = """\
[course]
id = "tiny"

[limits]
cell_seconds = 5
notebook_seconds = 60
max_restarts = 1
memory_mib = 1024

[bundle]
name = "tiny-student"

[library]
package = "{package}"
student_modules = ["data"]
blocked = ["fractions"]

[[assignments]]
name = "a1"

[[assignments]]
name = "a2"
"""

CHECKS = """\
from course_grader.checks_api import COMMON_IMPORTS

CHECKS = ()
ALLOWED_IMPORTS = COMMON_IMPORTS | {allowed}
"""


def _library(root: Path, package: str) -> Path:
    """A library ``package`` under ``root``: ``data`` (for students), ``answers`` (graded), ``_helper`` (private)."""
    folder = root / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text('"""A tiny library."""\n')
    (folder / "data.py").write_text("POINTS = [1, 2, 3]\n")
    (folder / "_helper.py").write_text("def solver(x):\n    return 2 * x\n")
    (folder / "answers.py").write_text("from ._helper import solver\n\n\ndef answer(x):\n    return x + 1\n")
    return folder


@pytest.fixture
def course(tmp_path, monkeypatch) -> Path:
    """A course of two assignments whose library is importable here; ``a2`` is granted ``answers.solver``."""
    package = f"tinylib_{tmp_path.name.replace('-', '_')}"  # a name of its own: modules are cached per name
    _library(tmp_path / "site", package)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    root = tmp_path / "course"
    (root / "source" / "a1").mkdir(parents=True)
    (root / "source" / "a2").mkdir(parents=True)
    (root / "term.toml").write_text(TERM.format(package=package))
    (root / "nbgrader_config.py").write_text("c = get_config()\n")
    (root / "source" / "a2" / "hidden_checks.py").write_text(CHECKS.format(allowed={f"{package}.answers.solver"}))
    return root


def _package(course: Path) -> str:
    return load_term(course).library.package


def test_the_term_file_names_the_library_and_what_students_see(course):
    library = load_term(course).library
    assert library.package == _package(course)
    assert library.student_modules == frozenset({"data"}) and library.blocked == ("fractions",)


@pytest.mark.parametrize("value, key", [('["a/b"]', "student_modules"), ('["x.y"]', "student_modules"), ('"a"', "blocked"),
                                        ("[1]", "student_modules")])
def test_a_library_entry_that_is_not_a_python_name_is_a_term_error_naming_the_key(course, value, key):
    text = (course / "term.toml").read_text().replace(f'{key} = ["data"]' if key == "student_modules" else
                                                      'blocked = ["fractions"]', f"{key} = {value}")
    (course / "term.toml").write_text(text)
    with pytest.raises(TermError, match=f"library.{key}"):
        load_term(course)


def test_only_the_assignment_whose_checks_grant_a_name_gets_it(course):
    package = _package(course)
    assert kernel_imports.import_rules(course, "a1").grants == {}
    assert kernel_imports.import_rules(course, "a2").grants == {"answers": frozenset({"solver"})}
    assert kernel_imports.import_rules(course, "a2").package == package


def test_an_edit_of_the_grants_is_read_again_in_a_running_process(course):
    package = _package(course)
    assert kernel_imports.import_rules(course, "a2").grants == {"answers": frozenset({"solver"})}
    checks = course / "source" / "a2" / "hidden_checks.py"
    checks.write_text(CHECKS.format(allowed=set()).replace("COMMON_IMPORTS | set()", "COMMON_IMPORTS"))
    os.utime(checks, ns=(checks.stat().st_atime_ns, checks.stat().st_mtime_ns + 10**9))  # a later version of the file
    assert kernel_imports.import_rules(course, "a2").grants == {}
    assert refused_import(f"{package}.answers", ["solver"], kernel_imports.import_rules(course, "a2")) == f"{package}.answers"


def test_refused_imports_follow_the_rules_of_the_assignment(course):
    package = _package(course)
    one, two = kernel_imports.import_rules(course, "a1"), kernel_imports.import_rules(course, "a2")
    assert refused_import(f"{package}.data", ["POINTS"], one) == ""
    assert refused_import(package, ["data"], one) == ""
    assert refused_import(f"{package}.answers", ["answer"], one) == f"{package}.answers"
    assert refused_import(f"{package}.answers", ["solver"], one) == f"{package}.answers"
    assert refused_import(f"{package}.answers", ["solver"], two) == ""
    assert refused_import(f"{package}.answers", ["solver", "answer"], two) == f"{package}.answers"
    assert refused_import(package, ["answers"], one) == f"{package}.answers"
    assert refused_import("fractions", [], one) == "fractions"
    assert refused_import("numpy", ["array"], one) == ""


def test_the_grader_itself_is_refused_but_for_the_self_check(course):
    rules = kernel_imports.import_rules(course, "a1")
    assert refused_import(intake_rules.SELF_CHECK_MODULE, [intake_rules.SELF_CHECK_FUNCTION], rules) == ""
    assert refused_import(intake_rules.SELF_CHECK_MODULE, ["take_in"], rules) == intake_rules.SELF_CHECK_MODULE
    assert refused_import("course_grader.trusted.judging", ["verdicts"], rules) == "course_grader.trusted"


def _import_in_view(view: Path, statement: str) -> str:
    """Run ``statement`` in a fresh interpreter that sees only ``view`` (as a kernel does); its output or error."""
    import subprocess

    code = f"import sys; sys.path[:0] = [{str(view)!r}]\n{statement}"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, cwd=view)
    return done.stdout.strip() if done.returncode == 0 else done.stderr.strip().splitlines()[-1]


def test_the_student_view_shows_student_modules_stubs_graded_ones_and_gives_a_grant_alone(course, tmp_path):
    package = _package(course)
    one = sandbox.build_student_view(tmp_path / "view1", kernel_imports.import_rules(course, "a1"))
    two = sandbox.build_student_view(tmp_path / "view2", kernel_imports.import_rules(course, "a2"))
    assert _import_in_view(one, f"from {package}.data import POINTS; print(POINTS)") == "[1, 2, 3]"
    assert "is not available while grading" in _import_in_view(one, f"from {package}.answers import solver")
    assert _import_in_view(two, f"from {package}.answers import solver; print(solver(3))") == "6"
    assert "cannot import name 'answer'" in _import_in_view(two, f"from {package}.answers import answer")
    assert "def answer" not in "".join(path.read_text() for path in (two / package).glob("*.py"))
    launcher = sorted(path.name for path in (two / "course_grader" / "in_sandbox").iterdir())
    assert launcher == sorted(sandbox.SANDBOX_MODULES) and not (two / "course_grader" / "trusted").exists()
    assert _import_in_view(two, "from course_grader.selfcheck import check_all; print(check_all())") == "None"


def test_a_grant_of_a_name_defined_beside_the_answers_is_refused_with_the_way_out(course):
    package = _package(course)
    (course / "source" / "a2" / "hidden_checks.py").write_text(CHECKS.format(allowed={f"{package}.answers.answer"}))
    with pytest.raises(CourseError, match="private module"):
        sandbox.build_student_view(course.parent / "view", kernel_imports.import_rules(course, "a2"))
    problems = kernel_imports.ungrantable_imports(course)
    assert len(problems) == 1 and "source/a2/hidden_checks.py" in problems[0] and "private module" in problems[0]


@pytest.mark.parametrize("entry, says", [("{package}.nowhere.f", "has no module nowhere"),
                                          ("{package}.answers", "holds reference answers")])
def test_check_names_an_allowed_import_no_kernel_can_have(course, entry, says):
    package = _package(course)
    (course / "source" / "a2" / "hidden_checks.py").write_text(CHECKS.format(allowed={entry.format(package=package)}))
    problems = kernel_imports.ungrantable_imports(course)
    assert any(says in problem and "source/a2/" in problem for problem in problems), problems


def test_a_course_without_a_library_grants_nothing_and_refuses_only_what_is_blocked(course):
    text = (course / "term.toml").read_text().replace(f'package = "{_package(course)}"', 'package = ""')
    (course / "term.toml").write_text(text)
    rules = kernel_imports.import_rules(course, "a2")
    assert rules.package == "" and rules.grants == {}
    assert refused_import("anything.at.all", ["x"], rules) == "" and refused_import("fractions", [], rules) == "fractions"
    view = sandbox.build_student_view(course.parent / "view", rules)
    assert sorted(path.name for path in view.iterdir()) == ["course_grader"]


def test_the_rules_travel_as_json_and_back_unchanged(course):
    rules = kernel_imports.import_rules(course, "a2")
    assert ImportRules.from_json(json.loads(json.dumps(rules.as_json()))) == rules
    assert ImportRules.from_json("not rules") == ImportRules()


def test_the_released_cells_and_their_rules_round_trip_through_the_student_manifest(course):
    release = course / "release" / "a2"
    release.mkdir(parents=True)
    notebook = {"cells": [{"cell_type": "code", "source": "def f(x):\n    raise NotImplementedError",
                           "metadata": {"nbgrader": {"grade_id": "f", "solution": True, "grade": False}}}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (release / "a2.ipynb").write_text(json.dumps(notebook))
    released = intake_rules.released_assignments(course / "release", lambda name: kernel_imports.import_rules(course, name))
    again = intake_rules.load_manifest(intake_rules.manifest_json(released))
    assert again == released and again["a2"].imports == released["a2"].imports
    assert [cell.function for cell in again["a2"].cells] == ["f"]


def test_a_shared_helper_of_the_course_s_checks_loads_once_and_names_a_missing_file(course):
    shared = course / "source" / check_registry.SHARED_FOLDER
    shared.mkdir()
    (shared / "helpers.py").write_text(textwrap.dedent("""\
        LOADS = []
        LOADS.append(1)
        def double(x):
            return 2 * x
    """))
    beside = course / "source" / "a1" / "hidden_checks.py"
    first = check_registry.course_module(beside, "helpers")
    assert first.double(4) == 8 and check_registry.course_module(beside, "helpers") is first and first.LOADS == [1]
    with pytest.raises(check_registry.ChecksError, match="does not exist"):
        check_registry.course_module(beside, "nothing_here")
    with pytest.raises(check_registry.ChecksError, match="module name"):
        check_registry.course_module(beside, "../a1/hidden_checks")
