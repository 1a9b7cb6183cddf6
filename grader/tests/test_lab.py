"""`perceptron-course lab`: the formgrader works on a fresh course copy, with PATH lacking the environment."""

import contextlib
import json
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from conftest import fixture_course
from alembic.script import ScriptDirectory
from nbgrader.api import Base
from nbgrader.dbutil import ALEMBIC_DIR
from sqlalchemy import create_engine

from course_grader.trusted.course.example_class import copy_course
from course_grader.trusted.lab import prepare_gradebook

SCRIPTS = Path(sys.executable).parent
#: A PATH as a TA's shell has it before activating anything: no alembic, jupyter or nbgrader.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
STARTUP_LIMIT_SECONDS = 300  # a cap on waiting, not a measurement: a server that never answers fails


NEWEST_SCHEMA = ScriptDirectory(ALEMBIC_DIR).get_current_head()  # of the installed nbgrader


def tables_and_revision(gradebook: Path) -> tuple[set[str], list[str]]:
    with sqlite3.connect(gradebook) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        revisions = [row[0] for row in connection.execute("SELECT version_num FROM alembic_version")] if "alembic_version" in tables else []
    return tables, revisions


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str, token: str) -> tuple[int, str]:
    """Status and body of a GET, following redirects with the token (as a header, which redirects keep)."""
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def wait_until_serving(server: subprocess.Popen, url: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT_SECONDS
    while time.monotonic() < deadline:
        assert server.poll() is None, f"JupyterLab exited with {server.returncode}: {log.read_text()[-3000:]}"
        try:
            if get(url, token)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer {url} within {STARTUP_LIMIT_SECONDS} s")


@contextlib.contextmanager
def serving_lab(course_root: Path, tmp_path: Path, *, system_path: bool = True,
                extra_environment: dict[str, str] | None = None) -> Iterator[tuple[str, str, Path]]:
    """``perceptron-course lab --root course_root`` until the block ends; yields (base url, token, log).

    ``system_path``: a PATH as a TA's shell has it before activating anything (else this process's environment).
    """
    token, port = secrets.token_hex(16), free_port()
    environment = {"PATH": SYSTEM_PATH} if system_path else dict(os.environ)
    environment.update({"HOME": str(tmp_path / "home"), "JUPYTER_TOKEN": token, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
                        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), **(extra_environment or {})})
    command = [str(SCRIPTS / "course-grader"), "lab", "--root", str(course_root), "--port", str(port), "--no-browser"]
    log_path = tmp_path / "lab.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(command, env=environment, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(server, f"{base}/api/status", token, log_path)
            yield base, token, log_path
        finally:
            server.terminate()
            server.wait(timeout=60)


@pytest.mark.slow
def test_formgrader_works_on_a_fresh_course_without_the_environment_on_path(tmp_path):
    assert not any((Path(folder) / "alembic").exists() for folder in SYSTEM_PATH.split(":")), "the premise: no alembic on PATH"
    course = copy_course(fixture_course(), tmp_path / "course")
    runtime = tmp_path / "runtime"
    with serving_lab(course.root, tmp_path) as (base, token, log_path):
        status, page = get(f"{base}/formgrader", token)
        assert status == 200, log_path.read_text()[-3000:]
        assert "Manage Assignments" in page
        status, listing = get(f"{base}/formgrader/api/assignments", token)
        assert status == 200, log_path.read_text()[-3000:]
        assert {assignment["name"] for assignment in json.loads(listing)} >= {"01_geometry", "06_limitations"}
        # Validate would run a hand-in under submitted/ in an ordinary kernel, as the TA: it is not served
        validate = urllib.request.Request(f"{base}/assignments/validate", method="POST", headers={"Authorization": f"token {token}"},
                                          data=b"path=submitted/ada/01_geometry/geometry.ipynb")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(validate, timeout=120)
        refused.value.close()  # an HTTPError holds the response open
        assert refused.value.code == 404, log_path.read_text()[-3000:]
        [server_info] = [json.loads(path.read_text()) for path in runtime.glob("jpserver-*.json")]
        assert server_info["hostname"] == "127.0.0.1" and Path(server_info["root_dir"]) == course.root
    tables, revisions = tables_and_revision(course.root / "gradebook.db")
    assert {"alembic_version", "assignment", "student"} <= tables
    assert revisions == [NEWEST_SCHEMA]


