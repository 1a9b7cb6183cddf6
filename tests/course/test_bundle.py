"""The student bundle: what students receive, nothing they must not see, and it installs."""

import json
import os
import re
import shutil
import site
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import copy_course_to, solutions_by_test_cell
from term_edits import add_extension, drop_assignment, drop_due_dates, read_term, set_assignment_key, set_key

from course_grader.intake_rules import MANIFEST_FILE
from course_grader.selfcheck import SETTINGS_FILE
from course_grader.trusted.cli import main
from course_grader.trusted.bundle import GRADER, SELF_CHECK_FILES, build_bundle
from course_grader.trusted.course.course import Course, CourseError
from course_grader.trusted.course.student_readme import render
from course_grader.trusted.judging.check_registry import HIDDEN_CHECKS_FILE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
COURSE = Course.open(ROOT)
LIBRARY = COURSE.term().library.package  # term.toml's [library]: the package students install
STUDENT_SIDE = GRADER.name  # the grader's student side (the self-check and its intake rules), bundled beside it
#: Folders of the course and of the grader no student receives.
SECRET_PATHS = ("source/", "tests/", "example_class/", "_shared/", "trusted/", "in_sandbox/", "gradebook")
SECRET_TEXT = (b"BEGIN SOLUTION", b"BEGIN HIDDEN TESTS")
# Any assignment of the term with hidden checks serves; its first notebook, and the number of visible (autograded)
# tests in it, come from source/.
ASSIGNMENT = next(a for a in COURSE.term().assignment_names if (COURSE.source / a / HIDDEN_CHECKS_FILE).is_file())
OTHER = next(a for a in reversed(COURSE.term().assignment_names) if a != ASSIGNMENT)
NOTEBOOK = f"{COURSE.notebook_names(ASSIGNMENT)[0]}.ipynb"
N_VISIBLE = len(solutions_by_test_cell(COURSE, ASSIGNMENT))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path]:
    """The bundle of this repository (the release check, which runs nbgrader, is tested apart)."""
    return build_bundle(Course.open(ROOT), tmp_path_factory.mktemp("dist"), check_release=False)


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bundle_holds_the_release_the_lectures_and_the_student_package(bundle):
    folder, _ = bundle
    files = files_under(folder)

    term = COURSE.term()
    release = {f"assignments/{p.relative_to(ROOT / 'release')}": p.read_bytes()
               for a in term.assignment_names for p in (ROOT / "release" / a).glob("*.ipynb")}
    lectures = {f"notebooks/{p.name}": p.read_bytes() for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert sorted(release) == sorted(f"assignments/{a}/{n}.ipynb" for a in term.assignment_names for n in COURSE.notebook_names(a))
    assert lectures
    assert {name: files[name] for name in release} == release
    assert {name: files[name] for name in lectures} == lectures
    library = {f"package/{LIBRARY}/{p.relative_to(ROOT / LIBRARY)}": p.read_bytes() for p in (ROOT / LIBRARY).rglob("*.py")
               if "__pycache__" not in p.parts}
    assert library and {name: files.get(name) for name in library} == library  # the whole library, as it is
    student_side = {f"package/{STUDENT_SIDE}/{name}": (GRADER / name).read_bytes() for name in SELF_CHECK_FILES}
    assert {name: files.get(name) for name in student_side} == student_side
    assert files["README.md"] == render(COURSE, term).encode("utf-8")
    others = set(files) - set(release) - set(lectures) - set(library) - set(student_side) - {"README.md"}
    assert others == {"package/pyproject.toml", f"package/{STUDENT_SIDE}/{SETTINGS_FILE}",
                      f"package/{STUDENT_SIDE}/{MANIFEST_FILE}"}, others


def test_no_file_of_the_folder_or_the_zip_holds_solutions_tests_or_grading_code(bundle):
    folder, archive = bundle
    with zipfile.ZipFile(archive) as bundle_zip:
        zipped = {info.filename: bundle_zip.read(info) for info in bundle_zip.infolist() if not info.is_dir()}
    on_disk = {f"{COURSE.term().bundle_name}/{name}": content for name, content in files_under(folder).items()}

    assert zipped == on_disk
    for name, content in zipped.items():
        assert not any(secret in f"/{name}" for secret in SECRET_PATHS), name
        assert not any(secret in content for secret in SECRET_TEXT), name
    assert not any(p.is_symlink() for p in folder.rglob("*"))


def test_the_bundle_carries_no_hidden_checks_and_no_text_of_them(bundle):
    from course_grader.trusted.judging.check_registry import distinctive_lines, hidden_checks_leaks

    folder, archive = bundle
    assert distinctive_lines(ROOT), "the course's hidden_checks.py files have lines to look for"
    assert hidden_checks_leaks(ROOT, folder) == []
    with zipfile.ZipFile(archive) as bundle_zip:
        assert not [name for name in bundle_zip.namelist() if name.endswith("hidden_checks.py")]


def test_a_hidden_checks_file_left_in_release_is_not_bundled_and_its_text_stops_the_build(tmp_path):
    course = copy_course(tmp_path)
    checks = (course / "source" / ASSIGNMENT / "hidden_checks.py").read_text(encoding="utf-8")
    (course / "release" / ASSIGNMENT / "hidden_checks.py").write_text(checks, encoding="utf-8")
    folder, _ = build_bundle(Course.open(course), tmp_path / "dist", check_release=False)
    assert sorted(p.name for p in (folder / "assignments" / ASSIGNMENT).iterdir()) == [NOTEBOOK]

    (course / "release" / ASSIGNMENT / "notes.txt").write_text(checks, encoding="utf-8")  # its text, renamed
    with pytest.raises(CourseError, match="notes.txt: quotes a hidden_checks.py"):
        build_bundle(Course.open(course), tmp_path / "dist2", check_release=False)
    assert not (tmp_path / "dist2" / COURSE.term().bundle_name).exists()


def test_student_package_depends_on_the_student_libraries_only(bundle):
    folder, _ = bundle
    student = tomllib.loads((folder / "package" / "pyproject.toml").read_text(encoding="utf-8"))
    course = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    wanted = [*course["dependencies"], *course["optional-dependencies"]["student"]]
    assert wanted and student["project"]["dependencies"] == wanted
    assert not any("nbgrader" in requirement or "grader" in requirement for requirement in student["project"]["dependencies"])
    assert f"{STUDENT_SIDE}.selfcheck:main" in student["project"]["scripts"].values()
    assert not any(".trusted" in target for target in student["project"]["scripts"].values())  # no grading command
    assert student["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [LIBRARY, STUDENT_SIDE]


def copy_course(tmp_path: Path) -> Path:
    course = copy_course_to(tmp_path / "course", ROOT)  # configuration, term, source, release, header
    for name in ("notebooks", LIBRARY):
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, course / name)
    return course


def test_a_solution_left_in_release_stops_the_build_and_leaves_no_bundle(tmp_path):
    course = copy_course(tmp_path)
    notebook = course / "release" / ASSIGNMENT / NOTEBOOK
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    stub = next(cell for cell in cells["cells"] if cell["metadata"].get("nbgrader", {}).get("solution"))
    stub["source"] = ["### BEGIN SOLUTION\n", "def answer(X): ...\n", "### END SOLUTION\n"]
    notebook.write_text(json.dumps(cells), encoding="utf-8")

    with pytest.raises(CourseError, match=f"{NOTEBOOK}: contains 'BEGIN SOLUTION'"):
        build_bundle(Course.open(course), tmp_path / "dist", check_release=False)  # the scan, behind the release check
    assert not (tmp_path / "dist" / COURSE.term().bundle_name).exists()
    assert not (tmp_path / "dist" / f"{COURSE.term().bundle_name}.zip").exists()


def test_editor_leftovers_are_not_copied(tmp_path):
    course = copy_course(tmp_path)
    checkpoints = course / "release" / ASSIGNMENT / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / NOTEBOOK.replace(".ipynb", "-checkpoint.ipynb")).write_text("{}", encoding="utf-8")

    folder, _ = build_bundle(Course.open(course), tmp_path / "dist", check_release=False)

    assert sorted(p.name for p in (folder / "assignments" / ASSIGNMENT).iterdir()) == sorted(
        f"{name}.ipynb" for name in COURSE.notebook_names(ASSIGNMENT))


