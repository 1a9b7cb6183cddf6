"""What a hand-in must be for the grader to run it as it is: shared by the grader's intake and the self-check.

The grader (``grader/course_grader/trusted/course/intake.py``) and the student's
``perceptron-selfcheck`` apply these rules to the same bytes and say the same words, so a
green self-check means the grader runs the notebook as it is. Pure: a notebook is its JSON
(a ``dict``); no nbgrader, no file system but the manifest that ships with the package.

The rules, in the order they apply:

1. **The file.** At most ``MAX_FILE_BYTES`` as handed in (stored outputs included), JSON of an
   nbformat 4 notebook. Stored outputs are dropped (the grader runs every cell anew), then
   what remains must fit the limits of what is run: ``MAX_NOTEBOOK_BYTES``, ``MAX_CELLS``,
   ``MAX_TEXT_CELL`` and ``MAX_TEXT_TOTAL``, ``MAX_CODE_CELL`` and ``MAX_CODE_TOTAL``.
2. **Which notebook.** The one notebook of a hand-in is graded whatever its name
   (``geometry-1.ipynb``, ``geometry (1).ipynb``, ``my work.ipynb``). With several, the one
   holding this assignment's cells; among copies of one name, the latest (``-2`` after ``-1``).
3. **The cells.** Every cell of the assignment is put back where it was deleted (a deleted
   solution cell comes back as the empty stub: its parts score 0, and the notes say the cell
   was missing); a locked cell that was edited is run as the original; every cell gets back the
   nbgrader settings it was released with (``GRADING_KEYS``: a solution cell marked graded would
   stop nbgrader's autograde).
4. **Imports.** The grading kernel cannot import the reference library's graded modules nor
   ``sklearn.linear_model``: a part that imports them scores 0.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

#: Largest file read from a hand-in, stored outputs included (a notebook saved with 50 MB of debug output).
MAX_FILE_BYTES = 128 * 1024 * 1024
#: Most JSON values (strings, numbers, lists, objects) read from one file: each becomes a Python object,
#: so this, with ``MAX_FILE_BYTES``, bounds the memory of reading a file (about 600 MB at worst).
#: 50 MB of printed lines is about 1,000,000.
MAX_JSON_VALUES = 4_000_000
#: Largest notebook run, once its stored outputs are dropped (the assignments are about 30 KB).
MAX_NOTEBOOK_BYTES = 5 * 1024 * 1024
#: Most cells of a notebook run (the assignments have about 25), and most characters of text
#: (Markdown, raw) per cell and in all (an assignment's own text is about 8,000).
MAX_CELLS = 500
MAX_TEXT_CELL = 10_000
MAX_TEXT_TOTAL = 60_000
#: Most characters of code per cell and in all (an assignment's solutions: at most 1,400 per cell, 9,000 in all).
#: Parsing code to look for imports takes about 1 KB of memory per character of the worst code ("a;a;a;..."),
#: and it is parsed in the TA's process: 5 MiB of it took 15-26 s and 4.5 GB each time.
MAX_CODE_CELL = 20_000
MAX_CODE_TOTAL = 100_000

#: This package's module a notebook may import while grading: the self-check, a function that does nothing there.
SELF_CHECK_MODULE = "course_grader.selfcheck"
SELF_CHECK_FUNCTION = "check_all"
#: The file beside this module in a student's install (the course's bundle) that holds the released cells and the
#: import rules of every assignment (``manifest_json``); a course checkout reads ``release/`` instead.
MANIFEST_FILE = "_released_assignments.json"
#: The notebook metadata where the grader records what its intake did (written by the grader only).
INTAKE_METADATA = "course_grader_intake"

#: A copy's number as an LMS, a browser or a file manager writes it: ``name-1``, ``name (1)``, ``name(2)``.
_COPY = re.compile(r"^(?P<base>.+?)(?:-(?P<dash>\d{1,4})| ?\((?P<paren>\d{1,4})\))$")
_DEF = re.compile(r"^\s*def\s+(\w+)\s*\(", re.MULTILINE)


def short(text: object, limit: int = 40) -> str:
    """A name a student chose (a grade id, a file name), on one line and at most ``limit`` characters, to quote in a note."""
    plain = " ".join(str(text).split())
    return plain if len(plain) <= limit else plain[: limit - 3] + "..."


class IntakeError(ValueError):
    """A file the grader will not run; the message says why, in the words of ``grades.csv``."""


@dataclass(frozen=True)
class ImportRules:
    """What the grading kernel of one assignment can import of the course's reference library.

    The library (``package``, e.g. the course's own) shows only its ``student_modules`` there; every other module
    of it is a stub whose import raises ``ImportError``, except the names ``grants`` gives this assignment
    (``module -> names``). ``blocked`` packages (another library that computes the same answers) cannot be
    imported at all. The course sets them in ``term.toml``'s ``[library]`` and each ``hidden_checks.py``'s
    ``ALLOWED_IMPORTS``; without a library, only ``blocked`` applies.
    """

    package: str = ""
    student_modules: frozenset[str] = frozenset()
    grants: Mapping[str, frozenset[str]] = field(default_factory=dict)
    blocked: tuple[str, ...] = ()

    def as_json(self) -> dict:
        """Plain JSON data (for a student's install)."""
        return {"package": self.package, "student_modules": sorted(self.student_modules),
                "grants": {module: sorted(names) for module, names in sorted(self.grants.items())},
                "blocked": list(self.blocked)}

    @classmethod
    def from_json(cls, data: object) -> "ImportRules":
        """The rules ``as_json`` wrote; no rules for anything else."""
        if not isinstance(data, dict):
            return cls()
        grants = data.get("grants") if isinstance(data.get("grants"), dict) else {}
        return cls(str(data.get("package", "")), frozenset(map(str, data.get("student_modules") or ())),
                   {str(module): frozenset(map(str, names)) for module, names in grants.items()
                    if isinstance(names, list)},
                   tuple(map(str, data.get("blocked") or ())))


@dataclass(frozen=True)
class ExpectedCell:
    """One nbgrader cell of an assignment as released."""

    grade_id: str
    cell_type: str
    role: str  #: ``"solution"`` (the student's code), ``"answer"`` (written, graded by hand), ``"tests"``, ``"locked"``
    source: str  #: the released text (a solution's stub; a test cell's visible tests)
    metadata: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def function(self) -> str:
        """The function a solution cell defines (its first ``def``), else ``""``."""
        match = _DEF.search(self.source)
        return match.group(1) if match else ""

    def describe(self) -> str:
        """How a student knows the cell: ``the cell where you write augment (augment)``."""
        if self.role == "solution" and self.function:
            return f"the cell where you write {self.function} ({self.grade_id})"
        return {"solution": "the solution cell", "answer": "the written answer", "tests": "the test cell"}.get(
            self.role, "the locked cell") + f" {self.grade_id}"


@dataclass(frozen=True)
class Assignment:
    """An assignment's notebook as released: its name and its nbgrader cells, in order."""

    name: str
    notebook: str  #: the file stem, ``geometry``
    cells: tuple[ExpectedCell, ...]
    imports: ImportRules = field(default_factory=ImportRules, compare=False)

    @property
    def cell_ids(self) -> frozenset[str]:
        return frozenset(cell.grade_id for cell in self.cells)


@dataclass
class Intake:
    """What the intake made of a hand-in: the notebook to run, which file it came from, and what it repaired."""

    notebook: dict | None
    graded_file: str = ""
    notes: list[str] = field(default_factory=list)  #: each repair or problem, one sentence, for the student and the TA
    refused: str = ""  #: why nothing is run (the part scores 0); ``""`` when ``notebook`` is set


# ---------------------------------------------------------------------------- the assignments


def _source(cell: Mapping) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _role(nbgrader: Mapping) -> str:
    if nbgrader.get("solution"):
        return "answer" if nbgrader.get("grade") else "solution"
    return "tests" if nbgrader.get("grade") else "locked"


def assignment_from_notebook(name: str, notebook_stem: str, released: Mapping,
                             imports: ImportRules | None = None) -> Assignment:
    """The expected cells of an assignment from its released notebook (JSON), and what its kernel can import."""
    cells = []
    for cell in released.get("cells", []):
        nbgrader = cell.get("metadata", {}).get("nbgrader")
        if isinstance(nbgrader, dict) and nbgrader.get("grade_id"):
            cells.append(ExpectedCell(str(nbgrader["grade_id"]), str(cell.get("cell_type")), _role(nbgrader), _source(cell),
                                      json.loads(json.dumps(cell.get("metadata", {})))))
    return Assignment(name, notebook_stem, tuple(cells), imports or ImportRules())


def released_assignments(release_folder: Path, imports: Callable[[str], ImportRules] | None = None
                         ) -> dict[str, Assignment]:
    """Every assignment of ``release/`` (one notebook each), by name, with ``imports(name)`` as its import rules."""
    found = {}
    for folder in sorted(p for p in release_folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for path in sorted(folder.glob("*.ipynb")):
            released = json.loads(path.read_text(encoding="utf-8"))
            found[folder.name] = assignment_from_notebook(folder.name, path.stem, released,
                                                          imports(folder.name) if imports else None)
    return found


def manifest_json(assignments: Mapping[str, Assignment]) -> str:
    """The text of ``MANIFEST_FILE`` for ``assignments`` (what a student's install knows of the released cells)."""
    return json.dumps([{"assignment": a.name, "notebook": a.notebook, "imports": a.imports.as_json(), "cells": [
        {"grade_id": c.grade_id, "cell_type": c.cell_type, "role": c.role, "source": c.source, "metadata": c.metadata}
        for c in a.cells]} for a in assignments.values()], indent=1, sort_keys=True) + "\n"


def load_manifest(text: str) -> dict[str, Assignment]:
    """The assignments ``manifest_json`` wrote, by name."""
    return {entry["assignment"]: Assignment(entry["assignment"], entry["notebook"], tuple(
        ExpectedCell(c["grade_id"], c["cell_type"], c["role"], c["source"], c.get("metadata", {})) for c in entry["cells"]),
        ImportRules.from_json(entry.get("imports")))
        for entry in json.loads(text)}


# ---------------------------------------------------------------------------- rule 1: the file


def parse_notebook(data: bytes, file_name: str) -> dict:
    """The JSON of a notebook file, checked to be nbformat 4 with a list of cells.

    Raises
    ------
    IntakeError
        If the file is larger than ``MAX_FILE_BYTES`` or not a notebook.
    """
    if len(data) > MAX_FILE_BYTES:
        raise IntakeError(f"{short(file_name, 60)} is larger than the grader reads ({MAX_FILE_BYTES // (1024 * 1024)} MiB, stored outputs included)")
    # every value but the first of a list or an object follows a comma (commas in strings count too: an upper bound)
    values = data.count(b",") + data.count(b"[") + data.count(b"{") + 1
    if values > MAX_JSON_VALUES:
        raise IntakeError(f"{short(file_name, 60)} is in more pieces than the grader reads (over {MAX_JSON_VALUES:,} JSON values, "
                          "stored outputs included)")
    try:
        notebook = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        message = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        raise IntakeError(f"{short(file_name, 60)} is not a valid notebook: {message}") from None
    if not isinstance(notebook, dict) or notebook.get("nbformat") != 4 or not isinstance(notebook.get("cells"), list) \
            or not isinstance(notebook.get("metadata", {}), dict) \
            or not all(isinstance(cell, dict) and isinstance(cell.get("metadata", {}), dict) for cell in notebook["cells"]):
        raise IntakeError(f"{short(file_name, 60)} is not a valid notebook: not a Jupyter notebook of format 4")
    for cell in notebook["cells"]:  # nbformat stores text as a list of lines; a notebook in memory holds one string
        if isinstance(cell.get("source"), list) and all(isinstance(line, str) for line in cell["source"]):
            cell["source"] = "".join(cell["source"])
    return notebook


def drop_outputs(notebook: dict) -> int:
    """Remove every stored output and execution count (the grader runs each cell anew); return the bytes dropped."""
    dropped = 0
    for cell in notebook["cells"]:
        if cell.get("cell_type") == "code":
            if cell.get("outputs"):
                dropped += len(json.dumps(cell["outputs"]))
            cell["outputs"], cell["execution_count"] = [], None
        cell.pop("attachments", None) if cell.get("cell_type") == "code" else None
    notebook.get("metadata", {}).pop("widgets", None)
    return dropped


def size_problem(notebook: dict, file_name: str) -> str:
    """Why the notebook, outputs dropped, is too large to run, or ``""``."""
    size = len(json.dumps(notebook))
    if size > MAX_NOTEBOOK_BYTES:
        return f"{short(file_name, 60)} is larger than the grader reads ({MAX_NOTEBOOK_BYTES // (1024 * 1024)} MiB) once its stored outputs are dropped"
    cells = notebook["cells"]
    if len(cells) > MAX_CELLS:
        return f"{short(file_name, 60)} is refused: it has {len(cells):,} cells; a submission may have at most {MAX_CELLS}"
    for kind, per_cell, in_all in (("text", MAX_TEXT_CELL, MAX_TEXT_TOTAL), ("code", MAX_CODE_CELL, MAX_CODE_TOTAL)):
        sizes = [len(_source(cell)) for cell in cells if (cell.get("cell_type") == "code") == (kind == "code")]
        if max(sizes, default=0) > per_cell or sum(sizes) > in_all:
            return (f"{short(file_name, 60)} is refused: its {kind} cells are too long (at most {per_cell:,} characters each, "
                    f"{in_all:,} in all)")
    return ""


# ---------------------------------------------------------------------------- rule 2: which notebook


def copy_number(stem: str) -> tuple[str, int]:
    """``("geometry", 2)`` for ``geometry-2`` or ``geometry (2)``; ``(stem, 0)`` for a name without a copy number."""
    match = _COPY.match(stem)
    if not match:
        return stem, 0
    return match.group("base"), int(match.group("dash") or match.group("paren"))


def grade_ids(notebook: Mapping) -> list[str]:
    """The ``grade_id`` of every nbgrader cell of a notebook, in order."""
    ids = []
    for cell in notebook.get("cells", []):
        nbgrader = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
        if isinstance(nbgrader, dict) and isinstance(nbgrader.get("grade_id"), str):
            ids.append(nbgrader["grade_id"])
    return ids


def own_ids(assignment: Assignment, assignments: Mapping[str, Assignment]) -> frozenset[str]:
    """The cell ids of ``assignment`` that no other assignment uses (``intro`` and ``setup`` are everywhere)."""
    shared = set().union(*(other.cell_ids for name, other in assignments.items() if name != assignment.name))
    return assignment.cell_ids - shared or assignment.cell_ids


def owners_of(ids: list[str], assignments: Mapping[str, Assignment]) -> list[str]:
    """The assignments whose own cells a notebook holds."""
    return [name for name, other in assignments.items() if own_ids(other, assignments).intersection(ids)]


def choose_notebook(notebooks: Mapping[str, dict | IntakeError], assignment: Assignment,
                    others: Mapping[str, Assignment]) -> tuple[str, list[str], str]:
    """Which file of a hand-in is graded: ``(file name, notes, refusal)``.

    ``notebooks`` maps each ``.ipynb`` file name of the hand-in to its JSON, or to why it is not
    a notebook. The file is the one notebook of the hand-in, whatever its name; with several,
    those holding this assignment's cells (else those holding no course cell at all), and among
    them the latest copy (``name-2`` after ``name-1`` after ``name``), then the expected name.
    """
    expected = f"{assignment.notebook}.ipynb"
    if not notebooks:
        return "", [], f"{expected} is missing (found: no notebook)"
    readable = {name: nb for name, nb in notebooks.items() if isinstance(nb, dict)}
    if not readable:
        chosen = expected if expected in notebooks else sorted(notebooks)[0]
        return "", [], str(notebooks[chosen])
    ids = {name: grade_ids(nb) for name, nb in readable.items()}
    mine = own_ids(assignment, {**others, assignment.name: assignment})
    candidates = [name for name in readable if mine.intersection(ids[name])]
    if not candidates:
        candidates = [name for name in readable if not ids[name]]
    if not candidates:
        name = expected if expected in readable else sorted(readable)[0]
        owners = [owner for owner in owners_of(ids[name], others) if owner != assignment.name]
        hint = f"; it looks like the notebook of {', '.join(owners)}" if owners else ""
        shown = ", ".join(repr(short(i)) for i in ids[name][:4])
        return "", [], f"{short(name, 60)} holds none of the cells of {assignment.name} (its cells: {shown}){hint}"
    chosen = max(candidates, key=lambda name: (copy_number(Path(name).stem)[1], name == expected, name))
    notes = []
    if chosen != expected:
        notes.append(f"{short(chosen, 60)} is graded as {expected} (the name it was handed out with)")
    ignored = sorted(set(notebooks) - {chosen})
    if ignored:
        notes.append(f"{short(chosen, 60)} is graded; "
                     + ", ".join(_why_ignored(name, notebooks[name], ids, mine, others) for name in ignored))
    return chosen, notes, ""


def _why_ignored(name: str, notebook: dict | IntakeError, ids: Mapping[str, list[str]], mine: frozenset[str],
                 others: Mapping[str, Assignment]) -> str:
    if not isinstance(notebook, dict):
        return f"{short(name, 60)} is ignored (not a notebook)"
    owners = owners_of(ids[name], others)
    if owners and not mine.intersection(ids[name]):
        return f"{short(name, 60)} is ignored (the notebook of {', '.join(owners)})"
    return f"{short(name, 60)} is ignored (an earlier copy)"


# ---------------------------------------------------------------------------- rule 3: the cells


def _released_cell(expected: ExpectedCell, notebook: dict) -> dict:
    """A copy of the released cell to put back into ``notebook`` (with a new cell id where the format has ids)."""
    cell = {"cell_type": expected.cell_type, "metadata": json.loads(json.dumps(expected.metadata)), "source": expected.source}
    if expected.cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    if notebook.get("nbformat_minor", 0) >= 5:
        taken = {other.get("id") for other in notebook["cells"]}
        base = "restored-" + re.sub(r"[^A-Za-z0-9_-]", "-", expected.grade_id)[:40]
        cell["id"] = next(name for name in (base, *(f"{base}-{k}" for k in range(1, len(taken) + 2))) if name not in taken)
    return cell


def _same_text(a: str, b: str) -> bool:
    return [line.rstrip() for line in a.strip().splitlines()] == [line.rstrip() for line in b.strip().splitlines()]


_CELL_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")


def normalise_cell_ids(notebook: dict) -> None:
    """Give every cell a valid, unique ``id`` where the format has them (nbformat 4.5+); a pasted cell repeats one."""
    if notebook.get("nbformat_minor", 0) < 5:
        return
    seen: set[str] = set()
    for index, cell in enumerate(notebook["cells"]):
        cell_id = cell.get("id")
        if not isinstance(cell_id, str) or not _CELL_ID.match(cell_id) or cell_id in seen:
            cell_id = next(f"cell-{index}-{k}" for k in range(len(notebook["cells"]) + 1) if f"cell-{index}-{k}" not in seen)
            cell["id"] = cell_id
        seen.add(cell_id)


def id_notes(notebook: dict, assignment: Assignment) -> list[str]:
    """What happens to cells whose nbgrader id is repeated (pasted copies) or belongs to no cell of this assignment."""
    notes, counts = [], {}
    for grade_id in grade_ids(notebook):
        counts[grade_id] = counts.get(grade_id, 0) + 1
    for grade_id, count in counts.items():
        if grade_id not in assignment.cell_ids:
            notes.append(f"a cell carries the id {short(grade_id)}, which is not a cell of {assignment.name}: "
                         "it runs as an ordinary cell")
        elif count > 1:
            notes.append(f"the cell {grade_id} appears {count} times: only the first is graded, the copies run as ordinary cells")
    return notes


def repair_cells(notebook: dict, assignment: Assignment) -> list[str]:
    """Put back every deleted cell of the assignment where it was; return one note per repair.

    A deleted solution cell comes back as its stub (the part scores 0); a deleted test cell,
    written answer or locked cell comes back as released. A locked cell whose text was edited is
    named: the grader runs the original (nbgrader restores it).
    """
    notes, present = [], {}
    for index, cell in enumerate(notebook["cells"]):
        nbgrader = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
        if isinstance(nbgrader, dict) and isinstance(nbgrader.get("grade_id"), str):
            present.setdefault(nbgrader["grade_id"], index)
    missing_solutions, missing_others = [], []
    position = 0  # where the previous expected cell sits now
    for expected in assignment.cells:
        if expected.grade_id in present:
            position = _index_of(notebook, expected.grade_id) + 1
            cell = notebook["cells"][position - 1]
            if expected.role in ("tests", "locked") and expected.source and not _same_text(_source(cell), expected.source):
                notes.append(f"{expected.describe()} was edited: the grader runs the original")
            continue
        notebook["cells"].insert(position, _released_cell(expected, notebook))
        position += 1
        (missing_solutions if expected.role == "solution" else missing_others).append(expected)
    for expected in missing_solutions:
        notes.append(f"{expected.describe()} is missing: it is put back empty, so "
                     + (f"the tests of {expected.function} score 0" if expected.function else "its parts score 0"))
    if missing_others:
        notes.append("deleted cells are put back from the assignment: " + ", ".join(e.grade_id for e in missing_others))
    return notes


#: What makes an nbgrader cell graded, and how: nbgrader's toolbar lets a student change them, and nbgrader's
#: autograde stops on a solution cell marked graded (``OverwriteCells`` finds no graded cell of that id).
GRADING_KEYS = ("grade", "points", "solution", "locked", "task")


def _meaning(key: str, value: object) -> object:
    """What nbgrader makes of ``value`` under ``key``: a flag is true or false, points a number (else the value itself)."""
    if key != "points":
        return bool(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def restore_grading_metadata(notebook: dict, assignment: Assignment) -> list[str]:
    """Give every cell of the assignment the nbgrader settings it was released with; one note per cell changed.

    Only ``GRADING_KEYS`` are put back (exactly as released, a key the release lacks is
    removed); a cell is named when what nbgrader makes of them changed (a solution cell marked
    graded with points, a test cell's points, a locked cell unlocked).
    """
    expected_by_id = {cell.grade_id: cell for cell in assignment.cells}
    notes = []
    for cell in notebook["cells"]:
        nbgrader = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
        expected = expected_by_id.get(nbgrader.get("grade_id")) if isinstance(nbgrader, dict) else None
        released = expected.metadata.get("nbgrader") if expected is not None else None
        if not isinstance(released, dict):
            continue
        changed = [key for key in GRADING_KEYS if _meaning(key, nbgrader.get(key)) != _meaning(key, released.get(key))]
        for key in GRADING_KEYS:
            if key in released:
                nbgrader[key] = released[key]
            else:
                nbgrader.pop(key, None)
        if changed:
            notes.append(f"{expected.describe()} had its nbgrader settings changed ({', '.join(changed)}): "
                         "the grader uses the assignment's")
    return list(dict.fromkeys(notes))


def _index_of(notebook: dict, grade_id: str) -> int:
    for index, cell in enumerate(notebook["cells"]):
        nbgrader = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
        if isinstance(nbgrader, dict) and nbgrader.get("grade_id") == grade_id:
            return index
    return len(notebook["cells"]) - 1


# ---------------------------------------------------------------------------- rule 4: imports


def refused_import(module: str, names: list[str], rules: ImportRules) -> str:
    """The module (or ``module.name``) the grading kernel cannot import under ``rules``, or ``""``."""
    for blocked in rules.blocked:
        if module == blocked or module.startswith(blocked + "."):
            return module
        if blocked.startswith(module + ".") and any(module + "." + name == blocked for name in names):
            return blocked
    parts = module.split(".")
    if parts[0] == SELF_CHECK_MODULE.split(".")[0]:  # the grader itself: only the self-check's no-op
        if module == SELF_CHECK_MODULE and names and all(name == SELF_CHECK_FUNCTION for name in names):
            return ""
        return module if module == SELF_CHECK_MODULE else ".".join(parts[:2])
    if not rules.package or parts[0] != rules.package:
        return ""
    if len(parts) == 1:  # from <library> import geometry
        hidden = [name for name in names if name not in rules.student_modules and name not in rules.grants]
        return f"{rules.package}.{hidden[0]}" if hidden else ""
    if parts[1] in rules.student_modules:
        return ""
    granted = rules.grants.get(parts[1])
    if granted is not None and len(parts) == 2 and names and all(name in granted for name in names):
        return ""
    return ".".join(parts[:2])


def _code_lines(source: str) -> str:
    """Source without IPython's magics and shell lines (they are flagged elsewhere), so ``ast`` can read it."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def refused_imports(notebook: dict, assignment: Assignment) -> list[str]:
    """One note per student cell that imports what the grading kernel cannot import."""
    notes = []
    for index, cell in enumerate(notebook["cells"], start=1):
        if cell.get("cell_type") != "code":
            continue
        nbgrader = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell.get("metadata"), dict) else {}
        if isinstance(nbgrader, dict) and nbgrader.get("locked"):
            continue
        try:
            tree = ast.parse(_code_lines(_source(cell)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        where = f"the cell {short(nbgrader['grade_id'])}" if isinstance(nbgrader, dict) and nbgrader.get("grade_id") else f"cell {index}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found = [refused_import(alias.name, [], assignment.imports) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found = [refused_import(node.module, [alias.name for alias in node.names], assignment.imports)]
            else:
                continue
            for module in filter(None, found):
                notes.append(f"{where} imports {module}, which is not available while grading "
                             "(ImportError: the parts that need it score 0): implement it yourself")
    return list(dict.fromkeys(notes))


# ---------------------------------------------------------------------------- all rules


def examine(files: Mapping[str, bytes | IntakeError], assignment: Assignment, others: Mapping[str, Assignment]) -> Intake:
    """Apply every rule to the ``.ipynb`` files of a hand-in (name -> bytes, or why they could not be read).

    Returns the notebook the grader runs (outputs dropped, cells put back), which file it came
    from and one note per repair or problem; or the refusal.
    """
    parsed: dict[str, dict | IntakeError] = {}
    for name, data in files.items():
        try:
            parsed[name] = data if isinstance(data, IntakeError) else parse_notebook(data, name)
        except IntakeError as error:
            parsed[name] = error
    chosen, notes, refused = choose_notebook(parsed, assignment, others)
    if refused:
        return Intake(None, refused=refused)
    notebook = parsed[chosen]
    dropped = drop_outputs(notebook)
    too_large = size_problem(notebook, chosen)
    if too_large:
        return Intake(None, chosen, notes, too_large)
    if dropped > MAX_NOTEBOOK_BYTES:
        notes.append(f"{short(chosen, 60)} carried {dropped / (1024 * 1024):.0f} MiB of stored outputs: they are dropped before grading")
    notes += id_notes(notebook, assignment)
    notes += repair_cells(notebook, assignment)
    notes += restore_grading_metadata(notebook, assignment)
    notes += refused_imports(notebook, assignment)
    normalise_cell_ids(notebook)
    notebook.setdefault("metadata", {})[INTAKE_METADATA] = {"notes": list(notes)}
    return Intake(notebook, chosen, notes)
