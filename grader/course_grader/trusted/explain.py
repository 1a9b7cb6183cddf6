"""``perceptron-course explain STUDENT ASSIGNMENT``: regrade one submission and compare with its replay record.

What a TA needs for a regrade request: the submission is graded again, alone, in a scratch
copy of the course (a hidden folder in the course root, removed afterwards) with the same
sandbox, the same secret and the same intake as ``grade``; the real gradebook, ``autograded/``,
``feedback/``, the exports and the records are never touched. Then, part by part, the score
recorded when it was graded is set beside the score now, and every input of the grade that
differs from the record is named: the submitted files, the course secret, a checker, the cases
drawn, the grader's code, the course commit, the environment, the sandbox, the limits hit.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .course.commands import grader_command
from .course.course import Course, CourseError, copy_course_settings
from .gradebook.outcome import GRADED
from .gradebook.records import GradingContext, build_record, read_record, record_path
from .course.secret import SECRET_FILE, SecretError, read_secret
from .course.selection import choose_assignments, select_submissions

#: Prefix of the scratch course made in the course root (the sandbox hides the course root from the kernel).
SCRATCH_PREFIX = ".explain-"
SHORT_HEX = 12


@dataclass
class Replay:
    """A regrade set beside the record it replays."""

    student: str
    assignment: str
    recorded: dict | None  #: the replay record, or the gradebook's scores (``from_gradebook``), or ``None``
    now: dict | None  #: the regrade's record; ``None`` when the regrade failed
    failure: str = ""  #: why the regrade failed
    from_gradebook: bool = False  #: no record: ``recorded`` holds only the gradebook's automatic scores

    @property
    def differing_parts(self) -> list[str]:
        """Parts graded by tests whose score now is not the recorded one (or that exist on one side only)."""
        if self.now is None or self.recorded is None:
            return []
        recorded, now = self.recorded["parts"], self.now["parts"]
        return [part for part in sorted(set(recorded) | set(now))
                if _tested(recorded.get(part)) or _tested(now.get(part))
                if _score(recorded.get(part)) != _score(now.get(part))]

    @property
    def same_hand_in(self) -> bool:
        """Whether the hand-in regraded is the one recorded (every byte: its cases are drawn from them); unknown without a record."""
        return self.from_gradebook or (self.recorded or {}).get("submission") == (self.now or {}).get("submission")

    @property
    def reproduces(self) -> bool:
        """The same scores, for the same hand-in: other content drawing the same scores reproduces nothing."""
        return self.now is not None and self.recorded is not None and not self.differing_parts and self.same_hand_in


def _tested(part: dict | None) -> bool:
    return isinstance(part, dict) and part.get("graded_by") != "hand"


def _score(part: dict | None) -> float | None:
    if not isinstance(part, dict) or part.get("score") is None:
        return None
    try:
        return float(part["score"])
    except (TypeError, ValueError):
        return None


# ------------------------------------------------------------------ the regrade


def check_submission(course: Course, student: str, assignment: str) -> None:
    """Refuse an unknown assignment, or a student who handed in nothing for it, before anything slow.

    Raises
    ------
    CourseError
        Saying which assignments the course has, or who handed this assignment in.
    """
    choose_assignments(course, [assignment])
    selected = select_submissions(course, [assignment], [student], warn=False)
    if (student, assignment) not in selected:
        others = sorted(s for s, a in course.submissions() if a == assignment)
        raise CourseError(f"{student} handed in no {assignment}; students who did: {', '.join(others) or 'none'}")


def explain(course: Course, student: str, assignment: str, *, unsandboxed: bool = False) -> Replay:
    """Regrade one submission in a scratch copy of the course and set it beside its record.

    Raises
    ------
    CourseError
        For an unknown student or assignment, a course never graded (no secret), or a course
        folder where no scratch copy can be made.
    """
    from .running.autograde import quiet_nbgrader_warnings
    from .running.batch import GradeJob, copy_gradebook, grade_job
    from .gradebook.ledger import fingerprint
    from .pipeline import record_source_cells
    from .running.sandbox import choose_isolation

    check_submission(course, student, assignment)
    quiet_nbgrader_warnings()
    recorded = read_record(course, student, assignment)
    from_gradebook = recorded is None
    try:
        secret = read_secret(course.root / SECRET_FILE)
    except SecretError as error:
        raise CourseError(f"cannot replay a grade: {error}") from None
    isolation = choose_isolation(course.term().limits.memory_mib, unsandboxed=unsandboxed)
    context = GradingContext.now(course, secret)
    submitted = fingerprint(course, student, assignment).submitted
    try:
        scratch_folder = tempfile.TemporaryDirectory(dir=course.root, prefix=SCRATCH_PREFIX, ignore_cleanup_errors=True)
    except OSError as error:
        raise CourseError(f"cannot make a scratch copy in {course.root} ({error.strerror})") from None
    with scratch_folder as scratch:
        scratch_course = _scratch_course(course, Path(scratch) / "course", copy_gradebook)
        if recorded is None:  # from the copy: nbgrader would create or migrate the real gradebook on opening it
            recorded = _gradebook_scores(scratch_course, student, assignment)
        record_source_cells(scratch_course, [assignment])
        job = GradeJob(str(course.root), str(Path(scratch) / "job"), str(scratch_course.root / "gradebook.db"),
                       student, assignment, isolation.sandbox, isolation.memory_mb)
        outcome = grade_job(job)  # reads the course (intake, secret), writes only in the job's area
        if outcome.status != GRADED:
            return Replay(student, assignment, recorded, None, outcome.reason, from_gradebook)
        now = build_record(context, Path(job.area), outcome, submitted, isolation)
    return Replay(student, assignment, recorded, now, "", from_gradebook)


def _scratch_course(course: Course, destination: Path, copy_gradebook) -> Course:
    """A copy of what grading one submission needs: the configuration, ``source/`` and the gradebook (due dates, extensions)."""
    destination.mkdir()
    copy_course_settings(course.root, destination)
    shutil.copytree(course.source, destination / "source", symlinks=True)
    if (course.root / "gradebook.db").is_file():
        copy_gradebook(course.root / "gradebook.db", destination / "gradebook.db")
    return Course.open(destination)


def _gradebook_scores(course: Course, student: str, assignment: str) -> dict | None:
    """The automatic scores the gradebook holds for a submission without a record, as a record's ``parts``; ``None`` if none."""
    from .course.course import nbgrader_api

    written = set(course.manually_graded_cells(assignment))
    if not (course.root / "gradebook.db").is_file():
        return None
    try:
        with nbgrader_api(course).gradebook as gradebook:
            submission = gradebook.find_submission(assignment, student)
            parts = {f"{notebook.name}/{grade.name}": {
                "graded_by": "hand" if grade.name in written else "tests",
                "score": None if grade.name in written else float(grade.auto_score or 0.0),
                "max_score": float(grade.max_score), "checks": {}}
                for notebook in submission.notebooks for grade in notebook.grades}
    except Exception:  # noqa: BLE001 - nbgrader's MissingEntry: never graded, or its grading failed
        return None
    return {"parts": parts}


