"""The reveal schedule: when a student's feedback shows the details of a failed hidden case.

A failed hidden case says, in the autograded notebook, what it called, what was expected and
what was received (``checks.judge.case_failure``). The course chooses when the student's
feedback page shows that (``c.RevealSchedule.show_details`` in ``nbgrader_config.py``):

- ``"now"`` (the default): every page shows everything as soon as it is graded;
- ``"after_due_date"``: until the student's due date has passed (the assignment's due date in
  the gradebook plus that student's extension, nbgrader's ``SubmittedAssignment.duedate``), a
  failed hidden case is shown by its behaviour alone ("predict gave a wrong answer on a point with
  score exactly 0 ..."), with the date the details come; ``perceptron-course refresh`` after that
  date rewrites the page with them. A submission whose assignment has no due date shows
  everything now.

The autograded notebook always keeps the full verdict (the TA reads it in the formgrader); only
the feedback step conceals, with the behaviours ``ResilientExecute`` recorded in the notebook's
metadata when it judged the cases (never read from an output, which a student can print). The
feedback pages a submission has show ``feedback_state``: ``refresh`` rewrites a page whose state
changed, so a page written before the due date is rewritten by the first ``refresh`` after it.

Every time is timezone-aware; nbgrader keeps due dates in UTC without a zone, and they are read
as UTC. The moment the schedule is read at is the clock's, unless ``grade`` or ``refresh`` (or a
test) give it (``RevealSchedule.as_of``), so that the pages and the ledger agree on one moment.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool, Enum, TraitError, Unicode

from ..course.course import Course, CourseError, load_config
from .ledger import gradebook_state
from ..judging.grading_metadata import GRADING_METADATA
from ..judging.verdicts import FAILED_BEHAVIOURS, VERDICT_ERROR

SCHEDULES = ("now", "after_due_date")
#: How ``nbgrader_config.py`` names the preprocessor in ``c.GenerateFeedback.preprocessors``.
PREPROCESSOR = "course_grader.trusted.gradebook.reveal.RevealSchedule"
#: What a failed hidden case without a recorded behaviour shows before the due date (fail closed).
UNKNOWN_BEHAVIOUR = "A hidden case failed."


def clock() -> dt.datetime:
    """Now, in UTC (timezone-aware)."""
    return dt.datetime.now(dt.timezone.utc)


def parse_moment(text: str) -> dt.datetime:
    """An ISO 8601 date and time with its zone (``2026-11-27T17:00:00+01:00``), timezone-aware.

    Raises
    ------
    ValueError
        If ``text`` is not such a time, or has no zone.
    """
    moment = dt.datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no timezone (write it as 2026-11-27T17:00:00+01:00)")
    return moment


def aware(moment: dt.datetime) -> dt.datetime:
    """``moment`` itself if it has a zone, else refused: a time without a zone means nothing here."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{moment!r} has no timezone: give a timezone-aware datetime")
    return moment


def due_date(gradebook, assignment: str, student: str) -> dt.datetime | None:
    """The student's due date of ``assignment`` (the assignment's, plus their extension), in UTC; ``None`` if none is set.

    nbgrader stores due dates in UTC without a zone (``nbgrader.utils.parse_utc``).
    """
    from nbgrader.api import MissingEntry

    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return assignment_due_date(gradebook, assignment)
    due, extension = submission.assignment.duedate, submission.extension
    if due is None:
        return None
    return (due + (extension or dt.timedelta(0))).replace(tzinfo=dt.timezone.utc)


def assignment_due_date(gradebook, assignment: str) -> dt.datetime | None:
    """The due date of ``assignment`` itself (no one's extension), in UTC; ``None`` if none is set or no such assignment."""
    from nbgrader.api import MissingEntry

    try:
        due = gradebook.find_assignment(assignment).duedate
    except MissingEntry:
        return None
    return None if due is None else due.replace(tzinfo=dt.timezone.utc)


def details_shown(show_details: str, due: dt.datetime | None, moment: dt.datetime) -> bool:
    """Whether a failed hidden case shows its call, expected and received values at ``moment``."""
    return show_details == "now" or due is None or aware(moment) >= due


def when_text(due: dt.datetime) -> str:
    """``2026-11-27 16:00 UTC``: a due date as the feedback and the self-check write it."""
    return due.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def concealed_note(due: dt.datetime) -> str:
    """The line under a failed hidden case whose details wait for the due date."""
    return (f"The call, what was expected and what was received are shown in this feedback after your due date, "
            f"{when_text(due)} (your extension included, if you have one).")


