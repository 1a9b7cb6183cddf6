"""The report's figures: drawn on a ``matplotlib.figure.Figure`` (no pyplot), written only when what they show changed.

Every ``grade``, ``refresh`` and export of ``serve`` rewrites the report, and drawing its figures is most of that
work (about a second each, with matplotlib's import). A figure's file carries, in a PNG text chunk, a digest of
what it shows and of the module that draws it; when both are the same the file is kept as it is. Without pyplot
there is no global figure state and no backend to choose (a service's threads draw safely, a TA's display is never
opened): matplotlib's own advice for programs that write files.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The PNG text chunk that holds the digest of what a figure shows.
DIGEST_KEY = "course-grader-shows"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DPI = 90


def png_text(data: bytes) -> dict[str, str]:
    """The ``tEXt`` chunks of the PNG file ``data`` (``{}`` when it is no PNG)."""
    if not data.startswith(PNG_SIGNATURE):
        return {}
    texts, offset = {}, len(PNG_SIGNATURE)
    while offset + 8 <= len(data):  # each chunk: length (4 bytes), type (4), data, CRC (4)
        length, kind = int.from_bytes(data[offset:offset + 4], "big"), data[offset + 4:offset + 8]
        if kind == b"tEXt":
            keyword, _, text = data[offset + 8:offset + 8 + length].partition(b"\0")
            texts[keyword.decode("latin-1")] = text.decode("latin-1")
        offset += 12 + length
    return texts


def _digest_in(path: Path) -> str | None:
    """The digest of what the figure in ``path`` shows (``None``: no such file, or none written by ``save_figure``)."""
    try:
        data = path.read_bytes()  # a figure of reports/, written here: small
    except OSError:
        return None
    return png_text(data).get(DIGEST_KEY)


def digest_of(shows: object, draw: Callable[["Figure", object], None], figsize: tuple[float, float]) -> str:
    """A digest of ``shows`` (plain data whose ``repr`` is all it holds), of the source of ``draw``'s module (an edit
    of the drawing there draws again) and of the size."""
    try:
        code = inspect.getsource(inspect.getmodule(draw))
    except (OSError, TypeError):  # drawn by code without a file (``python -c``): its bytecode
        code = draw.__code__.co_code.hex()
    drawing = f"{draw.__module__}.{draw.__qualname__}\n{code}\n{figsize!r}\n{DPI}\n"
    return hashlib.sha256((drawing + repr(shows)).encode("utf-8")).hexdigest()


def save_figure(path: Path, shows: object, draw: Callable[["Figure", object], None], figsize: tuple[float, float]) -> Path:
    """Write ``draw(figure, shows)`` to the PNG ``path``, unless ``path`` already holds that very figure.

    Parameters
    ----------
    path : Path
        The PNG file to write.
    shows : object
        Everything the figure shows, as plain data (tuples, lists, strings, numbers): ``draw`` reads nothing else.
    draw : callable
        ``draw(figure, shows)`` draws on a white ``Figure`` of ``figsize`` inches.
    figsize : tuple of float
        ``(width, height)`` in inches.

    Returns
    -------
    Path
        ``path``.
    """
    digest = digest_of(shows, draw, figsize)
    if _digest_in(path) == digest:
        return path
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, facecolor="white")
    draw(figure, shows)
    figure.savefig(path, dpi=DPI, metadata={DIGEST_KEY: digest})
    return path