# ------------------------------------------------------------------ what a TA reads


def report_lines(replay: Replay, course: Course) -> list[str]:
    """The explanation, in plain lines (student text in them is made safe by the caller, ``terminal_text``)."""
    recorded, now = replay.recorded, replay.now
    lines = [f"Replaying the grade of {replay.student}/{replay.assignment}"]
    if replay.from_gradebook:
        path = record_path(course, replay.student, replay.assignment)
        lines.append(f"no replay record ({path}): graded before records were kept, or its last grading failed; "
                     + ("comparing with the gradebook's automatic scores only" if recorded else "and nothing in the gradebook either"))
    else:
        lines.append(f"recorded when graded on {recorded.get('graded_at', '?')}")
    lines.append("regraded now, alone, in a scratch copy of the course "
                 f"({'sandboxed' if now is None or now['isolation'].get('sandbox') else 'NOT sandboxed'}); "
                 "the gradebook, autograded/, feedback/, the exports and the records are untouched")
    lines.append("")
    if now is None:
        lines.append(f"the regrade FAILED: {replay.failure}")
        lines.append("")
        lines.append(f"Result: does NOT reproduce (the regrade failed; grade it with `{grader_command()} grade` to see why in the report)")
        return lines
    lines += _parts_table(replay)
    lines.append("")
    causes = _differences(recorded or {}, now, replay.from_gradebook)
    lines.append("What differs from the record:" if causes else "What differs from the record: nothing")
    lines += [f"- {cause}" for cause in causes]
    lines.append(_resources_line(recorded or {}, now))
    lines.append("")
    lines += _verdict(replay, causes)
    return lines


