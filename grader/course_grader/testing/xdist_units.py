"""Units of work for pytest-xdist: a test file, unless its tests declare groups; the declared groups start first.

A suite's ``conftest.py`` imports ``pytest_xdist_make_scheduler`` from here (the grader's tests and the course's alike)
and runs with ``--dist loadgroup``.
"""

from __future__ import annotations

from pathlib import Path

#: The group that makes each test (each parametrized case) a unit of its own: ``@pytest.mark.xdist_group(EACH_TEST)``.
EACH_TEST = "each test"


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (pyproject.toml): a test file is one unit of work, on one worker (its module fixtures made
    once), unless its tests name groups (``@pytest.mark.xdist_group(NAME)`` on a test, or ``pytestmark`` for the
    file; ``EACH_TEST``: each of its tests, each parametrized case, is a unit of its own): a long file splits so that
    both workers stay busy till the end (``FileOrGroupScheduling``)."""
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
            self.declared[file] = _declared_groups(self.root / file) if file.endswith(".py") else (None, {})
        file_group, functions = self.declared[file]
        function = rest.split("::")[-1].split("[")[0]
        group = functions.get(function) or file_group
        if group == EACH_TEST:
            return True, nodeid
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
