"""Student-controlled text (names, file names, messages) made safe to quote in what a TA reads."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,:;=+/()'\"-]")


def quoted(text: str, limit: int = 40) -> str:
    """Student-controlled text made safe to quote in a reason: one line, plain characters, short.

    Reasons end up in ``grades.csv``, the Markdown and HTML reports and the terminal; a grade
    id or a file name chosen by a student must not write headings, tables or HTML there.
    """
    plain = _UNSAFE.sub("?", " ".join(str(text).split()))
    return plain if len(plain) <= limit else plain[: limit - 3] + "..."
