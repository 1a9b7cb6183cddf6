"""A student's session in a real browser: JupyterLab driven through Debian's Chromium.

Opens an assignment from a copy of release/, runs all cells (every stub says it is not
implemented), writes one function by typing it, runs its visible test and sees it pass, saves,
and runs the self-check in a JupyterLab terminal. On failure a screenshot is saved under the
test's tmp dir and its path printed. Needs /usr/bin/chromium (scripts/setup.sh installs it
when run as root) and Playwright's Python package; never ``playwright install``.
"""

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import fixture_course

from course_grader.trusted.course.term import load_term

CHROMIUM = Path("/usr/bin/chromium")
ASSIGNMENT = "01_geometry/geometry.ipynb"
FUNCTION = "augment"
# Typed on one line: the editor's auto-indent cannot change its meaning.
SOLUTION = "def augment(X): return np.hstack([np.ones((len(X), 1)), np.asarray(X, dtype=float)])"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
LAB_SETTINGS = {
    # No requests to the internet, no toasts over the notebook.
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    # xterm.js then mirrors the terminal's text in the DOM, where the test can read it.
    "@jupyterlab/terminal-extension/plugin.jupyterlab-settings": {"screenReaderMode": True},
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's Chromium is missing (/usr/bin/chromium): apt-get install chromium"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is missing: pip install '.[dev]'")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_server(url: str, server: subprocess.Popen, deadline_seconds: float = 60) -> None:
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer {url} within {deadline_seconds} s")


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on 127.0.0.1 (a free port, a token) serving a copy of release/; yields (url, token, folder)."""
    course = tmp_path / "student"
    shutil.copytree(fixture_course() / "release", course)
    shutil.copytree(fixture_course() / "notebooks", course / "lectures")  # as the student bundle ships them beside the assignments
    settings = tmp_path / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values), encoding="utf-8")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
        "SHELL": "/bin/bash",
    }
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={course}",
    ]
    log = (tmp_path / "jupyterlab.log").open("wb")
    server = subprocess.Popen(command, env=env, cwd=course, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(f"{url}/api/status?token={token}", server)
        yield url, token, course
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def cell_defining(page, function: str):
    """The notebook cell whose code starts with ``def function(``."""
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text=f"def {function}(").first


def next_cell(cell):
    return cell.locator("xpath=following-sibling::div[contains(@class, 'jp-CodeCell')][1]")


def wait_until_idle(page) -> None:
    """Wait until the status bar says the kernel is idle."""
    sync_api.expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=30_000)


def click_menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def student_session(page, url: str, token: str, course: Path) -> None:
    page.goto(f"{url}/lab/tree/{ASSIGNMENT}?token={token}")
    stub = cell_defining(page, FUNCTION)
    stub.wait_for(timeout=30_000)
    wait_until_idle(page)

    click_menu(page, "Run", "Run All Cells")
    test_cell = next_cell(stub)
    sync_api.expect(test_cell.locator(".jp-OutputArea-output")).to_contain_text("NotImplementedError", timeout=30_000)

    prompt = test_cell.locator(".jp-InputArea-prompt")
    prompt_after_run_all = prompt.inner_text()

    stub.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(SOLUTION)
    page.keyboard.press("Shift+Enter")  # runs the function's cell and selects its test
    page.keyboard.press("Shift+Enter")  # runs the visible test
    sync_api.expect(prompt).not_to_have_text(prompt_after_run_all, timeout=30_000)
    sync_api.expect(prompt).to_have_text(re.compile(r"\[\d+\]:"), timeout=30_000)  # ran, not "[*]:"
    outputs = test_cell.locator(".jp-OutputArea-output")
    sync_api.expect(outputs).to_have_count(1)
    sync_api.expect(outputs).to_contain_text(FUNCTION)
    sync_api.expect(outputs).not_to_contain_text("Error")

    page.keyboard.press("Control+S")
    notebook_file = course / ASSIGNMENT
    deadline = time.monotonic() + 15
    while "np.hstack" not in notebook_file.read_text(encoding="utf-8") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "np.hstack" in notebook_file.read_text(encoding="utf-8"), "Ctrl+S did not save the notebook"

    click_menu(page, "File", "New")
    page.locator(".lm-Menu-itemLabel", has_text="Terminal").first.click()
    terminal = page.locator(".jp-Terminal").first
    terminal.wait_for(timeout=30_000)
    terminal.click()
    # A login shell (Debian's /etc/profile) resets PATH: activate, as the README tells students. The folder holds
    # the released notebooks only (no installed bundle says the per-cell limit): the limit is the fixture term's.
    seconds = load_term(fixture_course()).limits.cell_seconds
    page.keyboard.type(f"source {Path(sys.executable).parent / 'activate'} && course-selfcheck --timeout {seconds} {ASSIGNMENT}\n")
    sync_api.expect(terminal.locator(".xterm-accessibility-tree")).to_contain_text("1 of 4 visible tests pass", timeout=45_000)


def test_student_fills_a_stub_passes_its_test_and_runs_the_self_check(lab, tmp_path):
    url, token, course = lab
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            user_data_dir=str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        page = context.new_page()
        try:
            student_session(page, url, token, course)
        except Exception:
            screenshot = tmp_path / "browser-failure.png"
            page.screenshot(path=str(screenshot), full_page=True)
            print(f"screenshot of the failure: {screenshot}\nJupyterLab log: {tmp_path / 'jupyterlab.log'}")
            raise
        finally:
            context.close()


def figure_alts(notebook: Path) -> list[str]:
    """The alternative texts the lecture's figures carry, in order (from the notebook file)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [output["metadata"]["image/png"]["alt"] for cell in cells for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})]


def test_jupyterlab_shows_every_lecture_figure_with_its_alt_text(lab, tmp_path):
    url, token, course = lab
    lecture = min((course / "lectures").glob("*.ipynb"), key=lambda path: len(figure_alts(path)) or 99)
    expected = figure_alts(lecture)
    assert expected, f"{lecture.name} has no figure"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{url}/lab/tree/lectures/{lecture.name}?token={token}")
            images = page.locator(".jp-Notebook .jp-OutputArea-output img")
            sync_api.expect(images).to_have_count(len(expected), timeout=60_000)
            assert [images.nth(i).get_attribute("alt") for i in range(len(expected))] == expected
        except Exception:
            page.screenshot(path=str(tmp_path / "browser-failure.png"), full_page=True)
            print(f"screenshot of the failure: {tmp_path / 'browser-failure.png'}")
            raise
        finally:
            browser.close()
