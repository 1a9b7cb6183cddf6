"""What the lone calls cost: the failed first calls made again alone, after a notebook's last cell, in a restarted kernel.

Reads the timelines the grader records in each graded notebook (``course_grader_grading.time_budget.timeline``) of a
graded course: for each notebook whose grading made lone calls, the seconds from the start of that stage to the
notebook's end, and their ratio to the seconds the notebook took before it. Notebooks without a failed first call
make none and pay nothing.

Run:  bash scripts/demo.sh && .venv/bin/python benchmarks/lone_calls_cost.py [--root work/demo]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

STAGE = "failed first calls made again alone"
ENDED = "the notebook ended"


def stage_costs(root: Path) -> list[tuple[str, float, float]]:
    """``(notebook, seconds before the stage, seconds of the stage)`` for each graded notebook that made lone calls."""
    found = []
    for notebook in sorted((root / "autograded").glob("*/*/*.ipynb")):
        metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
        for record in metadata.values():
            timeline = record.get("time_budget", {}).get("timeline", []) if isinstance(record, dict) else []
            starts = [seconds for seconds, event in timeline if event == STAGE]
            ends = [seconds for seconds, event in timeline if event == ENDED]
            if starts and ends:
                found.append((str(notebook.relative_to(root)), starts[0], ends[-1] - starts[0]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("work/demo"), help="a graded course (default: the demo's)")
    root = parser.parse_args().root
    costs = stage_costs(root)
    graded = len(list(root.glob("autograded/*/*/*.ipynb")))
    print(f"{len(costs)} of {graded} graded notebooks made lone calls")
    for name, before, stage in costs:
        print(f"  {name}: {stage:.3f} s after {before:.3f} s of grading ({stage / before:.2f}x)")
    if costs:
        print(f"median: {statistics.median(stage for _, _, stage in costs):.3f} s, "
              f"{statistics.median(stage / before for _, before, stage in costs):.2f}x the notebook's time before it")


if __name__ == "__main__":
    main()
