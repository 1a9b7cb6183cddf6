"""The course's library (term.toml's ``[library]``): where it is installed, and its student modules.

Found without importing it: the grader never runs the library's code to learn where it lives.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def library_folder(package: str) -> Path | None:
    """Where the library ``package`` is installed (found without importing it), ``None`` if it is not."""
    if not package:
        return None
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def library_modules(package: str) -> tuple[str, ...]:
    """The public modules of the library ``package`` (its ``*.py`` files not starting with ``_``), sorted."""
    folder = library_folder(package)
    if folder is None:
        return ()
    return tuple(sorted(path.stem for path in folder.glob("*.py") if not path.name.startswith("_")))
