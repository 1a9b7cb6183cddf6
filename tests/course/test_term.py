"""The term file: read and checked in one place, followed by nbgrader's configuration, the gradebook, the
student README and `perceptron-course check`; `release` never loses work."""

import datetime as dt
import json
import re
import warnings
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from term_edits import add_extension, drop_assignment, edit_term, own_dates_in_hours, set_assignment_key, set_key, set_text

from course_grader.trusted.cli import main
from course_grader.trusted.course.course import Course, CourseError, load_config, nbgrader_api
from course_grader.trusted.course_check import check_configuration, check_parts, check_registrations
from course_grader.trusted.course.late_policy import follow_term
from course_grader.trusted.course.student_readme import DOCS_PAGE, render
from course_grader.trusted.course.term import TERM_FILE, LatePolicy, TermError, load_term

ROOT = Path(__file__).resolve().parents[2]
#: Any two assignments of the term serve: the first two, whatever their names.
FIRST, SECOND = load_term(ROOT).assignment_names[:2]


def copy_course(tmp_path: Path) -> Path:
    """A course copy with what configuration, release and check read (no gradebook): the header notebook too."""
    from conftest import copy_course_to

    return copy_course_to(tmp_path / "course", ROOT)


# ------------------------------------------------------------------------------------------- the file


def test_the_shipped_term_names_the_folders_of_source_and_nbgrader_reads_it():
    course = Course.open(ROOT)
    term = course.term()
    config = load_config(course)

    assert set(term.assignment_names) <= set(course.assignments())
    assert config.CourseDirectory.course_id == term.course.id
    assert config.Execute.timeout == term.limits.cell_seconds
    assert config.ResilientExecute.time_budget == term.limits.notebook_seconds
    assert config.ResilientExecute.max_restarts == term.limits.max_restarts
    assert config.TermLatePenalty.policy == term.late.policy
    assert config.RevealSchedule.show_details == term.show_details


