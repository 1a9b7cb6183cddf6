"""The report and the exports cover the whole class, whatever subset was graded last."""

import csv
import os
import shutil
import stat
from pathlib import Path

import nbformat
import pytest
from conftest import fixture_course
from nbgrader.api import Gradebook

from course_grader.trusted.cli import main
from course_grader.trusted.outputs import item_analysis
from course_grader.trusted.course.course import Course, nbgrader_api
from course_grader.trusted.course.example_class import copy_course, solved_notebook
from course_grader.trusted.judging.flags import Flag
from course_grader.trusted.gradebook.ledger import Fingerprint, entry_for, read_ledger, write_ledger
from course_grader.trusted.gradebook.outcome import FAILED, GRADED, Outcome
from course_grader.trusted.outputs.report import cell_pass_rates, pending_submissions, read_class, write_exports
from course_grader.trusted.gradebook.outcome import Isolation

ISOLATION = Isolation(sandbox=True, memory_mb=3072, note="")
EVIL = "x<script>alert(1)</script>|y"
# nbgrader's own SQLAlchemy use warns while it adds submissions (as in pipeline.quiet_nbgrader_warnings)
pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")


def write_report(course: Course, outcomes: list[Outcome], isolation: Isolation) -> None:
    """As a grading of ``outcomes`` leaves the course: their ledger entries, then every export rewritten."""
    ledger = read_ledger(course)
    for outcome in outcomes:
        ledger[(outcome.student, outcome.assignment)] = entry_for(outcome, Fingerprint("", {}), isolation)
    write_ledger(course, ledger)
    write_exports(course, isolation)


def read_rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture
def class_in_gradebook(class_template, tmp_path):
    """A fresh copy of :func:`class_template` for one test."""
    shutil.copytree(class_template.root, tmp_path / "course")
    return Course.open(tmp_path / "course")


@pytest.fixture(scope="module")
def class_template(tmp_path_factory):
    """A course whose gradebook, written through nbgrader's API, holds:

    ada: every assignment, full marks, except the written answers that wait for a TA;
    bo: only 01_geometry, 1 point (test_augment); EVIL: only 01_geometry, 0 points;
    dan: on the roster, nothing submitted; cy: 02_algorithm failed (only in grades.csv).
    """
    course = copy_course(fixture_course(), tmp_path_factory.mktemp("class"))
    with nbgrader_api(course).gradebook as gradebook:  # it finds the alembic executable nbgrader runs
        for assignment in course.assignments():
            gradebook.add_assignment(assignment)
            manual = set(course.manually_graded_cells(assignment))
            for name in course.notebook_names(assignment):
                gradebook.add_notebook(name, assignment)
                for cell, points in course.graded_cells(assignment).items():
                    gradebook.add_grade_cell(cell, name, assignment, max_score=points,
                                             cell_type="markdown" if cell in manual else "code")
        for student in ("ada", "bo", "dan", EVIL):
            gradebook.add_student(student)
        for assignment in course.assignments():
            gradebook.add_submission(assignment, "ada")
            manual = set(course.manually_graded_cells(assignment))
            for name in course.notebook_names(assignment):
                for cell, points in course.graded_cells(assignment).items():
                    grade = gradebook.find_grade(cell, name, assignment, "ada")
                    grade.auto_score, grade.needs_manual_grade = (None, True) if cell in manual else (points, False)
        for student, augment_points in (("bo", 1.0), (EVIL, 0.0)):
            gradebook.add_submission("01_geometry", student)
            for cell in course.graded_cells("01_geometry"):
                grade = gradebook.find_grade(cell, "geometry", "01_geometry", student)
                grade.auto_score = augment_points if cell == "test_augment" else 0.0
                grade.needs_manual_grade = False
        gradebook.find_submission_notebook("convergence", "04_convergence", "ada").flagged = True
        gradebook.db.commit()
    write_report(course, [Outcome("cy", "02_algorithm", FAILED, 0.0, 11.0, "algorithm.ipynb is missing")], ISOLATION)
    return course


