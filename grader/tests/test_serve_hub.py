"""``perceptron-course serve`` as a JupyterHub managed service, end to end with real parts (``docs/hosting.md``).

A real JupyterHub (the ``jupyterhub`` package, with npm's ``configurable-http-proxy``) on 127.0.0.1, started by the
test as root with the example configuration (a frozen copy in ``fixtures/hub/jupyterhub_config.py``) (its three settings replaced by
this test's paths and users); two local Unix users made here (``useradd``), a grader that the hub runs the service
as and students who run the real ``nbgrader submit`` and ``nbgrader fetch_feedback`` (``runuser``); the exchange in
this test's temporary folder with nbgrader's permissions. The systemd unit beside it is checked with
``systemd-analyze verify`` and against the hub's example.

Paths other users cannot enter. The virtual environment's interpreter, the repository or pytest's temporary folder
may sit under a folder only root can enter (``/root``, a ``mktemp -d``), where the grader and the students cannot run
the venv's programs. Nothing outside this test's folder is changed for them: each of their commands, and the hub,
runs in a mount namespace of its own (``unshare --mount``) in which every such folder is replaced by a folder that
holds only the entries on the way to what they need (``view_script``).

Waits are bounded and generous; a failed wait shows the hub's log, which holds the service's output.
"""

from __future__ import annotations

import configparser
import contextlib
import itertools
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from conftest import CHECKOUT, FIXTURE_LIBRARY, FIXTURES, NODE_MODULES, descendants, fixture_course

from course_grader.trusted.cli import build_parser, main
from course_grader.trusted.doctor import NBGRADER_CACHE
from course_grader.trusted.course.course import Course
from course_grader.trusted.course.example_class import copy_course, solved_notebook

VENV = Path(sys.prefix)
HUB_EXAMPLE = FIXTURES / "hub" / "jupyterhub_config.py"
UNIT_EXAMPLE = FIXTURES / "hub" / "perceptron-course-serve.service"
PROXY = NODE_MODULES / ".bin" / "configurable-http-proxy"
COURSE_ID = "fixture"  # the fixture course's id (grader/tests/fixtures/course/term.toml)
ASSIGNMENT, NOTEBOOK = "01_geometry", "geometry"
SERVICE = "perceptron-grading"  # the service's name in the hub's example
#: How long any one wait may take before the test fails with the logs: far beyond what grading one hand-in takes.
PATIENCE = 300.0
#: The course's time limit of a cell (term.toml): how long an endless loop holds a grading slot. Beyond what the steps
#: of the endless-loop test take, so that their order is not left to the machine's speed.
LOOP_SECONDS = 240
#: Each part of the example files this test replaces, with what it holds in the example (checked present).
HUB_SETTINGS = ('COURSE_ROOT = "/srv/perceptron-course"', 'GRADER_USER = "grader"', 'VENV = "/srv/perceptron-course/.venv"')
EXAMPLE_VENV, EXAMPLE_ROOT, EXAMPLE_USER = "/srv/perceptron-course/.venv", "/srv/perceptron-course", "grader"

pytestmark = pytest.mark.slow


# ---------------------------------------------------------------------------- what the host needs


def host_problem() -> str:
    """Why this machine cannot run the hub test, or ``""``: root, the users' tools, the hub and its proxy."""
    if os.geteuid() != 0:
        return "the hub test makes Unix users and starts a hub as root (CI runs as root): run it as root"
    missing = [tool for tool in ("useradd", "userdel", "runuser", "unshare", "systemd-analyze") if not shutil.which(tool)]
    if missing:
        return f"missing {', '.join(missing)}: bash scripts/setup.sh installs passwd, util-linux and systemd"
    if not os.access(PROXY, os.X_OK):
        return f"{PROXY} is missing: bash scripts/setup.sh installs it from package.json (npm)"
    if not (VENV / "bin" / "jupyterhub").is_file():
        return "jupyterhub is not installed: bash scripts/setup.sh installs the dev extra, which holds it"
    return ""


# ---------------------------------------------------------------------------- folders other users cannot enter


