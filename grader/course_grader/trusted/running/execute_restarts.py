"""Kernel deaths in ``ResilientExecute``: a cell that kills the kernel costs that cell only.

The kernel is restarted and the earlier cells that had worked are replayed, at most ``max_restarts`` times and
within the time budget; after that the remaining cells are given up.
"""

from __future__ import annotations

import copy

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from ..judging.grading_metadata import GAVE_UP

RELEASE_FAILED_FRAMES = """\
import gc as _gc, sys as _sys, traceback as _traceback
if getattr(_sys, "last_traceback", None) is not None:
    _traceback.clear_frames(_sys.last_traceback)
for _name in ("last_type", "last_value", "last_traceback", "last_exc"):
    if hasattr(_sys, _name):
        setattr(_sys, _name, None)
del _gc.garbage[:], _name, _sys, _traceback
_gc.collect()
del _gc
"""


class KernelRestarts:
    """Restarts and replays of ``ResilientExecute`` (a mixin of it: the kernel, the cells and the budget are its)."""

    def _start_restarts(self) -> None:
        self._restarts = 0
        self._gave_up = ""
        self._worked: set[int] = set()  # cells that ran without error: what a replay runs again

    def _release_failed_frames(self) -> None:
        """IPython keeps the last traceback, and with it every local of the failing frames (a
        MemoryError's huge list, say): free them, so the next cells get their memory back."""
        try:  # straight through the kernel client: nothing is written into the notebook
            run_sync(self.kc.execute_interactive)(RELEASE_FAILED_FRAMES, silent=True, store_history=False,
                                                  timeout=self._deadline.bound(self.timeout), output_hook=lambda message: None)
        except Exception:  # noqa: BLE001 - best effort; the next cell meets the same kernel and says so
            pass

    def _restart_and_replay(self, index: int, *, counted: bool = True) -> None:
        """Start a fresh kernel and rebuild its state from the earlier cells that had worked.

        After ``max_restarts`` restarts (``counted`` ones), or when the time budget is spent,
        the remaining cells are given up instead: a notebook that keeps killing its kernel
        cannot make the grader run its slow cells again and again.
        """
        if self._budget_spent():
            self._gave_up = self._gave_up or self._budget_spent()
            return
        self._restarts += counted
        if self._restarts > self.max_restarts:
            self._hit(GAVE_UP)
            self._gave_up = (f"this cell was not run: the kernel died {self._restarts} times, and the grader gives up "
                             f"after {self.max_restarts} restarts")
            return
        if not self._restart_kernel():
            return
        for earlier_index in sorted(self._worked):
            if earlier_index >= index or self._reason_to_skip():
                break
            original = self.nb.cells[earlier_index]
            try:  # a copy: the notebook keeps the outputs of the first run
                self.execute_cell(copy.deepcopy(original), earlier_index, store_history=False)
            except (DeadKernelError, CellTimeoutError):  # it failed again: go on without the rest of the state
                if not self._budget_spent():
                    self._restart_kernel()
                return
            finally:
                self.nb.cells[earlier_index] = original

    def _restart_kernel(self) -> bool:
        """A new kernel and a new client for it; the old client is closed first, before the new kernel exists.

        A socket of the old kernel left open reconnects to its endpoint, which names a descriptor of this
        process (``SandboxKernelManager._retire_socket_fds``): none is left open once the new kernel is up.
        Its start may take what is left of the budget; returns whether it is up (a start the deadline stopped
        gives up the remaining cells).
        """
        self.kc.stop_channels()
        self.startup_timeout = self._deadline.whole_seconds(self._waits["startup"])
        self._note("kernel restarted")
        manager = self.km
        try:
            run_sync(self.km.restart_kernel)(now=True)
            self.start_new_kernel_client()
        except Exception:
            # nbclient's clean-up of a client that never got ready drops the manager too; the notebook's own clean-up
            # at its end needs it (else an assertion of nbclient's fails the whole grading: a loaded machine's restart)
            self.km = manager
            spent = self._budget_spent()
            if not spent:
                raise
            self._gave_up = self._gave_up or spent
            return False
        return True
