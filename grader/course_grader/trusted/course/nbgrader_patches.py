"""Every change this grader makes to nbgrader's own code, in one place, each checked against the nbgrader it names.

nbgrader is otherwise extended through its configuration (``nbgrader_config.py``) and subclasses (the
preprocessors of ``running/``). What configuration cannot reach is replaced here, and only here; ``PATCHED`` names
each replaced function with the hash of its source in the nbgrader version it was checked on
(``CHECKED_ON``), and ``grader/pyproject.toml`` bounds nbgrader to that version. A test
(``tests/test_nbgrader_patches.py``) fails when the installed nbgrader's source of a patched function differs:
read the new source, check the replacement against it, then record the new hash and version here and in the bound.

A new gradebook is stamped with the newest migration from this process (``stamp_new_gradebooks_in_process``):
nbgrader runs the ``alembic`` program for it, 3 s a new gradebook. The rest are costs nbgrader pays on every
submission that a grading worker need not pay; the results are the same (``tune_nbgrader``):

- A job's gradebook is a scratch copy (``running/batch.py``): its scores are copied into the course's
  gradebook by the main process, which stays fully durable. SQLite's ``fsync`` on each of
  its commits (nbgrader commits per cell) only waits for the disk: turned off for scratch
  gradebooks alone (``synchronous=OFF``, journal in memory; an SQLAlchemy event, not a patch).
- nbgrader checks the metadata of every graded cell with ``jsonschema.validate``, which
  re-checks nbgrader's own schema each time (about 4 ms a cell): here the validator is
  built once per schema, and validates exactly as before.
- nbgrader opens each gradebook with an engine of its own, and SQLAlchemy keeps the SQL it
  compiled per engine (and per dialect object): every job compiled nbgrader's statements
  again, about 90 a notebook, 45 % of its SQLAlchemy time. Engines of scratch gradebooks
  share one dialect and one compiled cache per process; each still opens its own file.
- nbgrader checks every table of a gradebook on each of the ~18 times a job opens it
  (``create_all``). A scratch gradebook is a copy of the course's, made by nbgrader with
  every table: opened without the check (a file without tables still gets it).
- Each of those openings made an engine, connected, and disposed of it on closing (about
  5 ms a time, 18 times a job). A scratch gradebook keeps one engine until its job is done
  (``release_scratch_gradebooks``); each opening still has a session of its own.

``tune_nbgrader()`` installs them all, once per process (idempotent).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The nbgrader version every patch below was checked against (``grader/pyproject.toml`` bounds nbgrader to it).
CHECKED_ON = "0.9.6"
#: Each function of nbgrader replaced here (module, qualified name) -> the SHA-256 of its source in ``CHECKED_ON``.
#: ``nbgrader.api.create_engine`` is SQLAlchemy's, called by ``Gradebook.__init__``: that call is what is checked.
PATCHED = {
    ("nbgrader.api", "get_alembic_version"):
        "3db2e6b20b2de4c010e29c26d3279bb3c66bb607d085f8c4e92ce2df4e2cf807",
    ("nbgrader.api", "Gradebook.__init__"):
        "f71f7e30a6aa3b529b46ffc2abf49bb507e3999f9d2d0a53a36b86766044bdfc",
    ("nbgrader.api", "Gradebook.close"):
        "431ec0f62d1593c287fe36bbb41fe5db22548e63b0be8de6ff54b66a9ff00ac9",
    ("nbgrader.nbgraderformat.common", "BaseMetadataValidator.validate_cell"):
        "0bb8ecb80c7bb95fecc02fbdb25f179d3932635ce84f1cf82cd6f2726f340516",
}

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


def _scratch_gradebooks_share_compiled_sql() -> None:
    import nbgrader.api
    from sqlalchemy import create_engine

    shared: list = []  # [(dialect, compiled cache)] of the first scratch gradebook's engine, once it connected
    lock = threading.Lock()

    def create_gradebook_engine(url, **kwargs):  # noqa: ANN001, ANN003 - as sqlalchemy.create_engine
        engine = create_engine(url, **kwargs)
        if engine.dialect.name != "sqlite" or not is_scratch_gradebook(engine.url.database or ""):
            return engine
        with lock:
            if not shared:
                with engine.connect():  # the dialect learns the SQLite library's version on a first connection
                    pass
                shared.append((engine.dialect, engine._compiled_cache))
                return engine
            engine.dialect, engine._compiled_cache = shared[0]
        return engine

    nbgrader.api.create_engine = create_gradebook_engine


@dataclass
class _KeptGradebook:
    """What one scratch gradebook's openings share until ``release_scratch_gradebooks``."""

    engine: Any
    sessions: Any  #: the session factory (each opening has a session of its own from it)
    courses_checked: set = field(default_factory=set)  #: ``Gradebook.check_course`` done for these course ids


