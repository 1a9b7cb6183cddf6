"""The fourth held-out round's strings and time (messages with surrogates or markdown, hand-ins past their time budget), graded as root in one batch with an
honest student: kernel text raises nowhere on the trusted side, student text is inert in every format it enters,
and a hand-in that hangs is stopped at its notebook's deadline.

The recipes are in ``grader/tests/fixtures/attacks_hostile_strings/`` (their docstrings say what each does): the strings'
hand-ins are graded with the course's own configuration; the two that would use all of a notebook's time
(``time/``) in a batch of their own, with a shorter time budget (30 s instead of the term's 180 s) and a worker
each, so that they are stopped at the deadline within the test. What is asserted is what the grader recorded (the deadline, the stop, the
timeline in each notebook's metadata), never how long anything took. (Two batches: with the two stopped hand-ins in
the first, their identical "not run" lines would be the most common failure of every part, and the report would
not show the planted message.)
"""

import csv
import html
import json
from html.parser import HTMLParser
from pathlib import Path

import mistune
import pytest

from conftest import fixture_course, sandboxes_left

from course_grader.trusted.course.example_class import build_example_class, copy_course
from course_grader.trusted.pipeline import grade
from course_grader.trusted.judging.grading_metadata import (BUDGET, GRADING_METADATA, STOPPED_AT_DEADLINE, TIME_BUDGET, limits_hit)
from course_grader.trusted.running.sandbox import sandbox_problem
from course_grader.trusted.course.secret import load_or_create_secret

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "attacks_hostile_strings"
BUDGET_SECONDS = 30
ALL = {"test_augment", "test_predict", "test_signed_distance", "test_set_margin"}
#: The parts each hand-in must lose (its other parts are right, and keep their points).
LOST = {
    "honest": set(),
    "surrogate_message": {"test_augment"},
    "surrogates_everywhere": {"test_predict", "test_signed_distance"},
    "markdown_message": {"test_set_margin"},
}
STOPPED = ("exception_flood", "stubborn_hang")  # each would take more than the budget: stopped at the deadline


