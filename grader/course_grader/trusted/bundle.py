"""The student bundle: exactly what students receive, as a folder and a zip.

``perceptron-course bundle`` builds it from the repository's own files::

    perceptron-course-student/
        README.md        the students' README, filled from term.toml (student_readme.py)
        assignments/     release/<assignment>/ of the term's assignments (no solutions, no hidden tests)
        notebooks/       the lecture notebooks
        package/         an installable student package: the course's library (term.toml's [library]), with the
                         student dependencies, and the grader's self-check (``course_grader/selfcheck.py`` and
                         the intake rules it applies, nothing of the grading itself) with what it needs of the
                         course: the term (``_course_term.json``: course id, limits, due dates; never anyone's
                         extension) and the released cells (``_released_assignments.json``)
    perceptron-course-student.zip

The folder's (and the zip's) name is term.toml's ``[bundle].name``.

Before anything is copied, ``release/`` is checked to be what nbgrader generates from
``source/`` now (``release_check``): a stale release stops the build with the assignments to
release again. The bundle is scanned before it is kept: a solution, a hidden test, a
gradebook or any grading file in it stops the build with the path to fix.

The zip's entries are dated with ``SOURCE_DATE_EPOCH`` when it is set, else with the date of
the course's git commit, else with the newest bundled file's: the same commit always gives the
same zip, with a real date. The student package builds with ``hatchling``, which writes nothing
into ``package/`` (setuptools leaves ``build/`` and an ``.egg-info`` there) and takes two packages.

The due dates are term.toml's (so a fresh clone bundles with them), in UTC; an assignment without
one is left out. Extensions are per student and never bundled: the self-check says so when it
shows a due date.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from .course.commands import grader_command
from .. import intake_rules
from ..intake_rules import MANIFEST_FILE, manifest_json, released_assignments
from ..selfcheck import SETTINGS_FILE
from .judging.check_registry import HIDDEN_CHECKS_FILE, hidden_checks_leaks
from .judging.kernel_imports import import_rules
from .course.course import Course, CourseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: This package's part a student installs: the self-check and the intake rules it applies (no grading code).
GRADER = Path(intake_rules.__file__).parent
SELF_CHECK_FILES = ("__init__.py", "deferred_imports.py", "intake_rules.py", "selfcheck.py")
# Paths and text that must never reach a student (the scan is a second line of defence:
# the copy below only takes what students need).
FORBIDDEN_PARTS = {"source", "_shared", "tests", "example_class", "trusted", "in_sandbox", "submitted", "autograded", "feedback"}
FORBIDDEN_NAMES = {"gradebook.db", "grading_secret", "nbgrader_config.py", HIDDEN_CHECKS_FILE}
FORBIDDEN_TEXT = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
#: The zip format's earliest date: any earlier date is written as this.
ZIP_EPOCH = 315532800  # 1980-01-01T00:00:00Z
#: The student package's build backend: builds the wheel out of tree, with two packages in it.
BUILD_BACKEND = ("hatchling>=1.21", "hatchling.build")


def is_distributable(path: Path) -> bool:
    """False for editor and interpreter leftovers (checkpoints, caches, hidden files) and an assignment's hidden checks."""
    return (not any(part.startswith(".") or part == "__pycache__" for part in path.parts) and path.suffix != ".pyc"
            and path.name != HIDDEN_CHECKS_FILE)


def copy_files(source: Path, target: Path, skip_top: frozenset[str] = frozenset(), ignore: tuple[str, ...] = ()) -> None:
    """Copy the distributable regular files under ``source`` into ``target``, never following links.

    ``skip_top`` names entries directly under ``source`` to leave out; ``ignore`` holds file-name patterns
    (``fnmatch``) to leave out wherever they are.
    """
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if relative.parts[0] in skip_top or not is_distributable(relative) or path.is_symlink() or not path.is_file():
            continue
        if any(fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in ignore):
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


def student_pyproject(project_pyproject: Path, distribution: str, library: str) -> str:
    """A ``pyproject.toml`` for the student package ``distribution``, derived from the course's own.

    Its dependencies are the library's plus the ``student`` extra; its console scripts are the course's that
    run the library or the self-check (none of the grading commands).
    """
    project = tomllib.loads(project_pyproject.read_text(encoding="utf-8"))["project"]
    dependencies = [*project["dependencies"], *project.get("optional-dependencies", {}).get("student", [])]
    scripts = {name: target for name, target in project.get("scripts", {}).items()
               if target.split(":")[0] in (f"{GRADER.name}.selfcheck", library) or target.startswith(f"{library}.")}
    quoted = json.dumps  # a JSON string of ASCII text is a valid TOML basic string
    lines = [
        "[build-system]",
        f"requires = [{quoted(BUILD_BACKEND[0])}]",
        f"build-backend = {quoted(BUILD_BACKEND[1])}",
        "",
        "[project]",
        f"name = {quoted(distribution)}",
        f"version = {quoted(project['version'])}",
        f"description = {quoted('For students: the course library ' + library + ' and the self-check.')}",
        f"requires-python = {quoted(project['requires-python'])}",
        f"license = {quoted(project['license'])}",
        "dependencies = [",
        *(f"    {quoted(requirement)}," for requirement in dependencies),
        "]",
        "",
        "[project.scripts]",
        *(f"{name} = {quoted(target)}" for name, target in scripts.items()),
        "",
        "[tool.hatch.build.targets.wheel]",
        f"packages = [{quoted(library)}, {quoted(GRADER.name)}]",
        "",
    ]
    return "\n".join(lines)


