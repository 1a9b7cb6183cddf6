"""A next term nobody chose in advance: a seeded generator of the documented edits an adopting instructor makes.

``edits(seed, root)`` draws, from the course at ``root``, a list of ``Edit``: every key of the term file (course id,
title, instructor, term, time zone, header, hand-in route and LMS, limits, late policy, reveal schedule, bundle name,
the serve keys, due dates, extensions), renaming, dropping, reordering and adding an assignment (a new autograded part
from docs/adding-a-part.md), a part added to an assignment, a second written question, points changed, a lecture
edited. Each edit is made the way the guides say (docs/instructors.md, docs/term-file.md, docs/adding-a-part.md),
on a scratch copy (``scratch_copy``); ``finish`` then runs what an instructor runs after editing (``release``,
``students-readme``) and commits. ``tests/course/test_adoption.py`` runs ``perceptron-course check`` and the course's
fast tests there, and prints the seed and the edits when either fails.

    python tests/course/adoption.py 7 /tmp/rehearsal     # the edited copy of seed 7, to look at
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the term-file helpers
from term_edits import edit_term, own_dates_in_hours, read_term, set_key  # noqa: E402

from course_grader.trusted.course_check import (  # noqa: E402 - what check reads as a name in a reason, as a number
    NAMED_IN_A_REASON, NUMBERED_ASSIGNMENT)

REPO = Path(__file__).resolve().parents[2]
GUIDE = Path("docs") / "adding-a-part.md"
WRITTEN_QUESTION = "Explain, in two or three sentences, what you would check first if this part's function failed a hidden test."


@dataclass(frozen=True)
class Edit:
    """One documented edit: what an instructor would say they did, and how it is done on a copy."""

    says: str
    apply: Callable[[Path], None]


def scratch_copy(destination: Path, repo: Path = REPO) -> Path:
    """What git tracks of ``repo`` (with uncommitted edits of tracked files), copied into ``destination``."""
    files = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        source = repo / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


# ----------------------------------------------------------------------------- notebooks


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, notebook: dict) -> None:
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _cell(cell_type: str, source: str, **nbgrader) -> dict:
    cell = {"cell_type": cell_type, "metadata": {"nbgrader": {"grade": False, "locked": True, "schema_version": 3,
                                                             "solution": False, "task": False, **nbgrader}},
            "source": source}
    if cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebooks(root: Path, assignment: str) -> list[Path]:
    return sorted((root / "source" / assignment).glob("*.ipynb"))


def _assignments(root: Path) -> list[str]:
    return [table["name"] for table in read_term(root)["assignments"]]


def _guide_blocks(root: Path) -> dict[str, str]:
    """The guide's part-text, part-solution, part-test and part-check blocks."""
    return dict(re.findall(r"```\w+ (part-\w+)\n(.*?)```", (root / GUIDE).read_text(encoding="utf-8"), flags=re.S))


# ----------------------------------------------------------------------------- the term file


def term_edits(rng: random.Random, root: Path) -> list[Edit]:
    """Every key of the term file, each to a value drawn here (docs/term-file.md)."""
    zone = rng.choice(["America/Chicago", "Europe/Paris", "Asia/Tokyo", "Australia/Sydney", "UTC"])
    course_id = rng.choice(["cs589", "ml-101-2027", "stat-learn", "percep_fall"])
    keys = {
        "course.id": course_id,
        "course.title": rng.choice(["Machine learning, part 1", "Linear classifiers", "Perceptrons & margins"]),
        "course.instructor": rng.choice(["Dr. A. Lovelace", "Prof. Grace Hopper", "K. Gödel"]),
        "course.term": rng.choice(["Spring 2027", "Fall 2027", "Winter term"]),
        "course.timezone": zone,
        "handin.route": rng.choice(["exchange", "lms", "both"]),
        "handin.lms": rng.choice(["canvas", "moodle", "moodle_files", "blackboard"]),
        "limits.cell_seconds": rng.randint(10, 40),
        "limits.notebook_seconds": rng.randint(120, 600),
        "limits.max_restarts": rng.randint(1, 5),
        "limits.memory_mib": rng.choice([2048, 3072, 4096]),
        "late.policy": rng.choice(["none", "zero", "per_day"]),
        "late.percent_per_day": rng.choice([5, 10, 12.5, 20]),
        "late.max_percent": rng.choice([50, 60, 100]),
        "reveal.show_details": rng.choice(["now", "after_due_date"]),
        "bundle.name": f"{course_id}-student",
        "serve.attempts": rng.randint(0, 5),
        "serve.attempts_per_day": rng.randint(0, 3),
        "serve.cooldown_minutes": rng.choice([0, 5, 7.5]),
        "serve.counts": rng.choice(["latest", "best"]),
        "serve.late": rng.choice(["grade", "hold"]),
        "serve.drop_folder": rng.choice(["", "lms-drop"]),
        "serve.refresh_seconds": rng.choice([30, 60, 120]),
        "serve.queue_size": rng.choice([50, 200]),
    }
    edits = [Edit(f"term.toml: {key} = {value!r}", lambda root, key=key, value=value: set_key(root, key, value))
             for key, value in keys.items()]
    edits.append(Edit("a header notebook on top of every assignment (course.header = \"headers/term.ipynb\")", _add_header))
    edits.append(Edit("due dates for some assignments", lambda root, seed=rng.random(): _due_dates(root, seed)))
    edits.append(Edit("an extension for a student", lambda root, seed=rng.random(): _extension(root, seed)))
    return edits


