"""Feedback pages that hide the hidden tests, are safe to open, and are clear to read.

A feedback page is the student's graded notebook as HTML, and a TA opens it on the
Jupyter origin (the formgrader), so everything the student controls is hostile:
markdown, outputs of every MIME type, cell metadata. ``GenerateFeedback`` (see
``nbgrader_config.py``) renders it with:

- ``GetGradesAndWaiting`` (a preprocessor): nbgrader's scores, and which parts wait for a TA.
- ``HideHiddenTests`` (a preprocessor): removes each hidden-test region from the cell
  source and cuts the traceback of any error in such a cell down to one line, since
  a traceback quotes the lines around the failure. The error's message stays whole:
  a failed hidden check says there what it called, expected and received.
- ``FeedbackHTMLExporter``: it keeps only outputs that are safe to show
  (``make_outputs_safe``, before the preprocessors), names every graded part by the heading
  above it (``graded_parts``, after them), renders the course's template (a Content-Security-Policy
  that allows no script, a summary of the score of each part, failures in red boxes),
  and cleans student HTML twice with nh3 (the ammonia sanitiser): each fragment the
  student wrote (markdown, HTML outputs) with a strict allowlist, then the whole page
  body, so markup that reaches the page by any other path is cleaned too.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import threading
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbgrader
import nh3
from jinja2 import BytecodeCache, pass_context
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import GetGrades
from traitlets import Bool, Unicode

from ...intake_rules import INTAKE_METADATA
from ..gradebook.gradebook_rows import comment_of, grade_of, opened_rows
from ..course.lateness import late_sentence

HIDDEN_PLACEHOLDER = "# (hidden tests: not shown)"
#: Folder of the grader's nbconvert template for feedback pages (``course_feedback/``), next to this module.
TEMPLATES = Path(__file__).with_name("feedback_templates")
TEMPLATE_NAME = "course_feedback"
#: nbgrader's own feedback template, which ours extends.
NBGRADER_TEMPLATES = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"

#: The first element of every page's ``<head>``: no script, no plugin, no frame, no form
#: target, no ``<base>``, no request to anywhere; styles only inline, images only ``data:``.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'none'; object-src 'none'; style-src 'unsafe-inline'; "
    "img-src data:; font-src 'none'; connect-src 'none'; media-src 'none'; frame-src 'none'; "
    "child-src 'none'; worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'"
)


# ---------------------------------------------------------------------- hidden tests


def remove_regions(source: str, begin: str, end: str, placeholder: str) -> tuple[str, bool]:
    """Replace every ``begin`` ... ``end`` region of ``source`` (delimiter lines included) by ``placeholder``.

    Returns the new source and whether any region was found. An unterminated
    region removes everything after ``begin`` (fail closed).
    """
    kept, inside, found = [], False, False
    for line in source.split("\n"):
        if begin in line:
            inside = found = True
            indent = line[: len(line) - len(line.lstrip())]
            kept.append(indent + placeholder)
        elif end in line and inside:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept), found


class HideHiddenTests(Preprocessor):
    """Strip hidden-test source and hidden-test tracebacks from a notebook."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled
    begin_delimiter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_delimiter = Unicode("END HIDDEN TESTS").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        cell.source, had_hidden = remove_regions(cell.source, self.begin_delimiter, self.end_delimiter, HIDDEN_PLACEHOLDER)
        if had_hidden:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources


# ---------------------------------------------------------------------- HTML cleaning

