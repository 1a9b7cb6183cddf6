"""Parallel grading gives exactly the serial result, survives a dying worker, and takes any process executor."""

import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from conftest import fixture_course
from nbgrader.api import Gradebook

from course_grader.trusted.running import kernel_pool, sandbox
from course_grader.trusted.running.batch import FAULT_VARIABLE
from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade

ASSIGNMENTS = ["01_geometry", "02_algorithm"]


def everything(course, outcomes) -> dict:
    """All a grading run leaves behind: outcomes, grades.csv, gradebook scores, feedback pages."""
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        scores = {
            (submission.student.id, submission.assignment.name, grade.notebook.name, grade.name): (grade.auto_score, grade.needs_manual_grade)
            for assignment in gradebook.assignments
            for submission in assignment.submissions
            for notebook in submission.notebooks
            for grade in notebook.grades
        }
    return {
        "outcomes": sorted((o.student, o.assignment, o.status, o.score, o.max_score, o.reason,
                            tuple(sorted(o.cell_scores.items())), tuple(p.name for p in o.feedback)) for o in outcomes),
        "grades.csv": course.grades_csv.read_text(),
        "gradebook": scores,
        "feedback": sorted(str(p.relative_to(course.root)) for p in course.feedback.rglob("*.html")),
        "autograded": sorted(str(p.relative_to(course.root)) for p in (course.root / "autograded").rglob("*.ipynb")),
    }


def fresh_class(tmp_path, name):
    course = copy_course(fixture_course(), tmp_path / name)
    build_example_class(course, fixture_course() / "example_class")
    return course


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    course = fresh_class(tmp_path_factory.mktemp("serial"), "course")
    return everything(course, grade(course, assignments=ASSIGNMENTS, jobs=1, progress=False))


@pytest.mark.slow
class RecordingPool(ProcessPoolExecutor):
    """The batch's process pool, remembering the pids of its workers (other tests' workers may die meanwhile)."""

    workers: list[int] = []

    def shutdown(self, *args, **kwargs):
        RecordingPool.workers += list(getattr(self, "_processes", None) or {})
        return super().shutdown(*args, **kwargs)


@pytest.fixture
def recorded_workers(monkeypatch):
    from course_grader.trusted.running import batch

    RecordingPool.workers = []
    monkeypatch.setattr(batch, "ProcessPoolExecutor", RecordingPool)
    return RecordingPool.workers


def test_two_workers_give_the_serial_result(serial, tmp_path, recorded_workers):
    course = fresh_class(tmp_path, "course")
    parallel = everything(course, grade(course, assignments=ASSIGNMENTS, jobs=2, progress=False))
    assert parallel == serial
    assert len(serial["outcomes"]) == 10 and len(serial["gradebook"]) > 0
    assert not list(course.root.glob(".grading-*")), "work areas are cleaned up"
    assert recorded_workers, "the batch ran in a pool of workers"
    assert abandoned_zygote_leftovers(recorded_workers) == [], "the workers' zygotes leave no folder and no cgroup behind"


def abandoned_zygote_leftovers(workers: list[int]) -> list[Path]:
    """Zygote work folders, kernel spec folders and sandbox cgroups of ``workers`` (gone by now) still on the machine."""
    def ours_and_gone(name: str, prefix: str) -> bool:
        return sandbox.abandoned(name, prefix) and int(name[len(prefix):].split("-")[0]) in workers

    folders = [path for prefix in (kernel_pool.WORK_PREFIX, kernel_pool.KERNEL_SPEC_PREFIX)
               for path in Path(tempfile.gettempdir()).glob(f"{prefix}*") if ours_and_gone(path.name, prefix)]
    groups = [path for parent in sandbox._cgroup_parents() for path in parent.glob(f"{sandbox.CGROUP_PREFIX}*")
              if ours_and_gone(path.name, sandbox.CGROUP_PREFIX)]
    return folders + groups


def test_the_folders_of_a_grading_process_that_died_are_removed_and_a_living_ones_kept(tmp_path, monkeypatch):
    # A SIGKILLed worker or service leaves its kernel spec folder and its zygote's work folder in the temporary
    # folder; the next batch removes those whose process is gone, and no other.
    import subprocess

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    finished = subprocess.Popen(["true"])
    finished.wait()
    gone, alive = finished.pid, os.getpid()
    folders = {(prefix, pid): tmp_path / f"{prefix}{pid}-abc" for prefix in (kernel_pool.WORK_PREFIX, kernel_pool.KERNEL_SPEC_PREFIX)
               for pid in (gone, alive)}
    for folder in folders.values():
        (folder / "kernels").mkdir(parents=True)
    kernel_pool.remove_abandoned_zygotes()
    assert {key for key, folder in folders.items() if folder.exists()} == {(prefix, alive) for prefix, _ in folders}


@pytest.mark.slow
def test_a_dying_worker_loses_only_its_submission(serial, tmp_path, monkeypatch, recorded_workers):
    course = fresh_class(tmp_path, "course")
    monkeypatch.setenv(FAULT_VARIABLE, "kill-worker:ben_alternative/02_algorithm")
    outcomes = grade(course, assignments=ASSIGNMENTS, jobs=2, progress=False)
    victim = [o for o in outcomes if (o.student, o.assignment) == ("ben_alternative", "02_algorithm")]
    assert victim[0].status == "failed" and "grading worker died" in victim[0].reason
    assert "--student ben_alternative --assignment 02_algorithm" in victim[0].reason
    others = [row for row in everything(course, outcomes)["outcomes"] if row[:2] != ("ben_alternative", "02_algorithm")]
    assert others == [row for row in serial["outcomes"] if row[:2] != ("ben_alternative", "02_algorithm")]
    assert abandoned_zygote_leftovers(recorded_workers) == [], "a killed worker's zygote folder and cgroups are removed"


