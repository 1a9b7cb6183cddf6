"""Running student code: the sandbox, the warm kernel pool, the batch of grading jobs, nbgrader's autograde and the course's preprocessors."""
