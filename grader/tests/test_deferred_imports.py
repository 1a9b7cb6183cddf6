"""``rfc3987_syntax`` (jsonschema's ``iri`` format check, brought by nbformat) is imported at its first use, not at
every program's start (``course_grader/deferred_imports.py``), and answers as the real module does."""

import json
import subprocess
import sys
from pathlib import Path

from course_grader.testing.programs import nbgrader_program

IRIS = ["http://example.org/a b", "http://example.org/\u00e4", "not an iri", "urn:isbn:0451450523", "", "//x"]

PROBE = """
import json, sys
{first}
import jsonschema, nbformat
deferred = getattr(sys.modules.get("rfc3987_syntax"), "__deferred__", False)
compiled_at_start = "lark" in sys.modules
checker = jsonschema.Draft7Validator.FORMAT_CHECKER
bad = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
bad.cells[0]["outputs"] = "not a list"
try:
    nbformat.validate(bad)
    rejected = False
except nbformat.ValidationError:
    rejected = True
answers = [checker.conforms(value, "iri") for value in json.loads(sys.argv[1])]
references = [checker.conforms(value, "iri-reference") for value in json.loads(sys.argv[1])]
print(json.dumps([deferred, compiled_at_start, rejected, answers, references]))
"""


def probe(first: str) -> list:
    done = subprocess.run([sys.executable, "-c", PROBE.format(first=first), json.dumps(IRIS)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def test_the_grader_starts_without_compiling_the_iri_grammars_and_the_iri_checks_answer_as_before():
    deferred, compiled_at_start, rejected, answers, references = probe("import course_grader")
    plain_deferred, _, _, plain_answers, plain_references = probe("")
    assert deferred and not compiled_at_start
    assert rejected  # nbformat's validation, all the grader uses of jsonschema, still refuses a bad notebook
    assert not plain_deferred
    assert (answers, references) == (plain_answers, plain_references)
    assert True in answers and False in answers  # the check ran (it is not the format's absence: that says True)


def test_another_name_of_the_module_is_the_real_ones_and_the_stand_in_leaves():
    code = ("import sys, course_grader, rfc3987_syntax\n"
            "assert rfc3987_syntax.__deferred__\n"
            "tree = rfc3987_syntax.parse(term='iri', value='http://example.org/')\n"
            "real = sys.modules['rfc3987_syntax']\n"
            "print(type(tree).__name__, getattr(real, '__deferred__', False), real.__file__.endswith('__init__.py'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["Tree", "False", "True"]


def test_the_tests_nbgrader_program_is_nbgraders_own_with_its_arguments_and_exit_status(tmp_path):
    console_script = Path(sys.executable).parent / "nbgrader"
    statuses = set()
    for arguments in (["--version"], ["list", "--course=none", f"--Exchange.root={tmp_path}"],
                      ["submit", "no-such-assignment", "--course=none", f"--Exchange.root={tmp_path}"]):
        ours = subprocess.run([*nbgrader_program(), *arguments], capture_output=True, text=True, cwd=tmp_path)
        theirs = subprocess.run([str(console_script), *arguments], capture_output=True, text=True, cwd=tmp_path)
        assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), (arguments, ours, theirs)
        statuses.add(ours.returncode)
    assert 0 in statuses and len(statuses) > 1  # a failing command fails as nbgrader's does