def _add_header(root: Path) -> None:
    import nbformat

    header = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("**This term's course.** Hand in before each due date.")])
    (root / "headers").mkdir(exist_ok=True)
    nbformat.write(header, root / "headers" / "term.ipynb")
    set_key(root, "course.header", "headers/term.ipynb")


def _due_dates(root: Path, seed: float) -> None:
    rng = random.Random(seed)

    def dates(data):
        for number, table in enumerate(data["assignments"]):
            if rng.random() < 0.6:
                table["due"] = f"2027-{2 + number % 10:02d}-{rng.randint(1, 28):02d} {rng.choice(['09:00', '17:00', '23:59'])}"
                own_dates_in_hours(data, table["name"])  # as the instructor moves a student's own date with it
    edit_term(root, dates)


def _extension(root: Path, seed: float) -> None:
    rng = random.Random(seed)
    assignment = rng.choice(_assignments(root))
    extension = {"student": rng.choice(["ada", "ben", "cy"]), "assignment": assignment}
    # a date of the student's own after every due date drawn here (months 2 to 11)
    extension.update({"hours": rng.choice([24, 48])} if rng.random() < 0.5 else {"due": "2027-12-31 12:00"})

    def extend(data):
        # an extension is of the assignment's due date: it needs one (docs/term-file.md)
        next(t for t in data["assignments"] if t["name"] == assignment).setdefault("due", "2027-05-14 17:00")
        data.setdefault("extensions", []).append(extension)
    edit_term(root, extend)


# ----------------------------------------------------------------------------- assignments


def _recipes(root: Path) -> list[Path]:
    return sorted((root / "example_class").glob("*.py"))


def _give_alternatives_the_part(root: Path, assignment: str, function: str, solution: str) -> None:
    """docs/adding-a-part.md, "The example class": a recipe that starts from the release and writes its student's own
    code (Ben) gets its version of the new part, in ``CELLS``."""
    from course_grader.trusted.course.example_class import load_recipes, solution_source

    recipes = load_recipes(root / "example_class")
    for path in _recipes(root):
        recipe = recipes.get(path.stem, {})
        if recipe.get("BASE") == "release" and any((recipe.get("CELLS") or {}).values()):
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"\n# The part added this term\nCELLS.setdefault({assignment!r}, {{}})[{function!r}] = "
                             f"{solution_source(solution)!r}\n")


def _lectures(root: Path) -> list[Path]:
    return sorted((root / "notebooks").glob("*.ipynb"))


def rename_assignment(root: Path, old: str, new: str) -> None:
    """docs/instructors.md, renaming: the term's name, the folders, the lectures' pointers, the example class."""
    edit_term(root, lambda data: [table.update(name=new) for table in data["assignments"] if table["name"] == old]
              + [table.update(assignment=new) for table in data.get("extensions", []) if table["assignment"] == old])
    for folder in ("source", "release"):
        if (root / folder / old).is_dir():
            (root / folder / old).rename(root / folder / new)
    for lecture in _lectures(root):
        text = lecture.read_text(encoding="utf-8")
        if f"assignments/{old}/" in text:
            lecture.write_text(text.replace(f"assignments/{old}/", f"assignments/{new}/"), encoding="utf-8")
    for recipe in _recipes(root):  # its keys and lists, and the reasons its FAILS entries expect
        text = recipe.read_text(encoding="utf-8")
        recipe.write_text(re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, text), encoding="utf-8")


