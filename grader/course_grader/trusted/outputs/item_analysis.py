"""Item analysis: how the class did on each graded part and on each behaviour its hidden cases test.

For every graded part (a graded cell of an assignment) and every named behaviour of its
checks (``Case.behaviour``), over the graded submissions of the class:

- the **pass rate**: the fraction of submissions with full points on the part (with every
  case of the behaviour passed);
- the **discrimination**, as PrairieLearn defines it for a question: the Pearson correlation,
  over students, of the score on the item with the score on the whole assessment (here the
  assignment, as a fraction of its points; PrairieLearn's ``assessment_questions_calculate_stats``,
  ``corr(question score, assessment score)``). It is shown as it is, in [-1, 1] (PrairieLearn
  clips it to [0, 100] %, which would hide a part that good students fail). Beside it,
  ``discrimination_rest`` correlates with the total *without* the part: an assignment has four
  or five parts, so the part makes a fifth of the total it is correlated with, which lifts the
  first figure; the second is the one to trust on a small assignment. A correlation is
  undefined with fewer than two submissions or when either score is the same for all of
  them: the report says which, never ``NaN``;
- the **most common failure message**: the first line of the failure (what went wrong, on
  which behaviour), identical lines grouped. A message can hold a student's exception text: it
  is one short line (``safe_text.plain_line``) and goes only through writers that escape it
  (``exports.write_csv``, ``markdown_text``, Jinja's autoescape).

Parts everyone passes or everyone fails are called out. A written answer graded by hand is
**pending** while a TA has not graded it: a part with a pending answer gets no statistics at all
(its other answers, a blank one nbgrader scored 0 on its own, would be a biased few), only how
many answers are pending, and is left out of every total its submissions are correlated with.

What each behaviour gave is decided on the trusted side while grading: ``ResilientExecute``
records it (``part_record``) in the autograded notebook's metadata, beside the limits hit,
replacing whatever the submission held there. ``read_parts`` reads it back, so ``refresh``
rebuilds the analysis from the autograded notebooks and the gradebook without running any
student code. It writes ``reports/item_analysis.csv`` (one row per part and per behaviour,
through ``exports.write_csv``), ``reports/item_analysis.png`` and a section of the reports.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..course.commands import grader_command
from ..judging.checks.judge import Verdict, first_line
from ..judging.grading_metadata import GRADING_METADATA, PARTS_RECORDED
from ..course.course import Course
from .exports import write_csv
from .figures import save_figure
from ..course.files import UnsafeFileError, read_capped
from ..gradebook.outcome import GRADED, ClassRecord
from ..course.safe_text import markdown_table, markdown_text, plain_line, quoted

#: Characters of a failure line kept at grading time (and shown).
MAX_MESSAGE_CHARS = 200
#: Largest autograded notebook read back for its metadata (the grader caps outputs at 16 MB).
MAX_AUTOGRADED_BYTES = 64 * 1024 * 1024
ITEM_CSV = "item_analysis.csv"
ITEM_FIGURE = "item_analysis.png"
CSV_COLUMNS = ("assignment", "part", "function", "behaviour", "submissions", "passed", "pass_rate", "discrimination",
               "discrimination_rest", "most_common_failure", "most_common_failure_count", "failed", "note")
EVERYONE_PASSES, EVERYONE_FAILS = "everyone passes", "everyone fails"

# ------------------------------------------------------------------ recorded while grading (trusted side)


@dataclass(frozen=True)
class PartResult:
    """What the checks of one graded part found on one submission, as recorded while grading."""

    failure: str  #: first line of the part's first failure (``""`` when it passed)
    behaviours: dict[tuple[str, str], str]  #: ``(function, behaviour)`` -> first line of its first failure, ``""`` passed


def part_record(problem: str, verdicts: Sequence[Verdict]) -> dict:
    """The plain-data record of one graded part: its first failure line and each behaviour's result.

    ``problem`` is why the part was not judged (its cell was not run, its hidden tests could not be
    read), ``""`` when it was; ``verdicts`` are its checks' verdicts.
    """
    failures = ([problem] if problem else []) + [verdict.message() for verdict in verdicts if not verdict.passed]
    return {"failure": _cut(first_line(failures[0])) if failures else "",
            "checks": {verdict.function: {_cut(behaviour, 500): _cut(line) for behaviour, line in verdict.behaviours.items()}
                       for verdict in verdicts}}


def _cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


_CAP_AND_EPOCHS = re.compile(r"max_epochs = (\d+); it converges in (\d+) epochs?")
_CAP = re.compile(r"max_epochs = \d+")


def _cap_relation(match: re.Match) -> str:
    cap, needed = int(match.group(1)), int(match.group(2))
    return ("max_epochs exactly the epochs it needs" if cap == needed else
            "max_epochs above the epochs it needs" if cap > needed else "max_epochs below the epochs it needs")


def behaviour_name(text: str) -> str:
    """A behaviour as the class shares it: a random case's own numbers (its epoch cap, the epochs it
    needs) left out, and only how its cap compares with what it needs kept.

    ``random separable data (max_epochs = 5; it converges in 5 epochs)`` becomes ``random separable
    data (max_epochs exactly the epochs it needs)``; another ``max_epochs = 7`` becomes ``max_epochs = N``.
    Failure lines quote their behaviour, and are grouped after the same rewriting.
    """
    return _CAP.sub("max_epochs = N", _CAP_AND_EPOCHS.sub(_cap_relation, text))


#: How ``checks.draws.lists_at_random`` (and the XOR check) mark a random case passed as Python lists.
_AS_LISTS = re.compile(r"^(?P<base>.*),(?: with (?P<names>.+?))? passed as Python lists \(array_like\)$")


def behaviour_names(text: str) -> list[str]:
    """The shared behaviours one case tests: its ``behaviour_name``, and for a case passed as Python
    lists, that behaviour without the lists and the lists on their own (``X, y passed as Python lists``),
    so that the few random cases drawn as lists are counted together."""
    name = behaviour_name(text)
    match = _AS_LISTS.match(name)
    if match is None:
        return [name]
    names = match.group("names")
    return [match.group("base"), f"{names or 'its arguments'} passed as Python lists (array_like)"]


def parse_parts(recorded: object) -> dict[str, PartResult]:
    """The records of ``part_record`` by grade id, from notebook metadata; anything else is left out.

    Behaviours are named by ``behaviour_names``: the random cases that share a name pass together
    (the first failure line stands for them).
    """
    parts = recorded.get(PARTS_RECORDED) if isinstance(recorded, dict) else None
    found = {}
    for grade_id, record in (parts.items() if isinstance(parts, dict) else ()):
        if not isinstance(grade_id, str) or not isinstance(record, dict):
            continue
        checks = record.get("checks")
        behaviours: dict[tuple[str, str], str] = {}
        for function, results in (checks.items() if isinstance(checks, dict) else ()):
            for behaviour, line in (results.items() if isinstance(results, dict) else ()):
                for name in behaviour_names(str(behaviour)):
                    if not behaviours.get((str(function), name)):
                        behaviours[(str(function), name)] = behaviour_name(str(line))
        found[grade_id] = PartResult(behaviour_name(str(record.get("failure", ""))), behaviours)
    return found


def read_parts(course: Course, student: str, assignment: str) -> dict[str, PartResult]:
    """What grading recorded for each part of a graded submission, from its autograded notebooks.

    Read as plain JSON (``O_NOFOLLOW``, size-capped); a notebook missing or unreadable gives nothing.
    """
    found: dict[str, PartResult] = {}
    for name in course.notebook_names(assignment):
        path = course.root / "autograded" / student / assignment / f"{name}.ipynb"
        try:
            metadata = json.loads(read_capped(path, MAX_AUTOGRADED_BYTES)).get("metadata", {})
        except (OSError, UnsafeFileError, ValueError, AttributeError):
            continue
        if isinstance(metadata, dict):
            found.update(parse_parts(metadata.get(GRADING_METADATA)))
    return found


# ------------------------------------------------------------------ the statistics


@dataclass(frozen=True)
class Submission:
    """One graded submission as the item analysis sees it."""

    student: str
    scores: dict[str, tuple[float, float]]  #: part -> ``(points, max points)``, for parts with a score (not awaiting a TA)
    parts: dict[str, PartResult] = field(default_factory=dict)  #: what grading recorded, by part


#: Scores (fractions of points) closer than this are the same: sums of fractions differ in their last bits.
SAME_SCORE = 1e-12


@dataclass(frozen=True)
class Correlation:
    """A correlation, or why it is undefined."""

    value: float | None
    undefined: str = ""  #: why ``value`` is ``None``

    def text(self) -> str:
        return "" if self.value is None else f"{self.value:.2f}"


def correlation(item: Sequence[float], total: Sequence[float]) -> Correlation:
    """Pearson's correlation of ``item`` and ``total`` (over the same students), or why it is undefined."""
    x, y = np.asarray(item, dtype=float), np.asarray(total, dtype=float)
    if len(x) < 2:
        return Correlation(None, "fewer than 2 submissions")
    if np.ptp(x) <= SAME_SCORE:
        return Correlation(None, "every submission has the same score on it")
    if np.ptp(y) <= SAME_SCORE:
        return Correlation(None, "every submission has the same total")
    dx, dy = x - x.mean(), y - y.mean()
    return Correlation(float(np.clip(dx @ dy / np.sqrt((dx @ dx) * (dy @ dy)), -1.0, 1.0)))


