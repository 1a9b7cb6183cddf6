"""Copying is detected: a small class with copies of the library, of a lecture and of each other."""

import re

import nbformat
import pytest

from conftest import FIXTURE_LIBRARY, LIBRARY_PACKAGE, fixture_course

from course_grader.trusted.outputs import similarity
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import build_submission, copy_course, load_recipes
from course_grader.trusted.outputs.similarity import THRESHOLD, find_similar, html_section, markdown_section

COURSE_ROOT = fixture_course()  # the grader's own course, released, with its example class
LIBRARY = FIXTURE_LIBRARY / LIBRARY_PACKAGE

# The plain perceptron as a lecture shows it.
LECTURE_CELL = '''def perceptron(X, y, max_epochs=100):
    w, b = np.zeros(X.shape[1]), 0.0
    for epoch in range(1, max_epochs + 1):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w, b = w + y_i * x_i, b + y_i
                mistakes += 1
        if mistakes == 0:
            return w, b, epoch, True
    return w, b, max_epochs, False
'''

# The lecture's loop, every name changed, made to return what the assignment asks.
RENAMED_LECTURE = '''def train_perceptron(X, y, max_epochs):
    weights, bias = np.zeros(X.shape[1]), 0.0
    total = 0
    for rounds in range(1, max_epochs + 1):
        errors = 0
        for point, label in zip(X, y):
            if label * (weights @ point + bias) <= 0:
                weights, bias = weights + label * point, bias + label
                errors += 1
        total += errors
        if errors == 0:
            return weights, bias, total, True
    return weights, bias, total, False'''

# Sam's own averaged perceptron (unlike the reference and Ben's), and Sue's copy of it with other names.
SAM_AVERAGED = '''def averaged_perceptron(X, y, epochs):
    data = np.array(X, dtype=float)
    n, d = data.shape
    current, offset = np.zeros(d), 0.0
    summed, summed_offset = np.zeros(d), 0.0
    for _ in range(epochs):
        for k in range(n):
            if y[k] * (np.dot(current, data[k]) + offset) <= 0:
                current = current + y[k] * data[k]
                offset = offset + y[k]
            summed = summed + current
            summed_offset = summed_offset + offset
    return summed / (epochs * n), summed_offset / (epochs * n)'''
SUE_AVERAGED = SAM_AVERAGED.replace("data", "pts").replace("current", "vec").replace("offset", "shift").replace("summed", "acc")


def library_loop_copy() -> str:
    """kernel_perceptron made of the library's train_kernel lines, pasted as they are."""
    source = (LIBRARY / "variants.py").read_text(encoding="utf-8")
    body = source[source.index("def train_kernel("):]
    start, end = body.index("    alpha = np.zeros"), body.index("            break\n") + len("            break\n")
    return ("def kernel_perceptron(K, y, max_epochs):\n    gram, labels = np.asarray(K, float), np.asarray(y)\n"
            "    points, rule, shuffle, seed = labels, 'margin', False, None\n" + body[start:end] + "    return alpha")


# over the comparison's 400 lines, under the intake's 20,000 characters of a code cell
HOSTILE = "def augment(X):\n    return X  # </body><script>alert(1)</script> | `code` \x1b[31m\x00\n" + "    x = 1\n" * 1500


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """A course with seven students, and a lecture folder with the plain perceptron cell."""
    tmp = tmp_path_factory.mktemp("similarity")
    course = copy_course(COURSE_ROOT, tmp / "course")
    lectures = tmp / "notebooks"
    lectures.mkdir()
    lecture = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# The algorithm"),
                                              nbformat.v4.new_code_cell(LECTURE_CELL)])
    nbformat.write(lecture, lectures / "02_algorithm.ipynb")
    recipes = {
        "ada": {"BASE": "solutions"},
        "ben": load_recipes(COURSE_ROOT / "example_class")["ben_alternative"],
        "lib": {"BASE": "release", "CELLS": {"06_limitations": {"kernel_perceptron": library_loop_copy()}}},
        "ren": {"BASE": "release", "CELLS": {"02_algorithm": {"train_perceptron": RENAMED_LECTURE}}},
        "sam": {"BASE": "release", "CELLS": {"06_limitations": {"averaged_perceptron": SAM_AVERAGED}}},
        "sue": {"BASE": "release", "CELLS": {"06_limitations": {"averaged_perceptron": SUE_AVERAGED}}},
        "zed": {"BASE": "release", "CELLS": {"01_geometry": {"augment": HOSTILE}, "06_limitations": {"averaged_perceptron": HOSTILE}}},
    }
    for student, recipe in recipes.items():
        for assignment in ("01_geometry", "02_algorithm", "06_limitations"):
            build_submission(course, recipe, assignment, course.submitted / student / assignment)
    (course.submitted / "zed" / "02_algorithm" / "algorithm.ipynb").write_text("{not json", encoding="utf-8")
    review = find_similar(course, library=LIBRARY, notebooks=lectures)
    return course, lectures, review