def _without_string(source: str, name: str) -> str:
    """Python source without the dict entries keyed ``name`` and the list or tuple items equal to ``name``."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            spans += [(key, value) for key, value in zip(node.keys, node.values)
                      if isinstance(key, ast.Constant) and key.value == name]
        elif isinstance(node, (ast.List, ast.Tuple)):
            spans += [(item, item) for item in node.elts if isinstance(item, ast.Constant) and item.value == name]
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    cuts = []
    for first, last in spans:
        start = offsets[first.lineno - 1] + first.col_offset
        end = offsets[last.end_lineno - 1] + last.end_col_offset
        after = re.match(rb"\s*,", data[end:])
        cuts.append((start, end + (after.end() if after else 0)))
    for start, end in sorted(cuts, reverse=True):
        data = data[:start] + data[end:]
    return data.decode("utf-8")


def drop_assignment(root: Path, name: str) -> None:
    """docs/instructors.md, dropping: the term's block, the folders, the lecture's paragraph, the example class."""
    edit_term(root, lambda data: data.update(assignments=[t for t in data["assignments"] if t["name"] != name],
                                             extensions=[t for t in data.get("extensions", []) if t["assignment"] != name]))
    for folder in ("source", "release"):
        shutil.rmtree(root / folder / name, ignore_errors=True)
    for lecture in _lectures(root):
        notebook = _read(lecture)
        changed = False
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown" and f"assignments/{name}/" in _text(cell):
                paragraphs = [p for p in re.split(r"\n\s*\n", _text(cell)) if f"assignments/{name}/" not in p]
                cell["source"] = "\n\n".join(paragraphs) or "There is no graded assignment on this lecture this term."
                changed = True
        if changed:
            _write(lecture, notebook)
    for recipe in _recipes(root):  # its entries, and a FAILS entry of another assignment whose reason names it
        text = _without_string(recipe.read_text(encoding="utf-8"), name)
        recipe.write_text(_without_failure_naming(text, name), encoding="utf-8")


def _without_failure_naming(source: str, name: str) -> str:
    """Python source without the hand-ins whose ``FAILS`` reason names ``name`` (every entry of the assignment the
    reason is for: a hand-in expected to look like a dropped assignment is not made any more)."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["FAILS"]
                and isinstance(node.value, ast.Dict)):
            for key, value in zip(node.value.keys, node.value.values):
                if (isinstance(key, ast.Constant) and isinstance(value, ast.Constant)
                        and name in NAMED_IN_A_REASON.findall(str(value.value))):
                    return _without_failure_naming(_without_string(source, key.value), name)
    return source


def reorder_assignments(root: Path, seed: float) -> None:
    def shuffle(data):
        random.Random(seed).shuffle(data["assignments"])
    edit_term(root, shuffle)


def _copy_metadata(root: Path) -> dict:
    any_source = next(p for a in _assignments(root) for p in _notebooks(root, a))
    return {key: value for key, value in _read(any_source)["metadata"].items() if key in ("kernelspec", "language_info")}


def _part_blocks(root: Path, function: str) -> dict[str, str]:
    """The guide's part, its function renamed (``unit_normal`` -> ``function``)."""
    return {key: block.replace("unit_normal", function).replace("UNIT_NORMAL", function.upper())
            for key, block in _guide_blocks(root).items()}


def _part_cells(blocks: dict[str, str], function: str, number: int) -> list[dict]:
    text = re.sub(r"^## \d+\.", f"## {number}.", blocks["part-text"].strip(), flags=re.M)
    return [_cell("markdown", text, grade_id=f"{function}_text"),
            _cell("code", blocks["part-solution"].strip(), grade_id=function, solution=True, locked=False),
            _cell("code", blocks["part-test"].strip(), grade_id=f"test_{function}", grade=True, points=2)]


def add_part(root: Path, assignment: str, function: str) -> None:
    """docs/adding-a-part.md: three cells at the end of the assignment's notebook, its check in hidden_checks.py."""
    blocks = _part_blocks(root, function)
    path = _notebooks(root, assignment)[0]
    notebook = _read(path)
    headings = sum(1 for c in notebook["cells"] if c["cell_type"] == "markdown" and re.match(r"## \d+\.", _text(c)))
    notebook["cells"] += _part_cells(blocks, function, headings + 1)
    _write(path, notebook)
    with (root / "source" / assignment / "hidden_checks.py").open("a", encoding="utf-8") as checks:
        checks.write("\n\n" + blocks["part-check"])
    _give_alternatives_the_part(root, assignment, function, blocks["part-solution"])