@dataclass(frozen=True)
class ItemRow:
    """The statistics of one part (``behaviour == ""``) or of one behaviour of a part."""

    assignment: str
    part: str
    function: str
    behaviour: str
    n: int  #: submissions counted
    n_passed: int
    discrimination: Correlation
    discrimination_rest: Correlation
    common_failure: str = ""  #: one plain line (``safe_text.plain_line``), ``""`` when none recorded
    common_failure_count: int = 0
    pending: int = 0  #: answers of the part awaiting a TA: when any, the part has no statistics (``n == 0``)

    @property
    def pass_rate(self) -> float | None:
        return self.n_passed / self.n if self.n else None

    @property
    def callout(self) -> str:
        """``EVERYONE_PASSES``, ``EVERYONE_FAILS``, or ``""``."""
        if not self.n:
            return ""
        return EVERYONE_PASSES if self.n_passed == self.n else EVERYONE_FAILS if self.n_passed == 0 else ""

    def note(self) -> str:
        """The callout and why a discrimination is undefined, in words."""
        if self.pending:
            return pending_note(self.pending)
        if not self.n:
            return "no graded submission has a result for it yet"
        notes = [self.callout] if self.callout else []
        if self.discrimination.value is None:
            notes.append(f"discrimination undefined: {self.discrimination.undefined}")
        elif self.discrimination_rest.value is None:
            notes.append(f"discrimination_rest undefined: {self.discrimination_rest.undefined}")
        return "; ".join(notes)


