"""``doctor``: what a student account could read or write of a course on this machine, on one screen.

Run as the TA (or root) on the machine that grades. It checks four things:

- **The course's files.** Every path of the course folder (the virtual environments and ``node_modules`` inside it
  left out: they hold no course data) is tried as a student account would try it. Run as root, a child process drops
  to that account (``--as``, default ``nobody``: its uid, its gid and its groups) and opens each path for reading
  (``open``, or listing a folder) and asks the kernel whether it could write it (``access(W_OK)``, which writes
  nothing): a real attempt, with every parent's traverse bit, ACLs and mount options applied by the kernel. Run as
  another user, it cannot drop to one, so it reads the modes instead: a path is open when an account that is neither
  its owner nor the TA could reach it (the traverse bit of every parent folder) and read or write it, counting a
  group's bits when that group holds any account but the TA's.
- **The sandbox**: whether the grading sandbox can start here (``sandbox_problem``).
- **nbgrader's exchange** (``c.Exchange.root`` of the course): the root world-writable and sticky (1777); the
  course's folder and ``outbound/`` readable (0755), ``inbound/`` writable and not listable by students (2733),
  ``feedback/`` enterable and not listable (0711): the modes nbgrader gives them.
- **The service**: whether ``serve`` holds the course, and who runs it: the hub (a managed service, which the hub
  starts again when it exits), a systemd unit, or a shell.
- **Outside the course**: the other accounts' homes (each home, and nbgrader's cache in it, which holds the secret
  of every hand-in: a classmate who reads it can name that student's feedback page in the exchange), and, when the
  hub runs the service, the files of the hub's own folder (its database, its log with every student's score), tried
  as the course's paths are.

It exits 1 when a path is open, the sandbox cannot start or the exchange's modes are wrong. Other copies of the
course (a checkout elsewhere on the machine) are not looked for.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .course.course import Course
from .course.safe_text import terminal_text

#: Accounts of people, as useradd numbers them (``UID_MIN`` and ``UID_MAX`` of login.defs): their homes are checked.
PERSON_UIDS = range(1000, 60001)
#: Where nbgrader keeps a student's cache of hand-ins (each with its secret), under the home.
NBGRADER_CACHE = Path(".local/share/jupyter/nbgrader_cache")
#: Folders of the course folder that hold no course data (an environment, the proxy's packages): not walked.
SKIPPED_FOLDERS = frozenset({".venv", "venv", "node_modules"})
#: At most this many paths are tried (a course with its class's hand-ins holds a few thousand).
MAX_PATHS = 100_000
#: At most this many open paths are named on the screen.
SHOWN = 12
#: What is named first when open: the secret, the gradebook, the solutions, the class's hand-ins, feedback and grades.
FIRST_NAMED = ("grading_secret", "gradebook.db", "source", "submitted", "handins", "autograded", "feedback",
               "grades.csv", "grades_by_student.csv", "canvas_grades.csv", "reports", ".git")
#: The modes nbgrader gives the exchange's folders (its ``ExchangeReleaseAssignment`` and ``ReleaseFeedback``, for a
#: course that is not ``groupshared``): the root, then the course's folder and those in it.
EXCHANGE_MODES = {None: 0o1777, "": 0o755, "inbound": 0o2733, "outbound": 0o755, "feedback": 0o711}


@dataclass(frozen=True)
class Account:
    """The account whose access is tried: a uid, its primary gid and every group it is in."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]


@dataclass(frozen=True)
class Opening:
    """A path of the course that the student account could read or write."""

    path: Path
    readable: bool
    writable: bool

    @property
    def what(self) -> str:
        return " and ".join(word for word, yes in (("readable", self.readable), ("writable", self.writable)) if yes)

    def describe(self, root: Path | None = None) -> str:
        """The path relative to ``root`` (in full without one), and what a student can do with it."""
        if root is not None and self.path == root:
            return f"./ ({self.what})"
        shown = str(self.path if root is None else self.path.relative_to(root)) + ("/" if self.path.is_dir() else "")
        return f"{shown} ({self.what})"


@dataclass
class Diagnosis:
    """What ``doctor`` found; ``problems`` make it exit 1."""

    method: str
    tried: int
    openings: list[Opening] = field(default_factory=list)
    sandbox: str = ""
    exchange: list[str] = field(default_factory=list)
    exchange_problems: list[str] = field(default_factory=list)
    service: str = ""
    outside: list[Opening] = field(default_factory=list)  #: other accounts' homes, the hub's files (``homes_of_others``, ``hub_files``)

    @property
    def problems(self) -> int:
        return len(self.openings) + bool(self.sandbox) + len(self.exchange_problems) + len(self.outside)