def test_bundle_never_deletes_a_folder_it_did_not_make(tmp_path, capsys):
    precious = tmp_path / COURSE.term().bundle_name
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work", encoding="utf-8")

    assert main(["bundle", "--root", str(ROOT), "--out", str(tmp_path)]) == 2
    assert "is not a student bundle" in capsys.readouterr().err
    assert (precious / "thesis.tex").read_text(encoding="utf-8") == "years of work"


@pytest.mark.slow
def test_package_installs_in_a_fresh_venv_and_a_lecture_imports_it(bundle, tmp_path):
    folder, _ = bundle
    student_folder, fresh = tmp_path / COURSE.term().bundle_name, tmp_path / "fresh"
    shutil.copytree(folder, student_folder)
    before = sorted(str(p.relative_to(student_folder)) for p in student_folder.rglob("*"))
    venv.EnvBuilder(with_pip=True).create(fresh)
    python = fresh / "bin" / "python"
    # as a student does, from the unpacked folder (the build backend comes from the package index)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "./package"], check=True, cwd=student_folder)
    assert sorted(str(p.relative_to(student_folder)) for p in student_folder.rglob("*")) == before, "pip left files behind"
    # The dependencies are already installed here: let the fresh venv see them, after its own packages.
    fresh_site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (fresh_site / "zz_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")

    first_lecture = sorted((folder / "notebooks").glob("*.ipynb"))[0]
    lecture = tmp_path / first_lecture.name
    shutil.copyfile(first_lecture, lecture)
    script = (
        "import nbformat, sys\n"
        "from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(lecture)!r}, as_version=4)\n"
        f"nb.cells.append(nbformat.v4.new_code_cell('import {LIBRARY}; print({LIBRARY}.__file__)'))\n"
        "NotebookClient(nb, timeout=60, kernel_name='python3').execute()\n"
        "print(nb.cells[-1].outputs[0]['text'].strip())\n"
    )
    imported_from = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert Path(imported_from.stdout.strip().splitlines()[-1]).is_relative_to(fresh_site / LIBRARY)

    no_grading = subprocess.run([str(python), "-c", f"import {STUDENT_SIDE}.trusted"], capture_output=True, text=True,
                                cwd=tmp_path)
    assert "ModuleNotFoundError" in no_grading.stderr

    selfcheck = subprocess.run(
        [str(fresh / "bin" / "perceptron-selfcheck"), str(folder / "assignments" / ASSIGNMENT / NOTEBOOK)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert selfcheck.returncode == 1, selfcheck.stderr
    assert f"0 of {N_VISIBLE} visible tests pass; 0 fail; {N_VISIBLE} not implemented yet." in selfcheck.stdout
    # its per-cell limit is the term's, from the installed package's settings
    installed = json.loads((fresh_site / STUDENT_SIDE / SETTINGS_FILE).read_text(encoding="utf-8"))
    assert installed["cell_seconds"] == Course.open(ROOT).term().limits.cell_seconds


def test_building_twice_gives_the_same_zip_byte_for_byte(tmp_path):
    _, first = build_bundle(Course.open(ROOT), tmp_path / "first", check_release=False)
    _, second = build_bundle(Course.open(ROOT), tmp_path / "second", check_release=False)

    assert first.read_bytes() == second.read_bytes()


def test_the_zip_is_dated_by_the_course_commit(bundle):
    _, archive = bundle
    committed = int(subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True,
                                   check=True).stdout)

    with zipfile.ZipFile(archive) as bundle_zip:
        dates = {info.date_time for info in bundle_zip.infolist()}

    # zip dates have a resolution of two seconds
    assert dates == {time.gmtime(committed - committed % 2)[:6]} or dates == {time.gmtime(committed)[:6]}
    assert min(dates)[0] > 1980


def test_source_date_epoch_dates_every_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC

    _, archive = build_bundle(Course.open(ROOT), tmp_path / "dist", check_release=False)

    with zipfile.ZipFile(archive) as bundle_zip:
        assert {info.date_time for info in bundle_zip.infolist()} == {(2023, 11, 14, 22, 13, 20)}


def test_the_student_readme_says_copying_is_detected(bundle):
    folder, _ = bundle
    readme = (folder / "README.md").read_text(encoding="utf-8")

    assert "copying is detected" in readme.lower()
    assert "inspect.getsource" in readme


@pytest.mark.slow
def test_bundle_refuses_a_release_that_source_no_longer_generates(tmp_path, capsys, monkeypatch):
    course = copy_course(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["bundle", "--root", str(course), "--out", str(tmp_path / "dist")]) == 0  # up to date: bundled
    out = capsys.readouterr().out  # paths as the TA typed them, and no path of the TA's machine for students
    assert f"student bundle: dist/{COURSE.term().bundle_name}" in out and str(tmp_path) not in out
    assert "pip install ./package" in out
    notebook = course / "release" / OTHER / f"{COURSE.notebook_names(OTHER)[0]}.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    cells["cells"][0]["source"] = ["# An old title a TA fixed in source/ only\n"]
    notebook.write_text(json.dumps(cells), encoding="utf-8")

    assert main(["bundle", "--root", str(course), "--out", str(tmp_path / "dist")]) == 2
    error = capsys.readouterr().err
    assert f"release/ is not what source/ generates for {OTHER}:" in error and "perceptron-course release" in error
    assert ASSIGNMENT not in error


@pytest.mark.slow
def test_release_says_which_assignments_changed_and_which_were_up_to_date(tmp_path, capsys):
    course = copy_course(tmp_path)
    notebook = course / "release" / OTHER / f"{COURSE.notebook_names(OTHER)[0]}.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    cells["cells"][0]["source"] = ["# A typo a TA fixed in release/ by hand\n"]
    notebook.write_text(json.dumps(cells), encoding="utf-8")

    assert main(["release", "--root", str(course)]) == 0

    out = capsys.readouterr().out
    assert "regenerated in" in out and out.splitlines()[0].endswith(f": {OTHER}")
    assert f"already up to date: {', '.join(a for a in COURSE.assignments() if a != OTHER)}" in out


@pytest.mark.slow
def test_a_fresh_clone_bundles_the_term_files_due_dates_and_the_self_check_shows_them(tmp_path):
    root = copy_course(tmp_path)  # no gradebook: the due dates come from term.toml
    drop_due_dates(root)  # only the one below
    set_key(root, "course.timezone", "Europe/Paris")
    set_assignment_key(root, ASSIGNMENT, "due", "2026-11-27 17:00")
    add_extension(root, student="ada", assignment=ASSIGNMENT, hours=48)
    course = Course.open(root)

    folder, archive = build_bundle(course, tmp_path / "dist", check_release=False)

    settings = folder / "package" / STUDENT_SIDE / SETTINGS_FILE
    carried = json.loads(settings.read_text(encoding="utf-8"))
    assert carried["due_dates"] == {ASSIGNMENT: "2026-11-27T16:00:00+00:00"}
    assert carried["cell_seconds"] == course.term().limits.cell_seconds and carried["course_id"] == course.term().course.id
    assert "ada" not in settings.read_text(encoding="utf-8")  # never a student's extension
    with zipfile.ZipFile(archive) as bundle_zip:
        assert bundle_zip.read(f"{course.term().bundle_name}/package/{STUDENT_SIDE}/{SETTINGS_FILE}") == settings.read_bytes()
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "2026-11-27 17:00 Europe/Paris" in readme
    # The bundled self-check (the student package on the path, not this repository's) on the bundled notebook.
    script = (
        "import datetime as dt, sys\n"
        "from pathlib import Path\n"
        f"from {STUDENT_SIDE} import selfcheck\n"
        "print(selfcheck.__file__)\n"
        "utc = dt.timezone.utc\n"
        f"print(selfcheck.due_date_notice({ASSIGNMENT!r}, dt.datetime(2026, 11, 27, 15, 0, tzinfo=utc)))\n"
        "report = selfcheck.check_notebook(Path(sys.argv[1]), now=dt.datetime(2026, 11, 30, 16, 0, tzinfo=utc))\n"
        "print(selfcheck.format_report(report))\n"
    )
    notebook = folder / "assignments" / ASSIGNMENT / NOTEBOOK
    result = subprocess.run([sys.executable, "-c", script, str(notebook)], capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(folder / "package"), "TZ": "UTC"}, timeout=300)
    lines = result.stdout.splitlines()
    assert Path(lines[0]).is_relative_to(folder / "package"), result.stderr
    assert lines[1] == (f"Due date of {ASSIGNMENT}: 2026-11-27 16:00 UTC, in 1 h 0 min "
                        "(an extension your TA gave you is not known here).")
    assert (f"WARNING: the due date of {ASSIGNMENT}, 2026-11-27 16:00 UTC, passed 3 d 0 h ago: a hand-in now is late, unless "
            "your TA gave you an extension (extensions are per student and not known to this check).") in lines
    assert f"0 of {N_VISIBLE} visible tests pass; 0 fail; {N_VISIBLE} not implemented yet." in result.stdout


