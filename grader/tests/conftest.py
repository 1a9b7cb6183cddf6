"""Helpers shared by the grader's test files: trees and processes, and the grader's own fixture course."""

import atexit
import functools
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

# Fixtures are data, not tests: the fixture course's notebooks would otherwise run under nbval (--nbval-lax).
collect_ignore = ["fixtures"]


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (pyproject.toml): a test file is one unit of work, on one worker (its module fixtures made
    once), unless its tests name groups (``@pytest.mark.xdist_group(NAME)`` on a test, or ``pytestmark`` for the
    file): a long file splits so that both workers stay busy till the end (``FileOrGroupScheduling``)."""
    if config.getvalue("dist") == "loadgroup":
        return FileOrGroupScheduling(config, log)
    return None


def _declared_groups(path: Path) -> tuple[str | None, dict[str, str]]:
    """The ``xdist_group`` names a test file declares: its ``pytestmark``'s, and each test function's (by name).

    Read from the source (the controller collects nothing): a name is a string, or a module-level string constant.
    """
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None, {}
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}

    def group_of(expressions) -> str | None:
        for expression in expressions:
            if (isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)
                    and expression.func.attr == "xdist_group" and expression.args):
                argument = expression.args[0]
                if isinstance(argument, ast.Constant):
                    return str(argument.value)
                if isinstance(argument, ast.Name) and argument.id in constants:
                    return constants[argument.id]
        return None

    file_group = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            file_group = group_of(marks)
    functions = {node.name: group for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and (group := group_of(node.decorator_list))}
    return file_group, functions


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # run without pytest-xdist: no scheduling to do
    LoadScopeScheduling = object


class FileOrGroupScheduling(LoadScopeScheduling):
    """Units of work: a test file, or a group its tests declare (``_declared_groups``); the declared groups go first
    (a file splits, or names a group, because it is long), then the files, most tests first (as xdist does).

    xdist's own ``loadgroup`` renames each test ``<id>@<group>`` to group it, which pytest 9 ignores (``Node.nodeid``
    is no longer the ``_nodeid`` xdist sets): every test then became a unit of its own, and each worker made every
    module fixture again. This scheduler reads the groups from the source, on the controller.
    """

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.root = Path(str(config.rootpath))
        self.declared: dict[str, tuple[str | None, dict[str, str]]] = {}

    def _group(self, nodeid: str) -> tuple[bool, str]:
        nodeid = nodeid.split("@")[0] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid  # xdist's own suffix
        file, _, rest = nodeid.partition("::")
        if file not in self.declared:
            self.declared[file] = _declared_groups(self.root / file)
        file_group, functions = self.declared[file]
        function = rest.split("::")[-1].split("[")[0]
        group = functions.get(function) or file_group
        return (True, f"{file}::{group}") if group else (False, file)

    def _split_scope(self, nodeid: str) -> str:
        return self._group(nodeid)[1]

    def schedule(self) -> None:
        """xdist's ``LoadScopeScheduling.schedule``, with the units in this order (declared groups first)."""
        assert self.collection_is_completed
        if self.collection is not None:  # the first distribution is done: more work for whoever is short of it
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        units: dict[tuple[bool, str], dict[str, bool]] = {}
        for nodeid in self.collection:
            units.setdefault(self._group(nodeid), {})[nodeid] = False
        for unit in sorted(units, key=lambda unit: (not unit[0], -len(units[unit]))):
            self.workqueue[unit[1]] = units[unit]
        for _ in range(len(self.nodes) - len(self.workqueue)):  # more workers than work: the rest stop
            unused_node, _ = self.assigned_work.popitem()
            unused_node.shutdown()
        for node in self.nodes:
            self._assign_work_unit(node)
        for node in self.nodes:
            self._reschedule(node)
        if not self.workqueue:
            for node in self.nodes:
                node.shutdown()


def tree_digest(folder: Path) -> str:
    """A hash of every path and file content under ``folder`` (to prove nothing changed)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def tree_state(folder: Path, *, exclude: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Mode and content hash (or link target) of every entry under ``folder``, never following a link.

    ``exclude`` names top-level entries left out (the grader's own output). Comparing two
    states shows exactly which path changed, and how.
    """
    state = {}
    pending = [folder]  # an explicit stack: a hostile submission nests folders deeper than Python recurses
    while pending:
        here = pending.pop()
        with os.scandir(here) as listing:
            entries = list(listing)
        for entry in entries:
            if here == folder and entry.name in exclude:
                continue
            path = Path(entry.path)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                content = "-> " + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                content = stat.filemode(info.st_mode)[0]
                if stat.S_ISDIR(info.st_mode):
                    pending.append(path)
            state[str(path.relative_to(folder))] = (stat.filemode(info.st_mode), content)
    return state


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, queue = [], [pid]
    while queue:
        found.append(queue.pop())
        queue += _children(found[-1])
    return found


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def sandboxes_left() -> list[int]:
    """Grading kernels of this process still running (a kernel not shut down).

    Its zygotes stay, warm, between batches: what must be gone is every kernel they forked
    (each with the zygote's child that keeps it), and any bubblewrap that is not a zygote's.
    """
    found = []
    for sandbox in _children(os.getpid()):
        if b"bwrap" not in _command_line(sandbox):
            continue
        zygotes = [pid for pid in _children(sandbox) if b"in_sandbox.zygote" in _command_line(pid)]
        found += [kernel for zygote in zygotes for kernel in _children(zygote)] if zygotes else [sandbox]
    return found


# ------------------------------------------------------------------ the grader's own course

FIXTURE_COURSE = Path(__file__).resolve().parent / "fixtures" / "course"


@functools.lru_cache(maxsize=None)
def fixture_course() -> Path:
    """The root of the grader's own small course, built and released once per test process (in a temporary folder).

    ``tests/fixtures/course/``: its ``source/`` (notebooks and hidden checks), ``example_class/`` and its own
    ``term.toml``, with this repository's ``nbgrader_config.py`` (the grader's wiring, which reads the term file).
    Tests copy it (``copy_course(fixture_course(), ...)``) before they grade anything.
    """
    from course_grader.trusted.course.course import Course
    from course_grader.trusted.pipeline import release

    scratch = Path(tempfile.mkdtemp(prefix="perceptron-fixture-course-"))
    atexit.register(shutil.rmtree, scratch, True)
    root = scratch / "course"
    for folder in ("source", "example_class"):
        shutil.copytree(FIXTURE_COURSE / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(FIXTURE_COURSE / "term.toml", root / "term.toml")  # its own term: id, limits, policy, assignments
    shutil.copy2(FIXTURE_COURSE / "nbgrader_config.py", root / "nbgrader_config.py")
    release(Course.open(root))
    return root


def expected_example_grades(course, recipes_folder: Path | None = None):
    """What each example student of the fixture course should get (``example_class.expected_example_grades``)."""
    from course_grader.trusted.course.example_class import expected_example_grades as expected

    return expected(course, recipes_folder or Path(course.root) / "example_class")
