"""Execution time of each lecture notebook (fresh kernel, top to bottom) and of all six.

Run:  .venv/bin/python benchmarks/bench_notebooks.py [--repeats 3] [--against REV]
Targets: each under 10 s, all six under 60 s, on the project's 2-core machine.

Wall-clock time includes starting the kernel, and on a shared, loaded machine it is inflated by
everyone else's work; the kernel's own CPU time (user + system, read by a cell appended to a copy
of the notebook) is much less sensitive to load, so both are printed. ``--against REV`` also runs
the notebooks as they were at git revision ``REV``, interleaved with the current ones, and prints
the ratio current / REV measured in the same run.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPOSITORY = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPOSITORY / "notebooks").glob("*.ipynb"))
CPU_PROBE = "import resource as _r\n_u = _r.getrusage(_r.RUSAGE_SELF)\nprint(_u.ru_utime + _u.ru_stime)"


def run_once(notebook: nbformat.NotebookNode, folder: Path) -> tuple[float, float]:
    """Wall-clock seconds (kernel start included) and the kernel's CPU seconds for one run."""
    notebook = nbformat.from_dict(notebook)
    notebook.cells.append(nbformat.v4.new_code_cell(CPU_PROBE))
    start = time.perf_counter()
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    wall = time.perf_counter() - start
    return wall, float(notebook.cells[-1].outputs[0].text)


def notebook_at(revision: str, path: Path) -> nbformat.NotebookNode:
    text = subprocess.run(["git", "show", f"{revision}:{path.relative_to(REPOSITORY)}"], cwd=REPOSITORY,
                          capture_output=True, text=True, check=True).stdout
    return nbformat.reads(text, as_version=4)


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(wall for wall, _ in runs), min(cpu for _, cpu in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also time the notebooks of this git revision")
    args = parser.parse_args()
    total_wall = total_cpu = 0.0
    for path in NOTEBOOKS:
        current = nbformat.read(path, as_version=4)
        older = notebook_at(args.against, path) if args.against else None
        runs, older_runs = [], []
        for _ in range(args.repeats):  # interleaved, so that both see the same load
            runs.append(run_once(current, path.parent))
            if older is not None:
                older_runs.append(run_once(older, path.parent))
        wall, cpu = best(runs)
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        line = f"  {path.stem:20s} wall {wall:5.1f} s ({wall / 10:4.0%} of 10 s)  kernel CPU {cpu:5.1f} s"
        if older is not None:
            older_wall, older_cpu = best(older_runs)
            line += f"  | at {args.against}: wall {older_wall:5.1f} s, CPU {older_cpu:5.1f} s; CPU ratio {cpu / older_cpu:.2f}"
        print(line, flush=True)
    print(f"  {'all six':20s} wall {total_wall:5.1f} s ({total_wall / 60:4.0%} of 60 s)  kernel CPU {total_cpu:5.1f} s, "
          f"best of {args.repeats} each")


if __name__ == "__main__":
    main()
