"""Helpers shared by the test files."""

import atexit
import functools
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Fixtures are data, not tests: the fixture course's notebooks would otherwise run under nbval (--nbval-lax).
collect_ignore = ["fixtures"]


def tree_digest(folder: Path) -> str:
    """A hash of every path and file content under ``folder`` (to prove nothing changed)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def tree_state(folder: Path, *, exclude: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Mode and content hash (or link target) of every entry under ``folder``, never following a link.

    ``exclude`` names top-level entries left out (the grader's own output). Comparing two
    states shows exactly which path changed, and how.
    """
    state = {}
    pending = [folder]  # an explicit stack: a hostile submission nests folders deeper than Python recurses
    while pending:
        here = pending.pop()
        with os.scandir(here) as listing:
            entries = list(listing)
        for entry in entries:
            if here == folder and entry.name in exclude:
                continue
            path = Path(entry.path)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                content = "-> " + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                content = stat.filemode(info.st_mode)[0]
                if stat.S_ISDIR(info.st_mode):
                    pending.append(path)
            state[str(path.relative_to(folder))] = (stat.filemode(info.st_mode), content)
    return state


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, queue = [], [pid]
    while queue:
        found.append(queue.pop())
        queue += _children(found[-1])
    return found


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def sandboxes_left() -> list[int]:
    """Grading kernels of this process still running (a kernel not shut down).

    Its zygotes stay, warm, between batches: what must be gone is every kernel they forked
    (each with the zygote's child that keeps it), and any bubblewrap that is not a zygote's.
    """
    found = []
    for sandbox in _children(os.getpid()):
        if b"bwrap" not in _command_line(sandbox):
            continue
        zygotes = [pid for pid in _children(sandbox) if b"in_sandbox.zygote" in _command_line(pid)]
        found += [kernel for zygote in zygotes for kernel in _children(zygote)] if zygotes else [sandbox]
    return found


# ------------------------------------------------------------------ this course, as its tests read it
# Tests of this course's content (tests/course/, and the end-to-end runs of the example class) take what they
# expect from here: the course on disk, its term settings, and what the example class's recipes say each
# student earns. Nothing here names an assignment, a cell or a score: an instructor's edits of source/,
# example_class/ or the settings change the expectations with them.

REPO = Path(__file__).resolve().parents[1]


def this_course():
    """The course of this repository (``source/``, ``release/``, its settings), as the grader opens it."""
    from course_grader.trusted.course.course import Course

    return Course.open(REPO)


@dataclass(frozen=True)
class TermSettings:
    """What an instructor changes each term, as the grader reads it (DESIGN section 12)."""

    course_id: str
    late_policy: str  # "none" | "zero" | "per_day"
    cell_seconds: float
    header: str  # a notebook put on top of every released notebook, relative to the course root ("" for none)


def term_settings(root: Path = REPO) -> TermSettings:
    """The term settings of the course at ``root``.

    From the term file (``term.toml``, read by ``grader/course_grader/trusted/course/term.py``'s ``load_term``) where
    the course has one; otherwise from ``nbgrader_config.py``, through the grader's own loader.
    """
    from course_grader.trusted.course.course import Course, load_config

    if (root / "term.toml").is_file():
        from course_grader.trusted.course.term import load_term

        term = load_term(root)
        return TermSettings(course_id=term.course.id, late_policy=term.late.policy, cell_seconds=float(term.limits.cell_seconds),
                            header=term.course.header)
    config = load_config(Course.open(root))
    return TermSettings(course_id=config.CourseDirectory.get("course_id", ""),
                        late_policy=config.LateSubmissionPlugin.get("penalty_method", "none"),
                        cell_seconds=float(config.Execute.get("timeout", 30)),
                        header=config.IncludeHeaderFooter.get("header", ""))


def course_files(root: Path = REPO) -> list[str]:
    """What a copy of the course needs to release and grade, relative to ``root``: the configuration, the term file,
    source, release, and the header notebook (the term's, or one the configuration names), if any."""
    from course_grader.trusted.course.course import Course
    from course_grader.trusted.course.release_check import header_and_footer

    course = Course.open(root)
    header = course.term().course.header if (root / "term.toml").is_file() else ""
    names = ["nbgrader_config.py", "term.toml", "source", "release", *([header] if header else []),
             *(str(path) for path in header_and_footer(course))]
    return [name for name in names if (root / name).exists()]


