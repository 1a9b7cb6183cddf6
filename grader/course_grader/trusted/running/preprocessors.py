"""nbgrader preprocessors: the verdicts, and what keeps one bad submission from spoiling its grade or the batch.

They are plugged into nbgrader's autograde by ``nbgrader_config.py``:

- ``ForgetUnknownCells`` (sanitising): a cell whose ``grade_id`` the gradebook does not
  know (pasted from another notebook), or a duplicate that ``DeduplicateIds`` emptied,
  becomes an ordinary cell; nbgrader 0.9 would crash on it.
- ``ResilientExecute`` (executing): runs the notebook in the sandboxed grading kernel.
  A graded test cell runs there without its hidden-test region; then each check that
  region declares runs the student's function on the cases through the harness, and
  the verdict, decided here from the returned data, becomes the cell's last output
  (an error when it fails, so nbgrader scores it 0). The visible tests' own errors are
  kept as text: hints, not the grade. A cell that kills the kernel costs that cell
  only (restart, replay of the earlier cells that had worked, at most
  ``max_restarts`` times); a time budget bounds the whole notebook, replays included (one
  deadline: every wait bounded by the time left, the kernel killed at it, ``deadline.py``);
  every output is capped while it arrives.
- ``StderrAsText``: text a test cell wrote to stderr (a warning) is kept but shown as
  ordinary output, so nbgrader does not score the cell 0 for it.
- ``LimitOutputSize``: no output keeps more than ``max_chars`` characters of text,
  or a rich (image, HTML, ...) value bigger than ``max_rich_chars``.
- ``SaveAutoGradesAtOnce``: nbgrader's ``SaveAutoGrades``, with one query and one commit
  for the notebook's rows instead of one of each per cell.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import re
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from jupyter_client.session import json_unpacker
from jupyter_core.paths import jupyter_runtime_dir
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellExecutionComplete, CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbconvert.exporters import NotebookExporter
from nbformat.v4 import new_output
from nbgrader.api import Gradebook, MissingEntry
from nbgrader import utils as nbgrader_utils
from nbgrader.preprocessors import ClearSolutions, Execute, NbGraderPreprocessor, SaveAutoGrades
from traitlets import Bool, Integer, Unicode

from ..judging.case_sets import CASE_SETS_KEY, case_set_id, checker_id
from ..judging.check_registry import ChecksError, course_checks
from .deadline import Deadline, enforced
from ..judging.checks.framework import Check, PreparedCases, Verdict, case_generator, judge_replies, prepare_cases
from ..gradebook.gradebook_rows import comment_of, grade_of, opened_rows
from ..judging.hand_in_digest import notebook_digest
from ..outputs.item_analysis import GRADING_METADATA, PARTS_RECORDED, part_record
from .sandbox import KERNEL_NAME, SandboxKernelManager
from ..outputs.safe_text import writable_data
from ..course.secret import SECRET_FILE, read_secret
from ..judging.verdicts import (FAILED_BEHAVIOURS, Declaration, DeclarationError, declarations, declared_in, harness_code, split_hidden,
                       verdict_output)
from ..judging.wire import Reply, harness_request, new_marker, read_replies


KERNEL_DIED = "KernelDied"
#: How the report names each grading limit that stopped or cut student code, in the order it lists them.
DIED, TIMEOUT, MEMORY, BUDGET, GAVE_UP, CUT, REMOVED = LIMIT_LABELS = (
    "the kernel died (restarted)", "a cell hit the time limit", "a cell hit the memory limit",
    "the notebook's time budget ran out", "the kernel kept dying: the remaining cells were not run",
    "output was cut", "a rich output was removed",
)
#: Key, in that metadata, of what the grader saw of the time budget (``ResilientExecute._budget_record``).
TIME_BUDGET = "time_budget"
#: The ``stopped`` of that record when the kernel was killed at the deadline.
STOPPED_AT_DEADLINE = "the kernel was killed at the deadline"
#: ``ename`` of a cell stopped by the deadline.
BUDGET_ERROR = "TimeBudgetExceeded"
#: The notebook metadata where ``ResilientExecute`` records them (kept by ``ClearMetadataPreprocessor``, see the config).
LIMITS_METADATA = GRADING_METADATA  # what each graded part found is recorded there too (item_analysis.py)
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


#: What nbgrader's own autograde (the formgrader's *Autograde* button, ``nbgrader autograde``) says instead of running.
ONLY_THROUGH_GRADE = ("Autograde is not run from here in this course: in a terminal in the course folder, run "
                      "`perceptron-course grade --student {student} --assignment {assignment}` (or `perceptron-course grade` "
                      "for everyone). It grades in the grading sandbox, keeps the grades you gave by hand, and writes "
                      "the feedback, grades.csv and the report. Nothing was changed here.")


class GraderOnlyExporter(NotebookExporter):
    """The autograde's exporter (``c.Autograde.exporter_class``), made before anything is converted or removed:
    it refuses to exist unless ``perceptron-course grade`` set ``started_by_grade``.

    nbgrader's autograde with ``force`` (the formgrader's button always forces) removes
    ``autograded/<student>/<assignment>`` and resets the submission's grades before any
    preprocessor runs; ``ResilientExecute``'s own refusal came after that. This one comes first.
    """

    started_by_grade = Bool(False, help="set by perceptron-course grade, whose grading kernels the autograde "
                                        "then runs in").tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.started_by_grade:
            converter = kwargs.get("parent")
            coursedir = getattr(converter, "coursedir", None)
            message = ONLY_THROUGH_GRADE.format(student=getattr(coursedir, "student_id", "<student>"),
                                                assignment=getattr(coursedir, "assignment_id", "<assignment>"))
            if converter is not None:
                converter.log.error(message)  # the formgrader shows the log first
            raise RuntimeError(message)


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
                                             "grading kernel that perceptron-course grade starts").tag(config=True)

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

    # ------------------------------------------------------------------ the whole notebook

    def preprocess(self, nb, resources=None, km=None):
        if self.require_grading_kernel and self.kernel_name != KERNEL_NAME:
            raise RuntimeError("grade with `perceptron-course grade`: it starts the sandboxed grading kernel, which "
                               "nbgrader's own autograde does not")
        self._secret = bytes.fromhex(self.grading_secret) if self.grading_secret else read_secret(Path(self.secret_file))
        self._student = ((resources or {}).get("nbgrader") or {}).get("student", "")
        self._submission = self.submission_digest or notebook_digest(nb)
        self._checks, self._checks_problem = self._load_checks(((resources or {}).get("nbgrader") or {}).get("assignment"))
        self._deadline = Deadline(self.time_budget)  # once: every wait below is bounded by what is left of it
        self._waits = {"iopub": self.iopub_timeout, "startup": self.startup_timeout}  # as configured (put back at the end)
        self._stopped_at_deadline = False  # set by the watch (another thread) when it killed the kernel
        self._timeline: list[list] = []  # [seconds since the budget started, what happened]
        self._restarts = 0
        self._gave_up = ""
        self._worked: set[int] = set()  # cells that ran without error: what a replay runs again
        self._output_chars: dict[int, int] = {}
        self._kept_chars = 0  # of the notebook's outputs, all cells together
        self._cut_cells: set[int] = set()  # cells whose output was cut (and says so)
        self._limits: list[str] = []  # LIMIT_LABELS hit, each once, in the order they were first hit
        self._behaviours: dict[str, list[str]] = {}  # grade_id -> each failed verdict by its behaviour (reveal.py)
        self._case_sets: dict[str, dict] = {}  # per check judged: the ids of its cases and checker (case_sets.py)
        self._probing = False  # while a check's harness runs: its reply lines must not be cut
        self._parts: dict[str, dict] = {}  # grade_id -> what its checks found (item_analysis.part_record)
        self.timeout_func = self._remaining_timeout
        # The cases and the reference's answers need nothing from the student: they are
        # computed beside the kernel while it starts and runs the cells before the tests.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader-cases") as pool:
            self._prepared: dict[str, Future[PreparedCases]] = {
                check.function: pool.submit(prepare_cases, check, self._case_generator(check.function))
                for check in _declared_checks(nb, self._checks)
            }
            try:
                with enforced(self._deadline, self._stop_at_deadline):
                    return super().preprocess(nb, resources, km)
            finally:
                self._note("the notebook ended")
                self.iopub_timeout, self.startup_timeout = self._waits["iopub"], self._waits["startup"]
                for future in self._prepared.values():
                    future.cancel()
                nb.metadata[LIMITS_METADATA] = {"limits_hit": list(self._limits), FAILED_BEHAVIOURS: self._behaviours,
                                                CASE_SETS_KEY: dict(self._case_sets), PARTS_RECORDED: self._parts,
                                                TIME_BUDGET: self._budget_record()}

    # ------------------------------------------------------------------ the time budget

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

    def _load_checks(self, assignment: str | None) -> tuple[dict[str, Check], str]:
        """The checks the assignment's hidden_checks.py defines (the whole course's when no assignment is named),
        and why they could not be loaded (``""``). Loaded once per process and version of the file."""
        root = Path(self.course_root or self.config.get("CourseDirectory", {}).get("root", "") or Path.cwd())
        try:
            registry = course_checks(root, None if not assignment else [assignment])
        except (ChecksError, OSError) as error:
            return {}, f"the grader could not load this assignment's hidden checks ({error}); tell your TA"
        return (registry.of(assignment) if assignment else dict(registry)), ""

    def _hit(self, limit: str) -> None:
        if limit not in self._limits:
            self._limits.append(limit)

    async def _async_handle_timeout(self, timeout, cell=None):
        self._hit(TIMEOUT)
        return await super()._async_handle_timeout(timeout, cell)

    def _case_generator(self, function: str):
        return case_generator(self._secret, function, self._student, self._submission)

    def _remaining_timeout(self, cell) -> int:
        """The time limit of a cell that starts now, and the wait for its last outputs, bounded by the time left."""
        self.iopub_timeout = self._deadline.whole_seconds(self._waits["iopub"], at_least=0)
        return self._deadline.whole_seconds(self.timeout or self.time_budget)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.source.strip():
            return cell, resources
        self._output_chars[index] = 0
        skipped = self._reason_to_skip()
        if skipped:
            cell.outputs = [_error("NotRun", skipped)]
            if _is_test_cell(cell):
                self._parts.setdefault(_grade_id(cell) or "", part_record(skipped, []))
            return cell, resources
        if _is_test_cell(cell):
            return self._grade_test_cell(cell, resources, index)
        cell, resources = self._run(cell, resources, index)
        if not any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            self._worked.add(index)
        return cell, resources

    def _reason_to_skip(self) -> str:
        if self._gave_up:
            return self._gave_up
        return self._budget_spent()

    # ------------------------------------------------------------------ one cell

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
            cell.outputs = [_error(BUDGET_ERROR, spent.replace("this cell was not run", "this cell was stopped"))]
            return cell, self.resources
        cell.outputs = [_error(ename, f"{what}; the kernel was restarted and the earlier cells were run again")]
        self._restart_and_replay(index)
        return cell, self.resources

    def _grade_test_cell(self, cell, resources, index):
        """Run the visible tests in the kernel, then judge every declared check here."""
        source = cell.source
        visible, hidden = split_hidden(source)
        try:
            declared = declarations(hidden, self._checks)
        except DeclarationError as error:
            declared, problem = [], self._checks_problem or f"the grader could not read this cell's hidden tests ({error}); tell your TA"
        else:
            problem = ""
        cell.source = visible
        try:
            if visible.strip():
                cell, resources = self._run(cell, resources, index)
        finally:
            cell.source = source
        if not declared and not problem:
            return cell, resources  # a cell without checks is graded by what ran (the course's tests forbid it)
        outputs = [_as_hint(output) for output in cell.get("outputs", [])]
        if problem:
            outputs.append(_error("GraderError", problem))
        verdicts = [self._judge_in_kernel(declaration, index) for declaration in declared]
        outputs += [verdict_output(verdict) for verdict in verdicts]
        self._behaviours[str(cell.metadata.get("nbgrader", {}).get("grade_id", ""))] = [
            verdict.behaviour_message() for verdict in verdicts if not verdict.passed]
        self._parts.setdefault(_grade_id(cell) or "", part_record(problem, verdicts))
        cell.outputs = outputs
        return cell, self.resources

    def _judge_in_kernel(self, declaration: Declaration, index: int) -> Verdict:
        """Call the student's function on the cases in the kernel; judge the replies here.

        The harness's reply lines reach the grader a few messages at a time, and a kernel that
        dies loses those of its last calls (even a flushed one may still be queued in its ZeroMQ
        socket). So after a death the calls from the first unanswered one are made again in the
        restarted kernel, one call per execution, until the call it dies on: a call whose
        execution ended has surely delivered its reply. (If they all return that time, the first
        run's replies stand: the kernel died on one of those calls, the first is named.)
        """
        check = declaration.check
        prepared = self._prepared.get(check.function)
        prepared = prepared.result() if prepared is not None else prepare_cases(check, self._case_generator(check.function))
        cases = prepared.cases
        self._case_sets[check.function] = {"case_set": case_set_id(self._secret, check.function, prepared),
                                           "checker": checker_id(check)}
        if prepared.dropped:  # cases the reference could not answer: left out of the grade, said here for the TA
            self._case_sets[check.function]["dropped"] = list(prepared.dropped)
        skipped = self._reason_to_skip()
        if skipped:
            untested = f"{check.function} was not tested: {skipped.removeprefix('this cell was not run: ')}"
            return Verdict(check.function, len(cases), [untested], [untested])
        replies, stopped = self._call_in_kernel(declaration.target, cases, index, again=prepared.again)
        if _kernel_restarted(stopped) and len(replies) < len(cases):
            replies, stopped = self._find_the_failing_call(declaration.target, cases, index, replies, stopped, prepared.again)
        return judge_replies(check, cases, replies, stopped, prepared.expected, prepared.again, prepared.again_expected)

    def _find_the_failing_call(self, target: str, cases: list, index: int, replies: list, stopped: str,
                               again: list | None = None) -> tuple[list, str]:
        """After the kernel died (or hung) on an unknown call: the calls again, one per execution, up to the one that fails.

        The restarts this costs do not count against ``max_restarts``; the time budget bounds them.
        """
        again: list[Reply] = []
        for position in range(len(replies), len(cases)):
            if self._reason_to_skip():
                break
            one, why = self._call_in_kernel(target, cases[position:position + 1], index, counted=False,
                                            again=None if again is None else again[position:position + 1])
            if not (len(one) == 1 and isinstance(one[0], Reply)):  # this call failed (or the function is gone)
                return replies + [dataclasses.replace(reply, index=k) for k, reply in enumerate(again, len(replies))], why or stopped
            again.append(one[0])
        return replies, stopped

    def _call_in_kernel(self, target: str, cases: list, index: int, *, counted: bool = True,
                        again: list | None = None) -> tuple[list, str]:
        """Run the harness on ``cases`` after cell ``index``: the replies read back, and why they stop early (or ``""``).

        A kernel that died or could not be interrupted is restarted and the cells before
        ``index`` replayed (a restart ``counted`` against ``max_restarts``, or not).
        """
        marker = new_marker()
        # Built as nbformat's new_code_cell builds it, without checking a 30 KB source against the schema: it never
        # enters the notebook.
        probe = NotebookNode(id=uuid.uuid4().hex[:8], cell_type="code", metadata=NotebookNode(), execution_count=None,
                             source=harness_code(harness_request(target, cases, marker, again)), outputs=[])
        original = self.nb.cells[index]
        self._output_chars[index] = 0
        self._cut_cells.discard(index)  # the probe's own cut says so in its own outputs
        stopped = ""
        self._probing = True
        try:
            probe = self.execute_cell(probe, index, store_history=False)
        except DeadKernelError:
            stopped = KILLED_KERNEL
            if not self._stopped_at_deadline:
                self._hit(DIED)
        except CellTimeoutError:
            stopped = f"did not return within {self.timeout} s {UNINTERRUPTIBLE}"
            self._hit(TIMEOUT)
        finally:
            self._probing = False
            self.nb.cells[index] = original  # execute_cell put the probe in its place
        text = "".join(output.get("text", "") for output in probe.get("outputs", [])
                       if output.get("output_type") == "stream" and output.get("name") == "stdout")
        replies, problem = read_replies(text, marker, len(cases))
        if not stopped:
            stopped = _why_calls_stopped(probe, self.timeout) or problem
        if _kernel_restarted(stopped):
            self._note(f"cell {index}: a call of {target} {stopped.split(' (')[0]}")
        if _kernel_restarted(stopped) and self._deadline.passed():  # stopped at the deadline: no restart, no search
            self._gave_up = self._gave_up or self._budget_spent()
            return replies, f"did not return before {BUDGET_CALLS}"
        if _kernel_restarted(stopped):
            self._restart_and_replay(index + 1, counted=counted)
        return replies, stopped

    # ------------------------------------------------------------------ kernel deaths

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
        try:
            run_sync(self.km.restart_kernel)(now=True)
            self.start_new_kernel_client()
        except Exception:
            spent = self._budget_spent()
            if not spent:
                raise
            self._gave_up = self._gave_up or spent
            return False
        return True

    # ------------------------------------------------------------------ what the kernel sends

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

    def output(self, outs, msg, display_id, cell_index):
        """Keep an output only while the cell's outputs stay under their cap (a harness's replies: uncut, under theirs)."""
        if self._probing and msg["msg_type"] == "stream":
            # A harness's reply lines are read as text and never enter the notebook: no schema check for
            # each of them (nbformat validates every new output, 0.4 ms each, one per case).
            content = msg["content"]
            out = NotebookNode(output_type="stream", name=str(content.get("name")), text=str(content.get("text", "")))
            outs.append(out)
        else:
            out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return None
        cap = self.max_reply_chars if self._probing else self.max_cell_output_chars
        if not self._probing:
            for limit in limit_output(out, MAX_TEXT_CHARS, MAX_RICH_CHARS):
                self._hit(limit)
        size = output_chars(out)
        used = self._output_chars.get(cell_index, 0)
        self._output_chars[cell_index] = used + size
        notebook_full = not self._probing and self._kept_chars + size > self.max_notebook_output_chars
        if used + size > cap or notebook_full:
            outs.remove(out)
            self._hit(CUT)
            if cell_index not in self._cut_cells:  # one note per cell
                self._cut_cells.add(cell_index)
                limit = (f"the notebook's outputs are over {self.max_notebook_output_chars:,} characters" if notebook_full
                         else f"over {cap:,} characters")
                outs.append(new_output("stream", name="stdout", text=f"\n... [further output cut by the grader: {limit}]\n"))
            return None
        if not self._probing:
            self._kept_chars += size
        return out

    def on_cell_executed(self, **kwargs):
        """nbgrader's, which adds the execute reply's error when no output holds it; cut as every output is.

        That error comes from the reply, past ``output``: a 20 MB message and its traceback were kept whole
        until ``LimitOutputSize``, and every step between worked on them.
        """
        super().on_cell_executed(**kwargs)
        for output in kwargs["cell"].get("outputs", [])[-1:]:
            if output.get("output_type") == "error":
                for limit in limit_output(output, MAX_TEXT_CHARS, MAX_RICH_CHARS):
                    self._hit(limit)

    def handle_comm_msg(self, outs, msg, cell_index):
        """Widgets and comms are ignored: their state would flow into the notebook unchecked."""

    def _update_display_id(self, display_id, msg):
        """Display updates are ignored: they would rewrite earlier outputs past the caps."""


def unpack_kernel_message(data: bytes | str):
    """jupyter_client's JSON unpacker for what a kernel sends (every part of every message, on every channel), with
    every string made writable (``safe_text.writable_data``): the one door of the kernel's text into this process.

    A kernel can send lone surrogates (JSON escapes such as ``"\\ud800"``: an exception's message, a print); kept,
    they raise ``UnicodeEncodeError`` wherever the text is written later (the autograded notebook, the feedback
    page, a report), and the submission failed whole. Bytes that are not UTF-8 are already replaced on decoding.
    """
    return writable_data(json_unpacker(data))


def _error(ename: str, evalue: str):
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _as_hint(output):
    """A visible test's output, kept so that it cannot decide the grade: the hidden tests' verdict does.

    nbgrader scores a test cell by its first error, stderr text or ``execute_result`` (read as
    partial credit): errors become text, stderr becomes stdout, and results become displays.
    """
    kind = output.get("output_type")
    if kind == "execute_result":
        return new_output("display_data", data=output.get("data", {}), metadata=output.get("metadata", {}))
    if kind == "stream" and output.get("name") == "stderr":
        return new_output("stream", name="stdout", text="[written to stderr] " + output.get("text", ""))
    if kind != "error":
        return output
    if output.get("ename") == "NotImplementedError":
        return new_output("stream", name="stdout", text=f"Not implemented yet: {output.get('evalue', '')}\n")
    lines = [_ANSI.sub("", line) for line in output.get("traceback", [])] or [f"{output.get('ename')}: {output.get('evalue')}"]
    text = "A visible test failed (the hidden tests below decide the grade):\n" + "\n".join(lines) + "\n"
    return new_output("stream", name="stdout", text=text)


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


def _declared_checks(nb, checks: dict[str, Check]) -> list[Check]:
    """Every check of ``checks`` the notebook's test cells declare, once each (a region that does not parse declares none)."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or not _is_test_cell(cell):
            continue
        try:
            found.update((declared.check.function, declared.check) for declared in declared_in(cell.source, checks))
        except DeclarationError:
            continue  # said in the cell's verdict when it is graded
    return list(found.values())


KILLED_KERNEL = "made the kernel die (os._exit, a crash, or too much memory)"
#: How a check's calls stopped by the deadline are named (``did not return before ...``).
BUDGET_CALLS = "the grader's time budget for the notebook ran out (the kernel was stopped)"
UNINTERRUPTIBLE = "(and could not be interrupted)"


def _kernel_restarted(stopped: str) -> bool:
    """Whether calls that stopped for this reason (``_call_in_kernel``) left the kernel restarted."""
    return stopped == KILLED_KERNEL or stopped.endswith(UNINTERRUPTIBLE)


def _why_calls_stopped(probe, timeout) -> str:
    """Why the harness ended before answering every case, from its error output (or ``""``)."""
    for output in probe.get("outputs", []):
        if "further output cut by the grader" in str(output.get("text", "")):
            return "printed too much while being tested (its answers were cut off): remove the prints"
        if output.get("output_type") != "error":
            continue
        if output.get("ename") in ("CellTimeoutError", "KeyboardInterrupt"):
            return f"did not return within {timeout} s (an infinite loop?)"
        return f"could not be called by the grader ({output.get('ename')}: {str(output.get('evalue', ''))[:200]})"
    return ""


class StderrAsText(NbGraderPreprocessor):
    """In test cells, turn stderr text into stdout text marked as such (errors still fail the cell)."""

    def preprocess_cell(self, cell, resources, index):
        if _is_test_cell(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output["name"] = "stdout"
                    output["text"] = "[written to stderr] " + output["text"]
        return cell, resources


MAX_TEXT_CHARS = 20_000
MAX_RICH_CHARS = 1_000_000


def output_chars(output) -> int:
    """Characters an output holds (text, an error's name and message, every MIME value, traceback)."""
    size = sum(len(output[key]) for key in ("text", "ename", "evalue") if isinstance(output.get(key), str))
    size += sum(len(line) for line in output.get("traceback", []))
    return size + sum(len(value) if isinstance(value, str) else len(str(value)) for value in output.get("data", {}).values())


def limit_output(output, max_chars: int, max_rich_chars: int) -> list[str]:
    """Cut the text of ``output`` (a stream's text, an error's name, message and last 100 traceback lines, every
    ``text/*`` value) to ``max_chars``; replace a rich value over ``max_rich_chars`` by a note.

    Returns the limits applied (``CUT``, ``REMOVED``), or an empty list.
    """
    texts = []
    for key in ("text", "ename", "evalue"):  # an error's name and message: as long as its class and str() make them
        if isinstance(output.get(key), str):
            texts.append(output[key])
            output[key] = _cut(output[key], max_chars)
    data = output.get("data", {})
    removed = []
    for mime in list(data):
        value = data[mime] if isinstance(data[mime], str) else str(data[mime])
        if mime.startswith("text/"):
            texts.append(value)
            data[mime] = _cut(value, max_chars)
        elif len(value) > max_rich_chars:
            removed.append(f"a {mime} output of {len(value):,} characters")
    if removed:  # only the note is left, so that no other representation is shown in its place
        output["data"] = {"text/plain": f"[{', '.join(removed)}, removed by the grader: over {max_rich_chars:,}]"}
    cut = any(len(text) > max_chars for text in texts)
    if "traceback" in output:
        lines = output["traceback"]
        cut = cut or len(lines) > 100 or any(len(line) > max_chars for line in lines[-100:])
        output["traceback"] = [_cut(line, max_chars) for line in lines[-100:]]
    return [CUT] * cut + [REMOVED] * bool(removed)


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n... [{len(text) - max_chars} more characters cut by the grader]"


class LimitOutputSize(NbGraderPreprocessor):
    """Cut every output: text to ``max_chars`` characters, rich values (images, ...) to ``max_rich_chars``."""

    max_chars = Integer(MAX_TEXT_CHARS, help="characters kept per text output").tag(config=True)
    max_rich_chars = Integer(MAX_RICH_CHARS, help="largest rich (image, HTML, ...) value kept").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            limit_output(output, self.max_chars, self.max_rich_chars)
        return cell, resources


class SaveAutoGradesAtOnce(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades`` with the notebook's rows read in one query each and one commit.

    nbgrader looks up and commits each cell's row on its own; the scores, comments and
    "needs manual grade" marks it saves are the same (``gradebook_rows.py``).
    """

    def preprocess(self, nb, resources):
        with opened_rows(self, resources) as self._rows:
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)  # each cell, as SaveAutoGrades does
            self.gradebook.db.commit()
        return nb, resources

    def _add_score(self, cell, resources) -> None:
        grade = grade_of(self.gradebook, self._rows, cell.metadata["nbgrader"]["grade_id"])
        grade.auto_score, _ = nbgrader_utils.determine_grade(cell, self.log)
        # A manual grade given before, or no automatic score, needs a TA's look (as nbgrader decides).
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_comment(self, cell, resources) -> None:
        comment = comment_of(self.gradebook, self._rows, cell.metadata["nbgrader"]["grade_id"])
        untouched = cell.metadata.nbgrader.get("checksum", None) == nbgrader_utils.compute_checksum(cell)
        comment.auto_comment = "No response." if untouched and not nbgrader_utils.is_task(cell) else None


class NamedStubs(ClearSolutions):
    """nbgrader's ``ClearSolutions`` with stubs that name their function.

    ``{function}`` in ``ClearSolutions.code_stub`` becomes the name of the ``def``
    the solution region sits in, so an untouched stub says what to write.
    """

    def _replace_solution_region(self, cell, language):
        replaced = super()._replace_solution_region(cell, language)
        if replaced and "{function}" in cell.source:
            lines = cell.source.split("\n")
            for number, line in enumerate(lines):
                if "{function}" in line:
                    enclosing = [match.group(1) for earlier in lines[:number] if (match := _DEF.match(earlier))]
                    lines[number] = line.replace("{function}", enclosing[-1] if enclosing else "this function")
            cell.source = "\n".join(lines)
        return replaced


_DEF = re.compile(r"\s*def\s+(\w+)\s*\(")


def limits_hit(notebook) -> list[str]:
    """Which grading limits stopped or cut student code in an executed notebook, as ``ResilientExecute`` recorded them.

    Read from the notebook's metadata, which the grader writes whatever the submission held
    there; never from outputs, where a student can print the grader's own words.
    """
    recorded = notebook.get("metadata", {}).get(LIMITS_METADATA)
    hit = recorded.get("limits_hit") if isinstance(recorded, dict) else None
    return [label for label in LIMIT_LABELS if isinstance(hit, list) and label in hit]
