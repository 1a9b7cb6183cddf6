"""Is ``release/`` what ``source/`` generates? Asked before a bundle ships it, and after a release.

``stale_assignments`` regenerates the student versions with nbgrader into a temporary copy of
the course (its own gradebook; nothing of the course is written) and compares each notebook
with the committed one, both in their stored form (``notebook_format.normalise``: outputs and
run-time metadata do not count), as ``tests/course/test_assignments.py`` does.

``snapshot`` and ``changed_since`` tell, around ``perceptron-course release``, which assignments
it changed and which were already up to date.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .course import Course, CourseError, copy_course_settings

Snapshot = dict[str, dict[str, bytes]]  #: assignment -> relative path -> bytes of every file of its release folder


def _normalised(path: Path):
    import nbformat

    from .notebook_format import normalise

    return normalise(nbformat.read(path, as_version=4))


def _differs(committed: Path, generated: Path) -> bool:
    """Whether two release folders differ: notebooks in their stored form, other files byte for byte."""
    def files(folder: Path) -> dict[str, Path]:
        return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*"))
                if p.is_file() and ".ipynb_checkpoints" not in p.parts} if folder.is_dir() else {}

    mine, fresh = files(committed), files(generated)
    if mine.keys() != fresh.keys():
        return True
    for name, path in mine.items():
        if name.endswith(".ipynb"):
            try:
                if _normalised(path) != _normalised(fresh[name]):
                    return True
            except Exception:  # noqa: BLE001 - a committed notebook that does not read is stale
                return True
        elif path.read_bytes() != fresh[name].read_bytes():
            return True
    return False


def header_and_footer(course: Course) -> list[Path]:
    """The header and footer notebooks the configuration puts around every released notebook (nbgrader's
    ``IncludeHeaderFooter``), relative to the course root, where they are files of the course."""
    from .course import load_config

    config = load_config(course).IncludeHeaderFooter
    named = [Path(config.get(which, "")) for which in ("header", "footer") if config.get(which, "")]
    return [path for path in named if not path.is_absolute() and (course.root / path).is_file()]


def copy_release_settings(course: Course, destination: Path) -> None:
    """Copy what ``generate_assignment`` reads beside ``source/`` into another course root: the configuration and
    term (``copy_course_settings``), and a header or footer named in ``nbgrader_config.py`` itself."""
    copy_course_settings(course.root, destination)
    for relative in header_and_footer(course):
        (destination / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(course.root / relative, destination / relative)


def stale_assignments(course: Course, assignments: list[str] | None = None) -> list[str]:
    """The assignments whose ``release/`` folder is not what nbgrader generates from ``source/`` now.

    Raises
    ------
    CourseError
        If nbgrader cannot generate an assignment (the message names it).
    """
    from .course import nbgrader_api, nbgrader_error_line

    chosen = assignments or course.assignments()
    with tempfile.TemporaryDirectory(prefix="course-grader-release-check-") as scratch:
        copy = Path(scratch) / "course"
        copy.mkdir()
        copy_release_settings(course, copy)
        shutil.copytree(course.source, copy / "source", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        fresh = Course.open(copy)
        api = nbgrader_api(fresh)
        for assignment in chosen:
            result = api.generate_assignment(assignment, force=True)
            if not result["success"]:
                raise CourseError(f"cannot check release/{assignment}: nbgrader cannot generate it ({nbgrader_error_line(result)})")
        return [assignment for assignment in chosen if _differs(course.release / assignment, fresh.release / assignment)]


def snapshot(course: Course, assignments: list[str]) -> Snapshot:
    """The bytes of every file of each assignment's release folder (empty for a folder not there yet)."""
    taken: Snapshot = {}
    for assignment in assignments:
        folder = course.release / assignment
        taken[assignment] = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} \
            if folder.is_dir() else {}
    return taken


def changed_since(course: Course, before: Snapshot) -> tuple[list[str], list[str]]:
    """``(changed, up to date)``: the assignments of ``before`` whose release folder changed since, and the others."""
    after = snapshot(course, list(before))
    changed = [assignment for assignment in before if before[assignment] != after[assignment]]
    return changed, [assignment for assignment in before if assignment not in changed]


def release_summary(changed: list[str], up_to_date: list[str], release_folder: Path) -> str:
    """What ``perceptron-course release`` did, in one or two lines."""
    lines = [f"regenerated in {release_folder}: " + (", ".join(changed) if changed else "nothing changed")]
    if up_to_date:
        lines.append(f"already up to date: {', '.join(up_to_date)}")
    return "\n".join(lines)
