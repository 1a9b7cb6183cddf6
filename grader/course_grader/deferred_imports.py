"""Imports put off until their first use, for a program's start.

``import nbformat`` (and so nbgrader, and every command and sandbox of the grader) imports jsonschema, whose
``format-nongpl`` extra, installed by nbformat, brings ``rfc3987_syntax``: that module compiles its Earley grammars
when it is imported, about 1.4 s of CPU in every program (nine tenths of ``import nbformat``), to check the ``iri``
and ``iri-reference`` string formats that no notebook schema uses (python-jsonschema/jsonschema#1428). Here
``rfc3987_syntax`` is a stand-in until its one function is called; the call imports the real module and goes on to
it, so a check of those formats, if one is ever made, answers as before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

RFC3987_SYNTAX = "rfc3987_syntax"


def _real_rfc3987_syntax() -> types.ModuleType:
    """The real module, imported now in the stand-in's place (which then leaves ``sys.modules``)."""
    stand_in = sys.modules.get(RFC3987_SYNTAX)
    if getattr(stand_in, "__deferred__", False):
        del sys.modules[RFC3987_SYNTAX]
    return importlib.import_module(RFC3987_SYNTAX)


def is_valid_syntax(term: str, value: str) -> bool:
    """``rfc3987_syntax.is_valid_syntax``, whose module is imported at this first call."""
    return _real_rfc3987_syntax().is_valid_syntax(term=term, value=value)


def _real_attribute(name: str):
    """Any other public name of the module: the real module's (a dunder, which the import system and ``repr`` look
    for, is not one: asking for it must not import the module)."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_real_rfc3987_syntax(), name)


def defer_rfc3987_syntax() -> bool:
    """Put a stand-in for ``rfc3987_syntax`` in ``sys.modules``, if it is installed and not imported yet.

    Returns whether the stand-in is in place. Nothing is imported to find out (``find_spec`` of a top-level name
    reads no module).
    """
    if RFC3987_SYNTAX in sys.modules:
        return getattr(sys.modules[RFC3987_SYNTAX], "__deferred__", False)
    if importlib.util.find_spec(RFC3987_SYNTAX) is None:
        return False
    stand_in = types.ModuleType(RFC3987_SYNTAX, __doc__)
    stand_in.__deferred__ = True
    stand_in.is_valid_syntax = is_valid_syntax
    stand_in.__getattr__ = _real_attribute
    sys.modules[RFC3987_SYNTAX] = stand_in
    return True
