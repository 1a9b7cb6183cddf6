"""Feedback without hidden tests.

nbgrader restores the full test cells (hidden tests included) into ``autograded/``
and renders them into feedback by default. This preprocessor, run by
``GenerateFeedback`` (see ``nbgrader_config.py``), removes each hidden-test
region from the cell source and cuts the traceback of any error in such a cell
down to its last line, since a traceback quotes the lines around the failure.
"""

from __future__ import annotations

from jinja2 import BytecodeCache
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode

HIDDEN_PLACEHOLDER = "# (hidden tests: not shown)"


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


class FeedbackHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter, compiling its templates once per process, not once per page.

    nbgrader makes a new exporter for every feedback page, and compiling the templates
    took about 0.4 s of each.
    """

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = _COMPILED_TEMPLATES
        return environment
