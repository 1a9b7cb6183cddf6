"""The course's website (book/, scripts/book.sh) builds from the repository and keeps its promises.

The site is built once for the module from a scratch copy of the repository (its tracked files, plus whatever
notebooks are in notebooks/ and release/ now), with the course's own term file, its [hub] keys emptied; a second
build, for the launch links, sets term.toml's [hub] keys in another copy. Every expectation comes from the course's files: the
notebooks present (never a list), their titles and figures' alternative texts, term.toml's title and hub keys,
docs/students.md. The built pages are read with the standard library's HTML parser; axe-core (npm, package.json)
runs on every page in Debian's Chromium through Playwright, the site served over local HTTP with every request
that leaves the machine refused and recorded. Never ``playwright install``.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from term_edits import edit_term, read_term, set_key

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5" / "tex-chtml.js"
WCAG_21_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: The colour themes every page is checked in: the theme follows the reader's system setting.
SCHEMES = ("light", "dark")
#: The WCAG 2.1 A/AA rules of axe-core whose outcome depends on colours (the rest read the page's structure and text).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
#: Hang guards, not measurements.
BUILD_TIMEOUT_SECONDS = 600
PAGE_TIMEOUT_MS = 60_000

pytestmark = pytest.mark.slow
pytest.importorskip("myst_nb", reason="the book's tools are missing: pip install '.[book]'")


# ------------------------------------------------------------------------------------------- building


def scratch_course(destination: Path) -> Path:
    """A copy of the repository as a fresh clone has it, plus every file now in book/, notebooks/ and release/
    (tracked or not: a new notebook gets its page before it is committed), with npm's packages linked in."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = set(filter(None, listed.decode("utf-8").split("\0")))
    names |= {path.relative_to(ROOT).as_posix() for folder in ("book", "notebooks", "release")
              for path in (ROOT / folder).rglob("*") if path.is_file() and not {".ipynb_checkpoints", "__pycache__"} & set(path.parts)}
    for name in sorted(names):
        source = ROOT / name
        if source.is_file() and not name.startswith(("book/_build/", "book/notebooks/", "book/release/")):
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    (destination / "node_modules").symlink_to(ROOT / "node_modules")
    return destination