def closed_folders(paths: list[Path]) -> list[Path]:
    """The folders on the way to ``paths`` (and those of ``paths`` that are folders) that others cannot enter.

    A folder without the execute bit for others stops a user who is neither its owner nor in its group, whatever lies
    below it. Shallowest first: the order in which ``view_script`` opens them.
    """
    found: set[Path] = set()
    for path in paths:
        path = path.resolve()
        for folder in [*reversed(path.parents), *([path] if path.is_dir() else [])]:
            if not folder.stat().st_mode & stat.S_IXOTH:
                found.add(folder)
    return sorted(found, key=lambda folder: len(folder.parts))


def view_script(needed: list[Path]) -> str:
    """A shell script, run as root in a new mount namespace, that lets every user reach ``needed``; then runs ``"$@"``.

    Each folder of ``closed_folders(needed)`` is bound aside (under a tmpfs of the namespace's own on ``/dev/shm``,
    which only root can enter), covered by an empty tmpfs others can enter, and the entries of it on the way to
    ``needed`` (all of them, for a folder that is itself needed) are bound back at their own paths. Paths stay the
    same (the venv's links and scripts name absolute paths); the mounts exist only in this namespace.
    """
    needed = [path.resolve() for path in needed]
    lines = ["set -eu", "mount -t tmpfs -o mode=1777 tmpfs /dev/shm", "mkdir -m 700 /dev/shm/.aside"]
    for index, folder in enumerate(closed_folders(needed)):
        if folder in needed:
            entries = sorted(entry.name for entry in os.scandir(folder))
        else:
            entries = sorted({path.relative_to(folder).parts[0] for path in needed if folder in path.parents})
        aside = f"/dev/shm/.aside/{index}"
        lines += [f"mkdir {aside}", f"mount --rbind {shlex.quote(str(folder))} {aside}",
                  f"mount -t tmpfs -o mode=0755,size=1m tmpfs {shlex.quote(str(folder))}"]
        for entry in entries:
            source, target = shlex.quote(f"{aside}/{entry}"), shlex.quote(str(folder / entry))
            lines.append(f"if [ -d {source} ] && [ ! -L {source} ]; then mkdir {target}; else touch {target}; fi")
            lines.append(f"mount --rbind {source} {target}")
    lines.append('exec "$@"')
    return "\n".join(lines)


# ---------------------------------------------------------------------------- local users


