"""Hidden checks beside their assignment: loaded on the trusted side, never released, consistent with source/.

Each assignment's checks live in ``source/<assignment>/hidden_checks.py`` (``check_registry``); the
public API an instructor writes them with is ``course_grader.checks_api``.
"""

import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from conftest import FIXTURE_LIBRARY, FIXTURES, LIBRARY_PACKAGE, fixture_course

from course_grader import checks_api
from course_grader.checks_api import compare_history, integer_weights_and_tiny_scores, random_cases, with_ties
from course_grader.trusted.judging import check_registry, solution_reference
from course_grader.trusted.running import sandbox
from course_grader.trusted.judging.check_registry import (
    HIDDEN_CHECKS_FILE, ChecksError, checks_without_part, course_checks, parts_without_check, registry_problems,
)
from course_grader.trusted.judging.kernel_imports import import_rules, ungrantable_imports
from course_grader.trusted.judging.checks.draws import case_generator
from course_grader.trusted.judging.checks.judge import prepare_cases
from course_grader.trusted.course.course import Course, CourseError
from course_grader.trusted.course.example_class import copy_course

COURSE = Course.open(fixture_course())  # the grader's own course: its loader is tested there


@pytest.fixture
def course(tmp_path) -> Course:
    """A copy of the course (config, source, release) to edit."""
    return copy_course(fixture_course(), tmp_path / "course")


def test_every_assignment_s_checks_come_from_its_own_folder():
    registry = course_checks(COURSE.root)
    assert sorted(registry.assignments) == COURSE.assignments()
    for assignment, loaded in registry.assignments.items():
        assert loaded.path == (COURSE.source / assignment / HIDDEN_CHECKS_FILE).resolve()
        assert loaded.checks, assignment
        assert loaded.module.__name__.startswith(check_registry.MODULE_PREFIX)  # a private name, not importable by name
        assert all(check.function in registry for check in loaded.checks.values())
    assert not any(name.startswith(check_registry.MODULE_PREFIX) for name in
                   (path.stem for path in (FIXTURE_LIBRARY / LIBRARY_PACKAGE).rglob("*.py")))


def test_the_course_s_parts_and_checks_agree():
    assert parts_without_check(COURSE.root) == []
    assert checks_without_part(COURSE.root) == []
    assert ungrantable_imports(COURSE.root) == []


def test_each_inconsistency_is_named_with_its_file(course):
    geometry = course.source / "01_geometry" / HIDDEN_CHECKS_FILE
    text = geometry.read_text(encoding="utf-8")
    geometry.write_text(text + "\nCHECKS = tuple(c for c in CHECKS if c.function != 'predict') + "
                               "(Check('unused', ('x',), lambda rng: [Case((1.0,), 'one')], lambda x: x, compare_number()),)\n",
                        encoding="utf-8")
    assert parts_without_check(course.root) == [
        f"source/01_geometry/geometry.ipynb, cell test_predict: declares check_predict, but "
        f"source/01_geometry/{HIDDEN_CHECKS_FILE} has no check of predict in CHECKS"]
    assert checks_without_part(course.root) == [
        f"source/01_geometry/{HIDDEN_CHECKS_FILE}: the check of unused is declared by no graded test cell "
        "(add check_unused(unused) to the hidden-test region of its part, or remove the check)"]
    geometry.write_text("CHECKS = [1, 2]\n", encoding="utf-8")
    assert registry_problems(course.root)[0].endswith("must define CHECKS, a tuple of Check objects (one per graded part)")


def test_dropping_an_assignment_leaves_no_check_or_import_registered_elsewhere(course):
    dropped = "05_multiclass"
    functions = set(course_checks(course.root).of(dropped))
    shutil.rmtree(course.source / dropped)
    registry = course_checks(course.root)
    assert functions and not functions & set(registry) and dropped not in registry.assignments
    assert registry_problems(course.root) == []


def test_no_assignment_s_checks_need_another_assignment(course):
    """Shared case generators live in the package (checks_api), so dropping any one assignment leaves every other
    assignment's checks loading."""
    for dropped in course_checks(course.root).assignments:
        kept = [a for a in course_checks(course.root).assignments if a != dropped]
        moved = course.source / dropped
        hidden = moved.with_name(f".{dropped}")
        moved.rename(hidden)
        try:
            registry = course_checks(course.root)
            assert sorted(registry.assignments) == sorted(kept), dropped
            assert all(registry.of(a) for a in kept), dropped
        finally:
            hidden.rename(moved)


