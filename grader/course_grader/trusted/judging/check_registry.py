"""Each assignment's hidden checks, loaded on the trusted side from ``source/<assignment>/hidden_checks.py``.

A part lives in one folder: its notebook cells in ``source/<assignment>/`` and its hidden
check beside them, in ``hidden_checks.py``. That file is course material, like the source
notebook: it is never released (nbgrader's ``CourseDirectory.ignore`` names it), never bundled,
never sent to the grading kernel. The grader imports it here, in the TA's process, under a
private module name (``_hidden_checks_<assignment>_<digest>``: nothing a student's code could
import by name, and two courses never share one).

What a ``hidden_checks.py`` defines (see ``docs/adding-a-part.md``):

- ``CHECKS``: a tuple of ``Check`` objects, one per graded part (required);
- ``ALLOWED_IMPORTS``: the imports a submission of this assignment may make without a flag
  (optional; ``flags.COMMON_IMPORTS`` when absent).

A loaded file is kept for the life of the process, keyed by its path, size and modification
time: a grading worker loads each assignment's checks once, whatever the number of students,
and an edited file is loaded again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Iterable, Mapping

from .checks.cases import Check
from ..course.course import CONFIG_FILE, CourseError
from ..course.nbgrader_configuration import HIDDEN_CHECKS_FILE as HIDDEN_CHECKS_FILE  # beside each source assignment
from .solution_reference import SolutionFunction
#: Prefix of the private module name a hidden_checks.py is loaded under.
MODULE_PREFIX = "_hidden_checks_"


class ChecksError(CourseError):
    """A ``hidden_checks.py`` that does not load, or does not define its checks; the message names the file."""


@dataclass(frozen=True)
class AssignmentChecks:
    """What one assignment's ``hidden_checks.py`` defines (empty when the assignment has none)."""

    assignment: str
    path: Path
    checks: dict[str, Check] = field(default_factory=dict)  #: by the name of the student function
    #: ``ALLOWED_IMPORTS`` of the file, or ``None`` when it does not define it (the common imports apply)
    allowed_imports: frozenset[str] | None = None
    module: ModuleType | None = None


class CourseChecks(dict):
    """Every check of a course by the name of the student function it tests, and each assignment's own.

    A plain ``dict`` (``function -> Check``) for the code that looks checks up by name; where two
    assignments check functions of the same name, the first assignment's is kept here and
    ``of(assignment)`` still gives each its own (``duplicated_functions`` lists them).
    """

    def __init__(self, assignments: Mapping[str, AssignmentChecks]):
        super().__init__()
        self.assignments: dict[str, AssignmentChecks] = dict(assignments)
        for loaded in self.assignments.values():
            for name, check in loaded.checks.items():
                self.setdefault(name, check)

    def of(self, assignment: str) -> dict[str, Check]:
        """The checks of one assignment by function name (``{}`` for an assignment without hidden checks)."""
        loaded = self.assignments.get(assignment)
        return dict(loaded.checks) if loaded is not None else {}


# ----------------------------------------------------------------------------- finding the course


def find_course_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``nbgrader_config.py`` and ``source/`` (``None`` if none)."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file() and (folder / "source").is_dir():
            return folder
    return None


def checks_file(course_root: Path, assignment: str) -> Path:
    return Path(course_root) / "source" / assignment / HIDDEN_CHECKS_FILE


def course_assignments(course_root: Path) -> list[str]:
    """The assignments of a course: the folders of its ``source/`` (as ``Course.assignments``)."""
    source = Path(course_root) / "source"
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


# ----------------------------------------------------------------------------- loading


_LOCK = threading.RLock()
#: Loaded files by resolved path: ``(size, mtime_ns, loaded)``.
_LOADED: dict[Path, tuple[int, int, AssignmentChecks]] = {}
_LOADING: list[Path] = []  # files being loaded, to name an import cycle instead of recursing


