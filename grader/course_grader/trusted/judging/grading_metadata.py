"""What grading records in an autograded notebook's metadata, and how it is read back.

``ResilientExecute`` (``running/executor.py``) writes one dict under ``GRADING_METADATA`` whatever the submission held
there (``ClearMetadataPreprocessor`` keeps it, see ``nbgrader_config.py``): the limits hit, each part's results
(``PARTS_RECORDED``, ``outputs/item_analysis.py``), the failed behaviours (``verdicts.FAILED_BEHAVIOURS``), the case
sets judged (``case_sets.CASE_SETS_KEY``) and the time budget's record (``TIME_BUDGET``). The gradebook's records,
the reveal schedule, the report and the item analysis read it; none of them reads a notebook's outputs, where a
student can print the grader's own words.
"""

from __future__ import annotations

#: The autograded notebook's metadata key, and its key for each part's results.
GRADING_METADATA, PARTS_RECORDED = "course_grader_grading", "parts"
#: How the report names each grading limit that stopped or cut student code, in the order it lists them.
DIED, TIMEOUT, MEMORY, BUDGET, GAVE_UP, CUT, REMOVED = LIMIT_LABELS = (
    "the kernel died (restarted)", "a cell hit the time limit", "a cell hit the memory limit",
    "the notebook's time budget ran out", "the kernel kept dying: the remaining cells were not run",
    "output was cut", "a rich output was removed",
)
#: Key, in that metadata, of what the grader saw of the time budget (``ResilientExecute._budget_record``).
TIME_BUDGET = "time_budget"
#: The ``stopped`` of that record when the kernel was killed at the deadline.
STOPPED_AT_DEADLINE = "the kernel was killed at the deadline"


def limits_hit(notebook) -> list[str]:
    """Which grading limits stopped or cut student code in an executed notebook, as ``ResilientExecute`` recorded them.

    Read from the notebook's metadata, which the grader writes whatever the submission held
    there; never from outputs, where a student can print the grader's own words.
    """
    recorded = notebook.get("metadata", {}).get(GRADING_METADATA)
    hit = recorded.get("limits_hit") if isinstance(recorded, dict) else None
    return [label for label in LIMIT_LABELS if isinstance(hit, list) and label in hit]