@dataclass
class LocalUsers:
    """Unix users made for one run (unique names), removed with their homes by ``remove``."""

    names: list[str] = field(default_factory=list)

    def add(self, prefix: str) -> str:
        name = f"{prefix}{secrets.token_hex(3)}"
        subprocess.run(["useradd", "--create-home", "--user-group", "--shell", "/bin/sh", name], check=True,
                       capture_output=True, text=True)
        self.names.append(name)
        return name

    def remove(self) -> None:
        """End whatever these users still run (processes of this test), then delete them and their homes."""
        for name in self.names:
            uid = pwd.getpwnam(name).pw_uid
            for pid in processes_of(uid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            wait_until(lambda: not processes_of(uid), what=f"the processes of {name} to end", patience=30)
            subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def processes_of(uid: int) -> list[int]:
    """Every process whose real user is ``uid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    found.append(int(entry.name))
    return found


def home_of(user: str) -> Path:
    return Path(pwd.getpwnam(user).pw_dir)


def give(path: Path, user: str) -> None:
    """``chown -R user: path`` (without following links)."""
    subprocess.run(["chown", "-R", "--no-dereference", f"{user}:{user}", str(path)], check=True)


# ---------------------------------------------------------------------------- waiting


def wait_until(condition, *, what: str, patience: float = PATIENCE, logs=lambda: "", pause: float = 0.5):
    """Call ``condition`` until it returns something true (returned), or fail after ``patience`` seconds with ``logs``."""
    deadline = time.monotonic() + patience
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what} after {patience:.0f} s\n{logs()}")
        time.sleep(pause)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---------------------------------------------------------------------------- the examples, with this test's settings


def filled_in(example: Path, replacements: dict[str, str]) -> str:
    """The text of ``example`` with each key replaced by its value; each key must be there (else the example changed)."""
    text = example.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, f"{example.relative_to(FIXTURES)} no longer holds {old!r}: update {Path(__file__).name} with it"
        text = text.replace(old, new)
    return text


def hub_example(course_root: Path, grader: str) -> str:
    values = (f"COURSE_ROOT = {str(course_root)!r}", f"GRADER_USER = {grader!r}", f"VENV = {str(VENV)!r}")
    return filled_in(HUB_EXAMPLE, dict(zip(HUB_SETTINGS, values)))


def unit_example(course_root: Path, grader: str) -> str:
    return filled_in(UNIT_EXAMPLE, {EXAMPLE_VENV: str(VENV), EXAMPLE_ROOT: str(course_root),
                                    f"User={EXAMPLE_USER}\n": f"User={grader}\n", f"Group={EXAMPLE_USER}\n": f"Group={grader}\n"})


def hub_config(config_text: str):
    """A hub configuration's text, read as the hub's own config loader reads it."""
    from traitlets.config.loader import PyFileConfigLoader

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "jupyterhub_config.py").write_text(config_text, encoding="utf-8")
        return PyFileConfigLoader("jupyterhub_config.py", path=folder).load_config()


def services_of(config_text: str) -> list[dict]:
    """The services a hub configuration's text declares."""
    services = hub_config(config_text).JupyterHub.services
    return list(services) if isinstance(services, list) else services.get_value([])


# ---------------------------------------------------------------------------- the hub


@dataclass
class Hub:
    """A running hub and what the test needs to talk to it and to its service."""

    process: subprocess.Popen
    url: str
    token: str
    log: Path
    view: str
    course: Course
    exchange: Path
    grader: str
    students: list[str]

    def logs(self) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return f"--- the hub's log (with the service's output), last lines ---\n{text[-12000:]}"

    def api(self, path: str):
        request = urllib.request.Request(f"{self.url}/hub/api/{path}", headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def service(self) -> dict:
        """The grading service as the hub reports it (``/hub/api/services``), once it has a process; else ``{}``."""
        try:
            model = self.api("services").get(SERVICE, {})
        except OSError:
            return {}
        return model if model.get("pid") else {}

    def run_as(self, user: str, *command: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
        """``command`` as ``user`` (``runuser``), in the view, with a plain environment."""
        environment = [f"HOME={home_of(user)}", f"USER={user}", f"PATH={VENV / 'bin'}:/usr/bin:/bin", "LANG=C.UTF-8"]
        result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", self.view, "view",
                                 "runuser", "-u", user, "--", "env", "-i", *environment, "sh", "-c",
                                 'cd "$1" && shift && exec "$@"', "in", str(cwd), *command],
                                capture_output=True, text=True, timeout=PATIENCE)
        if check:
            assert result.returncode == 0, (f"{' '.join(command)} as {user} failed:\n{result.stdout}\n{result.stderr}"
                                            f"\n{self.logs()}")
        return result

    def nbgrader(self, user: str, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
        return self.run_as(user, str(VENV / "bin" / "nbgrader"), *args, f"--course={COURSE_ID}",
                           f"--Exchange.root={self.exchange}", cwd=cwd, check=check)

    def work_on(self, student: str, notebook) -> None:
        """``student`` fetches the assignment (``nbgrader fetch_assignment``) and replaces the notebook with ``notebook``."""
        home = home_of(student)
        if not (home / ASSIGNMENT).is_dir():
            self.nbgrader(student, "fetch_assignment", ASSIGNMENT, cwd=home)
        target = home / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        nbformat.write(notebook, target)
        give(target, student)

    def submit(self, student: str) -> None:
        self.nbgrader(student, "submit", ASSIGNMENT, cwd=home_of(student))

    def grading_now(self) -> list[str]:
        """``student/assignment`` of each hand-in ``perceptron-course status`` (run as the grader) says is being graded."""
        lines = self.run_as(self.grader, str(VENV / "bin" / "course-grader"), "status", "--root", str(self.course.root),
                            cwd=self.course.root).stdout.splitlines()
        start = next((k for k, line in enumerate(lines) if line.startswith("grading now:")), len(lines))
        return [line.split()[0] for line in itertools.takewhile(lambda line: line.startswith("  "), lines[start + 1:])]

    def fetched_page(self, student: str) -> str:
        """The page ``nbgrader fetch_feedback`` gives ``student`` now, or ``""`` if none yet."""
        home = home_of(student)
        self.nbgrader(student, "fetch_feedback", ASSIGNMENT, cwd=home, check=False)
        pages = sorted((home / ASSIGNMENT / "feedback").glob(f"*/{NOTEBOOK}.html"))
        return pages[-1].read_text(encoding="utf-8") if pages else ""

    def released_feedback(self) -> list[Path]:
        """The feedback files in the exchange (what ``fetch_feedback`` looks for)."""
        return sorted((self.exchange / COURSE_ID / "feedback").glob("*.html"))

    def service_never_exited(self) -> bool:
        """Whether the hub never had to start its service again (it logs each exit of a managed service)."""
        return f"Service {SERVICE} exited with status" not in self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        """Stop the hub (it stops its services and its proxy); kill what is left of them, by process id."""
        service_pid = self.service().get("pid", 0) if self.process.poll() is None else 0
        started = {pid: started_at(pid) for pid in {*descendants(self.process.pid), *descendants(service_pid)} - {0}}
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pid, moment in started.items():
            if moment and started_at(pid) == moment:  # still the same process, not a new one with its number
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def started_at(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from /proc), or ``""`` if there is none."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def start_hub(folder: Path, *, course: Course, exchange: Path, grader: str, students: list[str]) -> Hub:
    """Start a hub on 127.0.0.1 whose configuration is the example's service and a probe token to read its API."""
    token = secrets.token_hex(32)
    public, internal, proxy_api = free_port(), free_port(), free_port()
    configuration = "\n".join([
        "c = get_config()  # noqa: F821",
        f"c.JupyterHub.bind_url = 'http://127.0.0.1:{public}'",
        f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{internal}'",
        f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{proxy_api}'",
        f"c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]",
        f"c.ConfigurableHTTPProxy.pid_file = {str(folder / 'proxy.pid')!r}",
        f"c.JupyterHub.db_url = 'sqlite:///{folder / 'jupyterhub.sqlite'}'",
        f"c.JupyterHub.cookie_secret_file = {str(folder / 'jupyterhub_cookie_secret')!r}",
        f"c.JupyterHub.pid_file = {str(folder / 'jupyterhub.pid')!r}",
        "c.JupyterHub.authenticator_class = 'null'  # nobody logs in: the test reads the API with a token",
        "c.Authenticator.any_allow_config = True",
        f"c.JupyterHub.services = [{{'name': 'test-probe', 'api_token': {token!r}}}]",
        "c.JupyterHub.load_roles = [{'name': 'test-probe', 'scopes': ['list:services', 'read:services'],"
        " 'services': ['test-probe']}]",
        "",
        "# ---- fixtures/hub/jupyterhub_config.py, with this test's settings",
        hub_example(course.root, grader),
        "# the fixture course's library, which a real course installs into its virtual environment",
        f"c.JupyterHub.services[-1]['environment']['PYTHONPATH'] = {str(FIXTURE_LIBRARY)!r}",
    ])
    (folder / "jupyterhub_config.py").write_text(configuration, encoding="utf-8")
    view = view_script([VENV, Path(sys.base_prefix), Path(os.path.realpath(sys.executable)), CHECKOUT, folder.parent])
    log = folder / "hub.log"
    environment = {"PATH": f"{VENV / 'bin'}:{PROXY.parent}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                   "HOME": str(folder)}
    with log.open("wb") as output:
        process = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", view, "view",
                                    str(VENV / "bin" / "jupyterhub"), "-f", str(folder / "jupyterhub_config.py")],
                                   cwd=folder, env=environment, stdout=output, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    return Hub(process=process, url=f"http://127.0.0.1:{public}", token=token, log=log, view=view, course=course,
               exchange=exchange, grader=grader, students=students)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A course released to an exchange, a grader and three students, and a hub running the example's service."""
    problem = host_problem()
    if problem:
        pytest.fail(problem)
    area = tmp_path_factory.mktemp("serve-hub")
    area.chmod(0o755)  # the test's own folder: the grader and the students go through it (its parents: view_script)
    users = LocalUsers()
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(users.remove)
        grader = users.add("pcgrader")
        students = [users.add("pcs") for _ in range(3)]
        exchange = area / "exchange"
        exchange.mkdir()
        exchange.chmod(0o1777)  # nbgrader's exchange: everyone writes, nobody deletes another's files
        course = copy_course(fixture_course(), area / "course")
        config = course.root / "nbgrader_config.py"
        config.write_text(config.read_text(encoding="utf-8") + f"\nc.Exchange.root = {str(exchange)!r}\n", encoding="utf-8")
        term = course.root / "term.toml"  # an endless loop then holds its grading slot far longer than any step here
        text = term.read_text(encoding="utf-8")
        assert "cell_seconds = " in text and "notebook_seconds = " in text
        term.write_text(re.sub(r"notebook_seconds = \d+", f"notebook_seconds = {LOOP_SECONDS + 60}",
                               re.sub(r"cell_seconds = \d+", f"cell_seconds = {LOOP_SECONDS}", text)), encoding="utf-8")
        assert main(["release", "--root", str(course.root), "--assignment", ASSIGNMENT]) == 0
        # docs/hosting.md's set-up of the course folder: the grader's, closed to every other account
        give(course.root, grader)
        course.root.chmod(0o700)
        for user in (grader, *students):  # docs/hosting.md: every account's home closed to the others
            home_of(user).chmod(0o700)
        (area / "hub").mkdir(mode=0o700)  # docs/hosting.md: the hub's folder (its database, its log) root's alone
        (area / "hub").chmod(0o700)
        hub = start_hub(area / "hub", course=course, exchange=exchange, grader=grader, students=students)
        cleanup.callback(hub.stop)
        # The instructor releases the assignment to the exchange, as the grader (who then owns its inbound folder).
        hub.nbgrader(grader, "release_assignment", ASSIGNMENT, cwd=course.root)
        # docs/hosting.md: the exchange's feedback folder, before any feedback (else Fetch Feedback logs a critical error)
        hub.run_as(grader, "mkdir", "-m", "0711", str(exchange / COURSE_ID / "feedback"), cwd=course.root)
        wait_until(lambda: hub.process.poll() is not None or hub.service(), what="the hub to start its service",
                   logs=hub.logs)
        assert hub.process.poll() is None, f"the hub stopped\n{hub.logs()}"
        yield hub


# ---------------------------------------------------------------------------- the tests


def total_row(page: str) -> tuple[float, float]:
    """``(score, max_score)`` of a feedback page's Total row."""
    found = re.search(r'<th>Total</th><td></td><th class="score">([0-9.]+) / ([0-9.]+)</th>', page)
    assert found, "the feedback page has no Total row"
    return float(found.group(1)), float(found.group(2))


def test_the_hub_runs_the_example_service_as_the_grader(hub):
    model = hub.service()
    assert model, hub.logs()
    command = services_of(hub_example(hub.course.root, hub.grader))[0]["command"]
    assert model["command"] == command and model["command"][1] == "serve"
    status = Path(f"/proc/{model['pid']}/status").read_text()
    real_uid = int(re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE).group(1))
    assert real_uid == pwd.getpwnam(hub.grader).pw_uid, "the service does not run as the grader"
    assert os.readlink(f"/proc/{model['pid']}/cwd") == str(hub.course.root)
    assert hub.service_never_exited(), hub.logs()


def test_a_hand_in_submitted_with_nbgrader_comes_back_as_feedback_with_its_score(hub):
    student = hub.students[0]
    hub.work_on(student, solved_notebook(hub.course, ASSIGNMENT, NOTEBOOK))
    early = hub.nbgrader(student, "fetch_feedback", ASSIGNMENT, cwd=home_of(student), check=False)  # before any feedback
    assert early.returncode == 0 and "CRITICAL" not in early.stderr and "Traceback" not in early.stderr, early.stderr
    hub.submit(student)
    page = wait_until(lambda: hub.fetched_page(student), what=f"{student}'s feedback from nbgrader fetch_feedback",
                      logs=hub.logs, pause=1.0)
    points = hub.course.graded_cells(ASSIGNMENT)
    by_hand = set(hub.course.manually_graded_cells(ASSIGNMENT))
    assert total_row(page) == (sum(v for k, v in points.items() if k not in by_hand), sum(points.values())), page[-3000:]
    assert f"Feedback: {NOTEBOOK}" in page
    assert hub.service_never_exited(), hub.logs()
    # The hub's log holds the service's output: nbgrader's SQLAlchemy notes (SAWarning) stay out of it.
    assert "Warning" not in hub.log.read_text(encoding="utf-8", errors="replace"), hub.logs()


#: What the set-up, ``release`` and the service made of the course that a student must never read (after a hand-in).
SECRET_PATHS = ("source", f"source/{ASSIGNMENT}/hidden_checks.py", "gradebook.db", "grading_secret", "submitted",
                "autograded", "feedback", "handins", "grades.csv", "release")
#: Run as a student: each path they can read (``cat``, ``ls``) or write (append nothing, make a file in a folder).
PROBE = """for p; do
  if [ -d "$p" ]; then
    ls -a "$p" >/dev/null 2>&1 && echo "read $p"
    (: > "$p/.student-probe") 2>/dev/null && echo "wrote $p"
  else
    cat "$p" >/dev/null 2>&1 && echo "read $p"
    (: >> "$p") 2>/dev/null && echo "wrote $p"
  fi
done
true  # the last attempt's failure is not the probe's"""


def student_reaches(hub: Hub, student: str, paths: list[Path]) -> set[tuple[str, Path]]:
    """``("read" | "wrote", path)`` for each of ``paths`` that ``student`` really read or wrote (``PROBE``)."""
    result = hub.run_as(student, "sh", "-c", PROBE, "probe", *map(str, paths), cwd=home_of(student))
    return {(line.split(" ", 1)[0], Path(line.split(" ", 1)[1])) for line in result.stdout.splitlines()}


def doctor(hub: Hub, student: str) -> tuple[int, str]:
    """``perceptron-course doctor --all --as student`` run by root in the view the students' commands see (the test's
    folders on the way opened as ``view_script`` opens them): its exit status and its screen."""
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", hub.view, "view",
                             str(VENV / "bin" / "course-grader"), "doctor", "--root", str(hub.course.root), "--as",
                             student, "--all"], capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode in (0, 1), f"{result.stdout}\n{result.stderr}"
    return result.returncode, result.stdout


