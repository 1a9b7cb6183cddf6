"""Static flags: honest solutions raise none; each suspicious construct is flagged with its cell and line."""


import nbformat
import pytest
from conftest import FIXTURES, LIBRARY_PACKAGE, fixture_course

from course_grader.trusted.course.course import Course
from course_grader.trusted.course.term import load_term
from course_grader.trusted.course.example_class import load_recipes, solved_notebook
from course_grader.trusted.judging.flags import (
    COMMON_IMPORTS, MAX_FLAGS, Flag, allowed_imports, restored_cell_ids, review_notebook, summary,
)

COURSE_ROOT = fixture_course()  # the grader's own course, released
COURSE = Course.open(COURSE_ROOT)
HONEST_STUDENTS = ["ada_reference", "ben_alternative", "cy_buggy"]  # cy's code is wrong, not suspicious


def notebook_of(*sources: str, nbgrader: dict | None = None):
    """A notebook whose first cell imports numpy (locked, like the setup cell) and then ``sources``."""
    setup = nbformat.v4.new_code_cell("import numpy as np")
    setup.metadata["nbgrader"] = {"grade_id": "setup", "locked": True, "solution": False, "grade": False}
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for cell in cells:
        if nbgrader is not None:
            cell.metadata["nbgrader"] = dict(nbgrader)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [setup, *cells]
    return notebook


def flags_of(source: str, assignment: str = "01_geometry") -> list[Flag]:
    allowed = allowed_imports(COURSE_ROOT, assignment)
    return list(review_notebook(notebook_of(source), assignment, frozenset({"setup"}), allowed=allowed).flags)


def constructs(source: str, assignment: str = "01_geometry") -> list[tuple[int, str]]:
    return [(flag.line, flag.construct) for flag in flags_of(source, assignment)]


def test_each_assignment_s_allowed_imports_come_from_its_own_hidden_checks(tmp_path):
    """An assignment's ALLOWED_IMPORTS live in its hidden_checks.py (dropping the folder drops them); without one,
    the common imports apply."""
    students = {f"{LIBRARY_PACKAGE}.{module}" for module in load_term(COURSE_ROOT).library.student_modules}
    assert students  # the term gives the library's student modules to every assignment
    for assignment in COURSE.assignments():
        text = (COURSE.source / assignment / "hidden_checks.py").read_text(encoding="utf-8")
        allowed = allowed_imports(COURSE_ROOT, assignment)
        assert students <= allowed, assignment
        assert (allowed == COMMON_IMPORTS | students) == ("ALLOWED_IMPORTS" not in text), assignment
    folder = tmp_path / "source" / "07_new"
    folder.mkdir(parents=True)
    (tmp_path / "nbgrader_config.py").write_text("")
    term = (COURSE_ROOT / "term.toml").read_text(encoding="utf-8")
    (tmp_path / "term.toml").write_text(term[:term.index("[[assignments]]")] + '[[assignments]]\nname = "07_new"\n',
                                        encoding="utf-8")
    (folder / "hidden_checks.py").write_text("CHECKS = ()\nALLOWED_IMPORTS = {'numpy', 'scipy.optimize'}\n")
    assert allowed_imports(tmp_path, "07_new") == {"numpy", "scipy.optimize"} | students
    assert allowed_imports(tmp_path, "08_without_checks") == COMMON_IMPORTS | students


@pytest.mark.parametrize("assignment", COURSE.assignments())
@pytest.mark.parametrize("student", HONEST_STUDENTS)
def test_honest_solutions_raise_no_flag(student, assignment):
    recipe = load_recipes(COURSE_ROOT / "example_class")[student]
    restored = restored_cell_ids(COURSE, assignment)
    for name in COURSE.notebook_names(assignment):
        notebook = solved_notebook(COURSE, assignment, name)
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in recipe.get("CELLS", {}).get(assignment, {}):
                cell.source = recipe["CELLS"][assignment][grade_id]
        review = review_notebook(notebook, assignment, restored, allowed=allowed_imports(COURSE_ROOT, assignment))
        assert review.flags == () and review.unanalysed == (), (student, assignment, review)


def test_honest_uses_of_the_same_libraries_raise_no_flag():
    honest = ("import matplotlib.pyplot as plt\n%matplotlib inline\nplt.style.use('ggplot')\n"
              "data = np.load('x.npy', allow_pickle=False)\nkeys = sorted({'b': 1, 'a': 2}.items(), key=lambda kv: kv[1])\n"
              "arrays = [np.zeros(2), np.ones(2)]\nfirst = arrays[0].copy()\n%timeit -n 3 np.zeros(3)\n"
              "class Model:\n    def __init__(self, w):\n        self._w = np.asarray(w)\n\nm = Model(np.zeros(3))\nm._w.sum()")
    assert constructs(honest) == []


