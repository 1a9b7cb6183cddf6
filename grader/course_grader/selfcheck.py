"""Check an assignment before handing it in: ``perceptron-selfcheck assignment.ipynb``.

First applies the grader's intake (``course_grader.intake_rules``: the file's size, which
cells were deleted or edited, the imports the grading kernel refuses) and says what the grader
would repair or refuse, in the grader's words. Then runs the notebook the grader would run
(stored outputs dropped, deleted cells put back, the reference library's graded modules and
``sklearn.linear_model`` not importable) top to bottom in a fresh kernel, as the grader does
(same cell order, same per-cell timeout, every cell run even after an error), and prints on one
screen which parts are not implemented yet, which visible tests fail (with their message) and
which pass.
Only the visible tests in the notebook run: the hidden tests that decide the grade are not
here, so a pass is a good sign, not a score. Needs nbclient and ipykernel, not nbgrader.

Written answers (graded by hand) are listed as written or still to write. The assignment's due
date, when the course's bundle carries one (``_course_term.json``, written by ``perceptron-course
bundle`` from the course's term file, with the per-cell limit), is shown, with a warning once it has passed (an extension is per
student and is not in the bundle: the message says so). Also
``python -m course_grader.selfcheck assignment.ipynb``. Exit status: 0 when every visible
test passes and every answer is written, 1 otherwise, 2 when the file cannot be checked.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from . import intake_rules

#: What the bundle carries of the course's term file (``perceptron-course bundle`` writes it into the student
#: package): the course id, the per-cell time limit, the memory cap and each assignment's due date (UTC).
SETTINGS_FILE = "_course_term.json"


def invoked_as(default: str) -> str:
    """The name of the console script this process was started as (a course names its own), else ``default``."""
    name = Path(sys.argv[0]).name
    return default if name in ("", "-c") or name.endswith(".py") else name


#: What the self-check's messages and ``--help`` call it (``perceptron-selfcheck`` in this course).
COMMAND = invoked_as("course-selfcheck")
# Set in the kernel's environment: a cell that calls the self-check does not start another one.
NESTED_MARKER = "COURSE_GRADER_SELFCHECK"
MESSAGE_WIDTH = 100

Status = Literal["passes", "fails", "not implemented", "not run", "to write", "written"]
TEST_STATUSES: tuple[Status, ...] = ("passes", "fails", "not implemented", "not run")
# What nbgrader leaves in a written answer's cell (``ClearSolutions.text_stub``).
ANSWER_PLACEHOLDER = "YOUR ANSWER HERE"


class SelfCheckError(Exception):
    """The file cannot be checked (missing, not a notebook)."""


@dataclass(frozen=True)
class PartResult:
    """The outcome of one graded cell: a test, or a written answer graded by hand.

    Attributes
    ----------
    title : str
        The heading of the part the test belongs to (else the cell's grade id).
    grade_id : str
        The test cell's nbgrader id (``test_augment``), as the grader's feedback names it.
    status : {"passes", "fails", "not implemented", "not run", "to write", "written"}
        The last two are for written answers.
    message : str
        For a failure, the error's name and message; empty for a pass.
    cell : int
        The cell's place in the notebook (from 1): the report lists tests and written answers in this order.
    """

    title: str
    grade_id: str
    status: Status
    message: str = ""
    cell: int = 0


@dataclass(frozen=True)
class SelfCheckReport:
    """What one run of a notebook found.

    Attributes
    ----------
    notebook : Path
    parts : list of PartResult
        One per graded test cell, in notebook order.
    answers : list of PartResult
        One per written answer (graded by hand), in notebook order.
    other_errors : list of str
        Errors raised by cells that are not tests (setup cells, your own code cells).
    seconds : float
        Wall time of the run.
    """

    notebook: Path
    parts: list[PartResult]
    answers: list[PartResult]
    other_errors: list[str]
    seconds: float
    intake_notes: tuple[str, ...] = ()
    refused: str = ""
    due_notice: str = ""  #: the assignment's due date, or the warning that it has passed (``due_date_notice``)

    @property
    def ready(self) -> bool:
        """Whether the grader takes the file, every visible test passes, every answer is written and no other cell raises."""
        return (
            bool(self.parts)
            and not self.refused
            and not self.other_errors
            and all(part.status == "passes" for part in self.parts)
            and all(answer.status == "written" for answer in self.answers)
        )


def which_assignment(notebook: dict, path: Path, assignments: dict[str, intake_rules.Assignment]) -> intake_rules.Assignment | None:
    """The assignment a notebook belongs to: by its own cells, else by its folder's name (``01_geometry/``)."""
    owners = intake_rules.owners_of(intake_rules.grade_ids(notebook), assignments)
    if len(owners) == 1:
        return assignments[owners[0]]
    return assignments.get(path.parent.name)


def take_in(path: Path) -> tuple[Any, intake_rules.Assignment | None, list[str], str]:
    """The notebook the grader would run from the file at ``path``, its assignment, the intake's notes, and its refusal.

    The rules are the grader's (``intake_rules.examine``), applied to this one file as if it
    were handed in alone.

    Raises
    ------
    SelfCheckError
        If the file is missing or is not a notebook at all.
    """
    import nbformat

    if not path.is_file():
        raise SelfCheckError(f"{path}: no such file")
    with path.open("rb") as handle:
        data = handle.read(intake_rules.MAX_FILE_BYTES + 1)
    try:
        parsed = intake_rules.parse_notebook(data, path.name)
    except intake_rules.IntakeError as error:
        if len(data) > intake_rules.MAX_FILE_BYTES:
            return None, None, [], str(error)
        raise SelfCheckError(f"{path}: not a readable notebook ({error})") from None
    assignments = released_assignments(path.parent)
    assignment = which_assignment(parsed, path, assignments)
    if assignment is None:  # not one of the course's notebooks: the file's rules only
        intake_rules.drop_outputs(parsed)
        refused = intake_rules.size_problem(parsed, path.name)
        intake = intake_rules.Intake(None if refused else parsed, path.name, [], refused)
    else:
        intake = intake_rules.examine({path.name: data}, assignment, assignments)
    if intake.refused:
        return None, assignment, intake.notes, intake.refused
    try:
        notebook = nbformat.from_dict(intake.notebook)
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - nbformat's many ways of saying "not a notebook"
        raise SelfCheckError(f"{path}: not a readable notebook ({type(error).__name__}: {error})") from error
    return notebook, assignment, intake.notes, ""


def course_root_above(start: Path | None) -> Path | None:
    """The course checkout holding ``start`` (default: the current folder): the nearest folder with ``term.toml`` and
    ``release/``; ``None`` in a student's install, where the bundle carries what the self-check needs."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents)
                 if (folder / "term.toml").is_file() and (folder / "release").is_dir()), None)


def course_settings(start: Path | None = None) -> dict[str, Any]:
    """What the self-check knows of the course's term: the bundle's ``_course_term.json`` in a student's install,
    else (a course checkout holding ``start``) the course's ``term.toml``; ``{}`` when neither is there."""
    bundled = Path(__file__).with_name(SETTINGS_FILE)
    try:
        settings = json.loads(bundled.read_text(encoding="utf-8"))
        return settings if isinstance(settings, dict) else {}
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return {}
    root = course_root_above(start)
    if root is None:
        return {}
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10: the grader's dependencies have tomli
            import tomli as tomllib
        data = tomllib.loads((root / "term.toml").read_text(encoding="utf-8"))
        return {"course_id": data["course"]["id"], "cell_seconds": data["limits"]["cell_seconds"],
                "memory_mib": data["limits"]["memory_mib"], "due_dates": {}}
    except (OSError, ImportError, ValueError, KeyError, TypeError):
        return {}


def released_assignments(start: Path) -> dict[str, intake_rules.Assignment]:
    """The course's assignments as released, with their import rules: the bundle's copy in a student's install, else
    the ``release/`` of the course checkout holding ``start`` (and its hidden checks' grants); ``{}`` without either."""
    bundled = Path(intake_rules.__file__).with_name(intake_rules.MANIFEST_FILE)
    try:
        return intake_rules.load_manifest(bundled.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    root = course_root_above(start)
    if root is None:
        return {}
    rules_of = checkout_import_rules()
    return intake_rules.released_assignments(root / "release", None if rules_of is None else lambda name: rules_of(root, name))


#: The entry-point group where the grader installed beside the self-check offers the import rules of a course
#: checkout's assignments, hidden checks' grants included (``grader/pyproject.toml``). The self-check names no module
#: of the grader's trusted side: a student's install has the self-check alone, and no entry point of this group.
CHECKOUT_RULES_GROUP = "course_grader.checkout_import_rules"


def checkout_import_rules() -> Callable[[Path, str], intake_rules.ImportRules] | None:
    """``import_rules(course_root, assignment)`` of the grader installed here, or ``None`` in a student's install."""
    from importlib.metadata import entry_points

    for entry in entry_points(group=CHECKOUT_RULES_GROUP):
        return entry.load()
    return None


def cell_timeout(start: Path | None = None) -> int:
    """The grader's per-cell limit in seconds, as the course's term file sets it.

    Raises
    ------
    SelfCheckError
        If this install carries no term (neither a bundle's settings nor a course checkout's term.toml).
    """
    seconds = course_settings(start).get("cell_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 1:
        raise SelfCheckError("this install does not say the grader's per-cell time limit (no _course_term.json from the "
                             "course's bundle); give it with --timeout SECONDS, or install the package of your course's bundle")
    return seconds


def due_dates(start: Path | None = None) -> dict[str, dt.datetime]:
    """Each assignment's due date as the bundle carries it (timezone-aware); empty when it carries none.

    Read from the bundle's ``_course_term.json`` (``course_settings``); an entry that is not a date with
    a timezone is left out.
    """
    carried = course_settings(start).get("due_dates")
    dates = {}
    for assignment, text in (carried.items() if isinstance(carried, dict) else ()):
        try:
            due = dt.datetime.fromisoformat(str(text))
        except ValueError:
            continue
        if due.tzinfo is not None:
            dates[str(assignment)] = due
    return dates


def duration_text(seconds: float) -> str:
    """``2 d 3 h``, ``5 h 10 min`` or ``12 min``."""
    minutes = int(seconds // 60)
    days, hours, minutes = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} d {hours} h"
    return f"{hours} h {minutes} min" if hours else f"{max(minutes, 1)} min"


def due_date_notice(assignment: str | None, now: dt.datetime | None = None,
                    dates: dict[str, dt.datetime] | None = None) -> str:
    """The line on ``assignment``'s due date at ``now`` (timezone-aware; default: the clock), or ``""`` if none is known.

    ``dates`` defaults to what the bundle carries (``due_dates``). Once the date has passed, the
    line starts with ``WARNING`` and says that an extension, given per student, is not known here.
    """
    due = (due_dates() if dates is None else dates).get(assignment or "")
    if due is None:
        return ""
    now = now if now is not None else dt.datetime.now(dt.timezone.utc)
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    when = due.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    local = due.astimezone()  # this computer's zone
    if local.utcoffset() != dt.timedelta(0):
        when += f" ({local.strftime('%Y-%m-%d %H:%M')} on this computer's clock)"
    left = (due - now).total_seconds()
    if left > 0:
        return (f"Due date of {assignment}: {when}, in {duration_text(left)} "
                "(an extension your TA gave you is not known here).")
    return (f"WARNING: the due date of {assignment}, {when}, passed {duration_text(-left)} ago: a hand-in now is late, "
            "unless your TA gave you an extension (extensions are per student and not known to this check).")


def grading_view_code(rules: intake_rules.ImportRules) -> str:
    """Code run first in the self-check's kernel: the graded modules of the course's library and the blocked packages
    become unusable, as in the grading kernel, with the grading kernel's message."""
    extras = {module: sorted(names) for module, names in rules.grants.items()}
    return f"""
def _grading_view(library={rules.package!r}, student_modules={sorted(rules.student_modules)!r}, extras={extras!r},
                  blocked={list(rules.blocked)!r}):
    import importlib, pkgutil, sys, types

    class Hidden(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__") or name in self.__dict__:
                raise AttributeError(name)
            raise ImportError(f"{{self.__name__}} is not available while grading: implement it yourself")

    package = importlib.import_module(library) if library else types.ModuleType("no library")
    for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
        if info.name in student_modules or info.name.startswith("_"):
            continue
        hidden = Hidden(f"{{library}}.{{info.name}}")
        for name in extras.get(info.name, []):
            setattr(hidden, name, getattr(importlib.import_module(f"{{library}}.{{info.name}}"), name))
        sys.modules[hidden.__name__] = hidden
        setattr(package, info.name, hidden)
    for name in list(getattr(package, "__all__", [])):
        if name not in student_modules and not isinstance(getattr(package, name, None), types.ModuleType):
            delattr(package, name)
    for dotted in blocked:
        sys.modules[dotted] = Hidden(dotted)


_grading_view()
del _grading_view
"""


def execute_notebook(notebook: Any, folder: Path, timeout: int,
                     rules: intake_rules.ImportRules | None = None) -> str | None:
    """Run every cell of ``notebook`` in place in a fresh kernel started in ``folder``, as the grading kernel would.

    A first cell, removed again afterwards, makes the imports the grading kernel refuses fail
    (``grading_view_code``).

    Returns
    -------
    str or None
        Why the run stopped early (the kernel died), else None. Cells after that have no outputs.

    Raises
    ------
    SelfCheckError
        If the notebook's kernel is not installed.
    """
    import nbformat

    for cell in notebook.cells:  # outputs saved from the student's session must not count as results
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    view = nbformat.v4.new_code_cell(grading_view_code(rules or intake_rules.ImportRules()))
    notebook.cells.insert(0, view)
    try:
        return _execute(notebook, folder, timeout)
    finally:
        notebook.cells.remove(view)


def _execute(notebook: Any, folder: Path, timeout: int) -> str | None:
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    kernel_name = notebook.metadata.get("kernelspec", {}).get("name", "python3")
    client = NotebookClient(
        notebook,
        timeout=timeout,
        interrupt_on_timeout=True,
        allow_errors=True,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(folder)}},
    )
    try:
        # The kernel's own stderr (a TCP transport warning, log lines) is noise on a student's screen.
        client.execute(env={**os.environ, NESTED_MARKER: "1"}, stderr=subprocess.DEVNULL)
    except DeadKernelError as error:
        return f"the kernel died ({error}); the cells after it did not run"
    except NoSuchKernel as error:
        raise SelfCheckError(f"the notebook asks for kernel {kernel_name!r}, which is not installed here") from error
    return None


def error_output(cell: Any) -> dict[str, Any] | None:
    """The first ``error`` output of a code cell, or None when it raised nothing."""
    return next((output for output in cell.get("outputs", []) if output.get("output_type") == "error"), None)


def describe_error(error: dict[str, Any], timeout: int) -> str:
    """``Name: message`` on one line, shortened to fit a screen."""
    if error.get("ename") == "KeyboardInterrupt":  # how nbclient stops a cell that runs too long
        return f"stopped after {timeout} s (an endless loop?); the grader stops it too and the part scores 0"
    text = f"{error.get('ename', 'Error')}: {error.get('evalue', '')}".strip().rstrip(":")
    return textwrap.shorten(" ".join(text.split()), MESSAGE_WIDTH, placeholder=" ...")


def heading_of(source: str) -> str | None:
    """The first Markdown heading of a cell, without its ``#`` marks."""
    for line in source.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return None


def status_of_test_cell(cell: Any, timeout: int) -> tuple[Status, str]:
    """Classify a graded test cell that has run (or not) by its outputs."""
    if cell.get("execution_count") is None and not cell.get("outputs"):
        return "not run", ""
    error = error_output(cell)
    if error is None:
        return "passes", ""
    if error.get("ename") == "NotImplementedError":
        return "not implemented", describe_error(error, timeout)
    return "fails", describe_error(error, timeout)


def summarise(
    notebook: Any, path: Path, seconds: float, stopped: str | None, timeout: int
) -> SelfCheckReport:
    """Turn an executed notebook into a report: one result per test cell and written answer, plus other errors."""
    parts: list[PartResult] = []
    answers: list[PartResult] = []
    other_errors: list[str] = [stopped] if stopped else []
    title = None
    for index, cell in enumerate(notebook.cells, start=1):
        grading = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and grading.get("grade"):
            grade_id = grading.get("grade_id", f"cell {index}")
            unwritten = not cell.source.strip() or ANSWER_PLACEHOLDER in cell.source
            answers.append(PartResult(title or grade_id, grade_id, "to write" if unwritten else "written", cell=index))
            continue
        if cell.cell_type == "markdown":
            title = heading_of(cell.source) or title
            continue
        if cell.cell_type != "code":
            continue
        if grading.get("grade"):
            status, message = status_of_test_cell(cell, timeout)
            grade_id = grading.get("grade_id", f"cell {index}")
            parts.append(PartResult(title or grade_id, grade_id, status, message, cell=index))
        elif (error := error_output(cell)) is not None:
            first_line = next((line for line in cell.source.splitlines() if line.strip()), "")
            other_errors.append(f"cell {index} ({textwrap.shorten(first_line, 40)}): {describe_error(error, timeout)}")
    return SelfCheckReport(path, parts, answers, other_errors, seconds)


def check_notebook(path: Path, timeout: int | None = None, now: dt.datetime | None = None) -> SelfCheckReport:
    """Apply the grader's intake to the notebook at ``path``, run what the grader would run, and report.

    The file itself is not changed: the run works on a copy in memory. ``timeout`` defaults to the
    course's per-cell limit (``cell_timeout``). ``now`` (timezone-aware; default: the clock) is the
    time the due date is compared with.
    """
    path = Path(path).resolve()
    timeout = cell_timeout(path.parent) if timeout is None else timeout
    notebook, assignment, notes, refused = take_in(path)
    notice = due_date_notice(assignment.name if assignment else None, now, due_dates(path.parent))
    if refused:
        return SelfCheckReport(path, [], [], [], 0.0, tuple(notes), refused, notice)
    start = time.perf_counter()
    stopped = execute_notebook(notebook, path.parent, timeout, assignment.imports if assignment else None)
    report = summarise(notebook, path, time.perf_counter() - start, stopped, timeout)
    return SelfCheckReport(report.notebook, report.parts, report.answers, report.other_errors, report.seconds, tuple(notes),
                           due_notice=notice)


def format_report(report: SelfCheckReport) -> str:
    """The report as text for a terminal: one line per part, then a one-line verdict."""
    due = [report.due_notice, ""] if report.due_notice else []
    if report.refused:
        return "\n".join([f"Self-check of {report.notebook.name}: the grader refuses this file, so it would score 0:",
                          f"  {report.refused}", "", *due, "Fix this, save, and check again."])
    lines = [f"Self-check of {report.notebook.name}: ran top to bottom in a fresh kernel in {report.seconds:.0f} s", "", *due]
    if report.intake_notes:
        lines += ["What the grader does with this file before running it (in the grader's words):",
                  *(f"  - {note}" for note in report.intake_notes), ""]
    width = max((len(part.status) for part in report.parts + report.answers), default=0)
    for part in sorted(report.parts + report.answers, key=lambda part: part.cell):  # the notebook's order
        lines.append(f"  {part.status.upper():<{width}}  {part.title}")
        if part.message:
            lines.append(f"  {'':<{width}}    {part.message}")
    if report.other_errors:
        lines += ["", "Other cells raised an error:"] + [f"  {error}" for error in report.other_errors]
    counts = {status: sum(part.status == status for part in report.parts) for status in TEST_STATUSES}
    to_write = sum(answer.status == "to write" for answer in report.answers)
    lines += [
        "",
        f"{counts['passes']} of {len(report.parts)} visible tests pass; {counts['fails']} fail; "
        f"{counts['not implemented']} not implemented yet"
        + (f"; {counts['not run']} not run" if counts["not run"] else "")
        + (f"; {to_write} of {len(report.answers)} written answers still to write" if to_write else "")
        + ".",
        "Hidden tests decide the grade: a pass here is a good sign, not a score. Save (Ctrl+S) before checking again.",
    ]
    return "\n".join(lines)


def notebook_of_this_kernel(namespace: dict[str, Any] | None = None) -> Path | None:
    """The notebook the calling kernel works for, as its front end says, or ``None`` when none says.

    JupyterLab (jupyter_server 2, ipykernel 6.21+) names it in ``__session__`` and ``JPY_SESSION_NAME``,
    as a path on disk or relative to the server's root; VS Code in ``__vsc_ipynb_file__``. The kernel
    starts in the notebook's folder, so a relative name is looked up there by its file name too.
    """
    namespace = namespace if namespace is not None else _user_namespace()
    named = [namespace.get("__vsc_ipynb_file__"), namespace.get("__session__"), os.environ.get("JPY_SESSION_NAME")]
    for name in (str(value) for value in named if isinstance(value, (str, os.PathLike)) and str(value)):
        for candidate in (Path(name), Path.cwd() / name, Path.cwd() / Path(name).name):
            if candidate.suffix == ".ipynb" and candidate.is_file():
                return candidate.resolve()
    return None


def _user_namespace() -> dict[str, Any]:
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def check_all(notebook: str | os.PathLike | None = None, timeout: int | None = None) -> None:
    """Self-check the notebook you are working in, from a cell of it: the report of ``perceptron-selfcheck``.

    The saved file is checked (save with Ctrl+S first) by the command itself, in a process of its
    own: the notebook runs top to bottom in a fresh kernel, never in yours, so what your kernel
    holds (a variable from a deleted cell, an import run by hand) cannot make a test pass here that
    fails when graded. Inside that run, and in the grader's, this call does nothing.

    Parameters
    ----------
    notebook : str or path-like, optional
        The notebook to check; by default the one this kernel works for (JupyterLab and VS Code say
        which). Give it when the call cannot tell: ``check_all("geometry.ipynb")``.
    timeout : int, optional
        Seconds per cell (default: the grader's, from the course's bundle).

    Returns
    -------
    None
        Nothing: the report says whether the notebook is ready (a value returned here would be shown
        under the report, as ``Out[…]: 1``, when the call ends a cell).
    """
    if os.environ.get(NESTED_MARKER):
        print("(check_all does nothing while the notebook itself is being checked or graded)")
        return None
    path = Path(notebook) if notebook is not None else notebook_of_this_kernel()
    if path is None:
        print("check_all could not tell which notebook this is: give its file name, e.g. check_all(\"geometry.ipynb\")")
        return None
    limit = [] if timeout is None else ["--timeout", str(timeout)]
    done = subprocess.run([sys.executable, "-m", "course_grader.selfcheck", *limit, str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    print(done.stdout, end="")


def main(argv: list[str] | None = None) -> int:
    """Command line: check each notebook given, print its report, exit 0 only if all are ready."""
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Run an assignment notebook in a fresh kernel and say which visible tests pass.",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, help="the saved assignment notebook(s)")
    parser.add_argument("--timeout", type=int, default=None, help="seconds per cell (default: the grader's, from the course)")
    args = parser.parse_args(argv)
    if os.environ.get(NESTED_MARKER):
        print(f"{COMMAND}: not run from inside a self-check (from a notebook, call check_all() instead)")
        return 0
    all_ready = True
    for path in args.notebooks:
        try:
            report = check_notebook(path, args.timeout)
        except SelfCheckError as error:
            print(f"{COMMAND}: {error}", file=sys.stderr)
            return 2
        print(format_report(report))
        all_ready = all_ready and report.ready
    return 0 if all_ready else 1


if __name__ == "__main__":
    sys.exit(main())
