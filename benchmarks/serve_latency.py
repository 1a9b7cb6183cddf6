"""Feedback latency of ``perceptron-course serve``, measured side by side in one run.

The latency of a hand-in is the time from ``nbgrader submit`` returning to its feedback page being fetchable: the file
``nbgrader fetch_feedback`` looks for in the exchange (``<exchange>/<course>/feedback/<hash>.html``, the hash of the
submission's secret and the notebook's name, as nbgrader computes it). Hand-ins are made with nbgrader's own submit
code (``ExchangeSubmit``, what a student's ``nbgrader submit`` runs), in this process, so that starting a program per
hand-in does not load the machine the service runs on; a thread watches the exchange's feedback folder.

Measured, in this order, on this course (``source/``, its six assignments, synthetic students copied from the example
class's templates, each answer signed as its own):

1. the fresh-kernel floor: a new ``python3`` kernel started with jupyter_client running ``import numpy``, to its reply;
2. a cold ``perceptron-course grade --student S --assignment A`` of one hand-in (a new process);
3. idle: ``--idle`` single hand-ins, each once the previous one's feedback is out, on a warm service (goal: p50 <= 1 s,
   p95 <= 3 s);
4. the rush: ``--students`` x 6 hand-ins arriving at random times within ``--rush-seconds`` (goal: no hand-in waits
   more than 60 s): p50, p95, the longest wait, and the time to drain (first arrival to last feedback, and after the
   last arrival);
5. the flood: the same hand-ins all at once, the time to drain, beside ``grade --jobs 2`` grading the same hand-ins as
   a batch (collected with ``nbgrader collect``, as a TA does) (goal: the service drains as fast as the batch).

The service runs with ``--jobs 2`` (the hub's example). Every service gets a course of its own and an exchange of its
own; the batch grades a fresh copy with the same course secret.

Run:  .venv/bin/python benchmarks/serve_latency.py [--students 50] [--rush-seconds 300] [--idle 20]
      (a quick look: --students 5 --rush-seconds 30 --idle 5)
Prints the figures; copy them into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import runpy
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import start_new_kernel
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import notebook_hash
from traitlets.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grading import BENCHMARK_SECRET, TEMPLATES, sign_answers  # noqa: E402

from course_grader.trusted.course.course import Course  # noqa: E402
from course_grader.trusted.course.example_class import build_submission, copy_course  # noqa: E402
from course_grader.trusted.course.secret import SECRET_FILE  # noqa: E402
from course_grader.trusted.pipeline import record_source_cells  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: How long the benchmark waits for one feedback page before it reports the hand-in as never answered.
PATIENCE = 900.0
SERVICE_JOBS = 2


# ---------------------------------------------------------------------------- a course with an exchange


@dataclass
class Place:
    """A course of its own (same secret as every other) and its exchange, the assignments released to it."""

    course: Course
    exchange: Path
    course_id: str
    students: Path  # each student's working folder and nbgrader cache, as on their own server


def make_place(root: Path) -> Place:
    course = copy_course(REPO, root / "course")
    secret = course.root / SECRET_FILE
    secret.write_text(BENCHMARK_SECRET + "\n", encoding="ascii")
    secret.chmod(0o600)
    record_source_cells(course, course.assignments())  # released, as a TA's course is: the gradebook knows its cells
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    config = course.root / "nbgrader_config.py"
    # Every synthetic student is this process's user: nbgrader's check that a hand-in's folder belongs to the student
    # it names is off, as where students share one Unix user (docs/hosting.md).
    config.write_text(config.read_text(encoding="utf-8") + f"\nc.Exchange.root = {str(exchange)!r}\n"
                      "c.ExchangeCollect.check_owner = False\n", encoding="utf-8")
    course_id = course.term().course.id
    for assignment in course.assignments():
        nbgrader(course.root, "db", "assignment", "add", assignment)
        nbgrader(course.root, "release_assignment", assignment)
    return Place(course=course, exchange=exchange, course_id=course_id, students=root / "students")


def nbgrader(cwd: Path, *args: str) -> None:
    done = subprocess.run([str(BIN / "nbgrader"), *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


# ---------------------------------------------------------------------------- hand-ins


@dataclass(frozen=True)
class HandIn:
    student: str
    assignment: str


@dataclass
class Submitted:
    """A hand-in once submitted: when ``submit`` returned, and the feedback files ``fetch_feedback`` would look for."""

    hand_in: HandIn
    returned: float
    pages: tuple[str, ...]
    returned_wall: float  # time.time(), to set beside the service's journal


def prepare(place: Place, hand_in: HandIn, template: str) -> None:
    """Write the student's notebooks of the assignment into their working folder (a template's answers, signed)."""
    recipe = runpy.run_path(str(REPO / "example_class" / f"{template}.py"))
    folder = place.students / hand_in.student / hand_in.assignment
    build_submission(place.course, recipe, hand_in.assignment, folder)
    sign_answers(folder, hand_in.student)


def submit(place: Place, hand_in: HandIn) -> Submitted:
    """``nbgrader submit`` of the student's folder, with nbgrader's own code; and the pages its feedback will be."""
    config = Config()
    config.Exchange.root = str(place.exchange)
    config.Exchange.cache = str(place.students / hand_in.student / ".nbgrader_cache")
    config.Exchange.assignment_dir = str(place.students / hand_in.student)
    config.CourseDirectory.course_id = place.course_id
    config.CourseDirectory.assignment_id = hand_in.assignment
    config.CourseDirectory.student_id = hand_in.student
    coursedir = CourseDirectory(config=config)
    ExchangeSubmit(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()
    returned, returned_wall = time.monotonic(), time.time()
    cache = place.students / hand_in.student / ".nbgrader_cache" / place.course_id
    latest = sorted(cache.glob(f"{hand_in.student}+{hand_in.assignment}+*"))[-1]  # nbgrader's timestamps sort as times
    secret = (latest / "submission_secret.txt").read_text()
    pages = tuple(f"{notebook_hash(secret=secret, notebook_id=path.stem)}.html" for path in sorted(latest.glob("*.ipynb")))
    return Submitted(hand_in=hand_in, returned=returned, pages=pages, returned_wall=returned_wall)


class FeedbackWatch:
    """A thread that lists the exchange's feedback folder every few milliseconds and notes when each file appears."""

    def __init__(self, place: Place, every: float = 0.02):
        self.folder = place.exchange / place.course_id / "feedback"
        self.every = every
        self.seen: dict[str, float] = {}
        self.seen_wall: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            try:
                with os.scandir(self.folder) as entries:
                    for entry in entries:
                        if entry.name not in self.seen:
                            self.seen[entry.name], self.seen_wall[entry.name] = now, time.time()
            except FileNotFoundError:
                pass
            self._stop.wait(self.every)

    def fetchable_at(self, submitted: Submitted) -> float | None:
        """When the last page of the hand-in appeared, or None if one has not."""
        times = [self.seen.get(page) for page in submitted.pages]
        return None if None in times or not times else max(times)

    def wait_for(self, everything: list[Submitted], patience: float = PATIENCE) -> None:
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline and any(self.fetchable_at(s) is None for s in everything):
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# ---------------------------------------------------------------------------- the service