#: Tags a student's markdown or HTML output may keep (their text is always kept).
STUDENT_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "samp", "small",
    "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
}
#: Tags whose content goes too: code and style sheets, and the foreign trees (SVG, MathML)
#: that browsers parse by other rules.
DROPPED_WITH_CONTENT = {"script", "style", "svg", "math", "template", "noscript", "xmp", "iframe", "noembed", "noframes"}
_STUDENT_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align"},
    **{f"h{level}": {"id"} for level in range(1, 7)},  # nbconvert's heading anchors
}
_IMAGE_DATA_URL = re.compile(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*", re.IGNORECASE)
_WEB_URL = re.compile(r"(https?|mailto):", re.IGNORECASE)
_SIZE = re.compile(r"[0-9]{1,5}%?")


def _safe_attribute(element: str, attribute: str, value: str) -> str | None:
    """The value to keep, or ``None`` to drop the attribute.

    Links go to an anchor of the page or to the web; images only come from ``data:``
    PNG, JPEG or GIF (the page's policy blocks every other source anyway).
    """
    if attribute == "href":
        return value if value.startswith("#") or _WEB_URL.match(value) else None
    if attribute == "src":
        return value if element == "img" and _IMAGE_DATA_URL.fullmatch(value) else None
    if attribute in ("width", "height"):
        return value if _SIZE.fullmatch(value) else None
    return value


#: Ids the template gives its own elements (the summary links to them).
_TEMPLATE_ID = re.compile(r"part-.*|top|notebook", re.IGNORECASE)


def _safe_student_attribute(element: str, attribute: str, value: str) -> str | None:
    """``_safe_attribute``, and no id that the template uses (a link of the summary would lead there)."""
    if attribute == "id" and _TEMPLATE_ID.fullmatch(value.strip()):
        return None
    return _safe_attribute(element, attribute, value)


#: Deepest nesting of elements cleaned as HTML. nh3's parser (html5ever) takes time quadratic in the depth of
#: nested block elements: 799 outputs each of ``<dl>`` nested 5,000 deep took 46 s a pass (round 11, ``htmlnest``).
#: A page of the course nests about 20 deep, a pandas table about 6.
MAX_HTML_DEPTH = 256
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*>")
_VOID_ELEMENTS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
                            "track", "wbr"})


def html_depth(text: str) -> int:
    """How deep the elements of the HTML ``text`` nest, counted in one pass over its tags (an unclosed tag counts as open)."""
    depth = deepest = 0
    for match in _TAG.finditer(text):
        closing, name = match.group(1), match.group(2).lower()
        if closing:
            depth = max(depth - 1, 0)
        elif name not in _VOID_ELEMENTS and not match.group(0).endswith("/>"):
            depth += 1
            deepest = max(deepest, depth)
    return deepest


class _Cleaner:
    """An ``nh3.Cleaner`` that shows HTML nested deeper than ``MAX_HTML_DEPTH`` as text instead of parsing it."""

    def __init__(self, cleaner: nh3.Cleaner) -> None:
        self.cleaner = cleaner

    def clean(self, text: str) -> str:
        depth = html_depth(text)
        if depth > MAX_HTML_DEPTH:
            shown = text[:2000] + (f" ... [{len(text) - 2000:,} more characters]" if len(text) > 2000 else "")
            return (f"<p>[HTML nested {depth:,} levels deep (more than {MAX_HTML_DEPTH}), shown as text:]</p>"
                    f"<pre>{html.escape(shown)}</pre>")
        return self.cleaner.clean(text)


def _cleaner(**settings) -> _Cleaner:
    """An nh3 cleaner that keeps only ``STUDENT_TAGS`` (unless told otherwise), drops scripts and styles with
    their content and comments, and lets links and images through ``_safe_attribute``."""
    defaults = {"tags": STUDENT_TAGS, "clean_content_tags": DROPPED_WITH_CONTENT, "attribute_filter": _safe_attribute,
                "url_schemes": {"http", "https", "mailto", "data"}, "strip_comments": True}
    return _Cleaner(nh3.Cleaner(**{**defaults, **settings}))


#: What a student wrote: no classes (they could dress text as a passed part), ids only on headings.
STUDENT_CLEANER = _cleaner(attributes=_STUDENT_ATTRIBUTES, allowed_classes={"a": {"anchor-link"}},
                           attribute_filter=_safe_student_attribute)
#: The whole page body: the template's structure (classes, ids) on top of what a student may keep.
PAGE_CLEANER = _cleaner(tags=STUDENT_TAGS | {"main", "header", "section", "footer", "nav"},
                        attributes={**_STUDENT_ATTRIBUTES, "*": {"class", "id", "role"}})


def clean_student_html(html: str) -> str:
    """``html`` written by a student, with only passive markup left (see ``STUDENT_CLEANER``)."""
    return STUDENT_CLEANER.clean(str(html))


