"""Copying, detected: each graded function compared with the library, the lectures and the class.

For every solution cell (by ``grade_id``) of every submitted notebook, the code the student
wrote is taken out of the cell: the lines of the release stub (the ``def`` line, the
docstring, ``# YOUR CODE HERE``) are dropped with a line diff. That code is compared with

- the reference library's source (the package ``term.toml``'s ``[library]`` names), one function or method at a
  time (signature and docstring dropped the same way);
- the lecture notebooks' code cells, ``notebooks/*.ipynb``, one cell at a time;
- the same part of every other submission of the same assignment.

The comparison is copydetect's (the winnowing approach of MOSS): Pygments tokenises the code,
names become ``V``, function names ``F``, strings ``S``; comments and whitespace go. Every
``NOISE``-character k-gram of that text is a fingerprint (a winnowing window of 1: the set of
fingerprints does not depend on Python's per-process string hashing, so the result is the
same on every run). A sparse matrix of documents by fingerprints finds, in one product, how
much of each student's part every other document holds; only pairs above a candidate bar go
to copydetect's ``compare_files`` for the score and the matched text.

A pair whose score reaches :data:`THRESHOLD` is a :class:`Match` for the TA to read, with the
matched lines side by side. A part whose reference solution is shorter than
:data:`MIN_FILTERED` characters of tokenised code is named too short to compare: every
correct answer looks alike there. Nothing here runs student code or touches a score: the
text of a submission is data, capped in size, and a part that cannot be read is noted, never
fatal.
"""

from __future__ import annotations

import ast
import difflib
import html
import io
import json
import multiprocessing
import re
import signal
import threading
import warnings
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..course.course import Course
from ..course.safe_text import markdown_text, quoted

#: Length of a fingerprint, in characters of tokenised code (copydetect's default noise threshold).
NOISE = 25
#: Fraction of a student's tokenised code found in another document that makes a match.
THRESHOLD = 0.7
#: Pairs whose share of fingerprints is below this never reach the detailed comparison.
CANDIDATE = 0.5
#: A part whose reference solution is shorter than this (characters of tokenised code, two or three
#: lines) is too short to compare; a submitted part shorter than this is not compared either.
MIN_FILTERED = 60
#: Most characters, and lines, of one document read; the rest is left out (and said so).
MAX_DOCUMENT_CHARS = 20_000
MAX_DOCUMENT_LINES = 400
#: Most pairs compared in detail per part (the candidates with the largest share first), and most
#: matches kept per student and part.
MAX_DETAILED_PAIRS = 300
MAX_MATCHES_PER_PART = 3
#: Lines shown per side of a match, and matches shown side by side (the rest as one table).
MAX_SHOWN_LINES = 14
MAX_SHOWN_MATCHES = 60

SUBMISSION, LIBRARY, LECTURE = "submission", "library", "lecture"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SOLUTION_REGION = re.compile(r"^[ \t]*### BEGIN SOLUTION.*?^[ \t]*### END SOLUTION[^\n]*\n?", re.MULTILINE | re.DOTALL)

Lines = tuple[tuple[int, str], ...]  #: ``(line number, text)`` of the lines kept from a cell or a file

# Whatever copydetect warns about a student's text is not the TA's to read. A filter set once, not
# warnings.catch_warnings around each call: catch_warnings swaps the process's filters, which no
# thread owns (a serial batch compares in its main thread beside the report's other threads).
warnings.filterwarnings("ignore", module="copydetect")


@dataclass(frozen=True)
class Document:
    """Code to compare: where it comes from, and the lines of it that count."""

    kind: str  #: :data:`SUBMISSION`, :data:`LIBRARY` or :data:`LECTURE`
    owner: str  #: the student id, ``<library>/perceptron.py`` or ``notebooks/02_algorithm.ipynb``
    part: str  #: the ``grade_id``, the function (``train``, ``PerceptronRun.predict``) or ``cell 7``
    lines: Lines

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.lines) + "\n"

    @property
    def label(self) -> str:
        if self.kind == SUBMISSION:
            return f"student {self.owner}"
        return f"{self.owner} {self.part}" if self.kind == LIBRARY else f"{self.owner} ({self.part})"


