"""The grading report and the exports of the whole class, regenerated from the gradebook.

Whatever subset was graded last (``grade --student X``), the report covers every
submission in the gradebook (read through nbgrader's ``Gradebook`` API, so a TA's
manual grades count) and every failed submission of the ledger (``ledger.py``); totals
run over every assignment of the course, with the missing ones counted. It writes:

- ``grades.csv``: one row per submission;
- ``grades_by_student.csv``: one row per student, one column per assignment, the total
  and the maximum (what an LMS imports);
- ``reports/report.md`` and ``reports/report.html`` (plain HTML, no JavaScript, the
  figure embedded), with the score table, the submissions that failed or needed repair,
  the flags for review, and the parts awaiting manual grading;
- ``reports/scores.png``: the score distribution per assignment and the pass rate of
  every graded cell (answers awaiting a TA left out);
- ``reports/item_analysis.csv`` and ``reports/item_analysis.png``, and a section of both
  reports: pass rate, discrimination and most common failure of every part and behaviour
  (``item_analysis.py``).

Nothing here is edited apart from the gradebook and the ledger: each file is rewritten
whole from them (``write_exports``). Every string a student chose (ids, reasons quoting
their files, flagged cells) is escaped for Markdown and for HTML.
"""

from __future__ import annotations

import base64
import csv
from collections import defaultdict
from concurrent.futures import Future
from pathlib import Path

import numpy as np

from . import item_analysis, similarity
from ..course.course import Course, nbgrader_api
from .figures import save_figure
from .exports import (CANVAS_GRADES, CANVAS_ROSTER, name_students, roster_names, write_canvas_gradebook, write_grades_by_student,
                      write_grades_csv)
from ..course.lateness import late_text, submission_lateness
from ..gradebook.ledger import Entry, read_ledger
from ..gradebook.outcome import FAILED, GRADED, ClassRecord, Isolation, Key, Outcome
from ..course.safe_text import markdown_table, markdown_text

GRADES_BY_STUDENT = "grades_by_student.csv"
#: Why a report written after Ctrl+C has no comparison of code (it can take a minute for a large class).
INTERRUPTED_NOTE = "not compared this time: the grading was interrupted (Ctrl+C); the next grade or refresh compares"
MISSING = "—"
#: What a flag is, said wherever flags are listed.
FLAGS_NOTE = ("A flag is a best-effort hint from reading the code before it ran, not a verdict: it never changes a "
              "score, and code that no flag names may still do what a flag is for. Read the code and decide.")

# ------------------------------------------------------------------ reading the class


def read_class(course: Course, ledger: dict[Key, Entry] | None = None) -> ClassRecord:
    """Every submission of the class: scores from the gradebook (manual grades included), failures,
    reasons and flags from the ledger."""
    assignments = course.assignments()
    max_scores = {a: sum(course.graded_cells(a).values()) for a in assignments}
    ledger = read_ledger(course) if ledger is None else ledger
    submissions: dict[Key, Outcome] = {}
    flagged, awaiting = set(), []
    with nbgrader_api(course).gradebook as gradebook:
        students = {student.id for student in gradebook.students}
        for assignment in assignments:
            try:
                graded = gradebook.assignment_submissions(assignment)
            except Exception:  # noqa: BLE001 - nbgrader's MissingEntry: never graded
                continue
            for submission in graded:
                key = (submission.student.id, assignment)
                entry = ledger.get(key)
                seconds_late, late_penalty = submission_lateness(submission)
                submissions[key] = Outcome(
                    *key, GRADED, float(submission.score), float(submission.max_score),
                    reason=entry.reason if entry is not None and entry.status == GRADED else "",
                    cell_scores={g.name: float(g.score) for nb in submission.notebooks for g in nb.grades},
                    seconds_late=seconds_late, late_penalty=late_penalty)
                awaiting += [(*key, g.name) for nb in submission.notebooks for g in nb.grades if g.needs_manual_grade]
                if any(nb.flagged for nb in submission.notebooks):
                    flagged.add(key)
    for key, entry in ledger.items():
        if entry.status == FAILED and key not in submissions and key[1] in max_scores:
            submissions[key] = Outcome(*key, FAILED, 0.0, max_scores[key[1]], reason=entry.reason)
    for key, outcome in submissions.items():
        if key in ledger:
            outcome.flags = ledger[key].flag_list()
            outcome.unanalysed = list(ledger[key].unanalysed)
    students |= {student for student, _ in submissions}
    return ClassRecord(assignments, max_scores, sorted(students), submissions, frozenset(flagged), sorted(awaiting))