@dataclass
class Service:
    process: subprocess.Popen
    log: Path

    @classmethod
    def start(cls, place: Place) -> "Service":
        log = place.course.root.parent / "serve.log"
        with log.open("wb") as output:
            process = subprocess.Popen([str(BIN / "perceptron-course"), "serve", "--root", str(place.course.root),
                                        "--jobs", str(SERVICE_JOBS)], cwd=place.course.root, stdout=output,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        return cls(process=process, log=log)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-3000:]


def warm(place: Place, watch: FeedbackWatch, service: Service) -> None:
    """One hand-in that is not counted, so that what follows meets a warm service (its pool started)."""
    hand_in = HandIn("warmup", place.course.assignments()[0])
    prepare(place, hand_in, TEMPLATES[0])
    submitted = submit(place, hand_in)
    watch.wait_for([submitted])
    if watch.fetchable_at(submitted) is None:
        raise SystemExit(f"the service never released the warm-up's feedback:\n{service.tail()}")


# ---------------------------------------------------------------------------- figures


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def latencies(watch: FeedbackWatch, submitted: list[Submitted]) -> tuple[list[float], int]:
    """Seconds from each submit returning to its feedback being fetchable; and how many never got feedback."""
    found = [watch.fetchable_at(s) for s in submitted]
    return [at - s.returned for at, s in zip(found, submitted) if at is not None], sum(at is None for at in found)


def summary(name: str, values: list[float], missing: int) -> str:
    if not values:
        return f"{name}: no feedback at all ({missing} missing)"
    return (f"{name}: n={len(values)}, p50 {percentile(values, 0.5):.2f} s, p95 {percentile(values, 0.95):.2f} s, "
            f"longest {max(values):.2f} s" + (f", {missing} NEVER ANSWERED" if missing else ""))


#: The stages of one hand-in's latency, read from the service's journal (``serving/journal.py``): each ends at an event.
STAGES = ("noticed (submit returned -> the service saw it)", "queued (seen -> grading started)",
          "graded (grading started -> graded)", "released (graded -> the page fetchable)")