def pairs(review) -> set[tuple[str, str, str]]:
    return {(match.part, match.student, match.other) for match in review.matches}


def test_a_verbatim_copy_of_the_library_is_found_with_its_lines_side_by_side(small_class):
    _, _, review = small_class
    (match,) = [m for m in review.matches if m.student == "lib"]

    assert (match.part, match.other, match.kind) == ("kernel_perceptron", "perceptron_fixture/variants.py train_kernel", "library")
    assert match.score >= THRESHOLD
    copied = "scores += labels[j] * gram[j]"
    assert any(copied in text for _, text in match.student_lines)
    assert any(copied in text for _, text in match.other_lines)
    # line numbers are those of the student's cell and of the library file
    library_lines = (LIBRARY / "variants.py").read_text(encoding="utf-8").splitlines()
    assert all(library_lines[number - 1] == text for number, text in match.other_lines)


def test_a_copy_of_the_lecture_with_every_name_changed_is_found(small_class):
    _, _, review = small_class
    (match,) = [m for m in review.matches if m.student == "ren"]

    assert (match.part, match.other, match.kind) == ("train_perceptron", "notebooks/02_algorithm.ipynb (cell 2)", "lecture")
    assert match.score >= THRESHOLD


def test_two_students_sharing_a_solution_are_paired_once(small_class):
    _, _, review = small_class
    shared = [m for m in review.matches if {m.student, m.other} & {"sam", "student sue"}]

    assert [(m.part, m.student, m.other) for m in shared] == [("averaged_perceptron", "sam", "student sue")]
    assert shared[0].score == 1.0


def test_honest_solutions_written_differently_are_not_listed(small_class):
    _, _, review = small_class
    involved = {m.student for m in review.matches} | {m.other.removeprefix("student ") for m in review.matches}

    assert involved == {"lib", "perceptron_fixture/variants.py train_kernel", "ren", "notebooks/02_algorithm.ipynb (cell 2)", "sam", "sue"}
    assert "ada" not in involved and "ben" not in involved


def test_a_function_too_short_to_compare_is_named_not_flagged(small_class):
    _, _, review = small_class
    short = {(assignment, part) for assignment, part, _ in review.too_short}

    assert ("01_geometry", "augment") in short and ("02_algorithm", "train_perceptron") not in short
    assert not any(m.part == "augment" for m in review.matches)
    assert "01_geometry/augment: too short to compare" in markdown_section(review)  # (an _ inside a word is literal)


def test_hostile_text_is_data_escaped_everywhere_and_unreadable_notebooks_are_noted(small_class):
    _, _, review = small_class
    markdown, page = markdown_section(review), html_section(review)

    assert any(note.startswith("zed/02_algorithm: not compared, the grader refuses it") for note in review.notes)
    assert "zed/06_limitations/averaged_perceptron: only its first 400 lines or 20,000 characters were compared" in review.notes
    assert "<script" not in markdown and "<script" not in page and "\x1b" not in markdown + page and "\x00" not in markdown + page
    assert "&lt;/body&gt;" in page or "</body>" not in page


def test_the_same_class_gives_the_same_review(small_class):
    course, lectures, review = small_class

    again = find_similar(course, library=LIBRARY, notebooks=lectures)

    assert again == review
    assert markdown_section(again) == markdown_section(review)


def test_the_section_shows_each_match_side_by_side_in_markdown_and_html(small_class):
    _, _, review = small_class
    markdown, page = markdown_section(review), html_section(review)

    assert "### sam, 06_limitations/averaged_perceptron: 100% found in student sue" in markdown
    assert re.search(r"\| \d+: .*summed = summed \+ current \| \d+: .*acc = acc \+ vec \|", markdown)
    assert "<h3>sam, 06_limitations/averaged_perceptron: 100% found in student sue</h3>" in page
    assert "<th>sam</th><th>student sue</th>" in page


