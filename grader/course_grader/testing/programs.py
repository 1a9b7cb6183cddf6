"""nbgrader's own program, started for a test as its console script starts it, a second sooner.

The ``nbgrader`` console script is ``from nbgrader.apps.nbgraderapp import main; sys.exit(main())``: importing
nbgrader imports nbformat and jsonschema, and with them ``rfc3987_syntax``'s grammars, compiled at import (about
1 s of CPU in every start, ``course_grader/deferred_imports.py``). The command here runs the same ``main`` with the
same arguments after ``import course_grader``, which puts that import off: the same app, the same exchange, the
same files, and a test suite that starts nbgrader a hundred times saves as many seconds.
"""

from __future__ import annotations

import sys

#: What the console script does, after ``import course_grader`` (the deferred import) and with its own name in
#: ``sys.argv[0]`` (nbgrader's messages name the program by it).
NBGRADER_MAIN = ("import sys, course_grader\n"
                 "from nbgrader.apps.nbgraderapp import main\n"
                 "sys.argv[0] = 'nbgrader'\n"
                 "sys.exit(main())\n")


def nbgrader_program() -> list[str]:
    """The command line that runs ``nbgrader`` with this interpreter (where nbgrader and the grader are installed).

    Returns
    -------
    list of str
        ``[sys.executable, "-c", NBGRADER_MAIN]``: append nbgrader's subcommand and flags, as after ``nbgrader``.
    """
    return [sys.executable, "-c", NBGRADER_MAIN]