def _graded_batch(tmp_path_factory, recipes: Path, budget: int | None = None, jobs: int = 1) -> dict:
    assert sandbox_problem() == "", f"these tests need the grading sandbox: {sandbox_problem()}"
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("round12_strings"))
    if budget is not None:
        with (course.root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
            config.write(f"\nc.ResilientExecute.time_budget = {budget}\n")
    build_example_class(course, recipes)
    load_or_create_secret(course.root)
    outcomes = {o.student: o for o in grade(course, progress=False, jobs=jobs)}
    return {"course": course, "outcomes": outcomes, "sandboxes_left": sandboxes_left()}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    return _graded_batch(tmp_path_factory, FIXTURES)


@pytest.fixture(scope="module")
def time_batch(tmp_path_factory):
    return _graded_batch(tmp_path_factory, FIXTURES / "time", BUDGET_SECONDS, jobs=2)


def _recorded(course, student: str) -> dict:
    path = course.root / "autograded" / student / "01_geometry" / "geometry.ipynb"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_every_hand_in_is_graded_and_loses_only_its_own_wrong_parts(batch):
    assert set(batch["outcomes"]) == set(LOST)
    for student, lost in LOST.items():
        outcome = batch["outcomes"][student]
        assert outcome.status == "graded", (student, outcome.reason)
        assert outcome.cell_scores == {cell: 0.0 if cell in lost else 2.0 for cell in ALL}, (student, outcome.cell_scores)
    assert batch["sandboxes_left"] == []


@pytest.mark.slow
def test_no_kernel_string_raises_or_acts_in_any_file_or_on_the_terminal(batch, capsys):
    from course_grader.trusted.cli import _print_summary

    course = batch["course"]
    written = [path for folder in ("autograded", "feedback", "reports") for path in (course.root / folder).rglob("*")
               if path.is_file() and path.suffix in (".ipynb", ".html", ".md", ".csv", ".json")]
    written += [course.grades_csv, course.root / "grades_by_student.csv"]
    for path in written:
        path.read_bytes().decode("utf-8")  # (strict: a lone surrogate cannot have been written)
    for path in [*course.reports.glob("*.md"), *course.reports.glob("*.csv"), course.grades_csv]:
        text = path.read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x00" not in text and "\u202e" not in text, path
    shown = _recorded(course, "surrogates_everywhere")
    printed = json.dumps(shown["cells"], ensure_ascii=False)
    assert "A\\\\ud800B\\\\udfff" in printed  # what the kernel sent, shown with visible escapes
    _print_summary(course, list(batch["outcomes"].values()), 1.0)
    terminal = capsys.readouterr()
    (terminal.out + terminal.err).encode("utf-8")
    assert "\x1b" not in terminal.out + terminal.err


class _Tags(HTMLParser):
    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.slow
def test_a_planted_message_is_literal_text_in_the_report(batch):
    # Found in a held-out attack: the item analysis put a live link, emphasis and strikethrough in reports/report.md.
    course = batch["course"]
    report = (course.reports / "report.md").read_text(encoding="utf-8")
    rows = [line for line in report.splitlines() if line.startswith("|") and "set_margin raised ValueError" in line]
    assert rows, "the item analysis names the planted failure"
    render = mistune.create_markdown(escape=False, plugins=["strikethrough", "footnotes", "table", "url", "mark",
                                                            "insert", "superscript", "subscript", "math"])
    table = _Tags(render("\n".join([report.splitlines()[report.splitlines().index(rows[0]) - 2],
                                    report.splitlines()[report.splitlines().index(rows[0]) - 1], rows[0]])))
    assert not {"a", "em", "strong", "del", "code", "img", "mark", "sup", "sub", "ins", "b"} & set(table.tags), table.tags
    assert "[click here](https://evil.example/grab) _emphasis_ ~~strike~~" in "".join(table.text)
    page = (course.reports / "report.html").read_text(encoding="utf-8")
    assert "<b>html</b>" not in page and "href=\"https://evil.example" not in page
    with (course.reports / "item_analysis.csv").open(newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert any("[click here](https://evil.example/grab)" in cell for cell in cells)
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "@") or (cell[:1] == "-" and not cell[1:2].isdigit())]


@pytest.mark.slow
def test_a_hand_in_that_would_overrun_its_budget_is_stopped_at_the_deadline(time_batch):
    # Found in a held-out attack: an exception flood and a hang that ignores signals ran past the notebook's budget.
    batch = time_batch
    course = batch["course"]
    honest = batch["outcomes"]["honest"]
    assert (honest.status, honest.score) == ("graded", 8), honest.reason
    assert batch["sandboxes_left"] == []
    for student in STOPPED:
        notebook = _recorded(course, student)
        recorded = notebook["metadata"][GRADING_METADATA][TIME_BUDGET]
        assert recorded["seconds"] == BUDGET_SECONDS and recorded["stopped"] == STOPPED_AT_DEADLINE, (student, recorded)
        events = [event for _, event in recorded["timeline"]]
        after_stop = events[events.index(STOPPED_AT_DEADLINE) + 1:]
        assert "kernel restarted" not in after_stop and after_stop[-1] == "the notebook ended", (student, events)
        assert BUDGET in limits_hit(notebook), student
        assert "the notebook's time budget ran out" in batch["outcomes"][student].reason
        page = html.unescape((course.feedback / student / "01_geometry" / "geometry.html").read_text(encoding="utf-8"))
        assert f"time budget for the notebook ({BUDGET_SECONDS} s" in page, student
        assert batch["outcomes"][student].status == "graded" and batch["outcomes"][student].score == 0, student
    recorded = _recorded(course, "honest")["metadata"][GRADING_METADATA][TIME_BUDGET]
    assert recorded["stopped"] == "" and STOPPED_AT_DEADLINE not in [event for _, event in recorded["timeline"]]