def find_leaks(folder: Path) -> list[str]:
    """Every path under ``folder`` that a student must not receive, with the reason."""
    leaks = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if FORBIDDEN_PARTS & set(relative.parts) or path.name in FORBIDDEN_NAMES:
            leaks.append(f"{relative}: grading or course-only file")
        elif path.is_symlink():
            leaks.append(f"{relative}: a symbolic link")
        elif path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            leaks.extend(f"{relative}: contains {marker!r}" for marker in FORBIDDEN_TEXT if marker in text)
    return leaks


#: A line this long or longer of a course-only file is looked for in what students receive.
DISTINCTIVE_CHARS = 40


def course_only_files(course: Course, ignore: tuple[str, ...]) -> list[Path]:
    """Files of ``source/`` no student receives: the non-notebook files of an assignment's folder that nbgrader keeps
    out of ``release/`` (``ignore``: hidden checks, and whatever else the course lists) and the checks' shared helpers
    (``source/_<folder>/``)."""
    found = []
    for path in sorted(course.source.glob("*/**/*")) if course.source.is_dir() else ():
        relative = path.relative_to(course.source)
        if not path.is_file() or path.suffix == ".ipynb" or not is_distributable(relative):
            continue
        if relative.parts[0].startswith("_") or any(fnmatch.fnmatch(part, pattern) for part in relative.parts[1:] for pattern in ignore):
            found.append(path)
    return found


def course_only_leaks(course: Course, folder: Path, ignore: tuple[str, ...], library: str) -> list[str]:
    """Every file under ``folder`` named like a course-only file of ``source/``, or quoting one of its long lines
    (imports, comments and lines the library holds too say nothing)."""
    def lines(path: Path) -> set[str]:
        return {line.strip() for line in path.read_bytes().decode("utf-8", errors="replace").splitlines()}

    shared = {line for module in (course.root / library).rglob("*.py") for line in lines(module)}
    wanted: dict[str, Path] = {}
    for path in course_only_files(course, ignore):
        for line in lines(path):
            if len(line) >= DISTINCTIVE_CHARS and not line.startswith(("from ", "import ", "#")) and line not in shared:
                wanted.setdefault(line, path)
    names = {path.name for path in course_only_files(course, ignore) if path.suffix == ".py"}
    leaks = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        relative = path.relative_to(folder)
        if path.name in names and relative.parts[0] == "assignments":
            leaks.append(f"{relative}: a course-only file of source/ (never released)")
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix == ".ipynb":
            try:
                text = "\n".join("".join(cell.get("source", "")) for cell in json.loads(text).get("cells", []))
            except (ValueError, AttributeError, TypeError):
                pass
        quoted = sorted(line for line in {line.strip() for line in text.splitlines()} if line in wanted)
        if quoted:
            leaks.append(f"{relative}: quotes {wanted[quoted[0]].relative_to(course.root)} ({quoted[0][:60]!r})")
    return leaks


def bundle_date(root: Path, files: list[Path]) -> int:
    """The date (seconds since 1970, UTC) given to every entry of the zip.

    ``SOURCE_DATE_EPOCH`` if set (the reproducible-builds convention), else the committer date
    of the course's git ``HEAD``, else the newest modification time among ``files``.
    """
    from_environment = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if from_environment:
        try:
            return max(int(from_environment), ZIP_EPOCH)
        except ValueError:
            raise CourseError(f"SOURCE_DATE_EPOCH={from_environment!r} is not a number of seconds") from None
    try:
        commit = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True, timeout=30)
        if commit.returncode == 0 and commit.stdout.strip().isdigit():
            return max(int(commit.stdout.strip()), ZIP_EPOCH)
    except (OSError, subprocess.SubprocessError):
        pass  # no git here: fall back on the files themselves
    return max([ZIP_EPOCH, *(int(path.stat().st_mtime) for path in files)])