def test_the_report_covers_every_student_with_totals_over_every_assignment(class_in_gradebook):
    course = class_in_gradebook
    maximum = {a: sum(course.graded_cells(a).values()) for a in course.assignments()}
    total = sum(maximum.values())
    written = sum(course.graded_cells(a)[cell] for a in course.assignments() for cell in course.manually_graded_cells(a))
    others = len(maximum) - 1  # the assignments bo and cy did not hand in
    assert others > 0 and written > 0
    bo_graded_now = Outcome("bo", "01_geometry", GRADED, 1.0, maximum["01_geometry"],
                            flags=[Flag("augment", 3, "exec"), Flag("cell 9", 1, "import os (not allowed in 01_geometry)")],
                            unanalysed=["predict: SyntaxError (line 2)"])
    write_report(course, [bo_graded_now], ISOLATION)  # as after `grade --student bo`
    report = (course.reports / "report.md").read_text(encoding="utf-8")

    dashes = " | ".join(["—"] * others)
    assert f"| bo | 1/{maximum['01_geometry']:g} | {dashes} | 1/{total:g}, {others} missing |" in report
    assert f"| ada | {maximum['01_geometry']:g}/{maximum['01_geometry']:g} |" in report
    assert f"| {total - written:g}/{total:g} |" in report  # ada: nothing missing, the written answers not yet graded
    assert f"| cy | — | 0/{maximum['02_algorithm']:g} (failed) |" in report and f"0/{total:g}, {others} missing |" in report
    assert f"| dan | {' | '.join(['—'] * len(maximum))} | 0/{total:g}, {len(maximum)} missing |" in report
    assert "cy/02\\_algorithm" not in report and "- cy/02_algorithm: algorithm.ipynb is missing" in report
    assert "| bo | 01_geometry | augment | 3 | exec |" in report
    assert "| bo | 01_geometry | cell 9 | 1 | import os (not allowed in 01_geometry) |" in report
    assert "bo/01_geometry: not analysed: predict: SyntaxError (line 2)" in report
    assert "ada/04_convergence: flagged in the gradebook" in report
    waiting = [f"{a}/{cell}" for a in course.assignments() for cell in sorted(course.manually_graded_cells(a))]
    assert f"{len(waiting)} parts awaiting manual grading" in report
    assert "".join(f"- {part}: 1 submission (ada)\n" for part in waiting) + "\n" in report
    assert "<script>" not in report and "x&lt;script&gt;alert(1)&lt;/script&gt;\\|y" in report