#: Each scratch gradebook opened in this process, by URL.
_scratch_gradebooks: dict[str, _KeptGradebook] = {}
_scratch_engines_lock = threading.Lock()


def _scratch_gradebooks_open_without_creating_tables() -> None:
    import nbgrader.api
    from sqlalchemy import inspect
    from sqlalchemy.orm import scoped_session, sessionmaker

    original = nbgrader.api.Gradebook.__init__

    def open_gradebook(self, db_url: str, course_id: str = "default_course", authenticator=None) -> None:  # noqa: ANN001 - as nbgrader's own signature
        path = db_url.removeprefix("sqlite:///")
        if path == db_url or not is_scratch_gradebook(path):
            return original(self, db_url, course_id=course_id, authenticator=authenticator)
        with _scratch_engines_lock:
            kept = _scratch_gradebooks.get(db_url)
        if kept is None:
            engine = nbgrader.api.create_engine(db_url, echo=False, future=True)
            if not inspect(engine).has_table("alembic_version"):  # not a copy of a course's gradebook after all
                engine.dispose()
                return original(self, db_url, course_id=course_id, authenticator=authenticator)
            with _scratch_engines_lock:
                kept = _scratch_gradebooks.setdefault(
                    db_url, _KeptGradebook(engine, sessionmaker(autoflush=True, bind=engine, future=True)))
        self.engine = kept.engine
        # As nbgrader's own __init__ does, without Base.metadata.create_all; a session of its own (of one factory
        # per gradebook: making one costs more than the queries of a short opening), the course checked once.
        self.db = scoped_session(kept.sessions)
        if course_id not in kept.courses_checked:
            self.check_course(course_id=course_id)
            kept.courses_checked.add(course_id)
        self.course_id = course_id
        self.authenticator = authenticator

    def close(self) -> None:
        self.db.remove()
        if all(kept.engine is not self.engine for kept in list(_scratch_gradebooks.values())):  # a kept one stays
            self.engine.dispose()

    nbgrader.api.Gradebook.__init__ = open_gradebook
    nbgrader.api.Gradebook.close = close


def release_scratch_gradebooks(folder: str | Path) -> None:
    """Dispose of the kept engines of the scratch gradebooks under ``folder`` (a job's area, once the job is done)."""
    inside = Path(folder).resolve()
    with _scratch_engines_lock:
        released = [_scratch_gradebooks.pop(url) for url in list(_scratch_gradebooks)
                    if inside in Path(url.removeprefix("sqlite:///")).resolve().parents]
    for kept in released:
        kept.engine.dispose()


def head_revision() -> str:
    """The newest gradebook migration of the installed nbgrader."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    return ScriptDirectory(ALEMBIC_DIR).get_current_head()


def stamp_new_gradebooks_in_process() -> None:
    """nbgrader stamps a new gradebook with the answer of ``alembic heads``, a program it starts
    for that (3 s here, on every new gradebook): give it the same answer from this process."""
    import nbgrader.api

    if getattr(nbgrader.api, "get_alembic_version", None) is not None:
        nbgrader.api.get_alembic_version = head_revision


def original_source(module: str, qualname: str) -> str:
    """The source of ``module``'s ``qualname`` as the installed file has it (whatever this process replaced since)."""
    import ast
    import importlib.util

    origin = importlib.util.find_spec(module).origin
    text = Path(origin).read_text(encoding="utf-8")
    body = ast.parse(text).body
    found = None
    for part in qualname.split("."):
        found = next((node for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == part), None)
        if found is None:
            raise LookupError(f"{module} has no {qualname}")
        body = found.body
    return ast.get_source_segment(text, found)


def source_hash(module: str, qualname: str) -> str:
    """The SHA-256 of ``original_source`` (what ``PATCHED`` records)."""
    import hashlib

    return hashlib.sha256(original_source(module, qualname).encode("utf-8")).hexdigest()


def tune_nbgrader() -> None:
    """Install every change in this process (once)."""
    global _done
    with _installed:
        if _done:
            return
        _scratch_gradebooks_skip_fsync()
        _validate_metadata_with_built_validators()
        _scratch_gradebooks_share_compiled_sql()
        _scratch_gradebooks_open_without_creating_tables()
        _done = True
