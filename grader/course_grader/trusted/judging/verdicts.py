"""From a test cell to a verdict: what it declares, what to send the kernel, how to read the answer.

A graded test cell of ``source/`` holds visible tests (quick hints, run in the
student's kernel) and a hidden-test region that only declares checks::

    ### BEGIN HIDDEN TESTS
    from course_grader.checks_api import check_augment
    check_augment(augment)
    ### END HIDDEN TESTS

``check_augment`` is the check of ``augment`` in the assignment's ``hidden_checks.py``
(``check_registry``). The region never reaches the kernel. The grader reads its declarations here,
sends the harness and the cases (plain data) to the kernel, reads the replies
back with the strict parser of ``wire``, and judges them with the check: the
verdict is decided in this process.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from nbformat.v4 import new_output

from ...in_sandbox import harness
from ...in_sandbox.kernel import HARNESS_CELL_START
from .checks.cases import Check
from .checks.judge import Verdict

BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
#: ``ename`` of the error output that carries a failed verdict.
VERDICT_ERROR = "HiddenTestsFailed"
#: Key, in the notebook metadata where ``ResilientExecute`` records what it saw, of each failed verdict's
#: ``Verdict.behaviour_message`` by test cell ``grade_id`` (what feedback shows before a due date: ``reveal.py``).
FAILED_BEHAVIOURS = "failed_behaviours"
HARNESS_SOURCE = Path(harness.__file__).read_text(encoding="utf-8")


class DeclarationError(ValueError):
    """A hidden-test region that is not a list of ``check_<function>(<function>)`` calls."""


@dataclass(frozen=True)
class Declaration:
    """One declared check: which check, on which name of the student's namespace."""

    check: Check
    target: str


def split_hidden(source: str) -> tuple[str, str]:
    """``(visible part, hidden part)`` of a test cell's source (delimiter lines dropped).

    An unterminated region hides everything after its start (fail closed).
    """
    visible, hidden, inside = [], [], False
    for line in source.split("\n"):
        if BEGIN_HIDDEN in line:
            inside = True
        elif END_HIDDEN in line and inside:
            inside = False
        else:
            (hidden if inside else visible).append(line)
    return "\n".join(visible).rstrip() + "\n", "\n".join(hidden)


def declared_names(hidden: str) -> list[tuple[str, str, int]]:
    """``(function, target, line)`` of each ``check_<function>(<target>)`` a hidden-test region declares, in order.

    Only imports and such calls are allowed: the region is read, never run.
    """
    try:
        tree = ast.parse(hidden)
    except SyntaxError as error:
        raise DeclarationError(f"the hidden-test region does not parse: {error}") from None
    found = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_")
                and len(call.args) == 1 and isinstance(call.args[0], ast.Name) and not call.keywords):
            raise DeclarationError(f"line {statement.lineno}: a hidden-test region may only call check_<function>(<function>)")
        found.append((call.func.id.removeprefix("check_"), call.args[0].id, statement.lineno))
    return found


def declarations(hidden: str, checks: Mapping[str, Check]) -> list[Declaration]:
    """The checks a hidden-test region declares, in order, found in ``checks`` (the assignment's, by function name)."""
    found = []
    for name, target, line in declared_names(hidden):
        if name not in checks:
            known = ", ".join(sorted(checks)) or "none"
            raise DeclarationError(f"line {line}: no check named check_{name} in this assignment's hidden_checks.py "
                                   f"(known: {known})")
        found.append(Declaration(checks[name], target))
    return found


def declared_in(source: str | list[str], checks: Mapping[str, Check]) -> list[Declaration]:
    """The checks a test cell declares in its hidden-test region; ``source`` as nbformat or plain JSON holds it.

    Raises
    ------
    DeclarationError
        If the region is not a list of ``check_<function>(<function>)`` calls of checks in ``checks``.
    """
    return declarations(hidden_region(source), checks)


def hidden_region(source: str | list[str]) -> str:
    """The hidden-test region of a cell's source, as nbformat or plain JSON holds it."""
    return split_hidden("".join(source) if isinstance(source, list) else str(source))[1]


def harness_code(request: dict) -> str:
    """Code for the kernel: load the harness in a namespace of its own and run the request.

    Only the harness's entry point touches the student's namespace, and nothing is left in it.
    """
    payload = json.dumps(request, allow_nan=True, separators=(",", ":"))  # compact: it travels twice, and is parsed in the kernel
    return (
        HARNESS_CELL_START +
        "    scope = {'__name__': 'course_grader_harness'}\n"
        f"    exec(compile({HARNESS_SOURCE!r}, '<grader harness>', 'exec'), scope)\n"
        "    scope['call_all'](globals(), request)\n"
        f"__course_grader_harness(__import__('json').loads({payload!r}))\n"
        "del __course_grader_harness\n"
    )


def verdict_output(verdict: Verdict):
    """The output a verdict adds to its test cell: text when it passed, an error (scored 0) when not."""
    if verdict.passed:
        return new_output("stream", name="stdout", text=verdict.message() + "\n")
    message = verdict.message()
    return new_output("error", ename=VERDICT_ERROR, evalue=message, traceback=[f"{VERDICT_ERROR}: {message}"])