def write_zip(folder: Path, archive: Path, date: int) -> None:
    """Zip ``folder`` (as its own top-level folder) with sorted entries, each dated ``date`` (UTC)."""
    date_time = time.gmtime(date)[:6]
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle_zip:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                entry = zipfile.ZipInfo(str(path.relative_to(folder.parent)), date_time=date_time)
                entry.external_attr = 0o644 << 16
                entry.compress_type = zipfile.ZIP_DEFLATED
                bundle_zip.writestr(entry, path.read_bytes())


def clear_previous_bundle(folder: Path) -> None:
    """Remove an earlier bundle at ``folder``, refusing to delete anything else."""
    if not folder.exists():
        return
    if not (folder / "package" / GRADER.name).is_dir() or (folder / ".git").exists():
        raise CourseError(f"{folder} exists and is not a student bundle; choose another --out")
    shutil.rmtree(folder)


def build_bundle(course: Course, out: Path, *, check_release: bool = True) -> tuple[Path, Path]:
    """Write the student bundle of ``course`` under ``out`` as a folder and a zip.

    Parameters
    ----------
    course : Course
        A course repository: ``release/``, ``notebooks/``, its library's package (``term.toml``'s ``[library]``),
        ``pyproject.toml`` and ``term.toml`` at its root.
    out : Path
        Where the bundle's folder and zip go (named by term.toml's ``[bundle].name``).
    check_release : bool
        Refuse a ``release/`` that is not what ``source/`` generates (default). Only tests of
        the leak scan turn it off.

    Returns
    -------
    (Path, Path)
        The folder and the zip.

    Raises
    ------
    CourseError
        If a part is missing, ``release/`` is stale, or the bundle would hold something students
        must not see.
    """
    root = course.root
    library = course.term().library.package
    if not library:
        raise CourseError(f"{root / 'term.toml'} names no library ([library] package): the student package holds it")
    for needed in ("release", "notebooks", library, "pyproject.toml", "term.toml"):
        if not (root / needed).exists():
            raise CourseError(f"{root / needed} is missing; the student bundle is built from it")
    if check_release:
        from .course.release_check import stale_assignments

        stale = stale_assignments(course, course.term().assignment_names)
        stale += sorted(p.name for p in course.release.iterdir()  # a release without a source
                        if p.is_dir() and is_distributable(Path(p.name)) and p.name not in course.source_folders())
        if stale:
            raise CourseError(f"release/ is not what source/ generates for {', '.join(stale)}: students would get a stale "
                              f"version; run `{grader_command()} release` (and commit it), then bundle again")
    term = course.term()
    missing = [name for name in term.assignment_names if not (course.release / name).is_dir()]
    if missing:
        raise CourseError(f"release/ has no {', '.join(missing)} (an assignment of term.toml): run `{grader_command()} release`")
    out = Path(out).expanduser().resolve()
    folder, archive = out / term.bundle_name, out / f"{term.bundle_name}.zip"
    clear_previous_bundle(folder)
    folder.mkdir(parents=True)

    from .course.student_readme import render
    from .course.term import student_settings

    (folder / "README.md").write_text(render(course, term), encoding="utf-8")
    released = [course.release / name for name in term.assignment_names]
    # What nbgrader never releases (the course's CourseDirectory.ignore: hidden checks, other course-only files) is
    # never bundled either, even when a copy was left in release/ by hand.
    from .course.course import load_config

    never_released = tuple(load_config(course).CourseDirectory.get("ignore", ()))
    for assignment in released:
        copy_files(assignment, folder / "assignments" / assignment.name, ignore=never_released)
    for lecture in sorted((root / "notebooks").glob("*.ipynb")):
        (folder / "notebooks").mkdir(exist_ok=True)
        shutil.copyfile(lecture, folder / "notebooks" / lecture.name)
    copy_files(root / library, folder / "package" / library)
    grader = folder / "package" / GRADER.name
    grader.mkdir()
    for name in SELF_CHECK_FILES:
        shutil.copyfile(GRADER / name, grader / name)
    (folder / "package" / "pyproject.toml").write_text(student_pyproject(root / "pyproject.toml", term.bundle_name, library),
                                                       encoding="utf-8")
    (grader / SETTINGS_FILE).write_text(json.dumps(student_settings(term), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    chosen = {name: found for name, found in released_assignments(
        course.release, lambda name: import_rules(root, name)).items() if name in term.assignment_names}
    (grader / MANIFEST_FILE).write_text(manifest_json(chosen), encoding="utf-8")

    leaks = find_leaks(folder) + hidden_checks_leaks(root, folder) + course_only_leaks(course, folder, never_released, library)
    if leaks:
        shutil.rmtree(folder)
        raise CourseError("the student bundle would leak course-only material:\n  " + "\n  ".join(leaks))
    archive.unlink(missing_ok=True)
    write_zip(folder, archive, bundle_date(root, [p for p in folder.rglob("*") if p.is_file()]))
    return folder, archive