def test_a_grant_of_the_library_lives_in_its_assignment_s_hidden_checks_and_goes_with_it(course):
    """The grading kernel's grants come from each hidden_checks.py's ALLOWED_IMPORTS (the term names the library):
    only 04_convergence grants theory.max_margin, and dropping its folder leaves no assignment a grant."""
    grants = {assignment: dict(import_rules(course.root, assignment).grants) for assignment in course.assignments()}
    assert grants.pop("04_convergence") == {"theory": frozenset({"max_margin"})}
    assert all(not granted for granted in grants.values()), grants
    shutil.rmtree(course.source / "04_convergence")
    (course.root / "term.toml").write_text((course.root / "term.toml").read_text(encoding="utf-8").replace(
        '[[assignments]]\nname = "04_convergence"\n', ""), encoding="utf-8")
    assert all(not import_rules(course.root, assignment).grants for assignment in Course.open(course.root).assignments())
    assert ungrantable_imports(course.root) == []


@pytest.mark.parametrize("entry, problem", [
    ("theory.no_such_name", "which is not defined in a private module"),
    ("theory.radius", "which is not defined in a private module"),  # defined in theory.py, beside the answers
    ("theory", "names the whole module"),
    ("no_such_module.x", "has no module no_such_module"),
])
def test_an_allowed_import_the_grading_kernel_cannot_have_is_named_with_its_file(course, entry, problem):
    checks = course.source / "04_convergence" / HIDDEN_CHECKS_FILE
    text = checks.read_text(encoding="utf-8")
    granted = f'"{LIBRARY_PACKAGE}.theory.max_margin"'
    assert granted in text
    checks.write_text(text.replace(granted, f'"{LIBRARY_PACKAGE}.{entry}"'), encoding="utf-8")
    problems = ungrantable_imports(course.root)
    assert problems and all(found.startswith(f"source/04_convergence/{HIDDEN_CHECKS_FILE}: ") for found in problems)
    assert any(problem in found and entry in found for found in problems), problems


def test_a_hidden_checks_file_that_does_not_load_is_a_clear_error(course):
    geometry = course.source / "01_geometry" / HIDDEN_CHECKS_FILE
    geometry.write_text("CHECKS = (\n", encoding="utf-8")
    with pytest.raises(ChecksError, match=r"01_geometry/hidden_checks.py does not load: SyntaxError"):
        course_checks(course.root)
    geometry.write_text("raise RuntimeError('half written')\n", encoding="utf-8")
    with pytest.raises(ChecksError, match="does not load: RuntimeError: half written"):
        course_checks(course.root)


def _uses_checks_of(course, assignment: str, other: str) -> None:
    """Make ``assignment``'s hidden_checks.py use ``other``'s, as checks_beside lets a file do."""
    path = course.source / assignment / HIDDEN_CHECKS_FILE
    path.write_text(path.read_text(encoding="utf-8") + "\nfrom course_grader.checks_api import "
                    f"checks_beside\nchecks_beside(__file__, {other!r})\n", encoding="utf-8")


def test_hidden_checks_that_use_each_other_in_a_cycle_say_so(course):
    _uses_checks_of(course, "04_convergence", "02_algorithm")
    _uses_checks_of(course, "02_algorithm", "04_convergence")
    with pytest.raises(ChecksError, match=r"import each other in a cycle \(04_convergence -> 02_algorithm -> 04_convergence\)"):
        course_checks(course.root, ["04_convergence"])


def test_checks_beside_a_missing_assignment_names_it(course):
    _uses_checks_of(course, "04_convergence", "02_algorithm")
    shutil.rmtree(course.source / "02_algorithm")
    with pytest.raises(ChecksError, match="uses the hidden checks of 02_algorithm, but .* does not exist"):
        course_checks(course.root, ["04_convergence"])


def test_an_edited_hidden_checks_file_is_loaded_again(course):
    before = course_checks(course.root).of("01_geometry")
    geometry = course.source / "01_geometry" / HIDDEN_CHECKS_FILE
    geometry.write_text(geometry.read_text(encoding="utf-8") + "\nCHECKS = CHECKS[:1]\n", encoding="utf-8")
    after = course_checks(course.root).of("01_geometry")
    assert len(after) == 1 < len(before)


