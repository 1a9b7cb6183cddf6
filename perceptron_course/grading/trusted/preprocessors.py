"""nbgrader preprocessors that keep one bad submission from spoiling its grade or the batch.

They are plugged into nbgrader's autograde by ``nbgrader_config.py``:

- ``ForgetUnknownCells`` (sanitising): a cell whose ``grade_id`` the gradebook does not
  know (pasted from another notebook), or a duplicate that ``DeduplicateIds`` emptied,
  becomes an ordinary cell; nbgrader 0.9 would crash on it.
- ``ResilientExecute`` (executing): when a cell kills the kernel (``os._exit``, a
  segfault) or hangs beyond an interrupt, that cell gets an error, the kernel is
  restarted, the earlier non-test cells are run again, and grading goes on.
- ``StderrAsText``: text a passing test cell wrote to stderr (a warning) is kept
  but shown as ordinary output, so nbgrader does not score the cell 0 for it.
- ``LimitOutputSize``: no output keeps more than ``max_chars`` characters.
"""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

from jupyter_core.paths import jupyter_runtime_dir
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer


KERNEL_DIED = "KernelDied"
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


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_test_cell(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade"))


class ForgetUnknownCells(NbGraderPreprocessor):
    """Drop the nbgrader metadata of cells whose ``grade_id`` is missing or not in this notebook's source."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            try:
                notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return nb, resources
            known = {cell.name for cell in notebook.source_cells}
        for cell in nb.cells:
            if "nbgrader" not in cell.get("metadata", {}):
                continue
            grade_id = _grade_id(cell)
            if grade_id not in known:  # None: a copy that DeduplicateIds emptied, which nbgrader trips over
                self.log.warning("Cell %r is not part of this assignment; grading it as an ordinary cell", grade_id)
                del cell.metadata["nbgrader"]
        return nb, resources


class ResilientExecute(Execute):
    """nbgrader's ``Execute``, but a cell that kills the kernel costs only that cell.

    Its kernel's connection file (and, with the sandbox's IPC transport, its sockets)
    lives in the Jupyter runtime folder, which the grader makes private to each
    submission, rather than in the shared temporary folder.
    """

    def create_kernel_manager(self):
        manager = super().create_kernel_manager()
        runtime = Path(jupyter_runtime_dir())
        runtime.mkdir(parents=True, exist_ok=True)
        manager.connection_file = str(runtime / f"kernel-{uuid.uuid4()}.json")
        return manager

    def preprocess_cell(self, cell, resources, index):
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
            if any(output.get("ename") == "MemoryError" for output in cell.get("outputs", [])):
                self._release_failed_frames(index)
            return cell, resources
        except DeadKernelError:
            ename, what = KERNEL_DIED, "the kernel died while running this cell (os._exit, a crash, or too much memory)"
        except CellTimeoutError:  # the interrupt did not stop it either
            ename, what = "CellTimeoutError", f"this cell ran longer than {self.timeout} s and could not be interrupted"
        cell.outputs = [new_output("error", ename=ename, traceback=[f"{ename}: {what}"],
                                   evalue=f"{what}; the kernel was restarted and the earlier cells were run again")]
        self._restart_and_replay(index)
        return cell, self.resources

    def _release_failed_frames(self, index: int) -> None:
        """IPython keeps the last traceback, and with it every local of the failing frames (a
        MemoryError's huge list, say): free them, so the next cells get their memory back."""
        try:  # straight through the kernel client: nothing is written into the notebook
            run_sync(self.kc.execute_interactive)(RELEASE_FAILED_FRAMES, silent=True, store_history=False,
                                                  timeout=self.timeout, output_hook=lambda message: None)
        except Exception:  # noqa: BLE001 - best effort; the next cell meets the same kernel and says so
            pass

    def _restart_and_replay(self, index: int) -> None:
        """Start a fresh kernel and rebuild its state from the setup and solution cells before ``index``."""
        run_sync(self.km.restart_kernel)(now=True)
        self.kc.stop_channels()
        self.start_new_kernel_client()
        for earlier_index, earlier in enumerate(self.nb.cells[:index]):
            if earlier.cell_type == "code" and not _is_test_cell(earlier):
                try:
                    self.execute_cell(copy.deepcopy(earlier), earlier_index, store_history=False)
                except (DeadKernelError, CellTimeoutError):  # it failed again: go on without the rest of the state
                    run_sync(self.km.restart_kernel)(now=True)
                    self.kc.stop_channels()
                    self.start_new_kernel_client()
                    return


class StderrAsText(NbGraderPreprocessor):
    """In test cells, turn stderr text into stdout text marked as such (errors still fail the cell)."""

    def preprocess_cell(self, cell, resources, index):
        if _is_test_cell(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output["name"] = "stdout"
                    output["text"] = "[written to stderr] " + output["text"]
        return cell, resources


class LimitOutputSize(NbGraderPreprocessor):
    """Cut every text output to ``max_chars`` characters (one huge line passes nbgrader's line limit)."""

    max_chars = Integer(20_000, help="characters kept per output").tag(config=True)

    def _cut(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return text
        return text[: self.max_chars] + f"\n... [{len(text) - self.max_chars} more characters cut by the grader]"

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = self._cut(output["text"])
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = self._cut(value)
        return cell, resources
