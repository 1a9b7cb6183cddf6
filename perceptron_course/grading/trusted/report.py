"""The grading report and the exports of the whole class.

Whatever subset was graded last (``grade --student X``), the report covers every
submission in the gradebook (read through nbgrader's ``Gradebook`` API, so a TA's
manual grades count) and every failed submission in ``grades.csv``; totals run over
every assignment of the course, with the missing ones counted. It writes:

- ``reports/report.md`` and ``reports/report.html`` (plain HTML, no JavaScript, the
  figure embedded), with the score table, the submissions that failed or needed repair,
  the flags for review, and the parts awaiting manual grading;
- ``reports/scores.png``: the score distribution per assignment and the pass rate of
  every graded cell;
- ``grades_by_student.csv``: one row per student, one column per assignment, the total
  and the maximum (what an LMS imports);
- ``reports/flags.json``: the static flags of every submission, kept across gradings.

Every string a student chose (ids, reasons quoting their files, flagged cells) is
escaped for Markdown and for HTML.
"""

from __future__ import annotations

import base64
import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from . import similarity
from .course import Course, nbgrader_api
from .exports import CANVAS_GRADES, CANVAS_ROSTER, CSV_COLUMNS, read_csv_rows, write_canvas_gradebook, write_grades_by_student
from .flags import Flag
from .lateness import late_text
from .outcome import FAILED, GRADED, ClassRecord, Key, Outcome
from .safe_text import terminal_text
from .sandbox import Isolation

GRADES_BY_STUDENT = "grades_by_student.csv"
FLAGS_RECORD = "flags.json"
MISSING = "—"
#: What a flag is, said wherever flags are listed.
FLAGS_NOTE = ("A flag is a best-effort hint from reading the code before it ran, not a verdict: it never changes a "
              "score, and code that no flag names may still do what a flag is for. Read the code and decide.")

# ------------------------------------------------------------------ reading the class


def update_flags_record(path: Path, outcomes: list[Outcome]) -> None:
    """Merge this grading's flags into ``path``: each submission graded now replaces its entry."""
    record = {(entry["student"], entry["assignment"]): entry for entry in _read_json_list(path)}
    for outcome in outcomes:
        record[(outcome.student, outcome.assignment)] = {
            "student": outcome.student, "assignment": outcome.assignment,
            "flags": [[flag.cell, flag.line, flag.construct] for flag in outcome.flags],
            "unanalysed": list(outcome.unanalysed),
        }
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps([record[key] for key in sorted(record)], indent=1), encoding="utf-8")
    temporary.replace(path)


def _read_json_list(path: Path) -> list[dict]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def _read_grades_csv(path: Path) -> dict[Key, dict[str, str]]:
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {(row[0], row[1]): dict(zip(CSV_COLUMNS, row)) for row in read_csv_rows(handle)}  # formulas undone


def read_class(course: Course) -> ClassRecord:
    """Every submission of the class: scores from the gradebook, failures and reasons from
    ``grades.csv``, flags from ``reports/flags.json``."""
    assignments = course.assignments()
    max_scores = {a: sum(course.graded_cells(a).values()) for a in assignments}
    rows = _read_grades_csv(course.grades_csv)
    flags = {(e["student"], e["assignment"]): e for e in _read_json_list(course.reports / FLAGS_RECORD)}
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
                submissions[key] = Outcome(
                    *key, GRADED, float(submission.score), float(submission.max_score),
                    reason=rows.get(key, {}).get("reason", ""),
                    cell_scores={g.name: float(g.score) for nb in submission.notebooks for g in nb.grades},
                    seconds_late=float(submission.total_seconds_late or 0.0),
                    late_penalty=sum(float(nb.late_submission_penalty or 0.0) for nb in submission.notebooks))
                awaiting += [(*key, g.name) for nb in submission.notebooks for g in nb.grades if g.needs_manual_grade]
                if any(nb.flagged for nb in submission.notebooks):
                    flagged.add(key)
    for key, row in rows.items():
        if row.get("status") == FAILED and key not in submissions and key[1] in max_scores:
            submissions[key] = Outcome(*key, FAILED, 0.0, max_scores[key[1]], reason=row.get("reason", ""))
    for key, outcome in submissions.items():
        entry = flags.get(key, {})
        outcome.flags = [Flag(str(cell), int(line), str(construct)) for cell, line, construct in entry.get("flags", [])]
        outcome.unanalysed = [str(text) for text in entry.get("unanalysed", [])]
    students |= {student for student, _ in submissions}
    return ClassRecord(assignments, max_scores, sorted(students), submissions, frozenset(flagged), sorted(awaiting))


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


def markdown_text(text: str) -> str:
    """``text`` as one line of literal Markdown: no table cells, HTML, links, emphasis, code or terminal controls."""
    escaped = terminal_text(" ".join(str(text).split()))
    for character in "\\`*[]|":
        escaped = escaped.replace(character, "\\" + character)
    return escaped.replace("<", "&lt;").replace(">", "&gt;")