def test_a_failing_comparison_leaves_the_report_whole(small_class, monkeypatch):
    course, _, _ = small_class

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(similarity, "find_similar", broken)
    markdown, page = similarity.add_to_reports(course, "# Grading report\n", "<html><body><p>x</p></body></html>", ["01_geometry"])

    assert markdown.startswith("# Grading report\n") and "the comparison did not run (RuntimeError: boom)" in markdown
    assert page.endswith("</body></html>") and "the comparison did not run" in page


def test_three_hundred_students_are_compared_within_the_pair_budget(tmp_path):
    """45,000 pairs per part: the fingerprint index finds the few worth a detailed comparison."""
    course = copy_course(COURSE_ROOT, tmp_path / "course")
    notebook = nbformat.read(course.release / "06_limitations" / "limitations.ipynb", as_version=4)
    for k in range(300):
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "averaged_perceptron":
                # every student a different solution: constants and structure vary with k
                cell.source = (f"def averaged_perceptron(X, y, epochs):\n    total_{k} = np.zeros({k + 1})\n"
                               + "".join(f"    step_{j} = total_{k} * {j * k} + np.ones({j}) ** {k % 7}\n" for j in range(k % 5 + 2))
                               + (SAM_AVERAGED.split("\n", 1)[1] if k in (17, 230) else f"    return total_{k}, {k}.5\n"))
        folder = course.submitted / f"s{k:03d}" / "06_limitations"
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / "limitations.ipynb")

    review = find_similar(course, ["06_limitations"], library=LIBRARY, notebooks=tmp_path / "no-lectures")

    assert f"no lecture notebooks at {tmp_path / 'no-lectures'}: the lectures were not compared" in review.notes

    # listed under both: which of the two copied is not known
    assert [(m.student, m.other) for m in review.matches if m.part == "averaged_perceptron"] == [
        ("s017", "student s230"), ("s230", "student s017")]


@pytest.mark.slow
def test_grading_the_example_class_reports_similar_code_and_changes_no_score(tmp_path):
    from course_grader.trusted.cli import main

    assert main(["demo", "--course", str(COURSE_ROOT), "--out", str(tmp_path / "demo"), "--quiet"]) == 0

    report = (tmp_path / "demo" / "reports" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "demo" / "reports" / "report.html").read_text(encoding="utf-8")
    section = report[report.index("## Similar code for review"):]
    # Cy and Eve started from the reference solutions: their unchanged parts are Ada's
    assert "### ada_reference, 02_algorithm/choose_epoch_cap: 100% found in student cy_buggy" in section
    assert "ben" not in section  # written differently: never listed
    assert "01_geometry/augment: too short to compare" in section
    assert "<h2>Similar code for review</h2>" in page and page.rstrip().endswith("</html>")
    # a listing never changes a score: Ada keeps every autograded point (written answers await a TA)
    course = Course.open(tmp_path / "demo")
    expected = [sum(points for cell, points in course.graded_cells(a).items() if cell not in course.manually_graded_cells(a))
                for a in course.assignments()]
    row = next(line for line in report.splitlines() if line.startswith("| ada_reference |"))  # the score table's
    assert [float(mark.strip().split("/")[0]) for mark in row.strip("|").split("|")[1:-1]] == expected


