"""Feedback back to one student through nbgrader's exchange, as ``nbgrader release_feedback`` does.

A graded hand-in's pages (``feedback/<student>/<assignment>/``, with the ``timestamp.txt`` and
``submission_secret.txt`` nbgrader's autograde carried there) are released by nbgrader's own API
(``NbGraderAPI.release_feedback`` for that student), so ``nbgrader fetch_feedback`` and the
Assignments tab find them. A hand-in that is not graded (past its attempts, inside a cool-down,
refused at intake) gets a short page saying why, released under the name nbgrader gives a page of
that hand-in (``notebook_hash`` of its secret and notebook): the student fetches it the same way.
"""

from __future__ import annotations

import html
import os
import stat
from pathlib import Path

from ..course.course import Course, nbgrader_api, nbgrader_error_line
from ..course.files import UnsafeFileError, open_pages_for_exchange, write_new
from .inbox import exchange_root, handed_in_notebooks, handed_in_secret, nbgrader_settings


def release_graded(course: Course, student: str, assignment: str) -> str:
    """Release the feedback of ``student``'s graded ``assignment``; ``""`` when done, else why not."""
    folder = course.feedback / student / assignment
    if not (folder / "submission_secret.txt").is_file():
        return "no exchange hand-in (no submission_secret.txt): the feedback stays in feedback/ for the TA to return"
    try:
        outbound_feedback(course)
    except Exception as error:  # noqa: BLE001 -- nbgrader's ExchangeError among them: the reason, not the end
        return f"the exchange's feedback folder cannot be used: {error}"
    open_pages_for_exchange(folder)  # nbgrader copies each page with its mode
    api = nbgrader_api(course, exchange_config(course))
    result = api.release_feedback(assignment, student)
    return "" if result["success"] else f"release_feedback failed: {nbgrader_error_line(result)}"


def outbound_feedback(course: Course) -> Path:
    """The exchange's ``<course>/feedback`` folder, made as ``nbgrader release_feedback`` makes it (its own
    ``ExchangeReleaseFeedback.init_dest``: mode 0711, pages readable by their secret name, the folder not listable).

    A folder this service owns that others can list (a run before this fix made it 0755) is given that mode
    again: a listable feedback folder shows every student's pages to every student.
    """
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

    config = nbgrader_settings(course)  # groupshared among them, as nbgrader's own release_feedback reads it
    config.merge(exchange_config(course))
    coursedir = CourseDirectory(config=config)
    coursedir.course_id = course.term().course.id
    releaser = ExchangeReleaseFeedback(coursedir=coursedir, config=config)
    releaser.init_dest()  # raises nbgrader's ExchangeError when the folder is not the service's
    outbound = Path(releaser.outbound_feedback_path)
    info = os.lstat(outbound)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UnsafeFileError(f"{outbound} is not a real folder; nothing is released through it")
    listable = stat.S_IROTH | (0 if coursedir.groupshared else stat.S_IRGRP)
    if info.st_uid == os.geteuid() and info.st_mode & listable:
        os.chmod(outbound, stat.S_IMODE(info.st_mode) & ~listable)
    return outbound


def exchange_config(course: Course):
    from traitlets.config import Config

    config = Config()
    config.Exchange.root = str(exchange_root(course))
    return config


def notice_page(title: str, lines: list[str]) -> str:
    """A small self-contained page (no script, a Content-Security-Policy); every line is escaped."""
    body = "\n".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{html.escape(title)}</title></head>\n<body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def _outbound_of(course: Course, handin_folder: Path) -> "tuple[str, Path] | str":
    """The secret of an archived exchange hand-in and the exchange's feedback folder, or why there are none."""
    secret = handed_in_secret(handin_folder)
    if secret is None:
        return "no exchange hand-in (no submission_secret.txt): nothing released"
    try:
        return secret, outbound_feedback(course)
    except Exception as error:  # noqa: BLE001 -- nbgrader's ExchangeError among them: the reason, not the end
        return f"the exchange's feedback folder cannot be used: {error}"


def release_notice(course: Course, handin_folder: Path, title: str, lines: list[str]) -> str:
    """Release a notice page for each notebook of an archived exchange hand-in; ``""`` when done, else why not."""
    from nbgrader.utils import notebook_hash

    found = _outbound_of(course, handin_folder)
    if isinstance(found, str):
        return found
    secret, outbound = found
    page = notice_page(title, lines).encode("utf-8")
    for notebook in handed_in_notebooks(handin_folder):
        replace_page(outbound / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html", page)
    return ""


def replace_page(page: Path, content: bytes) -> None:
    """Put ``content`` at ``page`` in the exchange in one step (a temporary beside it, then a rename), readable by
    all as nbgrader's copy of a page is, whatever the umask (the course's is 077: a page the service wrote with it
    would be the service's alone, and the student's ``fetch_feedback`` could not read it)."""
    temporary = page.with_name(page.stem + "-tmp.html")
    if os.path.lexists(temporary):  # a run cut off between these two steps
        os.unlink(temporary)
    write_new(temporary, content)
    os.chmod(temporary, 0o644)
    os.replace(temporary, page)


def annotate_released(course: Course, handin_folder: Path, lines: list[str]) -> str:
    """Put ``lines`` (escaped) at the top of the released feedback pages of an archived exchange hand-in (the
    exchange's copies, as ``release_feedback`` wrote them; ``feedback/`` is left as it is); ``""`` when done, else
    why not."""
    import re

    from nbgrader.utils import notebook_hash

    found = _outbound_of(course, handin_folder)
    if isinstance(found, str):
        return found
    secret, outbound = found
    banner = ("<div class=\"serve-attempts\" style=\"border:1px solid #888;padding:0.5em;margin:0.5em\">"
              + "".join(f"<p>{html.escape(line)}</p>" for line in lines) + "</div>")
    for notebook in handed_in_notebooks(handin_folder):
        page = outbound / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html"
        try:
            text = page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not released (a notebook the grader did not grade): nothing to add to
        body = re.search(r"<body\b[^>]*>", text)
        if body is None:
            continue
        replace_page(page, (text[:body.end()] + banner + text[body.end():]).encode("utf-8"))
    return ""
