"""The stored form of the course's notebooks: what a run or a save in JupyterLab adds, taken out.

Opening, running and saving a notebook in JupyterLab rewrites run-time details: the
kernel's ``language_info`` (Python version, MIME type, lexer), execution counts and
outputs, widget state, view state (``collapsed``, ``scrolled``, hidden inputs), timing,
and trust. None of it is course content, so ``source/`` and ``release/`` are stored
without it: a save that changed nothing else shows no change in git, and the release
check compares whole notebooks. ``perceptron-course release`` normalises both folders.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat import NotebookNode

#: Keys of ``language_info`` that describe the kernel that last ran the notebook; only its ``name`` stays.
RUN_TIME_LANGUAGE_INFO = ("codemirror_mode", "file_extension", "mimetype", "nbconvert_exporter", "pygments_lexer", "version")

#: Metadata that records a run, a view or a trust decision (nbstripout's ``pop_recursive`` paths).
RUN_TIME_KEYS = (
    "metadata.signature",
    "metadata.widgets",
    *(f"metadata.language_info.{key}" for key in RUN_TIME_LANGUAGE_INFO),
    "cell.metadata.collapsed",
    "cell.metadata.scrolled",
    "cell.metadata.execution",
    "cell.metadata.ExecuteTime",
    "cell.metadata.heading_collapsed",
    "cell.metadata.hidden",
    "cell.metadata.trusted",
    "cell.metadata.jupyter",
)


def normalise(notebook: NotebookNode) -> NotebookNode:
    """The notebook without outputs, execution counts or run-time metadata (modified in place).

    Cell ids, sources, nbgrader metadata, tags and the kernelspec are kept.

    Parameters
    ----------
    notebook : NotebookNode
        An nbformat 4 notebook.

    Returns
    -------
    NotebookNode
        The same object, normalised.
    """
    from nbstripout import strip_output

    return strip_output(notebook, keep_output=False, keep_count=False, keep_id=True, extra_keys=list(RUN_TIME_KEYS))


def normalised_text(path: Path) -> str:
    """The stored form of the notebook at ``path``, as it would be written."""
    notebook = normalise(nbformat.read(path, as_version=4))
    text = nbformat.writes(notebook)
    return text if text.endswith("\n") else text + "\n"


def normalise_files(paths: list[Path]) -> list[Path]:
    """Rewrite the notebooks that are not in their stored form; return those rewritten.

    A notebook already normal is not touched (its modification time stays).
    """
    rewritten = []
    for path in paths:
        text = normalised_text(path)
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            rewritten.append(path)
    return rewritten


def course_notebooks(root: Path, assignments: list[str] | None = None) -> list[Path]:
    """Every notebook of ``source/`` and ``release/`` under a course ``root`` (or of some assignments)."""
    folders = [root / side / assignment for side in ("source", "release") for assignment in (assignments or ["."])]
    return sorted({path for folder in folders if folder.is_dir() for path in folder.rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in path.parts})