def ledger_isolation(ledger: dict[Key, Entry], default: Isolation) -> Isolation:
    """How the student code of the graded submissions ran: sandboxed only if every one was.

    ``default`` (this run's) when no graded submission says.
    """
    runs = []
    for entry in ledger.values():
        if entry.status != GRADED:
            continue
        try:
            runs.append(Isolation(**entry.isolation))
        except TypeError:  # an entry without a recorded isolation
            continue
    if not runs:
        return default
    unsandboxed = [run for run in runs if not run.sandbox]
    if unsandboxed:
        return Isolation(sandbox=False, memory_mb=max(run.memory_mb for run in runs),
                         note=f"{_count(len(unsandboxed), 'submission')} graded without one: {unsandboxed[0].note}")
    return Isolation(sandbox=True, memory_mb=max(run.memory_mb for run in runs), note="")


# ------------------------------------------------------------------ tables (shared by Markdown and HTML)


def score_cell(outcome: Outcome | None) -> str:
    """``score/max``, with ``(failed)`` for a failed submission, or a dash when there is none."""
    if outcome is None:
        return MISSING
    mark = f"{outcome.final_score:g}/{outcome.max_score:g}"
    if outcome.seconds_late > 0:
        mark += f" (late {late_text(outcome.seconds_late)}" + (f", -{outcome.late_penalty:g})" if outcome.late_penalty else ")")
    return f"{mark} (failed)" if outcome.status == FAILED else mark



def class_table(record: ClassRecord, students: set[str] | None = None) -> list[list[str]]:
    """Header and one row per student (all, or those in ``students``): a mark per assignment and the
    total over all of them."""
    rows = [["student", *record.assignments, "total"]]
    for student in (s for s in record.students if students is None or s in students):
        total, missing = record.total(student)
        marks = [score_cell(record.submissions.get((student, a))) for a in record.assignments]
        rows.append([student, *marks, f"{total:g}/{record.max_total:g}" + (f", {missing} missing" if missing else "")])
    return rows


def flag_rows(record: ClassRecord) -> list[list[str]]:
    """Header and one row per flag: student, assignment, part, line, construct."""
    rows = [["student", "assignment", "part", "line", "construct"]]
    for (student, assignment), outcome in sorted(record.submissions.items()):
        rows += [[student, assignment, flag.cell, str(flag.line), flag.construct] for flag in outcome.flags]
    return rows


def review_notes(record: ClassRecord) -> list[str]:
    """Cells the static review could not read, and submissions flagged in the gradebook without a static flag."""
    notes = []
    for (student, assignment), outcome in sorted(record.submissions.items()):
        notes += [f"{student}/{assignment}: not analysed: {text}" for text in outcome.unanalysed]
        if (student, assignment) in record.flagged_in_gradebook and not outcome.flags:
            notes.append(f"{student}/{assignment}: flagged in the gradebook (by a TA, or by an earlier grading)")
    return notes


def manual_summary(record: ClassRecord, names_shown: int = 10) -> list[str]:
    """One line per part awaiting manual grading: how many submissions, and whose."""
    waiting: dict[tuple[str, str], list[str]] = defaultdict(list)
    for student, assignment, part in record.awaiting_manual:
        waiting[(assignment, part)].append(student)
    lines = []
    for (assignment, part), students in sorted(waiting.items()):
        names = ", ".join(students[:names_shown]) + (f", and {len(students) - names_shown} more" if len(students) > names_shown else "")
        lines.append(f"{assignment}/{part}: {_count(len(students), 'submission')} ({names})")
    return lines


def problems(outcomes: list[Outcome]) -> list[str]:
    """One line per submission that failed or needed repair, with the reason."""
    return [f"- {o.student}/{o.assignment}: {o.reason}" for o in sorted(outcomes, key=lambda o: (o.student, o.assignment)) if o.reason]