#: What a student wrote, for any renderer (the formgrader): no ids at all, since the formgrader
#: finds each grade's score box by an id that is the cell's grade id.
NO_ID_CLEANER = _cleaner(attributes={tag: names - {"id"} for tag, names in _STUDENT_ATTRIBUTES.items() if names - {"id"}},
                         allowed_classes={"a": {"anchor-link"}})


class _TagNames(HTMLParser):
    """The names of the start tags of an HTML text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs) -> None:
        self.names.add(tag)


#: What the template's ``<head>`` may hold; anything else means the template changed (fail closed).
HEAD_TAGS = {"html", "head", "meta", "title", "style"}


def secure_page(page: str) -> str:
    """``page`` with everything between ``<body ...>`` and the last ``</body>`` cleaned by ``PAGE_CLEANER``.

    The head comes from the course's template alone (its only text, the notebook's
    name, is escaped), so the first ``<body`` is the template's; a head with any tag
    but ``HEAD_TAGS`` is refused.
    """
    body = re.search(r"<body\b[^>]*>", page)
    end = page.rfind("</body>")
    if body is None or end < body.end():
        raise ValueError("the feedback template did not produce a <body>")
    unexpected = _TagNames(page[: body.start()]).names - HEAD_TAGS
    if unexpected:
        raise ValueError(f"the feedback page's head holds {sorted(unexpected)}")
    return page[: body.end()] + PAGE_CLEANER.clean(page[body.end() : end]) + page[end:]


# ---------------------------------------------------------------------- outputs

#: Output MIME types a feedback page shows; HTML and markdown are cleaned when rendered.
SHOWN_MIMETYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg")
_IMAGE_SIGNATURES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}


#: The alternative text of an image output (students' notebooks give none).
IMAGE_ALT = "A figure the notebook drew"


def is_image(mimetype: str, value: object) -> bool:
    """Whether ``value`` is base64 text that decodes to an image of type ``mimetype``."""
    if not isinstance(value, str):
        return False
    try:
        data = base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return data.startswith(_IMAGE_SIGNATURES[mimetype])


def _not_shown(what: str) -> NotebookNode:
    return new_output("stream", name="stdout", text=f"[{what}: not shown in feedback]\n")


def safe_output(output: NotebookNode) -> NotebookNode:
    """``output`` reduced to what a feedback page may show, or a one-line note of what was left out.

    Text outputs and errors are kept as text (the template escapes them). Rich outputs
    keep text, HTML, markdown, LaTeX and real PNG/JPEG images; JavaScript, widgets, SVG
    and every other type are left out, and so is their metadata (file names, sizes,
    ``isolated`` iframes).
    """
    kind = output.get("output_type")
    if kind == "stream":
        name = "stderr" if output.get("name") == "stderr" else "stdout"  # the template shows no other stream
        return new_output("stream", name=name, text=str(output.get("text", "")))
    if kind == "error":
        return new_output("error", ename=str(output.get("ename", "")), evalue=str(output.get("evalue", "")),
                          traceback=[str(line) for line in output.get("traceback", [])])
    if kind not in ("display_data", "execute_result"):
        return _not_shown(f"an output of kind {str(kind)[:40]!r}")
    data = output.get("data", {})
    shown = {
        mimetype: data[mimetype]
        for mimetype in SHOWN_MIMETYPES
        if mimetype in data and (is_image(mimetype, data[mimetype]) if mimetype in _IMAGE_SIGNATURES else isinstance(data[mimetype], str))
    }
    if not shown:
        left_out = ", ".join(sorted(str(mimetype)[:60] for mimetype in data)[:5]) or "an empty output"
        return _not_shown(left_out)
    metadata = {"alt": IMAGE_ALT} if any(mimetype in _IMAGE_SIGNATURES for mimetype in shown) else {}
    if kind == "execute_result":
        count = output.get("execution_count")
        return new_output("execute_result", data=shown, metadata=metadata,
                          execution_count=count if isinstance(count, int) else None)
    return new_output("display_data", data=shown, metadata=metadata)


def make_outputs_safe(nb: NotebookNode) -> NotebookNode:
    """``nb``, changed in place: its outputs all ``safe_output``s, without the widgets' state."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [safe_output(output) for output in cell.get("outputs", [])]
    return nb


