"""What a grading kernel can import of the course's reference library, for each assignment.

A course names its reference library in ``term.toml``'s ``[library]`` (the package, the modules a student may use,
the packages that compute the same answers). An assignment's ``hidden_checks.py`` may grant names of the library's
other modules in its ``ALLOWED_IMPORTS`` (``"<package>.theory.max_margin"``): the grading kernel of that assignment,
and no other, can then import them. The sandbox's view of the library, the intake's refused imports, the flags and
the self-check all follow these rules (``ImportRules``); nothing else in the grader names a library.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

from ...intake_rules import SELF_CHECK_FUNCTION, SELF_CHECK_MODULE, ImportRules
from ..course.course import CourseError
from ..course.library import library_modules
from ..course.term import TermError, load_term
from .check_registry import HIDDEN_CHECKS_FILE, _loaded_or_problem, course_assignments, load_assignment_checks

#: What every assignment may import without a flag for a TA. An assignment's ``hidden_checks.py`` may set its own
#: ``ALLOWED_IMPORTS`` (usually ``COMMON_IMPORTS | {...}``); the library's student modules are allowed either way.
#: An entry allows itself and everything below it (``numpy`` allows ``numpy.linalg``).
COMMON_IMPORTS = frozenset({
    "numpy", "math", "itertools", "functools", "collections", "typing", "dataclasses", "matplotlib",
    "__future__", "copy", "operator",  # plain helpers an honest solution may reach for
    "random", "warnings", "time",  # shuffling, silencing a warning, timing: nothing they reach runs code
    f"{SELF_CHECK_MODULE}.{SELF_CHECK_FUNCTION}",  # the self-check from the notebook: does nothing while grading
})


def granted_module(package: str, module: str, names: frozenset[str]) -> tuple[list[str], str]:
    """The private modules of the library that define ``names`` of ``package.module``, and the module's text in the view.

    Raises
    ------
    CourseError
        If a granted name is missing, or is defined in the graded module itself (beside the answers it must not give).
    """
    real = importlib.import_module(f"{package}.{module}")
    helpers, lines = [], []
    for name in sorted(names):
        defined_in = getattr(getattr(real, name, None), "__module__", None)
        if not isinstance(defined_in, str) or not defined_in.startswith(f"{package}._") or defined_in.count(".") != 1:
            raise CourseError(f"an ALLOWED_IMPORTS grants {package}.{module}.{name}, which is not defined in a private "
                              f"module of {package} (a file _name.py): move it into one, and import it in {module}.py, "
                              "so the grading kernel can have it without the rest of the module")
        helper = defined_in.split(".")[1]
        helpers.append(helper)
        lines.append(f"from .{helper} import {name}")
    text = '"""Only what this assignment may use, while grading."""\n\n' + "\n".join(lines) + \
        f"\n\n__all__ = {sorted(names)!r}\n"
    return sorted(set(helpers)), text


def grants_of(package: str, student_modules: frozenset[str], allowed: frozenset[str] | None) -> dict[str, frozenset[str]]:
    """``module -> names`` of the library that ``ALLOWED_IMPORTS`` entries ``<package>.<module>.<name>`` grant."""
    grants: dict[str, set[str]] = {}
    for entry in sorted(allowed or ()):
        parts = entry.split(".")
        if package and len(parts) == 3 and parts[0] == package and parts[1] not in student_modules:
            grants.setdefault(parts[1], set()).add(parts[2])
    return {module: frozenset(names) for module, names in grants.items()}


@functools.lru_cache(maxsize=256)
def _rules(course_root: Path, term_text: str, declared: frozenset[str] | None) -> ImportRules:
    library = load_term(course_root).library
    return ImportRules(library.package, library.student_modules,
                       grants_of(library.package, library.student_modules, declared), library.blocked)


def import_rules(course_root: str | Path, assignment: str) -> ImportRules:
    """The import rules of ``assignment``'s grading kernel (``""``: an assignment with no grants).

    Read from ``term.toml`` and the assignment's ``hidden_checks.py``, again whenever either changes (a service runs for
    a term, through an instructor's edits).
    """
    root = Path(course_root).resolve()
    term_file = root / "term.toml"
    text = term_file.read_text(encoding="utf-8") if term_file.is_file() else ""
    declared = load_assignment_checks(root, assignment).allowed_imports if assignment else None
    return _rules(root, text, declared)


def allowed_imports(course_root: Path, assignment: str) -> frozenset[str]:
    """The imports ``assignment`` allows without a flag: its hidden_checks.py's ``ALLOWED_IMPORTS`` (else
    :data:`COMMON_IMPORTS`), with the library's student modules."""
    declared = load_assignment_checks(course_root, assignment).allowed_imports
    rules = import_rules(course_root, assignment)
    students = {f"{rules.package}.{module}" for module in rules.student_modules} if rules.package else set()
    return (COMMON_IMPORTS if declared is None else declared) | frozenset(students)


def ungrantable_imports(course_root: Path) -> list[str]:
    """Entries of a hidden_checks.py's ``ALLOWED_IMPORTS`` that its grading kernel cannot have: a module of the course's
    library that does not exist, or a name of a graded module that the student view cannot give it alone."""

    try:
        library = load_term(course_root).library
    except TermError:
        return []  # the term file's own problem is reported by the term's check
    if not library.package:
        return []
    modules = set(library_modules(library.package)) | set(library.student_modules)
    problems = []
    for assignment in course_assignments(course_root):
        loaded, _ = _loaded_or_problem(course_root, assignment)
        if loaded is None:
            continue
        for entry in sorted(loaded.allowed_imports or ()):
            parts = entry.split(".")
            if parts[0] == library.package and len(parts) > 1 and parts[1] not in modules:
                problems.append(f"source/{assignment}/{HIDDEN_CHECKS_FILE}: ALLOWED_IMPORTS names {entry!r}, but "
                                f"{library.package} has no module {parts[1]}")
            elif parts[0] == library.package and len(parts) == 2 and parts[1] not in library.student_modules:
                problems.append(f"source/{assignment}/{HIDDEN_CHECKS_FILE}: ALLOWED_IMPORTS names the whole module "
                                f"{entry!r}, which holds reference answers: name the one function it may use "
                                f"({entry}.<name>)")
        grants = grants_of(library.package, library.student_modules, loaded.allowed_imports)
        for module, names in sorted(grants.items()):
            try:
                granted_module(library.package, module, names)
            except ImportError as error:
                problems.append(f"source/{assignment}/{HIDDEN_CHECKS_FILE}: ALLOWED_IMPORTS grants {module}, which does "
                                f"not import: {error}")
            except CourseError as error:
                problems.append(f"source/{assignment}/{HIDDEN_CHECKS_FILE}: {error}")
    return problems
