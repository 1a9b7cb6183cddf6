"""Student-controlled text (names, file names, messages) made safe to quote in what a TA reads."""

from __future__ import annotations

import re
import unicodedata

from ...intake_rules import short

_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,:;=+/()'\"-]")


def quoted(text: str, limit: int = 40) -> str:
    """Student-controlled text made safe to quote in a reason: one line, plain characters, short.

    Reasons end up in ``grades.csv``, the Markdown and HTML reports and the terminal; a grade
    id or a file name chosen by a student must not write headings, tables or HTML there.
    """
    return _UNSAFE.sub("?", short(text, limit))  # one character for one: the length stays within limit


def plain_line(text: str, limit: int = 200) -> str:
    """Student-influenced text as one short line with nothing a terminal acts on, its characters kept.

    For what goes only through a writer that escapes its own markup (``markdown_text``, Jinja's
    autoescape, ``spreadsheet_cell``): ``w·x <= 0`` stays readable there, where ``quoted`` would
    write ``w?x ?= 0``.
    """
    return terminal_text(short(text, limit), keep="")


#: Unicode categories a terminal may act on or that cannot be written as UTF-8: controls (C0, DEL, C1,
#: which hold ESC and CSI), format characters (bidirectional overrides that reorder a line), surrogates
#: (what Python makes of a file name that is not UTF-8), private use and unassigned code points.
_ACTING_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def _visible(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def terminal_text(text: object, keep: str = "\n") -> str:
    """``text`` safe to print on a TA's terminal: every character a terminal acts on written as a visible escape.

    Escape sequences (``ESC [ 2 J``, ``OSC 52`` that writes the clipboard, a title change), C1
    controls, bidirectional overrides and the surrogates of a file name that is not UTF-8 become
    ``\\x1b``, ``\\u202e``, ``\\udcff``. The characters in ``keep`` (by default the newline, so
    that a table can be printed whole) are left as they are.

    >>> terminal_text("ada\\x1b[2J")
    'ada\\\\x1b[2J'
    """
    return "".join(_visible(c) if c not in keep and unicodedata.category(c) in _ACTING_CATEGORIES else c for c in str(text))


_SURROGATE = re.compile("[\ud800-\udfff]")


def writable(text: str) -> str:
    """``text`` with every lone surrogate written as a visible escape (``\\ud800``): it can then be written as UTF-8.

    Python's strings may hold lone surrogates (from a JSON escape ``"\\ud800"``, from ``chr``, from a file
    name that is not UTF-8), which raise ``UnicodeEncodeError`` wherever the text is written: a notebook,
    a page, a CSV, the terminal. Everything else is kept as it is.
    """
    if text.isascii():  # (a flag of the string: no scan) most of what a kernel sends
        return text
    try:  # a scan in C, several times faster than a regular expression's: a kernel's text is read at this pace
        text.encode("utf-8")
    except UnicodeEncodeError:  # (only a surrogate cannot be encoded)
        return _SURROGATE.sub(lambda match: _visible(match.group()), text)
    return text


def writable_data(value: object) -> object:
    """``value`` (JSON data: dicts, lists, strings, numbers) with ``writable`` applied to every string, keys included.

    Walks without recursion (a kernel's message may nest as deep as ``json`` reads); changes
    lists and dicts in place and returns ``value`` (or the new string, for a string).
    """
    if isinstance(value, str):
        return writable(value)
    pending = [value]
    while pending:
        container = pending.pop()
        if isinstance(container, list):
            for position, item in enumerate(container):
                if isinstance(item, str):
                    container[position] = writable(item)
                elif isinstance(item, (list, dict)):
                    pending.append(item)
        elif isinstance(container, dict):
            for key in [key for key in container if isinstance(key, str) and _SURROGATE.search(key)]:
                container[writable(key)] = container.pop(key)
            for key, item in container.items():
                if isinstance(item, str):
                    container[key] = writable(item)
                elif isinstance(item, (list, dict)):
                    pending.append(item)
    return value


#: First characters that make a spreadsheet or an LMS importer read a cell as a formula (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: object) -> str:
    """``value`` as a CSV cell no spreadsheet runs: a cell starting (after spaces) like a formula gets a leading ``'``.

    Numbers stay numbers (``-1``, ``+2.5``, ``1e-3``). A cell that starts with ``'`` gets one more,
    so that ``from_spreadsheet_cell`` gives back exactly what was written. Text that cannot be
    written as UTF-8 (a folder name that is not UTF-8) is written with visible escapes instead of
    stopping the file.
    """
    text = writable(str(value))
    if text.startswith("'") or (text.lstrip(" ").startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text.strip())):
        return "'" + text
    return text


