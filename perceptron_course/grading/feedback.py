"""Feedback without hidden tests.

nbgrader restores the full test cells (hidden tests included) into ``autograded/``
and renders them into feedback by default. This preprocessor, run by
``GenerateFeedback`` (see ``nbgrader_config.py``), removes each hidden-test
region from the cell source and cuts the traceback of any error in such a cell
down to its last line, since a traceback quotes the lines around the failure.
"""

from __future__ import annotations

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