def test_the_solution_reference_runs_the_source_once_for_a_whole_class(monkeypatch):
    """perceptron_step's reference is the source solution: read and run once per process, whatever the class size."""
    check = course_checks(COURSE.root)["perceptron_step"]
    assert isinstance(check.reference, checks_api.SolutionFunction)
    monkeypatch.setattr(solution_reference, "_SOLUTIONS", {})
    reads = []
    real_read = nbformat.read
    monkeypatch.setattr(nbformat, "read", lambda path, *args, **kwargs: reads.append(path) or real_read(path, *args, **kwargs))
    for student in ("ada", "ben", "cy", "dee", "eve"):
        prepared = prepare_cases(check, case_generator(b"s" * 16, "perceptron_step", student))
        assert len(prepared.expected) == len(prepared.cases)
    assert [Path(path).name for path in reads] == ["algorithm.ipynb"]


def test_the_solution_reference_is_compiled_under_the_notebook_so_an_edit_changes_the_checker_id(course):
    from course_grader.trusted.judging.case_sets import checker_id

    check = course_checks(course.root)["perceptron_step"]
    before = checker_id(check)
    notebook = course.source / "02_algorithm" / "algorithm.ipynb"
    notebook.write_text(notebook.read_text(encoding="utf-8").replace("return w.copy(), b, False", "return w.copy(), b, False  "),
                        encoding="utf-8")
    assert checker_id(check) != before


def test_solution_names_the_notebook_when_a_folder_holds_several(tmp_path):
    (tmp_path / "a.ipynb").write_text("{}")
    (tmp_path / "b.ipynb").write_text("{}")
    with pytest.raises(LookupError, match="holds 2 notebooks: name the one of f's solution"):
        checks_api.solution("f", tmp_path / HIDDEN_CHECKS_FILE)


def test_the_solution_s_prints_stay_off_the_ta_s_terminal(tmp_path, capsys):
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("print('a run of the lecture, shown to students')"),
        nbformat.v4.new_code_cell("def double(x):\n    print('working')\n    return 2 * x"),
    ])
    nbformat.write(notebook, tmp_path / "solution.ipynb")
    double = checks_api.solution("double", tmp_path / HIDDEN_CHECKS_FILE)
    assert double(21) == 42
    assert capsys.readouterr().out == ""


def test_the_grading_sandbox_never_sees_source_or_a_hidden_checks_file(tmp_path):
    rules = import_rules(COURSE.root, "04_convergence")
    view = sandbox.build_student_view(tmp_path / "view", rules)
    command = sandbox.bubblewrap_command(["true"], view, rules)
    bound = [Path(command[i + 1]).resolve() for i, word in enumerate(command)
             if word in ("--ro-bind", "--bind", "--ro-bind-try")]
    source = COURSE.source.resolve()
    assert bound and not [path for path in bound if path == source or path in source.parents or source in path.parents]
    assert not list(view.rglob(HIDDEN_CHECKS_FILE)) and not list(view.rglob("checks_api.py"))
    assert (view / LIBRARY_PACKAGE / "theory.py").is_file()  # the library is there, as the rules show it
    assert not list(view.rglob("trusted")) and not list(view.rglob("cli.py"))  # and nothing of the TA's side


@pytest.mark.slow
def test_release_refuses_a_config_that_would_copy_hidden_checks(course):
    from course_grader.trusted.pipeline import release

    config = course.root / "nbgrader_config.py"
    with config.open("a", encoding="utf-8") as edited:  # a course that takes the grader's file off the list
        edited.write("\nc.CourseDirectory.ignore = [name for name in c.CourseDirectory.ignore if name != 'hidden_checks.py']\n")
    with pytest.raises(CourseError, match="add 'hidden_checks.py' to c.CourseDirectory.ignore in nbgrader_config.py"):
        release(course, ["01_geometry"])
    assert not list(course.release.rglob(HIDDEN_CHECKS_FILE))


# ----------------------------------------------------------------------------- the API's helpers


def test_random_cases_are_random_cases_drawn_from_the_given_generator():
    first = random_cases(np.random.default_rng(1), lambda rng: (rng.normal(size=3),), "points", count=4)
    again = random_cases(np.random.default_rng(1), lambda rng: (rng.normal(size=3),), "random points", count=4)
    assert len(first) == 4 and all(case.is_random and case.behaviour == "random points" for case in first)
    assert all(np.array_equal(a.args[0], b.args[0]) for a, b in zip(first, again))


def test_with_ties_makes_a_tie_in_every_row_at_a_random_place():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(200, 4))
    tied = with_ties(rng, scores)
    assert all(len(set(row)) == 3 for row in tied) and len(set(scores[0])) == 4  # a copy: the input is untouched
    places = {tuple(np.flatnonzero(row == value)) for row in tied for value in row if np.sum(row == value) == 2}
    assert len(places) > 3  # not always the same two columns
    with pytest.raises(ValueError):
        with_ties(rng, np.zeros((3, 1)))