def markdown_table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])


def headline(record: ClassRecord) -> str:
    """The class in one sentence."""
    graded = sum(o.status == GRADED for o in record.submissions.values())
    failed = len(record.submissions) - graded
    flagged = sum(bool(o.flags) for o in record.submissions.values())
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
    text += [markdown_table(flags) if len(flags) > 1 else "Nothing was flagged.", ""]
    text += [f"- {markdown_text(note)}" for note in notes] + ([""] if notes else [])
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
{% if flags|length > 1 %}{{ table(flags) }}{% else %}<p>Nothing was flagged.</p>{% endif %}
{% if notes %}<ul>{% for note in notes %}<li>{{ note }}</li>{% endfor %}</ul>{% endif %}
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


def cell_pass_rates(outcomes: list[Outcome], course: Course) -> dict[str, float]:
    """Fraction of graded submissions that earned full points on each graded cell, keyed ``assignment/cell``."""
    earned: dict[str, list[float]] = defaultdict(list)  # in assignment order, then cell order
    for assignment in sorted({o.assignment for o in outcomes}):
        points = course.graded_cells(assignment)
        for outcome in (o for o in outcomes if o.assignment == assignment):
            for cell, max_points in points.items():
                earned[f"{assignment}/{cell}"].append(float(outcome.cell_scores.get(cell, 0.0) >= max_points))
    return {key: float(np.mean(values)) for key, values in earned.items()}


def plot_report(outcomes: list[Outcome], course: Course, path: Path) -> Path:
    """Two panels: the score distribution of each assignment, and the pass rate of every graded cell."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from ...plotting import OKABE_ITO

    assignments = sorted({o.assignment for o in outcomes})
    rates = cell_pass_rates(outcomes, course)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, max(4, 0.28 * len(rates))), facecolor="white",
                                      gridspec_kw={"width_ratios": [1, 1.3]})
    for k, assignment in enumerate(assignments):
        fractions = [o.score / o.max_score if o.max_score else 0.0 for o in outcomes if o.assignment == assignment]
        jitter = np.linspace(-0.15, 0.15, len(fractions)) if len(fractions) > 1 else [0.0]
        left.scatter(np.full(len(fractions), k) + jitter, fractions, color=OKABE_ITO[k % 8], edgecolors="black", zorder=3)
        left.boxplot([fractions], positions=[k], widths=0.5, showfliers=False)
    left.set_xticks(range(len(assignments)), assignments, rotation=30, ha="right")
    left.set_ylim(-0.05, 1.05)
    left.set_ylabel("score / max")
    left.set_title("Score distribution per assignment")
    names = list(rates)
    right.barh(range(len(names)), [rates[n] for n in names], color=OKABE_ITO[0])
    right.set_yticks(range(len(names)), names, fontsize=8)
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_xlabel("fraction of submissions with full points")
    right.set_title("Pass rate of every graded cell")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def isolation_line(isolation: Isolation) -> str:
    """How student code ran, in one line."""
    cap = f"memory capped at {isolation.memory_mb} MiB per kernel"
    if isolation.sandbox:
        return f"Student code ran in a bubblewrap sandbox (no network, course files hidden), {cap}."
    return f"**WARNING: student code ran without a sandbox** ({isolation.note}); {cap}."


# ------------------------------------------------------------------ writing


def write_report(course: Course, outcomes: list[Outcome], isolation: Isolation) -> Path:
    """Record this grading's flags, then write the reports and exports of the whole class (see the module).

    Returns the path of ``reports/report.md``.
    """
    course.reports.mkdir(exist_ok=True)
    update_flags_record(course.reports / FLAGS_RECORD, outcomes)
    record = read_class(course)
    write_grades_by_student(course.root / GRADES_BY_STUDENT, record)
    roster = course.root / CANVAS_ROSTER
    try:
        lms_notes = write_canvas_gradebook(course.root / CANVAS_GRADES, record, roster if roster.is_file() else None)
    except (OSError, ValueError, csv.Error) as error:  # the TA's roster file: say what is wrong, grade anyway
        lms_notes = [f"{CANVAS_GRADES} not written: {CANVAS_ROSTER}: {error}"]
    figure = plot_report(list(record.submissions.values()), course, course.reports / "scores.png") if record.submissions else None
    report = course.reports / "report.md"
    markdown, page = similarity.add_to_reports(  # copying detected: a section of its own, never a score
        course, markdown_report(record, isolation, figure.name if figure else None, lms_notes),
        html_report(record, isolation, figure, lms_notes), record.assignments)
    report.write_text(markdown, encoding="utf-8")
    (course.reports / "report.html").write_text(page, encoding="utf-8")
    return report


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
