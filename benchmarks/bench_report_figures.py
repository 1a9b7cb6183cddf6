"""CPU time of writing the report's score figure in a new program: drawn, against kept (what it shows unchanged).

``course_grader/trusted/outputs/figures.py`` keeps a figure whose PNG already holds the digest of what it shows, so a
``refresh``, or an export of ``serve`` that changed no grade, imports no matplotlib and draws nothing. The figure is
``report._draw_report``'s, for a class of 40 students, 6 assignments and 30 graded cells (numbers drawn with a fixed
seed).

Run: ``.venv/bin/python benchmarks/bench_report_figures.py [repeats]``. Prints the median user+system seconds of
each and of the program's imports alone, measured alternately in one run, and the ratio of the figure's own
cost (each less the imports).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WRITE = """
import random, sys
from pathlib import Path
from course_grader.trusted.outputs.figures import save_figure
from course_grader.trusted.outputs.report import _draw_report
rng = random.Random(0)
scores = [(f"0{k}_part", [(rng.random(), rng.random() > 0.1) for _ in range(40)]) for k in range(1, 7)]
rates = [(f"0{k // 5 + 1}_part/test_{k}", rng.random()) for k in range(30)]
if sys.argv[1] != "-":
    save_figure(Path(sys.argv[1]), (scores, rates, 4), _draw_report, (12, max(4, 0.28 * len(rates))))
"""


def cpu_seconds(path: Path | str) -> float:
    """User and system CPU seconds of one program writing the figure to ``path`` (``"-"``: only its imports)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", WRITE, str(path)], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(repeats: int) -> None:
    drawn, kept, imports = [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        for k in range(repeats):  # alternately: a change of the machine's load falls on both
            path = Path(scratch) / f"scores-{k}.png"
            drawn.append(cpu_seconds(path))  # a new file: drawn
            kept.append(cpu_seconds(path))  # the same figure asked for again: kept
            imports.append(cpu_seconds("-"))  # the program without the figure: its start and imports
            assert path.stat().st_size > 10_000
    medians = statistics.median(drawn), statistics.median(kept), statistics.median(imports)
    for name, median in zip(("drawn (no such figure yet)", "kept (the same figure asked for again)",
                             "neither (the program's imports alone)"), medians):
        print(f"{name:40s} {median:6.2f} s CPU (median of {repeats})")
    drawing, keeping = medians[0] - medians[2], medians[1] - medians[2]
    print(f"the figure's own cost: drawn {drawing:.2f} s, kept {keeping:.2f} s; ratio (kept / drawn): "
          f"{keeping / drawing:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
