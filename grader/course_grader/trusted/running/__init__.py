"""Running student code: the sandbox, the warm kernel pool, the batch of grading jobs, nbgrader's autograde, the course's preprocessors and the executor (``ResilientExecute`` and its mixins)."""
