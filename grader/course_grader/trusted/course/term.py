"""The term file, ``term.toml`` at the course root: what a term changes, read and checked in one place.

Every consumer reads the term through ``load_term``: nbgrader's configuration
(``nbgrader_config.py``), release, grade, refresh, bundle, the exports, the report and
``perceptron-course check``; the students' self-check reads what the bundle carries of it
(``student_settings``). Every key is checked: an unknown key, a wrong type, an assignment that
is not a folder of ``source/``, a date that does not parse or a time zone that does not exist is
a ``TermError`` naming the file, the key and the problem. ``docs/term-file.md`` describes each key.

This module imports only the standard library (and ``tomli`` on Python 3.10), so that
``nbgrader_config.py`` can load it cheaply.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TERM_FILE = "term.toml"
HANDIN_ROUTES = ("exchange", "lms", "both")
LATE_POLICIES = ("none", "zero", "per_day")
REVEAL_SCHEDULES = ("now", "after_due_date")
#: ``[serve]``: which graded attempt the gradebook keeps, and what ``serve`` does with a hand-in after its due date.
ATTEMPT_COUNTED = ("latest", "best")
LATE_HANDINS = ("grade", "hold")
#: ``c.FileNameCollectorPlugin.named_regexp`` of each LMS's "download all submissions" file names (matched
#: against the file's whole path); each reads the id (and the time) from the part of the name the LMS wrote.
LMS_PATTERNS = {
    "canvas": r".*/[^/_]+_(?:LATE_)?(?P<student_id>\d+)_\d+_(?P<file_id>[^/]+\.ipynb)$",
    # A folder of Moodle's inside another (a student's own folder in her submission, named like a classmate's) is
    # not Moodle's: a path with two such folders is not read at all.
    "moodle": r"(?!(?:.*/)?[^/]*_\d+_assignsubmission_file_/(?:.*/)?[^/]*_\d+_assignsubmission_file_/)"
              r".*/[^/]*_(?P<student_id>\d+)_assignsubmission_file_/(?P<file_id>[^/]+\.ipynb)$",
    "moodle_files": r".*/[^/]*?_(?P<student_id>\d+)_assignsubmission_file_(?P<file_id>[^/]+\.ipynb)$",
    "blackboard": r".*/[^/]*?_(?P<student_id>[^/_]+)_attempt_(?P<timestamp>\d{4}(?:-\d{2}){5})_(?P<file_id>[^/]+\.ipynb)$",
}


class TermError(ValueError):
    """A problem in the term file: ``str()`` names the file, the key and what is wrong."""

    def __init__(self, file: Path | str, key: str, problem: str) -> None:
        self.file, self.key, self.problem = Path(file), key, problem
        super().__init__(f"{file}: {key}: {problem}")


@dataclass(frozen=True)
class CourseInfo:
    id: str
    title: str
    instructor: str
    term: str
    timezone: str
    header: str  #: a notebook relative to the course root, or ""


@dataclass(frozen=True)
class Handin:
    route: str
    lms: str


@dataclass(frozen=True)
class Limits:
    cell_seconds: int
    notebook_seconds: int
    max_restarts: int
    memory_mib: int


@dataclass(frozen=True)
class LatePolicy:
    policy: str
    percent_per_day: float
    max_percent: float

    def penalty(self, score: float, max_score: float, seconds_late: float) -> float:
        """Points taken off a notebook scoring ``score`` of ``max_score`` handed in ``seconds_late`` late.

        ``"none"``: 0. ``"zero"``: the whole score. ``"per_day"``: ``percent_per_day`` of
        ``max_score`` per started day, capped at ``max_percent`` of it, never more than the score.
        """
        if seconds_late <= 0 or self.policy == "none":
            return 0.0
        if self.policy == "zero":
            return float(score)
        started_days = math.ceil(seconds_late / 86400)
        percent = min(self.percent_per_day * started_days, self.max_percent)
        return float(min(max(score, 0.0), max_score * percent / 100))


@dataclass(frozen=True)
class ServePolicy:
    """``[serve]``: how ``perceptron-course serve`` treats hand-ins as they arrive (defaults: as ``grade`` does)."""

    attempts: int = 0  #: graded attempts per student and assignment in all; 0: no limit
    attempts_per_day: int = 0  #: graded attempts per student and assignment per day (the course's time zone); 0: no limit
    cooldown_minutes: float = 0  #: least time between two graded attempts of one student on one assignment
    counts: str = "latest"  #: which graded attempt the gradebook and the exports hold: ``latest`` or ``best``
    late: str = "grade"  #: a hand-in after the student's due date: ``grade`` (marked late) or ``hold`` (for the TA)
    drop_folder: str = ""  #: folder where LMS downloads are dropped (absolute, or relative to the course root); "" for none
    refresh_seconds: int = 60  #: most seconds between two rewrites of the exports while hand-ins arrive
    queue_size: int = 200  #: most hand-ins taken into memory at once; the rest wait on disk for a later scan
    quota_handins: int = 500  #: most hand-ins of one student kept in ``handins/`` (all assignments); 0: no limit
    quota_mib: int = 512  #: most MiB of one student's kept hand-ins (files by their apparent size); 0: no limit

    def drop_path(self, root: Path) -> Path | None:
        """The drop folder as an absolute path, ``None`` without one."""
        return (root / Path(self.drop_folder).expanduser()).resolve() if self.drop_folder else None


@dataclass(frozen=True)
class Assignment:
    name: str
    due: dt.datetime | None  #: timezone-aware


@dataclass(frozen=True)
class Extension:
    student: str
    assignment: str
    due: dt.datetime  #: the student's own due date, timezone-aware
    line: str  #: how term.toml says it (for messages)


@dataclass(frozen=True)
class Library:
    """``[library]``: the course's reference library, as a grading kernel may see it (``judging/kernel_imports.py``)."""

    package: str = ""  #: its import name; ``""``: the course has none
    student_modules: frozenset[str] = frozenset()  #: its modules a student may import while grading
    blocked: tuple[str, ...] = ()  #: packages that compute the same answers: never importable while grading