@dataclass(frozen=True)
class Match:
    """A student's part found, above the threshold, in another document."""

    assignment: str
    part: str  #: the ``grade_id`` of the solution cell
    student: str
    other: str  #: what it was found in, e.g. ``student cy``, ``<library>/geometry.py augment``
    kind: str  #: the other document's kind
    score: float  #: fraction of the student's tokenised code found in the other (two students: each has a match of their own)
    student_lines: Lines  #: the student's matched lines (numbers within their cell)
    other_lines: Lines  #: the other's matched lines (numbers within its cell or file)


@dataclass
class SimilarityReview:
    """What the comparison found for a class."""

    matches: list[Match] = field(default_factory=list)
    too_short: list[tuple[str, str, int]] = field(default_factory=list)  #: ``(assignment, part, characters)``
    notes: list[str] = field(default_factory=list)  #: parts not read, pairs not detailed, truncations


# ------------------------------------------------------------------ extraction


def safe_line(text: str) -> str:
    """A line of student code with tabs expanded and control characters made visible as ``?``."""
    return _CONTROL.sub("?", text.expandtabs(4))


def written_lines(stub: str, submitted: str) -> Lines:
    """The non-blank lines of ``submitted`` that are not lines of ``stub`` (the starter text), numbered from 1.

    Lines are compared stripped, so re-indenting the docstring does not make it the student's.
    """
    stub_lines = stub.splitlines()
    mine = submitted[:MAX_DOCUMENT_CHARS].splitlines()[:MAX_DOCUMENT_LINES]
    matcher = difflib.SequenceMatcher(None, [line.strip() for line in stub_lines], [line.strip() for line in mine], autojunk=False)
    kept = []
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            kept += [(number + 1, safe_line(mine[number])) for number in range(start, end) if mine[number].strip()]
    return tuple(kept)


def _cells_by_grade_id(notebook) -> dict[str, str]:
    """The source of the first code cell claiming each ``grade_id`` of a solution cell."""
    found: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if cell.get("cell_type") == "code" and meta.get("solution") and isinstance(grade_id, str) and grade_id not in found:
            source = cell.get("source", "")
            found[grade_id] = "".join(source) if isinstance(source, list) else str(source)
    return found


def _read_notebook(path: Path):
    import nbformat

    return nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)


def solution_parts(course: Course, assignment: str) -> dict[str, tuple[str, str]]:
    """Every solution cell of ``assignment`` by ``grade_id``: its release stub and its reference solution.

    The stub is the release notebook's cell (what nbgrader gave the student); where ``release/``
    lacks it, the source cell with its solution region cut out.
    """
    parts: dict[str, tuple[str, str]] = {}
    for name in course.notebook_names(assignment):
        sources = _cells_by_grade_id(_read_notebook(course.source / assignment / f"{name}.ipynb"))
        release_path = course.release / assignment / f"{name}.ipynb"
        stubs = _cells_by_grade_id(_read_notebook(release_path)) if release_path.is_file() else {}
        for grade_id, source in sources.items():
            stub = stubs.get(grade_id, _SOLUTION_REGION.sub("", source))
            solution = "\n".join(line for line in source.splitlines() if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)
            parts[grade_id] = (stub, solution)
    return parts


