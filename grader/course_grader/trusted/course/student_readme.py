"""The students' README, written from a template filled from the term file.

``perceptron-course bundle`` puts it at the top of the bundle; ``perceptron-course students-readme``
writes it into ``docs/students.md`` (a test holds the committed file equal to the rendering). Its
course id, limits, assignments with their due dates, late rule and hand-in route are the term's
(``term.toml``), so the instructions never go stale after a term edit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .commands import selfcheck_command
from .course import Course
from .library import functions_defined
from .term import Term, local_text

TEMPLATE = Path(__file__).with_name("student_templates") / "README.md.j2"
#: Where the rendering for the course's own term is committed.
DOCS_PAGE = Path("docs") / "students.md"
LMS_NAMES = {"canvas": "Canvas", "moodle": "Moodle", "moodle_files": "Moodle", "blackboard": "Blackboard"}


def late_rule(term: Term) -> str:
    """The late policy in one sentence for students (``""`` when lateness costs nothing)."""
    late = term.late
    if late.policy == "zero":
        return "A notebook handed in after its due date (your extension included, if you have one) scores 0."
    if late.policy == "per_day":
        return (f"A notebook handed in late loses {late.percent_per_day:g}% of its points per started day past its due "
                f"date (your extension included, if you have one), at most {late.max_percent:g}%.")
    return ""


#: Where a lecture notebook sends students to an assignment: ``assignments/<name>/`` in its text.
ASSIGNMENT_POINTER = re.compile(r"assignments/([^/`\s)\]]+)/")


def lecture_markdown(course: Course) -> dict[str, str]:
    """The Markdown of each lecture notebook (``notebooks/*.ipynb``), its cells joined, by file name (``""`` for a
    file that is not a notebook: the lecture's own tests say so)."""
    texts = {}
    for path in sorted((course.root / "notebooks").glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError, AttributeError):
            cells = []
        texts[path.name] = "\n".join("".join(cell.get("source", "")) for cell in cells if cell.get("cell_type") == "markdown")
    return texts


def lecture_pointers(course: Course) -> dict[str, list[str]]:
    """The assignments each lecture notebook (``notebooks/*.ipynb``) sends students to, by file name, in order."""
    return {name: list(dict.fromkeys(ASSIGNMENT_POINTER.findall(text))) for name, text in lecture_markdown(course).items()}


def lecture_of(course: Course, assignment: str) -> str:
    """The lecture notebook of ``assignment`` (a file name of ``notebooks/``), ``""`` if none: the lecture that sends
    students to it, else the lecture of the same name."""
    pointers = lecture_pointers(course)
    pointing = [name for name, pointed in pointers.items() if assignment in pointed]
    if pointing:
        return pointing[0]
    return f"{assignment}.ipynb" if f"{assignment}.ipynb" in pointers else ""


def render(course: Course, term: Term, assignments: list[str] | None = None) -> str:
    """The README for the term's assignments (or only ``assignments``, those the bundle carries), as Markdown."""
    from jinja2 import Environment, StrictUndefined

    chosen = [a for a in term.assignments if assignments is None or a.name in assignments]
    first = chosen[0].name
    notebooks = course.notebook_names(first)
    environment = Environment(undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    text = environment.from_string(TEMPLATE.read_text(encoding="utf-8")).render(
        title=term.course.title or term.course.id, term=term.course.term, instructor=term.course.instructor,
        bundle_name=term.bundle_name, timezone=term.course.timezone, late_rule=late_rule(term),
        assignments=[{"name": a.name, "due": local_text(term, a.due) if a.due else "", "lecture": lecture_of(course, a.name)}
                     for a in chosen],
        first=first, first_notebook=notebooks[0] if notebooks else first, first_lecture=lecture_of(course, first),
        cell_seconds=term.limits.cell_seconds, notebook_seconds=term.limits.notebook_seconds,
        memory_mib=term.limits.memory_mib, course_id=term.course.id,
        exchange=term.handin.route in ("exchange", "both"), lms=term.handin.route in ("lms", "both"),
        lms_name=LMS_NAMES[term.handin.lms], selfcheck=selfcheck_command(), package=term.library.package,
        answered=functions_defined(term.library.package, [f for a in chosen for f in course.solution_functions(a.name)]))
    return text.rstrip() + "\n"


def write_docs_page(course: Course) -> Path:
    """Write the README for the course's term into ``docs/students.md``; return the path."""
    page = course.root / DOCS_PAGE
    page.parent.mkdir(exist_ok=True)
    page.write_text(render(course, course.term()), encoding="utf-8")
    return page