def test_the_html_report_is_plain_escaped_and_self_contained(class_in_gradebook):
    course = class_in_gradebook
    write_report(course, [], ISOLATION)
    page = (course.reports / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "&lt;script&gt;" in page
    assert 'src="data:image/png;base64,' in page and "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.split("</table>", 1)[0].count("<tr>") == 1 + 5  # the score table: header, 5 students
    assert "Nothing was flagged." not in page and "ada/04_convergence: flagged in the gradebook" in page
    waiting = sum(len(course.manually_graded_cells(a)) for a in course.assignments())
    assert f"{waiting} parts (grade them in the formgrader)" in page and "04_convergence/why_augmented: 1 submission (ada)" in page


def test_the_lms_export_has_one_row_per_student_and_one_column_per_assignment(class_in_gradebook):
    course = class_in_gradebook
    write_report(course, [], ISOLATION)
    rows = read_rows(course.root / "grades_by_student.csv")
    maximum = {a: sum(course.graded_cells(a).values()) for a in course.assignments()}
    assert sorted(rows) == sorted(["ada", "bo", "cy", "dan", EVIL])
    assert list(rows["bo"]) == ["student", *course.assignments(), "total", "max_score"]
    assert rows["bo"] == {"student": "bo", **{a: "" for a in course.assignments()}, "01_geometry": "1",
                          "total": "1", "max_score": f"{sum(maximum.values()):g}"}
    assert rows["cy"]["02_algorithm"] == "0" and rows["dan"]["total"] == "0"
    written = sum(course.graded_cells("04_convergence")[cell] for cell in course.manually_graded_cells("04_convergence"))
    assert rows["ada"]["04_convergence"] == f"{maximum['04_convergence'] - written:g}"


def test_flags_of_an_earlier_grading_stay_in_the_report(class_in_gradebook):
    course = class_in_gradebook
    flagged = Outcome("bo", "01_geometry", GRADED, 1.0, 8.0, flags=[Flag("augment", 3, "exec")])
    write_report(course, [flagged], ISOLATION)
    write_report(course, [Outcome("ada", "01_geometry", GRADED, 8.0, 8.0)], ISOLATION)  # `grade --student ada`
    assert "| bo | 01_geometry | augment | 3 | exec |" in (course.reports / "report.md").read_text(encoding="utf-8")
    write_report(course, [Outcome("bo", "01_geometry", GRADED, 1.0, 8.0)], ISOLATION)  # bo regraded, clean now
    report = (course.reports / "report.md").read_text(encoding="utf-8")
    assert "| bo | 01_geometry |" not in report
    assert "Nothing was flagged." not in report  # ada/04_convergence is flagged in the gradebook, listed alone
    assert "; 1 submission flagged for review." in report  # the headline counts what the section lists
    flagged_section = report.split("## Flagged for review", 1)[1].split("##", 1)[0]
    assert flagged_section.strip().splitlines()[-1] == "- ada/04_convergence: flagged in the gradebook (by a TA, or by an earlier grading)"
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        gradebook.find_submission_notebook("convergence", "04_convergence", "ada").flagged = False  # the TA unflags it
        gradebook.db.commit()
    write_exports(course, ISOLATION)
    report = (course.reports / "report.md").read_text(encoding="utf-8")
    assert "Nothing was flagged.\n" in report and "; 0 submissions flagged for review." in report


# ------------------------------------------------------------------ through the real pipeline and its command


EXEC_AUGMENT = '''def augment(X):
    namespace = {"np": np, "X": np.asarray(X, dtype=float)}
    exec("result = np.hstack([np.ones((X.shape[0], 1)), X])", namespace)
    return namespace["result"]'''


@pytest.mark.slow
def test_grading_students_one_at_a_time_reports_the_whole_class(tmp_path, capsys):
    course = copy_course(fixture_course(), tmp_path / "course")
    for student, augment in (("honest", None), ("sneaky", EXEC_AUGMENT)):
        notebook = solved_notebook(course, "01_geometry", "geometry")
        for cell in notebook.cells:
            if augment and cell.metadata.get("nbgrader", {}).get("grade_id") == "augment":
                cell.source = augment
        (course.submitted / student / "01_geometry").mkdir(parents=True)
        nbformat.write(notebook, course.submitted / student / "01_geometry" / "geometry.ipynb")
    maximum = sum(course.graded_cells("01_geometry").values())

    assert main(["grade", "--root", str(course.root), "--student", "honest", "--quiet", "--jobs", "1"]) == 0
    first = capsys.readouterr().out
    assert "1 graded, none failed" in first and "(reasons above)" not in first and "nothing flagged" in first

    assert main(["grade", "--root", str(course.root), "--student", "sneaky", "--quiet", "--jobs", "1"]) == 0
    second = capsys.readouterr().out
    assert "1 flagged for review" in second and "- sneaky/01_geometry: exec" in second
    assert f"| sneaky | {maximum:g}/{maximum:g} |" in second and "| honest |" not in second  # the students graded now
    assert ", 5 missing |" in second  # their totals run over every assignment

    report = (course.reports / "report.md").read_text(encoding="utf-8")
    assert f"| honest | {maximum:g}/{maximum:g} |" in report and f"| sneaky | {maximum:g}/{maximum:g} |" in report  # a flag costs nothing
    assert "| sneaky | 01_geometry | augment | 3 | exec |" in report
    assert (course.reports / "report.html").is_file()
    assert sorted(read_rows(course.root / "grades_by_student.csv")) == ["honest", "sneaky"]
    grades = read_rows(course.grades_csv)
    assert grades["honest"]["flags"] == "" and grades["sneaky"]["flags"] == "augment: exec (line 3)"
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission_notebook("geometry", "01_geometry", "sneaky").flagged
        assert not gradebook.find_submission_notebook("geometry", "01_geometry", "honest").flagged
    # What grade made is the TA's alone (docs/hosting.md), but the feedback pages that release_feedback copies out
    made = [course.root / name for name in ("gradebook.db", "grading_secret", "autograded", "feedback", "reports",
                                            "grades.csv", "grades_by_student.csv")]
    made += [Path(folder) / name for top in made if top.is_dir() for folder, folders, files in os.walk(top)
             for name in folders + files]
    pages = {path for path in made if path.suffix == ".html" and "feedback" in path.relative_to(course.root).parts[:1]}
    assert len(pages) == 2 and all(path.exists() for path in made)
    modes = {path: stat.S_IMODE(path.lstat().st_mode) for path in made}
    assert {path for path, mode in modes.items() if mode & 0o077 and path not in pages} == set(), modes
    assert {modes[page] for page in pages} == {0o644}


def test_the_summary_says_none_failed_and_names_what_was_flagged():
    from course_grader.trusted.cli import run_summary

    clean = [Outcome("ada", "01_geometry", GRADED, 8.0, 8.0)]
    assert run_summary(clean, 3.2) == "1 graded, none failed, in 3 s\nnothing flagged for review"
    flagged = Outcome("bo", "01_geometry", GRADED, 8.0, 8.0,
                      flags=[Flag("augment", line, construct) for line, construct in
                             enumerate(["exec", "exec", "eval", "sys.settrace", "import os (not allowed in 01_geometry)"], 1)])
    failed = Outcome("cy", "02_algorithm", FAILED, 0.0, 10.0, "algorithm.ipynb is missing")
    assert run_summary([*clean, flagged, failed], 10).splitlines() == [
        "2 graded, 1 failed (reasons above), in 10 s",
        "1 flagged for review (a flag never changes a score; details in the report):",
        "- bo/01_geometry: exec, eval, sys.settrace, and 1 more",
    ]


# ------------------------------------------------------------------ regenerated from the gradebook, the one truth


def grade_by_hand(course: Course, student: str, assignment: str, cell: str, score: float) -> None:
    """What the formgrader does when a TA types a score: ``manual_score``, and no manual grade needed any more."""
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        [name] = course.notebook_names(assignment)
        grade = gradebook.find_grade(cell, name, assignment, student)
        grade.manual_score, grade.needs_manual_grade = score, False
        gradebook.db.commit()


def test_pass_rates_leave_out_answers_awaiting_a_ta(class_in_gradebook):
    course = class_in_gradebook
    rates = cell_pass_rates(read_class(course), course)
    assert rates["04_convergence/why_augmented"] is None and rates["06_limitations/why_xor"] is None  # ada's wait: pending
    assert rates["04_convergence/test_radius"] == 1.0 and rates["01_geometry/test_augment"] == 1 / 3  # ada, bo, EVIL
    grade_by_hand(course, "ada", "04_convergence", "why_augmented", 0.0)
    assert cell_pass_rates(read_class(course), course)["04_convergence/why_augmented"] == 0.0  # graded 0: a real failure


def hand_in_blank_answers(course: Course, student: str, assignment: str) -> None:
    """``student`` hands in ``assignment`` with every test passing and every written answer left blank, which
    nbgrader's autograde scores 0 by itself (``No response``), as if a TA had graded it."""
    manual = set(course.manually_graded_cells(assignment))
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        gradebook.update_or_create_student(student)
        gradebook.add_submission(assignment, student)
        for name in course.notebook_names(assignment):
            for cell, points in course.graded_cells(assignment).items():
                grade = gradebook.find_grade(cell, name, assignment, student)
                grade.auto_score, grade.needs_manual_grade = (0.0 if cell in manual else points), False
        gradebook.db.commit()


def test_written_answers_awaiting_a_ta_are_pending_in_the_item_analysis_not_failures(class_in_gradebook):
    course, assignment = class_in_gradebook, "04_convergence"
    written = course.manually_graded_cells(assignment)
    assert written, "the premise: the assignment has written answers"
    hand_in_blank_answers(course, "zoe", assignment)  # ada's answers wait for a TA, zoe's are blank (0)

    rows = {row.part: row for row in item_analysis.analyse_class(course, read_class(course))
            if row.assignment == assignment and not row.behaviour}
    for part in written:
        assert rows[part].pending == 1 and rows[part].n == 0 and rows[part].pass_rate is None
        assert rows[part].callout == "" and rows[part].note().startswith("pending: 1 answer awaits a TA")
    assert not any(part in line for line in item_analysis.callouts(list(rows.values())) for part in written)
    table = {line[1]: line for line in item_analysis.part_table(list(rows.values()))[1:]}
    assert all(table[f"{assignment}/{part}"][2] == "pending" for part in written)
    assert all(cell_pass_rates(read_class(course), course)[f"{assignment}/{part}"] is None for part in written)
    assert (("ada", assignment) in pending_submissions(read_class(course))
            and ("zoe", assignment) not in pending_submissions(read_class(course)))
    write_exports(course, ISOLATION)  # the CSV says so too
    with (course.reports / item_analysis.ITEM_CSV).open(newline="", encoding="utf-8") as handle:
        csv_rows = {row["part"]: row for row in csv.DictReader(handle) if row["assignment"] == assignment and not row["behaviour"]}
    assert all(csv_rows[part]["passed"] == "" and csv_rows[part]["note"].startswith("pending") for part in written)

    for part in written:  # the TA grades ada's answers: full points; zoe's blanks stay 0
        grade_by_hand(course, "ada", assignment, part, course.graded_cells(assignment)[part])
    rows = {row.part: row for row in item_analysis.analyse_class(course, read_class(course))
            if row.assignment == assignment and not row.behaviour}
    for part in written:
        assert (rows[part].pending, rows[part].n, rows[part].n_passed) == (0, 2, 1)
    assert cell_pass_rates(read_class(course), course)[f"{assignment}/{written[0]}"] == 0.5
    assert not pending_submissions(read_class(course)) & {("ada", assignment), ("zoe", assignment)}


def test_grades_files_are_rewritten_from_the_gradebook_with_manual_grades(class_in_gradebook):
    course = class_in_gradebook
    write_exports(course, ISOLATION)
    course.grades_csv.write_text(course.grades_csv.read_text(encoding="utf-8").replace("bo,01_geometry,graded,1,", "bo,01_geometry,graded,99,"),
                                 encoding="utf-8")  # edited apart from the gradebook
    for answer in ("why_augmented", "why_squeeze"):  # ada's two written answers
        grade_by_hand(course, "ada", "04_convergence", answer, course.graded_cells("04_convergence")[answer])
    write_exports(course, ISOLATION)
    with course.grades_csv.open(newline="", encoding="utf-8") as handle:
        rows = {(row["student"], row["assignment"]): row for row in csv.DictReader(handle)}
    assert rows[("bo", "01_geometry")]["score"] == "1"  # the gradebook wins
    ada_04 = float(rows[("ada", "04_convergence")]["score"])
    assert ada_04 == sum(course.graded_cells("04_convergence").values())  # the manual grade counts
    assert rows[("cy", "02_algorithm")]["status"] == "failed" and rows[("cy", "02_algorithm")]["reason"] == "algorithm.ipynb is missing"
    by_student = read_rows(course.root / "grades_by_student.csv")
    assert by_student["ada"]["04_convergence"] == f"{ada_04:g}"
    report = (course.reports / "report.md").read_text(encoding="utf-8")
    awaiting = report.split("## Awaiting manual grading", 1)[1].split("##", 1)[0]
    assert "04_convergence/why_augmented" not in awaiting and "04_convergence/why_squeeze" not in awaiting  # graded now


def test_a_figure_is_drawn_again_only_when_what_it_shows_changed(class_in_gradebook):
    from course_grader.trusted.outputs.figures import DIGEST_KEY, png_text

    course = class_in_gradebook
    figures = [course.reports / "scores.png", course.reports / item_analysis.ITEM_FIGURE]
    write_exports(course, ISOLATION)
    first = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in figures}
    assert all(png_text(path.read_bytes()).get(DIGEST_KEY) for path in figures)
    for path in figures:  # a file drawn again would get a later time: this one's shows it was not
        os.utime(path, ns=(first[path][1] - 10**9, first[path][1] - 10**9))
    write_exports(course, ISOLATION)
    assert all(path.stat().st_mtime_ns == first[path][1] - 10**9 for path in figures)
    for answer in ("why_augmented", "why_squeeze"):  # ada's written answers graded: pending no more, rates change
        grade_by_hand(course, "ada", "04_convergence", answer, course.graded_cells("04_convergence")[answer])
    write_exports(course, ISOLATION)
    for path in figures:
        assert png_text(path.read_bytes())[DIGEST_KEY] != png_text(first[path][0])[DIGEST_KEY]
    figures[0].write_bytes(b"not a PNG")  # a file that is not what was drawn is drawn again
    write_exports(course, ISOLATION)
    assert png_text(figures[0].read_bytes()).get(DIGEST_KEY)


