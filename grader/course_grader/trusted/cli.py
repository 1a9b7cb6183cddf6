"""The ``perceptron-course`` console script: release, grade, serve, status, refresh, explain, demo, bundle, check,
students-readme, lab, doctor.

Every command that works on a course finds it as git finds a repository: the current
folder or the nearest one above it that holds ``nbgrader_config.py`` (or ``--root``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..selfcheck import invoked_as
from .course.commands import grader_command
from .course.course import CONFIG_FILE, Course, CourseError
from .course.safe_text import terminal_text
from .course.selection import find_course_root, select_submissions

DEMO_MARKER = ".perceptron-course-demo"
#: The name this console script was invoked by (the course installs it as ``perceptron-course``, the grader's
#: distribution as ``course-grader``): what its messages and ``--help`` call it.
COMMAND = invoked_as("") or grader_command()
ROOT_HELP = "course folder (holding nbgrader_config.py); default: this folder or the nearest one above it that holds one"


def repository_root() -> Path:
    """The course holding the current folder (the nearest folder above it with its ``nbgrader_config.py``), else
    the current folder."""
    here = Path.cwd()
    return next((folder for folder in (here, *here.parents) if (folder / CONFIG_FILE).is_file()), here)


def open_course(root: str | None) -> Course:
    """The course at ``--root``, or the one holding the current folder."""
    return Course.open(root if root is not None else find_course_root(Path.cwd()))


def _print_summary(course: Course, outcomes, seconds: float, skipped=()) -> None:
    from .outputs.report import GRADES_BY_STUDENT, class_table, markdown_table, problems, read_class

    students = {o.student for o in outcomes} | {student for student, _ in skipped}
    record = read_class(course)
    table = markdown_table(class_table(record, students))  # their whole record
    print(terminal_text(table))  # student names are data: no escape sequence reaches the TA's terminal
    print()
    print(terminal_text(awaiting_line(record.awaiting_manual, students)))
    if problems(outcomes):
        print("Submissions that failed or needed repair:")
        print(terminal_text("\n".join(problems(outcomes))))
        print()
    print(terminal_text(run_summary(outcomes, seconds, skipped=len(skipped))))
    print(f"grades:   {course.grades_csv} (one row per submission), {course.root / GRADES_BY_STUDENT} (one row per student)")
    print(f"feedback: {course.feedback}/<student>/<assignment>/")
    print(f"report:   {course.reports / 'report.html'} and {course.reports / 'report.md'} (the whole class)")


def awaiting_line(awaiting: list[tuple[str, str, str]], students: set[str]) -> str:
    """Whether the scores above still lack written answers a TA grades by hand (``(student, assignment, part)``)."""
    waiting = sorted({(assignment, part) for student, assignment, part in awaiting if student in students})
    if not waiting:
        return "every written answer of these students is graded: the scores above are complete"
    parts = ", ".join(f"{assignment}/{part}" for assignment, part in waiting)
    command = runnable_command()
    return (f"the scores above leave out {len(waiting)} written answer(s) a TA grades by hand ({parts}): grade them "
            f"in the formgrader ({command} lab), then {command} refresh")


def run_summary(outcomes, seconds: float, *, skipped: int = 0) -> str:
    """What one grading run did, in a few lines: graded, failed, skipped, flagged."""
    failed = [o for o in outcomes if o.status != "graded"]
    flagged = [o for o in outcomes if o.flags]
    lines = [f"{len(outcomes) - len(failed)} graded, "
             + (f"{len(failed)} failed (reasons above)" if failed else "none failed") + f", in {seconds:.0f} s"]
    if skipped:
        lines.append(f"{skipped} skipped: already graded and unchanged since (--force regrades them, keeping manual grades)")
    if not flagged:
        lines.append("nothing flagged for review")
        return "\n".join(lines)
    lines.append(f"{len(flagged)} flagged for review (a flag never changes a score; details in the report):")
    for outcome in sorted(flagged, key=lambda o: (o.student, o.assignment)):
        constructs = list(dict.fromkeys(flag.construct for flag in outcome.flags))
        shown = ", ".join(constructs[:3]) + (f", and {len(constructs) - 3} more" if len(constructs) > 3 else "")
        lines.append(f"- {outcome.student}/{outcome.assignment}: {shown}")
    return "\n".join(lines)


def interrupted_line(interrupted) -> str:
    """The one line Ctrl+C leaves: what was kept, what is left, how to go on."""
    return (f"{COMMAND}: interrupted: {interrupted.graded} graded and kept (grades.csv and the report are up to date), "
            f"{interrupted.left} left; run `{COMMAND} grade --resume` to grade exactly those "
            f"(they are remembered in reports/grading_left.json)")


def command_release(args) -> int:
    from .pipeline import release
    from .course.release_check import changed_since, release_summary, snapshot

    from .course.late_policy import apply_term

    course = open_course(args.root)
    if (course.root / "gradebook.db").is_file():
        print_term_differences(apply_term(course).differences)
    before = snapshot(course, args.assignment or course.assignments())
    release(course, args.assignment)
    print(release_summary(*changed_since(course, before), course.release))
    return 0


def command_grade(args) -> int:
    from .gradebook.writer_lock import course_lock

    course = open_course(args.root)
    with course_lock(course.root, "grade"):  # first: a service at work on the course is the thing to know
        return _grade_command(course, args)


def _grade_command(course: Course, args) -> int:
    select_submissions(course, args.assignment, args.student, warn=False)  # a typo is reported now, before anything slow
    from .pipeline import BatchInterrupted, grade

    start = time.perf_counter()
    try:
        run = grade(course, assignments=args.assignment, students=args.student, progress=not args.quiet, jobs=args.jobs,
                    unsandboxed=args.unsandboxed, force=args.force, resume=args.resume)
    except BatchInterrupted as interrupted:
        print(interrupted_line(interrupted), file=sys.stderr)
        return exit_now(130)
    print_term_differences(run.term_differences)
    _print_summary(course, run, time.perf_counter() - start, run.skipped)
    return 0


def command_serve(args) -> int:
    from .serving.service import serve

    course = open_course(args.root)
    serve(course, jobs=args.jobs, once=args.once, unsandboxed=args.unsandboxed, say=lambda line: print(line, flush=True))
    return 0


def command_use_handin(args) -> int:
    from .serving.choose import use_handin

    print(terminal_line(use_handin(open_course(args.root), args.student, args.assignment, args.number,
                                   beyond_limit=args.beyond_limit)))
    return 0


def terminal_line(text: str) -> str:
    """``text`` made inert for a terminal (a student's name in it is data)."""
    from .course.safe_text import terminal_text

    return terminal_text(text)


def command_status(args) -> int:
    from .serving.status import status_lines

    text = "\n".join(status_lines(open_course(args.root), full=args.all))
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `status | head`: the reader has what it wanted
        sink = os.open(os.devnull, os.O_WRONLY)
        os.dup2(sink, sys.stdout.fileno())
        os.close(sink)
    return 0


def print_term_differences(differences: list[str]) -> None:
    """Say what the gradebook held otherwise than term.toml (a due date or extension set in the formgrader)."""
    if differences:
        print("The gradebook differed from term.toml (term.toml is the one truth; each line says how to keep the other):")
        for difference in differences:
            print(terminal_text(f"- {difference}"))
        print()


def exit_now(status: int) -> int:
    """End the process at once with ``status``, everything written and flushed.

    After Ctrl+C, the interpreter's own clean-up (the stopped pool's threads, the half-run
    kernels' messaging) can take seconds more, and prints nothing useful.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
    return status  # not reached


def command_refresh(args) -> int:
    course = open_course(args.root)
    from .refresh import refresh
    from .outputs.report import GRADES_BY_STUDENT
    from .course.safe_text import quoted

    start = time.perf_counter()
    done = refresh(course, assignments=args.assignment, students=args.student, everything=args.all)
    print_term_differences(done.term_differences)
    print(f"rewrote the feedback of {len(done.submissions)} graded submissions from the gradebook "
          f"(manual grades and comments included); {len(done.unchanged)} already up to date; "
          f"in {time.perf_counter() - start:.0f} s")
    for (student, assignment), reason in sorted(done.failed.items()):
        print(f"- {quoted(student, 80)}/{quoted(assignment, 80)}: feedback failed: {reason}")
    print(f"grades:   {course.grades_csv}, {course.root / GRADES_BY_STUDENT}")
    print(f"feedback: {course.feedback}/<student>/<assignment>/")
    print(f"report:   {course.reports / 'report.html'} and {course.reports / 'report.md'}")
    return 1 if done.failed else 0


def command_explain(args) -> int:
    from .explain import check_submission, explain, report_lines

    course = open_course(args.root)
    check_submission(course, args.student, args.assignment)  # a typo is reported now, before anything slow
    replay = explain(course, args.student, args.assignment, unsandboxed=args.unsandboxed)
    print(terminal_text("\n".join(report_lines(replay, course))))  # student names are data
    return 0 if replay.reproduces else 1


def prepare_demo_area(out: Path) -> None:
    """Empty ``out`` for a new demo, refusing to delete a folder the demo did not make."""
    if out.exists():
        if not (out / DEMO_MARKER).exists():
            raise CourseError(f"{out} exists and is not a demo work area; choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / DEMO_MARKER).write_text(f"made by `{COMMAND} demo`; safe to delete\n", encoding="utf-8")


def demo_exchange(course: Course) -> Path:
    """Give the demo's copy of the course an exchange of its own (``exchange/`` in the work area), so that its
    formgrader opens without nbgrader's error about a missing exchange (the hub's, which a laptop has not)."""
    exchange = course.root / "exchange"
    exchange.mkdir(exist_ok=True)
    config = course.root / CONFIG_FILE
    with config.open("a", encoding="utf-8") as handle:
        handle.write(f"\n# The demo's own exchange (perceptron-course demo), not the hub's\nc.Exchange.root = {str(exchange)!r}\n")
    return exchange


def command_demo(args) -> int:
    from .course.example_class import build_example_class, copy_course
    from .pipeline import grade

    source_course = Course.open(args.course)
    out = Path(args.out).expanduser().resolve()
    prepare_demo_area(out)
    course = copy_course(source_course.root, out)
    demo_exchange(course)
    written = build_example_class(course, source_course.root / "example_class")
    print(f"example class: {len({s for s, _ in written})} students, {len(written)} submissions in {course.submitted}")
    start = time.perf_counter()
    outcomes = grade(course, progress=not args.quiet, jobs=args.jobs, unsandboxed=args.unsandboxed)
    _print_summary(course, outcomes, time.perf_counter() - start)
    print(f"open it in JupyterLab's formgrader: {runnable_command()} lab --root {_shown_path(out)}")
    return 0


#: The ``PATH`` this process was started with, before anything put the environment's ``bin`` on it (``main`` sets it).
_shell_path: list[str | None] = [None]


def runnable_command() -> str:
    """This command as the TA's shell runs it again: its name when the shell's ``PATH`` (as this process started)
    finds this very script, else its path (``.venv/bin/perceptron-course``: a virtual environment not activated)."""
    script = Path(sys.argv[0])
    if script.name != COMMAND:  # not started as the console script (a test, ``python -m``)
        return COMMAND
    found = shutil.which(COMMAND, path=_shell_path[0])
    if found and os.path.samefile(found, script):
        return COMMAND
    return _shown_path(script.absolute())


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when below it (``work/demo``), else whole."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def command_bundle(args) -> int:
    from .bundle import build_bundle

    course = open_course(args.root)
    folder, archive = build_bundle(course, Path(args.out) if args.out else course.root / "dist")
    print(f"student bundle: {_shown_path(folder)}")
    print(f"           zip: {_shown_path(archive)}")
    print("students install it, in the bundle's folder, with: pip install ./package (docs/students.md)")
    return 0


def command_check(args) -> int:
    from .course_check import check_course

    course = open_course(args.root)
    problems = check_course(course)
    if not problems:
        print(f"{course.root}: consistent (term file, configuration, checks and parts, points, registrations, release/)")
        return 0
    print(f"{course.root}: {len(problems)} inconsistenc{'y' if len(problems) == 1 else 'ies'}:")
    for problem in problems:
        print(terminal_text(f"- {problem}"))
    return 1


def command_doctor(args) -> int:
    from .doctor import SHOWN, account, diagnose, render

    course = open_course(args.root)
    try:
        student = account(args.as_user)
    except KeyError:
        raise CourseError(f"no account named {args.as_user!r} on this machine; pass --as with a student's account") from None
    diagnosis = diagnose(course, student)
    print(render(course, diagnosis, shown=max(len(diagnosis.openings), len(diagnosis.outside)) if args.all else SHOWN))
    return 1 if diagnosis.problems else 0


def command_students_readme(args) -> int:
    from .course.student_readme import write_docs_page

    print(f"wrote {write_docs_page(open_course(args.root))} from term.toml")
    return 0


def command_lab(args) -> int:
    from .lab import start_lab

    start_lab(open_course(args.root), port=args.port, open_browser=not args.no_browser)
    return 0  # not reached: JupyterLab replaces this process


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {value}")
    return value


def _add_sandbox_opt_out(parser: argparse.ArgumentParser) -> None:
    """The plainly named opt-in to grading without the sandbox (``grade`` and ``serve`` alike)."""
    parser.add_argument("--unsafe-no-sandbox", "--unsandboxed", dest="unsandboxed", action="store_true",
                        help="run student code even where the sandbox cannot run, with your own rights (UNSAFE: it can "
                             "read and change your files, the course secret and the gradebook; see docs/hosting.md)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Release and grade an nbgrader course.")
    commands = parser.add_subparsers(dest="command", required=True)

    release = commands.add_parser("release", help="regenerate release/ from source/ with nbgrader")
    release.add_argument("--root", default=None, help=ROOT_HELP)
    release.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    release.set_defaults(run=command_release)

    grade = commands.add_parser("grade", help="autograde submitted/, write feedback, grades.csv and a report")
    grade.add_argument("--root", default=None, help=ROOT_HELP)
    grade.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    grade.add_argument("--student", action="append", help="only this student (repeatable)")
    grade.add_argument("--jobs", type=_positive, default=None, help="worker processes (default: one per core)")
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.add_argument("--force", action="store_true",
                       help="regrade submissions already graded and unchanged too (manual grades of unchanged answers stay)")
    grade.add_argument("--resume", action="store_true",
                       help="grade exactly what the last interrupted grade left (regraded even if unchanged, as --force would)")
    _add_sandbox_opt_out(grade)
    grade.set_defaults(run=command_grade)

    serve = commands.add_parser("serve", help="grade hand-ins as they arrive (nbgrader's exchange, the LMS drop folder) and "
                                              "release each student's feedback at once; runs until SIGTERM or Ctrl+C")
    serve.add_argument("--root", default=None, help=ROOT_HELP)
    serve.add_argument("--jobs", type=_positive, default=None, help="worker processes (default: one per core)")
    serve.add_argument("--once", action="store_true",
                       help="grade everything waiting, release its feedback, refresh the exports, and exit (tests, cron)")
    _add_sandbox_opt_out(serve)
    serve.set_defaults(run=command_serve)

    use = commands.add_parser("use-handin", help="put one of a student's archived hand-ins (a held one, or one the service "
                                                 "could not grade) in submitted/ for `grade`: the TA's decision, journaled")
    use.add_argument("--root", default=None, help=ROOT_HELP)
    use.add_argument("student")
    use.add_argument("assignment")
    use.add_argument("number", type=_positive, help="the hand-in's number (status and the student's page show it)")
    use.add_argument("--beyond-limit", action="store_true",
                     help="even when the student used every graded attempt [serve] attempts allows")
    use.set_defaults(run=command_use_handin)

    status = commands.add_parser("status", help="what the grading service is doing: running or not, waiting, grading, "
                                                "done in the last hour, failures")
    status.add_argument("--root", default=None, help=ROOT_HELP)
    status.add_argument("--all", action="store_true", help="every student of each section, not one screen")
    status.set_defaults(run=command_status)

    refresh = commands.add_parser("refresh", help="rewrite feedback, grades.csv and the report from the gradebook "
                                                  "(after grading by hand in the formgrader); runs no student code")
    refresh.add_argument("--root", default=None, help=ROOT_HELP)
    refresh.add_argument("--assignment", action="append", help="only the feedback of this assignment (repeatable)")
    refresh.add_argument("--student", action="append", help="only the feedback of this student (repeatable)")
    refresh.add_argument("--all", action="store_true",
                         help="rewrite every feedback page, not only those whose grades changed (after changing the template)")
    refresh.set_defaults(run=command_refresh)

    explain = commands.add_parser("explain", help="regrade one submission in a scratch copy of the course and show, part by "
                                                  "part, whether it reproduces its recorded grade and what changed since")
    explain.add_argument("student", help="the student's id (their folder in submitted/)")
    explain.add_argument("assignment", help="the assignment, e.g. 01_geometry")
    explain.add_argument("--root", default=None, help=ROOT_HELP)
    explain.add_argument("--unsafe-no-sandbox", "--unsandboxed", dest="unsandboxed", action="store_true",
                       help="run student code even where the sandbox cannot run, with your own rights (UNSAFE: it can "
                            "read and change your files, the course secret and the gradebook; see docs/hosting.md)")
    explain.set_defaults(run=command_explain)

    demo = commands.add_parser("demo", help="grade the bundled example class in a fresh work area")
    demo.add_argument("--out", default=str(repository_root() / "work" / "demo"), help="work area (default: work/demo)")
    demo.add_argument("--course", default=str(repository_root()), help=argparse.SUPPRESS)
    demo.add_argument("--jobs", type=_positive, default=None, help="worker processes (default: one per core)")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.add_argument("--unsafe-no-sandbox", "--unsandboxed", dest="unsandboxed", action="store_true",
                      help="grade the example class even where the sandbox cannot run, with your own rights (see docs/hosting.md)")
    demo.set_defaults(run=command_demo)

    bundle = commands.add_parser("bundle", help="write what students receive (assignments, lectures, student package) as a folder and a zip")
    bundle.add_argument("--root", default=None, help=ROOT_HELP)
    bundle.add_argument("--out", default=None, help="where the bundle folder and zip go (default: dist/ in the course folder)")
    bundle.set_defaults(run=command_bundle)

    check = commands.add_parser("check", help="say what is inconsistent in the course after edits (term file, checks, "
                                               "points, dropped assignments, release/, limits, header); exit 1 if anything is")
    check.add_argument("--root", default=None, help=ROOT_HELP)
    check.set_defaults(run=command_check)

    doctor = commands.add_parser("doctor", help="say what a student account could read or write of the course here, whether "
                                                "the sandbox starts, the exchange's modes, who runs serve; exit 1 if open")
    doctor.add_argument("--root", default=None, help=ROOT_HELP)
    doctor.add_argument("--as", dest="as_user", default="nobody",
                        help="the account to try as (run as root: a real attempt as that account); default: nobody")
    doctor.add_argument("--all", action="store_true", help="name every open path, not only the first few")
    doctor.set_defaults(run=command_doctor)

    readme = commands.add_parser("students-readme", help="write docs/students.md, the students' README, from term.toml")
    readme.add_argument("--root", default=None, help=ROOT_HELP)
    readme.set_defaults(run=command_students_readme)


    lab = commands.add_parser("lab", help="start JupyterLab on the course with the formgrader (127.0.0.1 only)")
    lab.add_argument("--root", default=None, help=ROOT_HELP)
    lab.add_argument("--port", type=_positive, default=None, help="port (default: JupyterLab's, 8888 or the next free one)")
    lab.add_argument("--no-browser", action="store_true", help="do not open a browser")
    lab.set_defaults(run=command_lab)
    return parser


#: The commands that write the course (its gradebook, hand-ins, feedback, exports): what they create is the TA's
#: alone (``PRIVATE_UMASK``); what nbgrader's exchange needs open is given its mode where it is written.
WRITING_COMMANDS = frozenset({"release", "grade", "serve", "refresh", "explain", "demo", "lab"})
PRIVATE_UMASK = 0o077


@contextmanager
def private_files(command: str) -> Iterator[None]:
    """Run ``command`` with ``PRIVATE_UMASK`` if it writes the course (its children inherit it); restore it after."""
    if command not in WRITING_COMMANDS:
        yield
        return
    before = os.umask(PRIVATE_UMASK)
    os.umask(before | PRIVATE_UMASK)  # never more open than it was
    try:
        yield
    finally:
        os.umask(before)


def main(argv: list[str] | None = None) -> int:
    _shell_path[0] = os.environ.get("PATH", os.defpath)  # nbgrader's set-up puts .venv/bin on it later
    args = build_parser().parse_args(argv)
    try:
        with private_files(args.command):
            return args.run(args)
    except CourseError as error:
        print(terminal_text(f"{COMMAND}: error: {error}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{COMMAND}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
