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
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import fixture_course

from perceptron_course.grading.trusted.course.course import Course
from perceptron_course.grading.trusted.course.example_class import copy_course, solved_notebook
from perceptron_course.grading.trusted.gradebook.writer_lock import LOCK_FILE
from perceptron_course.grading.trusted.serving.journal import (GRADED, HELD, LIMITED, REFUSED, RELEASED, SUPERSEDED,
                                                               Journal)

BIN = Path(sys.executable).parent
COURSE_ID = "fixture"  # tests/fixtures/course/term.toml
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
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    return {name: pwd.getpwnam(name).pw_uid for name in STUDENTS}


class Hub:
    """A course, its exchange and the students' homes, all in one temporary folder."""

    def __init__(self, root: Path, users: dict[str, int], term_edits: dict[str, str] | None = None) -> None:
        self.root, self.users = root, users
        self.exchange = root / "exchange"
        self.exchange.mkdir()
        self.exchange.chmod(0o1777)
        self.course = copy_course(fixture_course(), root / "course")
        config = self.course.root / "nbgrader_config.py"
        config.write_text(config.read_text() + f"\nc.Exchange.root = {str(self.exchange)!r}\n")
        for old, new in (term_edits or {}).items():
            self.edit_term(old, new)
        run(str(BIN / "perceptron-course"), "release", "--root", str(self.course.root), "--assignment", ASSIGNMENT,
            cwd=self.course.root)
        run(str(BIN / "nbgrader"), "release_assignment", ASSIGNMENT, f"--course={COURSE_ID}", cwd=self.course.root)
        self.handed_in = 0

    def edit_term(self, old: str, new: str) -> None:
        term = self.course.root / "term.toml"
        text = term.read_text(encoding="utf-8")
        assert old in text, old
        term.write_text(text.replace(old, new, 1), encoding="utf-8")

    def flags(self, student: str) -> list[str]:
        return [f"--course={COURSE_ID}", f"--Exchange.root={self.exchange}", f"--Exchange.cache={self.root / ('cache-' + student)}"]

    def submit(self, student: str, notebook=None, *, owner: int | None = None) -> Path:
        """``nbgrader submit`` of ``notebook`` (default: the solved one) by ``student``; returns the inbound folder."""
        home = self.root / student
        if not (home / ASSIGNMENT).is_dir():
            home.mkdir(exist_ok=True)
            run(str(BIN / "nbgrader"), "fetch_assignment", ASSIGNMENT, *self.flags(student), cwd=home)
        nbformat.write(notebook if notebook is not None else solved_notebook(self.course, ASSIGNMENT, "geometry"),
                       home / ASSIGNMENT / "geometry.ipynb")
        inbound = self.exchange / COURSE_ID / "inbound"
        before = set(inbound.iterdir()) if inbound.is_dir() else set()
        run(str(BIN / "nbgrader"), "submit", ASSIGNMENT, *self.flags(student), f"--student={student}", cwd=home)
        (folder,) = set(inbound.iterdir()) - before
        uid = self.users[student] if owner is None else owner
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, uid, -1)
        self.handed_in += 1
        return folder

    def fetch_feedback(self, student: str) -> list[str]:
        """The feedback pages ``nbgrader fetch_feedback`` brings ``student``, newest hand-in last."""
        home = self.root / student
        run(str(BIN / "nbgrader"), "fetch_feedback", ASSIGNMENT, *self.flags(student), f"--student={student}", cwd=home)
        return [path.read_text(encoding="utf-8") for path in sorted((home / ASSIGNMENT / "feedback").glob("*/*.html"))]

    def serve(self, *extra: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
        return run(str(BIN / "perceptron-course"), "serve", "--root", str(self.course.root), "--once", "--jobs", "2", *extra,
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

    worse = notebook_with(hub.course, "return", "return None and ")
    hub.submit("srv_ada", worse)
    result = hub.serve()
    assert "graded   srv_ada/01_geometry:" in result.stdout
    pages = hub.fetch_feedback("srv_ada")
    assert len(pages) == 2 and "8 / 8" not in pages[-1]
    assert float(grades(hub.course)["srv_ada"]) < 8  # latest counts (the default)
    assert sorted(hub.graded_events()) == [1, 2]

    status = run(str(BIN / "perceptron-course"), "status", "--root", str(hub.course.root), cwd=tmp_path).stdout
    assert "service: not running" in status and "waiting: 0" in status and "done in the last hour: 2" in status