@pytest.mark.slow
def test_any_process_executor_can_run_the_jobs(serial, tmp_path):
    course = fresh_class(tmp_path, "course")
    with ProcessPoolExecutor(max_workers=2) as executor:
        outcomes = grade(course, assignments=ASSIGNMENTS, executor=executor, progress=False)
    assert everything(course, outcomes) == serial
    assert os.environ.get(FAULT_VARIABLE) is None


def test_a_worker_failure_names_what_failed_and_how_to_grade_again():
    from concurrent.futures.process import BrokenProcessPool

    from course_grader.trusted.running.batch import GradeJob, worker_failure
    from course_grader.trusted.running.kernel_pool import ZygoteError

    job = GradeJob("/course", "/course/.grading-x/job-0", "/t.db", "ada", "01_geometry", True, 3072)
    died = worker_failure(job, 8.0, BrokenProcessPool("gone"))
    failed = worker_failure(job, 8.0, ZygoteError("the grading zygote did not start a kernel in time"))
    assert died.status == failed.status == "failed" and died.score == failed.score == 0.0
    assert "grading worker died (BrokenProcessPool" in died.reason
    assert "ZygoteError: the grading zygote did not start a kernel in time" in failed.reason
    assert "died" not in failed.reason
    for outcome in (died, failed):
        assert outcome.reason.endswith("grade it again with --student ada --assignment 01_geometry")


@pytest.mark.skipif(os.geteuid() != 0, reason="warm kernels (zygotes) are a root grader's")
def test_a_batch_pool_starts_each_workers_zygote_before_its_first_job():
    # While the main process records the source cells and copies the gradebook (about a second), each worker
    # starts its zygote (about a second too): the first jobs find them warm.
    from conftest import _command_line, descendants

    from course_grader.trusted.running.batch import warm_pool
    from course_grader.trusted.running.sandbox import choose_isolation

    def zygotes(workers) -> list[int]:  # the zygotes' own processes (each inside a bubblewrap process)
        return [pid for worker in workers for pid in descendants(worker)
                if b"in_sandbox.zygote" in _command_line(pid) and not _command_line(pid).startswith(b"/usr/bin/bwrap")]

    with warm_pool(2, choose_isolation(unsandboxed=False)) as pool:
        workers = list(pool._processes)  # no job was submitted
        deadline = time.monotonic() + 120
        while len(zygotes(workers)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers) == 2 and len(zygotes(workers)) == 2
        started = zygotes(workers)
    assert not [pid for pid in started if os.path.exists(f"/proc/{pid}")]  # stopped with their workers


def test_a_batch_with_a_submission_never_graded_starts_its_pool_before_the_fingerprints(tmp_path, monkeypatch):
    # The fingerprints of a class take about a second: the workers (and, as root, their zygotes) start meanwhile.
    # A batch where every submission was graded before starts no pool before knowing that one changed.
    import multiprocessing
    import runpy

    from course_grader.trusted import pipeline
    from course_grader.trusted.course.example_class import build_submission

    course = copy_course(fixture_course(), tmp_path / "course")
    recipe = runpy.run_path(str(fixture_course() / "example_class" / "ada_reference.py"))
    build_submission(course, recipe, "01_geometry", course.submitted / "ada" / "01_geometry")
    processes_at_fingerprint = []
    real_fingerprint = pipeline.fingerprint

    def watched_fingerprint(*args):
        processes_at_fingerprint.append(len(multiprocessing.active_children()))
        return real_fingerprint(*args)

    monkeypatch.setattr(pipeline, "fingerprint", watched_fingerprint)
    first = grade(course, progress=False, jobs=2)
    assert [outcome.status for outcome in first] == ["graded"] and processes_at_fingerprint == [2]
    processes_at_fingerprint.clear()
    again = grade(course, progress=False, jobs=2)
    assert list(again) == [] and again.skipped == [("ada", "01_geometry")] and processes_at_fingerprint == [0]


def test_jobs_not_yet_submitted_when_the_pool_breaks_are_graded_again_or_reported():
    # A worker can die (its job killed it) before the batch has submitted the rest of its jobs: the pool
    # then refuses them. They are lost with it, as the jobs it was running: retried, or on the last try reported.
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from course_grader.trusted.running.batch import GradeJob, _submit_all

    class BreaksAfterOneJob:
        def __init__(self) -> None:
            self.submitted = 0

        def submit(self, function, job):
            if self.submitted:
                raise BrokenProcessPool("a child process terminated abruptly")
            self.submitted += 1
            future = Future()
            future.set_exception(BrokenProcessPool("a child process terminated abruptly"))
            return future

        def shutdown(self, **options) -> None:
            pass

    jobs = [GradeJob("/c", f"/c/.grading-x/job-{k}", "/c/t.db", student, "01_geometry", True, 3072)
            for k, student in enumerate(["ada", "ben", "cy"])]
    outcomes, reported = {}, []
    lost = _submit_all(jobs, None, 2, outcomes, lambda assignment: 8.0, lambda job, outcome: reported.append(job.key),
                       pool=BreaksAfterOneJob())
    assert lost == jobs and outcomes == {} and reported == []
    lost = _submit_all(jobs, None, 1, outcomes, lambda assignment: 8.0, lambda job, outcome: reported.append(job.key),
                       last_try=True, pool=BreaksAfterOneJob())
    assert lost == [] and sorted(reported) == [job.key for job in jobs]
    assert all(outcomes[job.key].status == "failed" and "grading worker died" in outcomes[job.key].reason for job in jobs)
