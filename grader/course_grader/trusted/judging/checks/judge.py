"""The verdict on a student's function, judged on the trusted side from the replies of its calls.

A failed case says what differed, expected against received, and on which call, written as Python a student can
paste into a cell. The judgement is total and bounded: ``judge_replies`` judges each case through
``safe_case_failure`` (and a ``judge`` through one boundary too), so any value the wire accepts gives a pass or a
failed case, and every value shown in a message is cut before it is written in full. A case the reference cannot
answer (a solver that gives up) is dropped by ``prepare_cases`` and named for the TA, never failed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..wire import NOT_CALLED_AGAIN, Reply, Unsupported, encode, python_literal
from .cases import MAX_CALL_CHARS, Case, Check, whole_call, call_text, expected_answer
from .compare import describe
from .second_calls import SECOND_CALL, CheckRefused, witnessing_second_call


#: Failed cases shown in full in one verdict.
MAX_SHOWN = 2
#: CPU seconds a check's own judge may spend on one part's replies (a judge may run a solver on what the student's
#: function returned: values the student chose can make it slow). CPU time, not wall time: a loaded machine does not
#: make an honest reply fail. Honest replies take well under a second of it.
JUDGE_CPU_SECONDS = 20.0

@dataclass
class Verdict:
    """The outcome of one check on one student function."""

    function: str
    n_cases: int
    failures: list[str]
    #: Each failure by its behaviour alone (no call, expected or received value), in the order of
    #: ``failures``: what the feedback shows before a due date (``trusted/gradebook/reveal.py``).
    summaries: list[str] = field(default_factory=list)
    #: Each behaviour its cases test (``Case.behaviour``, in order) with the first line of its first failed
    #: case's message, ``""`` when every case of it passed; empty when no case was judged on its own
    #: (not tested, or a ``judge`` failure that names no case). For the item analysis of the class.
    behaviours: dict[str, str] = field(default_factory=dict)
    #: The case each failure of ``failures`` is about, by its index in the cases (``-1``: a failure naming no case).
    failed_cases: list[int] = field(default_factory=list)
    #: The case whose failed first call is made again alone (``None``: none): the earliest failed call in the order the
    #: grader made them when it is a first call, else the leading failure when it is a first call's. Its answer may
    #: come from state an earlier call left: the grader calls it again alone, right after the cell that defines the
    #: function ran again, and says so when that answer is right (``with_earlier_calls_shown``).
    first_call_to_retry: int | None = None

    @property
    def passed(self) -> bool:
        return not self.failures

    def message(self) -> str:
        """For the student: why the part failed, or that it passed."""
        if self.passed:
            return f"{self.function}: the hidden tests pass ({self.n_cases} cases)."
        shown = self.failures[:MAX_SHOWN]
        more = len(self.failures) - len(shown)
        tail = f"\n\n(and {more} more failed case{'s' * (more > 1)} of {self.n_cases})" if more > 0 else ""
        return "\n\n".join(shown) + tail

    def behaviour_message(self) -> str:
        """``message`` with each shown failure reduced to its behaviour: no call, expected or received value.

        The same cases as ``message``, in the same order. A failure without a summary (a list of
        ``summaries`` that does not match ``failures``) is named only as a failed hidden case.
        """
        if self.passed:
            return self.message()
        summaries = self.summaries if len(self.summaries) == len(self.failures) else []
        shown = [summaries[k] if summaries else f"{self.function} failed a hidden case."
                 for k in range(min(MAX_SHOWN, len(self.failures)))]
        more = len(self.failures) - len(shown)
        tail = f"\n\n(and {more} more failed case{'s' * (more > 1)} of {self.n_cases})" if more > 0 else ""
        return "\n\n".join(dict.fromkeys(shown)) + tail

@dataclass(frozen=True)
class PreparedCases:
    """A check's cases for one submission, with the reference's answer to each where it has one."""

    cases: list[Case]
    expected: list | None  #: ``None`` for a check judged without a single right answer (``judge``)
    #: Each case drawn but dropped because the reference could not answer it: its behaviour and the error's type.
    #: Never sent, never judged: a case without a right answer cannot fail a submission (the TA's record says so).
    dropped: tuple[str, ...] = ()
    #: The second call of each case (``witnessing_second_call``) and the reference's answer to it; ``None``: the same
    #: call again, its answer not judged (a check with a ``judge``).
    again: list[Case] | None = None
    again_expected: list | None = None

def prepare_cases(check: Check, rng: np.random.Generator, *, refuse_broken_second_calls: bool = True) -> PreparedCases:
    """Draw the cases and compute every expected answer (of each second call too): work that needs nothing from the student.

    The grader runs it in a thread while the kernel starts and the student's cells run. A case
    the reference raises on (a solver that gives up on a rare draw) is dropped, and named in
    ``dropped``: the same secret, student and code drop the same cases, so a regrade is identical.
    The second calls' factors are drawn from ``rng`` after the cases (``witnessing_second_call``).

    A second call that breaks the check's own precondition (``CheckRefused``: the check's fault) is raised, as
    ``perceptron-course check`` wants it; with ``refuse_broken_second_calls`` false (grading a submission, where
    another secret's draw may meet what the check's one draw did not), its case is dropped and named instead, so
    that the part is judged on the others and nothing of the notebook fails for the check's fault.
    """
    cases = check.cases(rng)
    if check.reference is None or check.judge is not None:
        return PreparedCases(cases, None)
    kept, expected, dropped = [], [], []
    for case in cases:
        try:
            answer = expected_answer(check, case)
        except Exception as error:  # noqa: BLE001 - the reference's failure is the grader's, never the student's
            dropped.append(f"{case.behaviour} (the reference raised {type(error).__name__})")
            continue
        kept.append(case)
        expected.append(answer)
    judged, judged_expected, again, again_expected = [], [], [], []
    for index, case in enumerate(kept):
        try:
            follow, answer = witnessing_second_call(check, kept, index, expected[index], rng)
        except CheckRefused as error:
            if refuse_broken_second_calls:
                raise
            dropped.append(f"{case.behaviour} (its second call would break the check's own precondition: {error})")
            continue
        judged.append(case)
        judged_expected.append(expected[index])
        again.append(follow)
        again_expected.append(answer)
    return PreparedCases(judged, judged_expected, tuple(dropped), again, again_expected)

def not_implemented_message(function: str) -> str:
    return f"{function} is not implemented yet (it raises NotImplementedError): write it, then run its tests again."

def judge_replies(check: Check, cases: Sequence[Case], replies: Sequence[Reply | dict], stopped: str = "",
                  expected: Sequence | None = None, again: Sequence[Case] | None = None,
                  again_expected: Sequence | None = None) -> Verdict:
    """The verdict on a student's function from its replies, in the order of ``cases``.

    ``replies`` may be shorter than ``cases`` when the calls stopped early
    (``stopped`` says why, e.g. a timeout on the next call), or be a single
    ``{"missing": True}`` notice when the function does not exist. ``expected``, the
    reference's answer to each case, is computed here when not given.
    """
    cases = list(cases)
    if replies and isinstance(replies[0], dict):
        found = replies[0].get("found", "")
        what = "is not defined" if found in ("", "NoneType") else f"is not a function (it is a {found})"
        message = f"{check.function} {what}: run the cell that defines it."
        return Verdict(check.function, len(cases), [message], [message], _every_behaviour(cases, message))
    for reply in replies:
        if not reply.returned and reply.error[0] == "NotImplementedError":
            message = not_implemented_message(check.function)
            return Verdict(check.function, len(cases), [message], [message], _every_behaviour(cases, message))
    first_call_to_retry = None
    if check.judge is not None:
        failed = _judge_safely(check, cases, list(replies))
        summaries = [f"{check.function} failed a hidden case."] * len(failed)  # a judge's messages follow no pattern
    else:
        compared, first_call_to_retry = _compare_each(check, cases, replies, expected, again, again_expected)
        failed = [(case, message) for case, message, _ in compared]
        summaries = [summary for _, _, summary in compared]
    if len(replies) < len(cases):  # every case must be answered: silence is never a pass
        why = stopped or "gave no answer (its output was lost or rewritten)"
        unanswered = f"{check.function} {why} on this call:\n    {call_text(check, cases[len(replies)])}"
        failed.insert(0, (cases[len(replies)], unanswered))
        # (what follows " (" may quote an error's message, which may quote the call)
        summaries.insert(0, f"{check.function} {why.split(' (')[0].split(':')[0]} on {cases[len(replies)].behaviour}.")
        # the later unanswered cases are said once, in that message, and their behaviours fail with it
        return Verdict(check.function, len(cases), [message for _, message in failed], summaries,
                       _behaviour_results(cases, failed + [(case, unanswered) for case in cases[len(replies) + 1:]]),
                       _case_positions(cases, failed))
    return Verdict(check.function, len(cases), [message for _, message in failed], summaries,
                   _behaviour_results(cases, failed), _case_positions(cases, failed), first_call_to_retry)

def _case_positions(cases: Sequence[Case], failed: Sequence["tuple[Case | None, str]"]) -> list[int]:
    """The index in ``cases`` of each failed case (``-1`` for a failure that names none)."""
    where = {id(case): position for position, case in enumerate(cases)}
    return [where.get(id(case), -1) if case is not None else -1 for case, _ in failed]

def first_line(message: str) -> str:
    """The first non-empty line of a failure message: what went wrong (and usually on which behaviour)."""
    return next((line.strip() for line in message.splitlines() if line.strip()), "")

def _every_behaviour(cases: Sequence[Case], message: str) -> dict[str, str]:
    """Every behaviour of ``cases`` failed with ``message`` (the function is missing or not implemented)."""
    return dict.fromkeys((case.behaviour for case in cases), first_line(message))

def _behaviour_results(cases: Sequence[Case], failed: Sequence["tuple[Case | None, str]"]) -> dict[str, str]:
    """Each behaviour of ``cases`` with the first line of its first failed case (``""`` when all passed).

    Empty when a failure names no case: which behaviours passed is then unknown.
    """
    if any(case is None for case, _ in failed):
        return {}
    results = dict.fromkeys((case.behaviour for case in cases), "")
    for case, message in failed:
        assert case is not None
        if not results.get(case.behaviour):
            results[case.behaviour] = first_line(message) or "failed"
    return results

def _judge_safely(check: Check, cases: list[Case], replies: list[Reply]) -> "list[tuple[Case | None, str]]":
    """``check.judge`` with one boundary around it: whatever the replies hold, a list of ``(case, failure)``
    (``case`` is ``None`` for a failure that names none)."""
    assert check.judge is not None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings(), cpu_bounded(JUDGE_CPU_SECONDS):
            warnings.simplefilter("ignore")
            found = list(check.judge(cases, replies))
            return [(item[0], str(item[1])) if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Case)
                    else (None, str(item)) for item in found]
    except OverCpuTime:
        return [(None, f"{check.function} returned values the grader could not judge within {JUDGE_CPU_SECONDS:g} s "
                       "of its own work: return data of the form its docstring says, of a size and scale like the "
                       "examples'.")]
    except Exception as error:  # noqa: BLE001 - any value the wire accepts must give a verdict, never a crash
        return [(None, f"{check.function} returned values the grader could not judge ({type(error).__name__}): "
                       "return data of the form its docstring says.")]

def _compare_each(check: Check, cases: list[Case], replies: Sequence[Reply], expected: Sequence | None,
                  again: Sequence[Case] | None = None, again_expected: Sequence | None = None,
                  ) -> tuple[list[tuple[Case, str, str]], int | None]:
    """Each failed case with its failure message and its behaviour summary (``case_summary``), in the order to show;
    and the index of the case whose failed first call is to be made again alone (``None``: none): the earliest failed
    call when it is a first call, or else the leading failure when it is a first call's.

    A first call's failure comes before a second call's; named edge cases say most about a bug; among random cases the
    smallest input reads best. But when the earliest call that failed, in the order the grader made them, is a second
    call, the function's answers depend on more than the values sent (state kept between calls): that failure leads,
    with the calls that reproduce it, and every other failure says that its call alone may not reproduce it.
    """
    failed: list[tuple[Case, str, str, bool, int]] = []
    for index, (case, reply) in enumerate(zip(cases, replies)):
        first_expected = expected[index] if expected is not None else _NOT_COMPUTED
        message, second = safe_case_failure(check, case, reply, first_expected), False
        if not message and reply.returned:
            follow = (again[index], again_expected[index]) if again is not None and again_expected is not None \
                else (case, first_expected)
            message = second = _safe_second_call_failure(check, *follow, reply, first=case, first_expected=first_expected)
        if message:
            failed.append((case, message, case_summary(check, case, reply), bool(second), 2 * index + bool(second)))
    if not failed:
        return [], None
    earliest = min(failed, key=lambda item: item[4])
    first_call_to_retry = None if earliest[3] else earliest[4] // 2
    failed.sort(key=lambda item: (item[3], item[0].is_random, item[0].size() if item[0].is_random else 0))
    # A second call's failure alone does not show state: its values differ from the first call's, and a function wrong
    # on them fails it too. State is shown when no first call failed, or when a second call got the first call's answer.
    shows_state = all(second for _, _, _, second, _ in failed) or any(
        second and REPLAYED_CAUSE in message for _, message, _, second, _ in failed)
    if earliest[3] and shows_state:
        failed = [earliest] + [(case, message + "\n  " + KEPT_STATE_NOTE, summary, second, order)
                               for case, message, summary, second, order in failed if order != earliest[4]]
    elif earliest[3] and not failed[0][3]:
        # A second call failed first, but a first call's failure leads: made again alone, it shows whether its answer
        # came from an earlier call (a norm cached by len(w) is wrong on a later first call, and right alone).
        first_call_to_retry = failed[0][4] // 2
    return [item[:3] for item in failed], first_call_to_retry

#: The cause a second call's hint gives first when it returned the first call's answer again.
REPLAYED_CAUSE = "it returned the first call's answer again"
#: Said of a failure when the function also failed a second call that came earlier: its call alone may not show it.
KEPT_STATE_NOTE = ("note: your function got an earlier second call wrong (see the first failure) after answering its "
                   "first call right: it may keep state between calls, or be wrong only on the multiplied values; this "
                   "call alone, in a fresh kernel, may give another answer")

#: Said of a failed first call that, made again alone after the cell defining the function ran again, was right.
EARLIER_CALLS_NOTE = ("note: made again alone, right after the cell that defines your function was run again, this "
                      "call gave the right answer: your function's answer depends on calls made before it (a cache, a "
                      "global or a mutable default argument filled by an earlier call, such as a visible test's or an "
                      "earlier hidden case's)")
#: Said of every other failure of a function whose answers were shown to depend on earlier calls.
DEPENDS_NOTE = ("note: your function's answers depend on earlier calls (see the first failure): this call alone, in a "
                "fresh kernel, may give another answer")
#: Lone calls made again, each after the defining cell ran again, once a failed first call was right alone: a wrong
#: one among them shows an answer drawn at random, not state left by earlier calls.
LONE_REPEATS = 4
#: Said of every other failure of a function shown to answer the same call differently from one call to the next.
VARIES_NOTE = ("note: your function gives different answers to the same call (see the first failure): this call may "
               "give another answer each time you make it")
#: Characters of earlier calls written out to reproduce a failure that depends on them (the latest kept).
MAX_EARLIER_CALLS_CHARS = 12_000

def with_earlier_calls_shown(verdict: Verdict, check: Check, cases: Sequence[Case],
                             again: Sequence[Case] | None) -> Verdict:
    """``verdict`` once its ``first_call_to_retry``, made again alone in a fresh kernel, was answered right.

    That failure leads, with ``EARLIER_CALLS_NOTE`` and the calls that reproduce it in the order the grader made them
    (``earlier_calls``); every other failure says ``DEPENDS_NOTE``. A verdict without that failure is returned as it
    is. Only the messages change: the lone call's answer is the kernel's word, which cannot raise a score.
    """
    position = verdict.first_call_to_retry
    if position is None or position not in verdict.failed_cases:
        return verdict
    return _retried_call_leads(verdict, position, EARLIER_CALLS_NOTE + "; " + earlier_calls(check, cases, again, position),
                               DEPENDS_NOTE)

def with_random_answers_shown(verdict: Verdict, check: Check, cases: Sequence[Case], wrong: int) -> Verdict:
    """``verdict`` once its ``first_call_to_retry``, made alone ``LONE_REPEATS + 1`` times (each right after the cell
    defining the function ran again), was answered wrong ``wrong`` times and right the others: the answer is drawn at
    random.

    That failure leads, saying so with the call to make a few times; every other failure says ``VARIES_NOTE``. Only
    the messages change.
    """
    position = verdict.first_call_to_retry
    if position is None or position not in verdict.failed_cases:
        return verdict
    made = LONE_REPEATS + 1
    note = (f"note: made again alone {made} times, each right after the cell that defines your function was run "
            f"again, this call was answered right {_times(made - wrong)} and wrong {_times(wrong)}: your function gives "
            "different answers to the same arguments, so it draws random numbers (np.random or random without a "
            "fixed seed, a shuffle) or reads the clock; make this call a few times to see its answers change:\n"
            f"    {whole_call(check, cases[position])}\n"
            "  hint: the docstring asks for one answer to each call: visit the points in the order given and draw "
            "nothing at random")
    return _retried_call_leads(verdict, position, note, VARIES_NOTE)

def _times(count: int) -> str:
    return f"{count} time{'s' * (count != 1)}"

def _retried_call_leads(verdict: Verdict, position: int, lead_note: str, other_note: str) -> Verdict:
    """``verdict`` with the failure of case ``position`` first, followed by ``lead_note``, and ``other_note`` after
    every other failure."""
    lead = verdict.failed_cases.index(position)
    order = [lead] + [k for k in range(len(verdict.failures)) if k != lead]
    failures = [verdict.failures[lead] + "\n  " + lead_note]
    failures += [verdict.failures[k] + "\n  " + other_note for k in order[1:]]
    summaries = [verdict.summaries[k] for k in order] if len(verdict.summaries) == len(order) else verdict.summaries
    return dataclasses.replace(verdict, failures=failures, summaries=summaries,
                               failed_cases=[verdict.failed_cases[k] for k in order])

def with_failed_helpers_named(verdict: Verdict, helpers: Sequence[str]) -> Verdict:
    """``verdict`` with a note on its first failure: the student's function calls ``helpers``, the student's own
    functions whose parts failed too, so its wrong answers may come from theirs. Only the message changes."""
    if verdict.passed or not helpers:
        return verdict
    named = ", ".join(f"your {helper}" for helper in helpers)
    whose = "whose own part fails" if len(helpers) == 1 else "whose own parts fail"
    note = (f"\n  note: your {verdict.function} calls {named}, {whose} its hidden tests too: fix "
            f"{'that' if len(helpers) == 1 else 'those'} first, and {verdict.function}'s answers may come right with it")
    return dataclasses.replace(verdict, failures=[verdict.failures[0] + note, *verdict.failures[1:]])

def earlier_calls(check: Check, cases: Sequence[Case], again: Sequence[Case] | None, position: int) -> str:
    """How to reproduce the failed first call of ``cases[position]``: the notebook's cells, then the hidden calls of
    this check before it (each case's first call and its second, as the grader made them), then that call.

    Past ``MAX_EARLIER_CALLS_CHARS``, the latest earlier calls are kept and the number left out is said.
    """
    blocks = []
    for index in range(position):
        if again is not None and index < len(again):
            blocks.append(second_call_sequence(check, cases[index], again[index], first_note="",
                                               second_note=f"the second call of hidden case {index + 1}"))
        else:
            blocks.append(f"    {whole_call(check, cases[index])}")
    kept: list[str] = []
    for block in reversed(blocks):
        if sum(len(text) for text in kept) + len(block) > MAX_EARLIER_CALLS_CHARS:
            break
        kept.insert(0, block)
    cut = len(blocks) - len(kept)
    left_out = (f"    # ... the first {cut} hidden case{'s' * (cut > 1)} of {check.function} (too long to show here)\n"
                if cut else "")
    calls = "\n".join(kept + [f"    {whole_call(check, cases[position])}  # answered wrong"])
    return ("to reproduce it, run your notebook from the top through this part's test cell (as the grader did: "
            "the visible tests ran, and the hidden tests of the parts above), then these calls in the order the grader "
            f"made them:\n{left_out}{calls}\n  hint: compute each answer from the values of this call's arguments "
            "alone; a cache must be keyed by the values themselves, never by id(), a shape, a length or a count")

def case_summary(check: Check, case: Case, reply: Reply | None = None) -> str:
    """A failed case by its behaviour alone: what kind of failure, on which behaviour; no call, no values.

    Only the name of an exception the function raised is kept, never its message (it may quote the arguments).
    """
    if reply is not None and not reply.returned:
        kind = str(reply.error[0])[:80]
        return f"{check.function} raised {kind} on {case.behaviour}."
    try:
        changed = changed_arguments(check, case, reply.args_after) if reply is not None else ""
    except Exception:  # noqa: BLE001 - the trusted side is total; the failure message itself says more
        changed = ""
    if changed:
        return f"{check.function} changed its argument {changed} in place on {case.behaviour}."
    if reply is not None and shared_argument(check, case, reply):
        return f"{check.function} returned an argument itself where a new array is promised, on {case.behaviour}."
    return f"{check.function} gave a wrong answer on {case.behaviour}."

_NOT_COMPUTED = object()

def safe_case_failure(check: Check, case: Case, reply: Reply, expected: Any = _NOT_COMPUTED) -> str:
    """``case_failure`` that never raises: a comparison that breaks on a reply is a failed case naming the case.

    Every judgement of one case goes through here, so that any value the wire accepts
    (ragged lists, strings, integers beyond int64, empty arrays of huge shapes, ...)
    gives a pass or a readable failure. A check's own ``judge`` should use it too.
    """
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return case_failure(check, case, reply, expected)
    except Exception as error:  # noqa: BLE001 - the trusted side is total
        return (f"{check.function} returned a value the grader could not compare ({type(error).__name__}) "
                f"on {case.behaviour}:\n    {call_text(check, case)}\n  received: {describe(reply.result)}")

def case_failure(check: Check, case: Case, reply: Reply, expected: Any = _NOT_COMPUTED) -> str:
    """Why the reply to one case is wrong, or ``""`` (``expected``: the reference's answer, if already known).

    The call is written out only for a failed case (most cases pass, and writing arrays out is not free).
    """
    if not reply.returned:
        kind, message = reply.error
        detail = f"{kind}: {message}" if message else kind
        return f"{check.function} raised {detail}\n  on {case.behaviour}:\n    {call_text(check, case)}"
    changed = changed_arguments(check, case, reply.args_after)
    if changed:
        return (f"{check.function} changed its argument {changed} in place on {case.behaviour} (the caller's "
                f"{changed} is different after the call, whichever function changed it):\n    {call_text(check, case)}\n"
                f"  hint: work on copies; an in-place operation (+=, *=, a slice assignment, list.sort(), append) on "
                f"{changed} or on a row of it changes the caller's {_kind_of(case, check, changed)}")
    shared = shared_argument(check, case, reply)
    if shared:
        return (f"{check.function} returned the caller's {shared} itself (or a view of it) on {case.behaviour}, where "
                f"its docstring promises a new array:\n    {call_text(check, case)}\n"
                f"  hint: return a copy ({shared}.copy(), or np.array({shared}, dtype=float)): an answer that is the "
                f"caller's array changes when the caller changes {shared}, and the other way round")
    assert check.compare is not None
    if expected is _NOT_COMPUTED:
        expected = expected_answer(check, case)
    difference = check.compare(reply.result, expected)
    if difference is None:
        return ""
    lines = [f"{check.function} returned {difference.what} on {case.behaviour}:", f"    {call_text(check, case)}"]
    lines += [f"  {label}: {text}" for label, text in (("expected", difference.expected), ("received", difference.received))
              if text]  # a part with nothing to say is left out, never printed empty
    if difference.detail:
        lines.append(f"  {difference.detail}")
    if difference.hint:
        lines.append(f"  hint: {difference.hint}")
    return "\n".join(lines)

def _safe_second_call_failure(check: Check, case: Case, expected: Any, reply: Reply, *, first: Case | None = None,
                              first_expected: Any = _NOT_COMPUTED) -> str:
    """``_second_call_failure`` that never raises (the trusted side is total)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if expected is _NOT_COMPUTED:
                expected = expected_answer(check, case)
            return _second_call_failure(check, case, expected, reply, first=first, first_expected=first_expected)
    except Exception as error:  # noqa: BLE001 - any value the wire accepts gives a failed case, never an exception
        return (f"{check.function} returned a value the grader could not compare ({type(error).__name__}) {SECOND_CALL}:"
                f"\n    {call_text(check, case)}")

def _second_call_failure(check: Check, case: Case, expected: Any, reply: Reply, *, first: Case | None = None,
                         first_expected: Any = _NOT_COMPUTED) -> str:
    """Why the second call (``witnessing_second_call``, on the same array objects), ``case``, failed where the first
    passed; or ``""``.

    It is a call of its own, with its own right answer: a function wrong on it fails it, and so does one whose first
    call changed the arrays in place. This verdict rests on that answer, judged here, never on the kernel's own report
    of the arguments (which student code that ran before the harness can rewrite). The message gives the calls in the
    order the grader made them, on the same objects (``second_call_sequence``): pasted into a fresh kernel, they give
    the same answer, for a function that keeps state keyed by an object's identity too.
    """
    assert check.compare is not None
    if reply.again_error is not None:
        kind, message = reply.again_error
        return (f"{check.function} raised {kind}{': ' + message if message else ''} {SECOND_CALL}:"
                f"{_second_call_steps(check, first, case)}\n  hint: {second_call_hint(check, case, raised=True)}")
    if reply.again is NOT_CALLED_AGAIN:
        return ""
    difference = check.compare(reply.again, expected)
    if difference is None:
        return ""
    replayed = first_expected is not _NOT_COMPUTED and _same_answer(check, reply.again, first_expected)
    return (f"{check.function} returned {difference.what} {SECOND_CALL}:{_second_call_steps(check, first, case)}\n"
            f"  expected: {difference.expected}\n  received: {difference.received}\n"
            f"  hint: {second_call_hint(check, case, replayed=replayed)}")

def _second_call_steps(check: Check, first: Case | None, case: Case) -> str:
    """The calls that reproduce a failed second call, written out only once it failed (most pass, and writing arrays
    out is not free)."""
    if first is None:
        return f"\n    {call_text(check, case)}"
    return (f"\n  your function answered the first call right and left its arguments as they were sent; to reproduce "
            f"it in a fresh kernel, run these calls in the order the grader made them:\n"
            f"{second_call_sequence(check, first, case)}")

def _same_answer(check: Check, received: Any, first_expected: Any) -> bool:
    assert check.compare is not None
    try:
        return check.compare(received, first_expected) is None
    except Exception:  # noqa: BLE001 - cannot tell: not said
        return False

def second_call_hint(check: Check, case: Case, *, raised: bool = False, replayed: bool = False) -> str:
    """What makes a second call fail when the first passed and left its arguments as they were sent: the causes in
    order of likelihood, the one the answer shows first."""
    causes = []
    if replayed:
        causes.append(f"{REPLAYED_CAUSE}, so it did not compute this one from the values "
                      "sent: a cache or a global that keeps an answer (keyed by the arguments' id(), shape, length or "
                      "number of classes, which both calls share), or an answer that ignores its inputs")
    else:
        causes.append(f"{'raising' if raised else 'this answer'} after a right first call means either that the "
                      "function is wrong on values like these (the first call's, multiplied as shown) or that it keeps "
                      "state between calls: a cache or a global filled by an earlier call (keyed by the arguments' "
                      "id(), shape, length or number of classes), a mutable default argument, or an object it changed "
                      "in place during the call before (other than its arguments)")
    if any(isinstance(value, str) for value in (*case.args, *case.kwargs.values())):
        causes.append("compare strings with ==, never with `is`: the second call's strings are made at run time, "
                      "equal to the literals you type ('margin' == rule) but other objects, so `rule is 'margin'` is "
                      "False there, as it is for any string a program builds")
    causes.append("compute each answer from the values of this call's arguments alone")
    return "; ".join(causes)

def second_call_sequence(check: Check, first: Case, second: Case, *, first_note: str = "the first call: answered right",
                         second_note: str = "the second call: answered wrong") -> str:
    """The first call and the second, as the grader made them, as Python to paste (each line indented by four; each
    call followed by its note as a comment, none when the note is empty).

    Each array or list argument of the first call gets a name (its parameter's), the first call is made on the names,
    each argument the grader multiplied in place is multiplied in place (an array by ``*=``, a list by assigning its
    entries), and the second call is made on the same names: an answer kept by an object's identity shows again.
    """
    names = list(check.parameters) + [f"arg{k + 1}" for k in range(len(check.parameters), len(first.args))]
    slots = [*enumerate(first.args), *first.kwargs.items()]
    named = {where: (names[where] if isinstance(where, int) else where) for where, value in slots
             if isinstance(value, (np.ndarray, list))}
    lines = [f"{named[where]} = {python_literal(value, limit=MAX_CALL_CHARS)}" for where, value in slots if where in named]

    def literal(value: Any, fresh: bool) -> str:
        if fresh and isinstance(value, str) and len(value) > 1:  # a new object, as the harness sends (fresh_string)
            return f"''.join([{python_literal(value[:1])}, {python_literal(value[1:], limit=MAX_CALL_CHARS)}])"
        return python_literal(value, limit=MAX_CALL_CHARS)

    def call(case: Case, objects: bool, fresh: bool = False) -> str:
        written = [named[where] if objects and where in named else literal(value, fresh)
                   for where, value in enumerate(case.args)]
        written += [f"{key}={named[key] if objects and key in named else literal(value, fresh)}"
                    for key, value in case.kwargs.items()]
        return f"{check.function}({', '.join(written)})"

    lines.append(call(first, True) + (f"  # {first_note}" if first_note else ""))
    for where, factor in second.scaled.items():
        if not isinstance(factor, (np.ndarray, list)) and factor == 1:
            continue  # multiplied by 1: nothing to paste
        name = named.get(where, str(where))
        value = first.args[where] if isinstance(where, int) else first.kwargs[where]
        scaled = second.args[where] if isinstance(where, int) else second.kwargs[where]
        if isinstance(value, np.ndarray):
            lines.append(f"{name} *= {python_literal(factor, limit=MAX_CALL_CHARS)}  # the grader multiplied it in place")
        else:
            lines.append(f"{name}[:] = {python_literal(scaled, limit=MAX_CALL_CHARS)}  # the grader multiplied its entries in place")
    same_objects = all(value is mine or where in second.scaled for where, value, mine in
                       [*((k, v, first.args[k]) for k, v in enumerate(second.args) if k < len(first.args) and k in named),
                        *((k, v, first.kwargs.get(k)) for k, v in second.kwargs.items() if k in named)])
    lines.append(call(second, same_objects, fresh=True) + (f"  # {second_note}" if second_note else ""))
    return "\n".join(f"    {line}" for line in lines)

def shared_argument(check: Check, case: Case, reply: Reply) -> str:
    """The name of the first argument a returned array shares memory with, for a check whose docstring promises new
    arrays (``Check.new_arrays``); or ``""``."""
    if not check.new_arrays or not reply.shares:
        return ""
    names = list(check.parameters[: len(case.args)]) + sorted(case.kwargs)
    return names[reply.shares[0]] if reply.shares[0] < len(names) else f"argument {reply.shares[0] + 1}"

def changed_arguments(check: Check, case: Case, args_after: list) -> str:
    """The name of the first argument the call changed in place, or ``""``.

    Every mutable argument counts: an array, a list (``caps.sort()`` reorders the caller's list:
    attack round 13, finding 4), and arrays or lists inside a list, tuple or dict; judged by value
    against what the grader sent.
    """
    sent = list(case.args) + [case.kwargs[key] for key in sorted(case.kwargs)]
    names = list(check.parameters[: len(case.args)]) + sorted(case.kwargs)
    for name, before, after in zip(names, sent, args_after):
        if isinstance(before, (np.ndarray, list, tuple, dict)) and not _unchanged(before, after):
            return name
    return ""

def _kind_of(case: Case, check: Check, name: str) -> str:
    """``list`` when the argument ``name`` of ``case`` was sent as a Python list, else ``array``."""
    sent = dict(zip(check.parameters, case.args), **case.kwargs).get(name)
    return "list" if isinstance(sent, list) else "array"

def _unchanged(before: Any, after: Any) -> bool:
    """Whether ``after`` (anything the wire accepts) is still ``before`` (what the grader sent): same types and values.

    An entry of a list is compared by its wire form (``np.int32`` and ``np.int64`` cross as the same
    thing), a float NaN equal to itself.
    """
    if isinstance(before, np.ndarray):
        return _same_array(before, after)
    if isinstance(before, (list, tuple)):
        return (type(after) is type(before) and len(after) == len(before)
                and all(_unchanged(item, item_after) for item, item_after in zip(before, after)))
    if isinstance(before, dict):
        return (isinstance(after, dict) and set(after) == set(before)
                and all(_unchanged(item, after[key]) for key, item in before.items()))
    if isinstance(after, (np.ndarray, list, tuple, dict, Unsupported)):
        return False
    tag, value = encode(before)
    tag_after, value_after = encode(after)
    return tag == tag_after and (value == value_after or value != value and value_after != value_after)

def _same_array(before: np.ndarray, after: Any) -> bool:
    """Whether ``after`` (anything the wire accepts) is still the array ``before``: same dtype, shape and values."""
    if not isinstance(after, np.ndarray) or after.dtype != before.dtype or after.shape != before.shape:
        return False
    return bool(np.array_equal(after, before, equal_nan=before.dtype.kind == "f"))


class OverCpuTime(BaseException):
    """Raised in a judge that spent its CPU time (a ``BaseException``: a judge's own ``except Exception`` lets it by)."""


@contextlib.contextmanager
def cpu_bounded(seconds: float):
    """Raise ``OverCpuTime`` in the block once this process has spent ``seconds`` of CPU time in it.

    A profiling timer (``ITIMER_PROF``: CPU time, user and system) whose signal is handled in the main thread; in
    another thread no signal can be handled, and the block runs unbounded (the grader judges in its main thread).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def over(signum, frame):
        raise OverCpuTime()

    previous = signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