@dataclass(frozen=True)
class Term:
    """Everything ``term.toml`` says, checked. Dates are timezone-aware."""

    file: Path
    course: CourseInfo
    handin: Handin
    limits: Limits
    late: LatePolicy
    show_details: str
    bundle_name: str
    assignments: tuple[Assignment, ...]
    extensions: tuple[Extension, ...] = field(default=())
    serve: ServePolicy = field(default=ServePolicy())
    library: Library = field(default=Library())

    @property
    def assignment_names(self) -> list[str]:
        return [assignment.name for assignment in self.assignments]

    def due(self, assignment: str) -> dt.datetime | None:
        """The assignment's due date (timezone-aware), ``None`` if it has none or is not in the term."""
        return next((a.due for a in self.assignments if a.name == assignment), None)

    def extension_of(self, student: str, assignment: str) -> dt.timedelta | None:
        """How much later the student's due date is than the assignment's, ``None`` without an extension."""
        due = self.due(assignment)
        for extension in self.extensions:
            if extension.student == student and extension.assignment == assignment and due is not None:
                return extension.due - due
        return None

    def header_path(self) -> Path | None:
        """The header notebook as an absolute path, ``None`` without one."""
        return (self.file.parent / self.course.header).resolve() if self.course.header else None


# ------------------------------------------------------------------------------------------- reading


_SCHEMA: dict[str, dict[str, tuple[type | tuple[type, ...], Any]]] = {
    # table -> key -> (type, default); a default of ... means required
    "course": {"id": (str, ...), "title": (str, ""), "instructor": (str, ""), "term": (str, ""),
               "timezone": (str, "UTC"), "header": (str, "")},
    "handin": {"route": (str, "exchange"), "lms": (str, "canvas")},
    "limits": {"cell_seconds": (int, ...), "notebook_seconds": (int, ...), "max_restarts": (int, ...),
               "memory_mib": (int, ...)},
    "late": {"policy": (str, "none"), "percent_per_day": ((int, float), 10), "max_percent": ((int, float), 100)},
    "reveal": {"show_details": (str, "now")},
    "bundle": {"name": (str, ...)},
    "library": {"package": (str, ""), "student_modules": (list, []), "blocked": (list, [])},
    "hub": {"url": (str, ""), "repository": (str, "")},  # the course's website and its launch links (book/)
    "serve": {"attempts": (int, 0), "attempts_per_day": (int, 0), "cooldown_minutes": ((int, float), 0),
              "counts": (str, "latest"), "late": (str, "grade"), "drop_folder": (str, ""), "refresh_seconds": (int, 60),
              "queue_size": (int, 200), "quota_handins": (int, 500), "quota_mib": (int, 512)},
}
_ASSIGNMENT_KEYS = {"name", "due"}
_EXTENSION_KEYS = {"student", "assignment", "due", "hours"}