def test_a_term_without_due_dates_bundles_none_and_the_bundle_takes_its_name_from_the_term(tmp_path):
    root = copy_course(tmp_path)
    name = "ml-2027-student" if read_term(root)["bundle"]["name"] != "ml-2027-student" else "ml-2028-student"
    set_key(root, "bundle.name", name)
    drop_due_dates(root)

    folder, archive = build_bundle(Course.open(root), tmp_path / "dist", check_release=False)

    assert folder.name == name and archive.name == f"{name}.zip"
    assert json.loads((folder / "package" / STUDENT_SIDE / SETTINGS_FILE).read_text())["due_dates"] == {}


def test_an_assignment_dropped_from_the_term_is_not_bundled_and_the_readme_follows(tmp_path):
    root = copy_course(tmp_path)
    course = Course.open(root)
    dropped = course.term().assignment_names[-2]
    drop_assignment(root, dropped)

    folder, _ = build_bundle(Course.open(root), tmp_path / "dist", check_release=False)

    kept = Course.open(root).term().assignment_names
    assert dropped not in kept and sorted(p.name for p in (folder / "assignments").iterdir()) == sorted(kept)
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert dropped not in readme and f"the {len(kept)} assignments" in readme


def _course_only_files(root: Path) -> list[Path]:
    """Files of source/ that no student receives: every non-notebook file of an assignment's folder that nbgrader's
    configuration keeps out of release/ (hidden checks, bug witnesses), and the checks' shared helpers (source/_*)."""
    import fnmatch

    from course_grader.trusted.course.course import load_config

    ignored = load_config(Course.open(root)).CourseDirectory.ignore
    found = [p for p in sorted((root / "source").glob("*/*")) if p.is_file() and p.suffix != ".ipynb"
             and (p.parent.name.startswith("_") or any(fnmatch.fnmatch(p.name, pattern) for pattern in ignored))]
    return found


