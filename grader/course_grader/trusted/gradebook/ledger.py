"""What the grader knows of each submission that nbgrader's gradebook cannot hold.

The gradebook holds the scores (automatic and manual), the comments and the flags a TA
sees in the formgrader; it is the one truth of every score. Beside it, ``reports/grading.json``
(the *ledger*) holds, per submission graded or refused by ``perceptron-course grade``:

- ``status`` and ``reason``: why a submission failed (a failed one has no gradebook entry),
  or what the grader had to repair;
- ``flags`` and ``unanalysed``: the static review's findings;
- ``submitted``: a hash of the submitted files (the notebooks and ``timestamp.txt``), so that
  the next grading skips a submission that did not change;
- ``answers``: a hash per graded cell of what decides its score (the text of a written
  answer; the whole submission for a test cell), so that a regrade keeps the manual grade
  of every answer whose text did not change;
- ``isolation``: how its student code ran (sandbox or not, memory cap);
- ``feedback_of``: a hash of the gradebook's grades and comments its feedback pages show, so
  that ``refresh`` rewrites only the pages whose grades changed.

``grades.csv``, ``grades_by_student.csv``, the feedback pages and the report are all
regenerated from the gradebook and this ledger, never edited apart from them. What each
graded submission's grade was decided from (to replay it) is in a record of its own,
``reports/records/<student>/<assignment>.json`` (``records.py``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..course.course import Course
from ..course.files import replace_text
from ..judging.flags import Flag
from ..course.intake import take_in
from ..judging.kernel_imports import import_rules
from .outcome import GRADED, Isolation, Key, Outcome

LEDGER_FILE = "grading.json"
#: Files of a submission folder whose content decides a grade, beside the assignment's notebooks.
TIMESTAMP_FILE = "timestamp.txt"


@dataclass
class Entry:
    """One submission in the ledger (plain JSON data)."""

    student: str
    assignment: str
    status: str
    reason: str = ""
    flags: list[list] = field(default_factory=list)  #: ``[cell, line, construct]`` of each static flag
    unanalysed: list[str] = field(default_factory=list)
    submitted: str = ""  #: hash of the submitted files; ``""`` when they could not be read
    answers: dict[str, str] = field(default_factory=dict)  #: ``notebook/grade_id`` -> hash of what decides its score
    isolation: dict = field(default_factory=dict)  #: ``Isolation`` fields of the run that graded it
    feedback_of: str = ""  #: ``gradebook_state`` its feedback pages show; ``""`` when unknown

    @property
    def key(self) -> Key:
        return self.student, self.assignment

    @classmethod
    def from_json(cls, data: dict) -> "Entry | None":
        """An entry from its JSON form, or ``None`` if it is not one (a hand-edited or damaged file)."""
        try:
            entry = cls(str(data["student"]), str(data["assignment"]), str(data["status"]), str(data.get("reason", "")),
                        [[str(c), int(n), str(k)] for c, n, k in data.get("flags", [])],
                        [str(text) for text in data.get("unanalysed", [])], str(data.get("submitted", "")),
                        {str(k): str(v) for k, v in dict(data.get("answers", {})).items()}, dict(data.get("isolation", {})),
                        str(data.get("feedback_of", "")))
        except (KeyError, TypeError, ValueError):
            return None
        return entry

    def flag_list(self) -> list[Flag]:
        return [Flag(cell, line, construct) for cell, line, construct in self.flags]


def ledger_path(course: Course) -> Path:
    return course.reports / LEDGER_FILE


def read_ledger(course: Course) -> dict[Key, Entry]:
    """Every entry of the ledger by ``(student, assignment)``; an unreadable ledger reads as empty."""
    try:
        entries = json.loads(ledger_path(course).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    parsed = [Entry.from_json(data) for data in entries if isinstance(data, dict)] if isinstance(entries, list) else []
    return {entry.key: entry for entry in parsed if entry is not None}


def write_ledger(course: Course, ledger: dict[Key, Entry]) -> None:
    """Write the whole ledger at once (a new file renamed over the old: never half-written)."""
    course.reports.mkdir(exist_ok=True)
    replace_text(ledger_path(course), json.dumps([asdict(ledger[key]) for key in sorted(ledger)]))


#: What an interrupted batch left to grade, beside the ledger: ``grade --resume`` grades exactly these.
LEFT_FILE = "grading_left.json"


def read_left(course: Course) -> list[Key]:
    """The ``(student, assignment)`` an interrupted batch left, in order; none when there is no such record."""
    try:
        data = json.loads((course.reports / LEFT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [(item[0], item[1]) for item in data if isinstance(item, list) and len(item) == 2
            and all(isinstance(part, str) for part in item)] if isinstance(data, list) else []


def write_left(course: Course, left: list[Key]) -> None:
    """Record what is left to grade (written whole); an empty list removes the record."""
    path = course.reports / LEFT_FILE
    if not left:
        path.unlink(missing_ok=True)
        return
    course.reports.mkdir(exist_ok=True)
    replace_text(path, json.dumps(sorted(set(left))))


#: How often a batch writes its ledger while it grades (and once more at its end, Ctrl+C included).
WRITE_EVERY_SECONDS = 2.0


class LedgerWriter:
    """Writes a ledger that changes entry by entry at most every ``WRITE_EVERY_SECONDS``, and at ``flush``.

    Written after every merge, a ledger of a whole class is rewritten once per submission: for
    300 students x 6 assignments, about a minute of the grader's time. A process killed outright
    loses at most the last interval's entries, whose submissions the next ``grade`` grades again.
    """

    def __init__(self, course: Course, ledger: dict[Key, Entry], clock=None) -> None:
        import time

        self.course, self.ledger = course, ledger
        self.clock = clock or time.monotonic
        self.written_at: float | None = None

    def changed(self) -> None:
        """The ledger changed: write it if the last write is old enough."""
        now = self.clock()
        if self.written_at is None or now - self.written_at >= WRITE_EVERY_SECONDS:
            self.flush()

    def flush(self) -> None:
        write_ledger(self.course, self.ledger)
        self.written_at = self.clock()


def entry_for(outcome: Outcome, fingerprint: "Fingerprint", isolation: Isolation, feedback_of: str = "") -> Entry:
    """The ledger entry of a submission just graded (or refused)."""
    return Entry(outcome.student, outcome.assignment, outcome.status, outcome.reason,
                 [[flag.cell, flag.line, flag.construct] for flag in outcome.flags], list(outcome.unanalysed),
                 fingerprint.submitted if outcome.status == GRADED else "", dict(fingerprint.answers),
                 asdict(isolation), feedback_of)


def gradebook_state(gradebook, student: str, assignment: str) -> str:
    """A hash of what a submission's feedback pages show from the gradebook: every grade (automatic, manual,
    extra credit, whether it waits for a TA), every comment, each notebook's late penalty and how late it was; ``""`` if it is not there."""
    from .gradebook_rows import grades_and_comments

    try:
        submission = gradebook.find_submission(assignment, student)
    except Exception:  # noqa: BLE001 - nbgrader's MissingEntry
        return ""
    state = []
    for notebook in sorted(submission.notebooks, key=lambda nb: nb.name):
        grades, comments = grades_and_comments(gradebook, notebook)
        state.append(["notebook", notebook.name, notebook.late_submission_penalty, float(submission.total_seconds_late or 0)])
        state += sorted(["grade", name, g.auto_score, g.manual_score, g.extra_credit, bool(g.needs_manual_grade)]
                        for name, g in grades.items())
        state += sorted(["comment", name, c.auto_comment or "", c.manual_comment or ""] for name, c in comments.items())
    return hashlib.sha256(json.dumps(state, default=str).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------ what a submission is, by content


@dataclass(frozen=True)
class Fingerprint:
    """Hashes of a submission: all its submitted files, and what decides each graded cell."""

    submitted: str  #: ``""`` when the files cannot be read safely (such a submission is always graded)
    answers: dict[str, str]


def _sha256(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def fingerprint(course: Course, student: str, assignment: str) -> Fingerprint:
    """The ``Fingerprint`` of ``submitted/<student>/<assignment>/``, taken in as the grader takes it (``intake.take_in``).

    ``submitted`` hashes what grading would run: each notebook under its expected name (the
    file the intake picks, whatever its name, with stored outputs dropped), the name it was
    handed in under, ``timestamp.txt``, and the digest of the notebooks as handed in (stored
    outputs included), which the hidden cases are drawn from. ``answers`` maps ``notebook/grade_id`` of each graded
    cell to the hash of the text of that cell when it is a written answer (a TA grades it), and
    to ``submitted`` for a test cell (its score depends on the whole notebook).
    """
    try:
        taken = take_in(course, student, assignment, import_rules(course.root, assignment))
    except Exception:  # noqa: BLE001 - a submission the intake cannot read is always graded again (and reported then)
        return Fingerprint("", {})
    if taken.refused:
        return Fingerprint("", {})
    contents = dict(taken.notebooks)
    contents["hand-in as handed in"] = taken.digest.encode()  # outputs and all: what the cases are drawn from
    contents.update({f"{name}.handed-in-as": stem.encode() for name, stem in taken.handed_in_as.items()})
    if taken.timestamp is not None:
        contents[TIMESTAMP_FILE] = taken.timestamp
    submitted = _sha256(*(part for name in sorted(contents) for part in (name.encode(), contents[name])))
    written = set(course.manually_graded_cells(assignment))
    answers = {}
    for name in course.notebook_names(assignment):
        sources = _graded_sources(contents.get(f"{name}.ipynb", b""))
        for grade_id in course.graded_cells(assignment):
            if grade_id in written:
                text = sources.get(grade_id)
                answers[f"{name}/{grade_id}"] = _sha256(b"missing" if text is None else b"text:" + text.encode())
            else:
                answers[f"{name}/{grade_id}"] = submitted
    return Fingerprint(submitted, answers)


def _graded_sources(notebook: bytes) -> dict[str, str]:
    """The source of the first cell with each ``grade_id`` (as nbgrader keeps the first of duplicates)."""
    try:
        cells = json.loads(notebook.decode("utf-8")).get("cells", [])
    except (UnicodeDecodeError, ValueError, AttributeError):
        return {}
    sources: dict[str, str] = {}
    for cell in cells if isinstance(cells, list) else []:
        try:
            grade_id = cell["metadata"]["nbgrader"]["grade_id"]
            source = cell.get("source", "")
        except (KeyError, TypeError, AttributeError):
            continue
        if isinstance(grade_id, str) and grade_id not in sources:
            sources[grade_id] = "".join(source) if isinstance(source, list) else str(source)
    return sources
