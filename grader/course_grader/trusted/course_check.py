"""``perceptron-course check``: what is inconsistent in a course after an instructor's edits, on one screen.

Each finding is a sentence an instructor understands, with what to do:

- the term file does not load (a typo in a key, a bad date or zone, an assignment not in ``source/``);
- a graded test cell with no hidden check, a hidden-test region naming a check its assignment's
  ``hidden_checks.py`` lacks, a check no part declares (``check_registry.registry_problems``);
- a part's heading that says ``(N points)`` when its graded cells' metadata add up to another number;
- an assignment dropped from the term that is still registered: a folder of ``source/`` or
  ``release/``, a grant of imports to it, an assignment of the gradebook;
- ``release/`` not what ``source/`` generates now (``release_check.stale_assignments``);
- limits in nbgrader's configuration that disagree with the term file;
- a header nbgrader's release cannot find;
- a lecture notebook (``notebooks/*.ipynb``) that sends students to ``assignments/<name>/`` of no assignment of the
  term, and an assignment's notebook naming a lecture ``notebooks/<file>.ipynb`` that does not exist;
- "Assignment N" in a lecture or an assignment's notebook that is not the term's N-th assignment: a number beside
  the assignment's folder (``Assignment 4`` (`assignments/<name>/...`)) or in its own title (``# Assignment 4: ...``)
  that is not its place in the term, or a number the term has no assignment for (after a reorder or a drop);
- the students' README naming a file or folder the student bundle will not hold;
- a stale recipe of the example class (``example_class/<student>.py``): one naming an assignment the term no longer
  has, or a cell its assignment no longer has, and one that starts from the release with code of its own (an
  alternative solution) yet leaves a part (a new one) a stub that its ``LOSES`` does not name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .course.commands import grader_command
from .course.course import Course, CourseError, load_config

#: ``(2 points)``, ``(1 point)``, ``(2 points, graded by hand)`` in a Markdown heading's first line.
HEADING_POINTS = re.compile(r"^#+ .*\((\d+(?:\.\d+)?) points?\b")


def _cells(course: Course, assignment: str) -> list[tuple[str, dict]]:
    """``(notebook name, cell)`` of every cell of an assignment's source, in order."""
    cells = []
    for name in course.notebook_names(assignment):
        notebook = json.loads((course.source / assignment / f"{name}.ipynb").read_text(encoding="utf-8"))
        cells += [(name, cell) for cell in notebook.get("cells", [])]
    return cells


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def check_case_draws(course: Course, assignments: list[str]) -> list[str]:
    """Every check of ``assignments`` draws its cases and its second calls (one draw, with a fixed secret that is not
    the course's): a check whose second call would break its own precondition is refused here, before a grading run
    meets it (``second_calls.CheckRefused``), and a check whose cases fail to draw is named with the error."""
    from .judging.check_registry import ChecksError, course_checks
    from .judging.checks import case_generator, prepare_cases
    from .judging.checks.second_calls import CheckRefused

    try:
        checks = course_checks(course.root)
    except ChecksError:
        return []  # said by check_parts, with the file and its error
    problems = []
    for assignment in assignments:
        for function, check in checks.of(assignment).items():
            try:
                prepare_cases(check, case_generator(b"course-grader check", function, "check"))
            except CheckRefused as error:
                problems.append(f"source/{assignment}/hidden_checks.py: {error}")
            except Exception as error:  # noqa: BLE001 - a check's own code: named, never the end of the check
                problems.append(f"source/{assignment}/hidden_checks.py: {function}'s cases fail to draw "
                                f"({type(error).__name__}: {error})")
    return problems