def recorded_behaviours(nb: NotebookNode) -> dict[str, list[str]]:
    """The behaviour message of each failed verdict, by test cell ``grade_id``, as ``ResilientExecute`` recorded them."""
    recorded = nb.metadata.get(GRADING_METADATA, {})
    by_cell = recorded.get(FAILED_BEHAVIOURS) if isinstance(recorded, dict) else None
    if not isinstance(by_cell, dict):
        return {}
    return {str(grade_id): [str(text) for text in texts] for grade_id, texts in by_cell.items() if isinstance(texts, list)}


def conceal(nb: NotebookNode, due: dt.datetime) -> NotebookNode:
    """``nb`` with each failed verdict's message replaced by its behaviours and ``concealed_note``.

    A verdict with no recorded behaviour shows ``UNKNOWN_BEHAVIOUR`` (fail closed). The traceback,
    which repeats the message, is replaced too.
    """
    behaviours, note = recorded_behaviours(nb), concealed_note(due)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        recorded = behaviours.get(str(cell.metadata.get("nbgrader", {}).get("grade_id", "")), [])
        failed = [output for output in cell.get("outputs", [])
                  if output.get("output_type") == "error" and output.get("ename") == VERDICT_ERROR]
        for index, output in enumerate(failed):
            text = recorded[index] if index < len(recorded) else UNKNOWN_BEHAVIOUR
            output["evalue"] = f"{text}\n\n{note}"
            output["traceback"] = [f"{VERDICT_ERROR}: {output['evalue']}"]
    return nb


class RevealSchedule(Preprocessor):
    """A ``GenerateFeedback`` preprocessor: before the student's due date, failed hidden cases by their behaviour only.

    Needs nbgrader's resources (``db_url``, ``assignment``, ``student``); runs before
    ``HideHiddenTests``.
    """

    enabled = Bool(True).tag(config=True)
    show_details = Enum(SCHEDULES, default_value="now", help=(
        "When the feedback shows the call, expected and received values of a failed hidden case: 'now', or "
        "'after_due_date' (the student's due date, extension included; before it, only the behaviour)")).tag(config=True)
    as_of = Unicode("", help=(
        "The moment to read the schedule at, ISO 8601 with a timezone; empty: the clock. Set by "
        "the grader's `grade` and `refresh`")).tag(config=True)

    def moment(self) -> dt.datetime:
        return parse_moment(self.as_of) if self.as_of else clock()

    def preprocess(self, nb, resources):
        if self.show_details == "now":
            return nb, resources
        from nbgrader.api import Gradebook

        grading = resources["nbgrader"]
        with Gradebook(grading["db_url"]) as gradebook:
            due = due_date(gradebook, grading["assignment"], grading["student"])
        if details_shown(self.show_details, due, self.moment()):
            return nb, resources
        assert due is not None
        return conceal(nb, due), resources


# ---------------------------------------------------------------------- the course's schedule, for grade and refresh


@dataclass(frozen=True)
class Schedule:
    """The course's reveal schedule read at one moment."""

    show_details: str
    as_of: dt.datetime

    def shown(self, due: dt.datetime | None) -> bool:
        return details_shown(self.show_details, due, self.as_of)


def course_schedule(course: Course, now: dt.datetime | None = None) -> Schedule:
    """The schedule of ``nbgrader_config.py`` (``c.RevealSchedule.show_details``), read at ``now`` (default: the clock).

    Raises
    ------
    CourseError
        If the configuration names no known schedule.
    ValueError
        If ``now`` has no timezone.
    """
    config = load_config(course)
    try:
        show_details = RevealSchedule(config=config).show_details
    except TraitError:
        raise CourseError(f"c.RevealSchedule.show_details in nbgrader_config.py must be one of "
                          f"{', '.join(map(repr, SCHEDULES))}") from None
    if show_details != "now" and PREPROCESSOR not in config.GenerateFeedback.get("preprocessors", []):
        raise CourseError(f"c.RevealSchedule.show_details is {show_details!r}, but c.GenerateFeedback.preprocessors in "
                          f"nbgrader_config.py does not name {PREPROCESSOR!r} (before HideHiddenTests): add it, "
                          "or the feedback would show everything at once")
    return Schedule(show_details, aware(now) if now is not None else clock())


def schedule_config(schedule: Schedule):
    """The nbgrader configuration that makes feedback pages read ``schedule`` at its moment."""
    from traitlets.config import Config

    config = Config()
    config.RevealSchedule.as_of = schedule.as_of.isoformat()
    return config


def feedback_state(gradebook, student: str, assignment: str, schedule: Schedule) -> str:
    """What a submission's feedback pages show: ``ledger.gradebook_state``, marked when details are concealed (and until when).

    Equal to ``gradebook_state`` when everything is shown, so pages written before the schedule
    existed count as current under the default.
    """
    state = gradebook_state(gradebook, student, assignment)
    due = due_date(gradebook, assignment, student)
    if not state or schedule.shown(due):
        return state
    return f"{state}+concealed-until-{due.isoformat()}"
