"""``perceptron-course serve`` and ``status`` on the fixture course, with nbgrader's own exchange in a temporary folder.

Students hand in with the real ``nbgrader submit`` (as programs, as in ``test_hub_and_lms.py``), each inbound
folder owned by that student's own user (created here: CI runs as root), and fetch their feedback with
``nbgrader fetch_feedback``. The service runs as a program (``perceptron-course serve --once``, or killed at a
fault-injection point); what it did is read back from the journal, the ledger, the exchange and its output, never
from timings.
"""

from __future__ import annotations

import csv
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import fixture_course

from course_grader.testing.programs import nbgrader_program
from course_grader.trusted.course.commands import grader_command
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import copy_course, solved_notebook
from course_grader.trusted.gradebook.writer_lock import LOCK_FILE
from course_grader.trusted.serving.status import status_lines
from course_grader.trusted.serving.journal import (GRADED, HELD, LIMITED, REFUSED, RELEASED, SUPERSEDED,
                                                               Journal)

#: One of the longest files: its unit of work (``conftest.FileOrGroupScheduling``) starts first.
pytestmark = pytest.mark.xdist_group("test_serve")

BIN = Path(sys.executable).parent
COURSE_ID = "fixture"  # grader/tests/fixtures/course/term.toml
ASSIGNMENT = "01_geometry"
STUDENTS = ("srv_ada", "srv_bob", "srv_cy", "srv_flood")


def run(*args: str, cwd: Path, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})}
    result = subprocess.run(list(args), cwd=cwd, env=environment, capture_output=True, text=True, timeout=900)
    if check:
        assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def users():
    """A real user per student, so that the inbound folders have the owners nbgrader's check_owner expects."""
    if os.geteuid() != 0:
        pytest.fail("these tests run as root, as CI does: they give each student's hand-in that student's owner")
    for name in STUDENTS:
        made = None
        for _ in range(USERADD_TRIES):  # the file's tests run on two workers: the other may be making the same user
            try:
                pwd.getpwnam(name)
                break
            except KeyError:
                made = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                                      capture_output=True, text=True)
                if made.returncode != 0:  # it exists by now, or another useradd holds /etc/passwd's lock: look again
                    time.sleep(1)
        else:
            pytest.fail(f"useradd {name} failed {USERADD_TRIES} times: {made.stderr if made else ''}")
    return {name: pwd.getpwnam(name).pw_uid for name in STUDENTS}


USERADD_TRIES = 60


#: A course released, its exchange with the assignment released, and every student's home with the assignment
#: fetched (the real ``nbgrader fetch_assignment``), made once for the module (``released``) and copied for each
#: test: releasing and fetching are the same work in every test (each a program start of a few seconds).
RELEASED_TEMPLATE: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def released(tmp_path_factory):
    template = tmp_path_factory.mktemp("released")
    exchange = template / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    course = copy_course(fixture_course(), template / "course")
    Hub.point_at_exchange(course, exchange)
    run(str(BIN / "course-grader"), "release", "--root", str(course.root), "--assignment", ASSIGNMENT, cwd=course.root)
    run(*nbgrader_program(), "release_assignment", ASSIGNMENT, f"--course={COURSE_ID}", cwd=course.root)
    for student in STUDENTS:
        home = template / "homes" / student
        home.mkdir(parents=True)
        run(*nbgrader_program(), "fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}", f"--Exchange.root={exchange}",
            f"--Exchange.cache={template / ('cache-' + student)}", cwd=home)
        assert (home / ASSIGNMENT / "geometry.ipynb").is_file()
    RELEASED_TEMPLATE[:] = [template]
    yield template
    RELEASED_TEMPLATE.clear()