def module_name(path: Path) -> str:
    """The private module name of a hidden_checks.py: its assignment and a digest of its path."""
    folder = re.sub(r"\W", "_", path.parent.name)
    return f"{MODULE_PREFIX}{folder}_{hashlib.sha256(str(path).encode()).hexdigest()[:10]}"


def load_checks_file(path: Path) -> AssignmentChecks:
    """The checks a ``hidden_checks.py`` defines, loaded once per version of the file.

    Raises
    ------
    ChecksError
        If the file does not load (the error it raised is named), or its ``CHECKS`` or
        ``ALLOWED_IMPORTS`` are not what they must be.
    """
    path = Path(path).resolve()
    assignment = path.parent.name
    with _LOCK:
        try:
            info = path.stat()
        except OSError:
            return AssignmentChecks(assignment, path)
        kept = _LOADED.get(path)
        if kept is not None and kept[:2] == (info.st_size, info.st_mtime_ns):
            return kept[2]
        if path in _LOADING:
            cycle = " -> ".join(str(p.parent.name) for p in (*_LOADING[_LOADING.index(path):], path))
            raise ChecksError(f"{path}: the hidden checks import each other in a cycle ({cycle})")
        _LOADING.append(path)
        try:
            module = _execute(path)
        finally:
            _LOADING.pop()
        loaded = AssignmentChecks(assignment, path, _checks_of(module, path), _allowed_imports_of(module, path), module)
        _LOADED[path] = (info.st_size, info.st_mtime_ns, loaded)
        return loaded


