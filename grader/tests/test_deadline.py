"""A notebook's time budget is one deadline: computed once, every wait bounded by the time left, the kernel killed at it.

No test here measures wall time: a fake clock shows the bounds, and a notebook that ignores every signal shows,
in what the grader recorded (its metadata), that it was stopped at the deadline and nothing ran after.
"""

import asyncio
import threading
import types

import pytest

from test_preprocessors import errors, execute

from course_grader.trusted.running.deadline import Deadline, enforced
from course_grader.trusted.judging.grading_metadata import BUDGET, GRADING_METADATA, STOPPED_AT_DEADLINE, TIME_BUDGET
from course_grader.trusted.running.execute_budget import BUDGET_ERROR
from course_grader.trusted.running.executor import ResilientExecute


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_deadline_is_fixed_once_and_bounds_every_wait():
    clock = FakeClock()
    deadline = Deadline(180, clock)
    assert deadline.at == 1180.0 and deadline.left() == 180.0 and not deadline.passed()
    clock.now = 1170.0
    assert deadline.at == 1180.0 and deadline.bound(15) == 10.0 and deadline.bound(4) == 4.0
    assert deadline.whole_seconds(15) == 10 and deadline.elapsed() == 170.0
    clock.now = 1179.5
    assert deadline.bound(15) == 0.5 and deadline.whole_seconds(15) == 1 and deadline.whole_seconds(4, at_least=0) == 1
    clock.now = 1181.0
    assert deadline.passed() and deadline.left() == 0.0 and deadline.bound(15) == 0.0
    assert deadline.whole_seconds(4, at_least=0) == 0 and deadline.whole_seconds(15) == 1  # 0 would turn nbclient's limit off


def _executor_at(clock: FakeClock, **traits) -> ResilientExecute:
    """A ResilientExecute whose budget started on ``clock`` (as ``preprocess`` starts it), with no kernel."""
    executor = ResilientExecute(grading_secret="00" * 16, require_grading_kernel=False, **traits)
    executor._deadline = Deadline(executor.time_budget, clock)
    executor._waits = {"iopub": executor.iopub_timeout, "startup": executor.startup_timeout}
    executor._gave_up, executor._limits, executor._timeline = "", [], []
    executor._restarts, executor._stopped_at_deadline = 0, False
    return executor


def test_a_cell_s_time_limit_and_the_wait_for_its_outputs_are_bounded_by_the_time_left():
    clock = FakeClock()
    executor = _executor_at(clock, timeout=15, time_budget=180, iopub_timeout=4)
    assert executor._remaining_timeout(None) == 15 and executor.iopub_timeout == 4
    clock.now += 172.5
    assert executor._remaining_timeout(None) == 8 and executor.iopub_timeout == 4
    clock.now += 5.0
    assert executor._remaining_timeout(None) == 3 and executor.iopub_timeout == 3
    clock.now += 10.0
    assert executor._remaining_timeout(None) == 1 and executor.iopub_timeout == 0
    assert "time budget for the notebook (180 s" in executor._reason_to_skip() and BUDGET in executor._limits


def test_past_the_deadline_no_kernel_is_restarted_and_the_rest_is_given_up():
    clock = FakeClock()
    executor = _executor_at(clock, time_budget=60)
    clock.now += 61
    executor._restart_and_replay(3)  # it has no kernel: a restart would raise
    assert executor._restarts == 0 and "time budget for the notebook (60 s" in executor._gave_up


def test_the_watch_stops_once_at_the_deadline_and_never_after_the_block():
    stopped = threading.Event()
    calls = []

    def stop():
        calls.append(1)
        stopped.set()

    with enforced(Deadline(0.05), stop):
        assert stopped.wait(60)
    assert calls == [1]
    with enforced(Deadline(0.2), stop):
        pass
    assert not threading.Event().wait(0.4) and calls == [1]  # the block ended first: never called