class Hub:
    """A course, its exchange and the students' homes, all in one temporary folder."""

    def __init__(self, root: Path, users: dict[str, int], term_edits: dict[str, str] | None = None) -> None:
        (template,) = RELEASED_TEMPLATE
        self.root, self.users = root, users
        root.mkdir(parents=True, exist_ok=True)
        self.exchange = root / "exchange"
        shutil.copytree(template / "exchange", self.exchange, symlinks=True)
        shutil.copytree(template / "course", root / "course", symlinks=True)
        for student in STUDENTS:  # each home as ``nbgrader fetch_assignment`` left it
            shutil.copytree(template / "homes" / student, root / student, symlinks=True)
        self.course = Course.open(root / "course")
        self.point_at_exchange(self.course, self.exchange)
        for old, new in (term_edits or {}).items():
            self.edit_term(old, new)
        self.handed_in = 0

    @staticmethod
    def point_at_exchange(course: Course, exchange: Path) -> None:
        """The course's nbgrader_config.py names ``exchange`` as the exchange's root (in place of any it named)."""
        config = course.root / "nbgrader_config.py"
        lines = [line for line in config.read_text().splitlines() if not line.startswith("c.Exchange.root = ")]
        config.write_text("\n".join(lines) + f"\nc.Exchange.root = {str(exchange)!r}\n")

    def edit_term(self, old: str, new: str) -> None:
        term = self.course.root / "term.toml"
        text = term.read_text(encoding="utf-8")
        assert old in text, old
        term.write_text(text.replace(old, new, 1), encoding="utf-8")

    def flags(self, student: str) -> list[str]:
        return [f"--course={COURSE_ID}", f"--Exchange.root={self.exchange}", f"--Exchange.cache={self.root / ('cache-' + student)}"]

    def submit(self, student: str, notebook=None, *, owner: int | None = None, times: int = 1) -> Path:
        """``nbgrader submit`` of ``notebook`` (default: the solved one) by ``student``, ``times`` times over (in one
        program: nbgrader's own submit app, run again and again); returns the inbound folder of the last."""
        home = self.root / student
        assert (home / ASSIGNMENT).is_dir(), "every student's home holds the fetched assignment (``released``)"
        if isinstance(notebook, bytes):  # a file that is no notebook
            (home / ASSIGNMENT / "geometry.ipynb").write_bytes(notebook)
        else:
            nbformat.write(notebook if notebook is not None else solved_notebook(self.course, ASSIGNMENT, "geometry"),
                           home / ASSIGNMENT / "geometry.ipynb")
        inbound = self.exchange / COURSE_ID / "inbound"
        before = set(inbound.iterdir()) if inbound.is_dir() else set()
        arguments = ["submit", ASSIGNMENT, *self.flags(student), f"--student={student}"]
        if times == 1:
            run(*nbgrader_program(), *arguments, cwd=home)
        else:
            run(sys.executable, "-c", SUBMIT_AGAIN_AND_AGAIN, str(times), *arguments, cwd=home)
        folders = sorted(set(inbound.iterdir()) - before)  # nbgrader names each by student, assignment and time
        assert len(folders) == times, folders
        uid = self.users[student] if owner is None else owner
        for folder in folders:
            for path in [folder, *folder.rglob("*")]:
                os.lchown(path, uid, -1)
        self.handed_in += times
        return folders[-1]

    def fetch_feedback(self, student: str) -> list[str]:
        """The feedback pages ``nbgrader fetch_feedback`` brings ``student``, newest hand-in last."""
        home = self.root / student
        run(*nbgrader_program(), "fetch_feedback", ASSIGNMENT, *self.flags(student), f"--student={student}", cwd=home)
        return [path.read_text(encoding="utf-8") for path in sorted((home / ASSIGNMENT / "feedback").glob("*/*.html"))]

    def serve(self, *extra: str, jobs: int = 1, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
        """``serve --once`` on ``jobs`` workers (each warms a sandbox's zygote as the service starts: one, unless a
        test needs a second grading beside the first)."""
        return run(str(BIN / "course-grader"), "serve", "--root", str(self.course.root), "--once", "--jobs", str(jobs), *extra,
                   cwd=self.course.root, check=check, env=env)

    def journal(self) -> Journal:
        return Journal.of_course(self.course.reports, read_only=True)

    def states(self) -> dict[int, tuple[str, str, str]]:
        journal = self.journal()
        try:
            return {h.seq: (h.student, h.state, h.reason) for h in journal.in_state(
                "seen", "collected", "grading", GRADED, RELEASED, SUPERSEDED, LIMITED, HELD, REFUSED)}
        finally:
            journal.close()

    def graded_events(self) -> list[int]:
        journal = self.journal()
        try:
            return [handin for _, _, handin, _, _ in journal.events(GRADED)]
        finally:
            journal.close()


#: ``nbgrader submit`` (``sys.argv[2:]``) run ``sys.argv[1]`` times in one process, as the ``nbgrader`` program runs
#: it (its application, launched again, each time a new instance); the same hand-ins as that many programs, without
#: a program's start (seconds) each time.
SUBMIT_AGAIN_AND_AGAIN = """
import sys
from nbgrader.apps.nbgraderapp import NbGraderApp
from nbgrader.apps.submitapp import SubmitApp

times, arguments = int(sys.argv[1]), sys.argv[2:]
for _ in range(times):
    for app in (SubmitApp, NbGraderApp):
        app.clear_instance()
    NbGraderApp.launch_instance(argv=arguments)
"""


def notebook_with(course: Course, replace: str, by: str):
    """The solved notebook with ``replace`` changed into ``by`` in its solution cells (a worse, or hostile, hand-in)."""
    notebook = solved_notebook(course, ASSIGNMENT, "geometry")
    changed = 0
    for cell in notebook.cells:
        if cell.cell_type == "code" and replace in cell.source and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = cell.source.replace(replace, by)
            changed += 1
    assert changed, f"no solution cell holds {replace!r}"
    return notebook


def grades(course: Course) -> dict[str, str]:
    with course.grades_csv.open(newline="", encoding="utf-8") as handle:
        return {row["student"]: row["score"] for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT}


#: The group of this file's tests (``xdist_group``) that start, kill and restart the service: on a worker of its own
#: beside the rest of the file (``conftest.py``), each worker making ``released`` once.
RESTARTS = "test_serve-restarts"


# ---------------------------------------------------------------------------- hand in, graded, feedback fetched


@pytest.mark.slow
def test_a_hand_in_is_graded_and_its_feedback_fetched_and_a_resubmission_follows(tmp_path, users):
    hub = Hub(tmp_path, users)
    hub.submit("srv_ada")
    result = hub.serve()
    assert "graded   srv_ada/01_geometry: 8/8" in result.stdout, result.stdout + result.stderr
    (page,) = hub.fetch_feedback("srv_ada")
    assert "Feedback: geometry" in page and "8 / 8" in page
    assert grades(hub.course)["srv_ada"] == "8"

    # A hand-in that cannot be graded (issue 40: it turned the 8/8 into 0 in every export) never erases the grade.
    hub.submit("srv_ada", b'{"cells": [{"cell_type": "code", "source": 1}], "nbformat": 4}')
    result = hub.serve()
    assert "stands   srv_ada/01_geometry: hand-in 1 (8) stays the grade; hand-in 2 could not be graded" in result.stdout
    pages = hub.fetch_feedback("srv_ada")
    assert len(pages) == 2 and "Your grade stays that of your hand-in number 1: 8 / 8" in pages[-1], pages[-1]
    assert every_export(hub.course) == {"8"}
    status = run(str(BIN / "course-grader"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout
    assert "the grade of hand-in 1 (8/8) stands: hand-in 2 could not be graded" in status, status

    worse = notebook_with(hub.course, "return", "return None and ")
    hub.submit("srv_ada", worse)
    result = hub.serve()
    assert "graded   srv_ada/01_geometry:" in result.stdout
    # The service's log is the TA's (a hub's log, for a managed service): nbgrader's SQLAlchemy notes stay out of it.
    assert "Warning" not in result.stdout + result.stderr, result.stderr
    pages = hub.fetch_feedback("srv_ada")
    assert len(pages) == 3 and "8 / 8" not in pages[-1]
    assert float(grades(hub.course)["srv_ada"]) < 8  # latest counts (the default)
    assert sorted(hub.graded_events()) == [1, 2, 3]

    status = run(str(BIN / "course-grader"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout
    assert "service: not running" in status and "waiting: 0" in status and "done in the last hour: 3" in status


def every_export(course: Course) -> set[str]:
    """srv_ada's score in grades.csv, grades_by_student.csv and canvas_grades.csv (one value when they agree)."""
    with (course.root / "grades_by_student.csv").open(newline="", encoding="utf-8") as handle:
        by_student = {row["student"]: row for row in csv.DictReader(handle)}
    with (course.root / "canvas_grades.csv").open(newline="", encoding="utf-8") as handle:
        canvas = [row for row in csv.DictReader(handle) if row["Student"] == "srv_ada"]
    assert len(canvas) == 1, canvas
    column = next(name for name in canvas[0] if name.startswith(ASSIGNMENT))
    return {f"{float(value):g}" for value in (grades(course)["srv_ada"], by_student["srv_ada"][ASSIGNMENT], canvas[0][column])}


# ---------------------------------------------------------------------------- the course lock


def wait_for_lock(course: Course, command: str, process: subprocess.Popen) -> None:
    from course_grader.trusted.gradebook.writer_lock import lock_holder

    while (holder := lock_holder(course.root)) is None or holder.command != command:
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.xdist_group(RESTARTS)
def test_grade_and_serve_refuse_each_other_naming_the_holder(tmp_path, users):
    from course_grader.trusted.gradebook.writer_lock import course_lock

    hub = Hub(tmp_path, users)
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    service = subprocess.Popen([str(BIN / "course-grader"), "serve", "--root", str(hub.course.root), "--jobs", "1"],
                               cwd=hub.course.root, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_lock(hub.course, "serve", service)
        refused = run(str(BIN / "course-grader"), "grade", "--root", str(hub.course.root), cwd=tmp_path, check=False)
        assert refused.returncode == 2 and f"`{grader_command()} serve` (pid " in refused.stderr, refused.stderr
        assert "stop it first" in refused.stderr
        status = run(str(BIN / "course-grader"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout
        assert f"service: running (pid {service.pid}" in status
    finally:
        service.send_signal(signal.SIGTERM)
        out, err = service.communicate(timeout=300)
    assert service.returncode == 0, out + err
    with course_lock(hub.course.root, "grade"):  # the reverse: grade holds it, serve is refused
        refused = hub.serve(check=False)
    assert refused.returncode == 2 and f"`{grader_command()} grade` (pid " in refused.stderr, refused.stderr


# ---------------------------------------------------------------------------- SIGKILL, restart: graded exactly once


@pytest.mark.slow
@pytest.mark.xdist_group(RESTARTS)
@pytest.mark.parametrize("point", ["after-intake", "while-grading", "after-grading", "during-exports"])
def test_a_killed_service_grades_every_hand_in_exactly_once_after_a_restart(tmp_path, users, point):
    hub = Hub(tmp_path, users)
    for student in ("srv_ada", "srv_bob"):
        hub.submit(student)
    killed = hub.serve(jobs=2, check=False, env={"COURSE_GRADER_FAULT": f"serve-kill:{point}"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    if point == "after-intake":  # killed once ada's hand-in was taken in: the journal shows it waiting
        status = run(str(BIN / "course-grader"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout
        assert "waiting: 1" in status and "  srv_ada: 01_geometry (since " in status and "grading now: 0" in status, status
    if point == "while-grading":  # killed as ada's hand-in went to a worker: the journal shows it being graded
        status = run(str(BIN / "course-grader"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout
        assert "grading now: 1" in status and "  srv_ada/01_geometry (hand-in 1, arrived " in status, status
    assert not (hub.course.root / LOCK_FILE).exists() or run(
        str(BIN / "course-grader"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout.startswith(
        "service: not running")  # the lock died with its process
    hub.serve(jobs=2)
    states = hub.states()
    assert sorted(state for _, state, _ in states.values()) == [RELEASED, RELEASED], states
    assert sorted(hub.graded_events()) == sorted(states)  # one "graded" event per hand-in, across both runs
    for student in ("srv_ada", "srv_bob"):
        (page,) = hub.fetch_feedback(student)
        assert "8 / 8" in page
    assert grades(hub.course) == {"srv_ada": "8", "srv_bob": "8"}


# ---------------------------------------------------------------------------- what the inbound must not do


@pytest.mark.slow
def test_forged_linked_and_special_inbound_folders_are_refused_with_a_reason(tmp_path, users):
    hub = Hub(tmp_path, users)
    hub.submit("srv_bob", owner=users["srv_ada"])  # ada hands in as bob
    hub.submit("srv_cy", owner=54321)  # owned by a uid no user has
    inbound = hub.exchange / COURSE_ID / "inbound"
    secret_outside = tmp_path / "outside.ipynb"
    secret_outside.write_text("the TA's file")
    linked = hub.submit("srv_flood")
    (linked / "geometry.ipynb").unlink()
    (linked / "geometry.ipynb").symlink_to(secret_outside)
    os.lchown(linked / "geometry.ipynb", users["srv_flood"], -1)
    os.symlink(tmp_path, inbound / f"srv_flood+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+link")
    os.mkfifo(inbound / f"srv_flood+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+fifo")
    fifo_inside = hub.submit("srv_ada")
    os.mkfifo(fifo_inside / "extra.ipynb")
    os.lchown(fifo_inside / "extra.ipynb", users["srv_ada"], -1)
    result = hub.serve()
    states = hub.states()
    assert all(state == REFUSED for _, state, _ in states.values()) and len(states) == 6, states
    reasons = {student + ":" + reason for student, _, reason in states.values()}
    # journaled as the owner's (the account that made the folder), never as the student it names (attack round 9)
    assert any(r.startswith("srv_ada:") and "handed in by srv_bob but is owned by srv_ada" in r for r in reasons), reasons
    assert any("handed in by srv_cy" in r and "uid 54321 (no such user)" in r for r in reasons), reasons
    assert not any(r.startswith(("srv_bob:", "srv_cy:")) for r in reasons), reasons
    shown = status_lines(hub.course, full=True)
    assert not any(line.strip().startswith(("srv_bob:", "srv_cy:")) for line in shown), shown
    assert any("symbolic link" in r for r in reasons if r.startswith("srv_flood:")), reasons
    assert any("is not a folder" in r for r in reasons), reasons
    assert any(r.startswith("srv_ada:") and "FIFO" in r for r in reasons), reasons
    assert not (hub.course.root / "submitted").exists() and hub.graded_events() == []
    assert "the TA's file" not in "".join(p.read_text(errors="replace") for p in (hub.course.root / "handins").rglob("*") if p.is_file())
    assert result.stdout.count("refused  ") == 6


# ---------------------------------------------------------------------------- a rush


@pytest.mark.slow
def test_a_flooding_student_delays_nobody_and_only_their_latest_hand_in_is_graded(tmp_path, users):
    hub = Hub(tmp_path, users)
    hub.submit("srv_flood", times=20)
    hub.submit("srv_bob")
    result = hub.serve()
    states = hub.states()
    flood = [state for student, state, _ in states.values() if student == "srv_flood"]
    assert flood.count(SUPERSEDED) == 19 and flood.count(RELEASED) == 1, states
    assert [state for student, state, _ in states.values() if student == "srv_bob"] == [RELEASED]
    assert len(hub.graded_events()) == 2 and "graded   srv_bob/01_geometry: 8/8" in result.stdout
    assert len(hub.fetch_feedback("srv_bob")) == 1


# ---------------------------------------------------------------------------- [serve]: attempts, cool-down, best


SERVE_TABLE = "[bundle]"  # the [serve] table goes before it


@pytest.mark.slow
def test_past_the_attempts_or_inside_the_cool_down_a_page_says_so_and_the_hand_in_is_kept(tmp_path, users):
    for table, says in (("attempts = 1", "You have used all 1 graded attempts"),
                        ("cooldown_minutes = 60", "Your next graded attempt opens at ")):
        hub = Hub(tmp_path / table.split()[0], users, {SERVE_TABLE: f"[serve]\n{table}\n\n{SERVE_TABLE}"})
        hub.submit("srv_ada")
        hub.serve()
        second = hub.submit("srv_ada", notebook_with(hub.course, "return", "return None and "))
        result = hub.serve()
        assert "limited  srv_ada/01_geometry (hand-in 2)" in result.stdout, result.stdout
        assert [state for _, state, _ in hub.states().values()] == [RELEASED, LIMITED]
        pages = hub.fetch_feedback("srv_ada")
        assert len(pages) == 2 and "8 / 8" in pages[0] and says in pages[1] and "Your hand-in (number 2) is kept" in pages[1]
        assert "Graded attempts used: 1" in pages[0] and "Graded attempts used: 1" in pages[1]  # on every page
        kept = hub.course.root / "handins" / "srv_ada" / ASSIGNMENT / "2" / "geometry.ipynb"
        assert kept.read_bytes() == (second / "geometry.ipynb").read_bytes()
        assert grades(hub.course)["srv_ada"] == "8" and hub.graded_events() == [1]


@pytest.mark.slow
def test_with_best_a_worse_later_attempt_does_not_lower_the_grade(tmp_path, users):
    hub = Hub(tmp_path, users, {SERVE_TABLE: f'[serve]\ncounts = "best"\n\n{SERVE_TABLE}'})
    hub.submit("srv_ada")
    hub.serve()
    hub.submit("srv_ada", notebook_with(hub.course, "return", "return None and "))
    result = hub.serve()
    assert "best     srv_ada/01_geometry: hand-in 1 (8) stays the grade" in result.stdout, result.stdout
    pages = hub.fetch_feedback("srv_ada")
    # the feedback shows the attempt just graded, and at its top which attempt's grade stands
    assert "Your grade stays that of your hand-in number 1: 8 / 8, your best attempt." in pages[1], pages[1]
    assert "8 / 8" in pages[0] and pages[1].count("8 / 8") == 1
    assert grades(hub.course)["srv_ada"] == "8"  # the gradebook and the exports hold the best
    assert "8 / 8" in (hub.course.feedback / "srv_ada" / ASSIGNMENT / "geometry.html").read_text(encoding="utf-8")
    assert hub.graded_events() == [1, 2]


# ---------------------------------------------------------------------------- due dates: reveal, late


DUE = {'name = "01_geometry"\n': 'name = "01_geometry"\ndue = "2020-01-01 00:00"\n'}
BOB_EXTENSION = '\n[[extensions]]\nstudent = "srv_bob"\nassignment = "01_geometry"\nhours = 876000\n'


@pytest.mark.slow
def test_reveal_after_the_due_date_and_a_late_hand_in_graded_and_marked_late(tmp_path, users):
    hub = Hub(tmp_path, users, {**DUE, 'show_details = "now"': 'show_details = "after_due_date"'})
    (hub.course.root / "term.toml").write_text((hub.course.root / "term.toml").read_text() + BOB_EXTENSION)
    worse = notebook_with(hub.course, "return", "return None and ")
    for student in ("srv_ada", "srv_bob"):
        hub.submit(student, worse)
    hub.serve()
    (ada,), (bob,) = hub.fetch_feedback("srv_ada"), hub.fetch_feedback("srv_bob")
    concealed = "are shown in this feedback after your due date"
    assert concealed in bob and concealed not in ada  # bob's own due date (his extension) has not passed; ada's has
    assert "after the due date" in ada and "after the due date" not in bob  # late = "grade": graded, marked late
    assert [state for _, state, _ in hub.states().values()] == [RELEASED, RELEASED]


@pytest.mark.slow
def test_a_late_hand_in_held_is_kept_for_the_ta_who_grades_it(tmp_path, users):
    hub = Hub(tmp_path, users, {**DUE, SERVE_TABLE: f'[serve]\nlate = "hold"\n\n{SERVE_TABLE}'})
    hub.submit("srv_ada")
    result = hub.serve()
    assert "held     srv_ada/01_geometry" in result.stdout and hub.graded_events() == []
    assert [state for _, state, _ in hub.states().values()] == [HELD]
    assert not (hub.course.feedback / "srv_ada").exists()
    assert not (hub.course.root / "submitted" / "srv_ada").exists()  # held: in handins/ only, until the TA says so
    chosen = run(str(BIN / "course-grader"), "use-handin", "--root", str(hub.course.root), "srv_ada", ASSIGNMENT, "1",
                 cwd=tmp_path)
    assert "hand-in 1 of srv_ada to 01_geometry is in submitted/" in chosen.stdout, chosen.stdout
    graded = run(str(BIN / "course-grader"), "grade", "--root", str(hub.course.root), "--jobs", "1", cwd=tmp_path)
    assert "1 graded" in graded.stdout and grades(hub.course)["srv_ada"] == "8"


# ---------------------------------------------------------------------------- a hostile hand-in beside an honest one


STUCK = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"


@pytest.mark.slow
def test_an_honest_hand_in_is_released_while_a_hostile_one_still_runs(tmp_path, users):
    hub = Hub(tmp_path, users, {"cell_seconds = 15": "cell_seconds = 10", "notebook_seconds = 180": "notebook_seconds = 40"})
    hostile = solved_notebook(hub.course, ASSIGNMENT, "geometry")
    first_solution = next(c for c in hostile.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    first_solution.source = STUCK + first_solution.source
    hub.submit("srv_cy", hostile)  # first: the first worker takes it
    hub.submit("srv_bob")
    hub.serve(jobs=2)  # bob's on the second worker
    journal = hub.journal()
    try:
        number = {h.student: h.seq for h in journal.in_state(RELEASED)}
        order = [(handin, kind) for _, _, handin, kind, _ in journal.events() if kind in (GRADED, RELEASED)]
    finally:
        journal.close()
    assert set(number) == {"srv_cy", "srv_bob"}
    assert order.index((number["srv_bob"], RELEASED)) < order.index((number["srv_cy"], GRADED)), order
    assert "8 / 8" in hub.fetch_feedback("srv_bob")[0]


# ---------------------------------------------------------------------------- the LMS drop folder


@pytest.mark.slow
@pytest.mark.xdist_group(RESTARTS)
def test_an_lms_download_dropped_in_the_drop_folder_is_graded_and_a_link_there_refused(tmp_path, users):
    hub = Hub(tmp_path, users, {SERVE_TABLE: f'[serve]\ndrop_folder = "lms-drop"\n\n{SERVE_TABLE}'})
    drop = hub.course.root / "lms-drop" / ASSIGNMENT
    drop.mkdir(parents=True)
    nbformat.write(solved_notebook(hub.course, ASSIGNMENT, "geometry"), drop / "lovelaceada_1001_77_geometry.ipynb")
    outside = tmp_path / "outside.ipynb"
    outside.write_text("the TA's file")
    (drop / "hopperg_1002_78_geometry.ipynb").symlink_to(outside)
    result = hub.serve()
    assert "graded   1001/01_geometry: 8/8" in result.stdout, result.stdout + result.stderr
    states = {student: (state, reason) for student, state, reason in hub.states().values()}
    assert states["1001"][0] == RELEASED and "no exchange hand-in" in states["1001"][1]
    assert states["1002"][0] == REFUSED and "following a link" in states["1002"][1]
    assert grades(hub.course) == {"1001": "8"}
    again = hub.serve()  # the same files: nothing new
    number = next(seq for seq, (student, _, _) in hub.states().items() if student == "1001")
    assert "graded   " not in again.stdout and hub.graded_events() == [number]


# ---------------------------------------------------------------------------- a worker that dies


@pytest.mark.slow
@pytest.mark.xdist_group(RESTARTS)
def test_a_worker_dying_twice_on_a_hand_in_fails_it_with_the_reason_and_grades_the_others(tmp_path, users):
    hub = Hub(tmp_path, users)
    hub.submit("srv_cy")
    hub.submit("srv_bob")
    result = hub.serve(jobs=2, env={"COURSE_GRADER_FAULT": f"kill-worker:srv_cy/{ASSIGNMENT}"})  # batch.py's fault, every try
    assert "graded   srv_bob/01_geometry: 8/8" in result.stdout, result.stdout + result.stderr
    states = {student: (state, reason) for student, state, reason in hub.states().values()}
    assert states["srv_cy"][0] == RELEASED and "the grading worker died" in states["srv_cy"][1]
    (page,) = hub.fetch_feedback("srv_cy")
    assert "<title>Not graded (it could not be graded): 01_geometry</title>" in page and "the grading worker died" in page
    assert "You have no graded attempt at this assignment yet" in page and "Graded attempts used: 1" in page
    assert sorted(hub.graded_events()) == [1, 2]