def where_the_time_goes(place: Place, watch: FeedbackWatch, submitted: list[Submitted]) -> list[str]:
    """Median and p95 of each stage of ``STAGES`` over ``submitted``, from the journal's events and this side's clocks."""
    from course_grader.trusted.serving.journal import GRADED, GRADING, JOURNAL_FILE, RELEASED, Journal

    journal = Journal(place.course.reports / JOURNAL_FILE, read_only=True)
    try:
        started = {handin: at for _, at, handin, _, _ in reversed(journal.events(GRADING))}  # the first start of each
        graded = {handin: at for _, at, handin, _, _ in reversed(journal.events(GRADED))}
        rows = {(h.student, h.assignment): h for state in (GRADED, RELEASED) for h in journal.in_state(state)}
    finally:
        journal.close()
    stages: list[list[float]] = [[] for _ in STAGES]
    for one in submitted:
        row = rows.get((one.hand_in.student, one.hand_in.assignment))
        fetchable = [watch.seen_wall.get(page) for page in one.pages]
        if row is None or row.seq not in started or row.seq not in graded or None in fetchable:
            continue
        moments = [one.returned_wall, row.seen_at, started[row.seq], graded[row.seq], max(fetchable)]
        for stage, (begin, end) in zip(stages, zip(moments, moments[1:])):
            stage.append(end - begin)
    return [f"    {name}: median {statistics.median(values):.2f} s, p95 {percentile(values, 0.95):.2f} s"
            for name, values in zip(STAGES, stages) if values]


def met(goal: bool) -> str:
    return "met" if goal else "NOT met"


# ---------------------------------------------------------------------------- the phases


def fresh_kernel_floor(repeats: int) -> float:
    """Median seconds from starting a ``python3`` kernel to the reply of ``import numpy`` in it."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        manager, client = start_new_kernel(kernel_name="python3")
        reply = client.execute_interactive("import numpy", timeout=120)
        elapsed = time.perf_counter() - start
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        assert reply["content"]["status"] == "ok", reply
        times.append(elapsed)
    return statistics.median(times)


def cold_grade(root: Path) -> tuple[float, HandIn]:
    """Seconds for ``perceptron-course grade --student S --assignment A`` of one hand-in in a fresh course."""
    place = make_place(root)
    hand_in = HandIn("cold000", place.course.assignments()[0])
    prepare(place, hand_in, TEMPLATES[0])
    submit(place, hand_in)
    nbgrader(place.course.root, "collect", hand_in.assignment)
    start = time.perf_counter()
    done = subprocess.run([str(BIN / "perceptron-course"), "grade", "--root", str(place.course.root), "--student",
                           hand_in.student, "--assignment", hand_in.assignment, "--quiet"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"grade failed:\n{done.stdout}\n{done.stderr}")
    return elapsed, hand_in


def idle_hand_ins(place: Place, watch: FeedbackWatch, count: int) -> list[Submitted]:
    """``count`` hand-ins to a warm service, one at a time, each after the previous one's feedback is fetchable."""
    assignments = place.course.assignments()
    submitted = []
    for k in range(count):
        hand_in = HandIn(f"idle{k:03d}", assignments[k % len(assignments)])
        prepare(place, hand_in, TEMPLATES[k % len(TEMPLATES)])
        time.sleep(1.0)  # the service idle again (its refresh of the exports done), as between two real hand-ins
        submitted.append(submit(place, hand_in))
        watch.wait_for(submitted[-1:])
    return submitted


def idle(root: Path, count: int) -> tuple[list[float], int, list[str]]:
    """``count`` hand-ins, one at a time, each after the previous one's feedback, on a warm service."""
    place = make_place(root)
    watch = FeedbackWatch(place)
    service = Service.start(place)
    try:
        warm(place, watch, service)
        submitted = idle_hand_ins(place, watch, count)
        values, missing = latencies(watch, submitted)
        return values, missing, where_the_time_goes(place, watch, submitted)
    finally:
        service.stop()
        watch.stop()


def class_hand_ins(place: Place, n_students: int) -> list[HandIn]:
    hand_ins = []
    for k in range(n_students):
        for assignment in place.course.assignments():
            hand_in = HandIn(f"student{k:03d}", assignment)
            prepare(place, hand_in, TEMPLATES[k % len(TEMPLATES)])
            hand_ins.append(hand_in)
    return hand_ins


@dataclass
class Rush:
    values: list[float]
    missing: int
    first_arrival: float
    last_arrival: float
    last_feedback: float
    stages: list[str]
    place: Place = field(repr=False)