def account(name: str) -> Account:
    """The account called ``name``, with its groups.

    Raises
    ------
    KeyError
        If there is no such account.
    """
    entry = pwd.getpwnam(name)
    return Account(name, entry.pw_uid, entry.pw_gid, tuple(os.getgrouplist(name, entry.pw_gid)))


def course_paths(root: Path) -> list[Path]:
    """Every path of the course folder, the root first, without following links and without ``SKIPPED_FOLDERS``."""
    paths = [root]
    for folder, folders, files in os.walk(root, followlinks=False):
        folders[:] = sorted(name for name in folders if name not in SKIPPED_FOLDERS
                            and not (Path(folder) / name / "pyvenv.cfg").exists())
        paths += [Path(folder) / name for name in [*folders, *sorted(files)]]
        if len(paths) >= MAX_PATHS:
            break
    return paths[:MAX_PATHS]


def attempt(path: Path) -> tuple[bool, bool]:
    """``(readable, writable)`` of ``path`` for this process: a real open for reading, the kernel's word on writing."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        readable = False
    else:  # opening a folder for reading is what listing it needs
        os.close(descriptor)
        readable = True
    return readable, os.access(path, os.W_OK, follow_symlinks=False)


def tried_as(student: Account, paths: list[Path]) -> list[Opening]:
    """The paths ``student`` can read or write, tried by a child process that became ``student`` (needs root)."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # the child: drop every right of root, then try each path
        status = 1
        try:
            os.close(reading)
            os.setgroups(list(student.groups))
            os.setgid(student.gid)
            os.setuid(student.uid)
            found = [[str(path), *access] for path in paths if any(access := attempt(path))]
            with os.fdopen(writing, "w", encoding="utf-8") as out:
                json.dump(found, out)
            status = 0
        finally:
            os._exit(status)
    os.close(writing)
    with os.fdopen(reading, encoding="utf-8") as answer:
        text = answer.read()
    _, status = os.waitpid(child, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError(f"the child process that became {student.name} failed (exit {os.waitstatus_to_exitcode(status)})")
    return [Opening(Path(path), readable, writable) for path, readable, writable in json.loads(text)]


def shared_groups(gids: set[int], me: int) -> set[int]:
    """The groups of ``gids`` that hold an account other than ``me`` (as a member or as its primary group)."""
    shared = set()
    primary = {}
    for entry in pwd.getpwall():
        primary.setdefault(entry.pw_gid, set()).add(entry.pw_uid)
    for gid in gids:
        try:
            members = {pwd.getpwnam(name).pw_uid for name in grp.getgrgid(gid).gr_mem if _known(name)}
        except KeyError:
            members = set()
        if (members | primary.get(gid, set())) - {me}:
            shared.add(gid)
    return shared


def _known(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _allowed(info: os.stat_result, bits: tuple[int, int], groups: set[int], me: int) -> bool:
    """Whether another account may do what ``bits`` (group bit, other bit) stand for, by the modes of ``info``."""
    group_bit, other_bit = bits
    if info.st_uid != me and info.st_gid in groups and info.st_mode & group_bit:
        return True
    return bool(info.st_mode & other_bit)


def read_from_modes(paths: list[Path]) -> list[Opening]:
    """The paths another account could read or write, judged from each path's and each parent's modes."""
    me = os.geteuid()
    infos = {}
    for path in paths:
        for part in (path, *path.parents):
            if part not in infos:
                try:
                    infos[part] = os.lstat(part)
                except OSError:
                    infos[part] = None
    groups = shared_groups({info.st_gid for info in infos.values() if info is not None}, me)
    openings = []
    for path in paths:
        info = infos[path]
        if info is None or not all(infos[parent] is not None and _allowed(infos[parent], (stat.S_IXGRP, stat.S_IXOTH),
                                                                          groups, me) for parent in path.parents):
            continue
        folder = stat.S_ISDIR(info.st_mode)
        readable = _allowed(info, (stat.S_IRGRP, stat.S_IROTH), groups, me)
        writable = _allowed(info, (stat.S_IWGRP, stat.S_IWOTH), groups, me) and (
            not folder or _allowed(info, (stat.S_IXGRP, stat.S_IXOTH), groups, me))
        if (readable or writable) and not stat.S_ISLNK(info.st_mode):
            openings.append(Opening(path, readable, writable))
    return openings


def exchange_findings(course: Course) -> tuple[list[str], list[str]]:
    """``(lines, problems)`` about nbgrader's exchange: each folder's mode against nbgrader's."""
    from .serving.inbox import exchange_root

    root = exchange_root(course)
    course_id = course.term().course.id
    lines, problems = [], []
    try:
        root.resolve().relative_to(course.root)
        problems.append(f"{root} is inside the course folder: students would need to enter the course")
    except ValueError:
        pass
    for name, wanted in EXCHANGE_MODES.items():
        folder = root if name is None else root / course_id / name
        shown = f"{folder}"
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            if name is None:
                problems.append(f"{shown}: missing (mkdir it, chmod 1777)")
            elif name == "feedback" and (root / course_id).is_dir():
                problems.append(f"{shown}: missing: a student's Fetch Feedback logs a critical error until it exists "
                                f"(as the grader: mkdir -m 0711 {shown})")
            else:
                lines.append(f"{shown}: missing (made by the grader's first nbgrader release_assignment)")
            continue
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            problems.append(f"{shown}: not a real folder")
        elif mode != wanted:
            problems.append(f"{shown}: mode {mode:04o}, nbgrader's is {wanted:04o} (chmod {wanted:04o} {shown})")
        else:
            lines.append(f"{shown}: {mode:04o}, as nbgrader makes it")
    return lines, problems


def service_line(course: Course) -> str:
    """Who runs the course's ``serve``, if it runs: the hub, systemd or a shell, from its process's environment."""
    from .gradebook.writer_lock import lock_holder

    holder = lock_holder(course.root)
    if holder is None:
        return "no command holds the course now (serve is not running)"
    if holder.command != "serve":
        return f"`{holder.command}` (pid {holder.pid}) holds the course now; serve is not running"
    try:
        environment = Path(f"/proc/{holder.pid}/environ").read_bytes().split(b"\0")
        cgroup = Path(f"/proc/{holder.pid}/cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        return f"serve runs (pid {holder.pid}, since {holder.since}); who started it cannot be read ({error.strerror})"
    variables = dict(item.decode("utf-8", "replace").split("=", 1) for item in environment if b"=" in item)
    if "JUPYTERHUB_SERVICE_NAME" in variables:
        return (f"serve runs (pid {holder.pid}) as the hub's managed service "
                f"{variables['JUPYTERHUB_SERVICE_NAME']!r}: the hub starts it again when it exits, so stop it by taking "
                "it out of the hub's configuration and restarting the hub (docs/hosting.md)")
    unit = next((part for part in cgroup.replace("\n", "/").split("/") if part.endswith(".service")), "")
    if unit and "user@" not in unit:
        return f"serve runs (pid {holder.pid}) as the systemd unit {unit}: systemctl stop {unit}"
    return f"serve runs (pid {holder.pid}, since {holder.since}), started by hand: kill {holder.pid} stops it"


def homes_of_others(student: Account | None) -> list[Path]:
    """Each home of another person's account (``PERSON_UIDS``), and nbgrader's cache in it where there is one."""
    paths = []
    for entry in sorted(pwd.getpwall(), key=lambda entry: entry.pw_uid):
        home = Path(entry.pw_dir)
        if entry.pw_uid not in PERSON_UIDS or (student is not None and entry.pw_uid == student.uid) \
                or entry.pw_uid == os.geteuid() or home == Path("/") or not home.is_dir():
            continue
        paths.append(home)
        if (home / NBGRADER_CACHE).is_dir():
            paths.append(home / NBGRADER_CACHE)
    return paths


def hub_files(course: Course) -> list[Path]:
    """The files of the folder the hub runs in (its database, cookie secret, log), and the file its output goes to,
    when the hub runs the course's ``serve`` (the service's parent process is the hub)."""
    from .gradebook.writer_lock import lock_holder

    holder = lock_holder(course.root)
    if holder is None or holder.command != "serve":
        return []
    try:
        environment = Path(f"/proc/{holder.pid}/environ").read_bytes()
        if b"JUPYTERHUB_SERVICE_NAME=" not in environment:
            return []
        status = Path(f"/proc/{holder.pid}/status").read_text(encoding="utf-8", errors="replace")
        hub = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        folder = Path(os.readlink(f"/proc/{hub}/cwd"))
        output = Path(os.readlink(f"/proc/{hub}/fd/1"))
    except (OSError, StopIteration, ValueError):
        return []
    if folder == Path("/"):  # a hub started without a folder of its own: its database and log are elsewhere
        files = []
    else:
        files = sorted(path for path in folder.iterdir() if path.is_file() and not path.is_symlink())
    return files + ([output] if output.is_absolute() and output.is_file() and output not in files else [])


def diagnose(course: Course, student: Account | None) -> Diagnosis:
    """Everything ``doctor`` checks; ``student`` is tried for real when this process is root."""
    from .running.sandbox import sandbox_problem

    paths = course_paths(course.root)
    def rank(opening: Opening) -> int:
        parts = opening.path.relative_to(course.root).parts
        return FIRST_NAMED.index(parts[0]) if parts and parts[0] in FIRST_NAMED else len(FIRST_NAMED)

    outside = homes_of_others(student) + hub_files(course)
    if os.geteuid() == 0 and student is not None:
        method = (f"opened as {student.name} (uid {student.uid}, gid {student.gid}) by a child process that dropped "
                  "root's rights")
        openings = tried_as(student, paths + outside)
    else:
        method = ("judged from the modes of each path and its parent folders, for an account that is neither the "
                  "owner nor in a group of the TA's alone (run as root for a real attempt as a student)")
        openings = read_from_modes(paths + outside)
    inside = [opening for opening in openings if opening.path == course.root or course.root in opening.path.parents]
    lines, problems = exchange_findings(course)
    return Diagnosis(method=method, tried=len(paths), openings=sorted(inside, key=rank), sandbox=sandbox_problem(),
                     exchange=lines, exchange_problems=problems, service=service_line(course),
                     outside=[opening for opening in openings if opening not in inside])


def render(course: Course, diagnosis: Diagnosis, *, shown: int = SHOWN) -> str:
    """The one screen ``doctor`` prints, naming at most ``shown`` open paths."""
    root = course.root
    out = [f"course: {root}", f"student access: {diagnosis.tried} paths {diagnosis.method}"]
    if diagnosis.openings:
        out.append(f"  OPEN: {len(diagnosis.openings)} paths a student account can reach:")
        out += [f"    {opening.describe(root)}" for opening in diagnosis.openings[:shown]]
        if len(diagnosis.openings) > shown:
            out.append(f"    and {len(diagnosis.openings) - shown} more (--all names them all)")
        out.append(f"  close them: chmod 700 {root} (and chmod -R go= the paths named)")
    else:
        out.append("  closed: a student account can neither read nor write any of them")
    out.append("sandbox: yes" if not diagnosis.sandbox else f"sandbox: NO - {diagnosis.sandbox}")
    out += ["exchange:", *(f"  {line}" for line in diagnosis.exchange),
            *(f"  WRONG: {line}" for line in diagnosis.exchange_problems)]
    out.append(f"service: {diagnosis.service}")
    if diagnosis.outside:
        out.append(f"outside the course: OPEN: {len(diagnosis.outside)} paths of other accounts' homes or of the hub "
                   "a student account can reach:")
        out += [f"    {opening.describe()}" for opening in diagnosis.outside[:shown]]
        if len(diagnosis.outside) > shown:
            out.append(f"    and {len(diagnosis.outside) - shown} more (--all names them all)")
        out.append("  close them: chmod 700 each home (and HOME_MODE 0700 in /etc/login.defs for accounts made later), "
                   "chmod 700 the hub's folder (docs/hosting.md)")
    else:
        out.append("outside the course: closed: no other account's home, nbgrader cache or hub file a student can reach")
    wrong = [what for what, yes in ((f"{len(diagnosis.openings)} paths open to a student", diagnosis.openings),
                                    ("the sandbox cannot start", diagnosis.sandbox),
                                    (f"{len(diagnosis.exchange_problems)} wrong in the exchange",
                                     diagnosis.exchange_problems),
                                    (f"{len(diagnosis.outside)} paths outside the course open to a student",
                                     diagnosis.outside)) if yes]
    out.append("verdict: closed, the sandbox starts, the exchange is as nbgrader makes it" if not wrong
               else "verdict: NOT READY: " + "; ".join(wrong))
    return terminal_text("\n".join(out))