def _table(data: dict, name: str, file: Path) -> dict[str, Any]:
    """The checked keys of table ``name``, defaults filled in."""
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise TermError(file, f"[{name}]", "must be a table")
    schema = _SCHEMA[name]
    for key in table:
        if key not in schema:
            raise TermError(file, f"{name}.{key}", f"unknown key (known in [{name}]: {', '.join(schema)})")
    values = {}
    for key, (kind, default) in schema.items():
        if key not in table:
            if default is ...:
                raise TermError(file, f"{name}.{key}", "missing")
            values[key] = default
            continue
        value = table[key]
        if kind is list and not (isinstance(value, list) and all(isinstance(item, str) and item for item in value)):
            raise TermError(file, f"{name}.{key}", f"must be a list of names in quotes, such as [\"datasets\"]; got {value!r}")
        if isinstance(value, bool) or not isinstance(value, kind):
            expected = "a number" if kind == (int, float) else {str: "text in quotes", int: "a whole number"}[kind]
            raise TermError(file, f"{name}.{key}", f"must be {expected}; got {value!r}")
        values[key] = value
    return values


def _one_of(file: Path, key: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise TermError(file, key, f"must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def parse_due(file: Path, key: str, value: Any, zone: ZoneInfo) -> dt.datetime:
    """A due date from the term file: TOML's own date-time, or text ``2026-12-04 17:00`` (in ``zone``)
    or ISO 8601 with an offset (``2026-12-04T17:00+01:00``); timezone-aware."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise TermError(file, key, f"{value!r} is not a date and time such as \"2026-12-04 17:00\" "
                                       f"or \"2026-12-04T17:00+01:00\"") from None
    else:
        raise TermError(file, key, f"must be a date and time in quotes, such as \"2026-12-04 17:00\"; got {value!r}")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)


def _zone(file: Path, name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise TermError(file, "course.timezone", f"{name!r} is not a time zone (use an IANA name such as "
                                                 f"\"Europe/Paris\" or \"UTC\")") from None


def _assignments(data: dict, file: Path, zone: ZoneInfo, known: list[str] | None) -> tuple[Assignment, ...]:
    entries = data.get("assignments", [])
    if not isinstance(entries, list) or not entries:
        raise TermError(file, "[[assignments]]", "the term needs at least one assignment, each a [[assignments]] block")
    found = []
    for number, entry in enumerate(entries, 1):
        where = f"assignments[{number}]"
        if not isinstance(entry, dict):
            raise TermError(file, where, "must be a [[assignments]] block")
        for key in entry:
            if key not in _ASSIGNMENT_KEYS:
                raise TermError(file, f"{where}.{key}", f"unknown key (known: {', '.join(sorted(_ASSIGNMENT_KEYS))})")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise TermError(file, f"{where}.name", "missing: the assignment's folder in source/")
        if known is not None and name not in known:
            raise TermError(file, f"{where}.name", f"{name!r} is not a folder of source/ (there: {', '.join(known)})")
        if name in (a.name for a in found):
            raise TermError(file, f"{where}.name", f"{name!r} is listed twice")
        due = parse_due(file, f"{where}.due", entry["due"], zone) if "due" in entry else None
        found.append(Assignment(name, due))
    return tuple(found)


def _extensions(data: dict, file: Path, zone: ZoneInfo, assignments: tuple[Assignment, ...]) -> tuple[Extension, ...]:
    entries = data.get("extensions", [])
    if not isinstance(entries, list):
        raise TermError(file, "[[extensions]]", "must be [[extensions]] blocks")
    dues = {a.name: a.due for a in assignments}
    found: list[Extension] = []
    for number, entry in enumerate(entries, 1):
        where = f"extensions[{number}]"
        if not isinstance(entry, dict):
            raise TermError(file, where, "must be an [[extensions]] block")
        for key in entry:
            if key not in _EXTENSION_KEYS:
                raise TermError(file, f"{where}.{key}", f"unknown key (known: {', '.join(sorted(_EXTENSION_KEYS))})")
        student, assignment = entry.get("student"), entry.get("assignment")
        if not isinstance(student, str) or not student:
            raise TermError(file, f"{where}.student", "missing: the student's id (their folder in submitted/)")
        if assignment not in dues:
            raise TermError(file, f"{where}.assignment", f"{assignment!r} is not an assignment of the term")
        if dues[assignment] is None:
            raise TermError(file, where, f"{assignment} has no due date in the term: an extension needs one")
        if ("due" in entry) == ("hours" in entry):
            raise TermError(file, where, "give either `due` (the student's own due date) or `hours` (past the assignment's)")
        if "due" in entry:
            due = parse_due(file, f"{where}.due", entry["due"], zone)
            line = f'due = "{entry["due"]}"'
        else:
            hours = entry["hours"]
            if isinstance(hours, bool) or not isinstance(hours, (int, float)) or hours <= 0:
                raise TermError(file, f"{where}.hours", f"must be a positive number of hours; got {hours!r}")
            due = dues[assignment] + dt.timedelta(hours=hours)
            line = f"hours = {hours}"
        if due <= dues[assignment]:
            raise TermError(file, where, f"the student's due date {due.isoformat()} is not after the assignment's")
        if any(e.student == student and e.assignment == assignment for e in found):
            raise TermError(file, where, f"a second extension for {student} on {assignment}: keep one")
        found.append(Extension(student, assignment, due, line))
    return tuple(found)


def parse_term(text: str, file: Path, source_assignments: list[str] | None = None) -> Term:
    """The term written in ``text`` (the content of ``file``), checked.

    ``source_assignments`` are the folders of ``source/``; each assignment of the term must be one.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TermError(file, "(file)", f"not valid TOML: {error}") from None
    known_tables = {*_SCHEMA, "assignments", "extensions"}
    for key in data:
        if key not in known_tables:
            raise TermError(file, key, f"unknown table or key (known: {', '.join(sorted(known_tables))})")
    course = _table(data, "course", file)
    zone = _zone(file, course["timezone"])
    handin, limits, late = _table(data, "handin", file), _table(data, "limits", file), _table(data, "late", file)
    _one_of(file, "handin.route", handin["route"], HANDIN_ROUTES)
    _one_of(file, "handin.lms", handin["lms"], tuple(LMS_PATTERNS))
    _one_of(file, "late.policy", late["policy"], LATE_POLICIES)
    for key, value in limits.items():
        if value < (0 if key == "max_restarts" else 1):
            raise TermError(file, f"limits.{key}", f"must be {'0 or more' if key == 'max_restarts' else 'at least 1'}; got {value}")
    if limits["notebook_seconds"] < limits["cell_seconds"]:
        raise TermError(file, "limits.notebook_seconds", "is shorter than one cell's limit, limits.cell_seconds")
    for key in ("percent_per_day", "max_percent"):
        if not 0 <= late[key] <= 100:
            raise TermError(file, f"late.{key}", f"must be a percentage from 0 to 100; got {late[key]}")
    reveal = _table(data, "reveal", file)
    _one_of(file, "reveal.show_details", reveal["show_details"], REVEAL_SCHEDULES)
    bundle = _table(data, "bundle", file)
    if not bundle["name"] or any(c in bundle["name"] for c in "/\\") or bundle["name"].startswith("."):
        raise TermError(file, "bundle.name", f"must be a plain folder name; got {bundle['name']!r}")
    if not course["id"].strip():
        raise TermError(file, "course.id", "must not be empty")
    if course["header"] and not (file.parent / course["header"]).is_file():
        raise TermError(file, "course.header", f"{course['header']!r} is not a file (relative to {file.parent})")
    assignments = _assignments(data, file, zone, source_assignments)
    serve = _serve_policy(_table(data, "serve", file), file)
    library = _library(_table(data, "library", file), file)
    return Term(file=file, course=CourseInfo(**course), handin=Handin(**handin), limits=Limits(**limits),
                late=LatePolicy(late["policy"], float(late["percent_per_day"]), float(late["max_percent"])),
                show_details=reveal["show_details"], bundle_name=bundle["name"], assignments=assignments,
                extensions=_extensions(data, file, zone, assignments), serve=serve, library=library)


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _library(table: dict[str, Any], file: Path) -> Library:
    """``[library]``, checked: Python names only (they become paths of the grading kernel's view)."""
    for key, names in (("package", [table["package"]] if table["package"] else []),
                       ("student_modules", table["student_modules"]), ("blocked", table["blocked"])):
        for name in names:
            if not _DOTTED.fullmatch(name) or (key != "blocked" and "." in name):
                raise TermError(file, f"library.{key}", f"{name!r} is not a Python {'module' if key != 'blocked' else 'package'} name")
    return Library(table["package"], frozenset(table["student_modules"]), tuple(table["blocked"]))


def _serve_policy(table: dict[str, Any], file: Path) -> ServePolicy:
    """``[serve]``, checked."""
    _one_of(file, "serve.counts", table["counts"], ATTEMPT_COUNTED)
    _one_of(file, "serve.late", table["late"], LATE_HANDINS)
    for key in ("attempts", "attempts_per_day", "cooldown_minutes", "quota_handins", "quota_mib"):
        if table[key] < 0:
            raise TermError(file, f"serve.{key}", f"must be 0 (no limit) or more; got {table[key]}")
    for key in ("refresh_seconds", "queue_size"):
        if table[key] < 1:
            raise TermError(file, f"serve.{key}", f"must be at least 1; got {table[key]}")
    return ServePolicy(table["attempts"], table["attempts_per_day"], float(table["cooldown_minutes"]), table["counts"],
                       table["late"], table["drop_folder"], table["refresh_seconds"], table["queue_size"],
                       table["quota_handins"], table["quota_mib"])


def source_folders(root: Path) -> list[str] | None:
    """The assignment folders of ``root/source`` (as ``Course.source_folders``), ``None`` without ``source/``."""
    source = root / "source"
    if not source.is_dir():
        return None
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def load_term(root: str | os.PathLike) -> Term:
    """The term of the course at ``root`` (its ``term.toml``), checked against its ``source/``.

    Raises
    ------
    TermError
        If the file is missing or anything in it is wrong (the message names the key).
    """
    root = Path(root).expanduser().resolve()
    file = root / TERM_FILE
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TermError(file, "(file)", "missing: every course has a term file; see docs/term-file.md") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TermError(file, "(file)", f"cannot be read: {error}") from None
    return parse_term(text, file, source_folders(root))


# ------------------------------------------------------------------------------------------- for others


def utc_text(moment: dt.datetime) -> str:
    """``2026-12-04 16:00 UTC``."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def local_text(term: Term, moment: dt.datetime) -> str:
    """A date as the term writes it: in the course's zone (``2026-12-04 17:00 Europe/Paris``)."""
    return moment.astimezone(ZoneInfo(term.course.timezone)).strftime("%Y-%m-%d %H:%M ") + term.course.timezone


def student_settings(term: Term, assignments: list[str] | None = None) -> dict[str, Any]:
    """What a student's self-check needs of the term (plain JSON data; never anyone's extension).

    Due dates are ISO 8601 in UTC, for the term's assignments (or only ``assignments``).
    """
    chosen = term.assignment_names if assignments is None else assignments
    return {
        "course_id": term.course.id,
        "cell_seconds": term.limits.cell_seconds,
        "memory_mib": term.limits.memory_mib,
        "due_dates": {a.name: a.due.astimezone(dt.timezone.utc).isoformat()
                      for a in term.assignments if a.due is not None and a.name in chosen},
    }