def doctor_reaches(screen: str, root: Path) -> set[tuple[str, Path]]:
    """``("read" | "wrote", path)`` for each open path the screen of ``doctor --all`` names."""
    found = set()
    for line in screen.splitlines():
        if line.startswith("    ") and line.endswith(")") and " (" in line:
            shown, what = line.strip().rsplit(" (", 1)
            path = root if shown == "./" else root / shown.rstrip("/")
            found |= {(verb, path) for word, verb in (("readable", "read"), ("writable", "wrote")) if word in what}
    return found


def outside_paths(hub: Hub, student: str) -> list[Path]:
    """What a student could try outside the course: every other person's home (uid 1000 and up, as useradd numbers
    them) and nbgrader's cache in it, and the files of the hub's folder (this test's hub runs in ``hub.log``'s)."""
    me = pwd.getpwnam(student).pw_uid
    paths = []
    for entry in pwd.getpwall():
        home = Path(entry.pw_dir)
        if 1000 <= entry.pw_uid <= 60000 and entry.pw_uid != me and home != Path("/") and home.is_dir():
            paths += [home, *([home / NBGRADER_CACHE] if (home / NBGRADER_CACHE).is_dir() else [])]
    return paths + sorted(path for path in hub.log.parent.iterdir() if path.is_file())


