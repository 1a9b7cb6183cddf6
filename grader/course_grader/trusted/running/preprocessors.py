"""nbgrader preprocessors: the verdicts, and what keeps one bad submission from spoiling its grade or the batch.

They are plugged into nbgrader's autograde by ``nbgrader_config.py``:

- ``ForgetUnknownCells`` (sanitising): a cell whose ``grade_id`` the gradebook does not
  know (pasted from another notebook), or a duplicate that ``DeduplicateIds`` emptied,
  becomes an ordinary cell; nbgrader 0.9 would crash on it.
- ``ResilientExecute`` (executing): runs the notebook in the sandboxed grading kernel.
  A graded test cell runs there without its hidden-test region; then each check that
  region declares runs the student's function on the cases through the harness, and
  the verdict, decided here from the returned data, becomes the cell's last output
  (an error when it fails, so nbgrader scores it 0). The visible tests' own errors are
  kept as text: hints, not the grade. A cell that kills the kernel costs that cell
  only (restart, replay of the earlier cells that had worked, at most
  ``max_restarts`` times); a time budget bounds the whole notebook, replays included (one
  deadline: every wait bounded by the time left, the kernel killed at it, ``deadline.py``);
  every output is capped while it arrives.
- ``StderrAsText``: text a test cell wrote to stderr (a warning) is kept but shown as
  ordinary output, so nbgrader does not score the cell 0 for it.
- ``LimitOutputSize``: no output keeps more than ``max_chars`` characters of text,
  or a rich (image, HTML, ...) value bigger than ``max_rich_chars``.
- ``SaveAutoGradesAtOnce``: nbgrader's ``SaveAutoGrades``, with one query and one commit
  for the notebook's rows instead of one of each per cell.
"""


from __future__ import annotations

import re

from nbconvert.exporters import NotebookExporter
from nbgrader import utils as nbgrader_utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor, SaveAutoGrades
from traitlets import Bool, Integer

from ..course.commands import grader_command
from ..gradebook.gradebook_rows import comment_of, grade_of, opened_rows
from .cells import cell_grade_id, is_test_cell
from .output_caps import MAX_RICH_CHARS, MAX_TEXT_CHARS, limit_output

#: What nbgrader's own autograde (the formgrader's *Autograde* button, ``nbgrader autograde``) says instead of running.
ONLY_THROUGH_GRADE = ("Autograde is not run from here in this course: in a terminal in the course folder, run "
                      "`{command} grade --student {student} --assignment {assignment}` (or `{command} grade` "
                      "for everyone). It grades in the grading sandbox, keeps the grades you gave by hand, and writes "
                      "the feedback, grades.csv and the report. Nothing was changed here.")


class GraderOnlyExporter(NotebookExporter):
    """The autograde's exporter (``c.Autograde.exporter_class``), made before anything is converted or removed:
    it refuses to exist unless the grader's ``grade`` set ``started_by_grade``.

    nbgrader's autograde with ``force`` (the formgrader's button always forces) removes
    ``autograded/<student>/<assignment>`` and resets the submission's grades before any
    preprocessor runs; ``ResilientExecute``'s own refusal came after that. This one comes first.
    """

    started_by_grade = Bool(False, help="set by the grader's grade command, whose grading kernels the autograde "
                                        "then runs in").tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.started_by_grade:
            converter = kwargs.get("parent")
            coursedir = getattr(converter, "coursedir", None)
            message = ONLY_THROUGH_GRADE.format(command=grader_command(), student=getattr(coursedir, "student_id", "<student>"),
                                                assignment=getattr(coursedir, "assignment_id", "<assignment>"))
            if converter is not None:
                converter.log.error(message)  # the formgrader shows the log first
            raise RuntimeError(message)


class ForgetUnknownCells(NbGraderPreprocessor):
    """Drop the nbgrader metadata of cells whose ``grade_id`` is missing or not in this notebook's source."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            try:
                notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return nb, resources
            known = {cell.name for cell in notebook.source_cells}
        for cell in nb.cells:
            if "nbgrader" not in cell.get("metadata", {}):
                continue
            grade_id = cell_grade_id(cell)
            if grade_id not in known:  # None: a copy that DeduplicateIds emptied, which nbgrader trips over
                self.log.warning("Cell %r is not part of this assignment; grading it as an ordinary cell", grade_id)
                del cell.metadata["nbgrader"]
        return nb, resources


class StderrAsText(NbGraderPreprocessor):
    """In test cells, turn stderr text into stdout text marked as such (errors still fail the cell)."""

    def preprocess_cell(self, cell, resources, index):
        if is_test_cell(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output["name"] = "stdout"
                    output["text"] = "[written to stderr] " + output["text"]
        return cell, resources


class LimitOutputSize(NbGraderPreprocessor):
    """Cut every output: text to ``max_chars`` characters, rich values (images, ...) to ``max_rich_chars``."""

    max_chars = Integer(MAX_TEXT_CHARS, help="characters kept per text output").tag(config=True)
    max_rich_chars = Integer(MAX_RICH_CHARS, help="largest rich (image, HTML, ...) value kept").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            limit_output(output, self.max_chars, self.max_rich_chars)
        return cell, resources


class SaveAutoGradesAtOnce(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades`` with the notebook's rows read in one query each and one commit.

    nbgrader looks up and commits each cell's row on its own; the scores, comments and
    "needs manual grade" marks it saves are the same (``gradebook_rows.py``).
    """

    def preprocess(self, nb, resources):
        with opened_rows(self, resources) as self._rows:
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)  # each cell, as SaveAutoGrades does
            self.gradebook.db.commit()
        return nb, resources

    def _add_score(self, cell, resources) -> None:
        grade = grade_of(self.gradebook, self._rows, cell.metadata["nbgrader"]["grade_id"])
        grade.auto_score, _ = nbgrader_utils.determine_grade(cell, self.log)
        # A manual grade given before, or no automatic score, needs a TA's look (as nbgrader decides).
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_comment(self, cell, resources) -> None:
        comment = comment_of(self.gradebook, self._rows, cell.metadata["nbgrader"]["grade_id"])
        untouched = cell.metadata.nbgrader.get("checksum", None) == nbgrader_utils.compute_checksum(cell)
        comment.auto_comment = "No response." if untouched and not nbgrader_utils.is_task(cell) else None


class NamedStubs(ClearSolutions):
    """nbgrader's ``ClearSolutions`` with stubs that name their function.

    ``{function}`` in ``ClearSolutions.code_stub`` becomes the name of the ``def``
    the solution region sits in, so an untouched stub says what to write.
    """

    def _replace_solution_region(self, cell, language):
        replaced = super()._replace_solution_region(cell, language)
        if replaced and "{function}" in cell.source:
            lines = cell.source.split("\n")
            for number, line in enumerate(lines):
                if "{function}" in line:
                    enclosing = [match.group(1) for earlier in lines[:number] if (match := _DEF.match(earlier))]
                    lines[number] = line.replace("{function}", enclosing[-1] if enclosing else "this function")
            cell.source = "\n".join(lines)
        return replaced


_DEF = re.compile(r"\s*def\s+(\w+)\s*\(")