def test_honest_styles_raise_no_flag():
    honest = '''from __future__ import annotations
%matplotlib inline
import numpy as np
import numpy.linalg as la
from math import sqrt
from itertools import product
from functools import reduce
from collections import defaultdict
from typing import Sequence
from dataclasses import dataclass
from copy import deepcopy
import matplotlib.pyplot as plt
from perceptron_fixture.datasets import xor
from perceptron_fixture import plotting

@dataclass
class Step:
    w: np.ndarray

def predict(w, b, X):
    """Return sign(w.x + b)."""
    scores = [sum(wi * xi for wi, xi in zip(w, x)) + b for x in X]
    helper = lambda s: 1 if s >= 0 else -1
    return np.array([helper(s) for s in scores])

fig, ax = plt.subplots()
ax.set_title("exec time")
w = np.zeros(3)
w += 1
np.random.default_rng(0).normal(size=3)
%timeit -n 3 predict(w, 0.0, np.ones((2, 3)))
'''
    assert flags_of(honest) == []


def test_max_margin_is_allowed_only_where_the_assignment_allows_it():
    line = "from perceptron_fixture.theory import max_margin"
    assert constructs(line, "04_convergence") == []
    assert constructs(line, "02_algorithm") == [(1, "from perceptron_fixture.theory import max_margin (not allowed in 02_algorithm)")]
    assert constructs("from perceptron_fixture.theory import radius", "04_convergence") == [
        (1, "from perceptron_fixture.theory import radius (not allowed in 04_convergence)")]


@pytest.mark.parametrize("source, expected", [
    ("x = 1\ny = exec('z = 2')", (2, "exec")),
    ("eval('1 + 1')", (1, "eval")),
    ("code = compile('1', 'f', 'eval')", (1, "compile")),
    ("os = __import__('os')", (1, "__import__")),
    ("import importlib", (1, "import importlib (not allowed in 01_geometry)")),
    ("import ctypes", (1, "import ctypes (not allowed in 01_geometry)")),
    ("import sys\nsys.settrace(None)", (2, "sys.settrace")),
    ("import sys\nsys.setprofile(None)", (2, "sys.setprofile")),
    ("import sys\nframe = sys._getframe(1)", (2, "sys._getframe")),
    ("import sys\nsys.modules['numpy'] = None", (2, "sys.modules")),
    ("import inspect", (1, "import inspect (not allowed in 01_geometry)")),
    ("import gc\ngc.get_objects()", (2, "gc.get_objects")),
    ("import builtins\nbuiltins.print = None", (2, "assignment to builtins.print (a module attribute)")),
    ("__builtins__.len = None", (1, "assignment to builtins.len (a module attribute)")),
    ("import threading", (1, "import threading (not allowed in 01_geometry)")),
    ("import subprocess", (1, "import subprocess (not allowed in 01_geometry)")),
    ("import os\nos.system('ls')", (2, "os.system")),
    ("import os\npid = os.fork()", (2, "os.fork")),
    ("import signal", (1, "import signal (not allowed in 01_geometry)")),
    ("get_ipython().events.register('pre_run_cell', print)", (1, "IPython events (get_ipython().events.register)")),
    ("get_ipython().input_transformers_post.append(f)",
     (1, "an IPython input transformer (get_ipython().input_transformers_post.append)")),
    ("get_ipython().ast_transformers.append(t)", (1, "an IPython AST transformer (get_ipython().ast_transformers.append)")),
    ("get_ipython().register_magic_function(f)", (1, "register_magic_function (get_ipython().register_magic_function)")),
    ("shell = get_ipython()", (1, "get_ipython()")),
    ("%%javascript\nalert(1)", (1, "a cell magic %%javascript")),
    ("%%html\n<b>8/8</b>", (1, "a cell magic %%html")),
    ("x = 1\n!ls /", (2, "a shell escape (!cmd) (get_ipython().system)")),
    ("def f(): pass\nf.__code__ = (lambda: 1).__code__", (2, "assignment to .__code__")),
    ("def f(): pass\nf.__globals__['np'] = None", (2, "access to .__globals__")),
    ("class A: pass\na = A()\na.__class__ = int", (3, "assignment to .__class__")),
    ("class A: pass\nA.__dict__", (2, "access to .__dict__")),
    ("def f(x=1): pass\nf.__defaults__ = (2,)", (2, "assignment to .__defaults__")),
    ("setattr(np, 'allclose', lambda *a: True)", (1, "setattr on module numpy")),
    ("np.allclose = lambda *a: True", (1, "assignment to numpy.allclose (a module attribute)")),
    ("import sqlite3", (1, "import sqlite3 (not allowed in 01_geometry)")),
    ("import sklearn.linear_model", (1, "import sklearn.linear_model (not allowed in 01_geometry)")),
    ("from perceptron_fixture.perceptron import train", (1, "from perceptron_fixture.perceptron import train (not allowed in 01_geometry)")),
    ("import perceptron_fixture", (1, "import perceptron_fixture (not allowed in 01_geometry)")),
    ("from . import x", (1, "relative import from .")),
    ("import numpy.ctypeslib", (1, "import numpy.ctypeslib (not allowed in 01_geometry)")),
])
def test_each_construct_is_flagged_with_its_line(source, expected):
    assert expected in constructs(source)