def test_doctor_finds_the_course_closed_as_a_student_does_and_names_what_is_opened(hub):
    """The course as docs/hosting.md sets it up, after a hand-in graded by the service: ``doctor`` says closed, and a
    student who tries each path reads and writes none. With the course folder and the gradebook opened, the student
    reads the gradebook and what came with the checkout, nothing else the service or ``release`` made, and ``doctor``
    names exactly what the student reaches."""
    root, student = hub.course.root, hub.students[0]
    secrets_ = [root / name for name in SECRET_PATHS]  # the hand-in test before this one left a graded hand-in
    # (the service writes grades.csv and the report after it releases the feedback)
    wait_until(lambda: all(os.path.lexists(path) for path in secrets_), logs=hub.logs,
               what=f"the service's files of a graded hand-in: {[p.name for p in secrets_ if not os.path.lexists(p)]}")
    everything = [root, *(Path(folder) / name for folder, folders, files in os.walk(root) for name in folders + files)]
    status, screen = doctor(hub, student)
    assert "closed: a student account can neither read nor write any of them" in screen, screen
    assert "sandbox: yes" in screen and "WRONG" not in screen and f"managed service {SERVICE!r}" in screen, screen
    assert student_reaches(hub, student, everything) == set()
    # Outside the course: what the student really reaches (the machine's own accounts may have open homes; this
    # test's accounts and its hub are set up as the guide says) is what doctor names, and its verdict follows.
    outside = outside_paths(hub, student)
    reached = student_reaches(hub, student, outside)
    assert {item for item in doctor_reaches(screen, root) if item[1] in outside} == reached, screen
    ours = {home_of(user) for user in (hub.grader, *hub.students)} | {hub.log, hub.log.parent / "jupyterhub.sqlite"}
    assert not {path for _, path in reached} & ours, reached
    assert status == (1 if reached else 0), screen
    gradebook = root / "gradebook.db"
    try:
        root.chmod(0o711)  # a TA opens the course folder to others, and the gradebook to everyone
        gradebook.chmod(0o644)
        reached = student_reaches(hub, student, everything)
        made = {path for path in everything if path != root and path.relative_to(root).parts[0] in
                {"grading_secret", "submitted", "autograded", "feedback", "handins", "grades.csv",
                 "grades_by_student.csv", "reports"}}  # (release/ and source/ came with the copied course, as in git)
        assert ("read", gradebook) in reached and not {path for _, path in reached} & made, reached
        status, screen = doctor(hub, student)
        assert reached == {item for item in doctor_reaches(screen, root) if item[1] in everything}, screen
        assert status == 1 and "    gradebook.db (readable)" in screen and "verdict: NOT READY" in screen, screen
    finally:
        gradebook.chmod(0o600)
        root.chmod(0o700)