# ------------------------------------------------------------------ Markdown


def headline(record: ClassRecord) -> str:
    """The class in one sentence."""
    graded = sum(o.status == GRADED for o in record.submissions.values())
    failed = len(record.submissions) - graded
    # every submission the "Flagged for review" section names: a static flag, a cell not analysed, nbgrader's flag
    flagged = sum(bool(o.flags or o.unanalysed) or key in record.flagged_in_gradebook
                  for key, o in record.submissions.items())
    return (f"{len(record.students)} students; {graded} graded and {failed} failed submissions of "
            f"{len(record.assignments)} assignments; {_count(len(record.awaiting_manual), 'part')} awaiting manual grading; "
            f"{_count(flagged, 'submission')} flagged for review.")


def markdown_report(record: ClassRecord, isolation: Isolation, figure: str | None, lms_notes: list[str] = ()) -> str:
    issues = problems(list(record.submissions.values()))
    text = ["# Grading report", "", isolation_line(isolation), "", headline(record), "",
            markdown_table(class_table(record)), "",
            f"Totals are over all {len(record.assignments)} assignments; {MISSING} marks one not submitted.", ""]
    if issues:
        text += ["## Submissions that failed or needed repair", "", *(markdown_text(line) for line in issues), ""]
    text += ["## Flagged for review", "", FLAGS_NOTE, ""]
    flags, notes = flag_rows(record), review_notes(record)
    if len(flags) > 1:
        text += [markdown_table(flags), ""]
    text += [f"- {markdown_text(note)}" for note in notes] + ([""] if notes else [])
    if len(flags) <= 1 and not notes:
        text += ["Nothing was flagged.", ""]
    text += ["## Awaiting manual grading", "", f"{_count(len(record.awaiting_manual), 'part')} (grade them in the formgrader)."]
    text += [f"- {markdown_text(line)}" for line in manual_summary(record)] + [""]
    if lms_notes:
        text += [f"## LMS export ({CANVAS_GRADES})", "", *(f"- {markdown_text(note)}" for note in lms_notes), ""]
    if figure:
        text += [f"![scores]({figure})", ""]
    return "\n".join(text)


# ------------------------------------------------------------------ HTML