def _points(value: float | None, maximum: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}/{maximum:g}" if maximum is not None else f"{value:g}"


def _parts_table(replay: Replay) -> list[str]:
    recorded = (replay.recorded or {}).get("parts", {})
    now = replay.now["parts"] if replay.now else {}
    names = sorted(set(recorded) | set(now))
    width = max([len(name) for name in names] + [len("part"), len("total (autograded parts)")])
    rows = [f"{'part':<{width}}  {'recorded':>9}  {'now':>9}"]
    totals = [0.0, 0.0, 0.0]
    for name in names:
        old, new = recorded.get(name), now.get(name)
        if not (_tested(old) or _tested(new)):
            rows.append(f"{name:<{width}}  written answer, graded by hand: not replayed")
            continue
        maximum = (new or old or {}).get("max_score")
        totals[0] += _score(old) or 0.0
        totals[1] += _score(new) or 0.0
        totals[2] += float(maximum or 0.0)
        same = _score(old) == _score(new)
        notes = _check_notes(old or {}, new or {}) if not replay.from_gradebook else []
        status = "same" if same else "DIFFERS"
        row = f"{name:<{width}}  {_points(_score(old), maximum):>9}  {_points(_score(new), maximum):>9}  {status}"
        rows.append(row + (f" ({'; '.join(notes)})" if notes else ""))
    rows.append(f"{'total (autograded parts)':<{width}}  {_points(totals[0], totals[2]):>9}  {_points(totals[1], totals[2]):>9}")
    return rows


def _check_notes(old: dict, new: dict) -> list[str]:
    """What differs in the checks of one part: their cases, their checker, which functions are checked."""
    before, after = old.get("checks", {}) or {}, new.get("checks", {}) or {}
    notes = []
    for function in sorted(set(before) | set(after)):
        if function not in before:
            notes.append(f"checks {function} now, not then")
        elif function not in after:
            notes.append(f"no longer checks {function}")
        else:
            if before[function].get("checker") != after[function].get("checker"):
                notes.append(f"checker of {function} changed")
            if before[function].get("case_set") != after[function].get("case_set"):
                notes.append(f"cases of {function} changed")
    return notes


def _short(value: object) -> str:
    text = str(value)
    return text[:SHORT_HEX] if len(text) > 20 and all(c in "0123456789abcdef" for c in text) else text


