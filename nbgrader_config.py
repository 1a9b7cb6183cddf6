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
    "perceptron_course.grading.trusted.reveal.RevealSchedule",
    "perceptron_course.grading.trusted.feedback.HideHiddenTests",
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

# Autograde with the course's safety nets (perceptron_course/grading/trusted/preprocessors.py):
# cells pasted from elsewhere are forgotten, a kernel death costs one cell, warnings do not
# zero a passing test, and no output grows without bound.
# nbgrader's own autograde (the formgrader's Autograde button, `nbgrader autograde`) refuses before it removes or
# resets anything, and tells the TA to run `perceptron-course grade`, whose grading kernels it needs.
c.Autograde.exporter_class = "perceptron_course.grading.trusted.preprocessors.GraderOnlyExporter"
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
    "perceptron_course.grading.trusted.preprocessors.SaveAutoGradesAtOnce",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    # Last, once the scores are saved: the autograded notebook keeps no script or active HTML, since
    # the formgrader renders it unsanitised with the TA's session (see feedback.py, SafeToRender).
    "perceptron_course.grading.trusted.feedback.SafeToRender",
]
# The limits a notebook hit, which ResilientExecute records in its metadata for the report, stay there.
# So does what the intake repaired (perceptron_course/intake_rules.py), which the feedback page lists.
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {("language_info", "name"), "perceptron_course_grading",
                                                         "perceptron_course_intake"}
# The formgrader's own renderer cleans HTML outputs and drops JavaScript outputs too.
c.HTMLExporter.sanitize_html = True

# Lateness, the nbgrader way: an assignment's due date is nbgrader's own (`nbgrader db assignment add
# 01_geometry --duedate="2026-11-27 17:00:00 Europe/Paris"`), a student's extension too
# (Gradebook.grant_extension, see the README); a submission's time is its timestamp.txt, which
# `nbgrader collect` (and `zip_collect` with a timestamp in the file name) writes. grades.csv, the
# report and the feedback page say how late a submission was. The penalty is LateSubmissionPlugin's:
# "none" (lateness shown, no points taken) or "zero" (a late submission scores 0); subclass it for
# another rule and name the subclass in c.AssignLatePenalties.plugin_class.
c.LateSubmissionPlugin.penalty_method = "none"

# Reveal schedule: when a student's feedback shows the call, expected and received values of a failed
# hidden case. "now" (the default): at once. "after_due_date": until the student's due date above has
# passed (their extension included), a failed hidden case shows only its behaviour ("predict gave a wrong
# answer on a point with score exactly 0 ...") and the date the details come; run `perceptron-course
# refresh` after the due date and the pages show them. An assignment with no due date shows everything
# at once. The TA always sees everything (the autograded notebook in the formgrader). After changing
# this line, `perceptron-course refresh` rewrites the pages it changes. See perceptron_course/grading/trusted/reveal.py.
c.RevealSchedule.show_details = "now"

# Hand-ins from an LMS: put its "download all submissions" zip in downloaded/<assignment>/archive/,
# then `nbgrader zip_collect <assignment>`. The pattern below reads Canvas's file names,
# <name>_<user id>_<attachment id>_<file>.ipynb, and a late one, <name>_LATE_<user id>_...: the student id
# is Canvas's numeric user id (the ID column of Canvas's gradebook export, canvas_roster.csv, whose names
# the formgrader then shows); a name is not an id (two John Smiths would be one). It keeps the file's name
# (a resubmission Canvas renamed, geometry-1.ipynb, and a browser's geometry (1).ipynb included):
# `perceptron-course grade` grades the one notebook of a hand-in whatever its name, and of several copies
# the latest. Two files for one student with the same name and no time stop the collection, both named
# (ClashRefusingCollector). Moodle's and Blackboard's patterns are in the README ("Collect").
c.ZipCollectApp.collector_plugin = "perceptron_course.grading.trusted.collect.ClashRefusingCollector"
c.FileNameCollectorPlugin.named_regexp = (
    r".*/[^/_]+_(?:LATE_)?(?P<student_id>\d+)_\d+_(?P<file_id>[^/]+\.ipynb)$"
)
