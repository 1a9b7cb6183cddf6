"""``perceptron-course lab``: JupyterLab for the TA, with a formgrader that works on a fresh clone.

nbgrader stamps and migrates its gradebook with the ``alembic`` executable, found on
``PATH``. A JupyterLab started without activating the environment cannot find it: the
formgrader's first visit fails (HTTP 500) and leaves a gradebook without its
``alembic_version`` table. So this command creates (or repairs, or migrates) the gradebook
first, then starts JupyterLab in the course folder with this environment's scripts first
on ``PATH``, nbgrader's server extensions on, listening on loopback only. Its terminals keep
them first too: a terminal's shell reads the TA's start-up files, then ``lab_terminal_rc.sh``
(JupyterLab's own default, a login shell when not started from a terminal, reads
``/etc/profile``, which sets ``PATH`` anew).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from .course.course import Course, CourseError, nbgrader_api
from .course.nbgrader_patches import head_revision

#: The formgrader and the student-side extensions (assignment list, courses).
NBGRADER_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.course_list",
)
#: Turned off although nbgrader's install turns them on: Validate runs the notebook it is given (a student's
#: hand-in under submitted/ too) in an ordinary kernel, as the TA, outside the grading sandbox.
DISABLED_SERVER_EXTENSIONS = ("nbgrader.server_extensions.validate_assignment",)
LOOPBACK = "127.0.0.1"
#: Read by each terminal's shell after the TA's own start-up files: this environment's scripts first on PATH.
TERMINAL_RC = Path(__file__).with_name("lab_terminal_rc.sh")
#: The environment variable that tells ``TERMINAL_RC`` which folder to put first.
SCRIPTS_VARIABLE = "COURSE_GRADER_SCRIPTS"


def environment_scripts() -> Path:
    """The folder holding this environment's executables (``jupyter``, ``alembic``, ``nbgrader``)."""
    return Path(sys.executable).parent


def _alembic(db_url: str, *arguments: str) -> None:
    """Run this environment's ``alembic`` on nbgrader's migrations for ``db_url`` (by path, not from PATH)."""
    from nbgrader.dbutil import write_alembic_ini

    with tempfile.TemporaryDirectory(prefix="course-grader-alembic-") as folder:
        ini = Path(folder) / "alembic.ini"
        write_alembic_ini(str(ini), db_url)
        done = subprocess.run([str(environment_scripts() / "alembic"), "-c", str(ini), *arguments],
                              capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CourseError(f"alembic {' '.join(arguments)} failed on {db_url}: {done.stderr.strip()[-500:]}")


def _recorded_revision(gradebook: Path) -> str | None:
    """The migration the gradebook records, or ``None`` when it has no ``alembic_version`` table."""
    with sqlite3.connect(gradebook) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "alembic_version" not in tables:
            return None
        row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    return row[0] if row else None


def prepare_gradebook(course: Course) -> Path:
    """Create the course's gradebook, or bring an existing one to nbgrader's newest schema.

    A gradebook whose tables were made without its ``alembic_version`` (a formgrader visit
    that could not find ``alembic``) is stamped as the newest schema, which its tables are.
    An older one is copied to ``gradebook.db.<time>`` before it is migrated.

    Returns
    -------
    Path
        The gradebook file.
    """
    api = nbgrader_api(course)  # puts this environment's scripts on PATH for nbgrader
    db_url = api.coursedir.db_url
    if not db_url.startswith("sqlite:///"):
        raise CourseError(f"only an SQLite gradebook can be prepared here; the course uses {db_url}")
    gradebook = Path(db_url.removeprefix("sqlite:///"))
    with api.gradebook:  # creates and stamps a new gradebook
        pass
    revision, head = _recorded_revision(gradebook), head_revision()
    if revision is None:
        _alembic(db_url, "stamp", head)
    elif revision != head:
        shutil.copy2(gradebook, gradebook.with_name(f"{gradebook.name}.{datetime.now():%Y-%m-%d-%H%M%S}"))
        _alembic(db_url, "upgrade", "head")
    return gradebook


def lab_environment() -> dict[str, str]:
    """This process's environment with the environment's scripts first on ``PATH``, and named for the terminals."""
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join(filter(None, [str(environment_scripts()), environment.get("PATH")]))
    environment[SCRIPTS_VARIABLE] = str(environment_scripts())
    environment["ENV"] = str(TERMINAL_RC)  # what an interactive POSIX sh reads (where there is no bash)
    return environment


def terminal_command() -> list[str]:
    """The shell of the lab's terminals: an interactive bash reading :data:`TERMINAL_RC`, else an interactive sh."""
    bash = shutil.which("bash")
    return [bash, "--rcfile", str(TERMINAL_RC), "-i"] if bash else [shutil.which("sh") or "/bin/sh", "-i"]


def lab_arguments(course: Course, port: int | None, open_browser: bool) -> list[str]:
    """The command line that starts JupyterLab on the course folder, on loopback, with nbgrader's extensions."""
    arguments = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={course.root}", f"--ServerApp.ip={LOOPBACK}"]
    arguments += [f"--ServerApp.jpserver_extensions={extension}=True" for extension in NBGRADER_SERVER_EXTENSIONS]
    arguments += [f"--ServerApp.jpserver_extensions={extension}=False" for extension in DISABLED_SERVER_EXTENSIONS]
    arguments.append(f"--ServerApp.terminado_settings=shell_command={json.dumps(terminal_command())}")
    if port is not None:
        arguments += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if not open_browser:
        arguments.append("--no-browser")
    if os.geteuid() == 0:  # containers and CI run as root; the server listens on loopback only
        arguments.append("--allow-root")
    return arguments


def start_lab(course: Course, port: int | None = None, open_browser: bool = True) -> None:
    """Prepare the gradebook, then become JupyterLab (this process is replaced)."""
    prepare_gradebook(course)
    os.chdir(course.root)  # nbgrader's extensions read nbgrader_config.py from the working folder
    arguments = lab_arguments(course, port, open_browser)
    os.execve(arguments[0], arguments, lab_environment())