def test_the_report_warns_while_any_graded_submission_ran_without_a_sandbox(class_in_gradebook):
    course = class_in_gradebook
    write_report(course, [Outcome("ada", "01_geometry", GRADED, 8.0, 8.0)], ISOLATION)
    assert "ran in a bubblewrap sandbox" in (course.reports / "report.md").read_text(encoding="utf-8")
    unsandboxed = Isolation(sandbox=False, memory_mb=3072, note="bwrap is missing")
    write_report(course, [Outcome("bo", "01_geometry", GRADED, 1.0, 8.0)], unsandboxed)
    write_exports(course, ISOLATION)  # as `perceptron-course refresh` later: the ledger still says how bo was graded
    report = (course.reports / "report.md").read_text(encoding="utf-8")
    assert "**WARNING: student code ran without a sandbox** (1 submission graded without one: bwrap is missing; " \
           "graded with --unsafe-no-sandbox" in report


def test_matplotlib_is_prepared_for_the_report_while_the_comparison_of_code_imports_it():
    """A batch prepares plotting in one thread while copydetect, in another, imports matplotlib.pyplot; the report's
    figures, drawn without pyplot, are then written in that process whatever backend pyplot chose."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import threading
        from course_grader.trusted.outputs.report import prepare_plotting
        errors = []
        def run(step):
            try:
                step()
            except Exception as error:
                errors.append(repr(error))
        threads = [threading.Thread(target=run, args=(prepare_plotting,)),
                   threading.Thread(target=run, args=(lambda: __import__("copydetect"),))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        import pathlib, tempfile
        from course_grader.trusted.outputs.figures import save_figure
        path = pathlib.Path(tempfile.mkdtemp()) / "figure.png"
        save_figure(path, [1, 2], lambda figure, shows: figure.subplots().plot(shows), (3, 2))
        print(errors, path.read_bytes()[:4] == b"\\x89PNG")
    """)
    environment = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}  # as a TA's shell has it
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=300)
    assert result.returncode == 0 and result.stdout.split() == ["[]", "True"], result.stdout + result.stderr


def test_the_summary_says_the_written_answers_wait_for_a_ta(class_in_gradebook, capsys):
    """ada's written answers are not graded yet: the table's score lacks them, and the line under it says so."""
    from course_grader.trusted.cli import _print_summary

    course = class_in_gradebook
    _print_summary(course, [Outcome("ada", "04_convergence", GRADED, 1.0, 2.0), Outcome("bo", "01_geometry", GRADED, 1.0, 8.0)], 1.0)
    out = capsys.readouterr().out
    waiting = [f"{assignment}/{cell}" for assignment in course.assignments() for cell in course.manually_graded_cells(assignment)]
    line = next(line for line in out.splitlines() if line.startswith("the scores above"))
    assert waiting and all(part in line for part in waiting) and "grades by hand" in line, out
    _print_summary(course, [Outcome("bo", "01_geometry", GRADED, 1.0, 8.0)], 1.0)  # bo wrote no answer to wait for
    assert "the scores above are complete" in capsys.readouterr().out