def pending_note(pending: int) -> str:
    """What a part with ``pending`` answers awaiting a TA shows instead of statistics."""
    return (f"pending: {pending} answer{'s' * (pending != 1)} await{'s' * (pending == 1)} a TA (grade them in the "
            f"formgrader, then {grader_command()} refresh)")


def _fraction(points: float, maximum: float) -> float:
    return points / maximum if maximum else 0.0


def _most_common(lines: Iterable[str]) -> tuple[str, int]:
    """The most common of the failure lines (as ``plain_line`` writes them) and how many times it came; first seen wins a tie."""
    counted = Counter(plain_line(line, MAX_MESSAGE_CHARS) for line in lines if line)
    return counted.most_common(1)[0] if counted else ("", 0)


def _totals(submission: Submission, part: str) -> tuple[float, float | None]:
    """A submission's total (fraction of the points of its scored parts), and the same without ``part``
    (``None`` when no other part is scored)."""
    points = sum(p for p, _ in submission.scores.values())
    maximum = sum(m for _, m in submission.scores.values())
    rest_points, rest_maximum = points - submission.scores[part][0], maximum - submission.scores[part][1]
    return _fraction(points, maximum), (_fraction(rest_points, rest_maximum) if rest_maximum > 0 else None)


def _item_row(assignment: str, part: str, function: str, behaviour: str,
              results: Sequence[tuple[float, bool, str, float, float | None]]) -> ItemRow:
    """The row of one item from each submission's ``(score, passed, failure line, total, total without the part)``."""
    with_rest = [(score, rest) for score, _, _, _, rest in results if rest is not None]
    rest = correlation(*zip(*with_rest)) if with_rest else Correlation(None, "no other part of the assignment is scored")
    failure, count = _most_common(line for _, passed, line, _, _ in results if not passed)
    return ItemRow(assignment, part, function, behaviour, len(results), sum(passed for _, passed, _, _, _ in results),
                   correlation([score for score, *_ in results], [total for *_, total, _ in results]), rest, failure, count)