def copy_course_to(destination: Path, root: Path = REPO, names: list[str] | None = None) -> Path:
    """Copy ``course_files(root)`` (or ``names``) into ``destination``; returns it."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in names if names is not None else course_files(root):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (root / name).is_dir():
            shutil.copytree(root / name, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        else:
            shutil.copy2(root / name, target)
    return destination


def solutions_by_test_cell(course, assignment: str) -> dict[str, list[str]]:
    """``grade_id`` of every autograded test cell of ``assignment``, with the solution code cells it tests.

    The course's convention: a test cell tests the solution code cells between it and the previous test cell.
    """
    import nbformat

    tested: dict[str, list[str]] = {}
    for name in course.notebook_names(assignment):
        pending: list[str] = []
        for cell in nbformat.read(course.source / assignment / f"{name}.ipynb", as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
                pending.append(meta["grade_id"])
            elif cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                tested[meta["grade_id"]], pending = pending, []
    return tested


@dataclass(frozen=True)
class ExpectedGrade:
    """What one example student should get for one assignment."""

    cell_scores: dict[str, float]  # every graded cell: its points, or 0 where lost
    failed_reason: str = ""  # non-empty: the hand-in is reported failed, with this in its reason

    @property
    def score(self) -> float:
        return sum(self.cell_scores.values())


def expected_example_grades(course, recipes_folder: Path = REPO / "example_class") -> dict[tuple[str, str], ExpectedGrade]:
    """What each example student should get, by ``(student, assignment)``, from the recipes and the source's points.

    A recipe (``example_class/<student>.py``, see ``grader/course_grader/trusted/course/example_class.py``) says what
    it expects with ``LOSES`` (``{assignment: [test cell grade_id, ...]}``: the cells its bugs fail) and ``FAILS``
    (``{assignment: reason}``: hand-ins reported as failed). Besides those, a student whose ``BASE`` is the release
    loses every test cell of a function it left a stub; written answers score 0 until a TA grades them; every other
    graded cell earns its points. Entries for an assignment the course no longer has are ignored; an entry naming a
    cell the assignment does not have is a stale recipe, and fails here with the file and cell named.
    """
    from course_grader.trusted.course.example_class import load_recipes

    expected = {}
    for student, recipe in load_recipes(recipes_folder).items():
        for assignment in [a for a in recipe.get("ASSIGNMENTS", course.assignments()) if a in course.assignments()]:
            points = course.graded_cells(assignment)
            if assignment in recipe.get("FAILS", {}):
                expected[student, assignment] = ExpectedGrade({cell: 0.0 for cell in points}, recipe["FAILS"][assignment])
                continue
            lost = set(recipe.get("LOSES", {}).get(assignment, ()))
            stale = lost - set(points)
            assert not stale, (f"example_class/{student}.py: LOSES names {sorted(stale)} in {assignment}, which "
                               f"source/{assignment} has no graded cell of: update the recipe")
            if recipe["BASE"] == "release":
                written = recipe.get("CELLS", {}).get(assignment, {})
                lost |= {test for test, solutions in solutions_by_test_cell(course, assignment).items()
                         if any(solution not in written for solution in solutions)}
            lost |= set(course.manually_graded_cells(assignment))
            expected[student, assignment] = ExpectedGrade({cell: 0.0 if cell in lost else value for cell, value in points.items()})
    return expected


# ------------------------------------------------------------------ the grader's own course (tests/grader/)

FIXTURE_COURSE = Path(__file__).resolve().parent / "fixtures" / "course"


@functools.lru_cache(maxsize=None)
def fixture_course() -> Path:
    """The root of the grader's own small course, built and released once per test process (in a temporary folder).

    ``tests/fixtures/course/``: its ``source/`` (notebooks and hidden checks), ``example_class/`` and its own
    ``term.toml``, with this repository's ``nbgrader_config.py`` (the grader's wiring, which reads the term file).
    Tests copy it (``copy_course(fixture_course(), ...)``) before they grade anything.
    """
    from course_grader.trusted.course.course import Course
    from course_grader.trusted.pipeline import release

    scratch = Path(tempfile.mkdtemp(prefix="perceptron-fixture-course-"))
    atexit.register(shutil.rmtree, scratch, True)
    root = scratch / "course"
    for folder in ("source", "example_class"):
        shutil.copytree(FIXTURE_COURSE / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(FIXTURE_COURSE / "term.toml", root / "term.toml")  # its own term: id, limits, policy, assignments
    shutil.copy2(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    release(Course.open(root))
    return root