def clean_markdown(source: str, attachments=None) -> str:  # noqa: ANN001 - a cell's attachments, as the student left them
    """Markdown rendered to HTML (a link's ``javascript:`` is markdown, not HTML), then cleaned of all but passive markup.

    ``attachments`` are the cell's (an image pasted into it is one): nbconvert embeds each image
    it links to as a ``data:`` URL. Markdown nbconvert cannot render (a link to an attachment
    the cell does not hold raises) is shown as text, rather than failing the whole notebook.
    """
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    try:  # markdown2html_mistune, with the attachments
        rendered = MarkdownWithMath(renderer=IPythonRenderer(escape=False, attachments=dict(attachments or {}))).render(source)
    except Exception:  # noqa: BLE001 - nbconvert's InvalidNotebook, or whatever else a student's cell provokes
        return "<pre>" + html.escape(source) + "</pre>"
    return NO_ID_CLEANER.clean(rendered)


def final_html_block(html: str) -> str:
    """Cleaned ``html`` as a markdown cell's source that any later markdown pass leaves exactly as it is.

    The formgrader renders a markdown cell's source as markdown again, without cleaning: text
    that the first pass left inert (``[x](javascript:...)`` shown literally, ``&amp;lt;``, ``# id``)
    would become a link, a tag or a heading with an id. A CommonMark HTML block that starts with
    ``<div>`` runs to the first blank line and is passed through untouched, so the whole answer is
    written as one such line: its line breaks become ``&#10;``, which the browser reads as the same
    line breaks (in text, in ``<pre>`` and in attribute values alike).
    """
    return "<div>" + html.replace("\r", "&#13;").replace("\n", "&#10;") + "</div>"


#: Characters of markdown outputs rendered per notebook: rendering takes time quadratic in some
#: inputs (thousands of ``[``), so beyond this they are shown as text.
MAX_MARKDOWN_OUTPUT_CHARS = 60_000


class SafeToRender(Preprocessor):
    """Leave in the autograded notebook only what any renderer may show, nbgrader's formgrader included.

    The formgrader renders ``autograded/`` notebooks with nbconvert on the Jupyter origin,
    with the TA's session and without cleaning: script in a student's markdown or in an
    output would act as the TA (set grades, read the course folder). Run after the scores
    are saved, so grading is unchanged: outputs become ``safe_output``s with cleaned HTML,
    markdown cells and outputs become cleaned HTML (which renders as they did), and raw
    cells are cleaned. The student's own notebook in ``submitted/`` is not touched.
    """

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        self._markdown_left = MAX_MARKDOWN_OUTPUT_CHARS
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            cell.outputs = [self._clean_rich_values(safe_output(output)) for output in cell.get("outputs", [])]
        elif cell.get("metadata", {}).get("nbgrader", {}).get("locked"):
            pass  # restored from source/ by nbgrader: the instructor's text, its headings name the parts
        elif cell.cell_type == "markdown":
            cell.source = final_html_block(clean_markdown(cell.source, cell.get("attachments")))
        else:
            cell.source = NO_ID_CLEANER.clean(cell.source)
        return cell, resources

    def _clean_rich_values(self, output: NotebookNode) -> NotebookNode:
        """``output`` with its HTML cleaned, and its markdown turned into cleaned HTML while the notebook's budget lasts."""
        data = output.get("data", {})
        if "text/markdown" in data:
            markdown = data.pop("text/markdown")
            self._markdown_left -= len(markdown)
            if self._markdown_left >= 0:
                data["text/html"] = clean_markdown(markdown)
            else:
                data.pop("text/html", None)
                data.setdefault("text/plain", f"[a markdown output of {len(markdown):,} characters, not rendered: the "
                                              f"notebook's markdown outputs are over {MAX_MARKDOWN_OUTPUT_CHARS:,} characters]")
        elif "text/html" in data:
            data["text/html"] = NO_ID_CLEANER.clean(str(data["text/html"]))
        return output


