"""Helpers shared by the course's test files: the course on disk, its term settings, what the example class earns.

Nothing here names an assignment, a cell or a score: an instructor's edits of ``source/``, ``example_class/`` or
``term.toml`` change the expectations with them.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

from course_grader.trusted.course.example_class import ExpectedGrade, solutions_by_test_cell
from course_grader.trusted.course.example_class import expected_example_grades as _expected_example_grades
from course_grader.testing.xdist_units import pytest_xdist_make_scheduler  # noqa: F401 - a hook (--dist loadgroup): pytest finds it here

REPO = Path(__file__).resolve().parents[1]


def this_course():
    """The course of this repository (``source/``, ``release/``, its settings), as the grader opens it."""
    from course_grader.trusted.course.course import Course

    return Course.open(REPO)


@dataclass(frozen=True)
class TermSettings:
    """What an instructor changes each term, as the grader reads it."""

    course_id: str
    late_policy: str  # "none" | "zero" | "per_day"
    cell_seconds: float
    header: str  # a notebook put on top of every released notebook, relative to the course root ("" for none)


def term_settings(root: Path = REPO) -> TermSettings:
    """The term settings of the course at ``root``.

    From the term file (``term.toml``, read by ``grader/course_grader/trusted/course/term.py``'s ``load_term``) where
    the course has one; otherwise from ``nbgrader_config.py``, through the grader's own loader.
    """
    from course_grader.trusted.course.course import Course, load_config

    if (root / "term.toml").is_file():
        from course_grader.trusted.course.term import load_term

        term = load_term(root)
        return TermSettings(course_id=term.course.id, late_policy=term.late.policy, cell_seconds=float(term.limits.cell_seconds),
                            header=term.course.header)
    config = load_config(Course.open(root))
    return TermSettings(course_id=config.CourseDirectory.get("course_id", ""),
                        late_policy=config.LateSubmissionPlugin.get("penalty_method", "none"),
                        cell_seconds=float(config.Execute.get("timeout", 30)),
                        header=config.IncludeHeaderFooter.get("header", ""))


def course_files(root: Path = REPO) -> list[str]:
    """What a copy of the course needs to release and grade, relative to ``root``: the configuration, the term file,
    source, release, and the header notebook (the term's, or one the configuration names), if any."""
    from course_grader.trusted.course.course import Course
    from course_grader.trusted.course.release_check import header_and_footer

    course = Course.open(root)
    header = course.term().course.header if (root / "term.toml").is_file() else ""
    names = ["nbgrader_config.py", "term.toml", "source", "release", *([header] if header else []),
             *(str(path) for path in header_and_footer(course))]
    return [name for name in names if (root / name).exists()]


def copy_course_to(destination: Path, root: Path = REPO, names: list[str] | None = None) -> Path:
    """Copy ``course_files(root)`` (or ``names``) into ``destination``; returns it."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in names if names is not None else course_files(root):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (root / name).is_dir():
            shutil.copytree(root / name, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        else:
            shutil.copy2(root / name, target)
    return destination


def expected_example_grades(course, recipes_folder: Path = REPO / "example_class") -> dict[tuple[str, str], ExpectedGrade]:
    """What each example student of this course should get (``example_class.expected_example_grades``)."""
    return _expected_example_grades(course, recipes_folder)


__all__ = ["REPO", "ExpectedGrade", "TermSettings", "copy_course_to", "course_files", "expected_example_grades",
           "solutions_by_test_cell", "term_settings", "this_course"]


#: How a test of tests/course/test_checks.py names the checks it is about: ``checks.check_<name>(``,
#: ``CHECKS["<name>"]``, ``assignment_of("<name>")``, ``failed_behaviours("<name>"``.
_NAMED_CHECK = __import__("re").compile(r'\bchecks\.check_(\w+)\(|\bCHECKS\["(\w+)"\]|\b(?:assignment_of|failed_behaviours)\("(\w+)"')


def pytest_collection_modifyitems(config, items):
    """A test of a check the course no longer has (its assignment dropped) is no test of this course: deselected,
    like a test never written. Only the tests that name their checks (``_NAMED_CHECK``) are concerned."""
    import inspect

    from course_grader.trusted.judging.check_registry import course_checks

    concerned = [item for item in items if item.path.name == "test_checks.py" and getattr(item, "function", None)]
    if not concerned:
        return
    known = set(course_checks(REPO))
    dropped = []
    for item in concerned:
        named = {name for match in _NAMED_CHECK.finditer(inspect.getsource(item.function)) for name in match.groups() if name}
        if named - known:
            dropped.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