def test_doctor_names_a_classmates_open_home_and_the_cache_of_secrets_in_it(hub):
    """A home left as useradd makes it on many systems (0755): the classmate lists it and reads nbgrader's cache (the
    secret of each hand-in), and doctor says so, by path, with the verdict NOT READY."""
    student, classmate = hub.students[1], hub.students[0]  # the classmate handed in (the hand-in test, before this)
    home = home_of(classmate)
    assert (home / NBGRADER_CACHE).is_dir()
    try:
        home.chmod(0o755)
        reached = student_reaches(hub, student, [home, home / NBGRADER_CACHE])
        assert reached == {("read", home), ("read", home / NBGRADER_CACHE)}, reached
        status, screen = doctor(hub, student)
        assert reached <= doctor_reaches(screen, hub.course.root), screen
        assert status == 1 and "verdict: NOT READY" in screen and "chmod 700 each home" in screen, screen
    finally:
        home.chmod(0o700)


def test_an_endless_hand_in_does_not_hold_up_another_students_feedback(hub):
    """eve's notebook loops forever; ada hands in while it is being graded, and gets her feedback before eve's is out.

    The order of events, not seconds: ada submits once ``perceptron-course status`` says eve's hand-in is being graded,
    and eve's cannot finish before the course's cell time limit (``LOOP_SECONDS``), far beyond ada's whole round trip.
    """
    eve, ada = hub.students[1], hub.students[2]
    endless = solved_notebook(hub.course, ASSIGNMENT, NOTEBOOK)
    solution = next(cell for cell in endless.cells if cell.metadata.get("nbgrader", {}).get("solution"))
    solution.source = "while True:\n    pass\n"
    hub.work_on(eve, endless)
    hub.work_on(ada, solved_notebook(hub.course, ASSIGNMENT, NOTEBOOK))
    before = set(hub.released_feedback())
    hub.submit(eve)
    wait_until(lambda: f"{eve}/{ASSIGNMENT}" in hub.grading_now(), what="perceptron-course status to show eve's hand-in "
               "being graded", logs=hub.logs)
    hub.submit(ada)
    page = wait_until(lambda: hub.fetched_page(ada), what=f"{ada}'s feedback while {eve}'s notebook loops",
                      logs=hub.logs, pause=1.0)
    assert "Feedback" in page
    assert f"{eve}/{ASSIGNMENT}" in hub.grading_now() and hub.fetched_page(eve) == "", \
        f"eve's endless hand-in was no longer being graded when ada's feedback came\n{hub.logs()}"
    assert len(set(hub.released_feedback()) - before) == 1, "more than ada's feedback was released"
    assert hub.service_never_exited(), hub.logs()