def check_parts(course: Course, assignments: list[str]) -> list[str]:
    """Heading points that differ from their cells' metadata, then every inconsistency between ``source/`` and its
    hidden checks (``check_registry.registry_problems``: parts without a check, checks of no part, grants of imports
    to assignments the course does not have)."""
    from .judging.check_registry import registry_problems
    from .judging.kernel_imports import ungrantable_imports

    problems = []
    for assignment in assignments:
        heading, heading_points, cell_points = "", None, 0.0

        def close_part() -> None:
            if heading_points is not None and abs(heading_points - cell_points) > 1e-9:
                problems.append(f"{assignment}: the heading '{heading}' says {heading_points:g} points, but its graded cells' "
                                f"metadata give {cell_points:g}: change the heading or the cells' points (Create Assignment toolbar)")

        for _, cell in _cells(course, assignment):
            meta = cell.get("metadata", {}).get("nbgrader", {})
            text = _text(cell)
            if cell.get("cell_type") == "markdown" and text.lstrip().startswith("#") and not meta.get("grade"):
                close_part()  # any heading ends the part above it
                first_line = text.strip().splitlines()[0]
                match = HEADING_POINTS.search(first_line)
                heading, heading_points, cell_points = first_line.lstrip("# "), float(match.group(1)) if match else None, 0.0
                continue
            if meta.get("grade"):
                cell_points += float(meta.get("points", 0) or 0)
        close_part()
    return problems + registry_problems(course.root) + ungrantable_imports(course.root)