def test_compare_history_names_the_length_or_the_first_wrong_step():
    compare = compare_history()
    expected = np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 3.0]])
    assert compare(expected.tolist(), expected) is None
    assert "a history of 2 steps (expected 3" in compare(expected[:2], expected).what
    wrong = expected.copy()
    wrong[2, 1] = 9.0
    assert "step 2 is the first that differs" in compare(wrong, expected).what
    assert compare("a string", expected).what.startswith("something that is not")


# ----------------------------------------------------------------------------- the template


TEMPLATE = FIXTURES / "check_template" / "hidden_checks.py"
TEMPLATE_SOLUTIONS = {
    "scale": "def scale(X, factor):\n    return np.asarray(X, dtype=float) * factor\n",
    "classify": "def classify(w, b, X):\n    return np.where(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b >= 0, 1, -1)\n",
    "spread": "def spread(X):\n    return float(np.max(np.linalg.norm(np.asarray(X, dtype=float), axis=1)))\n",
    "walk": "def walk(step, n_steps):\n    return np.outer(np.arange(n_steps + 1), np.asarray(step, dtype=float))\n",
}
TEMPLATE_BUGS = {  # one common bug each: the check must catch it
    "scale": lambda X, factor: np.asarray(X) * factor if np.asarray(X).dtype.kind == "f" else np.asarray(X),
    "classify": lambda w, b, X: np.sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + b),
    "spread": lambda X: float(np.max(np.abs(np.asarray(X, dtype=float)))),
    "walk": lambda step, n_steps: np.outer(np.arange(1, n_steps + 1), np.asarray(step, dtype=float)),
}


def assignment_from_template(root: Path) -> Path:
    """A course holding one assignment: the template's hidden checks beside a notebook with its four parts."""
    folder = root / "source" / "07_template"
    folder.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("")
    shutil.copyfile(TEMPLATE, folder / HIDDEN_CHECKS_FILE)
    cells = [nbformat.v4.new_code_cell("import numpy as np")]
    for name, code in TEMPLATE_SOLUTIONS.items():
        solution_cell = nbformat.v4.new_code_cell(code)
        solution_cell.metadata["nbgrader"] = {"grade_id": name, "solution": True, "grade": False, "locked": False}
        test_cell = nbformat.v4.new_code_cell(f"### BEGIN HIDDEN TESTS\ncheck_{name}({name})\n### END HIDDEN TESTS\n")
        test_cell.metadata["nbgrader"] = {"grade_id": f"test_{name}", "solution": False, "grade": True, "points": 1}
        cells += [solution_cell, test_cell]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / "parts.ipynb")
    return folder


def test_the_template_checks_its_four_shapes_against_the_solution_and_catches_a_bug_in_each(tmp_path):
    from course_grader.trusted.judging.checks import run_in_process

    assignment_from_template(tmp_path)
    checks = course_checks(tmp_path).of("07_template")
    assert sorted(checks) == sorted(TEMPLATE_SOLUTIONS)
    assert parts_without_check(tmp_path) == [] and checks_without_part(tmp_path) == []
    namespace: dict = {}
    exec("import numpy as np\n" + "".join(TEMPLATE_SOLUTIONS.values()), namespace)
    for name, check in checks.items():
        assert run_in_process(check, namespace[name]).passed, name
        verdict = run_in_process(check, TEMPLATE_BUGS[name])
        assert not verdict.passed, name
        cases = check.cases(case_generator(b"s" * 16, name, "ada"))
        assert any(case.is_random for case in cases) and any(not case.is_random for case in cases)


def test_a_batch_stops_before_any_work_on_a_check_that_does_not_load_or_a_solution_that_does_not_run(course):
    from course_grader.trusted.judging.check_registry import ready_to_grade
    from course_grader.trusted.pipeline import grade

    assert set(ready_to_grade(course.root, ["02_algorithm"])) == set(course_checks(course.root).of("02_algorithm"))
    notebook = course.source / "02_algorithm" / "algorithm.ipynb"
    notebook.write_text(notebook.read_text(encoding="utf-8").replace("def perceptron_step(", "def perceptron_stride("),
                        encoding="utf-8")
    with pytest.raises(ChecksError, match="the reference of perceptron_step is the solution in .*algorithm.ipynb, which does "
                                          "not run: LookupError: .* defines no function perceptron_step"):
        ready_to_grade(course.root, ["02_algorithm"])
    (course.source / "01_geometry" / HIDDEN_CHECKS_FILE).write_text("CHECKS = (\n", encoding="utf-8")
    (course.submitted / "ada" / "01_geometry").mkdir(parents=True)
    shutil.copyfile(course.release / "01_geometry" / "geometry.ipynb", course.submitted / "ada" / "01_geometry" / "geometry.ipynb")
    with pytest.raises(ChecksError, match="01_geometry/hidden_checks.py does not load"):
        grade(course, progress=False, jobs=1)
    assert not (course.root / "autograded").exists() and not (course.root / "gradebook.db").exists()


