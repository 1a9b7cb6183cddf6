"""Replay records: for every graded submission, what its grade was decided from, so that it can be replayed.

``perceptron-course grade`` writes one record per graded submission,
``reports/records/<student>/<assignment>.json``, beside the ledger (``reports/grading.json``),
on the TA's side: everything in it is measured or computed by the grader, none of it read from
what the student's code printed or wrote. A record holds:

- ``submission``: the ledger's hash of the submitted files (``ledger.fingerprint``);
- ``course_commit``: the git commit of the course folder (``"not a git checkout"`` otherwise),
  with a note when ``source/`` (the hidden checks beside each assignment included) or ``nbgrader_config.py``
  had uncommitted changes;
- ``grader``: this package's version and a hash of its source files (the checks' engine, the reference
  library, the sandbox, the harness), which tells apart two checkouts of one version;
- ``secret_id`` and ``case_set``: the ids of the course secret and of every case the checks drew,
  never the secret itself (``case_sets.py``);
- ``environment``: Python, the platform, and the versions of the packages grading depends on;
- ``isolation``, ``resources`` (wall time, the grader's CPU time, a lower bound of the grading kernels' CPU time: ``resources.py``) and
  ``limits_hit`` (as ``ResilientExecute`` recorded them);
- ``parts``: per graded cell (``notebook/grade_id``) its automatic score and maximum, and for
  each check it declares the ids of its case set and of its checker; a written answer is
  marked ``"graded_by": "hand"`` (a TA's score is not replayed).

``perceptron-course explain`` (``explain.py``) regrades a submission and compares with its record.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from ..judging.case_sets import combined_case_set_id, recorded_case_sets, secret_id
from ..judging.grading_metadata import GRADING_METADATA, limits_hit
from ..course.course import Course
from ..course.files import name_problem, real_folder
from .outcome import Isolation, Outcome

RECORDS_FOLDER = "records"
RECORD_FORMAT = 1
NOT_A_CHECKOUT = "not a git checkout"
#: The distributions whose versions can change a grade (the kernel runs in this same environment).
ENVIRONMENT_PACKAGES = ("course-grader", "numpy", "scipy", "scikit-learn", "matplotlib", "nbgrader", "nbclient",
                        "nbconvert", "nbformat", "ipykernel", "ipython", "jupyter_client", "pyzmq")
#: The package whose source the grader's hash covers (the checks' engine, the sandbox, the harness); the course's
#: library and hidden checks are the course's, recorded with its commit.
PACKAGE_FOLDER = Path(__file__).resolve().parents[2]
GIT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class GradingContext:
    """What is the same for every submission of one grading run (computed once per run)."""

    course_commit: str
    grader: dict[str, str]
    environment: dict[str, str]
    secret_id: str

    @classmethod
    def now(cls, course: Course, secret: bytes) -> "GradingContext":
        return cls(course_commit(course.root), grader_version(), environment(), secret_id(secret))


# ------------------------------------------------------------------ what is the same for a whole run


def course_commit(root: Path) -> str:
    """The git commit of the course folder, e.g. ``"3f2a…"`` or ``"3f2a… (with uncommitted changes in source/, nbgrader_config.py or term.toml)"``.

    ``"not a git checkout"`` (with why, when git says) if the folder is not tracked by git,
    git is missing or fails: this never raises.
    """
    git = shutil.which("git")
    if git is None:
        return f"{NOT_A_CHECKOUT} (git is not installed)"

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([git, "-C", str(root), *arguments], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})

    try:
        head = run("rev-parse", "--verify", "HEAD")
        if head.returncode != 0:  # not a repository, or one git will not read here (another owner's: "dubious ownership")
            why = (head.stderr.strip().splitlines() or [""])[0].removeprefix("fatal: ")[:200]
            why = "a repository without a commit" if why == "Needed a single revision" else why
            return NOT_A_CHECKOUT if not why or "not a git repository" in why else f"{NOT_A_CHECKOUT} (git: {why})"
        tracked = run("ls-files", "--error-unmatch", "--", "nbgrader_config.py")
        if tracked.returncode != 0:  # inside some repository, but the course itself is not in it (a demo's work/)
            return NOT_A_CHECKOUT
        changes = run("status", "--porcelain", "--untracked-files=no", "--", "source", "nbgrader_config.py", "term.toml")
    except (OSError, subprocess.SubprocessError):
        return f"{NOT_A_CHECKOUT} (git failed)"
    commit = head.stdout.strip()
    return commit + (" (with uncommitted changes in source/, nbgrader_config.py or term.toml)" if changes.stdout.strip() else "")


@functools.lru_cache(maxsize=1)
def grader_version() -> dict[str, str]:
    """This package's version and a hash of every one of its Python source files (``source``)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_FOLDER.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(PACKAGE_FOLDER)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return {"version": _version("course-grader"), "source": digest.hexdigest()[:24]}


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, str]:
    """Python, the platform, bubblewrap and the versions of ``ENVIRONMENT_PACKAGES``."""
    found = {"python": f"{platform.python_implementation()} {platform.python_version()}",
             "platform": f"{platform.system()} {platform.machine()}", "bubblewrap": _bubblewrap_version()}
    found.update({name: _version(name) for name in ENVIRONMENT_PACKAGES if name != "course-grader"})
    return found


