"""Two costs nbgrader pays on every submission that a grading worker need not pay; the results are the same.

- A job's gradebook is a scratch copy (``batch.py``): its scores are copied into the course's
  gradebook by the main process, which stays fully durable. SQLite's ``fsync`` on each of
  its commits (nbgrader commits per cell) only waits for the disk: turned off for scratch
  gradebooks alone (``synchronous=OFF``, journal in memory).
- nbgrader checks the metadata of every graded cell with ``jsonschema.validate``, which
  re-checks nbgrader's own schema each time (about 4 ms a cell): here the validator is
  built once per schema, and validates exactly as before.

``tune_nbgrader()`` installs both, once per process (idempotent).
"""

from __future__ import annotations

import threading
from pathlib import Path

#: The batch's scratch folders are made with this prefix (``pipeline._grade_batch``).
SCRATCH_PREFIX = ".grading-"

_installed = threading.Lock()
_done = False


def is_scratch_gradebook(path: str) -> bool:
    """Whether ``path`` is a job's copy of a gradebook inside a batch's scratch folder."""
    parts = Path(path).parts
    return len(parts) >= 3 and parts[-1] == "gradebook.db" and parts[-3].startswith(SCRATCH_PREFIX)


def _scratch_gradebooks_skip_fsync() -> None:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "connect")
    def _on_connect(connection, _record) -> None:  # noqa: ANN001 - a DB-API connection
        if not type(connection).__module__.startswith("sqlite3"):
            return
        databases = connection.execute("PRAGMA database_list").fetchall()
        if databases and is_scratch_gradebook(databases[0][2] or ""):
            connection.execute("PRAGMA synchronous=OFF")
            connection.execute("PRAGMA journal_mode=MEMORY")


def _validate_metadata_with_built_validators() -> None:
    import jsonschema
    from nbgrader.nbgraderformat.common import BaseMetadataValidator

    original = BaseMetadataValidator.validate_cell
    built: dict[int, jsonschema.protocols.Validator] = {}  # by schema version: each is one file of nbgrader's

    def validate_cell(self, cell) -> None:  # noqa: ANN001 - a notebook cell
        if "nbgrader" not in cell.metadata or cell.metadata["nbgrader"].get("schema_version", 0) != self.schema_version:
            return original(self, cell)  # no metadata, or the version errors: nbgrader's own code says it
        validator = built.get(self.schema_version)
        if validator is None:
            kind = jsonschema.validators.validator_for(self.schema)
            kind.check_schema(self.schema)  # once, where jsonschema.validate checks it on every call
            validator = built[self.schema_version] = kind(self.schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error

    BaseMetadataValidator.validate_cell = validate_cell


def tune_nbgrader() -> None:
    """Install both changes in this process (once)."""
    global _done
    with _installed:
        if _done:
            return
        _scratch_gradebooks_skip_fsync()
        _validate_metadata_with_built_validators()
        _done = True
