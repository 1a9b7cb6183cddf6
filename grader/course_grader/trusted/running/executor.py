"""``ResilientExecute``: nbgrader's ``Execute`` that grades test cells on the trusted side and survives a dying kernel.

It runs the notebook in the sandboxed grading kernel, cell by cell; its other jobs are mixins, one concern each:

- ``GradedCells`` (``graded_cells.py``): a test cell's visible tests run in the kernel, its hidden checks are judged here;
- ``KernelRestarts`` (``execute_restarts.py``): a cell that kills the kernel costs that cell only (restart, replay);
- ``TimeBudget`` (``execute_budget.py``): one deadline bounds the whole notebook, replays and checks included;
- ``OutputCaps`` (``output_caps.py``): every output is capped while it arrives.

What it found is recorded in the notebook's metadata (``judging/grading_metadata.py``).
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from jupyter_client.session import json_unpacker
from jupyter_core.paths import jupyter_runtime_dir
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from ..course.commands import grader_command
from ..course.hand_in_digest import notebook_digest
from ..course.safe_text import writable_data
from ..course.secret import SECRET_FILE, read_secret
from ..judging.case_sets import CASE_SETS_KEY
from ..judging.grading_metadata import DIED, GRADING_METADATA, MEMORY, PARTS_RECORDED, TIME_BUDGET, TIMEOUT
from ..judging.verdicts import FAILED_BEHAVIOURS
from ..outputs.item_analysis import part_record
from .cells import cell_grade_id, error_output, is_test_cell
from .deadline import enforced
from .execute_budget import BUDGET_ERROR, TimeBudget
from .execute_restarts import KernelRestarts
from .graded_cells import GradedCells
from .output_caps import OutputCaps
from .sandbox import KERNEL_NAME, SandboxKernelManager

KERNEL_DIED = "KernelDied"


class ResilientExecute(GradedCells, KernelRestarts, TimeBudget, OutputCaps, Execute):
    """nbgrader's ``Execute`` that grades test cells on the trusted side and survives a dying kernel.

    Its kernel's connection file (and, with the sandbox's IPC transport, its sockets)
    lives in the Jupyter runtime folder, which the grader makes private to each
    submission, rather than in the shared temporary folder.
    """

    grading_secret = Unicode("", help="the course secret (hex) the cases are drawn from").tag(config=True)
    secret_file = Unicode(SECRET_FILE, help="where to read the course secret when grading_secret is not set "
                                           "(relative to the working folder)").tag(config=True)
    time_budget = Integer(180, help="seconds for the whole notebook: cells, checks, restarts and replays").tag(config=True)
    max_restarts = Integer(3, help="kernel restarts after deaths before the remaining cells are given up").tag(config=True)
    max_cell_output_chars = Integer(2_000_000, help="characters of output kept per cell while it runs").tag(config=True)
    max_reply_chars = Integer(16_000_000, help="characters of harness output read for one check").tag(config=True)
    max_notebook_output_chars = Integer(16_000_000, help="characters of output kept in the whole notebook "
                                                         "(the harness's replies aside)").tag(config=True)
    course_root = Unicode("", help="the course whose source/<assignment>/hidden_checks.py holds the checks (default: "
                                   "CourseDirectory.root, then the working folder)").tag(config=True)
    submission_digest = Unicode("", help="hand_in_digest of the hand-in as handed in (the grader's intake sets it); "
                                         "without it, the digest of the whole notebook as it reaches this step").tag(config=True)
    require_grading_kernel = Bool(True, help="refuse to run student code in any kernel but the sandboxed "
                                             "grading kernel that the grader's grade command starts").tag(config=True)

    def create_kernel_manager(self):
        runtime = Path(jupyter_runtime_dir())
        started = _STARTED_EARLY.pop(runtime, None)
        if started is not None:  # nbclient sees a running kernel and only connects to it
            started.finish_start()
            return started
        manager = super().create_kernel_manager()
        manager.session.unpack = unpack_kernel_message  # its clients share its session
        runtime.mkdir(parents=True, exist_ok=True)
        manager.connection_file = str(runtime / f"kernel-{uuid.uuid4()}.json")
        return manager

    def preprocess(self, nb, resources=None, km=None):
        if self.require_grading_kernel and self.kernel_name != KERNEL_NAME:
            raise RuntimeError(f"grade with `{grader_command()} grade`: it starts the sandboxed grading kernel, which "
                               "nbgrader's own autograde does not")
        self._secret = bytes.fromhex(self.grading_secret) if self.grading_secret else read_secret(Path(self.secret_file))
        self._student = ((resources or {}).get("nbgrader") or {}).get("student", "")
        self._submission = self.submission_digest or notebook_digest(nb)
        self._start_checks(((resources or {}).get("nbgrader") or {}).get("assignment"))
        self._start_budget()
        self._start_restarts()
        self._start_caps()
        self._limits: list[str] = []  # LIMIT_LABELS hit, each once, in the order they were first hit
        # The cases and the reference's answers need nothing from the student: they are
        # computed beside the kernel while it starts and runs the cells before the tests.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader-cases") as pool:
            self._prepare_cases(nb, pool)
            try:
                with enforced(self._deadline, self._stop_at_deadline):
                    try:
                        return super().preprocess(nb, resources, km)
                    except RuntimeError:  # the kernel never started: on a loaded machine, the deadline can come first
                        if not self._budget_spent():
                            raise
                        return self._none_run(nb, resources)
            finally:
                budget = self._end_budget()
                self._cancel_cases()
                nb.metadata[GRADING_METADATA] = {"limits_hit": list(self._limits), FAILED_BEHAVIOURS: self._behaviours,
                                                 CASE_SETS_KEY: dict(self._case_sets), PARTS_RECORDED: self._parts,
                                                 TIME_BUDGET: budget}

    def _none_run(self, nb, resources):
        """The notebook with every cell marked as not run (the budget was spent before its kernel replied)."""
        self._gave_up = self._gave_up or self._budget_spent()
        for index, cell in enumerate(nb.cells):
            self.preprocess_cell(cell, resources, index)
        return nb, resources

    def _hit(self, limit: str) -> None:
        if limit not in self._limits:
            self._limits.append(limit)

    def preprocess_cell(self, cell, resources, index):
        cell, resources = self._preprocess_one(cell, resources, index)
        if index == len(self.nb.cells) - 1:  # the kernel is still up here (nbconvert shuts it down after the loop)
            self._show_earlier_calls()
            self._name_failed_helpers()
        return cell, resources

    def _preprocess_one(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.source.strip():
            return cell, resources
        self._output_chars[index] = 0
        skipped = self._reason_to_skip()
        if skipped:
            cell.outputs = [error_output("NotRun", skipped)]
            if is_test_cell(cell):
                self._parts.setdefault(cell_grade_id(cell) or "", part_record(skipped, []))
            return cell, resources
        if is_test_cell(cell):
            return self._grade_test_cell(cell, resources, index)
        cell, resources = self._run(cell, resources, index)
        if not any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            self._worked.add(index)
        return cell, resources

    def _reason_to_skip(self) -> str:
        if self._gave_up:
            return self._gave_up
        return self._budget_spent()

    def _run(self, cell, resources, index):
        """Execute one cell; a dead or unstoppable kernel costs this cell and is restarted."""
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
            if any(output.get("ename") == "MemoryError" for output in cell.get("outputs", [])):
                self._hit(MEMORY)
                self._release_failed_frames()
            return cell, resources
        except DeadKernelError:
            ename, what = KERNEL_DIED, "the kernel died while running this cell (os._exit, a crash, or too much memory)"
            if not self._stopped_at_deadline:  # (killed at the deadline: not restarted, and said so below)
                self._hit(DIED)
        except CellTimeoutError:  # the interrupt did not stop it either
            ename, what = "CellTimeoutError", f"this cell ran longer than {self.timeout} s and could not be interrupted"
            self._hit(TIMEOUT)
        self._note(f"cell {index}: {ename}")
        spent = self._budget_spent()
        if spent:  # the kernel was stopped at the deadline (or is past it): nothing more runs
            self._gave_up = self._gave_up or spent
            cell.outputs = [error_output(BUDGET_ERROR, spent.replace("this cell was not run", "this cell was stopped"))]
            return cell, self.resources
        cell.outputs = [error_output(ename, f"{what}; the kernel was restarted and the earlier cells were run again")]
        self._restart_and_replay(index)
        return cell, self.resources


def unpack_kernel_message(data: bytes | str):
    """jupyter_client's JSON unpacker for what a kernel sends (every part of every message, on every channel), with
    every string made writable (``safe_text.writable_data``): the one door of the kernel's text into this process.

    A kernel can send lone surrogates (JSON escapes such as ``"\\ud800"``: an exception's message, a print); kept,
    they raise ``UnicodeEncodeError`` wherever the text is written later (the autograded notebook, the feedback
    page, a report), and the submission failed whole. Bytes that are not UTF-8 are already replaced on decoding.
    """
    return writable_data(json_unpacker(data))


#: Kernels started before their notebook reached ``ResilientExecute``, by private runtime folder.
_STARTED_EARLY: dict[Path, SandboxKernelManager] = {}


@contextmanager
def kernel_started_early(config):
    """Start the sandboxed kernel of a submission's first notebook now, while nbgrader prepares it.

    ``ResilientExecute`` adopts it (the runtime folder is private to the submission, so
    no other submission can); one that no notebook took is shut down on leaving. Without
    the sandbox, kernels start when the notebook runs, as nbclient does.
    """
    execute = ResilientExecute(config=config)
    execute.update_config(config)  # as preprocess() does: the config's kernel manager over nbgrader's default
    if not issubclass(execute.kernel_manager_class, SandboxKernelManager):
        yield
        return
    runtime = Path(jupyter_runtime_dir())
    manager = execute.create_kernel_manager()
    try:
        manager.start_in_background(extra_arguments=execute.extra_arguments)
    except Exception:  # noqa: BLE001 - the notebook starts its own kernel, and a failure is reported there
        yield
        return
    _STARTED_EARLY[runtime] = manager
    try:
        yield
    finally:
        if _STARTED_EARLY.pop(runtime, None) is manager:
            run_sync(manager.shutdown_kernel)(now=True)
