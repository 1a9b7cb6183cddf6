"""Execution time of each lecture notebook (fresh kernel, top to bottom) and of all six.

Run:  .venv/bin/python benchmarks/bench_notebooks.py [--repeats 3]
Targets: each under 10 s, all six under 60 s, on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def run_once(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    total = 0.0
    for path in NOTEBOOKS:
        best = min(run_once(path) for _ in range(args.repeats))
        total += best
        print(f"  {path.stem:20s} {best:5.1f} s  ({best / 10:.0%} of the 10 s budget)")
    print(f"  {'all six':20s} {total:5.1f} s  ({total / 60:.0%} of the 60 s budget), best of {args.repeats} each")


if __name__ == "__main__":
    main()
