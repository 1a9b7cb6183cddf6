"""A check's reference taken from its assignment's source solution, run on the trusted side.

``solution("unit_normal", __file__)`` in a ``hidden_checks.py`` is the function the source
notebook beside it defines in its solution cell. The notebook's code cells (its test cells left
out) run in the TA's process the first time the reference is called, once per process and
version of the notebook: a grading worker runs them once whatever the number of students it
grades, and listing or loading the checks runs nothing.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

_SOLUTIONS_LOCK = threading.Lock()
#: The namespace the solution cells of a notebook defined, by path: ``(size, mtime_ns, namespace)``.
_SOLUTIONS: dict[Path, tuple[int, int, dict]] = {}


def _is_test_cell(cell: dict) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def solution_namespace(notebook: Path) -> dict:
    """What a source notebook's code cells define when run in order, its test cells left out.

    Run on the trusted side, once per process and version of the notebook (a grading worker
    runs it once for every student it grades). Each cell is compiled under the notebook's path,
    so that the grader's record of a checker (``case_sets.checker_id``) follows an edited solution.
    """
    import nbformat

    path = Path(notebook).resolve()
    info = path.stat()
    with _SOLUTIONS_LOCK:
        kept = _SOLUTIONS.get(path)
        if kept is not None and kept[:2] == (info.st_size, info.st_mtime_ns):
            return kept[2]
        os.environ.setdefault("MPLBACKEND", "Agg")  # a plotting cell draws nowhere
        # The notebook's own prints (a lecture-style cell showing a run) would land in the TA's terminal, in the
        # middle of `grade`'s or `check`'s lines: its print is a silent one here (sys.stdout, shared by every thread
        # of the process, stays as it is).
        namespace: dict = {"__name__": f"_solution_of_{path.stem}", "print": _silent_print}
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and not _is_test_cell(cell) and cell.source.strip():
                exec(compile(_without_magics(cell.source), str(path), "exec"), namespace)  # noqa: S102 - the instructor's own source
        _SOLUTIONS[path] = (info.st_size, info.st_mtime_ns, namespace)
        return namespace


def _silent_print(*args, **kwargs) -> None:
    """``print`` for the solution's cells and functions: nothing shown (their output is nobody's to read)."""


def _without_magics(source: str) -> str:
    """A cell's source as plain Python: IPython's magics and ``!`` lines turned into Python, as the kernel would."""
    if "%" not in source and "!" not in source:
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


class SolutionFunction:
    """A function of a source notebook's solution, defined when it is first called (see ``solution``)."""

    def __init__(self, name: str, notebook: Path):
        self.name, self.notebook = name, notebook
        self.__name__ = self.__qualname__ = name
        self.__doc__ = f"{name} as the solution of {notebook.name} defines it."

    @property
    def __wrapped__(self) -> Callable:  # inspect.unwrap reaches the function, compiled under the notebook's path
        namespace = solution_namespace(self.notebook)
        if not callable(namespace.get(self.name)):
            raise LookupError(f"{self.notebook} defines no function {self.name} in its solution cells")
        return namespace[self.name]

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        return f"solution({self.name!r}, {str(self.notebook)!r})"


def solution(name: str, beside: str | os.PathLike, notebook: str | None = None) -> SolutionFunction:
    """The reference a check takes from its assignment's source solution: the function ``name``.

    Parameters
    ----------
    name : the function, as the solution cell (``### BEGIN SOLUTION``) defines it
    beside : ``__file__`` of the hidden_checks.py (its folder holds the notebook)
    notebook : the notebook's file name; by default the one notebook of the folder

    The notebook's code cells, test cells left out, run on the trusted side the first time the
    reference is called (never at import, so listing checks runs nothing). Use it where the
    solution is the right reference (one truth: no second copy of the answer in the check); keep a
    library function as the reference where the library is what the lecture teaches.
    """
    folder = Path(beside).resolve().parent
    if notebook is None:
        found = sorted(folder.glob("*.ipynb"))
        if len(found) != 1:
            raise LookupError(f"{folder} holds {len(found)} notebooks: name the one of {name}'s solution "
                              f"(solution({name!r}, __file__, notebook=...))")
        path = found[0]
    else:
        path = folder / notebook
    return SolutionFunction(name, path)
