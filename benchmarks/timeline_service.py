"""Where the service spends an idle hand-in's time around the worker's job: wall and CPU seconds per phase.

``timeline_handin.py`` clocks a grading job (what a worker does); this clocks the service's own process around it, as
``serve_latency.py``'s idle run meets it: hand-ins made with nbgrader's own submit code, one at a time, each once the
previous one's feedback is fetchable, on a warm ``perceptron-course serve --jobs 2`` (its process started by this
script with the service's phases wrapped in a clock, no profiler). For each phase: wall seconds per hand-in, the
service thread's CPU seconds in it, and how many times it ran. "the worker's job" runs from the job's hand-over to
the pool until its result is back in the service (the worker's own phases are ``timeline_handin.py``'s).

Run:  .venv/bin/python benchmarks/timeline_service.py [--idle 10]
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_latency  # noqa: E402
from timeline_handin import CPU, WALL, clock_phases  # noqa: E402

SERVING = "course_grader.trusted.serving."
TRUSTED = "course_grader.trusted."
#: (module, class or "", function, label), as timeline_handin's: the label's indent is the phase's depth.
PHASES = [
    (SERVING + "service", "Service", "take_in", "taking in (scan, journal, archive)"),
    (SERVING + "service", "Service", "begin", "starting its grading"),
    (TRUSTED + "pipeline", "", "record_source_cells", "  source cells recorded"),
    (SERVING + "service", "Service", "install", "  installed in submitted/"),
    (SERVING + "stream", "GradingStream", "submit", "  handed to a worker"),
    (SERVING + "stream", "", "copy_gradebook", "    gradebook copies (the job's template; kept attempts)"),
    (SERVING + "stream", "", "manual_grades_to_keep", "    manual grades to keep"),
    (SERVING + "stream", "GradingStream", "wait", "waiting for and merging outcomes"),
    (SERVING + "stream", "", "merge_outcome", "  merged into the gradebook"),
    (TRUSTED + "pipeline", "", "merge_result", "    files and scores brought in"),
    (TRUSTED + "running.batch", "", "_copy_scores", "      scores copied from the job's gradebook"),
    (TRUSTED + "pipeline", "", "_shown_in_feedback", "    what its page shows, read"),
    (TRUSTED + "pipeline", "", "keep_record", "    grading record written"),
    (SERVING + "stream", "GradingStream", "_follow_term", "  the term followed (extension, lateness, pages)"),
    (TRUSTED + "course.late_policy", "", "apply_term", "    term applied to the gradebook"),
    (TRUSTED + "pipeline", "", "_lateness_from_gradebook", "    lateness read again"),
    (TRUSTED + "refresh", "", "rewrite_changed_pages", "    pages rewritten if changed"),
    (SERVING + "stream", "", "read_ledger", "    ledger read again"),
    (SERVING + "stream", "", "keep_attempt", "  the attempt kept"),
    (SERVING + "service", "Service", "release", "feedback released"),
    (SERVING + "service", "", "release_graded", "  released to the exchange"),
    (SERVING + "service", "", "annotate_released", "  attempts written on its page"),
    (SERVING + "service", "Service", "refresh_exports", "exports refreshed (in the loop's thread)"),
    (SERVING + "journal", "Journal", "move", "journal moves (all of the above)"),
    ("nbgrader.api", "Gradebook", "__init__", "gradebooks opened (all of the above)"),
]
JOB = "the worker's job (hand-over to result back)"


def clock_the_workers_jobs() -> None:
    """Add each job's time from ``_Lane.submit`` to its future's completion under ``JOB``."""
    from course_grader.trusted.serving import stream

    original = stream._Lane.submit

    def submit(self, job):
        started = time.perf_counter()
        future = original(self, job)
        future.add_done_callback(lambda _: WALL[JOB].append(time.perf_counter() - started))
        return future

    stream._Lane.submit = submit


def serve_clocked(root: str, out: str) -> None:
    """Run the service on ``root`` with its phases clocked; write the clocks to ``out`` when it stops."""
    from course_grader.trusted import cli

    clock_phases(PHASES)
    clock_the_workers_jobs()
    signal.signal(signal.SIGUSR1, lambda *_: (WALL.clear(), CPU.clear()))  # the warm-up is over
    try:
        cli.main(["serve", "--root", root, "--jobs", str(serve_latency.SERVICE_JOBS)])
    finally:
        Path(out).write_text(json.dumps({"wall": WALL, "cpu": CPU}), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle", type=int, default=10, help="hand-ins, one at a time")
    parser.add_argument("--serve", nargs=2, metavar=("ROOT", "OUT"), help=argparse.SUPPRESS)  # the service's process
    args = parser.parse_args()
    if args.serve:
        serve_clocked(*args.serve)
        return
    with tempfile.TemporaryDirectory() as scratch:
        place = serve_latency.make_place(Path(scratch))
        clocks = Path(scratch) / "clocks.json"
        log = Path(scratch) / "serve.log"
        with log.open("wb") as output:
            process = serve_latency.subprocess.Popen(
                [sys.executable, __file__, "--serve", str(place.course.root), str(clocks)], cwd=place.course.root,
                stdout=output, stderr=serve_latency.subprocess.STDOUT, stdin=serve_latency.subprocess.DEVNULL)
        service = serve_latency.Service(process=process, log=log)
        watch = serve_latency.FeedbackWatch(place)
        try:
            serve_latency.warm(place, watch, service)
            time.sleep(1.0)  # its exports refreshed
            process.send_signal(signal.SIGUSR1)
            submitted = serve_latency.idle_hand_ins(place, watch, args.idle)
        finally:
            service.process.send_signal(signal.SIGTERM)
            service.stop()
            watch.stop()
        values, missing = serve_latency.latencies(watch, submitted)
        if not clocks.is_file():
            raise SystemExit(f"the service wrote no clocks:\n{service.tail()}")
        measured = json.loads(clocks.read_text(encoding="utf-8"))
    runs = args.idle
    print(serve_latency.summary(f"idle, {args.idle} hand-ins (end to end)", values, missing))
    print(f"the service's phases, seconds per hand-in (after a warm-up hand-in: {runs} hand-ins)")
    print(f"{'phase':64} {'wall':>7} {'CPU':>7} {'runs':>6}")
    for label in [JOB] + [label for *_, label in PHASES]:
        wall, cpu = measured["wall"].get(label, []), measured["cpu"].get(label, [])
        print(f"{label:64} {sum(wall) / runs:7.3f} {sum(cpu) / runs:7.3f} {len(wall):6}")


if __name__ == "__main__":
    main()