# ---------------------------------------------------------------------- graded parts

_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<title>.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_KIND_NAMES = {"tests": "Tests", "answer": "Answer", "task": "Task"}


@dataclass(frozen=True)
class Part:
    """One graded cell of a feedback page, named by the heading of its part of the notebook."""

    grade_id: str
    title: str
    score: float | None
    points: float

    @property
    def status(self) -> str:
        """``passed``, ``failed``, ``partial`` or ``pending`` (a written answer a TA has not graded yet)."""
        if self.score is None:
            return "pending"
        if self.score >= self.points:
            return "passed"
        return "failed" if self.score <= 0 else "partial"

    @property
    def anchor(self) -> str:
        """The id of the part's cell in the page."""
        return "part-" + re.sub(r"[^A-Za-z0-9_-]", "_", self.grade_id)


def trusted_heading(cell: NotebookNode) -> str | None:
    """The first heading of a locked markdown cell (restored from the source by autograde), else ``None``.

    Only locked cells are trusted: a heading the student added would name the part as they like.
    """
    nbgrader_metadata = cell.metadata.get("nbgrader", {})
    if cell.cell_type != "markdown" or not nbgrader_metadata.get("locked") or not nbgrader_metadata.get("grade_id"):
        return None
    match = _HEADING.search(cell.source)
    return match.group("title").strip() if match else None


def _kind(nbgrader_metadata: dict) -> str:
    if nbgrader_metadata.get("task"):
        return "task"
    return "answer" if nbgrader_metadata.get("solution") else "tests"


def graded_parts(nb: NotebookNode) -> list[Part]:
    """Every graded cell of ``nb`` (after nbgrader's ``GetGrades``), in order, named by the last trusted heading above it."""
    parts, heading = [], None
    for cell in nb.cells:
        heading = trusted_heading(cell) or heading
        nbgrader_metadata = cell.metadata.get("nbgrader", {})
        if not (nbgrader_metadata.get("grade") or nbgrader_metadata.get("task")):
            continue
        score = nbgrader_metadata.get("score")
        title = heading or f"{_KIND_NAMES[_kind(nbgrader_metadata)]} {nbgrader_metadata.get('grade_id', '')}"
        parts.append(Part(
            grade_id=str(nbgrader_metadata.get("grade_id", "")),
            title=title,
            score=None if score is None or nbgrader_metadata.get("needs_manual_grade") else float(score),
            points=float(nbgrader_metadata.get("points") or 0),
        ))
    return parts


def feedback_notes(nb: NotebookNode, resources: dict) -> list[str]:
    """Lines above the parts: how late the hand-in was, and what the grader's intake repaired.

    The intake's notes are read from the metadata the intake itself writes (``INTAKE_METADATA``,
    replacing whatever a submission held there), never from the student's cells.
    """
    grading = resources.get("nbgrader", {})
    notes = [late_sentence(float(grading.get("seconds_late") or 0.0), float(grading.get("late_penalty") or 0.0))]
    recorded = nb.metadata.get(INTAKE_METADATA)
    repaired = recorded.get("notes") if isinstance(recorded, dict) else None
    if isinstance(repaired, list):
        notes += [f"Before grading: {note[:400]}" for note in repaired[:20] if isinstance(note, str)]
    return [note for note in notes if note]