@pytest.mark.parametrize("edit, key", [
    (lambda root: set_key(root, "limits.cell_second", 20), "limits.cell_second"),  # a typo is not silently ignored
    (lambda root: set_key(root, "course.timezone", "Europe/Pariss"), "course.timezone"),
    (lambda root: set_assignment_key(root, FIRST, "name", f"{FIRST}_not_in_source"), "assignments[1].name"),
    (lambda root: set_assignment_key(root, FIRST, "due", "next friday"), "assignments[1].due"),
    (lambda root: set_text(root, "limits.cell_seconds", '"15"'), "limits.cell_seconds"),
    (lambda root: set_key(root, "late.policy", "half"), "late.policy"),
    (lambda root: set_key(root, "course.header", "no-such-header.ipynb"), "course.header"),
    (lambda root: set_key(root, "serve.counts", "worst"), "serve.counts"),
    (lambda root: set_key(root, "serve.late", "later"), "serve.late"),
    (lambda root: set_key(root, "serve.attempts", -1), "serve.attempts"),
    (lambda root: set_key(root, "serve.cooldown", 5), "serve.cooldown"),
    (lambda root: set_key(root, "serve.refresh_seconds", 0), "serve.refresh_seconds"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_a_wrong_key_is_an_error_naming_the_file_and_the_key(tmp_path, edit, key):
    course = copy_course(tmp_path)
    edit(course)

    with pytest.raises(TermError) as raised:
        load_term(course)
    assert raised.value.key == key and raised.value.file == course / TERM_FILE
    assert str(raised.value).startswith(f"{course / TERM_FILE}: {key}: ")


def test_the_serve_table_defaults_to_grades_behaviour_and_reads_each_key(tmp_path):
    from course_grader.trusted.course.term import ServePolicy

    course = copy_course(tmp_path)
    edit_term(course, lambda data: data.pop("serve", None))  # no [serve] table
    default = load_term(course).serve
    assert (default.attempts, default.attempts_per_day, default.cooldown_minutes) == (0, 0, 0)  # no limit
    assert (default.counts, default.late, default.drop_path(course)) == ("latest", "grade", None)
    for key, value in dict(attempts=3, attempts_per_day=2, cooldown_minutes=7.5, counts="best", late="hold",
                           drop_folder="lms-drop", refresh_seconds=30, queue_size=9).items():
        set_key(course, f"serve.{key}", value)
    policy = load_term(course).serve
    assert policy == ServePolicy(3, 2, 7.5, "best", "hold", "lms-drop", 30, 9)
    assert policy.drop_path(course) == (course / "lms-drop").resolve()


def test_dates_take_the_course_zone_or_their_own_offset_and_extensions_follow(tmp_path):
    course = copy_course(tmp_path)
    set_key(course, "course.timezone", "Europe/Paris")
    set_assignment_key(course, FIRST, "due", "2026-12-04 17:00")
    set_assignment_key(course, SECOND, "due", "2026-12-11T17:00-05:00")
    add_extension(course, student="ada", assignment=FIRST, hours=48)
    add_extension(course, student="bob", assignment=SECOND, due="2026-12-12 09:00")

    term = load_term(course)

    utc = dt.timezone.utc
    assert term.due(FIRST).astimezone(utc) == dt.datetime(2026, 12, 4, 16, 0, tzinfo=utc)
    assert term.due(SECOND).astimezone(utc) == dt.datetime(2026, 12, 11, 22, 0, tzinfo=utc)
    assert term.extension_of("ada", FIRST) == dt.timedelta(hours=48)
    assert term.extension_of("bob", SECOND) == dt.timedelta(hours=10)  # 09:00 Paris is 08:00 UTC
    assert term.extension_of("ada", SECOND) is None


def test_the_per_day_policy_takes_a_percentage_of_the_points_per_started_day_capped():
    policy = LatePolicy("per_day", percent_per_day=10, max_percent=25)
    hour = 3600

    assert policy.penalty(8, 10, 0) == 0
    assert policy.penalty(8, 10, 1) == pytest.approx(1.0)  # one second late: a started day
    assert policy.penalty(8, 10, 24 * hour + 1) == pytest.approx(2.0)
    assert policy.penalty(8, 10, 10 * 24 * hour) == pytest.approx(2.5)  # the cap
    assert policy.penalty(1, 10, 10 * 24 * hour) == pytest.approx(1.0)  # never more than the score
    assert LatePolicy("zero", 10, 100).penalty(7, 10, 1) == 7
    assert LatePolicy("none", 10, 100).penalty(7, 10, 10 ** 6) == 0


# ------------------------------------------------------------------------------------------- the gradebook


def _late_submission(course: Course, assignment: str, student: str, handed_in: dt.datetime) -> None:
    """A graded submission of ``assignment`` in the gradebook, full marks, handed in at ``handed_in`` (UTC)."""
    notebook = course.notebook_names(assignment)[0]
    with nbgrader_api(course).gradebook as gradebook, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradebook.update_or_create_assignment(assignment)
        gradebook.add_notebook(notebook, assignment)
        for grade_id, points in course.graded_cells(assignment).items():
            gradebook.add_grade_cell(grade_id, notebook, assignment, max_score=points, cell_type="code")
        gradebook.add_student(student)
        gradebook.add_submission(assignment, student, timestamp=handed_in.replace(tzinfo=None))
        for grade in gradebook.find_submission_notebook(notebook, assignment, student).grades:
            grade.auto_score = grade.max_score
        gradebook.db.commit()


def _penalty_and_extension(course: Course, assignment: str, student: str):
    with nbgrader_api(course).gradebook as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return sum(nb.late_submission_penalty or 0 for nb in submission.notebooks), submission.extension, submission.score


def test_an_extension_added_to_the_term_after_grading_lifts_the_zero_policys_penalty(tmp_path):
    root = copy_course(tmp_path)
    set_key(root, "late.policy", "zero")
    set_key(root, "course.timezone", "UTC")
    set_assignment_key(root, FIRST, "due", "2026-12-04 17:00")
    course = Course.open(root)
    _late_submission(course, FIRST, "ada", dt.datetime(2026, 12, 5, 12, 0))

    with nbgrader_api(course).gradebook as gradebook:
        first = follow_term(gradebook, course.term())
    penalty, extension, score = _penalty_and_extension(course, FIRST, "ada")
    assert first.differences == [] and extension is None
    assert score == sum(course.graded_cells(FIRST).values()) and penalty == score  # late: zero

    add_extension(root, student="ada", assignment=FIRST, hours=48)
    with nbgrader_api(course).gradebook as gradebook:
        follow_term(gradebook, course.term())
    penalty, extension, _ = _penalty_and_extension(course, FIRST, "ada")
    assert extension == dt.timedelta(hours=48) and penalty == 0


def test_a_due_date_set_in_the_formgrader_is_reported_with_the_line_that_keeps_it(tmp_path):
    root = copy_course(tmp_path)
    set_key(root, "course.timezone", "UTC")
    set_assignment_key(root, FIRST, "due", "2026-12-04 17:00")
    course = Course.open(root)
    with nbgrader_api(course).gradebook as gradebook, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradebook.update_or_create_assignment(FIRST, duedate="2026-12-06 17:00:00 UTC")  # as the formgrader would

        followed = follow_term(gradebook, course.term())
        assert gradebook.find_assignment(FIRST).duedate == dt.datetime(2026, 12, 4, 17, 0)

    (difference,) = followed.differences
    assert FIRST in difference and 'due = "2026-12-06 17:00"' in difference


def test_following_the_term_creates_no_submission_row(tmp_path):
    root = copy_course(tmp_path)
    set_assignment_key(root, FIRST, "due", "2026-12-04 17:00")
    add_extension(root, student="ada", assignment=FIRST, hours=48)
    course = Course.open(root)

    with nbgrader_api(course).gradebook as gradebook:
        follow_term(gradebook, course.term())
        assert gradebook.assignment_submissions(FIRST) == []  # a later release can still change cells


# ------------------------------------------------------------------------------------------- the student README


def test_the_committed_students_page_is_the_rendering_of_the_term():
    course = Course.open(ROOT)
    assert (ROOT / DOCS_PAGE).read_text(encoding="utf-8") == render(course, course.term()), \
        "docs/students.md is stale: run `perceptron-course students-readme`"


def test_the_student_readme_follows_a_term_edit(tmp_path):
    root = copy_course(tmp_path)
    shipped = load_term(root)
    new_id = "ml101-2027" if shipped.course.id != "ml101-2027" else "ml102-2027"
    set_key(root, "course.id", new_id)
    set_key(root, "handin.route", "both")  # the README names the course id where students hand in on a hub
    seconds = shipped.limits.cell_seconds
    set_key(root, "limits.cell_seconds", seconds + 10)
    *_, dropped, last = shipped.assignment_names
    # A due date after every one the term has, extensions included (a date before a student's own is refused).
    latest = max([dt.datetime(2027, 3, 1, 12, tzinfo=dt.timezone.utc), *(a.due for a in shipped.assignments if a.due),
                  *(extension.due for extension in shipped.extensions)])
    due = (latest + dt.timedelta(days=30)).astimezone(ZoneInfo(shipped.course.timezone)).strftime("%Y-%m-%d %H:%M")
    set_assignment_key(root, last, "due", due)
    edit_term(root, lambda data: own_dates_in_hours(data, last))
    drop_assignment(root, dropped)
    course = Course.open(root)

    readme = render(course, course.term())

    assert f"--course {new_id}" in readme and not re.search(rf"--course {re.escape(shipped.course.id)}(?![\w-])", readme)
    assert f"same {seconds + 10} s per cell" in readme and f" {seconds} s" not in readme
    assert f"the {len(course.term().assignments)} assignments" in readme and dropped not in readme
    assert f"{due} {shipped.course.timezone}" in readme


def test_the_student_readme_s_zone_and_late_rule_are_paragraphs_of_their_own(tmp_path):
    root = copy_course(tmp_path)
    shipped = load_term(root)
    zone = "Pacific/Auckland" if shipped.course.timezone != "Pacific/Auckland" else "America/Chicago"
    set_key(root, "course.timezone", zone)
    set_key(root, "late.policy", "zero" if shipped.late.policy != "zero" else "none")
    course = Course.open(root)

    lines = render(course, course.term()).splitlines()

    said = lines.index(f"Due dates are in {zone} time.")
    assert lines[said - 1] == "" and lines[said + 1] == "", lines[said - 1:said + 2]
    headings = [number for number, line in enumerate(lines) if line.startswith("## ")]
    assert headings and all(lines[number - 1] == "" for number in headings), [lines[n - 1:n + 1] for n in headings]


# ------------------------------------------------------------------------------------------- perceptron-course check


def test_check_names_a_heading_whose_points_differ_and_a_part_without_a_check(tmp_path):
    root = copy_course(tmp_path)
    notebook = next((root / "source" / FIRST).glob("*.ipynb"))
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    heading = next(c for c in cells["cells"] if c["cell_type"] == "markdown"
                   and re.match(r"#+ .*\(\d+ points?", "".join(c["source"])))
    stated = int(re.search(r"\((\d+) points?", "".join(heading["source"])).group(1))
    heading["source"] = [re.sub(r"\(\d+ points?", f"({stated + 7} points", "".join(heading["source"]), count=1)]
    test_cell = next(c for c in cells["cells"] if "BEGIN HIDDEN TESTS" in "".join(c["source"]))
    source = "".join(test_cell["source"])
    test_cell["source"] = [source[:source.index("### BEGIN HIDDEN TESTS")]]
    notebook.write_text(json.dumps(cells), encoding="utf-8")
    course = Course.open(root)

    problems = check_parts(course, course.term().assignment_names)

    assert any(f"says {stated + 7} points" in p and FIRST in p for p in problems), problems
    assert any("without a hidden check" in p and test_cell["metadata"]["nbgrader"]["grade_id"] in p for p in problems), problems
    assert any("is declared by no graded test cell" in p for p in problems), problems  # its check is now of no part


def test_check_names_a_dropped_assignment_still_registered(tmp_path):
    root = copy_course(tmp_path)
    dropped = load_term(root).assignment_names[-1]
    drop_assignment(root, dropped)
    course = Course.open(root)
    with nbgrader_api(course).gradebook as gradebook:
        gradebook.update_or_create_assignment(dropped)  # released last term

    problems = check_registrations(course, course.term()) + check_parts(course, course.term().assignment_names)

    assert any(p.startswith(f"the gradebook holds assignment {dropped}") for p in problems), problems
    assert any(p.startswith(f"source/{dropped} is not an assignment of term.toml") for p in problems), problems
    assert any(p.startswith(f"release/{dropped}") for p in problems), problems


def test_check_names_a_limit_set_again_in_nbgraders_configuration_and_a_relative_header(tmp_path):
    root = copy_course(tmp_path)
    other = load_term(root).limits.cell_seconds + 7  # not the term's
    with (root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write(f"\nc.Execute.timeout = {other}\nc.IncludeHeaderFooter.header = 'source/header.ipynb'\n")
    course = Course.open(root)

    problems = check_configuration(course, course.term())

    assert any(f"c.Execute.timeout = {other}" in p and "limits.cell_seconds" in p for p in problems), problems
    assert any("relative path" in p for p in problems), problems


def test_check_reports_a_bad_term_file_and_exits_1(tmp_path, capsys):
    root = copy_course(tmp_path)
    set_key(root, "late.policy_typo", 1)

    assert main(["check", "--root", str(root)]) == 1
    assert "late.policy_typo: unknown key" in capsys.readouterr().out


@pytest.mark.slow
def test_the_shipped_course_is_consistent(capsys):
    assert main(["check", "--root", str(ROOT)]) == 0, capsys.readouterr().out


# ------------------------------------------------------------------------------------------- release keeps work


@pytest.mark.slow
def test_a_failed_release_leaves_release_as_it_was(tmp_path):
    root = copy_course(tmp_path)
    notebook = next(path for assignment in load_term(root).assignment_names
                    for path in sorted((root / "source" / assignment).glob("*.ipynb"))
                    if len([c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                            if c["metadata"].get("nbgrader", {}).get("grade")]) >= 2)
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    graded = [c for c in cells["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    graded[1]["metadata"]["nbgrader"]["grade_id"] = graded[0]["metadata"]["nbgrader"]["grade_id"]  # nbgrader refuses this
    notebook.write_text(json.dumps(cells), encoding="utf-8")
    before = {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "release").rglob("*")) if p.is_file()}

    with pytest.raises(CourseError, match="release/ is unchanged"):
        from course_grader.trusted.pipeline import release
        release(Course.open(root))

    after = {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "release").rglob("*")) if p.is_file()}
    assert after == before
    assert not list(root.glob(".course-grader-release-*"))


def test_nbgraders_submissions_associated_refusal_is_explained():
    from course_grader.trusted.pipeline import release_failure

    message = release_failure(FIRST, f"Cannot add or remove cells from {FIRST}: there are submissions associated with it")
    assert "release/ is unchanged" in message and f"nbgrader db assignment remove {FIRST}" in message
    assert "put the cell back" in message


@pytest.mark.slow
def test_a_header_in_the_term_tops_every_released_notebook_and_the_release_check_finds_it(tmp_path):
    import nbformat

    from course_grader.trusted.pipeline import release
    from course_grader.trusted.course.release_check import stale_assignments

    root = copy_course(tmp_path)
    header = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("**ML 101, Spring 2027**, Dr. Lovelace")])
    (root / "headers").mkdir()
    nbformat.write(header, root / "headers" / "term.ipynb")
    set_key(root, "course.header", "headers/term.ipynb")
    course = Course.open(root)
    assignment = course.term().assignment_names[0]

    release(course, [assignment])

    for path in (root / "release" / assignment).glob("*.ipynb"):
        assert nbformat.read(path, as_version=4).cells[0].source == header.cells[0].source
    assert stale_assignments(course, [assignment]) == []  # the scratch copy of the release check has the header too
    assert check_configuration(course, course.term()) == []


