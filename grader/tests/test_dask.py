"""Grading on a real Dask cluster (worker processes) gives exactly the serial result; a worker
killed mid-batch costs nothing (Dask runs its submission again); a submission that kills every
worker it runs on costs that submission only."""

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import dask
import pytest
from distributed import Client, LocalCluster
from test_parallel import everything, fresh_class

from course_grader.trusted.running import kernel_pool
from course_grader.trusted.running.batch import FAULT_VARIABLE
from course_grader.trusted.pipeline import grade

ASSIGNMENTS = ["01_geometry"]
VICTIM = ("ben_alternative", "01_geometry")
#: A Dask worker that dies is replaced, and the tasks it was running are run again elsewhere;
#: a task that has been running on this many dead workers is given up (``KilledWorker``).
ALLOWED_FAILURES = 1


def start_cluster() -> LocalCluster:
    """Two worker processes of one thread each, on loopback, the scheduler's HTTP server on a free port.

    ``dashboard_address=None`` would not do: the scheduler's HTTP server (health and metrics routes, the dashboard's
    too) still listens, on 8787, and when another Dask holds that port its "Port 8787 is already in use" warning is an
    error here (``filterwarnings = error``). Port 0 is a free one, whatever else runs on the machine.
    """
    return LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                        dashboard_address="127.0.0.1:0", worker_dashboard_address=None)


def without(submission: tuple[str, str], result: dict) -> dict:
    """What a grading run left, minus every trace of one submission."""
    student, assignment = submission

    def other(item) -> bool:
        text = item if isinstance(item, str) else "/".join(map(str, item[:2]))
        return f"{student}/{assignment}" not in text

    return {
        "outcomes": [row for row in result["outcomes"] if tuple(row[:2]) != submission],
        "grades.csv": [line for line in result["grades.csv"].splitlines() if not line.startswith(f"{student},{assignment},")],
        "gradebook": {key: value for key, value in result["gradebook"].items() if key[:2] != submission},
        "feedback": [path for path in result["feedback"] if other(path)],
        "autograded": [path for path in result["autograded"] if other(path)],
    }


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    course = fresh_class(tmp_path_factory.mktemp("serial"), "course")
    return everything(course, grade(course, assignments=ASSIGNMENTS, jobs=1, progress=False))


@pytest.mark.slow
def test_a_dask_cluster_gives_the_serial_result(serial, tmp_path):
    course = fresh_class(tmp_path, "course")
    with start_cluster() as cluster, Client(cluster) as client:
        outcomes = grade(course, assignments=ASSIGNMENTS, executor=client.get_executor(), progress=False)
        ran_on = client.run(lambda: __import__("os").getpid())
        forked = client.run(kernel_pool.kernels_forked_here)
    assert len(ran_on) == 2 and len(set(ran_on.values())) == 2, "two worker processes"
    # each worker grades with warm kernels, forked by its own zygote: one kernel a graded notebook at least
    assert sum(forked.values()) >= 4, forked
    assert everything(course, outcomes) == serial
    assert {row[0]: row[2] for row in serial["outcomes"]} == {
        "ada_reference": "graded", "ben_alternative": "graded", "cy_buggy": "graded", "dee_untouched": "graded",
        "eve_broken": "failed",  # not a notebook: a row with the reason, as in a serial run
    }
    assert not list(course.root.glob(".grading-*")), "work areas are cleaned up"


def worker_pids(client: Client) -> dict[str, int]:
    return client.run(os.getpid)


#: A worker killed on purpose leaves distributed's end of its connection to be collected unclosed: that socket's
#: ResourceWarning is Dask's, not these tests' subject (what the batch loses); when the collector runs is chance.
DASK_S_UNCLOSED_SOCKET = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.mark.slow
@DASK_S_UNCLOSED_SOCKET
def test_a_worker_killed_mid_batch_on_dask_loses_nothing(serial, tmp_path):
    # As the kernel's out-of-memory killer would: SIGKILL a worker while it grades a submission.
    # Dask replaces the worker and runs that submission again elsewhere; the result is the serial one.
    course = fresh_class(tmp_path, "course")
    with start_cluster() as cluster, Client(cluster) as client, ThreadPoolExecutor(max_workers=1) as background:
        pids = worker_pids(client)
        grading = background.submit(grade, course, assignments=ASSIGNMENTS, executor=client.get_executor(), progress=False)
        busy = []
        while not busy and not grading.done():
            busy = [address for address, keys in client.processing().items() if keys]
            time.sleep(0.05)
        assert busy, "a worker was grading when the batch was still running"
        os.kill(pids[busy[0]], signal.SIGKILL)
        outcomes = grading.result()
        assert pids[busy[0]] not in worker_pids(client).values(), "the killed worker is gone"
    assert everything(course, outcomes) == serial


@pytest.mark.slow
@DASK_S_UNCLOSED_SOCKET
def test_a_worker_killed_on_dask_loses_only_its_submission(serial, tmp_path, monkeypatch):
    # The victim kills every worker that grades it: Dask runs it again on a fresh worker,
    # gives up after ALLOWED_FAILURES, and the grader reports it. One task per worker at a
    # time (worker-saturation 1.0), so a dying worker holds no other submission; a submission
    # a worker was running when it died would be run again by Dask, not lost.
    course = fresh_class(tmp_path, "course")
    monkeypatch.setenv(FAULT_VARIABLE, f"kill-worker:{VICTIM[0]}/{VICTIM[1]}")
    settings = {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES, "distributed.scheduler.worker-saturation": 1.0}
    with dask.config.set(settings), start_cluster() as cluster, Client(cluster) as client:
        outcomes = grade(course, assignments=ASSIGNMENTS, executor=client.get_executor(), progress=False)
    victim = [o for o in outcomes if (o.student, o.assignment) == VICTIM]
    assert len(victim) == 1 and victim[0].status == "failed" and victim[0].score == 0
    assert "grading worker died (KilledWorker" in victim[0].reason
    assert f"--student {VICTIM[0]} --assignment {VICTIM[1]}" in victim[0].reason
    result = everything(course, outcomes)
    assert without(VICTIM, result) == without(VICTIM, serial)
    assert len(without(VICTIM, result)["outcomes"]) == 4
    assert not any(key[:2] == VICTIM for key in result["gradebook"]), "no scores for the lost submission"
