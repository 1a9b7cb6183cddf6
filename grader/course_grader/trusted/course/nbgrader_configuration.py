"""nbgrader's configuration for a course graded by this grader: ``configure(c, root)``, which a course's
``nbgrader_config.py`` calls.

    from pathlib import Path
    from course_grader.trusted.course.nbgrader_configuration import configure

    c = get_config()
    configure(c, Path(__file__).resolve().parent)

Everything a term changes (the course id, the limits, the late policy, the reveal schedule, the header, the LMS) is
read from the course's ``term.toml`` (``term.py``); everything else is the grader's wiring of nbgrader: its
preprocessors, exporters and plugins, named by their dotted paths so that this module imports none of them. A course
may set more after the call (nbgrader reads the configuration object once the file has run).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .term import LMS_PATTERNS, load_term

if TYPE_CHECKING:  # importing nbgrader costs most of a second: what only names this module's constant must not pay it
    from traitlets.config import Config

#: The file of hidden checks beside each source assignment (``judging/check_registry.py`` reads it; never released).
HIDDEN_CHECKS_FILE = "hidden_checks.py"


def configure(c: Config, root: Path | str, never_released: Iterable[str] = ()) -> Config:
    """Set nbgrader's configuration ``c`` for the course at ``root``, from its ``term.toml``.

    Parameters
    ----------
    c : traitlets.config.Config
        The configuration nbgrader's ``get_config()`` returns in ``nbgrader_config.py``.
    root : Path or str
        The course folder (the one holding ``nbgrader_config.py`` and ``term.toml``).
    never_released : iterable of str
        File name patterns of ``source/<assignment>/`` that nbgrader must not copy into ``release/``, besides its own
        defaults and ``hidden_checks.py`` (for instance a course's test helpers kept beside each check).

    Returns
    -------
    traitlets.config.Config
        ``c``, set.
    """
    term = load_term(Path(root))

    c.CourseDirectory.course_id = term.course.id
    # The assignments are the folders of source/; the term's, in order, are term.toml's [[assignments]]
    # (nbgrader records each in the gradebook when `perceptron-course release` or `grade` runs
    # generate_assignment, with its due date from term.toml).
    if term.header_path() is not None:  # an absolute path: nbgrader reads it from wherever it runs
        c.IncludeHeaderFooter.header = str(term.header_path())

    # An assignment's hidden checks (source/<assignment>/hidden_checks.py, read by the grader on the TA's side) and
    # the course's own unreleased files are never copied into release/: nbgrader copies every other file of
    # source/<assignment>/. nbgrader's own defaults stay in the list.
    from nbgrader.coursedir import CourseDirectory

    c.CourseDirectory.ignore = [*CourseDirectory.class_traits()["ignore"].default(), HIDDEN_CHECKS_FILE, *never_released]

    # What students see in place of a solution: a stub that names its function (NamedStubs fills {function}).
    c.ClearSolutions.code_stub = {"python": '# YOUR CODE HERE\nraise NotImplementedError("write {function}: see its docstring")'}
    c.GenerateAssignment.preprocessors = [
        "nbgrader.preprocessors.IncludeHeaderFooter",
        "nbgrader.preprocessors.InstantiateTests",
        "nbgrader.preprocessors.LockCells",
        "course_grader.trusted.running.preprocessors.NamedStubs",
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.CheckCellMetadata",
        "nbgrader.preprocessors.ComputeChecksums",
        "nbgrader.preprocessors.SaveCells",
        "nbgrader.preprocessors.ClearHiddenTests",
        "nbgrader.preprocessors.ClearMarkScheme",
        "nbgrader.preprocessors.ComputeChecksums",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]

    # A cell that runs longer than this is interrupted (infinite loops); the rest of the notebook is graded.
    # The same limit holds for the hidden tests of one part (all their cases together).
    c.Execute.timeout = term.limits.cell_seconds
    # The whole notebook, hidden tests, restarts and replays included, gets this many seconds; a kernel
    # that keeps dying is restarted at most this many times.
    c.ResilientExecute.time_budget = term.limits.notebook_seconds
    c.ResilientExecute.max_restarts = term.limits.max_restarts
    # A student who deleted a graded cell gets it back (and its points are graded), rather than a silent 0.
    c.OverwriteCells.add_missing_cells = True

    # Feedback never shows hidden tests: their source is removed and their failures show only the message.
    # The exporter makes the page safe to open on the Jupyter origin (student HTML and outputs sanitised,
    # no script, a Content-Security-Policy) and clear (each part named by its heading, scores at the top,
    # failures in red): see grader/course_grader/trusted/outputs/feedback.py.
    c.GenerateFeedback.exporter_class = "course_grader.trusted.outputs.feedback.FeedbackHTMLExporter"
    c.GenerateFeedback.preprocessors = [
        "course_grader.trusted.outputs.feedback.GetGradesAndWaiting",
        "course_grader.trusted.gradebook.reveal.RevealSchedule",
        "course_grader.trusted.outputs.feedback.HideHiddenTests",
        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    ]

    # nbconvert checks the whole notebook against its schema once after all of an export's preprocessors,
    # not after each (an invalid notebook still fails the export): 17 checks fewer per submission.
    c.Exporter.optimistic_validation = True

    # Kernels keep no history file and stay silent (their banners and warnings would clutter the TA's terminal).
    # Their tracebacks are Python's plain ones (each frame's line, no surrounding lines): IPython's default
    # formats and highlights the context of every frame, about 12 ms of a kernel's CPU per failing cell.
    c.Execute.extra_arguments = ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.log_level=CRITICAL",
                                 "--InteractiveShell.xmode=Plain"]

    # Autograde with the course's safety nets (grader/course_grader/trusted/running/preprocessors.py and executor.py):
    # cells pasted from elsewhere are forgotten, a kernel death costs one cell, warnings do not
    # zero a passing test, and no output grows without bound.
    # nbgrader's own autograde (the formgrader's Autograde button, `nbgrader autograde`) refuses before it removes or
    # resets anything, and tells the TA to run `perceptron-course grade`, whose grading kernels it needs.
    c.Autograde.exporter_class = "course_grader.trusted.running.preprocessors.GraderOnlyExporter"
    c.Autograde.sanitize_preprocessors = [
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.DeduplicateIds",
        "nbgrader.preprocessors.OverwriteKernelspec",
        "course_grader.trusted.running.preprocessors.ForgetUnknownCells",
        "nbgrader.preprocessors.OverwriteCells",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    c.Autograde.autograde_preprocessors = [
        "course_grader.trusted.running.executor.ResilientExecute",
        "nbgrader.preprocessors.IgnorePattern",
        "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput",
        "course_grader.trusted.running.preprocessors.LimitOutputSize",
        "course_grader.trusted.running.preprocessors.StderrAsText",
        "course_grader.trusted.running.preprocessors.SaveAutoGradesAtOnce",
        "nbgrader.preprocessors.AssignLatePenalties",
        "nbgrader.preprocessors.CheckCellMetadata",
        # Last, once the scores are saved: the autograded notebook keeps no script or active HTML, since
        # the formgrader renders it unsanitised with the TA's session (see feedback.py, SafeToRender).
        "course_grader.trusted.outputs.feedback.SafeToRender",
    ]
    # The limits a notebook hit, which ResilientExecute records in its metadata for the report, stay there.
    # So does what the intake repaired (grader/course_grader/intake_rules.py), which the feedback page lists.
    c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {("language_info", "name"), "course_grader_grading",
                                                             "course_grader_intake"}
    # The formgrader's own renderer cleans HTML outputs and drops JavaScript outputs too.
    c.HTMLExporter.sanitize_html = True

    # Lateness: each assignment's due date and each student's extension are term.toml's; `perceptron-course
    # release`, `grade` and `refresh` write them into the gradebook (and say when the formgrader set another).
    # A submission's time is its timestamp.txt, which `nbgrader collect` (and `zip_collect` with a timestamp
    # in the file name) writes. The penalty is term.toml's [late] policy, applied by TermLatePenalty (a
    # LateSubmissionPlugin): "none" (lateness shown, no points taken), "zero", or "per_day" (a percentage of
    # the notebook's points per started day, capped).
    c.AssignLatePenalties.plugin_class = "course_grader.trusted.course.late_policy.TermLatePenalty"
    c.TermLatePenalty.policy = term.late.policy
    c.TermLatePenalty.percent_per_day = term.late.percent_per_day
    c.TermLatePenalty.max_percent = term.late.max_percent

    # Reveal schedule (term.toml's [reveal]): when a student's feedback shows the call, expected and received
    # values of a failed hidden case. See grader/course_grader/trusted/gradebook/reveal.py.
    c.RevealSchedule.show_details = term.show_details

    # Hand-ins from an LMS (term.toml's [handin].lms): put its "download all submissions" zip in
    # downloaded/<assignment>/archive/, then `nbgrader zip_collect <assignment>`; this pattern reads the
    # student id (and the time, where the LMS writes one) from the file names that LMS writes. For Canvas the id
    # is Canvas's numeric user id (the ID column of canvas_roster.csv, whose names the formgrader then shows): a
    # name is not an id (two John Smiths would be one). Two files for one student with the same name and no time
    # stop the collection, both named (ClashRefusingCollector).
    c.ZipCollectApp.collector_plugin = "course_grader.trusted.course.collect.ClashRefusingCollector"
    c.FileNameCollectorPlugin.named_regexp = LMS_PATTERNS[term.handin.lms]
    return c
