"""The course's library (term.toml's ``[library]``): where it is installed, and its student modules.

Found without importing it: the grader never runs the library's code to learn where it lives.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterable
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


def functions_defined(package: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """Which of ``names`` the library ``package`` defines at the top of a public module, read without importing it.

    Parameters
    ----------
    package : str
        The library's package (term.toml's ``library.package``).
    names : iterable of str
        Function names, e.g. those an assignment asks students to write.

    Returns
    -------
    list of (str, str)
        ``(module, function)`` pairs in the order of ``names``, each name once (its first module, sorted);
        empty when the library is not installed.
    """
    folder = library_folder(package)
    defined: dict[str, str] = {}
    for module in library_modules(package) if folder is not None else ():
        try:
            tree = ast.parse((folder / f"{module}.py").read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.setdefault(node.name, module)
    return [(defined[name], name) for name in dict.fromkeys(names) if name in defined]