class GetGradesAndWaiting(GetGrades):
    """nbgrader's ``GetGrades``, which also says which cells wait for a TA, with the notebook's rows read at once.

    nbgrader scores a written answer 0 until a TA grades it; the page says "not graded yet" instead.
    nbgrader looks up each cell's rows on their own; here they are read in one query each
    (``gradebook_rows.py``), and the scores and comments put on the page are the same.
    """

    def preprocess(self, nb, resources):
        with opened_rows(self, resources) as self._rows:
            nb, resources = Preprocessor.preprocess(self, nb, resources)  # each cell, as GetGrades does
            notebook = self._rows.submitted
            late_penalty = notebook.late_submission_penalty
            if late_penalty is None:
                late_penalty = 0
            else:
                self.log.warning("Late submission penalty: %s", late_penalty)
            resources["nbgrader"]["score"] = notebook.score - late_penalty
            resources["nbgrader"]["max_score"] = notebook.max_score
            resources["nbgrader"]["late_penalty"] = late_penalty
            # lateness, as nbgrader computes it (due date, extension, timestamp.txt)
            resources["nbgrader"]["seconds_late"] = float(notebook.assignment.total_seconds_late or 0.0)
        return nb, resources

    def _get_comment(self, cell, resources) -> None:
        cell.metadata.nbgrader["comment"] = comment_of(self.gradebook, self._rows, cell.metadata["nbgrader"]["grade_id"]).comment

    def _get_score(self, cell, resources) -> None:
        grade = grade_of(self.gradebook, self._rows, cell.metadata["nbgrader"]["grade_id"])
        cell.metadata.nbgrader["score"] = grade.score
        cell.metadata.nbgrader["points"] = grade.max_score
        cell.metadata.nbgrader["needs_manual_grade"] = bool(grade.needs_manual_grade)


# ---------------------------------------------------------------------- the exporter


class _MemoryBytecodeCache(BytecodeCache):
    """Compiled Jinja templates kept for the life of the process."""

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self._store:
            bucket.bytecode_from_string(self._store[bucket.key])

    def dump_bytecode(self, bucket) -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_COMPILED_TEMPLATES = _MemoryBytecodeCache()
#: Each thread's Jinja environments, by what loads the templates: nbgrader makes a new exporter for every page,
#: and a new environment loaded, checked and built every template of the page again (a tenth of a page's time).
_ENVIRONMENTS = threading.local()

#: Highlighted code kept for the life of the process, by (lexer, language, source): a class's pages
#: share most code cells (the code given, the visible tests), and pygments is a tenth of a page's time.
_HIGHLIGHTED: dict[tuple, str] = {}
MAX_HIGHLIGHTED = 4096
MAX_REMEMBERED_SOURCE = 20_000


class RememberedHighlight:
    """nbconvert's ``Highlight2HTML`` whose results are kept (the same source gives the same HTML).

    Of a cell's metadata, highlighting reads only ``magics_language`` (nbconvert's
    ``_pygments_highlight``), so that, not the metadata, is part of what a result is kept under.
    """

    def __init__(self, highlight: Highlight2HTML) -> None:
        self.highlight = highlight

    def __call__(self, source: str, language: str | None = None, metadata=None) -> str:
        if len(source) > MAX_REMEMBERED_SOURCE:
            return self.highlight(source, language, metadata)
        magics_language = metadata.get("magics_language") if metadata else None
        key = (self.highlight.pygments_lexer, language, magics_language, source)
        found = _HIGHLIGHTED.get(key)
        if found is None:
            if len(_HIGHLIGHTED) >= MAX_HIGHLIGHTED:
                _HIGHLIGHTED.clear()
            found = _HIGHLIGHTED[key] = highlight_code_html(self.highlight, source, language, metadata)
        return found


def highlight_code_html(highlight: Highlight2HTML, source: str, language: str | None = None, metadata=None) -> str:
    """``highlight(source, language, metadata)``, with Pygments' Python lexer where IPython's gives the same tokens.

    IPython's lexer is Python's with 27 patterns for IPython's own syntax (magics, ``!cmd``,
    ``?``) tried first at each token: three times slower. Each of them holds a ``%``, ``!``
    or ``?``, and a lexer matches a pattern only where a search of the text it lexes finds it:
    where none does, the tokens, and so the page, are Python's.
    """
    language = language or highlight.pygments_lexer
    if language != "ipython3" or (metadata and "magics_language" in metadata) or _may_hold_ipython_syntax(source):
        return highlight(source, language, metadata)
    from pygments import highlight as pygments_highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(cssclass=html.escape(f" highlight hl-{language}"), **highlight.extra_formatter_options)
    return pygments_highlight(source if len(source) > 0 else " ", PythonLexer(), formatter)  # as nbconvert calls it


_IPYTHON_SYNTAX: list = []  # IPython's lexer's own patterns, compiled as Pygments compiles them (on first use)


