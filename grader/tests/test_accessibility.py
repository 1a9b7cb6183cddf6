"""Every page a student or a TA reads passes axe-core's WCAG 2.1 A and AA rules in Debian's Chromium.

The grader's pages: a feedback page and the TA's report (a course's lectures and assignments are its own website's,
tested with the course). Playwright opens each page from disk with every request off the machine refused (the pages
must not depend on a CDN to be readable), injects npm's axe-core (package.json; scripts/setup.sh installs it into
node_modules/) and fails on any violation. Never ``playwright install``.
"""

import json
from pathlib import Path

import pytest
from conftest import NODE_MODULES, fixture_course

from test_report import class_template  # noqa: F401 - the report's class fixture, its gradebook written through nbgrader's API

COURSE_ROOT = fixture_course()  # the grader's own course
#: What nbconvert writes as an image's alternative text when the notebook gives none.
PLACEHOLDER_ALT = "No description has been provided for this image"
CHROMIUM = Path("/usr/bin/chromium")
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
WCAG_21_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's Chromium is missing (/usr/bin/chromium): apt-get install chromium"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is missing: pip install '.[dev]'")


@pytest.fixture(scope="module")
def browser():
    assert AXE.is_file(), f"npm's axe-core is missing ({AXE}): run scripts/setup.sh (npm install)"
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            yield chromium
        finally:
            chromium.close()


def violations(browser, page_file: Path) -> list[dict]:
    """axe-core's WCAG 2.1 A/AA violations of ``page_file`` opened in Chromium, each with up to 3 of its elements."""
    context = browser.new_context(bypass_csp=True)  # feedback and report pages forbid every script, axe's too
    try:
        page = context.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        page.goto(page_file.resolve().as_uri(), wait_until="load")
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG_21_A_AA)
    finally:
        context.close()
    return [{"rule": found["id"], "help": found["help"],
             "elements": [node["html"][:200] for node in found["nodes"][:3]], "count": len(found["nodes"])}
            for found in result["violations"]]


def assert_accessible(browser, page_file: Path) -> None:
    text = page_file.read_text(encoding="utf-8")
    assert PLACEHOLDER_ALT not in text, f"{page_file.name}: an image carries nbconvert's placeholder alternative text"
    found = violations(browser, page_file)
    assert found == [], f"{page_file.name}: WCAG 2.1 A/AA violations:\n{json.dumps(found, indent=1)}"


def test_an_unlabelled_control_is_a_violation(browser, tmp_path):
    page_file = tmp_path / "control.html"
    page_file.write_text('<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main>'
                         '<input type="range" min="0" max="3"></main></body></html>', encoding="utf-8")
    assert [found["rule"] for found in violations(browser, page_file)] == ["label"]


def test_a_feedback_page_passes_axe(browser, tmp_path):
    from test_feedback import honest_notebook, render_feedback

    page_file = tmp_path / "feedback.html"
    page_file.write_text(render_feedback(honest_notebook(), {"test_augment": (2.0, 2.0), "test_predict": (0.0, 2.0)},
                                         tmp_path), encoding="utf-8")
    assert_accessible(browser, page_file)


@pytest.mark.filterwarnings("ignore:.*not in session")  # nbgrader's SQLAlchemy use, as in test_report
def test_the_report_passes_axe(browser, class_template):  # noqa: F811 - the imported fixture, requested by name
    assert_accessible(browser, class_template.reports / "report.html")