@pytest.mark.parametrize("source, expected", [
    ("f = getattr(__builtins__, 'ex' + 'ec')", (1, "getattr with a computed attribute name")),
    ("f = getattr(__builtins__, 'ex' + 'ec')", (1, "__builtins__")),
    ("from os import system as s\ns('ls')", (2, "os.system")),
    ("import importlib as il\nil.import_module('os')", (2, "importlib.import_module")),
    ("globals()['__import__']('os')", (1, "globals")),
    ("globals()['__import__']('os')", (1, "code in a string ('__import__')")),
    ("import sys\nsystem = sys\nsystem.settrace(None)", (3, "sys.settrace")),
    ("import sys as s, numpy\nhook = s\nhook._getframe(0)", (3, "sys._getframe")),
    ("import sys\nvars(sys)['settrace'](None)", (2, "vars")),
    ("@(lambda f: eval)\ndef g(): pass", (1, "eval")),
    ("square = lambda x: exec('x*x')", (1, "exec")),
    ("def outer():\n    def inner():\n        return __import__('os')\n    return inner", (3, "__import__")),
    ("Fake = type('Fake', (), {'__eq__': lambda a, b: True})", (1, "type(name, bases, namespace): a class made at run time")),
    ("class Fake:\n    def __getattr__(self, name):\n        return 1", (2, "defines __getattr__: a hook Python calls where no call shows it")),
    ("class Gone:\n    def __del__(self):\n        pass", (2, "defines __del__: a hook Python calls where no call shows it")),
    ("x = ().__class__.__bases__[0].__subclasses__()", (1, "access to .__subclasses__")),
    ("import numpy.linalg\nnumpy.linalg.norm = abs", (2, "assignment to numpy.linalg.norm (a module attribute)")),
    ("def f(): pass\nsetattr(f, '__code__', None)", (2, "setattr(..., '__code__')")),
    ("ip = get_ipython()\nip.events.register('post_run_cell', print)", (2, "IPython events (get_ipython().events.register)")),
    ("ｅｘｅｃ('1')", (1, "exec")),  # Python folds these letters into plain ones
    ("%time exec('1')", (1, "exec")),
    ("%%timeit\nx = 1\neval('2')", (3, "eval")),
    ("print.__self__.exec('1')", (1, "access to .__self__")),
    ("np.ctypeslib.load_library('libc', '/')", (1, "numpy.ctypeslib.load_library")),
    ("np.testing._private.utils.os.system('ls')", (1, "numpy.testing._private.utils.os.system")),
    ("import matplotlib.pyplot as plt\nplt.sys.modules.clear()", (2, "matplotlib.pyplot.sys.modules.clear")),
    ("from numpy.testing._private.utils import os", (1, "from numpy.testing._private.utils import os (not allowed in 01_geometry)")),
])
def test_obfuscations_are_flagged(source, expected):
    assert expected in constructs(source)


