"""Edit a course copy's term file by its keys, whatever their current values.

The course's tests never find-and-replace the text of ``term.toml``: an instructor's edits change that text. They
parse the file (``tomllib``), change values, and write it back (comments are not kept: these are scratch copies).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TERM_FILE = "term.toml"


def read_term(root: Path) -> dict[str, Any]:
    """The term file of the course at ``root``, as TOML data."""
    return tomllib.loads((Path(root) / TERM_FILE).read_text(encoding="utf-8"))


class _Raw(str):
    """TOML text written as it is (a value of the wrong type, on purpose)."""


def _value(value: Any) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {value!r} here")


def dumps(data: dict[str, Any]) -> str:
    """TOML text for term data: top-level tables of plain values, and arrays of tables (``[[assignments]]``)."""
    lines: list[str] = []
    for key, value in data.items():
        if not isinstance(value, (dict, list)) or (isinstance(value, list) and not all(isinstance(v, dict) for v in value)):
            lines.append(f"{key} = {_value(value)}")
    for key, value in data.items():
        if isinstance(value, dict):
            lines += ["", f"[{key}]", *(f"{k} = {_value(v)}" for k, v in value.items())]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for table in value:
                lines += ["", f"[[{key}]]", *(f"{k} = {_value(v)}" for k, v in table.items())]
    return "\n".join(lines).lstrip("\n") + "\n"


def write_term(root: Path, data: dict[str, Any]) -> None:
    (Path(root) / TERM_FILE).write_text(dumps(data), encoding="utf-8")


def edit_term(root: Path, change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """Read the term file, let ``change`` edit the data in place, write it back; returns the data."""
    data = read_term(root)
    change(data)
    write_term(root, data)
    return data


def set_key(root: Path, dotted: str, value: Any) -> None:
    """Set ``table.key`` (``"late.policy"``) to ``value``, the table made if missing."""
    table, key = dotted.split(".")
    edit_term(root, lambda data: data.setdefault(table, {}).__setitem__(key, value))


def set_text(root: Path, dotted: str, text: str) -> None:
    """Set ``table.key`` to raw TOML ``text`` (a value the data types above cannot hold, or a wrong type on purpose)."""
    table, key = dotted.split(".")
    data = read_term(root)
    data.setdefault(table, {})[key] = _Raw(text)
    write_term(root, data)


def assignment(data: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``[[assignments]]`` table named ``name`` of term data."""
    return next(table for table in data["assignments"] if table["name"] == name)


def set_assignment_key(root: Path, name: str, key: str, value: Any) -> None:
    """Set ``key`` (``"due"``, ``"name"``) of the assignment ``name`` of the term."""
    edit_term(root, lambda data: assignment(data, name).__setitem__(key, value))


def drop_assignment(root: Path, name: str) -> None:
    """Delete the assignment's ``[[assignments]]`` block, and the students' extensions of it."""
    def drop(data):
        kept = [table for table in data["assignments"] if table["name"] != name]
        assert len(kept) == len(data["assignments"]) - 1, f"the term has no assignment {name}"
        data["assignments"] = kept
        data["extensions"] = [table for table in data.get("extensions", []) if table.get("assignment") != name]
    edit_term(root, drop)


def rename_assignment(root: Path, old: str, new: str) -> None:
    """Rename the assignment ``old`` in its ``[[assignments]]`` block and in the students' extensions of it."""
    def rename(data):
        assignment(data, old)["name"] = new
        for table in data.get("extensions", []):
            if table.get("assignment") == old:
                table["assignment"] = new
    edit_term(root, rename)


def drop_due_dates(root: Path) -> None:
    """No due date for any assignment, and so no extension (an extension is of a due date)."""
    def drop(data):
        for table in data["assignments"]:
            table.pop("due", None)
        data.pop("extensions", None)
    edit_term(root, drop)


def add_extension(root: Path, **extension: Any) -> None:
    """Add an ``[[extensions]]`` block (``student=``, ``assignment=``, ``hours=`` or ``due=``)."""
    edit_term(root, lambda data: data.setdefault("extensions", []).append(dict(extension)))


def own_dates_in_hours(data: dict[str, Any], name: str) -> None:
    """Each extension of assignment ``name`` to a date of the student's own made 72 hours long, so that it moves with
    the assignment's due date (a date of the student's own before the assignment's is refused)."""
    for extension in data.get("extensions", []):
        if extension.get("assignment") == name and "due" in extension:
            del extension["due"]
            extension["hours"] = 72