def build(course: Path) -> Path:
    """Build the book of ``course`` with its scripts/book.sh (warnings are errors); returns the HTML folder."""
    assert MATHJAX.is_file(), f"npm's mathjax is missing ({MATHJAX}): run scripts/setup.sh (npm install)"
    done = subprocess.run(["bash", str(course / "scripts" / "book.sh"), "-q"], check=False, cwd=course, capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT_SECONDS, env={**os.environ, "PYTHON": sys.executable})
    assert done.returncode == 0, f"the book did not build:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return course / "book" / "_build" / "html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as the term's own file builds it, but with the hub's keys empty (whatever the term sets there: the
    launch links are checked on ``hub_site``), so that every page says where its link will appear."""
    course = scratch_course(tmp_path_factory.mktemp("book"))
    for key in ("url", "repository"):
        set_key(course, f"hub.{key}", "")
    return build(course)


@pytest.fixture(scope="module")
def hub_keys() -> dict[str, str]:
    return {"url": "https://hub.example.edu/", "repository": "https://git.example.edu/ml/perceptron-course.git"}


@pytest.fixture(scope="module")
def hub_site(tmp_path_factory, hub_keys) -> Path:
    """The site with the hub's keys set, and the term's assignments in reverse order (the menu follows the term)."""
    course = scratch_course(tmp_path_factory.mktemp("book-hub"))
    for key, value in hub_keys.items():
        set_key(course, f"hub.{key}", value)
    edit_term(course, lambda data: data["assignments"].reverse())
    return build(course)


# ------------------------------------------------------------------------------------------- reading


def term() -> dict:
    with open(ROOT / "term.toml", "rb") as handle:
        return tomllib.load(handle)


def course_title() -> str:
    return term()["course"].get("title") or term()["course"]["id"]


def lectures() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def assignments(course: Path = ROOT) -> list[Path]:
    """The student notebooks of ``course``'s release/, in its term's order of assignments (the site's)."""
    order = [assignment["name"] for assignment in read_term(course).get("assignments", [])]
    return sorted((course / "release").glob("*/*.ipynb"),
                  key=lambda path: (order.index(path.parent.name) if path.parent.name in order else len(order), path))


def page_of(site: Path, notebook: Path) -> Path:
    return site / notebook.relative_to(ROOT).with_suffix(".html")


def markdown_cells(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown"]


def notebook_title(notebook: Path) -> str:
    for text in markdown_cells(notebook):
        match = re.search(r"(?m)^#\s+(.+?)\s*$", text)
        if match:
            return match[1]
    return notebook.stem


def figure_alts(notebook: Path) -> list[str]:
    """The alternative text stored with each figure output of ``notebook``."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [output["metadata"]["image/png"]["alt"] for cell in cells for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {}) and output.get("metadata", {}).get("image/png", {}).get("alt")]


class Page(HTMLParser):
    """What the tests read of a built page: its links and sources, images, headings, title and ids."""

    LINKS: ClassVar[dict[str, str]] = {"a": "href", "link": "href", "script": "src", "img": "src", "source": "src", "iframe": "src",
                                       "audio": "src", "video": "src", "embed": "src", "object": "data"}

    def __init__(self, path: Path):
        super().__init__(convert_charrefs=True)
        self.path, self.links, self.images, self.ids = path, [], [], set()
        self.headings: list[tuple[str, str]] = []
        self.anchors: list[dict] = []
        self.title = ""
        self._open: list[list] = []
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "a" and "name" in attributes:
            self.ids.add(attributes["name"])
        if tag in self.LINKS and self.LINKS[tag] in attributes:
            self.links.append((tag, attributes[self.LINKS[tag]], attributes))
        if tag == "img":
            self.images.append(attributes)
        if tag in ("title", "h1", "h2", "h3", "h4", "a"):
            self._open.append([tag, attributes, ""])

    def handle_endtag(self, tag):
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index][0] == tag:
                _, attributes, text = self._open.pop(index)
                text = " ".join(text.split())
                if tag == "title":
                    self.title = text
                elif tag == "a":
                    self.anchors.append({**attributes, "text": text})
                else:
                    self.headings.append((tag, text.rstrip("#").strip()))
                break

    def handle_data(self, data):
        for opened in self._open:
            opened[2] += data


@functools.cache
def read(path: Path) -> Page:
    return Page(path)


def pages(site: Path) -> list[Path]:
    return sorted(path for path in site.rglob("*.html") if "_static" not in path.relative_to(site).parts)


def is_external(url: str) -> bool:
    """Whether ``url`` leaves the site (a data: URI is part of the page)."""
    return (bool(urlsplit(url).scheme) and not url.startswith("data:")) or url.startswith("//")


# ------------------------------------------------------------------------------------------- the pages


def test_every_notebook_has_a_page_titled_as_the_notebook(site):
    missing = [str(nb.relative_to(ROOT)) for nb in lectures() + assignments() if not page_of(site, nb).is_file()]
    assert not missing, f"notebooks without a page in the book: {missing}"
    for notebook in lectures() + assignments():
        headings = {text for tag, text in read(page_of(site, notebook)).headings if tag == "h1"}  # the print header's too
        assert headings == {notebook_title(notebook)}, f"{notebook.name}: the page's h1 is {headings}"


def listed_in_order(page: Path, notebooks: list[Path], course: Path, menu: bool = False) -> list[str]:
    """The pages of ``notebooks`` that ``page`` links to, in the order of their first link (``menu``: the links of
    its table of contents only)."""
    wanted = {notebook.relative_to(course).with_suffix(".html").as_posix() for notebook in notebooks}
    hrefs = [anchor.get("href", "") for anchor in read(page).anchors if not menu or "reference" in anchor.get("class", "")]
    return list(dict.fromkeys(href for href in (h.removeprefix("../../").removeprefix("../") for h in hrefs) if href in wanted))


def test_the_table_of_contents_lists_every_notebook_in_order(site):
    for notebooks in (lectures(), assignments()):
        wanted = [notebook.relative_to(ROOT).with_suffix(".html").as_posix() for notebook in notebooks]
        in_order = listed_in_order(site / "index.html", notebooks, ROOT)
        assert in_order == wanted, f"the landing page's contents list {in_order}, the course has {wanted}"
    for notebook in lectures():
        nav = [anchor["href"] for anchor in read(page_of(site, notebook)).anchors
               if "reference" in anchor.get("class", "") and anchor.get("href", "").endswith(".html")]
        for other in lectures():
            assert other.with_suffix(".html").name in {Path(href).name for href in nav} or other == notebook, \
                f"{notebook.name}'s table of contents has no link to {other.name}"


def test_the_assignments_come_in_the_term_s_order_on_the_landing_page_and_in_every_menu(hub_site):
    course = hub_site.parents[2]  # its term lists the assignments in reverse
    notebooks = assignments(course)
    wanted = [notebook.relative_to(course).with_suffix(".html").as_posix() for notebook in notebooks]
    assert len(wanted) < 2 or wanted != sorted(wanted), "the term's order differs from the files' (hub_site reverses it)"
    assert listed_in_order(hub_site / "index.html", notebooks, course) == wanted
    lecture = page_of(hub_site, lectures()[0])
    assert listed_in_order(lecture, notebooks, course, menu=True) == wanted, f"{lecture.name}'s menu"


def test_the_title_is_the_term_files(site):
    title = course_title()
    landing = read(site / "index.html")
    assert {text for tag, text in landing.headings if tag == "h1"} == {title}
    for page in pages(site):
        assert read(page).title.endswith(title), f"{page.relative_to(site)}: <title> {read(page).title!r}"


def test_the_landing_page_holds_the_student_readme(site):
    readme = (ROOT / "docs" / "students.md").read_text(encoding="utf-8")
    landing = read(site / "index.html")
    headings = {text for _, text in landing.headings}
    for heading in re.findall(r"(?m)^##+\s+(.+?)\s*$", readme):
        assert re.sub(r"[`*]", "", heading) in headings, f"the landing page lacks the README's section {heading!r}"
    text = " ".join(re.sub(r"<[^>]*>", "", (site / "index.html").read_text(encoding="utf-8")).split())
    for command in re.findall(r"(?m)^\s*(nbgrader submit .+?)\s*$", readme):
        assert command in text, f"the landing page lacks the README's command {command!r}"


def test_no_link_or_asset_is_broken(site):
    broken = []
    for page in pages(site):
        for tag, url, _ in read(page).links:
            if not url or is_external(url) or url.startswith(("data:", "mailto:", "javascript:")):
                continue
            parts = urlsplit(url)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: <{tag}> {url} (no such file)")
            elif parts.fragment and target.suffix == ".html" and parts.fragment not in read(target).ids:
                broken.append(f"{page.relative_to(site)}: <{tag}> {url} (no id {parts.fragment!r} there)")
    assert not broken, "broken links or missing assets:\n" + "\n".join(broken)


def test_mathjax_is_served_with_the_site_and_nothing_is_loaded_from_elsewhere(site):
    mathjax = site / "_static" / "mathjax" / "tex-chtml.js"
    assert mathjax.is_file(), "MathJax is not in the site's static files"
    with_maths = 0
    for page in pages(site):
        html = read(page)
        scripts = [url for tag, url, _ in html.links if tag == "script"]
        external = [f"<{tag}> {url[:120]}" for tag, url, attributes in html.links if is_external(url) and (
            tag != "a" and not (tag == "link" and attributes.get("rel") in ("canonical", "alternate")))]
        assert not external, f"{page.relative_to(site)} loads from outside the site: {external}"
        if 'class="math' in page.read_text(encoding="utf-8"):
            with_maths += 1
            loaded = [(page.parent / urlsplit(url).path).resolve() for url in scripts if "mathjax" in url]
            assert loaded == [mathjax.resolve()], f"{page.relative_to(site)} has mathematics but loads {loaded}"
    lectures_with_maths = [nb for nb in lectures() if any("$" in text for text in markdown_cells(nb))]
    assert with_maths >= len(lectures_with_maths) > 0


def test_no_mathematics_is_left_as_dollar_signs(site):
    # A $ outside code and outside the mathematics the book marked up is TeX the book failed to parse
    # (JupyterLab would have rendered it): the reader would see the source.
    for notebook in lectures() + assignments():
        html = page_of(site, notebook).read_text(encoding="utf-8")
        html = re.sub(r"(?s)<(pre|code|script|style|textarea)\b.*?</\1>", "", html)
        html = re.sub(r'(?s)<(span|div) class="math[^"]*">.*?</\1>', "", html)
        text = re.sub(r"<[^>]+>", "", html)
        left = [" ".join(found.split()) for found in re.findall(r".{0,50}\$.{0,50}", text)]
        assert not left, f"{notebook.name}: TeX shown as text on its page: {left[:5]}"


def test_every_image_has_its_alternative_text(site):
    for page in pages(site):
        empty = [image.get("src", "")[:60] for image in read(page).images if not image.get("alt", "").strip()]
        assert not empty, f"{page.relative_to(site)}: images without alternative text: {empty}"
    for notebook in lectures() + assignments():
        shown = {" ".join(image.get("alt", "").split()) for image in read(page_of(site, notebook)).images}
        for alt in figure_alts(notebook):
            assert " ".join(alt.split()) in shown, f"{notebook.name}: a figure's alt text is not on its page: {alt!r}"


def test_lectures_that_name_another_lecture_link_to_it(site):
    numbered = {}
    for notebook in lectures():
        match = re.match(r"([0-9]+)_", notebook.stem)
        if match:
            numbered.setdefault(int(match[1]), []).append(notebook)
    numbered = {number: found[0] for number, found in numbered.items() if len(found) == 1}
    checked = 0
    for notebook in lectures():
        named = {int(n) for text in markdown_cells(notebook)
                 for n in re.findall(r"\b(?:[Nn]otebook|[Ll]ecture)\s+([1-9][0-9]?)\b(?!\.[0-9])", text)}
        hrefs = {urlsplit(anchor.get("href", "")).path for anchor in read(page_of(site, notebook)).anchors}
        for number in sorted(named):
            other = numbered.get(number)
            if other is not None and other != notebook:
                assert other.with_suffix(".html").name in hrefs, \
                    f"{notebook.name} names notebook {number} but its page does not link {other.name}"
                checked += 1
    if not checked:
        pytest.skip("no lecture names another one by its number")


# ------------------------------------------------------------------------------------------- launch links


def launch_links(page: Path) -> list[str]:
    return [anchor["href"] for anchor in read(page).anchors if "course-launch-link" in anchor.get("class", "")]


def test_without_hub_keys_each_page_says_where_its_launch_link_will_be(site):
    for notebook in lectures() + assignments():
        page = page_of(site, notebook)
        assert not launch_links(page), f"{notebook.name}: a launch link without a hub"
        assert 'class="course-launch"' in page.read_text(encoding="utf-8"), f"{notebook.name}: no launch note"


def test_each_page_has_a_launch_link_built_from_the_hub_keys_into_the_student_bundle(hub_site, hub_keys, tmp_path):
    # The repository nbgitpuller clones is the students' (the bundle in git), so each link must open a notebook
    # where `perceptron-course bundle` puts it.
    course = hub_site.parents[2]
    done = subprocess.run([str(Path(sys.executable).with_name("perceptron-course")), "bundle", "--root", str(course),
                           "--out", str(tmp_path)], check=False, capture_output=True, text=True, timeout=BUILD_TIMEOUT_SECONDS)
    assert done.returncode == 0, f"the bundle did not build:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    bundle = tmp_path / term()["bundle"]["name"]
    bundled = {path.relative_to(bundle).as_posix() for path in bundle.rglob("*.ipynb")}
    folder = hub_keys["repository"].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    landing = launch_links(hub_site / "index.html")
    opened = set()
    for notebook in lectures() + assignments():
        links = launch_links(page_of(hub_site, notebook))
        assert len(links) == 1, f"{notebook.name}: {len(links)} launch links"
        parts = urlsplit(links[0])
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == \
            hub_keys["url"].rstrip("/") + "/hub/user-redirect/git-pull"
        query = parse_qs(parts.query)
        assert query["repo"] == [hub_keys["repository"]]
        [urlpath] = query["urlpath"]
        assert urlpath.startswith(f"lab/tree/{folder}/"), f"{notebook.name}: opens {urlpath}"
        path = urlpath.removeprefix(f"lab/tree/{folder}/")
        assert Path(path).name == notebook.name and path in bundled, \
            f"{notebook.name}: the link opens {path}, which the student bundle does not have (an assignment of " \
            f"release/ that term.toml does not list?)"
        opened.add(path)
        assert links[0] in landing, f"the landing page has no launch link for {notebook.name}"
    assert bundled <= opened, f"notebooks of the bundle without a launch link: {sorted(bundled - opened)}"


# ------------------------------------------------------------------------------------------- axe-core


@contextlib.contextmanager
def serving(site: Path):
    """``site`` over HTTP on a free local port (as a static host serves it); yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def axe_every_page(site: Path, only: list[str] | None = None) -> tuple[dict, list[str], list[str]]:
    """Run axe-core's WCAG 2.1 A/AA rules on every page of ``site`` in Chromium, in each colour theme (``SCHEMES``:
    the theme follows the reader's system setting, switched on the loaded page), after MathJax typeset the page (on
    the elements matching the CSS selectors ``only``, when given, without waiting for MathJax).

    Returns the violations by theme and page (each with up to 5 of its elements), the requests that would have left
    the machine (refused), and the pages with mathematics that MathJax did not typeset.
    """
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is missing")
    assert AXE.is_file(), f"npm's axe-core is missing ({AXE}): run scripts/setup.sh (npm install)"
    found, refused, unrendered = {}, [], []
    with serving(site) as base, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            context = browser.new_context(color_scheme=SCHEMES[0])
            context.set_default_timeout(PAGE_TIMEOUT_MS)

            def route(request_route):
                url = request_route.request.url
                if only and url.startswith(base) and "/_static/mathjax/" in url:
                    request_route.abort()  # the launch links hold no mathematics: typesetting the page is not needed
                elif url.startswith(base):
                    request_route.continue_()
                else:
                    refused.append(url)
                    request_route.abort()

            context.route("**/*", route)
            page = context.new_page()
            for path in pages(site):
                name = path.relative_to(site).as_posix()
                page.emulate_media(color_scheme=SCHEMES[0])
                page.goto(base + name, wait_until="load")
                if only and not page.locator(", ".join(only)).count():
                    continue
                if not only:
                    typeset = page.evaluate("async () => { if (!window.MathJax || !MathJax.startup) return -1;"
                                            " await MathJax.startup.promise;"
                                            " return document.querySelectorAll('mjx-container').length; }")
                    if page.locator(".math").count() and typeset <= 0:
                        unrendered.append(name)
                page.add_script_tag(path=str(AXE))
                for scheme in SCHEMES:
                    page.emulate_media(color_scheme=scheme)
                    # The theme's own switch (its listener on the system setting) has run, and its colour transitions
                    # have ended: axe sees the page at rest in that theme, as a reader who opened it so does.
                    page.wait_for_function("scheme => document.documentElement.dataset.theme === scheme", arg=scheme)
                    page.evaluate("async () => { await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));"
                                  " await Promise.all(document.getAnimations().map(animation => animation.finished)); }")
                    # The first theme gets every rule; another changes only colours, so it gets the colour rules.
                    options = ({"runOnly": {"type": "tag", "values": WCAG_21_A_AA}} if scheme == SCHEMES[0]
                               else {"runOnly": {"type": "rule", "values": COLOUR_RULES}})
                    result = page.evaluate("([options, only]) => axe.run(only ? {include: only.map(s => [s])} : document,"
                                           " options)", [options, only])
                    if result["violations"]:
                        found[f"{scheme} theme: {name}"] = [
                            {"rule": v["id"], "impact": v["impact"], "help": v["help"], "count": len(v["nodes"]),
                             "nodes": [{"html": n["html"][:300], "target": n["target"],
                                        "summary": n.get("failureSummary", "")[:300]} for n in v["nodes"][:5]]}
                            for v in result["violations"]]
            context.close()
        finally:
            browser.close()
    return found, refused, unrendered


needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(),
                                    reason="Debian's Chromium is missing (/usr/bin/chromium): apt-get install chromium")


@needs_chromium
def test_every_page_passes_axe_in_each_theme_with_its_mathematics_rendered_offline(site):
    found, refused, unrendered = axe_every_page(site)
    assert not refused, f"pages asked for something outside the site: {sorted(set(refused))}"
    assert not unrendered, f"MathJax rendered no mathematics on {unrendered}"
    assert not found, "WCAG 2.1 A/AA violations:\n" + json.dumps(found, indent=1)


@needs_chromium
def test_the_launch_links_pass_axe_in_each_theme(hub_site):
    # The build with the hub's keys differs from the term's only in its launch links: axe checks those (in place,
    # with the page's own colours) on every page that has them.
    found, refused, _ = axe_every_page(hub_site, only=[".course-launch", ".course-notebooks"])
    assert not refused, f"pages asked for something outside the site: {sorted(set(refused))}"
    assert not found, "WCAG 2.1 A/AA violations of the launch links:\n" + json.dumps(found, indent=1)