def test_an_instructor_s_notebook_runs_the_check_beside_it(course, monkeypatch):
    """What a source notebook's hidden region does in the instructor's kernel (nbval, nbgrader validate): its working
    folder is the notebook's, and ``check_<function>`` comes from the hidden_checks.py there."""
    broken = course.source / "06_limitations" / HIDDEN_CHECKS_FILE
    kept = broken.read_text(encoding="utf-8")
    broken.write_text("CHECKS = (\n", encoding="utf-8")  # another assignment's file, half written: not needed here
    monkeypatch.chdir(course.source / "01_geometry")
    check_augment = checks_api.check_augment
    check_augment(lambda X: np.hstack([np.ones((len(np.asarray(X)), 1)), np.asarray(X, dtype=float)]))
    with pytest.raises(AssertionError, match="augment returned"):
        check_augment(lambda X: np.asarray(X, dtype=float))
    broken.write_text(kept, encoding="utf-8")
    with pytest.raises(AttributeError, match="no hidden check of nothing in the hidden_checks.py files of this course"):
        checks_api.check_nothing
    monkeypatch.chdir(course.root.parent)
    with pytest.raises(LookupError, match="is in no course"):
        checks_api.check_augment


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12), d=st.integers(1, 5))
@settings(max_examples=300, deadline=None)
def test_tiny_scores_are_exact_and_of_both_signs_down_to_two_to_the_minus_42(seed, n, d):
    w, b, X = integer_weights_and_tiny_scores(np.random.default_rng(seed), n, d)
    scores = X @ w + b
    assert np.all(scores == np.array([sum(float(a) * float(c) for a, c in zip(row[::-1], w[::-1])) + b for row in X]))  # any order
    tiny = scores[(scores != 0) & (np.abs(scores) < 1e-6)]
    assert set(np.sign(tiny)) == {-1.0, 1.0} and {-(2.0 ** -42), 2.0 ** -42} <= set(tiny.tolist())
    assert np.all(np.abs(tiny) >= 2.0 ** -42) and np.all(np.abs(tiny) <= 2.0 ** -30)


def test_declared_scalar_types_hold_right_values_to_them_and_name_both_types():
    as_float, as_int = checks_api.compare_number(returns="float"), checks_api.compare_count(returns="int")
    for right in (2.0, np.float64(2.0)):
        assert as_float(right, 2.0) is None
    for wrong, named in ((2, "a Python int"), (np.int64(2), "a NumPy int64"), (np.array([2.0]), "an ndarray of shape (1,)")):
        assert as_float(wrong, 2.0).what == f"the right value as {named} where the docstring promises a float"
    assert as_int(3, 3) is None and as_int(True, 1) is not None
    for wrong, named in ((3.0, "a Python float"), (np.int64(3), "a NumPy int64")):
        assert as_int(wrong, 3).what == f"the right value as {named} where the docstring promises an int"
    assert checks_api.compare_count()(np.int64(3), 3) is None  # undeclared: any whole number passes
    with pytest.raises(ValueError, match="returns must be one of"):
        checks_api.compare_number(returns="ndarray of float")


def test_float_or_int_holds_a_right_value_to_the_kind_of_number_the_reference_answered():
    like_the_answer = checks_api.compare_number(returns="float or int")
    for right, answer in ((3, 3), (np.int64(3), 3), (2.5, 2.5), (np.float64(2.5), 2.5), (np.float32(2.5), 2.5)):
        assert like_the_answer(right, answer) is None, (right, answer)
    for wrong, answer, named, promised in ((3.0, 3, "a Python float", "an int"), (np.int64(2), 2.0, "a NumPy int64", "a float"),
                                           (np.array([3]), 3, "an ndarray of shape (1,)", "an int")):
        difference = like_the_answer(wrong, answer)
        assert difference.what == f"the right value as {named} where the docstring promises {promised} for these arguments"
    assert like_the_answer(4, 3).what == "a wrong value" and like_the_answer(True, 1) is not None
