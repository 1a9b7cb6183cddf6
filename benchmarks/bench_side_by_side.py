"""Grading cost of this checkout against another one (an earlier commit), measured side by side.

Both checkouts grade the same synthetic class (their own ``bench_grading.synthetic_class``:
copies of the example class's correct, alternative, buggy and untouched students), each in
its own virtual environment, in alternating order over several rounds, so that the drift
of a shared machine falls on both alike. Printed: the median seconds per notebook of each,
serially and with ``--jobs 2``, and their ratio; and the CPU seconds per notebook of the
whole process tree (grader, workers, zygotes, kernels: every process is reaped by the end),
which another load on the machine changes far less than the wall time.

Run (the baseline in a worktree with its own environment):

    git worktree add ../baseline 54e86d3 && bash ../baseline/scripts/setup.sh
    .venv/bin/python benchmarks/bench_side_by_side.py ../baseline [--rounds 3] [--students 4]

The baseline must provide ``benchmarks/bench_grading.py`` with ``synthetic_class`` and
``grade``, as every version of this course since parallel grading does.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

#: Grades a fresh synthetic class once in the checkout given as argv[1]; prints seconds per notebook.
ONE_RUN = """
import resource, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[1]) / "benchmarks"))
import bench_grading
def cpu():
    return sum(usage.ru_utime + usage.ru_stime for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
with tempfile.TemporaryDirectory() as scratch:
    course = bench_grading.synthetic_class(Path(scratch) / "course", int(sys.argv[2]))
    start, used = time.perf_counter(), cpu()
    outcomes = bench_grading.grade(course, jobs=int(sys.argv[3]), progress=False)
    print((time.perf_counter() - start) / len(outcomes), (cpu() - used) / len(outcomes))
"""


def seconds_per_notebook(checkout: Path, students: int, jobs: int) -> tuple[float, float]:
    """One grading of a fresh class by ``checkout``, in its own environment, from a neutral folder:
    wall seconds and CPU seconds (all its processes) per notebook."""
    done = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-c", ONE_RUN, str(checkout), str(students), str(jobs)],
                          capture_output=True, text=True, cwd="/", check=False)
    if done.returncode != 0:
        raise SystemExit(f"grading in {checkout} failed:\n{done.stderr[-3000:]}")
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", type=Path, help="the other checkout (with its own .venv)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--students", type=int, default=4)
    args = parser.parse_args()
    checkouts = {"baseline": args.baseline.resolve(), "this": HERE}
    times: dict[tuple[str, int], list[float]] = {}
    for round_number in range(args.rounds):
        order = list(checkouts) if round_number % 2 == 0 else list(reversed(checkouts))
        for jobs in (1, 2):
            for name in order:
                seconds, cpu = seconds_per_notebook(checkouts[name], args.students, jobs)
                times.setdefault((name, jobs), []).append(seconds)
                times.setdefault((name, f"cpu {jobs}"), []).append(cpu)
                print(f"round {round_number + 1}, --jobs {jobs}, {name}: {seconds:.2f} s per notebook, "
                      f"{cpu:.2f} CPU s per notebook", flush=True)
    print(f"\n{args.students} students x 6 assignments, {args.rounds} rounds, median per notebook:")
    for jobs in (1, 2):
        for what, unit in ((jobs, "s"), (f"cpu {jobs}", "CPU s")):
            before, now = (statistics.median(times[(name, what)]) for name in checkouts)
            print(f"  --jobs {jobs}, {unit:5}: baseline {before:.2f}, this checkout {now:.2f}, ratio {now / before:.2f}x")


if __name__ == "__main__":
    main()