def add_assignment(root: Path, name: str, function: str, position: int) -> None:
    """docs/instructors.md, a new assignment: a folder of source/ with its notebook and hidden_checks.py (from the
    template's imports and the guide's part), an [[assignments]] entry of the term."""
    blocks = _part_blocks(root, function)
    folder = root / "source" / name
    folder.mkdir()
    cells = [_cell("markdown", f"# {function.replace('_', ' ').capitalize()}\n\nAn assignment added this term.",
                   grade_id="intro"),
             _cell("code", "import numpy as np", grade_id="setup")]
    cells += _part_cells(blocks, function, 1)
    _write(folder / f"{function}.ipynb", {"cells": cells, "metadata": _copy_metadata(root), "nbformat": 4, "nbformat_minor": 5})
    (folder / "hidden_checks.py").write_text(f'"""Checks of assignment {name}: {function}."""\n\nimport numpy as np\n\n'
                                            "CHECKS = ()\n\n" + blocks["part-check"], encoding="utf-8")
    _give_alternatives_the_part(root, name, function, blocks["part-solution"])

    def insert(data):
        data["assignments"].insert(position, {"name": name})
    edit_term(root, insert)


def add_written_question(root: Path, assignment: str) -> None:
    """docs/instructors.md, a written answer: a markdown cell marked Manually graded answer, with its points and a
    model answer, under a heading that says its points."""
    path = _notebooks(root, assignment)[-1]
    notebook = _read(path)
    headings = sum(1 for c in notebook["cells"] if c["cell_type"] == "markdown" and re.match(r"## \d+\.", _text(c)))
    taken = {c["metadata"].get("nbgrader", {}).get("grade_id") for c in notebook["cells"]}
    grade_id = next(f"written_{n}" for n in range(1, 100) if f"written_{n}" not in taken)
    notebook["cells"] += [
        _cell("markdown", f"## {headings + 1}. In your own words (1 point, graded by hand)\n\n{WRITTEN_QUESTION}",
              grade_id=f"{grade_id}_text"),
        _cell("markdown", "### BEGIN SOLUTION\n**Model answer.** The failing case's call, then the docstring's promise it "
                          "breaks.\n\n**Rubric for the TA (1 point):** names a case and a promise.\n### END SOLUTION",
              grade_id=grade_id, grade=True, solution=True, locked=False, points=1),
    ]
    _write(path, notebook)


HEADING_POINTS = re.compile(r"^(#+ .*\()(\d+)( points?)")


def change_points(root: Path, assignment: str, seed: float) -> None:
    """docs/instructors.md, points: a graded cell's points, and its heading's "(N points)" kept the same."""
    rng = random.Random(seed)
    for path in _notebooks(root, assignment):
        notebook = _read(path)
        parts, current = [], None
        for cell in notebook["cells"]:
            meta = cell["metadata"].get("nbgrader", {})
            if cell["cell_type"] == "markdown" and _text(cell).lstrip().startswith("#") and not meta.get("grade"):
                current = [cell, []] if HEADING_POINTS.match(_text(cell).strip()) else None
                if current:
                    parts.append(current)
            elif meta.get("grade") and current is not None:
                current[1].append(cell)
        single = [(heading, graded[0]) for heading, graded in parts if len(graded) == 1]
        if single:
            heading, graded = rng.choice(single)
            points = int(HEADING_POINTS.match(_text(heading).strip()).group(2)) + rng.choice([1, 2])
            graded["metadata"]["nbgrader"]["points"] = points
            text = _text(heading)
            heading["source"] = HEADING_POINTS.sub(lambda m: f"{m.group(1)}{points} point{'s' if points != 1 else ''}",
                                                   text.strip(), count=1) + text[len(text.rstrip()):]
            _write(path, notebook)
            return


def edit_lecture(root: Path, seed: float) -> None:
    """docs/instructors.md, a lecture edited: a paragraph added (a markdown cell: the stored outputs stay right)."""
    rng = random.Random(seed)
    lecture = rng.choice(_lectures(root))
    notebook = _read(lecture)
    cell = {"cell_type": "markdown", "metadata": {}, "source": "**This term.** We spend a week on this."}
    if notebook.get("nbformat_minor", 0) >= 5:  # cells of nbformat 4.5 carry an id
        cell["id"] = f"term-{rng.getrandbits(32):08x}"
    notebook["cells"].insert(rng.randint(1, len(notebook["cells"]) - 1), cell)
    _write(lecture, notebook)