def library_documents(library: Path) -> list[Document]:
    """Each function and method of the library's top-level modules, without its signature and docstring."""
    documents = []
    for path in sorted(library.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        owner = f"{library.name}/{path.name}"
        for node, qualname in _functions(tree):
            body = node.body
            skip = set()
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                skip = set(range(body[0].lineno, body[0].end_lineno + 1))
            kept = tuple((number, lines[number - 1]) for number in range(body[0].lineno, node.end_lineno + 1)
                         if number not in skip and lines[number - 1].strip())
            documents.append(Document(LIBRARY, owner, qualname, kept))
    return documents


def _functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, node.name
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield item, f"{node.name}.{item.name}"


def lecture_documents(notebooks: Path) -> list[Document]:
    """Each code cell of the lecture notebooks (cells numbered from 1 among all cells)."""
    documents = []
    for path in sorted(notebooks.glob("*.ipynb")):
        for position, cell in enumerate(json.loads(path.read_text(encoding="utf-8")).get("cells", []), start=1):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            kept = tuple((number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip())
            documents.append(Document(LECTURE, f"{notebooks.name}/{path.name}", f"cell {position}", kept))
    return documents


def submission_documents(course: Course, assignment: str, parts: dict[str, tuple[str, str]],
                         notes: list[str]) -> dict[str, list[Document]]:
    """The student-written code of every part of every submission of ``assignment``, by part.

    Submissions are read as the grader takes them in (``intake.take_in``: the notebook it runs, whatever
    its name; no link followed, size-capped); one the grader refuses is left out.
    """
    from ..course.intake import take_in
    from ..judging.kernel_imports import import_rules

    documents: dict[str, list[Document]] = {part: [] for part in parts}
    for student, submitted_assignment in course.submissions():
        if submitted_assignment != assignment:
            continue
        try:
            taken = take_in(course, student, assignment, import_rules(course.root, assignment))
        except Exception as error:  # noqa: BLE001 - grading reports why; here it is only not compared
            notes.append(f"{student}/{assignment}: not compared ({type(error).__name__})")
            continue
        if taken.refused:
            notes.append(f"{student}/{assignment}: not compared, the grader refuses it ({quoted(taken.refused, 80)})")
            continue
        cells: dict[str, str] = {}
        for data in taken.notebooks.values():
            cells.update({k: v for k, v in _cells_by_grade_id(json.loads(data)).items() if k not in cells})
        for part, (stub, _) in parts.items():
            submitted = cells.get(part, "")
            if len(submitted) > MAX_DOCUMENT_CHARS or submitted.count("\n") >= MAX_DOCUMENT_LINES:
                notes.append(f"{student}/{assignment}/{part}: only its first {MAX_DOCUMENT_LINES} lines "
                             f"or {MAX_DOCUMENT_CHARS:,} characters were compared")
            lines = written_lines(stub, submitted)
            if lines:
                documents[part].append(Document(SUBMISSION, student, part, lines))
    return documents


# ------------------------------------------------------------------ fingerprints


def fingerprint(document: Document):
    """copydetect's fingerprint of a document (tokenised, k-grams of :data:`NOISE` characters, all kept)."""
    from copydetect import CodeFingerprint

    # The language named, not guessed from a file name: Pygments' guess tries every lexer's patterns (2 ms a call).
    return CodeFingerprint(f"{document.kind}.py", NOISE, 1, fp=io.StringIO(document.text), language="python")


def tokenised_length(text: str) -> int:
    """Characters of ``text`` once copydetect has tokenised it (names ``V``, no comments or spaces)."""
    from copydetect.utils import filter_code

    return len(filter_code(text, "part.py", language="python")[0])


def _shared_fraction(student_prints: list, other_prints: list):
    """For each pair (student document, other document): the fraction of the student's fingerprints the other holds.

    One sparse product of documents by fingerprints (the index), so a class of 300 is as cheap
    as the number of fingerprints they share.
    """
    import numpy as np
    from scipy.sparse import csr_matrix

    hashes = [np.fromiter(printed.hashes, dtype=np.int64, count=len(printed.hashes)) for printed in student_prints + other_prints]
    sizes = np.array([len(row) for row in hashes], dtype=np.int64)
    _, columns = np.unique(np.concatenate(hashes) if hashes else np.zeros(0, np.int64), return_inverse=True)
    rows = np.repeat(np.arange(len(hashes)), sizes)
    width = int(columns.max()) + 1 if columns.size else 1
    documents = csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(len(hashes), width))
    students, others = documents[:len(student_prints)], documents[len(student_prints):]
    shared = (students @ others.T).tocoo()
    sizes = np.maximum(sizes[:len(student_prints)], 1)
    return [(int(i), int(j), float(value / sizes[i])) for i, j, value in zip(shared.row, shared.col, shared.data)]


def matched_lines(document: Document, slices) -> Lines:
    """The lines of ``document`` that copydetect's character slices (in its text) touch."""
    starts = [0]
    for _, text in document.lines:
        starts.append(starts[-1] + len(text) + 1)
    touched = set()
    for start, end in zip(*slices):
        touched |= {k for k in range(len(document.lines)) if starts[k] < end and starts[k + 1] - 1 > start}
    return tuple(document.lines[k] for k in sorted(touched))


# ------------------------------------------------------------------ comparison


def compare_part(assignment: str, part: str, students: list[Document], references: list[Document],
                 reference_prints: list, notes: list[str]) -> list[Match]:
    """Every match of one part: each student against the references and against each other."""
    from copydetect import compare_files

    prints, readable = [], []
    for document in students:
        try:
            printed = fingerprint(document)
        except Exception as error:  # noqa: BLE001 - hostile text is data: note it, go on
            notes.append(f"{document.owner}/{assignment}/{part}: not compared ({type(error).__name__})")
            continue
        if len(printed.filtered_code) >= MIN_FILTERED and printed.hashes:
            prints.append(printed)
            readable.append(document)
    if len(readable) < len(students):
        notes.append(f"{assignment}/{part}: {len(students) - len(readable)} of {len(students)} submissions not compared "
                     f"(less than {MIN_FILTERED} characters of their own tokenised code, or unreadable)")
    others = readable + references
    pairs: dict[tuple[int, int], float] = {}
    for i, j, shared in _shared_fraction(prints, prints):
        if i != j:  # two students: the larger share of either side decides
            key = (min(i, j), max(i, j))
            pairs[key] = max(pairs.get(key, 0.0), shared)
    for i, j, shared in _shared_fraction(prints, reference_prints):
        pairs[(i, len(readable) + j)] = shared
    candidates = sorted((-shared, readable[i].owner, others[j].label, i, j)
                        for (i, j), shared in pairs.items() if shared >= CANDIDATE)
    found: dict[str, list[Match]] = {}
    # A student keeps at most MAX_MATCHES_PER_PART matches: spend the detailed comparisons across students
    per_student: dict[int, int] = {}
    chosen = []
    for candidate in candidates:
        if per_student.get(candidate[3], 0) < 2 * MAX_MATCHES_PER_PART:
            per_student[candidate[3]] = per_student.get(candidate[3], 0) + 1
            chosen.append(candidate)
    if len(chosen) > MAX_DETAILED_PAIRS:
        notes.append(f"{assignment}/{part}: {len(candidates):,} pairs share over {CANDIDATE:.0%} of their fingerprints; "
                     f"{MAX_DETAILED_PAIRS:,} of those sharing most were compared in detail, the rest were not")
    for _, _, _, i, j in chosen[:MAX_DETAILED_PAIRS]:
        other_print = prints[j] if j < len(readable) else reference_prints[j - len(readable)]
        _, (mine, theirs), (my_slices, their_slices) = compare_files(prints[i], other_print)
        if j >= len(readable):  # a reference: the student's share decides
            if mine >= THRESHOLD:
                found.setdefault(readable[i].owner, []).append(Match(
                    assignment, part, readable[i].owner, others[j].label, others[j].kind, round(float(mine), 3),
                    matched_lines(readable[i], my_slices), matched_lines(others[j], their_slices)))
        elif max(mine, theirs) >= THRESHOLD:  # two students: listed under both, each with their own share (who copied is not known)
            for (me, share, my_lines), (other, their_lines) in (((i, mine, my_slices), (j, their_slices)),
                                                                 ((j, theirs, their_slices), (i, my_slices))):
                found.setdefault(readable[me].owner, []).append(Match(
                    assignment, part, readable[me].owner, others[other].label, others[other].kind, round(float(share), 3),
                    matched_lines(readable[me], my_lines), matched_lines(others[other], their_lines)))
    matches = []
    for student in sorted(found):
        ranked = sorted(found[student], key=lambda m: (-m.score, m.other))
        matches += ranked[:MAX_MATCHES_PER_PART]
    return matches


def _course_library(course: Course) -> Path | None:
    """The folder of the reference library the course's term file names, where it is installed."""
    from ..course.library import library_folder

    try:
        return library_folder(course.term().library.package)
    except Exception:  # noqa: BLE001 - a term file the TA must fix is reported by check; here the library is left out
        return None


def find_similar(course: Course, assignments: list[str] | None = None, *, library: Path | None = None,
                 notebooks: Path | None = None) -> SimilarityReview:
    """Compare every graded part of every submission with the library, the lectures and the class.

    Parameters
    ----------
    course : Course
        The course; submissions are read from ``submitted/``.
    assignments : list of str, optional
        The assignments to compare (default: every assignment of the course).
    library, notebooks : Path, optional
        The reference library's package folder and the lecture notebooks' folder (default: the library the course's
        ``term.toml`` names, where it is installed, and the course's ``notebooks/``; without them, they are not
        compared and a note says so).

    Returns
    -------
    SimilarityReview
        The matches above :data:`THRESHOLD`, the parts too short to compare, and notes. Never raises
        for anything a student wrote; a flag never changes a score.
    """
    review = SimilarityReview()
    library = library or _course_library(course)
    notebooks = notebooks or course.root / "notebooks"
    if library is None:
        review.notes.append("the course names no installed reference library (term.toml's [library]): it was not compared")
    if not notebooks.is_dir():
        review.notes.append(f"no lecture notebooks at {notebooks}: the lectures were not compared")
    references = (library_documents(library) if library is not None else []) + \
        (lecture_documents(notebooks) if notebooks.is_dir() else [])
    references = [document for document in references if document.lines]
    reference_prints, kept_references = [], []
    for document in references:
        printed = fingerprint(document)
        if len(printed.filtered_code) >= NOISE:
            reference_prints.append(printed)
            kept_references.append(document)
    for assignment in assignments or course.assignments():
        try:
            parts = solution_parts(course, assignment)
        except Exception as error:  # noqa: BLE001 - a course file the TA must fix; the report says so
            review.notes.append(f"{assignment}: its source cannot be read ({type(error).__name__})")
            continue
        documents = submission_documents(course, assignment, parts, review.notes)
        for part, (stub, solution) in parts.items():
            length = tokenised_length(Document(LIBRARY, "", part, written_lines(stub, solution)).text)
            if length < MIN_FILTERED:
                review.too_short.append((assignment, part, length))
                continue
            review.matches += compare_part(assignment, part, documents[part], kept_references, reference_prints,
                                           review.notes)
    return review


# ------------------------------------------------------------------ the report's section

INTRODUCTION = ("Each graded function's own code (the starter text removed) was compared with the reference "
                "library, the lecture notebooks and every other submission of the same assignment "
                f"(copydetect, {NOISE}-character fingerprints of the tokenised code). A pair is listed when at least "
                f"{THRESHOLD:.0%} of the student's code is found in the other. A listing never changes a score: "
                "read both sides and decide.")


def _markdown_text(text: str) -> str:
    """One line of literal Markdown (``safe_text.markdown_text``), leading spaces kept: a line of code keeps its indent."""
    return markdown_text(text, keep_indent=True)


def _shown(lines: Lines) -> Lines:
    return lines[:MAX_SHOWN_LINES] + (((0, f"... and {len(lines) - MAX_SHOWN_LINES} more lines"),) if len(lines) > MAX_SHOWN_LINES else ())


def side_by_side(match: Match) -> list[tuple[tuple[int, str], tuple[int, str]]]:
    """Rows of ``((line, text) of the student, (line, text) of the other)``; line 0 pads or says what was cut."""
    left, right = list(_shown(match.student_lines)), list(_shown(match.other_lines))
    size = max(len(left), len(right))
    return list(zip(left + [(0, "")] * (size - len(left)), right + [(0, "")] * (size - len(right))))


def _numbered(line: tuple[int, str], render) -> str:
    number, text = line
    return f"{number}: {render(text)}" if number else render(text)


def _match_title(match: Match) -> str:
    return f"{match.student}, {match.assignment}/{match.part}: {match.score:.0%} found in {match.other}"


def too_short_lines(review: SimilarityReview) -> list[str]:
    return [f"{assignment}/{part}: too short to compare ({length} characters of tokenised code in the reference "
            f"solution; every correct answer looks alike)" for assignment, part, length in review.too_short]


def remaining_rows(review: SimilarityReview) -> list[list[str]]:
    """Header and one row per match past the first :data:`MAX_SHOWN_MATCHES` (shown without their lines)."""
    return [["student", "part", "found in", "score"]] + [
        [m.student, f"{m.assignment}/{m.part}", m.other, f"{m.score:.0%}"] for m in review.matches[MAX_SHOWN_MATCHES:]]


def shown_notes(review: SimilarityReview, limit: int = 50) -> list[str]:
    notes = review.notes[:limit]
    return notes + ([f"and {len(review.notes) - limit} more notes"] if len(review.notes) > limit else [])


def markdown_section(review: SimilarityReview) -> str:
    """The report's section, in Markdown: every match with its lines side by side, then the short parts and notes."""
    text = ["## Similar code for review", "", INTRODUCTION, ""]
    if not review.matches:
        text += ["No pair reached the threshold.", ""]
    for match in review.matches[:MAX_SHOWN_MATCHES]:
        text += [f"### {_markdown_text(_match_title(match))}", "",
                 f"| {_markdown_text(match.student)} | {_markdown_text(match.other)} |", "|---|---|"]
        text += [f"| {_numbered(left, _markdown_text)} | {_numbered(right, _markdown_text)} |" for left, right in side_by_side(match)]
        text.append("")
    rest = remaining_rows(review)
    if len(rest) > 1:
        text += [f"{len(rest) - 1} more matches (their lines are not shown):", ""]
        text += ["| " + " | ".join(_markdown_text(cell) for cell in row) + " |" for row in rest[:1]] + ["|---|---|---|---|"]
        text += ["| " + " | ".join(_markdown_text(cell) for cell in row) + " |" for row in rest[1:]] + [""]
    short = too_short_lines(review)
    if short:
        text += ["Parts not compared:", "", *(f"- {_markdown_text(line)}" for line in short), ""]
    if review.notes:
        text += ["Notes:", "", *(f"- {_markdown_text(note)}" for note in shown_notes(review)), ""]
    return "\n".join(text)


def html_section(review: SimilarityReview) -> str:
    """The report's section as an HTML fragment: every string escaped, each match as a two-column table."""
    escape = html.escape
    parts = ["<h2>Similar code for review</h2>", f"<p>{escape(INTRODUCTION)}</p>"]
    if not review.matches:
        parts.append("<p>No pair reached the threshold.</p>")
    for match in review.matches[:MAX_SHOWN_MATCHES]:
        rows = "".join(f"<tr><td><pre style=\"margin:0\">{_numbered(left, escape)}</pre></td><td><pre style=\"margin:0\">{_numbered(right, escape)}</pre></td></tr>"
                       for left, right in side_by_side(match))
        parts.append(f"<h3>{escape(_match_title(match))}</h3><table class=\"similar\"><tr><th>{escape(match.student)}</th>"
                     f"<th>{escape(match.other)}</th></tr>{rows}</table>")
    rest = remaining_rows(review)
    if len(rest) > 1:
        parts.append(f"<p>{len(rest) - 1} more matches (their lines are not shown):</p><table>"
                     + "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rest) + "</table>")
    short = too_short_lines(review)
    if short:
        parts.append("<p>Parts not compared:</p><ul>" + "".join(f"<li>{escape(line)}</li>" for line in short) + "</ul>")
    if review.notes:
        parts.append("<p>Notes:</p><ul>" + "".join(f"<li>{escape(note)}</li>" for note in shown_notes(review)) + "</ul>")
    return "\n".join(parts) + "\n"


def compare_in_background(course: Course, assignments: list[str], *,
                          compare: Callable[[Course, list[str]], SimilarityReview] | None = None) -> Future:
    """``compare(course, assignments)`` (default :func:`find_similar`) in a process of its own, started now; its result (or error) in the future.

    It reads only what was handed in, the source and the library: a batch starts it as its jobs
    start, and its seconds (more, the larger the class) pass while the workers grade rather than
    after the last job. A process, not a thread: CPython 3.11 converts a parsed tree with one
    recursion counter per interpreter, and two threads parsing at once (``ast.parse`` here, a
    traceback or the intake there) fail with ``SystemError: AST constructor recursion depth
    mismatch``. The process is a daemon: a Ctrl+C ends it (Ctrl+C reaches it too, and
    multiprocessing terminates a daemon at exit), never waits for it. ``compare`` must be picklable
    by reference (a module-level function): the process is spawned, not forked, since this process
    has threads (an import under way in one of them would stay locked in a fork).
    """
    future: Future = Future()
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_compare_and_send, args=(compare, course, assignments, sending),
                              name="similarity", daemon=True)
    with _interrupts_ignored():  # inherited: Ctrl+C is this process's to handle (it kills the comparison, stop_comparison)
        process.start()
    sending.close()  # the child holds its own copy: its end closing is how a death shows here
    future.process = process  # for stop_comparison

    def wait_for_the_result() -> None:
        future.set_running_or_notify_cancel()
        try:
            kind, value = receiving.recv()
        except (EOFError, OSError):
            process.join()
            future.set_exception(RuntimeError(f"its process ended without a result (exit code {process.exitcode})"))
            return
        finally:
            receiving.close()
        process.join()
        (future.set_result if kind == "review" else future.set_exception)(value)

    threading.Thread(target=wait_for_the_result, name="similarity", daemon=True).start()
    return future


@contextmanager
def _interrupts_ignored():
    """SIGINT ignored while the block runs (in the main thread; elsewhere nothing changes): a process started
    meanwhile starts with it ignored, and Python keeps it so, so a Ctrl+C prints no traceback of its own there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_comparison(future: Future) -> None:
    """End the process of a comparison started by :func:`compare_in_background` (Ctrl+C) and reap it."""
    process = getattr(future, "process", None)
    if process is not None and process.is_alive():
        process.kill()
        process.join(timeout=5)  # SIGKILL cannot be held off: this is the kernel's time to end it, not the comparison's


def _compare_and_send(compare: Callable[[Course, list[str]], SimilarityReview] | None, course: Course,
                      assignments: list[str], connection) -> None:
    """The comparison's process: send ``("review", review)``, or ``("error", exception)``."""
    try:
        message = ("review", (compare or find_similar)(course, assignments))
    except BaseException as error:  # noqa: BLE001 - handed to whoever reads the result
        message = ("error", error)
    try:
        connection.send(message)
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled: its name and message instead
        connection.send(("error", RuntimeError(f"{type(message[1]).__name__}: {quoted(str(message[1]), 200)}")))
    connection.close()


def add_to_reports(course: Course, markdown: str, page: str, assignments: list[str], *, skipped: str = "",
                   started: Future | None = None) -> tuple[str, str]:
    """The Markdown report and the HTML page with the similarity section added; never raises.

    If the comparison itself fails, the section says so and the rest of the report stands;
    ``skipped`` (a reason) leaves the comparison out and says why. ``started`` is the same
    comparison already under way (``compare_in_background(course, assignments)``).
    """
    try:
        if skipped:
            review = SimilarityReview(notes=[skipped])
        else:
            review = started.result() if started is not None else find_similar(course, assignments)
    except Exception as error:  # noqa: BLE001 - a report without this section beats no report
        review = SimilarityReview(notes=[f"the comparison did not run ({type(error).__name__}: {str(error)[:200]})"])
    head, body_end, tail = page.rpartition("</body>")
    html_page = head + html_section(review) + body_end + tail if body_end else page + html_section(review)
    return markdown.rstrip("\n") + "\n\n" + markdown_section(review), html_page
