"""Student and kernel text, made safe once for each format it enters: writable as UTF-8 anywhere, literal in Markdown.

Markdown is checked by rendering it with real renderers (nbconvert's mistune, and mistune with every syntax
plugin it has): planted syntax must come out as its own text, inside no element of its own.
"""

import csv
import html
import io
import json
from html.parser import HTMLParser

import mistune
import pytest
from nbconvert.filters.markdown import markdown2html_mistune

from course_grader.trusted.outputs.exports import write_csv
from course_grader.trusted.outputs.item_analysis import ItemRow, markdown_section
from course_grader.trusted.running.executor import unpack_kernel_message
from course_grader.trusted.course.safe_text import markdown_table, markdown_text, terminal_text, writable, writable_data
from course_grader.trusted.outputs.similarity import Match, SimilarityReview, markdown_section as similarity_markdown
from course_grader.trusted.judging.wire import Reply, parse_reply

#: Every Markdown syntax a message could plant, one line (links, autolinks, emphasis, strikethrough, code, headings,
#: table cells, footnotes, math, HTML, entities, images, and the extensions some renderers have).
PLANTED = ("[click here](https://evil.example/grab) _emphasis_ __strong__ ~~strike~~ **bold** *em* "
           "https://evil.example/auto www.evil.example <https://evil.example/angle> <ta@evil.example> ta@evil.example "
           "# heading | cell | `code` ``more code`` [^1] [ref] <b>html</b> <script>alert(1)</script> <!-- hidden --> "
           "$x^2$ $$y$$ ==mark== ~sub~ ^sup^ ++ins++ >!spoiler!< ![image](https://evil.example/i.png) &lt;b&gt; &#60;i&#62; "
           "\\*escaped\\* ***both*** _a_b_ :smile: - [ ] task")
#: Texts that start a line (a list item, a heading, a quote, a thematic break, an ordered list).
LINE_STARTS = ["# heading", "- item", "+ item", "* item", "1. first", "2) second", "> quote", "---", "===", "***",
               "    indented code", "<div>block</div>", "[^1]: a footnote", "[ref]: https://evil.example", "| a | b |"]

FULL_MISTUNE = mistune.create_markdown(escape=False, plugins=[  # raw HTML kept: planted HTML would show as tags
    "strikethrough", "footnotes", "table", "url", "task_lists", "def_list", "abbr", "mark", "insert", "superscript",
    "subscript", "math", "ruby", "spoiler"])
RENDERERS = {"nbconvert": markdown2html_mistune, "mistune, every plugin": FULL_MISTUNE}