def assignment_edits(rng: random.Random, root: Path) -> list[Edit]:
    """Renaming, dropping, reordering and adding an assignment; a part, a written question, points, a lecture."""
    names = _assignments(root)
    with_checks = [a for a in names if (root / "source" / a / "hidden_checks.py").is_file()]
    renamed, dropped = rng.sample(names, 2)
    new_name = f"{rng.randint(7, 9):02d}_{rng.choice(['margins', 'vectors', 'revision'])}"
    edits = [
        Edit(f"assignment {renamed} renamed {renamed}_v2", lambda root: rename_assignment(root, renamed, f"{renamed}_v2")),
        Edit(f"assignment {dropped} dropped", lambda root: drop_assignment(root, dropped)),
        Edit("the assignments reordered", lambda root, seed=rng.random(): reorder_assignments(root, seed)),
        Edit(f"a new assignment {new_name} with an autograded part (the guide's, as length_normal)",
             lambda root, at=rng.randint(0, len(names) - 2): add_assignment(root, new_name, "length_normal", at)),
    ]
    kept = [a for a in with_checks if a not in (renamed, dropped)]
    if kept:
        target = rng.choice(kept)
        edits.append(Edit(f"a new part in {target} (docs/adding-a-part.md, as unit_normal)",
                          lambda root: add_part(root, target, "unit_normal")))
    written = rng.choice([a for a in names if a not in (renamed, dropped)])
    edits.append(Edit(f"a written question added to {written}", lambda root: add_written_question(root, written)))
    pointed = rng.choice([a for a in names if a not in (renamed, dropped)])
    edits.append(Edit(f"points changed in {pointed}", lambda root, seed=rng.random(): change_points(root, pointed, seed)))
    edits.append(Edit("a lecture edited (a paragraph added)", lambda root, seed=rng.random(): edit_lecture(root, seed)))
    return edits


def edits(seed: int, root: Path) -> list[Edit]:
    """A seeded draw of documented edits of the course at ``root``: some term keys, and some assignment edits.

    The renaming and dropping come before the rest (which names assignments by their name after them).
    """
    rng = random.Random(seed)
    term = term_edits(rng, root)
    structure = assignment_edits(rng, root)
    chosen_term = rng.sample(term, rng.randint(len(term) // 2, len(term)))
    chosen_structure = [edit for edit in structure if rng.random() < 0.7]
    first = [e for e in chosen_structure if " renamed " in e.says or e.says.endswith(" dropped")]
    return first + [e for e in chosen_structure if e not in first] + chosen_term


def finish(root: Path, python: Path = Path(sys.executable)) -> subprocess.CompletedProcess:
    """What an instructor runs after editing: `perceptron-course release`, then `students-readme`; a commit."""
    command = [str(python), "-m", "course_grader.trusted.cli"]
    done = subprocess.run([*command, "release", "--root", str(root)], capture_output=True, text=True, cwd=root)
    if done.returncode == 0:
        done = subprocess.run([*command, "students-readme", "--root", str(root)], capture_output=True, text=True, cwd=root)
    git = ["git", "-C", str(root), "-c", "user.name=adopter", "-c", "user.email=adopter@example.org"]
    if not (root / ".git").exists():
        subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "The next term's edits", "--allow-empty"], check=True)
    return done


def renumber_assignments(root: Path, before: list[str]) -> None:
    """docs/instructors.md, reordering: "Assignment N" in the lectures and the source notebooks, N the place in the term
    of the assignment that was N-th in ``before`` (the term before the edits: renamed ``<old>_v2``; one dropped since
    becomes "an assignment of the last term")."""
    now = _assignments(root)
    numbers = {}
    for number, old in enumerate(before, start=1):
        current = next((name for name in (old, f"{old}_v2") if name in now), None)
        numbers[number] = None if current is None else now.index(current) + 1

    def renumbered(match: re.Match) -> str:
        word, new = match[0].split()[0], numbers.get(int(match[1]))  # "Assignment" or "assignment"
        return f"{word} {new}" if new else f"{word[0]}n assignment of the last term"

    for path in [*_lectures(root), *(p for name in now for p in _notebooks(root, name))]:
        notebook = _read(path)
        changed = False
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                text = NUMBERED_ASSIGNMENT.sub(renumbered, _text(cell))
                changed |= text != _text(cell)
                cell["source"] = text
        if changed:
            _write(path, notebook)


def rehearse(seed: int, destination: Path) -> tuple[Path, list[Edit], subprocess.CompletedProcess]:
    """A scratch copy of this course with seed ``seed``'s edits made and released; returns it, the edits, the release."""
    root = scratch_copy(destination)
    before = _assignments(root)
    chosen = edits(seed, root)
    for edit in chosen:
        edit.apply(root)
    renumber_assignments(root, before)
    return root, chosen, finish(root)


if __name__ == "__main__":
    seed, destination = int(sys.argv[1]), Path(sys.argv[2])
    destination.mkdir(parents=True, exist_ok=True)
    root, chosen, released = rehearse(seed, destination)
    print(f"seed {seed}: {root}\n  " + "\n  ".join(edit.says for edit in chosen))
    print(released.stdout[-2000:], released.stderr[-2000:])