def analyse_assignment(assignment: str, parts: Sequence[str], submissions: Sequence[Submission],
                       pending: dict[str, int] | None = None) -> list[ItemRow]:
    """One row per part of ``parts`` (in order), each followed by one row per behaviour its checks test.

    ``pending``: part -> answers awaiting a TA; such a part gets one row saying so, no statistics.

    A part's score is ``points / max points`` and a submission passes it with full points; a
    behaviour's score is 1 when every case of it passed, else 0. Either is correlated with the
    submission's total (its fraction of the points of its scored parts) and with that total
    without the part. A submission without a score for the part (awaiting a TA) is left out of
    the part; one without a record of a behaviour (not tested) is left out of that behaviour.
    """
    rows = []
    for part in parts:
        if (pending or {}).get(part):
            undefined = Correlation(None, "answers await a TA")
            rows.append(ItemRow(assignment, part, "", "", 0, 0, undefined, undefined, pending=pending[part]))
            continue
        scored = [s for s in submissions if part in s.scores]
        totals = {s.student: _totals(s, part) for s in scored}
        rows.append(_item_row(assignment, part, "", "", [
            (_fraction(*s.scores[part]), s.scores[part][0] >= s.scores[part][1],
             s.parts[part].failure if part in s.parts else "", *totals[s.student]) for s in scored]))
        recorded = [s for s in scored if part in s.parts]
        for function, behaviour in dict.fromkeys(key for s in recorded for key in s.parts[part].behaviours):
            lines = [(s, s.parts[part].behaviours[(function, behaviour)]) for s in recorded
                     if (function, behaviour) in s.parts[part].behaviours]
            rows.append(_item_row(assignment, part, function, behaviour,
                                  [(float(not line), not line, line, *totals[s.student]) for s, line in lines]))
    return rows


def pending_answers(record: ClassRecord, assignment: str) -> dict[str, int]:
    """Part -> how many answers of the graded submissions of ``assignment`` await a TA (parts with none left out)."""
    graded = {student for (student, name), outcome in record.submissions.items() if name == assignment and outcome.status == GRADED}
    return dict(Counter(part for student, name, part in record.awaiting_manual if name == assignment and student in graded))


def class_submissions(course: Course, record: ClassRecord, assignment: str) -> list[Submission]:
    """The graded submissions of ``assignment``: part scores from the gradebook (parts with an answer awaiting
    a TA left out of every submission), behaviours from what grading recorded in the autograded notebooks."""
    points = course.graded_cells(assignment)
    pending = pending_answers(record, assignment)
    found = []
    for (student, name), outcome in sorted(record.submissions.items()):
        if name != assignment or outcome.status != GRADED:
            continue
        scores = {part: (float(outcome.cell_scores.get(part, 0.0)), float(maximum)) for part, maximum in points.items()
                  if part not in pending}
        found.append(Submission(student, scores, read_parts(course, student, assignment)))
    return found


def analyse_class(course: Course, record: ClassRecord) -> list[ItemRow]:
    """Every part and behaviour of every assignment with a graded submission, in course order."""
    rows = []
    for assignment in record.assignments:
        submissions = class_submissions(course, record, assignment)
        if submissions:
            rows += analyse_assignment(assignment, list(course.graded_cells(assignment)), submissions,
                                       pending_answers(record, assignment))
    return rows


# ------------------------------------------------------------------ outputs


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def write_item_csv(path: Path, rows: Sequence[ItemRow]) -> None:
    """``reports/item_analysis.csv``: one row per part (``function`` and ``behaviour`` empty), then its behaviours."""
    write_csv(path, CSV_COLUMNS, ([row.assignment, row.part, row.function, row.behaviour, str(row.n),
                                   "" if row.pending else str(row.n_passed),
                                   _rate(row.pass_rate), row.discrimination.text(), row.discrimination_rest.text(),
                                   row.common_failure, str(row.common_failure_count) if row.common_failure else "",
                                   "" if row.pending else str(row.n - row.n_passed), row.note()] for row in rows))


