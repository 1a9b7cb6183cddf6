"""The grader's tests are its own: they read nothing of the course beside them, and their fixtures' READMEs are true.

A scan of every test file and fixture under ``tests/`` for what reaches out of ``grader/``: a path climbing to the
repository (``parents[2]``), a course folder or file of the repository's root (``source/``, ``release/``,
``notebooks/``, ``term.toml``...) named next to such a root, the old locations of these tests, and the course's
library (``perceptron_course``: the fixture course has its own, ``fixtures/library/perceptron_fixture``). The only
paths of the checkout the tests use are named once, in ``conftest.py`` (npm's tools and the checkout a hub enters).
"""

import re
from pathlib import Path

import pytest
from conftest import FIXTURES, GRADER

TESTS = Path(__file__).resolve().parent
#: Text files of the tests and their fixtures (notebooks included: a fixture course's cells import its library).
SCANNED = sorted(path for path in TESTS.rglob("*") if path.is_file() and "__pycache__" not in path.parts
                 and path.suffix in {".py", ".ipynb", ".md", ".toml", ".sh", ".cfg", ".txt", ".json"})
THIS_FILE = Path(__file__).resolve()

#: What reaches out of grader/, each with why it is wrong.
OUTSIDE = [
    (re.compile(r"parents\[[2-9]\]"), "climbs above grader/ to the repository"),
    (re.compile(r"\bperceptron_course\b"), "imports or names the course's library (use the fixture library)"),
    (re.compile(r"\b(REPO|ROOT|CHECKOUT|GRADER\.parent)\s*/\s*\"(source|release|notebooks|example_class|docs|tests)\""),
     "reads a course folder of the repository"),
    (re.compile(r"\b(REPO|ROOT|CHECKOUT|GRADER\.parent)\s*/\s*\"(term\.toml|nbgrader_config\.py)\""),
     "reads a course file of the repository"),
    # The old homes (the repository's tests/grader/ and tests/fixtures/) and the course's tests/course/; a path into
    # these tests is written from the repository (grader/tests/fixtures/...), or from grader/ (tests/test_x.py).
    (re.compile(r"(?<!grader/)(?<![\w$.-])tests/(fixtures|grader|course)/|\"tests\"\s*/\s*\"(fixtures|grader)\""),
     "names where these tests used to be"),
    (re.compile(r"attacks_round\d"), "names a fixture by its round, not by what it attacks"),
    (re.compile(r"judging\.checks import (.*\W)?CHECKS\b"),
     "the checks of whatever course holds the working folder (use course_checks(FIXTURE_COURSE))"),
]


def reaching_out(text: str) -> list[str]:
    """Each line of ``text`` that reaches out of grader/, with the reason."""
    return [f"line {number}: {reason}: {line.strip()[:120]}" for number, line in enumerate(text.splitlines(), 1)
            for pattern, reason in OUTSIDE if pattern.search(line)]


def test_the_scan_covers_the_tests_and_every_fixture():
    scanned = {path.relative_to(TESTS).parts[0] for path in SCANNED}
    assert {"conftest.py", "test_pipeline.py", "fixtures"} <= scanned
    fixture_folders = {path.relative_to(FIXTURES).parts[0] for path in SCANNED if FIXTURES in path.parents}
    assert fixture_folders == {path.name for path in FIXTURES.iterdir() if path.is_dir()}


@pytest.mark.parametrize("line", [
    'REPO = Path(__file__).resolve().parents[2]',
    'from perceptron_course import intake_rules',
    'recipes = load_recipes(REPO / "example_class")',
    'text = (ROOT / "term.toml").read_text()',
    'shutil.copytree(ROOT / "notebooks", lectures)',
    'build_example_class(course, REPO / "tests" / "fixtures" / "verdict_class")',
    'see tests/grader/test_sandbox.py',
    'sh tests/fixtures/attacks_trusted_side/reproduce.sh astbomb',
    'PROBE=$ROOT/tests/fixtures/attacks_zygote_host_root/probe.py',
    "the course's own content is tested in `tests/course/`",
    'FIXTURE = "attacks_round12"',
    'from course_grader.trusted.judging.checks import CHECKS, run_in_process',
])
def test_the_scan_finds_each_way_out(line):
    assert reaching_out(line), line


@pytest.mark.parametrize("line", [
    'COURSE_ROOT = fixture_course()',
    'HERE = Path(__file__).resolve().parent / "fixtures"',
    'from perceptron_fixture.theory import max_margin',
    'copy_course(fixture_course(), tmp_path / "course")',
    'course.root / "release" / "01_geometry"',
    'sh grader/tests/fixtures/attacks_trusted_side/reproduce.sh astbomb',
    'PROBE=$FIXTURES/attacks_zygote_host_root/probe.py',
    'see tests/test_sandbox.py',
    '(COURSE_ROOT / "source").iterdir()',
])
def test_the_scan_lets_the_fixture_course_be(line):
    assert reaching_out(line) == [], line