def check_registrations(course: Course, term) -> list[str]:
    """Assignments outside the term that are still registered somewhere."""
    in_term = set(term.assignment_names)
    problems = []
    for name in course.source_folders():
        if name not in in_term:
            problems.append(f"source/{name} is not an assignment of term.toml: add an [[assignments]] block with "
                            f"name = \"{name}\", or delete (git rm) the folder if it was dropped")
    if course.release.is_dir():
        for folder in sorted(p for p in course.release.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if folder.name not in in_term:
                problems.append(f"release/{folder.name} is not an assignment of term.toml: delete it (git rm -r release/{folder.name})")
    if (course.root / "gradebook.db").is_file():
        from .course.course import nbgrader_api

        with nbgrader_api(course).gradebook as gradebook:
            for assignment in gradebook.assignments:
                if assignment.name not in in_term:
                    problems.append(f"the gradebook holds assignment {assignment.name}, not in term.toml: "
                                    f"`nbgrader db assignment remove {assignment.name}` (add --force if it has submissions)")
    return problems


def check_configuration(course: Course, term) -> list[str]:
    """nbgrader's configuration against the term: limits, course id, header."""
    config = load_config(course)
    problems = []
    agreed = [("c.Execute.timeout", config.Execute.get("timeout"), term.limits.cell_seconds, "limits.cell_seconds"),
              ("c.ResilientExecute.time_budget", config.ResilientExecute.get("time_budget"), term.limits.notebook_seconds,
               "limits.notebook_seconds"),
              ("c.ResilientExecute.max_restarts", config.ResilientExecute.get("max_restarts"), term.limits.max_restarts,
               "limits.max_restarts"),
              ("c.CourseDirectory.course_id", config.CourseDirectory.get("course_id"), term.course.id, "course.id")]
    for setting, value, wanted, key in agreed:
        if value != wanted:
            problems.append(f"nbgrader_config.py sets {setting} = {value!r} but term.toml's {key} is {wanted!r}: "
                            f"set it in term.toml only (nbgrader_config.py reads it from there)")
    header = config.IncludeHeaderFooter.get("header")
    if header:
        path = Path(header) if Path(header).is_absolute() else None
        if path is None:
            problems.append(f"nbgrader_config.py sets c.IncludeHeaderFooter.header = {header!r}, a relative path the release "
                            f"check's scratch copy cannot find: set [course].header in term.toml instead")
        elif not path.is_file():
            problems.append(f"the header {header} does not exist: fix [course].header in term.toml")
    return problems


def check_release(course: Course, term) -> list[str]:
    from .course.release_check import stale_assignments

    present = [name for name in term.assignment_names if (course.release / name).is_dir()]
    problems = [f"release/{name} is missing: run `{grader_command()} release`" for name in term.assignment_names
                if name not in present]
    try:
        stale = stale_assignments(course, present) if present else []
    except CourseError as error:
        return problems + [str(error)]
    problems += [f"release/{name} is not what source/{name} generates now: run `{grader_command()} release` and commit it"
                 for name in stale]
    return problems


def check_course(course: Course) -> list[str]:
    """Every inconsistency of ``course``, each a sentence with what to do; empty when there is none."""
    try:
        term = course.term()
    except CourseError as error:
        return [f"{error} (fix term.toml; docs/term-file.md lists every key)"]
    try:
        problems = check_configuration(course, term)
    except CourseError as error:
        problems = [str(error)]
    problems += check_registrations(course, term)
    problems += check_parts(course, [name for name in term.assignment_names])
    problems += check_case_draws(course, term.assignment_names)
    problems += check_lectures(course, term)
    problems += check_assignment_numbers(course, term)
    problems += check_student_readme(course, term)
    problems += check_example_class(course, term)
    problems += check_release(course, term)
    return problems


#: A lecture named in an assignment's notebook or in the students' README: ``notebooks/<file>.ipynb``.
LECTURE_PATH = re.compile(r"notebooks/([^`\s)\]*]+\.ipynb)")


def check_lectures(course: Course, term) -> list[str]:
    """Lectures that send students to an assignment the term does not have; assignments that name a missing lecture."""
    from .course.student_readme import lecture_pointers

    in_term = set(term.assignment_names)
    problems = []
    for lecture, pointed in lecture_pointers(course).items():
        for name in pointed:
            if name not in in_term:
                problems.append(f"notebooks/{lecture} sends students to assignments/{name}/, which is not an assignment of "
                                f"term.toml: point it at the assignment's new name, or take out that paragraph if the "
                                f"assignment was dropped (then run the lecture again: docs/instructors.md)")
    for assignment in term.assignment_names:
        if not (course.source / assignment).is_dir():
            continue  # the term's own check names it
        for notebook, cell in _cells(course, assignment):
            if cell.get("cell_type") != "markdown":
                continue
            for lecture in LECTURE_PATH.findall(_text(cell)):
                if not (course.root / "notebooks" / lecture).is_file():
                    problems.append(f"source/{assignment}/{notebook}.ipynb names the lecture notebooks/{lecture}, which "
                                    f"does not exist: name the lecture as it is now in notebooks/ (then run "
                                    f"`{grader_command()} release`)")
    return list(dict.fromkeys(problems))


#: "Assignment 4", "assignment 4's": an assignment named by its place in the term (1 for the first).
NUMBERED_ASSIGNMENT = re.compile(r"\b[Aa]ssignment\s+(\d+)\b(?!\.\d)")
#: "**Assignment 4** (`assignments/04_convergence/...`": the number and the assignment's folder beside it.
NUMBER_BESIDE_FOLDER = re.compile(r"\b[Aa]ssignment\s+(\d+)\W{0,6}\(\s*`?assignments/([^/`\s)\]]+)/")
#: An assignment notebook's title: "# Assignment 4: ...".
NUMBERED_TITLE = re.compile(r"^#\s+Assignment\s+(\d+)\b")


def check_assignment_numbers(course: Course, term) -> list[str]:
    """"Assignment N" where the term's N-th assignment is another, or where the term has no N-th (a reorder, a drop)."""
    from .course.student_readme import lecture_markdown

    place = {name: number for number, name in enumerate(term.assignment_names, start=1)}
    texts = [(f"notebooks/{name}", text) for name, text in lecture_markdown(course).items()]
    titles = []
    for assignment in term.assignment_names:
        if (course.source / assignment).is_dir():
            by_notebook: dict[str, list[str]] = {}
            for notebook, cell in _cells(course, assignment):
                if cell.get("cell_type") == "markdown":
                    by_notebook.setdefault(notebook, []).append(_text(cell))
            for notebook, cells in by_notebook.items():
                texts.append((f"source/{assignment}/{notebook}.ipynb", "\n\n".join(cells)))
                titles.append((f"source/{assignment}/{notebook}.ipynb", assignment, cells[0].lstrip()))
    problems = []
    then = f" (then `{grader_command()} release`)"
    for where, assignment, first_cell in titles:
        title = NUMBERED_TITLE.match(first_cell)
        if title and int(title[1]) != place[assignment]:
            problems.append(f"{where}: its title says \"Assignment {title[1]}\", but {assignment} is assignment "
                            f"{place[assignment]} in term.toml's order: make it \"Assignment {place[assignment]}\"{then}")
    for where, text in texts:
        after = then if where.startswith("source/") else ""
        for number, name in NUMBER_BESIDE_FOLDER.findall(text):
            if name in place and int(number) != place[name]:
                problems.append(f"{where}: \"Assignment {number}\" names assignments/{name}/, which is assignment "
                                f"{place[name]} in term.toml's order: make it \"Assignment {place[name]}\"{after}")
        for number in sorted({int(n) for n in NUMBERED_ASSIGNMENT.findall(text)}):
            if not 1 <= number <= len(place):
                problems.append(f"{where} mentions assignment {number}, but term.toml has {len(place)} assignments: "
                                f"renumber it, or rewrite the sentence if that assignment was dropped{after}")
    return list(dict.fromkeys(problems))


def bundled_paths(course: Course, term) -> set[str]:
    """The paths a student bundle of ``course`` holds, as a student names them (``notebooks/<file>.ipynb``,
    ``assignments/<name>/`` and ``assignments/<name>/<file>``)."""
    paths = {"notebooks/", "assignments/", "package/", "README.md"}
    paths |= {f"notebooks/{p.name}" for p in (course.root / "notebooks").glob("*.ipynb")}
    for name in term.assignment_names:
        if (course.release / name).is_dir():
            paths.add(f"assignments/{name}/")
            paths |= {f"assignments/{name}/{p.name}" for p in (course.release / name).iterdir() if p.is_file()}
    return paths


#: A path of the bundle the students' README names: under ``notebooks/`` or ``assignments/``.
README_PATH = re.compile(r"(?<![\w/.])((?:notebooks|assignments)/[^`\s)\]*\\]*)")


def check_student_readme(course: Course, term) -> list[str]:
    """Files and folders the students' README names that the bundle will not hold, and the course's copy of it
    (``docs/students.md``, where the course keeps one) when it is not the rendering of this term: a term edit, a
    renamed assignment or a new lecture changes what students read."""
    from .course.student_readme import DOCS_PAGE, TEMPLATE, render

    try:
        readme = render(course, term)
    except Exception as error:  # noqa: BLE001 - any failure to render is the instructor's to see
        return [f"the students' README cannot be written ({type(error).__name__}: {error}): {TEMPLATE.name} needs every "
                f"assignment of term.toml to have its folder in source/"]
    held = bundled_paths(course, term)
    missing = sorted({path.rstrip(".,;:") for path in README_PATH.findall(readme)} - held)
    problems = [f"the students' README names {path}, which the student bundle will not hold: "
                + ("add that lecture to notebooks/, or send students to the lecture an assignment's notebook names"
                   if path.startswith("notebooks/") else f"run `{grader_command()} release`, or fix [[assignments]] in term.toml")
                for path in missing]
    page = course.root / DOCS_PAGE
    if page.is_file() and page.read_text(encoding="utf-8") != readme:
        problems.append(f"{DOCS_PAGE.as_posix()} is not the students' README of this term (term.toml, the assignments or "
                        f"the lectures changed since it was written): run `{grader_command()} students-readme` and commit it")
    return problems


#: An assignment's name as a recipe's expected reason may quote it (the grader's "looks like the notebook of ...").
NAMED_IN_A_REASON = re.compile(r"(?<![\w/])\d+_[A-Za-z]\w*")

#: The keys of a recipe that name assignments (see ``example_class.py``).
RECIPE_KEYS = ("CELLS", "FILES", "EDITS", "LOSES", "FAILS")


def check_example_class(course: Course, term, folder: Path | None = None) -> list[str]:
    """Stale recipes of the example class: naming an assignment the term no longer has, or a cell that no longer is,
    or, starting from the release and writing code of its own, leaving a part (a new one) a stub unsaid."""
    from .course.example_class import load_recipes

    folder = course.root / "example_class" if folder is None else folder
    if not folder.is_dir():
        return []
    try:
        recipes = load_recipes(folder)
    except Exception as error:  # noqa: BLE001 - a recipe that does not run is the instructor's to fix
        return [f"{folder.name}/: a recipe does not run ({type(error).__name__}: {error})"]
    in_term = set(term.assignment_names)
    problems = []
    for student, recipe in recipes.items():
        where = f"{folder.name}/{student}.py"
        named = [(key, name) for key in RECIPE_KEYS for name in (recipe.get(key) or {})]
        named += [("ASSIGNMENTS", name) for name in recipe.get("ASSIGNMENTS", ())]
        for key, name in named:
            if name not in in_term:
                problems.append(f"{where}: {key} names {name}, which is not an assignment of term.toml: rename it there "
                                f"if the assignment was renamed, or delete its entry if it was dropped")
        for assignment, reason in sorted((recipe.get("FAILS") or {}).items()):
            for name in sorted(set(NAMED_IN_A_REASON.findall(str(reason))) - in_term):
                problems.append(f"{where}: the reason FAILS expects for {assignment} ({reason!r}) names {name}, which is "
                                f"not an assignment of term.toml: name the assignment as it is now")
        for assignment in sorted(in_term & set(recipe.get("CELLS") or {})):
            if not (course.source / assignment).is_dir():
                continue
            cells = {cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for _, cell in _cells(course, assignment)}
            stale = sorted(set(recipe["CELLS"][assignment]) - cells)
            if stale:
                problems.append(f"{where}: CELLS of {assignment} names {', '.join(stale)}, which source/{assignment} has no "
                                f"cell of: use the cell's grade_id as it is now, or delete the entry")
        for assignment in sorted(in_term & set(recipe.get("LOSES") or {})):
            if not (course.source / assignment).is_dir():
                continue
            stale = sorted(set(recipe["LOSES"][assignment]) - set(course.graded_cells(assignment)))
            if stale:
                problems.append(f"{where}: LOSES of {assignment} names {', '.join(stale)}, which source/{assignment} has no "
                                f"graded cell of: use the test cell's grade_id as it is now, or delete the entry")
        problems += _stubs_left_unsaid(course, recipe, where, list(term.assignment_names))
    return problems


def _stubs_left_unsaid(course: Course, recipe: dict, where: str, in_term: list[str]) -> list[str]:
    """A recipe from the release that writes code of its own (an alternative solution, not an untouched hand-in)
    yet leaves some solution cell as released, with tests of it that ``LOSES`` does not name: a part added since
    costs that example student its points without a word (the expected grades follow the stub)."""
    from .course.example_class import solutions_by_test_cell

    written = recipe.get("CELLS") or {}
    if recipe.get("BASE") != "release" or not any(written.values()):
        return []
    problems = []
    for assignment in [name for name in recipe.get("ASSIGNMENTS", in_term) if name in in_term]:
        if not (course.source / assignment).is_dir() or assignment in (recipe.get("FAILS") or {}):
            continue
        said = set((recipe.get("LOSES") or {}).get(assignment, ()))
        cells = written.get(assignment, {})
        unsaid = {test: [cell for cell in solutions if cell not in cells]
                  for test, solutions in solutions_by_test_cell(course, assignment).items() if test not in said}
        stubs = sorted({cell for missing in unsaid.values() for cell in missing})
        if stubs:
            tests = sorted(test for test, missing in unsaid.items() if missing)
            problems.append(f"{where}: starts from the release but has no code in CELLS for {assignment}'s "
                            f"{', '.join(stubs)}: that student hands in the released stub and loses {', '.join(tests)}; "
                            f"write the student's own version in CELLS, or name those tests in LOSES if the stub is meant")
    return problems