class AlwaysReady:
    """A kernel's IOPub channel with a message always waiting: a kernel that prints without end."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self.read = 0

    async def get_msg(self, timeout=None):
        self.read += 1
        assert self.read < self.LIMIT, "reading the kernel's messages never let another task of the event loop run"
        return {"parent_header": {"msg_id": "another cell"}, "msg_type": "stream", "content": {"text": "x"}}


def test_reading_a_kernel_that_never_stops_sending_lets_the_loop_run_and_stops_at_the_deadline():
    # Awaiting a message that is already there does not yield: nbclient's own loop read on and on, and neither the
    # cell's limit nor the deadline's end of the wait could run until ZeroMQ's backlog was read (endless_print).
    executor = _executor_at(FakeClock())
    channel = AlwaysReady()
    executor.kc = types.SimpleNamespace(iopub_channel=channel)

    async def the_deadline_passes() -> None:  # what the watch's thread sets when it kills the kernel
        executor._stopped_at_deadline = True

    async def main() -> None:
        reading = asyncio.ensure_future(executor._async_poll_output_msg("this cell", None, 0))
        await asyncio.ensure_future(the_deadline_passes())
        await reading

    asyncio.run(main())
    assert channel.read <= 2  # nothing more is read once the kernel was killed at the deadline


def test_the_deadline_ends_the_wait_for_the_running_cell_s_reply_from_its_own_thread():
    # nbclient raises DeadKernelError when that wait is cancelled: at once, not when its watch next finds the kernel
    # gone (every second); and the watch itself ends, leaving no task behind to fail once the kernel's client is gone.
    executor = _executor_at(FakeClock())
    executor.kc = types.SimpleNamespace(is_alive=lambda: True)  # what the watch would see a second later

    async def main() -> None:
        executor.task_poll_for_reply = asyncio.ensure_future(asyncio.Event().wait())  # a reply that never comes
        watching = asyncio.ensure_future(executor._async_poll_kernel_alive())
        await asyncio.sleep(0)  # the watch starts, as it does before any reply can come
        watch = threading.Thread(target=executor._stop_at_deadline)
        watch.start()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(executor.task_poll_for_reply), 60)  # (a cap on waiting, not a measurement)
        await asyncio.wait_for(watching, 60)
        watch.join()

    asyncio.run(main())
    assert executor._stopped_at_deadline and BUDGET in executor._limits


#: A cell that ignores every signal and catches BaseException: no interrupt stops it.
STUBBORN = """
import signal
for number in (signal.SIGINT, signal.SIGTERM):
    signal.signal(number, signal.SIG_IGN)
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
"""


#: The budget of the stubborn notebook: it starts before the kernel does, so it leaves a kernel started on a loaded
#: machine (seconds) the time to reach the stubborn cell; the cell's own limit (60 s) is past it.
STUBBORN_BUDGET_SECONDS = 20


@pytest.mark.slow
def test_a_notebook_that_ignores_every_signal_is_killed_at_the_deadline_and_nothing_runs_after():
    # Its cell's own limit (60 s) is past the budget: the deadline bounds it, then kills the kernel.
    notebook = execute(["x = 1", STUBBORN, "y = 2", "z = 3"], time_budget=STUBBORN_BUDGET_SECONDS, timeout=60,
                       max_restarts=5)
    recorded = notebook.metadata[GRADING_METADATA][TIME_BUDGET]
    assert recorded["seconds"] == STUBBORN_BUDGET_SECONDS and recorded["stopped"] == STOPPED_AT_DEADLINE
    events = [event for _, event in recorded["timeline"]]
    stop = events.index(STOPPED_AT_DEADLINE)
    assert "kernel restarted" not in events and events[-1] == "the notebook ended", events
    assert all(not event.startswith("cell") or event.startswith("cell 1") for event in events[stop:]), events
    assert [error.split(":")[0] for error in errors(notebook.cells[1])] == [BUDGET_ERROR]
    for cell in notebook.cells[2:]:
        assert f"time budget for the notebook ({STUBBORN_BUDGET_SECONDS} s" in errors(cell)[0] and "not run" in errors(cell)[0]
    assert BUDGET in notebook.metadata[GRADING_METADATA]["limits_hit"]
