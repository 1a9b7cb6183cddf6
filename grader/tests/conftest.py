"""Helpers shared by the grader's test files: trees and processes, and the grader's own fixture course."""

import atexit
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

# Fixtures are data, not tests: the fixture course's notebooks would otherwise run under nbval (--nbval-lax).
collect_ignore = ["fixtures"]

#: The folder of everything the grader's tests use: they read nothing outside it (``test_self_contained.py``).
GRADER = Path(__file__).resolve().parents[1]
#: The fixtures: the grader's own course, its library, the hostile and example classes.
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The fixture course's reference library (``fixtures/library/perceptron_fixture``, named in its ``term.toml``).
FIXTURE_LIBRARY = Path(__file__).resolve().parent / "fixtures" / "library"
LIBRARY_PACKAGE = "perceptron_fixture"
#: npm's installs (axe-core, configurable-http-proxy) that scripts/setup.sh makes from the repository's package.json:
#: tools, not a course; the one path outside ``grader/`` the grader's tests use.
NODE_MODULES = GRADER.parent / "node_modules"
#: The checkout that holds ``grader/`` and the virtual environment its packages are installed from (editable): a
#: hub's users must be able to enter it to run the grader; no test reads a file of it.
CHECKOUT = GRADER.parent

# The library is importable here, in every subprocess a test starts (the CLI, nbgrader, the service), and so by the
# sandbox's view builder, which finds it with importlib.util.find_spec.
if str(FIXTURE_LIBRARY) not in sys.path:
    sys.path.insert(0, str(FIXTURE_LIBRARY))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(FIXTURE_LIBRARY), *(entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                             if entry and entry != str(FIXTURE_LIBRARY))])

# ``--dist loadgroup``: a file is one unit of work unless its tests declare groups (course_grader/testing/xdist_units.py).
from course_grader.testing.xdist_units import pytest_xdist_make_scheduler  # noqa: E402,F401 - a hook: pytest finds it here


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


# ------------------------------------------------------------------ the grader's own course

FIXTURE_COURSE = Path(__file__).resolve().parent / "fixtures" / "course"


@functools.lru_cache(maxsize=None)
def fixture_course() -> Path:
    """The root of the grader's own small course, built and released once per test process (in a temporary folder).

    ``fixtures/course/``: its ``source/`` (notebooks and hidden checks), a lecture in ``notebooks/``, ``example_class/``, its own ``term.toml``
    and ``nbgrader_config.py`` (the grader's wiring, which reads the term file); its library is
    ``fixtures/library/perceptron_fixture``.
    Tests copy it (``copy_course(fixture_course(), ...)``) before they grade anything.
    """
    from course_grader.trusted.course.course import Course
    from course_grader.trusted.pipeline import release

    scratch = Path(tempfile.mkdtemp(prefix="perceptron-fixture-course-"))
    atexit.register(shutil.rmtree, scratch, True)
    root = scratch / "course"
    for folder in ("source", "notebooks", "example_class"):
        shutil.copytree(FIXTURE_COURSE / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(FIXTURE_COURSE / "term.toml", root / "term.toml")  # its own term: id, limits, policy, assignments
    shutil.copy2(FIXTURE_COURSE / "nbgrader_config.py", root / "nbgrader_config.py")
    release(Course.open(root))
    return root


def expected_example_grades(course, recipes_folder: Path | None = None):
    """What each example student of the fixture course should get (``example_class.expected_example_grades``)."""
    from course_grader.trusted.course.example_class import expected_example_grades as expected

    return expected(course, recipes_folder or Path(course.root) / "example_class")