def from_spreadsheet_cell(cell: str) -> str:
    """The value ``spreadsheet_cell`` wrote as ``cell`` (for the grader reading its own CSV back)."""
    return cell[1:] if cell.startswith("'") else cell


#: ASCII punctuation with no Markdown meaning on its own (``_``, ``-``, ``+``, ``=``, ``.``, ``:`` and ``)`` are
#: left as they are only where ``_markdown_escaped`` finds them inert).
_INERT_PUNCTUATION = frozenset(",;?'\"%/(){}!")
_LIST_NUMBER = re.compile(r"\d{1,9}[.)]")


def _markdown_escaped(text: str, position: int) -> bool:
    """Whether the ASCII punctuation at ``text[position]`` needs a backslash to stay literal in Markdown.

    CommonMark lets every ASCII punctuation character be escaped; only those that can start
    syntax are, so that ``01_geometry/augment: 3 of 4`` stays readable in the file:
    ``_`` between two letters or digits (it never delimits emphasis there), ``-``, ``+``, ``=``,
    ``.`` and ``)`` except where they start a list or make a heading underline (``- x``, ``1. x``,
    ``===``), doubled (``++``, ``==``) or after ``www`` (an autolink), ``:`` except before ``/``
    (``https://``).
    """
    character = text[position]
    before = text[position - 1] if position else ""
    after = text[position + 1] if position + 1 < len(text) else ""
    if character == "_":
        return not (before.isalnum() and after.isalnum())
    if character in "-+=.)":
        # a list item (``- x``, ``1. x``), a thematic break or heading underline (``---``, ``===``) starts the line
        starts = position == 0 or (character in ".)" and _LIST_NUMBER.fullmatch(text[: position + 1]) is not None)
        at_start = starts and (after in ("", " ") or set(text) == {character})
        doubled = character in "+=" and character in (before, after)
        www = character == "." and text[max(0, position - 3): position].lower() == "www"
        return at_start or doubled or www
    if character == ":":
        return after == "/"
    return character not in _INERT_PUNCTUATION


def _markdown_character(line: str, position: int) -> str:
    character = line[position]
    if character in "<>&":  # entities, not backslashes: some renderers write an escaped & raw, and &#60; became <
        return {"<": "&lt;", ">": "&gt;", "&": "&amp;"}[character]
    if character.isascii() and not character.isalnum() and not character.isspace() and _markdown_escaped(line, position):
        return "\\" + character
    return character


def markdown_text(text: object, *, keep_indent: bool = False) -> str:
    """``text`` as one line of literal Markdown: no link, autolink, emphasis, strikethrough, code, heading, list,
    table cell, footnote, math, HTML or terminal control, in any CommonMark or GFM renderer.

    Whitespace runs become one space (``keep_indent``: leading spaces are kept, as no-break spaces);
    ``<``, ``>`` and ``&`` become entities, and the punctuation that can start syntax gets a backslash
    (``_markdown_escaped``).
    """
    text = terminal_text(writable(str(text)))
    stripped = text.lstrip(" ") if keep_indent else text
    line = " ".join(stripped.split())
    escaped = "".join(_markdown_character(line, position) for position in range(len(line)))
    return "\u00a0" * (len(text) - len(stripped)) + escaped


def markdown_table(rows: list[list[str]]) -> str:
    """Rows (the first is the header) as a Markdown table of literal text (``markdown_text``)."""
    lines = ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])