#: The third round's evasions: the same powers, reached with no name the review knew.
EVASIONS = [
    ("[np][0].testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("m = (np if True else None)\nm.testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("{'k': np}['k'].testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("(lambda: np)().testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("def same(m): return m\nsame(np).testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("for m in [np]:\n    m.testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("[m.testing._private.utils.os for m in (np,)][0].system('ls')", "numpy.testing._private.utils.os"),
    ("def f(m=np):\n    return m.testing._private.utils.os", "numpy.testing._private.utils.os"),
    ("(m := np).testing._private", "numpy.testing._private"),
    ("g = getattr\ng(np, 'test' + 'ing')", "getattr passed as a value (it reads or writes any attribute by name)"),
    ("list(map(getattr, [np], ['testing']))", "getattr passed as a value (it reads or writes any attribute by name)"),
    ("import operator\noperator.attrgetter('testing._private')(np)", "operator.attrgetter"),
    ("from operator import methodcaller\nmethodcaller('system', 'ls')", "operator.methodcaller"),
    ("np.load('x.npy', allow_pickle=True)", "allow_pickle (loading a pickle runs any code it names)"),
    ("np.load('x.npy', None, True)", "numpy.load with allow_pickle passed by position or **"),
    ("np.load('x.npy', **{'allow_pickle': True})", "numpy.load with allow_pickle passed by position or **"),
    ("import pandas\npandas.eval('1 + 1')", "pandas.eval"),
    ("%%timeit import os; os.system('ls')\npass", "os.system"),
    ("%matplotlib module://backend_written_by_the_cell", "%matplotlib with a backend that is not a plain name (module://... imports a file)"),
    ("import matplotlib\nmatplotlib.use('module://mine')", "matplotlib.use"),
    ("import matplotlib as mpl\nmpl.rcParams['backend'] = 'module://mine'", "a matplotlib backend module://... (imports a module by name)"),
    ("import matplotlib.pyplot as plt\nplt.style.use('mypackage.mystyle')", "a matplotlib style given by path or package (it can import a module)"),
]


@pytest.mark.parametrize("source, expected", EVASIONS)
def test_each_evasion_of_the_review_is_flagged(source, expected):
    assert expected in [construct for _, construct in constructs(source)]


def test_a_flag_names_the_cell_by_grade_id_or_position():
    notebook = notebook_of("def augment(X):\n    return eval('X')", nbgrader={"grade_id": "augment", "solution": True, "locked": False})
    notebook.cells.append(nbformat.v4.new_code_cell("x = 1\nexec('y = 2')"))
    review = review_notebook(notebook, "01_geometry", frozenset({"setup"}))
    assert [str(flag) for flag in review.flags] == ["augment: eval (line 2)", "cell 3: exec (line 2)"]
    assert summary(review.flags) == "augment: eval (line 2); cell 3: exec (line 2)"


def test_a_strange_grade_id_is_not_repeated():
    notebook = notebook_of("exec('1')", nbgrader={"grade_id": "x)\n## <img src=x>", "solution": True})
    assert [str(flag) for flag in review_notebook(notebook, "01_geometry", frozenset()).flags] == ["cell 2: exec (line 1)"]


def test_locked_cells_are_not_analysed_but_their_imports_count():
    notebook = notebook_of("np.allclose = None")
    notebook.cells[0].source = "import numpy as np\nexec('restored by nbgrader anyway')"
    assert [flag.construct for flag in review_notebook(notebook, "01_geometry", frozenset({"setup"})).flags] == [
        "assignment to numpy.allclose (a module attribute)"]


def test_a_cell_claiming_a_locked_id_is_skipped_only_if_the_source_locks_it():
    restored = restored_cell_ids(COURSE, "01_geometry")
    assert "test_augment" in restored and "augment" not in restored
    claimed = notebook_of("exec('1')", nbgrader={"grade_id": "my_own", "locked": True, "solution": False})
    assert len(review_notebook(claimed, "01_geometry", restored).flags) == 1


def test_a_second_cell_claiming_a_locked_id_is_read_since_only_one_is_restored():
    impostor = notebook_of("import ctypes\nexec('1')", nbgrader={"grade_id": "setup", "locked": True, "solution": False})
    impostor.cells.reverse()  # the impostor first: nbgrader keeps one copy of an id and runs the other as it is
    flagged = [flag.construct for flag in review_notebook(impostor, "01_geometry", frozenset({"setup"})).flags]
    assert "exec" in flagged and any("ctypes" in construct for construct in flagged), flagged


def test_a_flood_of_flags_is_cut_to_a_few_and_says_how_many_more():
    review = review_notebook(notebook_of("\n".join(["exec('1')"] * 5000)), "01_geometry", frozenset({"setup"}))
    assert len(review.flags) == MAX_FLAGS
    assert review.flags[-1].construct == f"{5000 - MAX_FLAGS + 1} more flags, from here on"


def not_analysed(escapes: int) -> str:
    return (f"cell NOT analysed: {escapes} shell, magic, help or autocall lines (over 100; honest cells have a few): "
            "it may hold any code")


def test_a_cell_of_thousands_of_shell_lines_is_flagged_not_transformed():
    review = review_notebook(notebook_of("\n".join(["!a"] * 3000)), "01_geometry", frozenset({"setup"}))
    assert [flag.construct for flag in review.flags] == [not_analysed(3000)]
    honest = review_notebook(notebook_of("%matplotlib inline\nfiles = !ls\nnp.zeros?"), "01_geometry", frozenset({"setup"}))
    assert all("too many" not in flag.construct for flag in honest.flags)


@pytest.mark.parametrize("line", ["/f x", ",f a b", ";f a", "?x", "x?", "!a"])
def test_autocall_and_help_lines_count_as_escapes(line):
    """Each costs IPython's transformer a pass over the whole cell: thousands are flagged, not transformed."""
    review = review_notebook(notebook_of("\n".join([line] * 1000)), "01_geometry", frozenset({"setup"}))
    assert [flag.construct for flag in review.flags] == [not_analysed(1000)]


def test_the_review_stops_at_its_budget_and_flags_what_it_did_not_read():
    cells = ["x = 1\n" * 1000, "exec('a')", "y = 2"]  # 6,000 characters, then the two cells beyond the budget
    review = review_notebook(notebook_of(*cells), "01_geometry", frozenset({"setup"}), max_work=6_020)  # the setup cell and the first take 6,018
    assert [flag.construct for flag in review.flags] == [
        "not analysed: the static review's budget ran out here (2 cells from cell 3 on; at most 6,020 work units a notebook)"]
    assert [flag.construct for flag in review_notebook(notebook_of(*cells), "01_geometry", frozenset({"setup"})).flags] == ["exec"]


@pytest.mark.parametrize("student", HONEST_STUDENTS)
def test_honest_notebooks_are_far_within_the_budget(student):
    from course_grader.trusted.judging.flags import MAX_REVIEW_WORK, escape_lines, review_work

    recipe = load_recipes(COURSE_ROOT / "example_class")[student]
    for assignment in COURSE.assignments():
        for name in COURSE.notebook_names(assignment):
            notebook = solved_notebook(COURSE, assignment, name)
            for cell in notebook.cells:
                cell.source = recipe.get("CELLS", {}).get(assignment, {}).get(cell.metadata.get("nbgrader", {}).get("grade_id"), cell.source)
            work = sum(review_work(cell.source, escape_lines(cell.source)) for cell in notebook.cells
                       if cell.cell_type == "code")
            assert 0 < work < MAX_REVIEW_WORK / 5, (assignment, work)


def test_a_cell_that_does_not_parse_is_noted_not_flagged():
    notebook = notebook_of("def f(:\n    pass", "x = 1\nexec('y')", nbgrader={"grade_id": "cell_x", "solution": True})
    review = review_notebook(notebook, "01_geometry", frozenset({"setup"}))
    assert review.unanalysed == ("cell_x: SyntaxError (line 1)",)
    assert [str(flag) for flag in review.flags] == ["cell_x: exec (line 2)"]


def test_a_deeply_nested_expression_does_not_crash_the_review():
    review = review_notebook(notebook_of("x = " + "-" * 100_000 + "1"), "01_geometry", frozenset({"setup"}))
    assert review.flags or review.unanalysed


def test_the_summary_stays_short():
    flags = [Flag("augment", line, "exec") for line in range(1, 21)]
    assert summary(flags).endswith("; and 12 more") and summary(flags).count("exec") == 8


# Written by hand from each fixture's docstring: what it does, not what the review finds.
VERDICT_ATTACKERS = {
    "ast_transformer", "code_swap", "forged_replies", "frame_peek", "hidden_leak", "import_hook", "input_transformer",
    "lazy_array", "noop_checks", "partial_credit", "reference_by_exec", "settrace_skip", "sklearn_perceptron",
    "visible_forger",
}
VERDICT_HONEST_OR_BUGGY = {
    "honest_ada", "bool_as_int", "epoch_off_by_one", "lists_not_arrays", "lookup_table", "loop_style", "mutates_input",
    "numpy_bools", "sign_strict", "visible_crash", "wrong_only",
}


@pytest.fixture(scope="module")
def verdict_class_reviews(tmp_path_factory):
    from course_grader.trusted.course.example_class import build_example_class, copy_course
    from course_grader.trusted.judging.flags import review_submission

    course = copy_course(fixture_course(), tmp_path_factory.mktemp("verdict_class"))
    written = build_example_class(course, FIXTURES / "verdict_class")
    return {(student, assignment): review_submission(course, course.submitted / student / assignment, assignment)
            for student, assignment in written}


@pytest.mark.parametrize("student", sorted(VERDICT_ATTACKERS | VERDICT_HONEST_OR_BUGGY))
def test_every_attacker_of_the_verdict_class_is_flagged_and_no_one_else(verdict_class_reviews, student):
    reviews = [review for (who, _), by_notebook in verdict_class_reviews.items() if who == student
               for review in by_notebook.values()]
    assert reviews, f"no fixture {student} in grader/tests/fixtures/verdict_class"
    flagged = any(review.flags for review in reviews)
    assert flagged == (student in VERDICT_ATTACKERS), [str(f) for review in reviews for f in review.flags]


# ------------------------------------------------------------- the fourth round: code in strings, hidden cells

#: a01: string annotations are any expression; ``typing.get_type_hints`` (and ``functools.singledispatch``'s
#: ``register``, which calls it) evaluate them in the function's globals.
TYPING_EVAL = '''import typing, functools
_got = []
def _probe(x: "(lambda m: _got.append(m.__name__) or int)(__import__('ctypes'))"):
    pass
typing.get_type_hints(_probe)
@functools.singledispatch
def _g(v):
    return v
@_g.register
def _(v: "(lambda m: _got.append(m) or int)(0)"):
    return v
'''


@pytest.mark.parametrize("expected", [
    (3, "a string annotation that is code, not a type name (typing evaluates it)"),
    (3, "code in a string ('__name__')"),
    (5, "typing.get_type_hints"),
    (10, "a string annotation that is code, not a type name (typing evaluates it)"),
])
def test_code_in_a_string_annotation_is_flagged(expected):
    assert expected in constructs(TYPING_EVAL)


@pytest.mark.parametrize("source, expected", [
    ("from typing import get_type_hints as hints\nhints(len)", (2, "typing.get_type_hints")),
    ("import typing\ntyping.ForwardRef('int')", (2, "typing.ForwardRef")),
    ("from typing import *\nget_type_hints(len)", (2, "typing.get_type_hints")),
    ("import inspect\ninspect.get_annotations(len, eval_str=True)", (2, "inspect.get_annotations")),
    ("x: 'print(1) or int' = 1", (1, "a string annotation that is code, not a type name (typing evaluates it)")),
    ("def f() -> 'np.ndarray.__class__': pass", (1, "a string annotation that is code, not a type name (typing evaluates it)")),
    ("code = 'exec(\"1\")'", (1, "code in a string ('exec')")),
    ("code = 'x = getattr (np, name)'", (1, "code in a string ('getattr')")),
    ("d = {'k': '().__class__.__base__'}", (1, "code in a string ('__class__')")),
    ("import base64", (1, "import base64 (not allowed in 01_geometry)")),
    ("import codecs", (1, "import codecs (not allowed in 01_geometry)")),
    ("import zlib", (1, "import zlib (not allowed in 01_geometry)")),
    ("import marshal", (1, "import marshal (not allowed in 01_geometry)")),
    ("import numpy as np\nnp.compat.base64", (2, "numpy.compat.base64")),
    ("getattr(np, 'exec')", (1, "getattr(..., 'exec')")),
    ("%load_ext mymodule", (1, "a magic %load_ext")),
])
def test_each_evaluator_of_strings_is_flagged(source, expected):
    assert expected in constructs(source)


def test_a_copy_hidden_in_base64_and_run_from_an_annotation_is_flagged():
    """a11: the copied code travels as base64, decoded and executed by an annotation typing evaluates."""
    hider = ("import typing\n_NOTES = 'ZGVmIF90cmFpbl9pbXBsKFgsIHksIG1heF9lcG9jaHMpOgogICAgcGFzcwo='\n"
             "def _setup(x: \"(lambda s: __import__('builtins').exec(__import__('base64').b64decode(s).decode(), globals()) "
             "or int)(_NOTES)\"):\n    pass\ntyping.get_type_hints(_setup)\n\n"
             "def train_perceptron(X, y, max_epochs):\n    return _train_impl(X, y, max_epochs)\n")
    found = constructs(hider, "02_algorithm")
    assert (3, "a string annotation that is code, not a type name (typing evaluates it)") in found
    assert (3, "code in a string ('__import__')") in found
    assert (5, "typing.get_type_hints") in found


def test_exec_after_a_hundred_question_marks_in_a_string_is_analysed():
    """a04: a '?' ending a line of a string or a comment is no help request: IPython runs the cell as plain Python."""
    notes = '"""\n' + "Why is the margin rule y(w.x+b) <= 0?\n" * 101 + '"""\n'
    found = [construct for _, construct in constructs(notes + "# is this right?\n" * 101 + "exec('print(1)')\n")]
    assert found == ["exec"]


def test_a_cell_not_analysed_says_so_plainly():
    found = constructs("x?\n" * 101 + "exec('1')")
    assert found == [(1, not_analysed(101))]


@pytest.mark.parametrize("source", [
    "import random\nidx = list(range(5))\nrandom.shuffle(idx)",
    "import warnings\nwarnings.filterwarnings('ignore')",
    "import time\nt = time.perf_counter()",
    "%load_ext autoreload\n%autoreload 2",
    "class Run:\n    def __init__(self, w):\n        self.w = w\n    def __eq__(self, other):\n        return (self.w == other.w).all()\n"
    "    def __bool__(self):\n        return True\n    def __repr__(self):\n        return f'Run({self.w})'",
    "stages = ['load', 'compile', 'run', 'eval', 'exec']",
    "x = 1\n" + "# does this work for n = 1?\n" * 101,
    'notes = """\n' + "Is w.x + b <= 0?\n" * 150 + '"""',
    "def f(w: 'np.ndarray', ks: 'list[int] | None' = None) -> 'tuple[np.ndarray, float]':\n    return w, 0.0",
    "from typing import Literal\ndef g(rule: \"Literal['margin', 'zero']\" = 'margin') -> None:\n    pass",
    "if __name__ == '__main__':\n    pass",
])
def test_honest_code_that_looks_like_an_evasion_raises_no_flag(source):
    assert constructs(source) == []


@pytest.mark.parametrize("broken", ["if x:\n        a = 1\n    b = 2\n", 's = """never closed\n'])
def test_a_cell_the_tokenizer_cannot_read_is_counted_by_lines_not_crashed_on(broken):
    """Past the tokenizer's stop, each line ending in '?' may be a help request: counted, the cell is not analysed."""
    assert constructs(broken + "x?\n" * 101) == [(1, not_analysed(101 + broken.count("?")))]


def test_question_lines_beyond_the_budget_are_flagged_as_beyond_the_budget():
    """Counting escape lines exactly is work too: past the budget the cell is not read, and the flag says why."""
    cells = ["x = 1\n" * 1000, "# is this right?\n" * 101]
    review = review_notebook(notebook_of(*cells), "01_geometry", frozenset({"setup"}), max_work=6_100)
    assert [flag.construct for flag in review.flags] == [
        "not analysed: the static review's budget ran out here (1 cells from cell 3 on; at most 6,100 work units a notebook)"]


#: Attack round 12 (item 6): modules held by a class (or an object given attributes) reached exec, settrace and
#: the harness's json.dumps with no flag. Each is now followed through the holder.
HELD = [
    ("import sys\nclass K:\n    s = sys\nK.s.settrace(print)", "sys.settrace"),
    ("import sys\nclass K:\n    s = sys\nK().s.setprofile(print)", "sys.setprofile"),
    ("import sys\nclass K:\n    s = sys\nclass L(K):\n    pass\nL.s.settrace(print)", "sys.settrace"),
    ("import sys\nclass K:\n    s = sys\ngetattr(K, 's').settrace(print)", "sys.settrace"),
    ("import sys\nclass K:\n    pass\nK.s = sys\nK.s.settrace(print)", "sys.settrace"),
    ("import sys\ndef f():\n    pass\nf.s = sys\nf.s.modules['builtins'].exec('1')", "sys.modules"),
    ("import sys\nclass K:\n    s = sys\nK.s.modules['builtins'].exec('1')", "sys.modules"),
    ("import json\nclass K:\n    m = json\nK.m.dumps = print", "assignment to json.dumps (a module attribute)"),
    ("import numpy as np\nclass K:\n    m = np\nK.m.testing._private.utils.os.system('ls')", "numpy.testing._private.utils.os.system"),
    ("import sys\nclass K:\n    s = sys\ntype(K()).s.settrace(print)", "sys.settrace"),
    ("import sys\nclass K:\n    def go(self):\n        self.s.settrace(print)\n    s = sys", "sys.settrace"),
    ("import sys\nclass K:\n    s = sys\n    @classmethod\n    def go(cls):\n        cls.s.setprofile(print)", "sys.setprofile"),
    ("import sys\nclass K:\n    def __init__(self):\n        self.s = sys\n    def go(self):\n        self.s.settrace(print)",
     "sys.settrace"),
    ("import sys\nclass K:\n    def go(self):\n        self.s.settrace(print)\n    def __init__(self):\n        self.s = sys",
     "sys.settrace"),
    ("import sys\nclass K:\n    pass\nsetattr(K, 's', sys)\nK.s.settrace(print)", "sys.settrace"),
    ("import sys\nclass K:\n    l = [sys]\nK.l[0].settrace(print)", "sys.settrace"),
]


@pytest.mark.parametrize("source, expected", HELD)
def test_a_module_held_by_a_class_or_an_object_is_followed(source, expected):
    assert any(construct.startswith(expected) for _, construct in constructs(source)), constructs(source)


def test_honest_classes_and_attributes_raise_no_flag():
    source = ("import numpy as np\nclass Model:\n    rate = 1.0\n    _count = 0\n    def fit(self, X):\n"
              "        self._w = np.zeros(X.shape[1])\n        return self\nModel._count += 1\nm = Model()\n"
              "m.rate = 2.0\nprint(Model.rate, m.fit(np.ones((2, 2)))._w)\ndef f():\n    pass\nf.calls = 0\n")
    assert constructs(source) == []


#: Attack round 13 (findings 1 and 2): the review forgot a value at any call's result, so the interpreter's modules
#: reached through one (``random.choice([warnings]).sys``) raised no flag. The attribute names are flagged whatever
#: the value they are read from, and so is an assignment to an attribute of an object the notebook did not create.
LIBRARY_RESULTS = [
    ("import warnings\ndef get():\n    return warnings\nget().sys.settrace(None)", "access to .settrace"),
    ("import warnings, functools\nfunctools.reduce(lambda a, b: b, [warnings]).sys.settrace(None)", "access to .settrace"),
    ("import warnings\nclass K:\n    @property\n    def m(self):\n        return warnings\nK().m.sys.settrace(None)",
     "access to .settrace"),
    ("import warnings\ng = (m for m in [warnings])\nnext(g).sys.settrace(None)", "access to .settrace"),
    ("import warnings\nnp.array([warnings], dtype=object)[0].sys.settrace(None)", "access to .settrace"),
    ("import warnings, collections\ncollections.deque([warnings]).pop().sys.settrace(None)", "access to .settrace"),
    ("import random, warnings\n_s = random.choice([warnings]).sys", "access to .sys"),
    ("import random, warnings\nrandom.choice([warnings]).__dict__['sys']", "access to .__dict__"),
    ("import random, warnings\ngetattr(random.choice([warnings]), 'sys')", "getattr(..., 'sys')"),
    ("import random, warnings\n_c = random.choice([warnings])\n_c.dumps = print", "assignment to .dumps of an object"),
    ("import random\nrandom.choice([np]).zeros = print", "assignment to .zeros of an object"),
    ("import json\nclass K:\n    pass\nx = K() if np.ones(1)[0] else json\nx.dumps = print",
     "assignment to json.dumps (a module attribute)"),
    ("def f():\n    pass\nf = np.array([np], dtype=object)[0]\nf.zeros = print", "assignment to .zeros of an object"),
    ("import json\nclass K:\n    def json(self):\n        pass\njson.dumps = print", "assignment to json.dumps (a module attribute)"),
    ("import random\nclass K:\n    def codec(self):\n        pass\ncodec = random.choice([np])\ncodec.zeros = print",
     "assignment to .zeros of an object"),
    ("class K:\n    def codec(self):\n        pass\nfor codec in [np]:\n    pass\ncodec.zeros = print",
     "assignment to numpy.zeros (a module attribute)"),
]


@pytest.mark.parametrize("source, expected", LIBRARY_RESULTS)
def test_the_interpreter_reached_through_any_value_is_flagged(source, expected):
    assert any(construct.startswith(expected) for _, construct in constructs(source, "02_algorithm")), \
        constructs(source, "02_algorithm")


@pytest.mark.parametrize("recipe, expected", [
    ("library_result_mutation", ["access to .modules", "assignment to .dumps of an object"]),
    ("library_result_exec", ["access to .sys", "access to .exec", "access to .settrace"]),
    ("_control_mutation_no_hook", ["access to .modules"]),
])
def test_the_second_call_and_digest_hand_ins_are_flagged(recipe, expected):
    import runpy

    cells = runpy.run_path(str(FIXTURES / "attacks_second_call_and_digest" / f"{recipe}.py"))["CELLS"]["02_algorithm"]
    found = [construct for source in cells.values() for _, construct in constructs(source, "02_algorithm")]
    for construct in expected:
        assert any(c.startswith(construct) for c in found), (construct, found)


def test_attributes_the_notebook_gives_its_own_objects_raise_no_flag():
    source = ("from dataclasses import dataclass\n@dataclass\nclass Run:\n    w: np.ndarray\nclass Model:\n"
              "    def __init__(self):\n        self.steps = 0\n    @classmethod\n    def fresh(cls):\n        cls.made = True\n"
              "        return cls()\nrun = Run(np.zeros(2))\nrun.w = run.w + 1\nmodels = [Model(), Model()]\nfor m in models:\n"
              "    m.steps += 1\ndef f():\n    pass\nf.calls = 0\nf.calls += 1\n")
    assert constructs(source) == []
