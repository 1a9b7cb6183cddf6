"""The course on disk: where things live, and nbgrader's configuration for it.

A course root holds ``nbgrader_config.py``, ``source/<assignment>/`` and, once
students hand in, ``submitted/<student>/<assignment>/``. Everything the grader
writes (``autograded/``, ``feedback/``, ``gradebook.db``, ``grades.csv``,
``reports/``) goes under the same root.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .files import readable_name
from .nbgrader_patches import stamp_new_gradebooks_in_process

CONFIG_FILE = "nbgrader_config.py"


class CourseError(Exception):
    """A problem the TA must fix; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class Course:
    """A course root and the assignments it defines."""

    root: Path

    @classmethod
    def open(cls, root: str | os.PathLike) -> "Course":
        """Check that ``root`` is a course and return it.

        Raises
        ------
        CourseError
            If the folder or its ``nbgrader_config.py`` or ``source/`` is missing.
        """
        path = Path(root).expanduser().resolve()
        if not path.is_dir():
            raise CourseError(f"course root {path} does not exist; pass --root with the folder holding {CONFIG_FILE}")
        if not (path / CONFIG_FILE).is_file():
            raise CourseError(f"no {CONFIG_FILE} in {path}; pass --root with the course folder (the one holding source/)")
        if not (path / "source").is_dir():
            raise CourseError(f"no source/ folder in {path}; the course's assignments live in source/<assignment>/")
        return cls(path)

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def release(self) -> Path:
        return self.root / "release"

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def grades_csv(self) -> Path:
        return self.root / "grades.csv"

    def assignments(self) -> list[str]:
        """Assignment ids of the term, in its order (``term.toml``'s ``[[assignments]]``, each a folder of ``source/``);
        without a term file, the folders of ``source/`` (sorted; hidden folders ignored).

        Raises
        ------
        CourseError
            If the term file is wrong.
        """
        from .term import TERM_FILE

        if (self.root / TERM_FILE).is_file():
            return self.term().assignment_names
        return self.source_folders()

    def source_folders(self) -> list[str]:
        """The assignment folders of ``source/`` (sorted; hidden folders ignored), in the term or not."""
        return sorted(p.name for p in self.source.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))

    def term(self):
        """The course's ``term.toml``, checked (``term.load_term``).

        Raises
        ------
        CourseError
            If it is missing or wrong (the message names the key).
        """
        from .term import TermError, load_term

        try:
            return load_term(self.root)
        except TermError as error:
            raise CourseError(str(error)) from None

    def notebook_names(self, assignment: str) -> list[str]:
        """Notebook ids (file stems) of an assignment's source."""
        return sorted(p.stem for p in (self.source / assignment).glob("*.ipynb"))

    def _source_cells(self, assignment: str) -> list[dict]:
        """Every cell of an assignment's source notebooks, in order."""
        cells = []
        for name in self.notebook_names(assignment):
            cells += json.loads((self.source / assignment / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        return cells

    def _nbgrader_cells(self, assignment: str) -> list[dict]:
        """The nbgrader metadata of every nbgrader cell of an assignment's source, in order."""
        return [cell["metadata"]["nbgrader"] for cell in self._source_cells(assignment) if "nbgrader" in cell.get("metadata", {})]

    def solution_functions(self, assignment: str) -> list[str]:
        """Names of the functions an assignment's source solutions define (``def`` at the top of a solution cell), in
        order: what its students are asked to write."""
        names = []
        for cell in self._source_cells(assignment):
            if cell.get("cell_type") == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                names += re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", source, flags=re.MULTILINE)
        return names

    def cell_ids(self, assignment: str) -> list[str]:
        """``grade_id`` of every nbgrader cell of an assignment's source, in order."""
        return [meta["grade_id"] for meta in self._nbgrader_cells(assignment)]

    def graded_cells(self, assignment: str) -> dict[str, float]:
        """Points of every graded cell of an assignment's source, by ``grade_id``, in order."""
        return {meta["grade_id"]: float(meta["points"]) for meta in self._nbgrader_cells(assignment) if meta.get("grade")}

    def manually_graded_cells(self, assignment: str) -> list[str]:
        """``grade_id`` of the answers a TA grades by hand (graded solution cells), in order."""
        return [meta["grade_id"] for meta in self._nbgrader_cells(assignment) if meta.get("grade") and meta.get("solution")]

    def submissions(self) -> list[tuple[str, str]]:
        """``(student, assignment)`` of every folder ``submitted/<student>/<assignment>/``, sorted."""
        if not self.submitted.is_dir():
            return []
        return sorted(
            (readable_name(student.name), readable_name(assignment.name))  # not UTF-8, or controls: shown escaped, refused
            for student in self.submitted.iterdir()
            if student.is_dir() and not student.name.startswith(".")
            for assignment in student.iterdir()
            if assignment.is_dir() and not assignment.name.startswith(".")
        )


def copy_course_settings(source_root: Path, destination: Path) -> None:
    """Copy what nbgrader's configuration reads (``nbgrader_config.py``, ``term.toml`` and the term's header
    notebook) from one course root to another, so a scratch course configures nbgrader as the course does."""
    import shutil

    from .term import TERM_FILE, load_term

    shutil.copy2(source_root / CONFIG_FILE, destination / CONFIG_FILE)
    if (source_root / TERM_FILE).is_file():
        shutil.copy2(source_root / TERM_FILE, destination / TERM_FILE)
        header = load_term(source_root).course.header
        if header:
            (destination / header).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source_root / header, destination / header)


def load_config(course: Course, **overrides):
    """nbgrader's configuration from the course's ``nbgrader_config.py``, rooted at the course.

    ``overrides`` set ``CourseDirectory`` traits (e.g. ``release_directory``).
    """
    from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

    from .term import TermError

    try:
        config = PyFileConfigLoader(CONFIG_FILE, path=str(course.root)).load_config()
    except ConfigFileNotFound:
        raise CourseError(f"cannot read {course.root / CONFIG_FILE}") from None
    except TermError as error:  # nbgrader_config.py reads term.toml: the term's key is the one to fix
        raise CourseError(str(error)) from None
    except Exception as error:  # noqa: BLE001 - a broken config file is the TA's to fix
        raise CourseError(f"{course.root / CONFIG_FILE} does not load: {type(error).__name__}: {error}") from None
    config.CourseDirectory.root = str(course.root)
    for key, value in overrides.items():
        config.CourseDirectory[key] = value
    return config


def _put_interpreter_on_path() -> None:
    """nbgrader runs the ``alembic`` executable from PATH: make this environment's scripts findable,
    so that ``.venv/bin/perceptron-course`` works without activating the environment."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def nbgrader_api(course: Course, extra_config=None, **overrides):
    """An ``NbGraderAPI`` for the course, quiet except for errors (its methods never raise).

    ``extra_config`` (a traitlets ``Config``) is merged over the course's configuration;
    ``overrides`` set ``CourseDirectory`` traits.
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    _put_interpreter_on_path()
    stamp_new_gradebooks_in_process()
    config = load_config(course, **overrides)
    if extra_config is not None:
        config.merge(extra_config)
    config.NbGraderAPI.log_level = "ERROR"
    coursedir = CourseDirectory(config=config)
    return NbGraderAPI(coursedir=coursedir, config=config)


ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception|Exit|Interrupt)\b")


def nbgrader_error_line(result: dict) -> str:
    """The most telling line of a failed nbgrader call: its last ``SomeError: message``."""
    text = (result.get("error") or "") + "\n" + (result.get("log") or "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if ERROR_LINE.match(line) and "Please see" not in line:
            return line[:300]
    return lines[-1][:300] if lines else "nbgrader failed without a message"
