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
    text = str(value).encode("utf-8", "backslashreplace").decode("utf-8")
    if text.startswith("'") or (text.lstrip(" ").startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text.strip())):
        return "'" + text
    return text


def from_spreadsheet_cell(cell: str) -> str:
    """The value ``spreadsheet_cell`` wrote as ``cell`` (for the grader reading its own CSV back)."""
    return cell[1:] if cell.startswith("'") else cell


def markdown_text(text: str) -> str:
    """``text`` as one line of literal Markdown: no table cells, HTML, links, emphasis, code or terminal controls."""
    escaped = terminal_text(" ".join(str(text).split()))
    for character in "\\`*[]|":
        escaped = escaped.replace(character, "\\" + character)
    return escaped.replace("<", "&lt;").replace(">", "&gt;")


def markdown_table(rows: list[list[str]]) -> str:
    """Rows (the first is the header) as a Markdown table of literal text (``markdown_text``)."""
    lines = ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])