def rush(root: Path, n_students: int, seconds: float, seed: int = 20261128) -> Rush:
    """Every student's six hand-ins arriving at random times within ``seconds`` (0: all at once), on a warm service."""
    place = make_place(root)
    hand_ins = class_hand_ins(place, n_students)
    generator = random.Random(seed)
    generator.shuffle(hand_ins)
    arrivals = sorted(generator.uniform(0, seconds) for _ in hand_ins)
    watch = FeedbackWatch(place)
    service = Service.start(place)
    try:
        warm(place, watch, service)
        start = time.monotonic()
        submitted = []
        for hand_in, offset in zip(hand_ins, arrivals):
            delay = start + offset - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            submitted.append(submit(place, hand_in))
        watch.wait_for(submitted)
        values, missing = latencies(watch, submitted)
        answered = [watch.fetchable_at(s) for s in submitted]
        return Rush(values=values, missing=missing, first_arrival=submitted[0].returned,
                    last_arrival=submitted[-1].returned,
                    last_feedback=max(at for at in answered if at is not None) if values else float("nan"),
                    stages=where_the_time_goes(place, watch, submitted), place=place)
    finally:
        service.stop()
        watch.stop()
        if service.process.returncode not in (0, None, -signal.SIGTERM):
            print(f"  (the service exited {service.process.returncode}; its log ends:\n{service.tail()})")


def batch(root: Path, flood: Place) -> float:
    """``grade --jobs 2`` of the flood's hand-ins, collected from its exchange with ``nbgrader collect`` into a fresh copy."""
    course = copy_course(REPO, root / "course")
    shutil.copy2(flood.course.root / SECRET_FILE, course.root / SECRET_FILE)
    record_source_cells(course, course.assignments())
    config = course.root / "nbgrader_config.py"
    config.write_text(config.read_text(encoding="utf-8") + f"\nc.Exchange.root = {str(flood.exchange)!r}\n"
                      "c.ExchangeCollect.check_owner = False\n", encoding="utf-8")
    for assignment in course.assignments():
        nbgrader(course.root, "collect", assignment)
    shutil.rmtree(course.submitted / "warmup")  # the service's warm-up hand-in is not one of the class's
    start = time.perf_counter()
    done = subprocess.run([str(BIN / "perceptron-course"), "grade", "--root", str(course.root), "--jobs", str(SERVICE_JOBS),
                           "--quiet"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"grade --jobs 2 failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=50, help="students in the rush and the flood (6 hand-ins each)")
    parser.add_argument("--rush-seconds", type=float, default=300.0, help="the rush's hand-ins arrive within this time")
    parser.add_argument("--idle", type=int, default=20, help="single hand-ins on an idle service")
    parser.add_argument("--floor-repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="serve-latency-") as scratch:
        work = Path(scratch)
        floor = fresh_kernel_floor(args.floor_repeats)
        print(f"fresh-kernel floor (python3 kernel started, `import numpy`, its reply): median {floor:.2f} s "
              f"of {args.floor_repeats}", flush=True)
        cold, _ = cold_grade(work / "cold")
        print(f"cold `perceptron-course grade --student S --assignment A`, one hand-in: {cold:.2f} s", flush=True)
        values, missing, stages = idle(work / "idle", args.idle)
        print(summary("idle, one hand-in at a time", values, missing), flush=True)
        print("\n".join(stages))
        if values:
            print(f"  goal p50 <= 1 s: {met(percentile(values, 0.5) <= 1)}; p95 <= 3 s: {met(percentile(values, 0.95) <= 3)}")
        n = args.students * 6
        spread = rush(work / "rush", args.students, args.rush_seconds)
        print(summary(f"rush, {n} hand-ins within {args.rush_seconds:.0f} s", spread.values, spread.missing), flush=True)
        print("\n".join(spread.stages))
        print(f"  drained {spread.last_feedback - spread.first_arrival:.1f} s after the first arrival, "
              f"{spread.last_feedback - spread.last_arrival:.1f} s after the last")
        if spread.values:
            print(f"  goal: no wait over 60 s: {met(not spread.missing and max(spread.values) <= 60)}")
        flood = rush(work / "flood", args.students, 0.0)
        drain = flood.last_feedback - flood.first_arrival
        print(summary(f"flood, {n} hand-ins at once", flood.values, flood.missing), flush=True)
        print("\n".join(flood.stages))
        batch_seconds = batch(work / "batch", flood.place)
        print(f"  the service drained them in {drain:.1f} s; `grade --jobs 2` grades the same {n} as a batch in "
              f"{batch_seconds:.1f} s: {drain / batch_seconds:.2f}x (goal <= 1: {met(drain <= batch_seconds)})")


if __name__ == "__main__":
    main()
