"""What the grader reads of a notebook cell's nbgrader metadata, and the error output it writes into a cell."""

from __future__ import annotations

from nbformat.v4 import new_output


def cell_grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def is_test_cell(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade"))


def error_output(ename: str, evalue: str):
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])