def _distinctive_lines(path: Path) -> set[str]:
    """Lines of ``path`` long enough to say it leaked when found elsewhere (imports, and lines the library has, say nothing)."""
    library = {line.strip() for module in (ROOT / LIBRARY).rglob("*.py") for line in module.read_text(encoding="utf-8").splitlines()}
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if len(line.strip()) >= 40 and not line.strip().startswith(("from ", "import ", "#")) and line.strip() not in library}


def test_nothing_of_the_bug_witnesses_or_the_shared_helpers_is_released_or_bundled(bundle):
    folder, _ = bundle
    course_only = _course_only_files(ROOT)
    names = {p.name for p in course_only}
    assert "bug_witnesses.py" in names and any(p.parent.name == "_shared" for p in course_only), names
    for where in (ROOT / "release", folder):
        shipped = [p for p in sorted(where.rglob("*")) if p.is_file()]
        assert not [p for p in shipped if p.name in names], where
        for path in course_only:
            lines = _distinctive_lines(path)
            quoted = [str(p) for p in shipped if lines & {line.strip() for line in p.read_text(encoding="utf-8", errors="replace")
                                                          .replace("\\n", "\n").replace('\\"', '"').splitlines()}]
            assert quoted == [], f"{path.relative_to(ROOT)} is quoted in {quoted}"