def test_the_example_leaves_the_students_servers_and_the_proxy_running_when_the_hub_stops():
    """JupyterHub stops every single-user server and its proxy when it stops, unless told not to (``cleanup_servers``,
    ``cleanup_proxy``): the example tells it, so that restarting the hub to restart its service ends no session."""
    from jupyterhub.app import JupyterHub

    hub = JupyterHub(config=hub_config("c = get_config()\n" + hub_example(Path("/srv/course"), "grader")))
    assert (hub.cleanup_servers, hub.cleanup_proxy) == (False, False)
    assert (JupyterHub().cleanup_servers, JupyterHub().cleanup_proxy) == (True, True), "JupyterHub's defaults changed"


def test_the_systemd_unit_runs_what_the_hub_runs_and_systemd_accepts_it(hub, tmp_path):
    unit = tmp_path / "perceptron-course-serve.service"
    unit.write_text(unit_example(hub.course.root, hub.grader), encoding="utf-8")
    verified = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0 and not verified.stderr.strip(), verified.stderr
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # systemd's keys are case-sensitive
    parser.read_string(unit.read_text(encoding="utf-8"))
    service = parser["Service"]
    hub_service = services_of(hub_example(hub.course.root, hub.grader))[0]
    assert shlex.split(service["ExecStart"]) == hub_service["command"]
    assert service["User"] == hub_service["user"] and service["WorkingDirectory"] == hub_service["cwd"]
    environment = dict(item.split("=", 1) for item in shlex.split(service["Environment"]))
    assert environment == hub_service["environment"]
    arguments = build_parser().parse_args(hub_service["command"][1:])  # the CLI takes every option the examples give
    assert Path(arguments.root) == hub.course.root


def test_stopping_the_hub_stops_its_service_and_leaves_the_proxy_and_the_students_servers_running(hub):
    """Last of this file: it stops the hub. With the example's ``cleanup_servers`` and ``cleanup_proxy``, the hub
    stops its managed service and leaves the proxy (and any student's server) running (docs/hosting.md, "Stopping and
    restarting the service and the hub")."""
    proxy = int((hub.log.parent / "proxy.pid").read_text(encoding="utf-8").strip())
    proxy_started, service = started_at(proxy), hub.service().get("pid", 0)
    assert proxy_started and service, hub.logs()
    hub.process.send_signal(signal.SIGTERM)
    try:
        hub.process.wait(timeout=PATIENCE)
        log = hub.log.read_text(encoding="utf-8", errors="replace")
        assert "Leaving single-user servers running" in log and "Leaving proxy running" in log, hub.logs()
        assert started_at(proxy) == proxy_started, "the hub stopped its proxy"
        wait_until(lambda: not started_at(service), what="the hub to stop its service", logs=hub.logs)
    finally:
        if started_at(proxy) == proxy_started:  # still the same process: this test's to end
            os.kill(proxy, signal.SIGKILL)
