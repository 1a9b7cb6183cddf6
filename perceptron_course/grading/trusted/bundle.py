"""The student bundle: exactly what students receive, as a folder and a zip.

``perceptron-course bundle`` builds it from the repository's own files::

    perceptron-course-student/
        README.md        the README's "For students" section
        assignments/     release/<assignment>/ (no solutions, no hidden tests)
        notebooks/       the lecture notebooks
        package/         an installable student package: the library without its
                         grading code, with the student dependencies and the self-check
    perceptron-course-student.zip

The bundle is scanned before it is kept: a solution, a hidden test, a gradebook or any
grading file in it stops the build with the path to fix.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import zipfile
from pathlib import Path

from .course import Course, CourseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BUNDLE_NAME = "perceptron-course-student"
STUDENT_DISTRIBUTION = "perceptron-course-student"
LIBRARY = "perceptron_course"
# Paths and text that must never reach a student (the scan is a second line of defence:
# the copy below only takes what students need).
FORBIDDEN_PARTS = {"source", "tests", "example_class", "grading", "submitted", "autograded", "feedback"}
FORBIDDEN_NAMES = {"gradebook.db", "grading_secret", "nbgrader_config.py"}
FORBIDDEN_TEXT = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
# 1980-01-01, the zip format's earliest date: the same files always give the same zip.
ZIP_TIMESTAMP = (1980, 1, 1, 0, 0, 0)


def is_distributable(path: Path) -> bool:
    """False for editor and interpreter leftovers (checkpoints, caches, hidden files)."""
    return not any(part.startswith(".") or part == "__pycache__" for part in path.parts) and path.suffix != ".pyc"


def copy_files(source: Path, target: Path, skip_top: frozenset[str] = frozenset()) -> None:
    """Copy the distributable regular files under ``source`` into ``target``, never following links.

    ``skip_top`` names entries directly under ``source`` to leave out.
    """
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if relative.parts[0] in skip_top or not is_distributable(relative) or path.is_symlink() or not path.is_file():
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


def for_students_section(readme: Path) -> str:
    """The ``## For students`` section of the README (heading included)."""
    match = re.search(r"^## For students\n.*?(?=^## |\Z)", readme.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    if match is None:
        raise CourseError(f"{readme} has no '## For students' section; the bundle's README is taken from it")
    return match.group(0).rstrip() + "\n"


def student_pyproject(project_pyproject: Path) -> str:
    """A ``pyproject.toml`` for the student package, derived from the course's own.

    Its dependencies are the library's plus the ``student`` extra; its console scripts are
    those that do not live in the grading code (the self-check).
    """
    project = tomllib.loads(project_pyproject.read_text(encoding="utf-8"))["project"]
    dependencies = [*project["dependencies"], *project["optional-dependencies"]["student"]]
    scripts = {name: target for name, target in project.get("scripts", {}).items() if ".grading" not in target}
    quoted = json.dumps  # a JSON string of ASCII text is a valid TOML basic string
    lines = [
        "[build-system]",
        'requires = ["setuptools>=77"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {quoted(STUDENT_DISTRIBUTION)}",
        f"version = {quoted(project['version'])}",
        'description = "The perceptron course for students: the reference library and the self-check."',
        f"requires-python = {quoted(project['requires-python'])}",
        f"license = {quoted(project['license'])}",
        "dependencies = [",
        *(f"    {quoted(requirement)}," for requirement in dependencies),
        "]",
        "",
        "[project.scripts]",
        *(f"{name} = {quoted(target)}" for name, target in scripts.items()),
        "",
        "[tool.setuptools.packages.find]",
        f'include = ["{LIBRARY}*"]',
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


def write_zip(folder: Path, archive: Path) -> None:
    """Zip ``folder`` (as its own top-level folder) with sorted entries and fixed dates."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle_zip:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                entry = zipfile.ZipInfo(str(path.relative_to(folder.parent)), date_time=ZIP_TIMESTAMP)
                entry.external_attr = 0o644 << 16
                entry.compress_type = zipfile.ZIP_DEFLATED
                bundle_zip.writestr(entry, path.read_bytes())


def clear_previous_bundle(folder: Path) -> None:
    """Remove an earlier bundle at ``folder``, refusing to delete anything else."""
    if not folder.exists():
        return
    if not (folder / "package" / LIBRARY).is_dir() or (folder / ".git").exists():
        raise CourseError(f"{folder} exists and is not a student bundle; choose another --out")
    shutil.rmtree(folder)


def build_bundle(course: Course, out: Path) -> tuple[Path, Path]:
    """Write the student bundle of ``course`` under ``out`` as a folder and a zip.

    Parameters
    ----------
    course : Course
        A course repository: ``release/``, ``notebooks/``, ``perceptron_course/``,
        ``pyproject.toml`` and ``README.md`` at its root.
    out : Path
        Where ``perceptron-course-student/`` and ``perceptron-course-student.zip`` go.

    Returns
    -------
    (Path, Path)
        The folder and the zip.

    Raises
    ------
    CourseError
        If a part is missing, or the bundle would hold something students must not see.
    """
    root = course.root
    for needed in ("release", "notebooks", LIBRARY, "pyproject.toml", "README.md"):
        if not (root / needed).exists():
            raise CourseError(f"{root / needed} is missing; the student bundle is built from it")
    out = Path(out).expanduser().resolve()
    folder, archive = out / BUNDLE_NAME, out / f"{BUNDLE_NAME}.zip"
    clear_previous_bundle(folder)
    folder.mkdir(parents=True)

    (folder / "README.md").write_text(for_students_section(root / "README.md"), encoding="utf-8")
    for assignment in sorted(p for p in course.release.iterdir() if p.is_dir() and is_distributable(Path(p.name))):
        copy_files(assignment, folder / "assignments" / assignment.name)
    for lecture in sorted((root / "notebooks").glob("*.ipynb")):
        (folder / "notebooks").mkdir(exist_ok=True)
        shutil.copyfile(lecture, folder / "notebooks" / lecture.name)
    copy_files(root / LIBRARY, folder / "package" / LIBRARY, skip_top=frozenset({"grading"}))
    (folder / "package" / "pyproject.toml").write_text(student_pyproject(root / "pyproject.toml"), encoding="utf-8")

    leaks = find_leaks(folder)
    if leaks:
        shutil.rmtree(folder)
        raise CourseError("the student bundle would leak course-only material:\n  " + "\n  ".join(leaks))
    archive.unlink(missing_ok=True)
    write_zip(folder, archive)
    return folder, archive
