"""Repository hygiene: student data is never tracked and always ignored; the package has no import cycles."""

import ast
import subprocess
from pathlib import Path

from conftest import this_course

REPO = Path(__file__).resolve().parents[2]
STUDENT_DATA = ["submitted/ada/01_geometry/geometry.ipynb", "autograded/ada/01_geometry/geometry.ipynb",
                "feedback/ada/01_geometry/geometry.html", "gradebook.db", "grades.csv", "grades_by_student.csv", "reports/report.md",
                "reports/report.html", "reports/records/ada/01_geometry.json", ".explain-x1/job/submitted/ada/01_geometry/geometry.ipynb",
                "work/demo/gradebook.db", "canvas_grades.csv", "canvas_roster.csv",
                "downloaded/01_geometry/archive/submissions.zip", "downloaded/01_geometry/extracted/ada_1_2_geometry.ipynb", "source/01_geometry/.ipynb_checkpoints/geometry-checkpoint.ipynb",
                "handins/ada/01_geometry/3/geometry.ipynb", "handins/ada/01_geometry/3.graded/gradebook.db",
                "reports/serve_journal.sqlite", ".perceptron-course.lock"]


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)


def test_no_student_data_is_tracked():
    tracked = git("ls-files").stdout.splitlines()
    assert tracked, "run the tests from a git checkout"
    leaked = [path for path in tracked
              if path.split("/")[0] in ("submitted", "autograded", "feedback", "reports", "work", "downloaded", "handins")
              or path.endswith(("gradebook.db", "grades.csv", "grades_by_student.csv", "canvas_grades.csv", "canvas_roster.csv"))]
    assert leaked == []


def test_student_data_paths_are_ignored():
    result = git("check-ignore", "--no-index", *STUDENT_DATA)
    assert sorted(result.stdout.split()) == sorted(STUDENT_DATA)


def module_imports(package: Path) -> dict[str, set[str]]:
    """Every module of ``package`` and the package's modules it imports, lazy imports included."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else [])) if node.level \
                    else node.module
                found |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = set()
            while not component or module not in component:
                component.add(stack.pop())
            if len(component) > 1:
                cycles.append(component)

    for module in graph:
        if module not in index:
            visit(module)
    return cycles


def test_import_cycle_finder_finds_a_cycle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_library():
    library = REPO / this_course().term().library.package  # term.toml's [library]
    graph = module_imports(library)
    assert len(graph) > 1  # the walk found the library's modules
    assert import_cycles(graph) == []


def test_the_library_imports_nothing_of_the_grader():
    library = REPO / this_course().term().library.package
    grader = {alias.name.split(".")[0] for path in library.rglob("*.py") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.Import) for alias in node.names}
    grader |= {node.module.split(".")[0] for path in library.rglob("*.py") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    assert "course_grader" not in grader