def _bubblewrap_version() -> str:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "not installed"
    try:
        answer = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=GIT_TIMEOUT_SECONDS,
                                check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return answer.stdout.strip().removeprefix("bubblewrap ") or "unknown"


# ------------------------------------------------------------------ one submission


def build_record(context: GradingContext, area: Path, outcome: Outcome, submitted: str, isolation: Isolation) -> dict:
    """The record of a submission just graded in the work area ``area`` (its own course, as ``batch`` makes it).

    Parameters
    ----------
    area : the job's work area: its gradebook and ``autograded/`` hold this grading's results
    submitted : the ledger's hash of the submitted files (``Fingerprint.submitted``)
    """
    from nbgrader.api import Gradebook

    from .gradebook_rows import grades_and_comments

    student, assignment = outcome.student, outcome.assignment
    graded = area / "autograded" / student / assignment
    written = set(Course(area).manually_graded_cells(assignment))  # answers a TA scores by hand
    parts: dict[str, dict] = {}
    limits: list[str] = []
    case_sets: dict[str, str] = {}
    with Gradebook(f"sqlite:///{area / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(assignment, student)
        for notebook in sorted(submission.notebooks, key=lambda nb: nb.name):
            ran = _read_notebook(graded / f"{notebook.name}.ipynb")
            limits += limits_hit(ran)
            recorded = recorded_case_sets(ran.get("metadata", {}).get(GRADING_METADATA))
            case_sets.update({function: ids["case_set"] for function, ids in recorded.items()})
            declared = _declared_functions(ran)
            for name, grade in sorted(grades_and_comments(gradebook, notebook)[0].items()):
                by_hand = name in written
                parts[f"{notebook.name}/{name}"] = {
                    "graded_by": "hand" if by_hand else "tests",
                    "score": None if by_hand else float(grade.auto_score or 0.0),
                    "max_score": float(grade.max_score),
                    "checks": {} if by_hand else {function: recorded.get(function, {"case_set": "", "checker": ""})
                                                  for function in declared.get(name, [])},
                }
    return {
        "format": RECORD_FORMAT,
        "student": student,
        "assignment": assignment,
        "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "submission": submitted,
        "course_commit": context.course_commit,
        "grader": dict(context.grader),
        "secret_id": context.secret_id,
        "case_set": combined_case_set_id(context.secret_id, case_sets),
        "environment": dict(context.environment),
        "isolation": asdict(isolation),
        "resources": dict(outcome.resources),
        "limits_hit": list(dict.fromkeys(limits)),
        "parts": parts,
    }


def _read_notebook(path: Path) -> dict:
    """A graded notebook of the work area as plain JSON (``{}`` if it is not there or does not parse)."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return notebook if isinstance(notebook, dict) else {}


def _declared_functions(notebook: dict) -> dict[str, list[str]]:
    """``grade_id`` -> the functions its hidden-test region checks, for each test cell of a graded notebook."""
    from ..judging.verdicts import DeclarationError, declared_names, hidden_region

    found: dict[str, list[str]] = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        try:
            found[str(meta.get("grade_id"))] = [name for name, _, _ in declared_names(hidden_region(cell.get("source", "")))]
        except DeclarationError:
            found[str(meta.get("grade_id"))] = []
    return found


# ------------------------------------------------------------------ where records are kept


def record_path(course: Course, student: str, assignment: str) -> Path | None:
    """``reports/records/<student>/<assignment>.json``; ``None`` for a name that is not a plain file name."""
    if name_problem(student, "student") or name_problem(assignment, "assignment"):
        return None
    return course.reports / RECORDS_FOLDER / student / f"{assignment}.json"


def write_record(course: Course, record: dict) -> None:
    """Write a record whole (a new file renamed over the old), never through a link.

    Raises
    ------
    OSError, files.UnsafeFileError
        If it cannot be written; the caller decides whether that stops anything.
    """
    path = record_path(course, record["student"], record["assignment"])
    if path is None:
        return
    folder = real_folder(course.root, path.parent.relative_to(course.root))
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, prefix=".record-", suffix=".tmp", delete=False) as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    os.replace(handle.name, path)


def remove_record(course: Course, student: str, assignment: str) -> None:
    """Remove the record of a submission whose last grading failed (it has no grade to replay)."""
    path = record_path(course, student, assignment)
    if path is not None and real_folder(course.root, path.parent.relative_to(course.root), create=False) is not None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def read_record(course: Course, student: str, assignment: str) -> dict | None:
    """The record of a submission, or ``None`` if there is none (or it is not one: a damaged or hand-edited file)."""
    path = record_path(course, student, assignment)
    if path is None or path.is_symlink():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("parts"), dict):
        return None
    return record


def keep_record(course: Course, context: GradingContext | None, area: Path, outcome: Outcome, submitted: str,
                isolation: Isolation) -> None:
    """Write (graded) or remove (failed) a submission's record; a problem is one warning line, never a failed batch."""
    from .outcome import GRADED
    from ..course.safe_text import quoted

    try:
        if outcome.status == GRADED and context is not None:
            write_record(course, build_record(context, area, outcome, submitted, isolation))
        else:
            remove_record(course, outcome.student, outcome.assignment)
    except Exception as error:  # noqa: BLE001 - the grade is kept; only its replay record is missing
        print(f"warning: no replay record for {quoted(outcome.student, 80)}/{quoted(outcome.assignment, 80)} "
              f"({type(error).__name__}: {quoted(str(error), 200)})", file=sys.stderr)