def test_the_review_does_not_depend_on_the_interpreter_s_string_hashing(small_class):
    """copydetect hashes k-grams with Python's salted hash(): every k-gram is kept, so the result is the same."""
    import os
    import subprocess
    import sys

    course, lectures, review = small_class
    script = ("import sys\nfrom pathlib import Path\nfrom course_grader.trusted.course.course import Course\n"
              "from course_grader.trusted.outputs.similarity import find_similar, markdown_section\n"
              "print(markdown_section(find_similar(Course.open(sys.argv[1]), library=Path(sys.argv[2]), notebooks=Path(sys.argv[3]))))\n")
    outputs = {subprocess.run([sys.executable, "-c", script, str(course.root), str(LIBRARY), str(lectures)], capture_output=True,
                              text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2")}

    assert outputs == {markdown_section(review) + "\n"}


def test_a_class_that_all_hands_in_the_same_code_is_bounded_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(similarity, "MAX_DETAILED_PAIRS", 12)
    monkeypatch.setattr(similarity, "MAX_SHOWN_MATCHES", 2)
    course = copy_course(COURSE_ROOT, tmp_path / "course")
    for k in range(10):  # 45 identical pairs per part
        build_submission(course, {"BASE": "solutions"}, "02_algorithm", course.submitted / f"s{k}" / "02_algorithm")

    review = find_similar(course, ["02_algorithm"], library=LIBRARY, notebooks=tmp_path / "none")

    train = [m for m in review.matches if m.part == "train_perceptron"]
    # 12 pairs compared in detail, each listed under both students; spread over students, not all on s0
    assert 0 < len(train) <= 2 * 12 and len({m.student for m in train}) >= 2
    assert any(note.startswith("02_algorithm/train_perceptron: 45 pairs share over 50%") for note in review.notes)
    markdown = markdown_section(review)
    assert markdown.count("\n### ") == 2 and f"{len(review.matches) - 2} more matches (their lines are not shown)" in markdown


def _boom(course, assignments):
    raise RuntimeError("boom")


def test_a_comparison_started_in_the_background_gives_the_same_review_or_its_error(small_class):
    course, _, _ = small_class
    assignments = ["01_geometry", "02_algorithm", "06_limitations"]

    assert similarity.compare_in_background(course, assignments).result(timeout=300) == find_similar(course, assignments)

    started = similarity.compare_in_background(course, assignments, compare=_boom)
    markdown, _ = similarity.add_to_reports(course, "# Grading report\n", "<html><body></body></html>", assignments,
                                            started=started)
    assert "the comparison did not run (RuntimeError: boom)" in markdown


def _parse_without_end(stop) -> int:
    """Parse nested code in a loop until ``stop`` is set, as this process's other work does; how many parses."""
    import ast

    source = "x = " + "(" * 60 + "1" + ")" * 60 + "\n" + "def f(a):\n    return [a for a in range(3) if a]\n" * 40
    parsed = 0
    while not stop.is_set():
        ast.parse(source)
        parsed += 1
    return parsed


def test_the_comparison_completes_while_this_process_parses_python_in_another_thread(small_class):
    # CPython 3.11 counts the depth of a tree it converts once per interpreter: a comparison parsing the
    # library in a thread beside another parsing thread failed with "AST constructor recursion depth
    # mismatch" (1 full grading in 4). In a process of its own, nothing here can meet it.
    import threading
    from concurrent.futures import ThreadPoolExecutor

    course, _, _ = small_class
    assignments = ["01_geometry", "02_algorithm"]
    expected = find_similar(course, assignments)
    for _ in range(3):
        stop = threading.Event()
        with ThreadPoolExecutor(1) as parser:
            parses = parser.submit(_parse_without_end, stop)
            try:
                review = similarity.compare_in_background(course, assignments).result(timeout=600)
            finally:
                stop.set()
            assert parses.result() > 0
        assert review == expected


@pytest.mark.parametrize("jobs", [2, 1])
def test_a_batch_in_worker_processes_compares_the_class_while_its_jobs_run_and_a_serial_one_after(tmp_path, monkeypatch, jobs):
    # Serially the jobs' kernels are driven from this process: a comparison beside them could hold the
    # interpreter past a cell's time limit.
    import threading
    import time

    from course_grader.trusted import pipeline

    course = copy_course(COURSE_ROOT, tmp_path / "course")
    build_submission(course, {"BASE": "solutions"}, "01_geometry", course.submitted / "ada" / "01_geometry")
    seen = {}
    real_find_similar, real_compare, real_run_jobs = similarity.find_similar, pipeline.compare_in_background, pipeline.run_jobs

    def watched_find_similar(*args, **kwargs):  # in this process only: the background comparison has its own
        seen["compared in"], seen["compared at"] = threading.current_thread().name, time.monotonic()
        return real_find_similar(*args, **kwargs)

    def watched_compare(*args, **kwargs):
        seen["started at"] = time.monotonic()
        return real_compare(*args, **kwargs)

    def watched_run_jobs(*args, **kwargs):
        try:
            return real_run_jobs(*args, **kwargs)
        finally:
            seen["jobs done at"] = time.monotonic()

    monkeypatch.setattr(similarity, "find_similar", watched_find_similar)
    monkeypatch.setattr(pipeline, "compare_in_background", watched_compare)
    monkeypatch.setattr(pipeline, "run_jobs", watched_run_jobs)
    (outcome,) = pipeline.grade(course, progress=False, jobs=jobs)

    assert outcome.status == "graded"
    if jobs > 1:
        assert seen["started at"] < seen["jobs done at"] and "compared in" not in seen
    else:
        assert "started at" not in seen
        assert seen["compared in"] == threading.main_thread().name and seen["compared at"] > seen["jobs done at"]
    assert "## Similar code for review" in (course.reports / "report.md").read_text(encoding="utf-8")