def _execute(path: Path) -> ModuleType:
    name = module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ChecksError(f"{path} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and pickling look a class's module up by name
    try:
        spec.loader.exec_module(module)
    except ChecksError:
        _restore(name, previous)
        raise
    except BaseException as error:  # noqa: BLE001 - the instructor's file: any error is theirs to fix, named here
        _restore(name, previous)
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        raise ChecksError(f"{path} does not load: {type(error).__name__}: {error}") from error
    return module


def _restore(name: str, previous: ModuleType | None) -> None:
    if previous is None:
        sys.modules.pop(name, None)
    else:
        sys.modules[name] = previous


def _checks_of(module: ModuleType, path: Path) -> dict[str, Check]:
    declared = getattr(module, "CHECKS", None)
    if not isinstance(declared, (tuple, list)) or not all(isinstance(check, Check) for check in declared):
        raise ChecksError(f"{path} must define CHECKS, a tuple of Check objects (one per graded part)")
    checks: dict[str, Check] = {}
    for check in declared:
        if check.function in checks:
            raise ChecksError(f"{path}: two checks of {check.function} in CHECKS; keep one")
        checks[check.function] = check
    return checks


def _allowed_imports_of(module: ModuleType, path: Path) -> frozenset[str] | None:
    allowed = getattr(module, "ALLOWED_IMPORTS", None)
    if allowed is None:
        return None
    if isinstance(allowed, str) or not all(isinstance(name, str) and name for name in allowed):
        raise ChecksError(f"{path}: ALLOWED_IMPORTS must be a set of module names such as 'numpy' or "
                          "'<library>.<module>.<name>'")
    return frozenset(allowed)


def load_assignment_checks(course_root: Path, assignment: str) -> AssignmentChecks:
    """The hidden checks of one assignment of the course at ``course_root`` (empty if it has no hidden_checks.py)."""
    return load_checks_file(checks_file(course_root, assignment))


def course_checks(course_root: Path, assignments: Iterable[str] | None = None) -> CourseChecks:
    """Every assignment's hidden checks (``assignments``: the folders of ``source/`` unless given)."""
    names = course_assignments(course_root) if assignments is None else list(assignments)
    return CourseChecks({name: load_assignment_checks(course_root, name) for name in names})


def ready_to_grade(course_root: Path, assignments: Iterable[str]) -> CourseChecks:
    """Load the checks of ``assignments`` and run the source solutions their references come from, in this process.

    The batch calls it before grading anything: a hidden_checks.py that does not load, or a solution
    that does not run or lacks its function, stops the batch with a clear error instead of failing
    every student's part.

    Raises
    ------
    ChecksError
        Naming the file and the problem.
    """
    registry = course_checks(course_root, assignments)
    for loaded in registry.assignments.values():
        for name, check in loaded.checks.items():
            if isinstance(check.reference, SolutionFunction):
                try:
                    check.reference.__wrapped__
                except Exception as error:  # noqa: BLE001 - the instructor's notebook: any error is theirs, named here
                    raise ChecksError(f"{loaded.path}: the reference of {name} is the solution in {check.reference.notebook}, "
                                      f"which does not run: {type(error).__name__}: {error}") from error
    return registry


def checks_beside(file: str | Path, assignment: str) -> ModuleType:
    """The loaded ``hidden_checks.py`` module of another assignment of the same course as ``file``.

    For a hidden_checks.py that reuses another's cases::

        algorithm = checks_beside(__file__, "02_algorithm")
        training_cases = algorithm.training_cases

    Raises
    ------
    ChecksError
        If that assignment has no hidden_checks.py.
    """
    path = checks_file(Path(file).resolve().parent.parent.parent, assignment)
    loaded = load_checks_file(path)
    if loaded.module is None:
        raise ChecksError(f"{Path(file)} uses the hidden checks of {assignment}, but {path} does not exist")
    return loaded.module


#: The folder of ``source/`` that holds the course's helpers shared by several hidden checks (never released).
SHARED_FOLDER = "_shared"
#: Loaded shared modules by resolved path: ``(size, mtime_ns, module)``.
_SHARED: dict[Path, tuple[int, int, ModuleType]] = {}


def course_module(file: str | Path, name: str) -> ModuleType:
    """The course's shared helper ``source/_shared/<name>.py``, for the hidden checks of the course holding ``file``.

    For helpers several assignments' checks use (training data, say), so that no assignment's checks import
    another's::

        training = course_module(__file__, "training_data")
        cases = training.training_cases(rng, visible=[...])

    Raises
    ------
    ChecksError
        If there is no such file, or it does not load.
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ChecksError(f"{Path(file)}: course_module takes a module name such as 'training_data'; got {name!r}")
    path = (Path(file).resolve().parent.parent / SHARED_FOLDER / f"{name}.py").resolve()
    with _LOCK:
        try:
            info = path.stat()
        except OSError:
            raise ChecksError(f"{Path(file)} uses the course's {name}, but {path} does not exist") from None
        kept = _SHARED.get(path)
        if kept is not None and kept[:2] == (info.st_size, info.st_mtime_ns):
            return kept[2]
        module = _execute(path)
        _SHARED[path] = (info.st_size, info.st_mtime_ns, module)
        return module


# ----------------------------------------------------------------------------- never released


#: A line of a hidden_checks.py this long or longer is looked for in what students receive.
DISTINCTIVE_CHARS = 40


def _long_lines(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if len(line.strip()) >= DISTINCTIVE_CHARS}


def distinctive_lines(course_root: Path) -> set[str]:
    """Stripped lines of every hidden_checks.py of the course long enough to say the file leaked if found elsewhere.

    Imports, and lines the public library holds too (a dataset's points, say), say nothing.
    """
    lines: set[str] = set()
    for path in sorted((Path(course_root) / "source").glob(f"*/{HIDDEN_CHECKS_FILE}")):
        lines |= {line for line in _long_lines(path) if not line.startswith(("from ", "import "))}
    from ..course.term import load_term
    from ..course.library import library_folder

    library = library_folder(load_term(course_root).library.package) if (Path(course_root) / "term.toml").is_file() else None
    for module in library.glob("*.py") if library is not None else ():
        lines -= _long_lines(module)
    return lines


def hidden_checks_leaks(course_root: Path, folder: Path) -> list[str]:
    """Every file under ``folder`` (a release, a bundle) that is a hidden_checks.py or quotes one, with the reason.

    Notebooks are read cell by cell (their JSON escapes quotes); other files as text.
    """
    import json

    wanted = distinctive_lines(course_root)
    leaks = []
    for path in sorted(Path(folder).rglob("*")):
        relative = path.relative_to(folder)
        if path.name == HIDDEN_CHECKS_FILE:
            leaks.append(f"{relative}: an assignment's hidden checks")
            continue
        if path.is_symlink() or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix == ".ipynb":
            try:
                text = "\n".join("".join(cell.get("source", "")) for cell in json.loads(text).get("cells", []))
            except (ValueError, AttributeError, TypeError):
                pass
        quoted = sorted(line for line in {line.strip() for line in text.splitlines()} if line in wanted)
        if quoted:
            leaks.append(f"{relative}: quotes a hidden_checks.py ({quoted[0][:60]!r})")
    return leaks


# ----------------------------------------------------------------------------- consistency (``perceptron-course check``)
#
# Each returns what an instructor must fix, one sentence per problem naming the file, ``[]`` when all is well.


def _test_cells(course_root: Path, assignment: str) -> list[tuple[str, str, str]]:
    """``(notebook file, grade_id, source)`` of every graded test code cell of an assignment's source."""
    import json

    found = []
    for path in sorted((Path(course_root) / "source" / assignment).glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError, AttributeError):
            continue  # an unreadable notebook is reported by the checks of notebooks
        for cell in cells:
            meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
            if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
                source = cell.get("source", "")
                found.append((path.name, str(meta.get("grade_id")), "".join(source) if isinstance(source, list) else str(source)))
    return found


def _loaded_or_problem(course_root: Path, assignment: str) -> tuple[AssignmentChecks | None, str]:
    try:
        return load_assignment_checks(course_root, assignment), ""
    except ChecksError as error:
        return None, str(error)


def parts_without_check(course_root: Path) -> list[str]:
    """Graded test cells of ``source/`` that declare no hidden check, or one their assignment's hidden_checks.py lacks."""
    from .verdicts import DeclarationError, declared_names, hidden_region

    problems = []
    for assignment in course_assignments(course_root):
        loaded, problem = _loaded_or_problem(course_root, assignment)
        if problem:
            problems.append(problem)
            continue
        assert loaded is not None
        for notebook, grade_id, source in _test_cells(course_root, assignment):
            where = f"source/{assignment}/{notebook}, cell {grade_id}"
            try:
                names = declared_names(hidden_region(source))
            except DeclarationError as error:
                problems.append(f"{where}: the hidden-test region is not a list of check_<function>(<function>) calls "
                                f"({error})")
                continue
            if not names:
                problems.append(f"{where}: a graded test cell without a hidden check (add a ### BEGIN HIDDEN TESTS region "
                                f"calling check_<function>(<function>), and its Check in {HIDDEN_CHECKS_FILE})")
            problems += [f"{where}: declares check_{name}, but source/{assignment}/{HIDDEN_CHECKS_FILE} has no check of "
                         f"{name} in CHECKS" for name, _, _ in names if name not in loaded.checks]
    return problems


def checks_without_part(course_root: Path) -> list[str]:
    """Checks a hidden_checks.py defines that no graded test cell of its assignment declares (they never run)."""
    from .verdicts import DeclarationError, declared_names, hidden_region

    problems = []
    for assignment in course_assignments(course_root):
        loaded, problem = _loaded_or_problem(course_root, assignment)
        if loaded is None or not loaded.checks:
            continue  # a file that does not load is parts_without_check's to report
        declared = set()
        for _, _, source in _test_cells(course_root, assignment):
            try:
                declared |= {name for name, _, _ in declared_names(hidden_region(source))}
            except DeclarationError:
                continue
        problems += [f"source/{assignment}/{HIDDEN_CHECKS_FILE}: the check of {name} is declared by no graded test cell "
                     f"(add check_{name}({name}) to the hidden-test region of its part, or remove the check)"
                     for name in sorted(set(loaded.checks) - declared)]
    return problems


def registry_problems(course_root: Path) -> list[str]:
    """Every inconsistency between ``source/`` and its hidden checks (the two checks above, in order)."""
    return [*parts_without_check(course_root), *checks_without_part(course_root)]