_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>Grading report</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #111; background: #fff; }
table { border-collapse: collapse; margin: 1em 0; } th, td { border: 1px solid #999; padding: 0.2em 0.6em; }
th { background: #eee; } .warning { font-weight: bold; color: #a00; } img { max-width: 100%; }
</style></head><body>
<h1>Grading report</h1>
<p{% if not sandbox %} class="warning"{% endif %}>{{ isolation }}</p>
<p>{{ headline }}</p>
{% macro table(rows) %}<table><tr>{% for cell in rows[0] %}<th>{{ cell }}</th>{% endfor %}</tr>
{% for row in rows[1:] %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endmacro %}
{{ table(scores) }}
<p>Totals are over all {{ n_assignments }} assignments; {{ missing }} marks one not submitted.</p>
{% if issues %}<h2>Submissions that failed or needed repair</h2>
<ul>{% for line in issues %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
<h2>Flagged for review</h2>
<p>{{ flags_note }}</p>
{% if flags|length > 1 %}{{ table(flags) }}{% endif %}
{% if notes %}<ul>{% for note in notes %}<li>{{ note }}</li>{% endfor %}</ul>{% endif %}
{% if flags|length <= 1 and not notes %}<p>Nothing was flagged.</p>{% endif %}
<h2>Awaiting manual grading</h2>
<p>{{ n_manual }} (grade them in the formgrader).</p>
{% if manual %}<ul>{% for line in manual %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{% if lms_notes %}<h2>LMS export ({{ canvas_grades }})</h2>
<ul>{% for note in lms_notes %}<li>{{ note }}</li>{% endfor %}</ul>{% endif %}
{% if figure %}<img alt="Score distribution per assignment and pass rate of every graded cell" src="data:image/png;base64,{{ figure }}">{% endif %}
</body></html>
"""


def html_report(record: ClassRecord, isolation: Isolation, figure: Path | None, lms_notes: list[str] = ()) -> str:
    """The report as one self-contained HTML page: escaped text, the figure embedded, no scripts."""
    from jinja2 import Environment

    template = Environment(autoescape=True).from_string(_HTML)
    return template.render(
        isolation=isolation_line(isolation).replace("**", ""), sandbox=isolation.sandbox, headline=headline(record),
        scores=class_table(record), n_assignments=len(record.assignments), missing=MISSING,
        issues=[line[2:] for line in problems(list(record.submissions.values()))],
        flags=flag_rows(record), flags_note=FLAGS_NOTE, notes=review_notes(record), manual=manual_summary(record),
        n_manual=_count(len(record.awaiting_manual), "part"), lms_notes=list(lms_notes), canvas_grades=CANVAS_GRADES,
        figure=base64.b64encode(figure.read_bytes()).decode("ascii") if figure else None,
    )


# ------------------------------------------------------------------ figure


def cell_pass_rates(record: ClassRecord, course: Course) -> dict[str, float | None]:
    """Fraction of graded submissions that earned full points on each graded cell, keyed ``assignment/cell``.

    ``None`` for a cell with an answer awaiting a TA (pending: its other answers, such as a blank one
    nbgrader scored 0 by itself, would be a biased few); a cell no graded submission has a score for
    yet is left out.
    """
    earned: dict[str, list[float]] = defaultdict(list)  # in assignment order, then cell order
    graded = [o for o in record.submissions.values() if o.status == GRADED]
    rates: dict[str, float | None] = {}
    for assignment in sorted({o.assignment for o in graded}):
        points = course.graded_cells(assignment)
        pending = item_analysis.pending_answers(record, assignment)
        for cell in points:
            if cell in pending:
                rates[f"{assignment}/{cell}"] = None
        for outcome in (o for o in graded if o.assignment == assignment):
            for cell, max_points in points.items():
                if cell not in pending:
                    earned[f"{assignment}/{cell}"].append(float(outcome.cell_scores.get(cell, 0.0) >= max_points))
    rates.update({key: float(np.mean(values)) for key, values in earned.items()})
    order = [f"{a}/{cell}" for a in sorted({o.assignment for o in graded}) for cell in course.graded_cells(a)]
    return {key: rates[key] for key in order if key in rates}


def pending_submissions(record: ClassRecord) -> set[Key]:
    """The graded submissions with an answer awaiting a TA: their score is not final."""
    return {(student, assignment) for student, assignment, _ in record.awaiting_manual}


def prepare_plotting() -> None:
    """Import what the report's figures are drawn with now (a second or more), so that writing the report later is
    quick: after Ctrl+C too. Safe beside another thread importing ``matplotlib.pyplot`` (the comparison of code does,
    through copydetect): the figures never use pyplot, so no backend is chosen here."""
    import matplotlib.backends.backend_agg  # noqa: F401 - what Figure.savefig writes a PNG with
    import matplotlib.figure  # noqa: F401


def plot_report(record: ClassRecord, course: Course, path: Path) -> Path:
    """Two panels: the score distribution of each assignment, and the pass rate of every graded cell."""
    outcomes = list(record.submissions.values())
    pending = pending_submissions(record)
    scores = []  # per assignment: its name and, per submission, (score / max, final)
    for assignment in sorted({o.assignment for o in outcomes}):
        shown = [o for o in outcomes if o.assignment == assignment]
        scores.append((assignment, [(o.score / o.max_score if o.max_score else 0.0, (o.student, o.assignment) not in pending)
                                    for o in shown]))
    rates = list(cell_pass_rates(record, course).items())
    return save_figure(path, (scores, rates, len(pending)), _draw_report, (12, max(4, 0.28 * len(rates))))


def _draw_report(fig, shows) -> None:
    """``plot_report``'s panels from ``(scores, rates, pending)`` (see there)."""
    from .palette import OKABE_ITO

    scores, rates, pending = shows
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    for k, (assignment, shown) in enumerate(scores):
        fractions = [fraction for fraction, _ in shown]
        final = [final for _, final in shown]
        jitter = np.linspace(-0.15, 0.15, len(fractions)) if len(fractions) > 1 else [0.0]
        colour = OKABE_ITO[k % 8]
        left.scatter(np.full(len(fractions), k) + jitter, fractions, color=[colour if f else "white" for f in final],
                     edgecolors=[("black" if f else colour) for f in final], zorder=3)
        left.boxplot([[x for x, f in zip(fractions, final) if f]], positions=[k], widths=0.5, showfliers=False)
    left.set_xticks(range(len(scores)), [assignment for assignment, _ in scores], rotation=30, ha="right")
    left.set_ylim(-0.05, 1.05)
    left.set_ylabel("score / max")
    left.set_title("Score distribution per assignment" + (f"\n(hollow: {pending} not final, written answers await a TA;"
                                                        " left out of the boxes)" if pending else ""), fontsize=10)
    right.barh(range(len(rates)), [rate or 0.0 for _, rate in rates], color=OKABE_ITO[0])
    for row, (_, rate) in enumerate(rates):
        if rate is None:
            right.text(0.01, row, "pending: answers await a TA", va="center", fontsize=8, style="italic")
    right.set_yticks(range(len(rates)), [name for name, _ in rates], fontsize=8)
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_xlabel("fraction with full points (a cell with answers awaiting a TA: pending)")
    right.set_title("Pass rate of every graded cell")
    fig.tight_layout()


def isolation_line(isolation: Isolation) -> str:
    """How student code ran, in one line."""
    cap = f"memory capped at {isolation.memory_mb} MiB per kernel"
    if isolation.sandbox:
        return f"Student code ran in a bubblewrap sandbox (no network, course files hidden), {cap}."
    return (f"**WARNING: student code ran without a sandbox** ({isolation.note}; graded with --unsafe-no-sandbox: "
            f"it could read and change whatever the grader's user can); {cap}.")


# ------------------------------------------------------------------ writing


def write_exports(course: Course, isolation: Isolation, *, interrupted: bool = False,
                  compared: Future | None = None) -> Path:
    """Rewrite ``grades.csv``, ``grades_by_student.csv`` and the reports of the whole class from the
    gradebook and the ledger (see the module); nothing else is read.

    ``isolation`` is this run's, used when no graded submission records its own. ``interrupted``
    (after Ctrl+C) leaves out the class-wide comparison of code, so that stopping stays quick;
    ``compared`` is that comparison already under way (``similarity.compare_in_background`` of
    every assignment of the course).
    Returns the path of ``reports/report.md``.
    """
    course.reports.mkdir(exist_ok=True)
    ledger = read_ledger(course)
    record = read_class(course, ledger)
    write_grades_csv(course.grades_csv, [record.submissions[key] for key in sorted(record.submissions)])
    write_grades_by_student(course.root / GRADES_BY_STUDENT, record)
    roster = course.root / CANVAS_ROSTER
    try:
        lms_notes = write_canvas_gradebook(course.root / CANVAS_GRADES, record, roster if roster.is_file() else None)
        if roster.is_file():  # Canvas's user ids are the students' ids: the formgrader shows the roster's names
            with nbgrader_api(course).gradebook as gradebook:
                name_students(gradebook, roster_names(record.students, roster))
    except (OSError, ValueError, csv.Error) as error:  # the TA's roster file: say what is wrong, grade anyway
        lms_notes = [f"{CANVAS_GRADES} not written: {CANVAS_ROSTER}: {error}"]
    isolation = ledger_isolation(ledger, isolation)
    figure = plot_report(record, course, course.reports / "scores.png") if record.submissions else None
    report = course.reports / "report.md"
    markdown, page = item_analysis.add_to_reports(  # also writes reports/item_analysis.csv and its figure
        course, record, markdown_report(record, isolation, figure.name if figure else None, lms_notes),
        html_report(record, isolation, figure, lms_notes))
    markdown, page = similarity.add_to_reports(  # copying detected: a section of its own, never a score
        course, markdown, page, record.assignments, skipped=INTERRUPTED_NOTE if interrupted else "", started=compared)
    report.write_text(markdown, encoding="utf-8")
    (course.reports / "report.html").write_text(page, encoding="utf-8")
    return report


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