def test_nbgraders_own_late_penalties_apply_the_terms_per_day_policy(tmp_path):
    """nbgrader's AssignLatePenalties, configured by nbgrader_config.py, takes what LatePolicy.penalty gives."""
    import nbformat
    from nbgrader.preprocessors import AssignLatePenalties

    root = copy_course(tmp_path)
    # an assignment of two graded cells or more: one fails, the other keeps points to take a penalty from
    assignment = next(a for a in load_term(root).assignment_names if len(Course.open(root).graded_cells(a)) >= 2)
    set_key(root, "late.policy", "per_day")
    set_key(root, "course.timezone", "UTC")
    set_assignment_key(root, assignment, "due", "2026-12-04 17:00")
    course = Course.open(root)
    handed_in = dt.datetime(2026, 12, 6, 12, 0)  # 1 d 19 h late: two started days
    _late_submission(course, assignment, "ada", handed_in)
    with nbgrader_api(course).gradebook as gradebook:
        follow_term(gradebook, Course.open(root).term())
    notebook = course.notebook_names(assignment)[0]
    full = sum(course.graded_cells(assignment).values())

    with nbgrader_api(course).gradebook as gradebook:  # one part failed; then what nbgrader's autograde does
        submitted = gradebook.find_submission_notebook(notebook, assignment, "ada")
        submitted.grades[0].auto_score = 0
        submitted.late_submission_penalty = None
        gradebook.db.commit()
    preprocessor = AssignLatePenalties(config=load_config(course))
    resources = {"nbgrader": {"notebook": notebook, "assignment": assignment, "student": "ada",
                              "db_url": f"sqlite:///{root / 'gradebook.db'}"}}
    preprocessor.preprocess(nbformat.read(root / "source" / assignment / f"{notebook}.ipynb", as_version=4), resources)

    penalty, _, score = _penalty_and_extension(course, assignment, "ada")
    seconds = (handed_in - dt.datetime(2026, 12, 4, 17, 0)).total_seconds()
    assert score < full  # a percentage of the points possible, not of the score
    assert penalty == pytest.approx(course.term().late.penalty(score, full, seconds)) and 0 < penalty < score
    assert penalty != pytest.approx(course.term().late.penalty(score, score, seconds))


@pytest.mark.slow
def test_check_names_a_release_that_source_no_longer_generates(tmp_path):
    from course_grader.trusted.course_check import check_release

    root = copy_course(tmp_path)
    course = Course.open(root)
    stale = course.term().assignment_names[1]
    notebook = next((root / "release" / stale).glob("*.ipynb"))
    cells = json.loads(notebook.read_text(encoding="utf-8"))
    cells["cells"][0]["source"] = ["# An old title\n"]
    notebook.write_text(json.dumps(cells), encoding="utf-8")

    problems = check_release(course, course.term())

    assert problems == [f"release/{stale} is not what source/{stale} generates now: run `perceptron-course release` and commit it"]


def test_a_command_on_a_course_with_a_wrong_term_names_the_key(tmp_path, capsys):
    root = copy_course(tmp_path)
    set_key(root, "reveal.show_details", "tomorrow")
    (root / "submitted" / "ada" / load_term(ROOT).assignment_names[0]).mkdir(parents=True)

    assert main(["grade", "--root", str(root)]) == 2
    error = capsys.readouterr().err
    assert f"{root / TERM_FILE}: reveal.show_details: must be one of 'now', 'after_due_date'; got 'tomorrow'" in error
    assert len(error.splitlines()) == 1
