"""Static flags: code in a submission that no honest solution needs, found before it runs.

The trusted side parses every cell a student can edit (solution cells and cells they
added) with the standard library's ``ast``, after IPython's own input transformer has
turned magics and ``!`` lines into Python, exactly as the kernel would. It flags dynamic
execution (``exec``, ``eval``, ``compile``, ``__import__``, ...), introspection (frames,
``sys.settrace``, ``inspect``, ``gc``, ``__code__`` swaps, ...), IPython hooks and magics,
and imports the assignment does not allow (the ``ALLOWED_IMPORTS`` of its ``hidden_checks.py``, or
:data:`COMMON_IMPORTS`).

Names are followed through any expression that passes a value along (``[np][0]``, ``f(np)``,
loops, defaults), ``getattr`` passed as a value is flagged, and so are libraries that run code
held in a string or a file (``pandas.eval``, pickles, ``%%timeit`` setup lines, ``module://``
backends, string annotations ``typing.get_type_hints`` evaluates), and any string that holds code
(``__import__``, ``exec(``, a dunder name). Still, a flag is a best-effort hint for a person, never
a verdict: it never changes a score, and code no flag names may do what a flag is for (what the grading kernel must never
do is removed from it instead: it starts no program). A cell that does not parse is not a
flag; it is reported as not analysed (IPython cannot run it either: the kernel applies
the same transformer, then the same parser). The review's work is counted and bounded per
notebook (:data:`MAX_REVIEW_WORK`); what it did not read is flagged.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..course.course import Course
from .kernel_imports import COMMON_IMPORTS, allowed_imports

#: Parts of allowed packages that run or load arbitrary code.
FORBIDDEN_SUBMODULES = frozenset({"numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing.extbuild"})

#: Modules whose every use is dynamic execution, introspection or process control.
DYNAMIC_MODULES = frozenset({
    "builtins", "importlib", "ctypes", "inspect", "gc", "threading", "_thread", "subprocess", "signal",
    "multiprocessing", "IPython", "code", "codeop", "runpy", "types", "marshal", "pickle", "dis", "traceback",
    "ipykernel", "concurrent", "asyncio", "pty", "socket", "shutil", "tracemalloc", "faulthandler",
    "annotationlib",  # evaluates annotations, which may be code held in a string
    # decoders: code hidden in a string (base64, compressed) only needs one of these to come back
    "base64", "codecs", "zlib", "binascii", "bz2", "lzma", "gzip", "zipimport",
} | FORBIDDEN_SUBMODULES)

#: Attributes of ``sys`` and ``os`` that reach the interpreter or the process.
DYNAMIC_ATTRIBUTES = frozenset({
    "sys.settrace", "sys.setprofile", "sys.gettrace", "sys.getprofile", "sys._getframe", "sys._current_frames",
    "sys.modules", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache", "sys.addaudithook",
    "sys.monitoring", "sys.exc_info", "sys.exception", "sys.last_traceback", "sys.displayhook", "sys.excepthook",
    "os.system", "os.fork", "os.forkpty", "os.popen", "os.kill", "os.killpg", "os._exit", "os.execv", "os.execve",
    "os.execl", "os.execle", "os.execlp", "os.execlpe", "os.execvp", "os.execvpe", "os.spawnl", "os.spawnv",
    "os.spawnve", "os.spawnlp", "os.spawnvp", "os.posix_spawn", "os.posix_spawnp", "os.environ",
    # getattr by another name, and libraries that run code held in a string or a file
    "operator.attrgetter", "operator.methodcaller", "pandas.eval", "pandas.DataFrame.eval", "pandas.DataFrame.query",
    "numexpr", "numpy.testing.rundocs", "numpy.lib.utils", "matplotlib.use", "matplotlib.pyplot.switch_backend",
    "matplotlib.rc_file", "matplotlib.rc_params_from_file", "matplotlib.pyplot.rc_file",
    # evaluators of string annotations: a string annotation may be any expression, run in the function's globals
    "typing.get_type_hints", "typing.ForwardRef", "typing.evaluate_forward_ref", "typing._eval_type",
    "functools.singledispatchmethod.register",
})

#: Functions that load pickles when told to (``allow_pickle=True``): a pickle runs any code it names.
PICKLE_LOADERS = frozenset({"numpy.load", "numpy.lib.npyio.NpzFile", "numpy.lib.format.read_array"})
#: Built-ins that read or write any attribute by name: passed as a value (``f = getattr``), no call shows the name.
ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "delattr"})
#: A matplotlib backend named ``module://name`` imports ``name``: a file the notebook wrote.
MODULE_BACKEND = "module://"
#: Backends ``%matplotlib`` may name; any other argument is flagged.
PLAIN_BACKEND = re.compile(r"[A-Za-z0-9_]*")

#: Built-in names that execute code or expose namespaces.
DYNAMIC_BUILTINS = frozenset({
    "exec", "eval", "compile", "__import__", "__builtins__", "__build_class__", "__loader__", "__spec__",
    "globals", "locals", "vars", "breakpoint", "get_ipython",
})

#: Attributes that reach code objects, namespaces, frames or the class hierarchy.
INTROSPECTION_ATTRIBUTES = frozenset({
    "__code__", "__globals__", "__builtins__", "__closure__", "__defaults__", "__kwdefaults__", "__dict__",
    "__func__", "__self__", "__wrapped__", "__subclasses__", "__bases__", "__base__", "__mro__", "__import__",
    "__loader__", "__spec__", "__getattribute__", "__setattr__", "__delattr__", "__reduce__", "__reduce_ex__",
    "__init_subclass__", "__class_getitem__", "f_back", "f_locals", "f_globals", "f_builtins", "f_code",
    "f_trace", "tb_frame", "tb_next", "gi_frame", "gi_code", "cr_frame", "ag_frame", "co_code", "co_consts",
})

#: Attribute names of the interpreter's modules and evaluators (``sys``, ``modules``, ``settrace``, ``exec``, ...):
#: read from any value at all (a call's result, a subscript, a property, a generator), they are flagged, since
#: following values through calls cannot be complete (attack round 13: ``random.choice([warnings]).sys``). No
#: honest solution of this course reads an attribute of these names.
INTERPRETER_ATTRIBUTES = frozenset({
    "sys", "os", "modules", "builtins", "__builtins__", "__dict__", "__import__", "settrace", "setprofile",
    "gettrace", "getprofile", "exec", "eval", "compile", "_getframe", "_current_frames", "meta_path", "path_hooks",
    "path_importer_cache", "addaudithook", "monitoring", "import_module", "system", "popen", "environ",
})

#: Code held in a string: a call of an evaluator or of ``getattr``, or a dunder name (``"__import__"``,
#: ``"x.__class__"``). No honest solution writes these in a string; a string that is only a plain word
#: (``"compile"`` in a list of stage names) is not flagged.
CODE_IN_STRING = re.compile(r"__\w+__|\b(?:exec|eval|compile|getattr|setattr|__import__|breakpoint|globals|locals)\s*\(")

#: A string annotation an honest solution writes: dotted names, subscripts, ``|``, quoted words
#: (``"np.ndarray"``, ``"list[float] | None"``, ``"Literal['margin']"``), with no dunder name. Anything
#: else (a call, a lambda, ``x.__class__``) is code that ``typing.get_type_hints`` or
#: ``functools.singledispatch`` would run.
PLAIN_ANNOTATION = re.compile(r"[A-Za-z_][\w.\[\], |'\"]*")

#: Methods Python calls behind the scenes (attribute lookup, ``isinstance``, garbage collection, NumPy's
#: dispatch): code that runs where no call shows it. Ordinary value methods (``__eq__``, ``__bool__``,
#: ``__float__``) are not in it: results cross the sandbox as plain data (``wire.py``), so an object that
#: pretends to be a number never reaches a verdict.
HOOK_METHODS = frozenset({
    "__getattr__", "__getattribute__", "__instancecheck__", "__subclasscheck__", "__del__", "__array_ufunc__",
    "__array_function__", "__init_subclass__", "__set_name__", "__class_getitem__", "__missing__",
})

#: Line magics that run nothing the student wrote.
HARMLESS_MAGICS = frozenset({"matplotlib", "pinfo", "pinfo2", "autoreload", "aimport"})
#: Extensions ``%load_ext`` may load: IPython's own; any other name imports a module (maybe one the notebook wrote).
HARMLESS_EXTENSIONS = frozenset({"autoreload"})
#: Magics whose argument (or cell body) is Python: that code is analysed like the cell.
TIMING_MAGICS = frozenset({"time", "timeit"})

#: Options of ``%timeit``/``%time`` before the statement (``-n 10 -r 3 -q``); in ``%%timeit`` the line after
#: them is setup code, analysed like the body.
TIMING_OPTIONS = re.compile(r"^\s*(?:(?:-[qotc]|-[nrp]\s*\d+)\s+)*")

#: Student-chosen names (grade ids, magics) shown as they are only when they look like this.
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,59}")  # never a spreadsheet formula (=, +, -, @)

_IPYTHON_HOOKS = {
    "events": "IPython events",
    "input_transformers_cleanup": "an IPython input transformer",
    "input_transformers_post": "an IPython input transformer",
    "input_transformer_manager": "an IPython input transformer",
    "ast_transformers": "an IPython AST transformer",
    "system": "a shell escape (!cmd)",
    "getoutput": "a shell escape (!cmd)",
    "system_piped": "a shell escape (!cmd)",
    "system_raw": "a shell escape (!cmd)",
}
_GET_IPYTHON = "get_ipython()"
#: How a holder of values is named among the aliases: ``<held by K>`` for a class ``K`` (or a name given attributes),
#: and ``<held by K>.s`` for what it holds under ``s``.
HOLDER_PREFIX = "<held by "


@dataclass(frozen=True)
class Flag:
    """One suspicious construct: where it is and what it is."""

    cell: str  #: the cell's ``grade_id``, or ``"cell N"`` (1-based position) when it has none
    line: int  #: line in the cell, 1-based
    construct: str  #: e.g. ``"exec"``, ``"sys.settrace"``, ``"import os (not allowed in 01_geometry)"``

    def __str__(self) -> str:
        return f"{self.cell}: {self.construct} (line {self.line})"


@dataclass(frozen=True)
class Review:
    """The static review of a submission: its flags, and the cells that could not be analysed."""

    flags: tuple[Flag, ...] = ()
    unanalysed: tuple[str, ...] = ()  #: e.g. ``"train_perceptron: SyntaxError (line 3)"``


def import_allowed(module: str, allowed: frozenset[str]) -> bool:
    """Whether the dotted name ``module`` is an allowed entry or lies below one (and is not forbidden)."""
    if any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN_SUBMODULES) or _reaches_inside(module):
        return False
    return any(module == entry or module.startswith(entry + ".") for entry in allowed)


def _reaches_inside(dotted: str) -> bool:
    """Whether a path goes through a library's private parts or the modules it imported itself
    (``numpy.testing._private.utils.os.system``): no honest solution walks there."""
    inner = dotted.split(".")[1:]
    return any(part in DYNAMIC_MODULES or part in {"os", "sys"}
               or (part.startswith("_") and not (part.startswith("__") and part.endswith("__"))) for part in inner)


def _is_dynamic(dotted: str) -> bool:
    top = dotted.split(".")[0]
    return (top in DYNAMIC_MODULES or dotted.startswith(_GET_IPYTHON) or _reaches_inside(dotted)
            or any(dotted == name or dotted.startswith(name + ".") for name in DYNAMIC_ATTRIBUTES | FORBIDDEN_SUBMODULES))


def _ipython_construct(dotted: str) -> str:
    """Name what a use of ``get_ipython()...`` reaches."""
    parts = dotted[len(_GET_IPYTHON):].lstrip(".").split(".")
    if parts[0] in _IPYTHON_HOOKS:
        return f"{_IPYTHON_HOOKS[parts[0]]} ({dotted})"
    if parts[0].startswith("register_magic"):
        return f"{parts[0]} ({dotted})"
    return dotted


@dataclass
class _CellVisitor(ast.NodeVisitor):
    """Walks one cell's tree; ``aliases`` (name -> the dotted paths it may stand for) is shared by the cells of a notebook."""

    cell: str
    allowed: frozenset[str]
    assignment: str
    aliases: dict[str, frozenset[str]]
    line_offset: int = 0
    flags: list[Flag] = field(default_factory=list)
    called: set[int] = field(default_factory=set)  #: ``id`` of the names a call applies (``getattr(...)``)
    #: ``reached`` of each node since the aliases last changed: a chain ``a.b.c...`` is walked once, not once per link
    _reached: dict[int, frozenset[str]] = field(default_factory=dict)
    #: What the notebook made itself, shared by its cells like ``aliases``: the holder of each class it defines
    #: (``<held by K>``, which its instances reach too) and the name of each function it defines
    created: set[str] = field(default_factory=set)
    #: ``id`` of the attributes of a chain already flagged by a link further out (one flag for the whole chain)
    _chain_flagged: set[int] = field(default_factory=set)

    def flag(self, node: ast.AST, construct: str) -> None:
        self.flags.append(Flag(self.cell, getattr(node, "lineno", 1) + self.line_offset, construct))

    # ------------------------------------------------------------- names and attribute chains

    def reached(self, node: ast.AST) -> frozenset[str]:
        """Every dotted path an expression may stand for (``sys.settrace``), through aliases and any expression
        that passes a value along: ``[np][0]``, ``(np if c else m)``, ``{"k": np}["k"]``, ``(lambda: np)()``,
        ``f(np)`` (a function may return its argument)."""
        known = self._reached.get(id(node))
        if known is None:
            known = self._reached[id(node)] = self._reach(node)
        return known

    def _reach(self, node: ast.AST) -> frozenset[str]:
        if isinstance(node, ast.Name):
            if node.id == "get_ipython":
                return frozenset({"get_ipython"})
            return self.aliases.get(node.id, frozenset({"builtins"}) if node.id == "__builtins__" else frozenset())
        if isinstance(node, ast.Attribute):
            return self.attribute_paths(self.reached(node.value), node.attr)
        if isinstance(node, ast.Call):
            return self._reached_by_call(node)
        if isinstance(node, ast.Subscript):
            return self.reached(node.value)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return _union(self.reached(element) for element in node.elts)
        if isinstance(node, ast.Dict):
            return _union(self.reached(value) for value in node.values)
        if isinstance(node, ast.IfExp):
            return self.reached(node.body) | self.reached(node.orelse)
        if isinstance(node, ast.BoolOp):
            return _union(self.reached(value) for value in node.values)
        if isinstance(node, (ast.NamedExpr, ast.Starred, ast.Await)):
            return self.reached(node.value)
        if isinstance(node, ast.Lambda):
            return self.reached(node.body)
        return frozenset()

    def attribute_paths(self, bases: frozenset[str], attribute: str) -> frozenset[str]:
        """What ``<base>.<attribute>`` may stand for: a module's attribute, or what a holder (a class, an object a
        name stands for) was given under that name (``class K: s = sys``, ``f.s = sys``: ``K.s`` is ``sys``)."""
        found = set()
        for base in bases:
            if base.startswith(HOLDER_PREFIX):
                found |= self.aliases.get(f"{base}.{attribute}", frozenset())  # nothing known: not a made-up path
            else:
                found.add(f"{base}.{attribute}")
        return frozenset(found)

    def _reached_by_call(self, node: ast.Call) -> frozenset[str]:
        if isinstance(node.func, ast.Name) and node.func.id == "get_ipython":
            return frozenset({_GET_IPYTHON})
        constant = _constant_attribute(node)
        if constant is not None:
            return self.attribute_paths(self.reached(node.args[0]), constant)
        called = self.reached(node.func)
        holders = frozenset(path for path in called if path.startswith(HOLDER_PREFIX))
        if holders:
            return holders  # ``K()``: an instance reaches what its class holds
        if called and not isinstance(node.func, ast.Lambda):
            return frozenset()  # a library function's result: not a module
        passed = [a for a in [*node.args, *(k.value for k in node.keywords)]
                  if isinstance(a, (ast.Name, ast.Attribute, ast.Starred, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Call))]
        return self.reached(node.func) | _union(self.reached(argument) for argument in passed)

    def dotted(self, node: ast.AST) -> str | None:
        """One dotted path the expression may stand for (the first in order), else ``None``."""
        paths = self.reached(node)
        return min(paths) if paths else None

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in DYNAMIC_BUILTINS:
            self.flag(node, "get_ipython()" if node.id == "get_ipython" else node.id)
        elif node.id in ATTRIBUTE_BUILTINS and isinstance(node.ctx, ast.Load) and id(node) not in self.called:
            self.flag(node, f"{node.id} passed as a value (it reads or writes any attribute by name)")
        elif isinstance(node.ctx, ast.Load):
            for path in sorted(self.aliases.get(node.id, ())):
                if "." in path and _is_dynamic(path):
                    self.flag(node, path)  # e.g. ``from os import system as s``, then ``s``
                    return

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in INTROSPECTION_ATTRIBUTES and isinstance(node.ctx, ast.Load):  # writes: check_target
            self.flag(node, f"access to .{node.attr}")
        dynamic = sorted(path for path in self.reached(node) if _is_dynamic(path) and not path.startswith(_GET_IPYTHON))
        if dynamic:
            self.flag(node, dynamic[0])
            return  # one flag for the whole chain
        if node.attr in INTERPRETER_ATTRIBUTES - INTROSPECTION_ATTRIBUTES and isinstance(node.ctx, ast.Load) \
                and id(node) not in self._chain_flagged:
            self.flag(node, f"access to .{node.attr} (the interpreter's, read from a value the review cannot follow)")
            inner = node.value
            while isinstance(inner, (ast.Attribute, ast.Subscript, ast.Call)):
                self._chain_flagged.add(id(inner))
                inner = inner.func if isinstance(inner, ast.Call) else inner.value
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        found = CODE_IN_STRING.search(node.value) if isinstance(node.value, str) and node.value != "__main__" else None
        if found:
            self.flag(node, f"code in a string ({found.group().rstrip('( ')!r})")
        elif isinstance(node.value, str) and MODULE_BACKEND in node.value:
            self.flag(node, f"a matplotlib backend {MODULE_BACKEND}... (imports a module by name)")

    # ------------------------------------------------------------- calls

    def visit_Call(self, node: ast.Call) -> None:
        dotted = self.dotted(node.func)
        if dotted and dotted.startswith(_GET_IPYTHON):
            self.ipython_call(node, dotted)
            return
        if isinstance(node.func, ast.Name):
            self.called.add(id(node.func))
            self.builtin_call(node, node.func.id)
        self.library_call(node, self.reached(node.func))
        self.generic_visit(node)

    def library_call(self, node: ast.Call, paths: frozenset[str]) -> None:
        """Calls that load a pickle or a style file by name: what runs is not in the notebook."""
        pickling = [k for k in node.keywords if k.arg == "allow_pickle"
                    and not (isinstance(k.value, ast.Constant) and k.value.value is False)]
        if pickling:
            self.flag(node, "allow_pickle (loading a pickle runs any code it names)")
        elif paths & PICKLE_LOADERS and (len(node.args) >= 3 or any(k.arg is None for k in node.keywords)):
            self.flag(node, f"{min(paths & PICKLE_LOADERS)} with allow_pickle passed by position or **")
        if any(path.endswith(("style.use", "style.context")) and path.startswith("matplotlib") for path in paths):
            names = node.args[:1]
            if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) and PLAIN_BACKEND.fullmatch(a.value.replace("-", "_"))
                       for a in names):
                self.flag(node, "a matplotlib style given by path or package (it can import a module)")

    def builtin_call(self, node: ast.Call, name: str) -> None:
        if name == "type" and len(node.args) == 3:
            self.flag(node, "type(name, bases, namespace): a class made at run time")
        if name in {"getattr", "setattr", "delattr", "hasattr"} and len(node.args) >= 2:
            attribute = _constant_attribute(node)
            if attribute is None:
                self.flag(node, f"{name} with a computed attribute name")
            elif attribute in INTROSPECTION_ATTRIBUTES | DYNAMIC_BUILTINS | INTERPRETER_ATTRIBUTES:
                self.flag(node, f"{name}(..., {attribute!r})")
            target = self.dotted(node.args[0])
            if name in {"setattr", "delattr"} and target and not target.startswith(HOLDER_PREFIX):
                self.flag(node, f"{name} on module {target}")
            if name == "setattr" and attribute is not None and len(node.args) >= 3:  # setattr(K, "s", sys): K holds sys
                self.hold(ast.Attribute(value=node.args[0], attr=attribute, ctx=ast.Store()), self.reached(node.args[2]))

    def ipython_call(self, node: ast.Call, dotted: str) -> None:
        """``get_ipython().run_line_magic(...)`` and friends, as IPython's transformer writes magics."""
        method = dotted[len(_GET_IPYTHON):].lstrip(".")
        arguments = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        if method in {"run_line_magic", "run_cell_magic"} and arguments and arguments[0] is not None:
            magic, prefix = arguments[0], "%" if method == "run_line_magic" else "%%"
            line = arguments[1] if len(arguments) >= 2 else None
            if magic == "matplotlib" and method == "run_line_magic" and line is not None and not PLAIN_BACKEND.fullmatch(line.strip()):
                self.flag(node, "%matplotlib with a backend that is not a plain name (module://... imports a file)")
                return
            if method == "run_line_magic" and (magic in HARMLESS_MAGICS or (
                    magic == "load_ext" and line is not None and line.strip() in HARMLESS_EXTENSIONS)):
                return
            code = arguments[-1] if len(arguments) >= 2 else None
            if magic in TIMING_MAGICS and code is not None:
                first_line = node.lineno + self.line_offset
                if prefix == "%%" and line is not None:  # ``%%timeit setup``: the line runs too
                    self.analyse_code(TIMING_OPTIONS.sub("", line), first_line)
                self.analyse_code(TIMING_OPTIONS.sub("", code), first_line + (1 if prefix == "%%" else 0))
                return
            kind = "a cell magic" if prefix == "%%" else "a magic"
            self.flag(node, f"{kind} {prefix}{magic if PLAIN_NAME.fullmatch(magic) else '?'}")
            return
        self.flag(node, _ipython_construct(dotted))
        for argument in node.args + [keyword.value for keyword in node.keywords]:
            self.visit(argument)

    def analyse_code(self, code: str, line: int) -> None:
        """Analyse Python held in a string (a timing magic's statement) as if it were in the cell."""
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.flags.append(Flag(self.cell, line, "a timing magic whose code does not parse"))
            return
        inner = _CellVisitor(self.cell, self.allowed, self.assignment, self.aliases, line - 1, created=self.created)
        inner.visit(tree)
        self.flags.extend(inner.flags)
        self._reached.clear()  # the code may have bound names

    # ------------------------------------------------------------- imports and assignments

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self.aliases[bound] = frozenset({alias.name if alias.asname else alias.name.split(".")[0]})
            self._reached.clear()
            if not import_allowed(alias.name, self.allowed):
                self.flag(node, f"import {alias.name} (not allowed in {self.assignment})")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.flag(node, f"relative import from {'.' * node.level}{module}")
            return
        for alias in node.names:
            if alias.name == "*":
                if not import_allowed(module, self.allowed):
                    self.flag(node, f"from {module} import * (not allowed in {self.assignment})")
                for path in DYNAMIC_ATTRIBUTES:  # ``from typing import *`` binds ``get_type_hints`` too
                    if path.rpartition(".")[0] == module:
                        self.aliases[path.rpartition(".")[2]] = frozenset({path})
                self._reached.clear()
                continue
            self.aliases[alias.asname or alias.name] = frozenset({f"{module}.{alias.name}"})
            self._reached.clear()
            if not (import_allowed(module, self.allowed) or import_allowed(f"{module}.{alias.name}", self.allowed)):
                self.flag(node, f"from {module} import {alias.name} (not allowed in {self.assignment})")

    def bind(self, target: ast.AST, paths: frozenset[str]) -> None:
        """Let the names ``target`` binds stand for ``paths`` (none: they stand for nothing known any more)."""
        self._reached.clear()
        for name in _bound_names(target):
            self.created.discard(name)  # no longer the function the notebook defined under that name
            if paths:
                self.aliases[name] = paths  # ``s = sys``, ``s = [sys][0]``: later ``s.settrace`` is still seen
            else:
                self.aliases.pop(name, None)

    def visit_Assign(self, node: ast.Assign) -> None:
        paths = self.reached(node.value)
        for target in node.targets:
            self.check_target(target)
            self.bind(target, paths)
            self.hold(target, paths)
        self.generic_visit(node)

    def hold(self, target: ast.AST, paths: frozenset[str]) -> None:
        """``name.attr = sys``: ``name`` now holds ``sys`` under ``attr`` (later ``name.attr.settrace`` is seen)."""
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and paths:
            name = target.value.id
            holders = {path for path in self.aliases.get(name, ()) if path.startswith(HOLDER_PREFIX)} \
                or {f"{HOLDER_PREFIX}{name}>"}  # ``self.s = sys`` in a method: the class holds it
            self.aliases[name] = self.aliases.get(name, frozenset()) | holders
            for holder in holders:
                self.aliases[f"{holder}.{target.attr}"] = self.aliases.get(f"{holder}.{target.attr}", frozenset()) | paths
            self._reached.clear()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """A class holds what its body binds (``class K: s = sys``): ``K.s``, ``K().s`` and a subclass's ``s`` reach it.

        Attack round 12: ``exec`` and ``sys.settrace`` reached through a module held as a class attribute raised no flag.
        """
        for part in [*node.decorator_list, *node.bases, *(keyword.value for keyword in node.keywords)]:
            self.visit(part)
        holder = f"{HOLDER_PREFIX}{node.name}>"
        inherited = _union(self.reached(base) for base in node.bases)
        methods = [statement for statement in node.body if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))]
        before = dict(self.aliases)
        for statement in node.body:
            if statement not in methods:
                self.visit(statement)
        for name, paths in list(self.aliases.items()):
            if not name.startswith(HOLDER_PREFIX) and paths and before.get(name) != paths:
                self.aliases[f"{holder}.{name}"] = paths
        for base in inherited:
            for key, paths in list(self.aliases.items()):
                if key.startswith(base + "."):
                    self.aliases.setdefault(holder + key[len(base):], paths)
        self.aliases[node.name] = frozenset({holder})
        self.created.add(holder)
        self._reached.clear()
        for method in methods:  # what any method gives ``self`` (``self.s = sys``), before reading any method
            arguments = [*method.args.posonlyargs, *method.args.args]
            if arguments:
                for inner in ast.walk(method):
                    if isinstance(inner, ast.Assign):
                        for target in inner.targets:
                            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                    and target.value.id == arguments[0].arg:
                                self.hold(ast.Attribute(value=ast.Name(id=node.name, ctx=ast.Load()), attr=target.attr,
                                                        ctx=ast.Store()), self.reached(inner.value))
        created_before = set(self.created)
        for method in methods:  # ``self.s`` and ``cls.s`` in a method reach what the class holds
            arguments = [*method.args.posonlyargs, *method.args.args]
            first = arguments[0].arg if arguments else None
            saved = self.aliases.get(first) if first else None
            if first:
                self.aliases[first] = (saved or frozenset()) | {holder}
                self._reached.clear()
            self.visit(method)
            if method.name not in created_before:  # a method's name binds nothing outside its class
                self.created.discard(method.name)
            if first:
                if saved is None:
                    self.aliases.pop(first, None)
                else:
                    self.aliases[first] = saved
                self._reached.clear()

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target, self.reached(node.value))
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.bind(node.target, self.reached(node.iter))  # ``for m in [np]: m.testing...``
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.bind(node.target, self.reached(node.iter))
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self.bind(node.optional_vars, self.reached(node.context_expr))
        self.generic_visit(node)

    def bind_defaults(self, arguments: ast.arguments) -> None:
        """``def f(m=np)``: the parameter stands for what its default reaches."""
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                 *((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)]
        for argument, default in pairs:
            paths = self.reached(default)
            if paths:
                self.aliases[argument.arg] = paths
                self._reached.clear()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in HOOK_METHODS:
            self.flag(node, f"defines {node.name}: a hook Python calls where no call shows it")
        arguments = node.args
        for annotation in [node.returns, *(a.annotation for a in [*arguments.posonlyargs, *arguments.args,
                                                                  *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
                                           if a is not None)]:
            self.check_annotation(annotation)
        self.bind_defaults(node.args)
        self.generic_visit(node)
        self.created.add(node.name)  # ``f.calls = 0`` gives the notebook's own function an attribute

    def check_annotation(self, annotation: ast.AST | None) -> None:
        """Flag a string annotation that is not a plain type name: ``typing.get_type_hints`` (which
        ``functools.singledispatch`` calls) evaluates it as an expression in the function's globals."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) \
                and (not PLAIN_ANNOTATION.fullmatch(annotation.value.strip()) or "__" in annotation.value):
            self.flag(annotation, "a string annotation that is code, not a type name (typing evaluates it)")

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.bind_defaults(node.args)
        self.generic_visit(node)

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        for generator in node.generators:  # first: they bind the names the element uses
            self.visit(generator)
        self.visit(node.elt)

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        for generator in node.generators:
            self.visit(generator)
        self.visit(node.key)
        self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.check_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.check_target(node.target)
        self.check_annotation(node.annotation)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.check_target(target)
        self.generic_visit(node)

    def check_target(self, target: ast.AST) -> None:
        """Flag writes to dunder attributes, to attributes of imported modules, and to attributes of any object the
        notebook did not create (a call's result, a subscript, a name for a library's value: attack round 13 replaced
        the harness's ``json.dumps`` through ``random.choice([warnings]).sys.modules["json"]``)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.check_target(element)
            return
        if not isinstance(target, ast.Attribute):
            return
        if target.attr.startswith("__") and target.attr.endswith("__"):
            self.flag(target, f"assignment to .{target.attr}")
        modules = sorted(path for path in self.reached(target.value) if not path.startswith((_GET_IPYTHON, HOLDER_PREFIX)))
        if modules:
            self.flag(target, f"assignment to {modules[0]}.{target.attr} (a module attribute)")
        elif not self.created_by_notebook(target.value):
            self.flag(target, f"assignment to .{target.attr} of an object the notebook did not create")

    def created_by_notebook(self, base: ast.AST) -> bool:
        """Whether ``base`` is a name bound to a class the notebook defines, an instance of one, or a function it defines."""
        if not isinstance(base, ast.Name):
            return False
        paths = self.aliases.get(base.id)
        if paths:
            return all(path in self.created for path in paths)
        return base.id in self.created


def _union(sets) -> frozenset[str]:
    return frozenset().union(*sets)


def _bound_names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (``a, (b, *c) = ...`` binds a, b, c; ``x[i] = ...`` none)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound_names(element)]
    return []


def _constant_attribute(call: ast.Call) -> str | None:
    """The attribute name of ``getattr(obj, "name")`` (a string constant), else ``None``."""
    if isinstance(call.func, ast.Name) and call.func.id in {"getattr", "setattr", "delattr", "hasattr"} \
            and len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
        return call.args[1].value
    return None


#: Lines IPython rewrites before running them (``!ls``, ``x = !ls``, ``%time f()``, ``f?``, ``?f``, and the autocalls
#: ``/f x``, ``,f a b``, ``;f a``), and how many a cell may hold to be analysed: honest cells have one or two.
#: IPython's transformer re-reads the whole cell after rewriting each of them (time quadratic in them).
#: This pattern reads lines, not tokens: a cheap upper bound (a ``?`` ending a comment or a line of a string
#: matches too); :func:`escape_lines` counts exactly when the bound is over the limit.
_ESCAPE_LINE = re.compile(r"^[ \t]*(?:[\w.,\[\] \t]+=[ \t]*)?[!%]|^[ \t]*[/,;?]|\?[ \t]*$", re.MULTILINE)
MAX_ESCAPE_LINES = 100
_ESCAPE_FIRST_TOKENS = frozenset({"!", "!!", "?", "??", "%", "%%", ",", ";", "/"})


def escape_lines(source: str) -> int:
    """How many logical lines of a cell IPython's transformer rewrites, found as IPython finds them.

    IPython groups the cell's tokens by logical line and rewrites a line whose first token is an
    escape (``!``, ``%``, ``?``, ``/``, ``,``, ``;``), whose last token before the newline is ``?``,
    or whose right-hand side of ``=`` starts with ``!`` or ``%``. A ``?`` in a comment or a string is
    inside one token and is not a help request. One pass of the tokenizer: time linear in the cell.
    When the tokenizer stops before the end (an unclosed string, a bad indentation), the line pattern's
    count (an upper bound) is returned.
    """
    from IPython.core.inputtransformer2 import make_tokens_by_line

    lines = source.splitlines(keepends=True)
    try:
        tokens_by_line = make_tokens_by_line(lines)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # IndentationError is a SyntaxError
        return len(_ESCAPE_LINE.findall(source))
    last_row = max((token.end[0] for line in tokens_by_line for token in line), default=0)
    if last_row < len(lines):
        return len(_ESCAPE_LINE.findall(source))
    return sum(1 for line in tokens_by_line if _rewritten_by_ipython(line))


def _rewritten_by_ipython(line: list) -> bool:
    import tokenize

    significant = [token for token in line if token.type not in {tokenize.INDENT, tokenize.DEDENT, tokenize.NL,
                                                                  tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER}]
    if not significant:
        return False
    if significant[0].string in _ESCAPE_FIRST_TOKENS or significant[-1].string in {"?", "??"}:
        return True
    depth = 0
    for position, token in enumerate(significant[:-1]):
        if token.type == tokenize.OP and token.string in {"(", "[", "{"}:
            depth += 1
        elif token.type == tokenize.OP and token.string in {")", "]", "}"}:
            depth = max(depth - 1, 0)
        elif token.string == "=" and depth == 0:
            return significant[position + 1].string.startswith(("!", "%"))
    return False

#: The static review's budget per notebook, in work units: a cell costs its length in characters times one plus
#: twice its escape lines (what parsing, IPython's transformer and the walk take; a unit is 3 to 8 microseconds
#: of CPU, so a notebook costs at most about 4 s, see BENCHMARKS.md). Counted, not timed, so the same notebook
#: gets the same review on any machine; the cells beyond it are flagged as not analysed. An assignment's
#: notebook, solved, costs at most 4,600.
MAX_REVIEW_WORK = 500_000


def review_work(source: str, escape_lines: int) -> int:
    """The work units of reviewing one cell (see :data:`MAX_REVIEW_WORK`)."""
    return len(source) * (1 + 2 * escape_lines)


def python_source(cell_source: str) -> str:
    """The Python IPython would run for a cell: magics, ``!`` lines and ``?`` turned into calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 - the parser will then say what is wrong
        return cell_source


def cell_label(cell, position: int) -> str:
    """A cell's ``grade_id``, or ``"cell N"`` with its 1-based position when it has none or a strange one.

    Labels go into ``grades.csv`` and the reports: a ``grade_id`` a student wrote is used only
    when it is a plain identifier.
    """
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return grade_id if isinstance(grade_id, str) and PLAIN_NAME.fullmatch(grade_id) else f"cell {position}"


def student_editable(cell, restored_ids: frozenset[str]) -> bool:
    """Whether a code cell's source is the student's: not one nbgrader restores from ``source/``.

    ``restored_ids`` are the ``grade_id`` of the source's locked cells; a cell claiming
    one of them is replaced by the source version when graded.
    """
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return cell.get("cell_type") == "code" and grade_id not in restored_ids


def review_notebook(notebook, assignment: str, restored_ids: frozenset[str], max_work: int = MAX_REVIEW_WORK, *,
                    allowed: frozenset[str] = COMMON_IMPORTS) -> Review:
    """Flag every cell of ``notebook`` a student could edit.

    Parameters
    ----------
    notebook : nbformat.NotebookNode
        The submitted notebook.
    assignment : str
        Its assignment id, which decides the allowed imports.
    restored_ids : frozenset of str
        ``grade_id`` of the locked cells of the assignment's source (see :func:`student_editable`).
    max_work : int
        The review's budget in work units (:func:`review_work`); the cells beyond it get one flag.
    """
    aliases: dict[str, frozenset[str]] = {}
    created: set[str] = set()
    flags: list[Flag] = []
    unanalysed: list[str] = []
    claimed = Counter(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in notebook.get("cells", []))
    # Of several cells claiming one id, nbgrader restores one and runs the others as they are: read them all.
    restored_ids = frozenset(grade_id for grade_id in restored_ids if claimed[grade_id] <= 1)
    work_left = max_work
    for position, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        label = cell_label(cell, position)
        source = str(cell.get("source", ""))
        escapes = len(_ESCAPE_LINE.findall(source))
        if escapes > MAX_ESCAPE_LINES and len(source) <= work_left:  # over the cheap bound: count as IPython does
            work_left -= len(source)  # the tokenizer's pass, linear in the cell
            escapes = escape_lines(source)
            if escapes > MAX_ESCAPE_LINES:  # IPython's transformer takes time quadratic in them
                if student_editable(cell, restored_ids):
                    flags.append(Flag(label, 1, f"cell NOT analysed: {escapes} shell, magic, help or autocall lines "
                                                f"(over {MAX_ESCAPE_LINES}; honest cells have a few): it may hold any code"))
                continue
        work_left -= review_work(source, escapes)  # a cell not counted exactly (beyond the budget) ends the review here
        if work_left < 0:
            skipped = [cell_label(c, p) for p, c in enumerate(notebook.get("cells", []), start=1)
                       if p >= position and student_editable(c, restored_ids)]
            if skipped:
                flags.append(Flag(label, 1, f"not analysed: the static review's budget ran out here ({len(skipped)} cells "
                                            f"from {skipped[0]} on; at most {max_work:,} work units a notebook)"))
            break
        try:
            tree = ast.parse(python_source(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:  # ValueError: a null byte
            if student_editable(cell, restored_ids):
                unanalysed.append(f"{label}: {type(error).__name__} (line {getattr(error, 'lineno', None) or 1})")
            continue
        visitor = _CellVisitor(label, allowed, assignment, aliases, created=created)
        try:
            visitor.visit(tree)  # locked cells too: their imports define aliases (``np``) later cells use
        except RecursionError:  # it parses, so it runs: too deep to read is itself suspicious
            visitor.flag(tree.body[0] if tree.body else tree, "code nested too deeply to analyse")
        if student_editable(cell, restored_ids):
            flags.extend(visitor.flags)
    return Review(_at_most(list(dict.fromkeys(flags)), MAX_FLAGS), tuple(unanalysed))


#: Flags kept per notebook: enough to show a TA what to look at, not enough to bury the report.
MAX_FLAGS = 50


def _at_most(flags: list[Flag], limit: int) -> tuple[Flag, ...]:
    if len(flags) <= limit:
        return tuple(flags)
    last = flags[limit - 1]
    return (*flags[: limit - 1], Flag(last.cell, last.line, f"{len(flags) - limit + 1} more flags, from here on"))


def restored_cell_ids(course: Course, assignment: str) -> frozenset[str]:
    """``grade_id`` of the source cells nbgrader restores when grading: the locked, non-solution ones."""
    import nbformat

    ids = set()
    for path in sorted((course.source / assignment).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade_id") and not meta.get("solution") and (meta.get("locked") or meta.get("grade")):
                ids.add(meta["grade_id"])
    return frozenset(ids)


def review_submission(course: Course, folder: Path, assignment: str, *, checks_root: Path | None = None) -> dict[str, Review]:
    """The review of every notebook of a submission folder, by notebook name (file stem).

    ``checks_root``: the course whose hidden_checks.py gives the allowed imports (``course`` when not given).
    """
    import nbformat

    restored = restored_cell_ids(course, assignment)
    allowed = allowed_imports(checks_root or course.root, assignment)
    reviews = {}
    for name in course.notebook_names(assignment):
        try:
            notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
        except Exception as error:  # noqa: BLE001 - grading says why; the review only notes it
            reviews[name] = Review(unanalysed=(f"{name}.ipynb: unreadable ({type(error).__name__})",))
            continue
        reviews[name] = review_notebook(notebook, assignment, restored, allowed=allowed)
    return reviews


def summary(flags: list[Flag] | tuple[Flag, ...], limit: int = 8) -> str:
    """Flags in one short line for ``grades.csv``: ``"augment: exec (line 3); ..."``."""
    shown = "; ".join(str(flag) for flag in flags[:limit])
    return shown + (f"; and {len(flags) - limit} more" if len(flags) > limit else "")
