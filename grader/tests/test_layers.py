"""The grader's import graph keeps its layers (``docs/architecture.md``): every import runs down, none in a circle.

Imports inside functions count as much as those at the top of a module: a lazy import that runs back up is still a
lower layer that needs a higher one.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "course_grader"

#: Each layer of the grader, from the ground up: a module may import its own layer and the layers below it only.
LAYERS = [
    ["course_grader.deferred_imports"],  # what the package's __init__ does first, before any module of it runs
    ["course_grader.in_sandbox", "course_grader.intake_rules"],  # the sandbox's side, and the rules both sides apply
    ["course_grader.selfcheck"],  # the student's side
    ["course_grader.trusted.course"],  # the course on disk, nbgrader's configuration and patches, safe text
    ["course_grader.trusted.judging"],  # the wire, the checks' engine, verdicts, flags
    ["course_grader.checks_api", "course_grader.trusted.gradebook"],
    ["course_grader.trusted.outputs"],
    ["course_grader.trusted.running"],
    ["course_grader.trusted.refresh"],
    ["course_grader.trusted.pipeline"],
    ["course_grader.trusted.explain", "course_grader.trusted.bundle", "course_grader.trusted.course_check",
     "course_grader.trusted.lab", "course_grader.trusted.serving", "course_grader.trusted.doctor"],  # the commands
    ["course_grader.trusted.cli"],
    ["course_grader.testing"],  # helpers for test suites: imports what it likes, imported by no module of the grader
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[str, int]]:
    """Every module of the grader that ``path`` imports, anywhere in it, with the line."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            names = [f"{target}.{alias.name}" for alias in node.names]
            found += [(name if _is_module(name) else target, node.lineno) for name in names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name == "course_grader" or name.startswith("course_grader.")]


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def layer_of(module: str) -> int | None:
    for rank, layer in enumerate(LAYERS):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in layer):
            return rank
    return None


MODULES = {module_name(path): imports_of(path) for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_of_the_grader_has_a_layer():
    assert [module for module in MODULES if module != "course_grader" and module != "course_grader.trusted"
            and layer_of(module) is None] == []


def test_no_import_runs_back_up_the_layers():
    upward = [f"{module}:{line} imports {target}" for module, targets in MODULES.items() for target, line in targets
              if layer_of(module) is not None and layer_of(target) is not None and layer_of(target) > layer_of(module)]
    assert upward == []


def test_the_sandbox_side_imports_nothing_of_the_grader_but_itself():
    outside = [f"{module}:{line} imports {target}" for module, targets in MODULES.items()
               if module.startswith("course_grader.in_sandbox") for target, line in targets
               if not target.startswith("course_grader.in_sandbox")]
    assert outside == []


def test_no_module_imports_the_course_it_grades():
    found = [module for module, path in ((module_name(path), path) for path in PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                 (name or "").split(".")[0] == "perceptron_course"
                 for name in ([alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]))]
    assert found == []


def test_no_circle_of_imports():
    graph = {module: {target for target, _ in targets if target in MODULES and target != module}
             for module, targets in MODULES.items()}
    circles, state = [], {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                circles.append(" -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # A package's __init__ that its own modules import back is a circle too: none is allowed.
    assert circles == []