class Elements(HTMLParser):
    """The tags of an HTML fragment, and its text as a reader sees it."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.tags.append("!--")


def rendered(markdown: str, renderer) -> Elements:
    return Elements(renderer(markdown))


@pytest.mark.parametrize("renderer", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("text", [PLANTED, *LINE_STARTS])
def test_planted_markdown_renders_as_its_own_text_in_a_paragraph_a_list_and_a_table_cell(renderer, text):
    shown = " ".join(text.split())
    paragraph = rendered(markdown_text(text), renderer)
    assert paragraph.tags == ["p"], paragraph.tags
    assert "".join(paragraph.text).strip() == shown
    item = rendered("- " + markdown_text(text), renderer)
    assert item.tags == ["ul", "li"], item.tags
    assert "".join(item.text).strip() == shown
    table = rendered(markdown_table([["part", "most common failure"], ["augment", text]]), renderer)
    assert table.tags == ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"], table.tags
    assert shown in "".join(table.text)


def test_ordinary_text_stays_readable_in_the_file():
    for text in ("01_geometry/test_augment: 3/4", "0.75", "-0.52", "w·x <= 0 on a, b (x, y)", "ada_reference, 2 submissions"):
        assert markdown_text(text) == text.replace("<", "&lt;")


def test_an_item_analysis_failure_line_renders_inert_in_the_report():
    # Found in a held-out attack: an exception message placed a live link, emphasis and strikethrough in reports/report.md.
    from course_grader.trusted.outputs.item_analysis import Correlation

    failure = f"set_margin raised ValueError: {PLANTED}"
    row = ItemRow("01_geometry", "test_set_margin", "", "", 4, 3, Correlation(0.5), Correlation(0.4), failure, 1)
    section = markdown_section([row], None)
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))  # (nbconvert links its headings)
    assert table.count("\n") == 2 and PLANTED[:20] not in table
    for renderer in RENDERERS.values():
        elements = rendered(table, renderer)
        assert not {"a", "em", "strong", "del", "code", "img", "mark", "sup", "sub", "ins", "b", "script", "h1", "!--"} \
            & set(elements.tags), elements.tags
        assert elements.tags.count("td") == 8  # one row of the part table: the message made no cell of its own


def test_similar_code_is_listed_as_literal_lines_with_their_indent():
    line = '    url = "https://evil.example/x"  # _see_ ~~this~~ [here](https://evil.example)'
    match = Match("01_geometry", "augment", "ada", "student ben", "student", 1.0, ((1, line),), ((1, line),))
    section = similarity_markdown(SimilarityReview(matches=[match]))
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))  # (nbconvert links its headings)
    for renderer in RENDERERS.values():
        elements = rendered(table, renderer)
        assert not {"a", "em", "del", "code"} & set(elements.tags), elements.tags
        assert "\u00a0" * 4 + 'url = "https://evil.example/x"' in "".join(elements.text)


SURROGATES = "A" + chr(0xD800) + "B" + chr(0xDFFF) + chr(0xDCFF) + "\x00\x1b[2J\u202e"


def test_writable_text_has_no_lone_surrogate_and_keeps_everything_else():
    text = writable(SURROGATES)
    assert text == "A\\ud800B\\udfff\\udcff\x00\x1b[2J\u202e"
    text.encode("utf-8")
    assert writable("héllo, wörld → ∑ 😀") == "héllo, wörld → ∑ 😀"


def test_writable_data_walks_every_string_and_key_without_recursion():
    nested: list = []
    deepest = nested
    for _ in range(5000):  # deeper than Python recurses
        deepest.append([])
        deepest = deepest[0]
    deepest.append({chr(0xD800): [chr(0xDC00), 1, None]})
    data = {"content": {"text": SURROGATES, "data": {"text/html": ["<b>" + chr(0xD800)]}}, "deep": nested}
    cleaned = writable_data(data)
    assert json.dumps(cleaned["content"], ensure_ascii=False).encode("utf-8")
    assert deepest[0] == {"\\ud800": ["\\udc00", 1, None]}
    assert cleaned["content"]["data"]["text/html"] == ["<b>\\ud800"]


def test_every_message_from_a_kernel_is_unpacked_writable():
    # A kernel can send any JSON; its escapes of lone surrogates become visible escapes, bytes that are not UTF-8 U+FFFD.
    raw = json.dumps({"name": "stdout", "text": SURROGATES, chr(0xD801): "key"}).encode("ascii")
    message = unpack_kernel_message(raw)
    assert message["text"] == writable(SURROGATES) and message["\\ud801"] == "key"
    assert unpack_kernel_message(b'{"text": "bad \xff\xfe"}') == {"text": "bad \ufffd\ufffd"}


def test_a_reply_with_lone_surrogates_is_read_as_writable_data():
    line = json.dumps({"index": 0, "error": ["Bad" + chr(0xD800) + "Error", "message " + chr(0xDBFF)],
                       "again_error": ["Bad" + chr(0xD800) + "Error", "again"]})
    reply = parse_reply(line)
    assert isinstance(reply, Reply) and reply.error == ("Bad\\ud800Error", "message \\udbff")
    line = json.dumps({"index": 0, "result": ["dict", [[chr(0xD800), ["str", chr(0xDFFF)]]]],
                       "args_after": [["other", chr(0xD800) + "Thing"]], "again": ["str", chr(0xDC00)]})
    reply = parse_reply(line)
    assert reply.result == {"\\ud800": "\\udfff"} and reply.args_after[0].type_name == "\\ud800Thing"
    assert reply.again == "\\udc00"


def test_every_writer_takes_kernel_text(tmp_path):
    text = writable(SURROGATES)
    write_csv(tmp_path / "x.csv", ["student", "reason"], [["ada", text]])
    with (tmp_path / "x.csv").open(newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle))[1] == ["ada", text]
    io.TextIOWrapper(io.BytesIO(), encoding="utf-8").write(terminal_text(text))
    assert "\x1b" not in terminal_text(text) and "\u202e" not in terminal_text(text)
    assert "\x1b" not in markdown_text(text) and "\x00" not in markdown_text(text)
    html.escape(text).encode("utf-8")