def _may_hold_ipython_syntax(source: str) -> bool:
    """Whether any pattern of IPython's lexer matches the text a Pygments lexer makes of ``source``."""
    if not any(mark in source for mark in "%!?"):
        return False
    if not _IPYTHON_SYNTAX:
        try:
            from ipython_pygments_lexers import IPython3Lexer, ipython_tokens  # IPython 9's lexers
        except ImportError:
            return True  # another IPython: its own lexer, always
        _IPYTHON_SYNTAX.extend(re.compile(token[0], IPython3Lexer.flags) for token in ipython_tokens)
    # What Pygments lexes (Lexer._preprocess_lexer_input, default options): no BOM, \n line ends, no blank
    # lines at either end, one final \n.
    text = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip("\n") + "\n"
    return any(pattern.search(text) for pattern in _IPYTHON_SYNTAX)


class FeedbackHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter made safe for student notebooks, with the course's feedback template.

    Whatever the configuration says, it renders ``feedback_templates/course_feedback``
    (which extends nbgrader's feedback template) with HTML sanitising on; the
    template filters ``clean_html`` and ``markdown2html`` clean student HTML with
    ``clean_student_html``, and the page body is cleaned again at the end
    (``secure_page``). It also compiles its templates once per process, not once per
    page (nbgrader makes a new exporter for every page; compiling took about 0.4 s).
    """

    def __init__(self, **kwargs) -> None:
        # Keyword arguments win over the configuration (nbgrader configures its own template).
        super().__init__(**{
            **kwargs,
            "sanitize_html": True,
            "template_name": TEMPLATE_NAME,
            "extra_template_basedirs": [str(TEMPLATES), str(NBGRADER_TEMPLATES)],
            "extra_template_paths": [str(NBGRADER_TEMPLATES)],  # where 'feedback/index.html.j2' is found
        })

    def _create_environment(self):
        """This thread's environment for these templates; this exporter's filters replace those of the one before.

        A thread renders one page at a time, and every filter a page uses is registered by
        its exporter before it renders (``_render`` registers the two that depend on the page).
        """
        key = (tuple(self.template_paths), self.template_extension, self.raw_template, self.enable_async)
        kept = _ENVIRONMENTS.__dict__.setdefault("by_key", {})
        environment = kept.get(key)
        if environment is None:
            environment = kept[key] = super()._create_environment()
            environment.bytecode_cache = _COMPILED_TEMPLATES
            return environment
        for name, value in [*self.default_filters(), *self.filters.items()]:
            self._register_filter(environment, name, value)
        return environment

    def default_filters(self):
        yield from super().default_filters()
        yield ("clean_html", clean_student_html)

    @pass_context
    def markdown2html(self, context, source):
        """Markdown rendered by nbconvert, then cleaned: raw HTML in markdown is the student's."""
        return clean_student_html(super().markdown2html(context, source))

    def _preprocess(self, nb, resources):
        # Outputs first: nbconvert validates the notebook after each preprocessor, and a kernel
        # can send outputs that are not valid (a dict as HTML, a text execution count).
        # (``nb`` is nbconvert's own copy of the notebook by now: changed in place, not copied again)
        nb, resources = super()._preprocess(make_outputs_safe(nb), resources)
        resources["feedback_parts"] = graded_parts(nb)
        resources["feedback_notes"] = feedback_notes(nb, resources)
        resources["content_security_policy"] = CONTENT_SECURITY_POLICY
        return nb, resources

    def from_notebook_node(self, nb, resources=None, **kw):
        if hasattr(self, "_init_resources") and hasattr(self, "_nb_metadata"):  # the nbconvert 7 that _render follows
            page, resources = self._render(nb, resources, **kw)
        else:
            page, resources = super().from_notebook_node(nb, resources, **kw)
        return secure_page(page), resources

    def _render(self, nb, resources, **kw):
        """``HTMLExporter.from_notebook_node`` without its last step.

        nbconvert parses every page again with BeautifulSoup to add image alternative texts
        and ``tabindex`` attributes: ``safe_output`` gives images their text, ``PAGE_CLEANER``
        would remove ``tabindex``, and the parse took a third of the page's time.
        """
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        highlight_code = self.filters.get("highlight_code",
                                          RememberedHighlight(Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)
