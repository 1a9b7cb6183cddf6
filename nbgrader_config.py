"""nbgrader configuration of the perceptron course (read by nbgrader and by `perceptron-course`)."""

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

c.CourseDirectory.course_id = "perceptron"
# The assignments are the folders of source/: 01_geometry, 02_algorithm, 03_worked_example,
# 04_convergence, 05_multiclass, 06_limitations (nbgrader records each in the gradebook when
# `perceptron-course release` or `grade` runs generate_assignment).

# What students see in place of a solution: a stub that names its function (NamedStubs fills {function}).
c.ClearSolutions.code_stub = {"python": '# YOUR CODE HERE\nraise NotImplementedError("write {function}: see its docstring")'}
c.GenerateAssignment.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.InstantiateTests",
    "nbgrader.preprocessors.LockCells",
    "perceptron_course.grading.trusted.preprocessors.NamedStubs",
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
c.Execute.timeout = 15
# The whole notebook, hidden tests, restarts and replays included, gets this many seconds; a kernel
# that keeps dying is restarted at most this many times.
c.ResilientExecute.time_budget = 180
c.ResilientExecute.max_restarts = 3
# A student who deleted a graded cell gets it back (and its points are graded), rather than a silent 0.
c.OverwriteCells.add_missing_cells = True

# Feedback never shows hidden tests: their source is removed and their failures show only the message.
# The exporter makes the page safe to open on the Jupyter origin (student HTML and outputs sanitised,
# no script, a Content-Security-Policy) and clear (each part named by its heading, scores at the top,
# failures in red): see perceptron_course/grading/trusted/feedback.py.
c.GenerateFeedback.exporter_class = "perceptron_course.grading.trusted.feedback.FeedbackHTMLExporter"
c.GenerateFeedback.preprocessors = [
    "perceptron_course.grading.trusted.feedback.GetGradesAndWaiting",
    "perceptron_course.grading.trusted.feedback.HideHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Kernels keep no history file and stay silent (their banners and warnings would clutter the TA's terminal).
c.Execute.extra_arguments = ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.log_level=CRITICAL"]

# Autograde with the course's safety nets (perceptron_course/grading/trusted/preprocessors.py):
# cells pasted from elsewhere are forgotten, a kernel death costs one cell, warnings do not
# zero a passing test, and no output grows without bound.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "perceptron_course.grading.trusted.preprocessors.ForgetUnknownCells",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "perceptron_course.grading.trusted.preprocessors.ResilientExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "perceptron_course.grading.trusted.preprocessors.LimitOutputSize",
    "perceptron_course.grading.trusted.preprocessors.StderrAsText",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    # Last, once the scores are saved: the autograded notebook keeps no script or active HTML, since
    # the formgrader renders it unsanitised with the TA's session (see feedback.py, SafeToRender).
    "perceptron_course.grading.trusted.feedback.SafeToRender",
]
# The limits a notebook hit, which ResilientExecute records in its metadata for the report, stay there.
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {("language_info", "name"), "perceptron_course_grading"}
# The formgrader's own renderer cleans HTML outputs and drops JavaScript outputs too.
c.HTMLExporter.sanitize_html = True