def test_a_course_only_file_left_in_release_is_not_bundled_and_its_text_stops_the_build(tmp_path):
    course = copy_course(tmp_path)
    # an assignment of the term with course-only files beside its notebook (its hidden checks at least)
    assignment = max(COURSE.term().assignment_names, key=lambda a: len([p for p in _course_only_files(course) if p.parent.name == a]))
    leftovers = [p for p in _course_only_files(course) if p.parent.name in (assignment, "_shared")]
    assert [p for p in leftovers if p.parent.name == assignment]
    ignored = [p.name for p in leftovers if p.parent.name == assignment]  # what nbgrader's configuration never releases
    for path in leftovers:
        if path.name in ignored:  # left in release/ by hand, under its own name: left out of the bundle
            shutil.copyfile(path, course / "release" / assignment / path.name)

    folder, _ = build_bundle(Course.open(course), tmp_path / "dist", check_release=False)
    assert not set(ignored) & {p.name for p in (folder / "assignments" / assignment).iterdir()}

    for path in ignored:
        (course / "release" / assignment / path).unlink()
    for number, path in enumerate(leftovers):  # or its text under another name: the build stops
        (course / "release" / assignment / "notes.txt").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        named = re.escape(str(path.relative_to(course)))
        with pytest.raises(CourseError, match=rf"notes.txt: quotes ({named}|a {re.escape(path.name)})"):
            build_bundle(Course.open(course), tmp_path / f"dist{number}", check_release=False)
        assert not (tmp_path / f"dist{number}" / COURSE.term().bundle_name).exists()