def test_a_gradebook_left_without_its_migration_table_is_stamped(tmp_path):
    course = copy_course(fixture_course(), tmp_path / "course")
    engine = create_engine(f"sqlite:///{course.root / 'gradebook.db'}")
    Base.metadata.create_all(bind=engine)  # what a formgrader visit that could not run alembic leaves
    engine.dispose()
    assert "alembic_version" not in tables_and_revision(course.root / "gradebook.db")[0]
    prepare_gradebook(course)
    assert tables_and_revision(course.root / "gradebook.db")[1] == [NEWEST_SCHEMA]


def test_a_new_gradebook_is_stamped_with_what_the_alembic_program_answers(tmp_path):
    from nbgrader.dbutil import write_alembic_ini

    from course_grader.trusted.course.course import nbgrader_api

    write_alembic_ini(str(tmp_path / "alembic.ini"), f"sqlite:///{tmp_path / 'unused.db'}")
    heads = subprocess.run([str(SCRIPTS / "alembic"), "-c", str(tmp_path / "alembic.ini"), "heads"],
                           capture_output=True, text=True, check=True).stdout
    course = copy_course(fixture_course(), tmp_path / "course")
    with nbgrader_api(course).gradebook:  # nbgrader creates and stamps it, asking this process, not the program
        pass
    assert tables_and_revision(course.root / "gradebook.db")[1] == [heads.split()[0]]


def run_in_terminal(base: str, token: str, command: str) -> str:
    """Open a terminal through the server's API, as JupyterLab's *New → Terminal* does, run ``command``
    in its shell and return what the terminal showed up to a marker the command prints last."""
    import asyncio

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    request = urllib.request.Request(f"{base}/api/terminals", method="POST", data=b"{}",
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        name = json.loads(response.read())["name"]
    marker = secrets.token_hex(8)

    async def converse() -> str:
        socket = await websocket_connect(HTTPRequest(f"{base.replace('http', 'ws', 1)}/terminals/websocket/{name}",
                                                     headers={"Authorization": f"token {token}"}))
        await socket.write_message(json.dumps(["stdin", f"{command}; echo {marker[:8]}''{marker[8:]}\r"]))
        shown = ""
        while marker not in shown:  # the shell's echo of the command holds the marker split in two
            message = await asyncio.wait_for(socket.read_message(), STARTUP_LIMIT_SECONDS)
            assert message is not None, f"the terminal closed; it showed: {shown[-2000:]}"
            kind, *content = json.loads(message)
            if kind == "stdout":
                shown += content[0]
        socket.close()
        return shown

    return asyncio.run(converse())


@pytest.mark.slow
def test_the_lab_terminals_have_the_environment_first_on_path_after_the_shells_start_up_files(tmp_path):
    # The TA's terminal: a login shell (JupyterLab's default when not started from a terminal) reads the
    # profile files, which set PATH anew (Debian's /etc/profile does); an interactive one reads .bashrc,
    # which may too. The TA's files here do both.
    home = tmp_path / "home"
    home.mkdir()
    for start_up in (".profile", ".bash_profile", ".bashrc"):
        (home / start_up).write_text(f"export PATH={SYSTEM_PATH}\n", encoding="utf-8")
    course = copy_course(fixture_course(), tmp_path / "course")
    with serving_lab(course.root, tmp_path, extra_environment={"SHELL": shutil.which("bash")}) as (base, token, _):
        shown = run_in_terminal(base, token, "command -v course-grader; command -v course-selfcheck")
    assert f"{SCRIPTS / 'course-grader'}\r\n" in shown and f"{SCRIPTS / 'course-selfcheck'}\r\n" in shown, shown[-2000:]
