"""The grading report: a score table and a figure, under ``reports/``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from .course import Course
from .pipeline import FAILED, Outcome
from .sandbox import Isolation


def score_table(outcomes: list[Outcome]) -> str:
    """A Markdown table: one row per student, one column per assignment, ``score/max`` or ``failed``."""
    students = sorted({o.student for o in outcomes})
    assignments = sorted({o.assignment for o in outcomes})
    by_key = {(o.student, o.assignment): o for o in outcomes}
    header = "| student | " + " | ".join(assignments) + " | total |"
    lines = [header, "|" + "---|" * (len(assignments) + 2)]
    for student in students:
        cells, total, total_max = [], 0.0, 0.0
        for assignment in assignments:
            outcome = by_key.get((student, assignment))
            if outcome is None:
                cells.append("—")
                continue
            total, total_max = total + outcome.score, total_max + outcome.max_score
            mark = f"{outcome.score:g}/{outcome.max_score:g}"
            cells.append(f"{mark} (failed)" if outcome.status == FAILED else mark)
        lines.append(f"| {student} | " + " | ".join(cells) + f" | {total:g}/{total_max:g} |")
    return "\n".join(lines)


def problems(outcomes: list[Outcome]) -> list[str]:
    """One line per submission that failed or needed repair, with the reason."""
    return [f"- {o.student}/{o.assignment}: {o.reason}" for o in sorted(outcomes, key=lambda o: (o.student, o.assignment)) if o.reason]


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


def write_report(course: Course, outcomes: list[Outcome], isolation: Isolation) -> Path:
    """Write ``reports/report.md`` (table, problems) and ``reports/scores.png``; return the Markdown path."""
    course.reports.mkdir(exist_ok=True)
    figure = plot_report(outcomes, course, course.reports / "scores.png")
    issues = problems(outcomes)
    text = ["# Grading report", "", isolation_line(isolation), "", score_table(outcomes), ""]
    if issues:
        text += ["## Submissions that failed or needed repair", "", *issues, ""]
    text += [f"![scores]({figure.name})", ""]
    report = course.reports / "report.md"
    report.write_text("\n".join(text), encoding="utf-8")
    return report
