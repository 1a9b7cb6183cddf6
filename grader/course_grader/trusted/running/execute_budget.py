"""The time budget of ``ResilientExecute``: one deadline for the whole notebook, replays and checks included.

Every wait is bounded by the time left (``deadline.py``); at the deadline the kernel is killed from another thread
and the cell's waits end at once. What the grader saw of the budget is recorded in the notebook's metadata
(``grading_metadata.TIME_BUDGET``).
"""

from __future__ import annotations

import asyncio

from jupyter_core.utils import ensure_async
from nbclient.exceptions import CellExecutionComplete, DeadKernelError

from ..judging.grading_metadata import BUDGET, STOPPED_AT_DEADLINE, TIMEOUT
from .deadline import Deadline

#: ``ename`` of a cell stopped by the deadline.
BUDGET_ERROR = "TimeBudgetExceeded"


class TimeBudget:
    """The deadline of ``ResilientExecute`` (a mixin of it: ``time_budget``, ``timeout`` and the kernel are its)."""

    def _start_budget(self) -> None:
        self._deadline = Deadline(self.time_budget)  # once: every wait below is bounded by what is left of it
        self._waits = {"iopub": self.iopub_timeout, "startup": self.startup_timeout}  # as configured (put back at the end)
        self._stopped_at_deadline = False  # set by the watch (another thread) when it killed the kernel
        self._timeline: list[list] = []  # [seconds since the budget started, what happened]
        self.timeout_func = self._remaining_timeout

    def _end_budget(self) -> dict:
        """The waits put back as configured; what the grader saw of the budget (``_budget_record``)."""
        self._note("the notebook ended")
        self.iopub_timeout, self.startup_timeout = self._waits["iopub"], self._waits["startup"]
        return self._budget_record()

    def _note(self, event: str) -> None:
        """Add ``event`` to the notebook's timeline (``TIME_BUDGET`` in its metadata)."""
        self._timeline.append([round(self._deadline.elapsed(), 3), event])

    def _budget_record(self) -> dict:
        """What the grader saw of the time budget: its length, whether it stopped the kernel, and the timeline."""
        return {"seconds": self._deadline.seconds, "stopped": STOPPED_AT_DEADLINE if self._stopped_at_deadline else "",
                "timeline": list(self._timeline)}

    def _stop_at_deadline(self) -> None:
        """At the deadline (from the watch's thread): kill the kernel from here, whatever it runs or ignores."""
        self._stopped_at_deadline = True
        self._hit(BUDGET)
        self._note(STOPPED_AT_DEADLINE)
        process = getattr(getattr(getattr(self, "km", None), "provisioner", None), "process", None)
        if process is not None:
            try:
                process.kill()  # a warm kernel: its zygote kills it; a cold one: bubblewrap, and the kernel with it
            except (OSError, ValueError):
                pass
        loop = getattr(self, "_loop", None)
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._stop_waiting)
            except RuntimeError:  # that loop is closed: no cell is waiting
                pass

    def _stop_waiting(self) -> None:
        """(In the event loop, at the deadline) wake the running cell's watch (``_async_poll_kernel_alive``)."""
        reached = getattr(self, "_deadline_reached", None)
        if reached is not None:
            reached.set()

    async def _async_poll_kernel_alive(self) -> None:
        """nbclient's watch of a running cell, which ends the wait for its reply when the kernel is found dead (it
        looks every second) and now also at once when the deadline killed it: nbclient then raises ``DeadKernelError``
        rather than a second later, or when it has read what the dead kernel had queued."""
        self._loop = asyncio.get_running_loop()  # where the deadline's watch wakes this one (_stop_at_deadline)
        self._deadline_reached = reached = asyncio.Event()
        while not self._stopped_at_deadline:
            try:
                await asyncio.wait_for(reached.wait(), 1)
                break
            except asyncio.TimeoutError:
                try:
                    await self._async_check_alive()
                except DeadKernelError:
                    break
        self.task_poll_for_reply.cancel()

    def _budget_spent(self) -> str:
        """Why no more student code may run (the budget is spent), or ``""``."""
        if not self._deadline.passed():
            return ""
        self._hit(BUDGET)
        return (f"this cell was not run: the grader's time budget for the notebook ({self.time_budget} s, "
                "restarts and replays included) ran out")

    async def _async_handle_timeout(self, timeout, cell=None):
        self._hit(TIMEOUT)
        return await super()._async_handle_timeout(timeout, cell)

    def _remaining_timeout(self, cell) -> int:
        """The time limit of a cell that starts now, and the wait for its last outputs, bounded by the time left."""
        self.iopub_timeout = self._deadline.whole_seconds(self._waits["iopub"], at_least=0)
        return self._deadline.whole_seconds(self.timeout or self.time_budget)

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        """nbclient's reading of a cell's outputs, which lets the event loop run after each message and stops at the deadline.

        A kernel that sends without end always has a message ready, and awaiting what is ready does not
        yield: nbclient's loop then read on and on, and nothing else ran in the event loop, neither the
        cell's time limit, nor the check that the kernel is alive, nor the deadline's end of the wait
        (``_stop_waiting``): a killed kernel's cell went on until the grader had read every message
        ZeroMQ had queued, seconds past the budget. Once the kernel is killed at the deadline, nothing
        more is read (and the cell's watch ends the wait for its reply).
        """
        while not self._stopped_at_deadline:
            msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=None))
            if msg["parent_header"].get("msg_id") == parent_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)
                except CellExecutionComplete:
                    return
            await asyncio.sleep(0)