def _differences(recorded: dict, now: dict, from_gradebook: bool) -> list[str]:
    """Each input of the grade that differs between the record and now, in words, most telling first."""
    if from_gradebook:
        return ["nothing but the scores can be compared: there is no replay record"]
    found = []
    if recorded.get("submission") != now.get("submission"):
        found.append(f"the submission: its files are not those graded (hash {_short(recorded.get('submission'))} then, "
                     f"{_short(now.get('submission')) or 'unreadable'} now): a new hand-in since? `{grader_command()} grade` grades it")
    if recorded.get("secret_id") != now.get("secret_id"):
        found.append(f"the course secret ({SECRET_FILE}): another secret than the one it was graded with "
                     f"(id {_short(recorded.get('secret_id'))} then, {_short(now.get('secret_id'))} now): every random case is new")
    checkers, cases = _changed_checks(recorded.get("parts", {}), now.get("parts", {}))
    if checkers:
        found.append(f"the checker of {', '.join(checkers)}: its check, comparison or reference code changed since")
    if cases:
        found.append(f"the cases drawn for {', '.join(cases)} (case set {_short(recorded.get('case_set'))} then, "
                     f"{_short(now.get('case_set'))} now)")
    if recorded.get("grader") != now.get("grader"):
        old, new = recorded.get("grader") or {}, now.get("grader") or {}
        found.append(f"the grader: {grader_command()} {old.get('version', '?')} (source {old.get('source', '?')}) then, "
                     f"{new.get('version', '?')} (source {new.get('source', '?')}) now")
    if recorded.get("course_commit") != now.get("course_commit"):
        found.append(f"the course commit: {recorded.get('course_commit', 'not recorded')} then, {now.get('course_commit')} now")
    old_environment, new_environment = recorded.get("environment") or {}, now.get("environment") or {}
    changed = [f"{name} {old_environment.get(name, 'absent')} -> {new_environment.get(name, 'absent')}"
               for name in sorted(set(old_environment) | set(new_environment)) if old_environment.get(name) != new_environment.get(name)]
    if changed:
        found.append(f"the environment: {', '.join(changed)}")
    old_sandbox, new_sandbox = (recorded.get("isolation") or {}).get("sandbox"), now["isolation"].get("sandbox")
    if old_sandbox != new_sandbox:
        found.append(f"the sandbox: {'on' if old_sandbox else 'off'} then, {'on' if new_sandbox else 'off'} now")
    if sorted(recorded.get("limits_hit") or []) != sorted(now.get("limits_hit") or []):
        found.append(f"the limits hit: {'; '.join(recorded.get('limits_hit') or []) or 'none'} then, "
                     f"{'; '.join(now.get('limits_hit') or []) or 'none'} now (a busy machine can make a cell hit its time limit)")
    return found


def _changed_checks(recorded: dict, now: dict) -> tuple[list[str], list[str]]:
    """The functions whose checker changed, and those whose cases changed, over every part."""
    checkers, cases = set(), set()
    for part in set(recorded) & set(now):
        before, after = (recorded[part] or {}).get("checks", {}) or {}, (now[part] or {}).get("checks", {}) or {}
        for function in set(before) & set(after):
            if before[function].get("checker") != after[function].get("checker"):
                checkers.add(function)
            if before[function].get("case_set") != after[function].get("case_set"):
                cases.add(function)
    return sorted(checkers), sorted(cases)


def _resources_line(recorded: dict, now: dict) -> str:
    def shown(resources: dict | None) -> str:
        if not resources:
            return "not recorded"
        if "kernel_cpu_seconds" in resources:
            kernels = (f"{resources['kernel_cpu_seconds']:.1f} s CPU in {resources.get('kernels', 0):.0f} grading "
                       f"kernel(s), peak {resources.get('kernel_peak_memory_mib', 0):.0f} MiB")
        else:
            kernels = f"at least {resources.get('kernel_cpu_seconds_at_least', 0):.1f} s CPU in the grading kernel"
        return (f"{resources.get('wall_seconds', 0):.1f} s wall, {kernels}, "
                f"{resources.get('grader_cpu_seconds', 0):.1f} s CPU in the grader")
    return f"resources (not compared): {shown(recorded.get('resources'))} then; {shown(now.get('resources'))} now"


def _verdict(replay: Replay, causes: list[str]) -> list[str]:
    if replay.recorded is None:
        return ["Result: cannot tell: this submission has no record and no score in the gradebook"]
    if replay.reproduces:
        tail = " (though the inputs above differ: they did not change its score)" if causes and not replay.from_gradebook else ""
        return [f"Result: reproduces: every autograded part has its recorded score{tail}"]
    parts = replay.differing_parts
    if not parts:  # same scores, other content
        return ["Result: does NOT reproduce: the hand-in regraded is not the one recorded (its files changed since); "
                f"the same scores on other content say nothing about the recorded grade. `{grader_command()} grade` grades the new hand-in"]
    lines = [f"Result: does NOT reproduce: {len(parts)} part{'s' * (len(parts) > 1)} scored differently ({', '.join(parts)})"]
    if replay.from_gradebook:
        lines.append("There is no record of what it was graded with; grade it again to keep one.")
    elif causes:
        lines.append(f"Most likely because of {causes[0].split(':')[0]}; see the list above.")
    else:
        lines.append("Nothing recorded differs: the submission's own code is not deterministic (unseeded randomness, "
                     "time, the machine's load) or it ran close to a limit; read its code.")
    return lines
