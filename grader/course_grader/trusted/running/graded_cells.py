"""Graded test cells in ``ResilientExecute``: the visible tests run in the kernel, the hidden checks are judged here.

A test cell runs without its hidden-test region; each check that region declares calls the student's function on
the cases through the harness (``in_sandbox/harness.py``), and the verdict, decided on the trusted side from the
returned data, becomes the cell's last output. The visible tests' own errors are kept as text: hints, not the grade.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import re
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output

from ..judging.case_sets import case_set_id, checker_id
from ..judging.check_registry import ChecksError, course_checks
from ..judging.checks.cases import Case, Check
from ..judging.checks.draws import case_generator
from ..judging.checks.judge import (LONE_REPEATS, PreparedCases, Verdict, judge_replies, prepare_cases,
                                    safe_case_failure, with_earlier_calls_shown, with_failed_helpers_named,
                                    with_random_answers_shown)
from ..judging.grading_metadata import DIED, TIMEOUT
from ..judging.verdicts import Declaration, DeclarationError, declarations, declared_in, harness_code, split_hidden, verdict_output
from ..judging.wire import Reply, harness_request, new_marker, read_replies
from ..outputs.item_analysis import part_record
from .cells import cell_grade_id, error_output, is_test_cell


class GradedCells:
    """The hidden checks of ``ResilientExecute`` (a mixin of it: the kernel, the cells and the budget are its)."""

    def _start_checks(self, assignment: str | None) -> None:
        self._checks, self._checks_problem = self._load_checks(assignment)
        self._behaviours: dict[str, list[str]] = {}  # grade_id -> each failed verdict by its behaviour (reveal.py)
        self._case_sets: dict[str, dict] = {}  # per check judged: the ids of its cases and checker (case_sets.py)
        self._parts: dict[str, dict] = {}  # grade_id -> what its checks found (item_analysis.part_record)
        self._judged: dict[str, PreparedCases] = {}  # function -> the cases its verdict was judged on
        self._lone_calls: list[_ShownVerdict] = []  # failed first calls to make again alone (_show_earlier_calls)
        self._failed: list[_ShownVerdict] = []  # every failed verdict and where its output sits (_name_failed_helpers)
        self._rewritten: dict[tuple[int, int], Verdict] = {}  # (cell, slot) -> the verdict its output now shows

    def _prepare_cases(self, nb, pool: ThreadPoolExecutor) -> None:
        """Start computing, beside the kernel, the cases and the reference's answers of every check ``nb`` declares."""
        self._prepared: dict[str, Future[PreparedCases]] = {
            check.function: pool.submit(prepare_cases, check, self._case_generator(check.function),
                                        refuse_broken_second_calls=False)
            for check in _declared_checks(nb, self._checks)
        }

    def _cancel_cases(self) -> None:
        for future in self._prepared.values():
            future.cancel()

    def _load_checks(self, assignment: str | None) -> tuple[dict[str, Check], str]:
        """The checks the assignment's hidden_checks.py defines (the whole course's when no assignment is named),
        and why they could not be loaded (``""``). Loaded once per process and version of the file."""
        root = Path(self.course_root or self.config.get("CourseDirectory", {}).get("root", "") or Path.cwd())
        try:
            registry = course_checks(root, None if not assignment else [assignment])
        except (ChecksError, OSError) as error:
            return {}, f"the grader could not load this assignment's hidden checks ({error}); tell your TA"
        return (registry.of(assignment) if assignment else dict(registry)), ""

    def _case_generator(self, function: str):
        return case_generator(self._secret, function, self._student, self._submission)

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
            outputs.append(error_output("GraderError", problem))
        verdicts = [self._judge_in_kernel(declaration, index) for declaration in declared]
        shown = [_ShownVerdict(index, len(outputs) + slot, declaration, verdict)
                 for slot, (declaration, verdict) in enumerate(zip(declared, verdicts)) if verdict.failed_cases]
        self._failed += shown
        self._lone_calls += [lone for lone in shown if lone.verdict.first_call_to_retry is not None]
        outputs += [verdict_output(verdict) for verdict in verdicts]
        self._behaviours[str(cell.metadata.get("nbgrader", {}).get("grade_id", ""))] = [
            verdict.behaviour_message() for verdict in verdicts if not verdict.passed]
        self._parts.setdefault(cell_grade_id(cell) or "", part_record(problem, verdicts))
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
        self._judged[check.function] = prepared
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

    def _show_earlier_calls(self) -> None:
        """After the last cell: each failed first call made again alone, right after the cell that defines the function
        ran again (a memo, a global or a default it keeps there starts afresh); where it is then answered right, its
        verdict's message says the answer depends on earlier calls and gives them (``with_earlier_calls_shown``).

        Only messages change, never a score or the grading record: the limits this hits (a call that kills the kernel)
        are the grader's own probe's, and are not kept. It runs only while the time left exceeds the time spent, so
        that it cannot bring the deadline on a notebook that met it. (The same kernel, not a restarted one: a restart
        and the replay of every cell cost a failing notebook 0.6x its grading time, this one cell and one call.)
        """
        pending, self._lone_calls = self._lone_calls, []
        if not pending or self._reason_to_skip() or self._deadline.left() <= self._deadline.elapsed():
            return
        limits, gave_up, restarts = list(self._limits), self._gave_up, self._restarts
        self._note("failed first calls made again alone")
        try:
            for lone in pending:
                if self._reason_to_skip() or not self._run_again(self._defining_cell(lone)):
                    break
                self._show_if_alone_right(lone)
        finally:
            self._limits[:], self._gave_up, self._restarts = limits, gave_up, restarts

    def _name_failed_helpers(self) -> None:
        """After the last cell: a failed verdict of a function that calls another failed part's function (the
        student's ``choose_epoch_cap`` calling their own wrong ``train_perceptron``) says so, to fix that one first.

        Read from the source of the cell that defines the function (a call by name inside its ``def``); only messages
        change, never a score."""
        failed, self._failed = self._failed, []
        failed_targets = {lone.declaration.target for lone in failed}
        for lone in failed:
            called = _called_names(self._definition_source(lone), lone.declaration.target)
            helpers = sorted(called & (failed_targets - {lone.declaration.target}))
            if helpers:
                verdict = with_failed_helpers_named(self._current_verdict(lone), helpers)
                self.nb.cells[lone.cell].outputs[lone.slot] = verdict_output(verdict)

    def _current_verdict(self, lone: "_ShownVerdict") -> Verdict:
        """The verdict as its output now says it (``_show_earlier_calls`` may have rewritten it)."""
        return self._rewritten.get((lone.cell, lone.slot), lone.verdict)

    def _definition_source(self, lone: "_ShownVerdict") -> str:
        index = self._defining_cell(lone)
        return "" if index is None else self.nb.cells[index].source

    def _defining_cell(self, lone: "_ShownVerdict") -> int | None:
        """The last cell before the test cell that defines the function, among the cells that ran without an error."""
        defines = re.compile(rf"^(async\s+)?def\s+{re.escape(lone.declaration.target)}\s*\(", re.MULTILINE)
        return next((index for index in sorted(self._worked, reverse=True)
                     if index < lone.cell and defines.search(self.nb.cells[index].source)), None)

    def _run_again(self, index: int | None) -> bool:
        """Run cell ``index`` again, its outputs left out of the notebook; whether it ran and the kernel lives."""
        if index is None:
            return False
        original = self.nb.cells[index]
        try:
            self.execute_cell(copy.deepcopy(original), index, store_history=False)
        except (DeadKernelError, CellTimeoutError):
            return False
        finally:
            self.nb.cells[index] = original
        return True

    def _show_if_alone_right(self, lone: "_ShownVerdict") -> None:
        check = lone.declaration.check
        prepared = self._judged[check.function]
        position = lone.verdict.first_call_to_retry
        assert position is not None
        case = prepared.cases[position]
        replies, _ = self._call_in_kernel(lone.declaration.target, [case], lone.cell, counted=False)
        if len(replies) != 1 or not isinstance(replies[0], Reply):
            return
        expected = prepared.expected[position] if prepared.expected is not None else None
        if expected is None or safe_case_failure(check, case, replies[0], expected):
            return  # wrong alone too (or no single right answer): the message reproduces as it is
        wrong_again = self._wrong_when_made_again(lone, case, expected)
        if wrong_again is None:
            return
        shown = (with_random_answers_shown(lone.verdict, check, prepared.cases, wrong_again)
                 if wrong_again else with_earlier_calls_shown(lone.verdict, check, prepared.cases, prepared.again))
        self._rewritten[(lone.cell, lone.slot)] = shown
        self.nb.cells[lone.cell].outputs[lone.slot] = verdict_output(shown)

    def _wrong_when_made_again(self, lone: "_ShownVerdict", case: Case, expected: object) -> int | None:
        """How many of ``LONE_REPEATS`` more lone calls of ``case``, each right after the defining cell ran again, were
        answered wrong (a function whose answer is right alone once and wrong alone another time draws random numbers);
        ``None`` where a repeat could not be made or read (the message is then left as it was)."""
        wrong = 0
        for _ in range(LONE_REPEATS):
            if self._reason_to_skip() or not self._run_again(self._defining_cell(lone)):
                return None
            replies, _ = self._call_in_kernel(lone.declaration.target, [case], lone.cell, counted=False)
            if len(replies) != 1 or not isinstance(replies[0], Reply):
                return None
            wrong += bool(safe_case_failure(lone.declaration.check, case, replies[0], expected))
        return wrong

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


@dataclasses.dataclass(frozen=True)
class _ShownVerdict:
    """A failed verdict and where its output sits (``_show_earlier_calls``, ``_name_failed_helpers``)."""

    cell: int  #: the test cell's index
    slot: int  #: the verdict's output's index among the cell's outputs
    declaration: Declaration
    verdict: Verdict


def _called_names(source: str, function: str) -> set[str]:
    """Names called as plain functions (``name(...)``) in the last ``def function`` of ``source``; none where it
    does not parse (a cell with IPython magics) or defines no such function."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    definitions = [node for node in ast.walk(tree)
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function]
    if not definitions:
        return set()
    return {node.func.id for node in ast.walk(definitions[-1])
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


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


def _declared_checks(nb, checks: dict[str, Check]) -> list[Check]:
    """Every check of ``checks`` the notebook's test cells declare, once each (a region that does not parse declares none)."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or not is_test_cell(cell):
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