def plot_item_analysis(rows: Sequence[ItemRow], ax=None):
    """Pass rate against discrimination, one point per part (with a defined discrimination), labelled by its
    number in the report's table (``part_table``); returns ``ax``."""
    import matplotlib.pyplot as plt

    from .palette import OKABE_ITO

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5), facecolor="white")
    parts = [row for row in rows if not row.behaviour and row.n]
    assignments = list(dict.fromkeys(row.assignment for row in parts))
    markers = "osD^vP*X"
    for k, assignment in enumerate(assignments):
        shown = [row for row in parts if row.assignment == assignment and row.discrimination.value is not None]
        ax.scatter([row.pass_rate for row in shown], [row.discrimination.value for row in shown], s=60,
                   color=OKABE_ITO[k % 8], marker=markers[k % len(markers)], edgecolors="black", label=assignment, zorder=3)
    every_part = (row for row in rows if not row.behaviour)
    numbers = {(row.assignment, row.part): k for k, row in enumerate(every_part, start=1)}  # part_table's "#"
    near: dict[tuple[int, int], list[ItemRow]] = {}  # parts that (nearly) share a spot share one label
    for row in parts:
        if row.discrimination.value is not None:
            near.setdefault((round(row.pass_rate / 0.05), round(row.discrimination.value / 0.1)), []).append(row)
    for rows_here in near.values():
        ax.annotate(", ".join(str(numbers[row.assignment, row.part]) for row in rows_here),
                    (rows_here[0].pass_rate, rows_here[0].discrimination.value), fontsize=7, xytext=(6, 4), textcoords="offset points")
    hidden = sum(row.discrimination.value is None for row in parts)
    ax.axhline(0.2, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("pass rate (fraction with full points)")
    ax.set_ylabel("discrimination (correlation with the assignment's total)")
    ax.set_title("Item analysis per graded part" + (f" ({hidden} with undefined discrimination not shown)" if hidden else ""),
                 fontsize=10)
    if assignments:
        ax.legend(fontsize=8, loc="lower left")
    ax.set_facecolor("white")
    return ax


def write_figure(path: Path, rows: Sequence[ItemRow]) -> Path:
    """``plot_item_analysis`` of ``rows`` in the PNG ``path`` (kept as it is when it already shows them)."""
    return save_figure(path, list(rows), _draw_item_analysis, (7, 5))


def _draw_item_analysis(fig, rows) -> None:
    plot_item_analysis(rows, ax=fig.subplots())
    fig.tight_layout()


#: Submissions a behaviour must be tested on to be called out (a random behaviour drawn for one student says little).
MIN_BEHAVIOUR_CALLOUT = 2


def callouts(rows: Sequence[ItemRow]) -> list[str]:
    """One line per part everyone passes or fails, and per part whose behaviours (tested on at least
    ``MIN_BEHAVIOUR_CALLOUT`` submissions) everyone passes or fails."""
    lines = []
    for row in rows:
        if not row.behaviour and row.callout:
            lines.append(f"{row.assignment}/{row.part}: {row.callout} ({row.n_passed}/{row.n})")
    for assignment, part in dict.fromkeys((row.assignment, row.part) for row in rows):
        for callout in (EVERYONE_FAILS, EVERYONE_PASSES):
            named = [row.behaviour for row in rows if (row.assignment, row.part) == (assignment, part) and row.behaviour
                     and row.callout == callout and row.n >= MIN_BEHAVIOUR_CALLOUT]
            if named:
                lines.append(f"{assignment}/{part}: {callout} on {len(named)} behaviour{'s' * (len(named) > 1)}: "
                             + "; ".join(named))
    return lines


def part_table(rows: Sequence[ItemRow]) -> list[list[str]]:
    """Header and one row per part: its number (the figure's label), pass rate, discrimination (both), the most common failure."""
    table = [["#", "part", "passed", "pass rate", "discrimination", "without the part", "most common failure", "note"]]
    for row in rows:
        if row.behaviour:
            continue
        failure = f"{row.common_failure} ({row.common_failure_count} of {row.n - row.n_passed})" if row.common_failure else ""
        table.append([str(len(table)), f"{row.assignment}/{row.part}", "pending" if row.pending else f"{row.n_passed}/{row.n}",
                      _rate(row.pass_rate),
                      row.discrimination.text(), row.discrimination_rest.text(), failure, row.note()])
    return table


def behaviour_table(rows: Sequence[ItemRow], assignment: str, part: str) -> list[list[str]]:
    """Header and one row per behaviour of one part."""
    table = [["behaviour", "passed", "pass rate", "discrimination", "most common failure"]]
    for row in rows:
        if row.behaviour and (row.assignment, row.part) == (assignment, part):
            failure = f"{row.common_failure} ({row.common_failure_count})" if row.common_failure else ""
            table.append([f"{row.function}: {row.behaviour}", f"{row.n_passed}/{row.n}", _rate(row.pass_rate),
                          row.discrimination.text() or "undefined", failure])
    return table


EXPLANATION = ("Pass rate: the fraction of graded submissions with full points. A written answer is pending until a TA "
               "grades it; a part with a pending answer shows no figures until every answer of it is graded. "
               "Discrimination (PrairieLearn's for a question): the correlation, over students, of the score on the part "
               "with the assignment's total; above 0.2 is usual for a part that is not very easy, near 0 or below deserves a "
               "look. \"Without the part\": the same with the part left out of the total (an assignment has few parts, which "
               "lifts the first figure). Failure messages are the first line of what the student's feedback says, "
               "identical lines grouped. Every behaviour of every part: ")

_SECTION = """<h2>Item analysis</h2>
<p>{{ explanation }}<code>reports/{{ csv_name }}</code>.</p>
{% if not parts %}<p>No graded submission yet.</p>{% else %}
{{ table(parts) }}
{% if callouts %}<h3>Everyone passes or everyone fails</h3>
<ul>{% for line in callouts %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{% for name, rows in behaviours %}{% if rows|length > 1 %}<details><summary>Behaviours of {{ name }}</summary>
{{ table(rows) }}</details>{% endif %}
{% endfor %}
{% if figure %}<img alt="Pass rate against discrimination for every graded part" src="data:image/png;base64,{{ figure }}">{% endif %}
{% endif %}
"""
_TABLE = """{% macro table(rows) %}<table><tr>{% for cell in rows[0] %}<th>{{ cell }}</th>{% endfor %}</tr>
{% for row in rows[1:] %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endmacro %}"""


def html_section(rows: Sequence[ItemRow], figure: Path | None) -> str:
    """The HTML section: escaped text, the figure embedded."""
    from jinja2 import Environment

    template = Environment(autoescape=True).from_string(_TABLE + _SECTION)
    parts = list(dict.fromkeys((row.assignment, row.part) for row in rows))
    return template.render(
        explanation=EXPLANATION, csv_name=ITEM_CSV, parts=part_table(rows) if rows else [], callouts=callouts(rows),
        behaviours=[(f"{a}/{p}", behaviour_table(rows, a, p)) for a, p in parts],
        figure=base64.b64encode(figure.read_bytes()).decode("ascii") if figure else None)


def markdown_section(rows: Sequence[ItemRow], figure: Path | None) -> str:
    """The Markdown section (the per-behaviour rows are in the CSV)."""
    text = ["## Item analysis", "", markdown_text(EXPLANATION + f"reports/{ITEM_CSV}."), ""]
    if not rows:
        return "\n".join(text + ["No graded submission yet.", ""])
    text += [markdown_table(part_table(rows)), ""]
    lines = callouts(rows)
    if lines:
        text += ["### Everyone passes or everyone fails", "", *(f"- {markdown_text(line)}" for line in lines), ""]
    if figure:
        text += [f"![item analysis]({figure.name})", ""]
    return "\n".join(text)


def add_to_reports(course: Course, record: ClassRecord, markdown: str, page: str) -> tuple[str, str]:
    """Write ``reports/item_analysis.csv`` and its figure; return the reports with the item analysis section added.

    Never raises for what grading recorded: a report without this section beats no report, and
    the section then says why it is missing.
    """
    try:
        rows = analyse_class(course, record)
        write_item_csv(course.reports / ITEM_CSV, rows)
        figure = write_figure(course.reports / ITEM_FIGURE, rows) if rows else None
        markdown_part, html_part = markdown_section(rows, figure), html_section(rows, figure)
    except Exception as error:  # noqa: BLE001 - the rest of the report stands
        why = quoted(f"{type(error).__name__}: {error}", 200)
        markdown_part = f"## Item analysis\n\nNot computed this time ({why}).\n"
        html_part = f"<h2>Item analysis</h2>\n<p>Not computed this time ({why}).</p>\n"
    head, body_end, tail = page.rpartition("</body>")
    html_page = head + html_part + body_end + tail if body_end else page + html_part
    return markdown.rstrip("\n") + "\n\n" + markdown_part, html_page