#: Lines that name what they reach for only to prove the grader does not: ``(file, reason found)``, each with why.
NAMED_TO_BE_ABSENT = {
    ("test_layers.py", "imports or names the course's library (use the fixture library)"):
        "it asserts that no module of the grader imports the course's library",
}


def test_no_test_or_fixture_reads_outside_grader():
    found = {}
    for path in SCANNED:
        if path == THIS_FILE:
            continue
        kept = [problem for problem in reaching_out(path.read_text(encoding="utf-8", errors="replace"))
                if (path.name, problem.split(": ")[1]) not in NAMED_TO_BE_ABSENT]
        if kept:
            found[str(path.relative_to(TESTS))] = kept
    assert found == {}, found


def test_the_checkout_is_named_only_by_conftest():
    named = [str(path.relative_to(TESTS)) for path in SCANNED if path.suffix == ".py" and path != THIS_FILE
             and path.name != "conftest.py" and "GRADER.parent" in path.read_text(encoding="utf-8")]
    assert named == []
    assert GRADER.name == "grader" and (GRADER / "pyproject.toml").is_file()


# ---------------------------------------------------------------------------- the fixtures' READMEs

#: A file or folder a README names: a code span ending in a file's extension, or a folder (``name/``).
_NAMED = re.compile(r"`([A-Za-z0-9_./*<>{}-]+)`")
#: The kinds of file the fixtures are made of (a ``.csv`` or ``.html`` a README names is what the grader writes).
_FILE = re.compile(r"[^./]\.(py|sh|log|md|ipynb|toml|txt|json|service)$")
#: Names of a course's layout and of what the grader writes into it (``grades.csv``, ``reports/report.md``...): a
#: README names them as parts of any course, not as files of its fixture; their first part is matched.
COURSE_LAYOUT = {"source", "release", "submitted", "autograded", "feedback", "handins", "reports", "exchange",
                 "notebooks", "term.toml", "nbgrader_config.py", "gradebook.db", "report.md", "grading.json",
                 "timestamp.txt", "submission_secret.txt", "recorded_sources.json", "hidden_checks.py"}
#: The grader's package: a README may name one of its modules by its file name (``autograde.py``).
PACKAGE = GRADER / "course_grader"
MODULES = {path.name for path in PACKAGE.rglob("*.py")}
READMES = sorted(FIXTURES.rglob("README.md"))


def named_paths(readme: Path) -> list[str]:
    """The paths ``readme`` names as files of the fixtures (``name.py``, ``sub/``, ``../sibling/``), without globs,
    the names of a course's layout or of the grader's output (``COURSE_LAYOUT``)."""
    found = []
    for name in _NAMED.findall(readme.read_text(encoding="utf-8")):
        if any(mark in name for mark in "*<>{}") or name.startswith(("/", "http")):
            continue
        if name.split("/")[0] in COURSE_LAYOUT:
            continue
        if _FILE.search(name) or name.endswith("/"):
            found.append(name)
    return found


def resolves(readme: Path, name: str) -> bool:
    """Whether ``name`` exists beside ``readme`` or from grader/ or its tests, or (a bare file name) is a module of
    the grader's package."""
    stem = name.split("::")[0].removeprefix("grader/")
    if "/" not in stem and stem in MODULES:
        return True
    return any((base / stem).exists() for base in (readme.parent, TESTS, GRADER, FIXTURES))


def test_every_fixture_folder_has_a_readme():
    assert {readme.parent.name for readme in READMES if readme.parent.parent == FIXTURES} == {
        path.name for path in FIXTURES.iterdir() if path.is_dir()}


@pytest.mark.parametrize("readme", READMES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_each_fixture_readme_names_only_files_that_exist(readme):
    missing = [name for name in named_paths(readme) if not resolves(readme, name)]
    assert missing == [], f"{readme.relative_to(FIXTURES)} names files that do not exist: {missing}"


def test_the_readme_check_can_fail(tmp_path):
    readme = tmp_path / "README.md"
    (tmp_path / "here.py").write_text("")
    readme.write_text("`here.py` is here; `gone.py` and `lost/` are not; `*.py` is a pattern; `grades.csv`,\n"
                      "`reports/report.md` and `submitted/` are what a course holds; `autograde.py` is a module of the\n"
                      "grader, `grading/trusted/outputs/feedback.py` where it used to be, `no_such_module.py` none.\n")
    assert named_paths(readme) == ["here.py", "gone.py", "lost/", "autograde.py",
                                   "grading/trusted/outputs/feedback.py", "no_such_module.py"]
    assert [name for name in named_paths(readme) if not resolves(readme, name)] == [
        "gone.py", "lost/", "grading/trusted/outputs/feedback.py", "no_such_module.py"]
