"""The service's durable journal: every hand-in seen, and what became of it (SQLite, write-ahead log).

A hand-in moves through these states, each change committed (``synchronous=FULL``) before the
step it records is taken for done:

``collected``   copied from the exchange or the drop folder into the course's archive (``handins/``), waiting;
``grading``     installed into ``submitted/<student>/<assignment>/`` and given to a grading worker;
``graded``      its outcome merged into the gradebook and the ledger (``ledger.py``: the truth of what is graded);
``released``    its feedback released to the exchange (done);
``superseded``  a newer hand-in of the same student and assignment arrived before it was graded (done, not an attempt);
``limited``     past the attempts allowed, or inside a cool-down: a page says so, nothing graded (done, kept);
``held``        after the student's due date with ``[serve] late = "hold"``: kept for the TA (done);
``refused``     never taken in (a forged owner, a link, a FIFO...): the reason says why (done).
``chosen``      a held or limited hand-in the TA put in ``submitted/`` for ``grade`` (``use-handin``; done, an attempt).

A restart finds each hand-in where the last run left it: ``collected`` ones wait again, a ``grading``
one is graded unless the ledger shows its files graded already, a ``graded`` one is released. The
``events`` table is an append-only history (what ``status`` shows, and what tests count).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

JOURNAL_FILE = "serve_journal.sqlite"

COLLECTED, GRADING, GRADED, RELEASED = "collected", "grading", "graded", "released"
SUPERSEDED, LIMITED, HELD, REFUSED = "superseded", "limited", "held", "refused"
CHOSEN = "chosen"
#: The event saying which graded attempt's grade stands after this hand-in (one that could not be graded, or a
#: worse one with ``counts = "best"``); ``status`` shows it.
STANDS = "stands"
#: States a hand-in never leaves.
FINAL = (RELEASED, SUPERSEDED, LIMITED, HELD, REFUSED, CHOSEN)
#: States of a hand-in counted as one of the student's attempts.
ATTEMPTS = (GRADING, GRADED, RELEASED, CHOSEN)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS handins (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    origin TEXT NOT NULL UNIQUE,         -- exchange:<inbound folder name, percent-encoded> or drop:<path>:<sha256>
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    handed_in TEXT NOT NULL DEFAULT '',  -- the hand-in's time: when the service first saw it complete, or the LMS's
    seen_at REAL NOT NULL,               -- the service's clock when it first saw it
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    installed TEXT NOT NULL DEFAULT '',  -- ledger fingerprint of submitted/ once installed
    score REAL, max_score REAL,
    graded_at REAL, released_at REAL,
    arrived_at REAL                      -- the service's clock when a scan first listed it (its wait runs from here)
);
CREATE INDEX IF NOT EXISTS handins_by_key ON handins (student, assignment);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    handin INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
"""


@dataclass(frozen=True)
class Handin:
    """One row of the journal."""

    seq: int
    origin: str
    student: str
    assignment: str
    handed_in: str
    seen_at: float
    state: str
    reason: str
    installed: str
    score: float | None
    max_score: float | None
    graded_at: float | None
    released_at: float | None
    arrived_at: float | None = None  #: when a scan first listed it (``None`` in a journal older than the column)

    @property
    def arrival(self) -> float:
        """When it arrived, by the service's clock: first listed, else first seen."""
        return self.seen_at if self.arrived_at is None else min(self.arrived_at, self.seen_at)

    @property
    def key(self) -> tuple[str, str]:
        return self.student, self.assignment


_COLUMNS = ("seq, origin, student, assignment, handed_in, seen_at, state, reason, installed, score, max_score, graded_at, "
            "released_at, arrived_at")


class Journal:
    """The journal of a course (``reports/serve_journal.sqlite``); one writer (the service), any readers."""

    def __init__(self, path: Path, *, read_only: bool = False, clock=time.time) -> None:
        self.path, self.clock = Path(path), clock
        if read_only:
            self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_SCHEMA)
            if "arrived_at" not in self._columns():  # a journal of an earlier version: the column added, empty
                self.db.execute("ALTER TABLE handins ADD COLUMN arrived_at REAL")
        # a journal an earlier version wrote, read only: its rows without the column
        self.columns = _COLUMNS if "arrived_at" in self._columns() else _COLUMNS.replace("arrived_at", "NULL")

    def _columns(self) -> set[str]:
        return {row[1] for row in self.db.execute("PRAGMA table_info(handins)")}

    @classmethod
    def of_course(cls, reports: Path, *, read_only: bool = False) -> "Journal":
        return cls(reports / JOURNAL_FILE, read_only=read_only)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ writing

    def _event(self, seq: int, kind: str, detail: str = "") -> None:
        self.db.execute("INSERT INTO events (at, handin, kind, detail) VALUES (?, ?, ?, ?)", (self.clock(), seq, kind, detail))

    def known(self, origin: str) -> bool:
        return self.db.execute("SELECT 1 FROM handins WHERE origin = ?", (origin,)).fetchone() is not None

    def add(self, origin: str, student: str, assignment: str, handed_in: str, state: str, reason: str = "",
            arrived_at: float | None = None) -> int:
        """Record a hand-in first seen now, in ``state`` (first listed at ``arrived_at``); returns its number."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            seen = self.clock()
            cursor = self.db.execute(
                "INSERT INTO handins (origin, student, assignment, handed_in, seen_at, state, reason, arrived_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (origin, student, assignment, handed_in, seen, state, reason, seen if arrived_at is None else arrived_at))
            self._event(cursor.lastrowid, state, reason)
        return int(cursor.lastrowid)

    def move(self, seq: int, state: str, reason: str = "", **fields) -> None:
        """Put hand-in ``seq`` in ``state`` (with ``reason`` and other columns), and log it."""
        allowed = {"installed", "score", "max_score", "graded_at", "released_at"}
        assert set(fields) <= allowed, fields
        assignments = ", ".join(["state = ?", "reason = ?", *(f"{name} = ?" for name in fields)])
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(f"UPDATE handins SET {assignments} WHERE seq = ?", (state, reason, *fields.values(), seq))
            self._event(seq, state, reason)

    def note(self, seq: int, kind: str, detail: str) -> None:
        """Log an event of hand-in ``seq`` that changes no state."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self._event(seq, kind, detail)

    # ------------------------------------------------------------------ reading

    def _rows(self, where: str, parameters: tuple = ()) -> list[Handin]:
        rows = self.db.execute(f"SELECT {self.columns} FROM handins WHERE {where} ORDER BY seq", parameters).fetchall()
        return [Handin(*row) for row in rows]

    def get(self, seq: int) -> Handin:
        return self._rows("seq = ?", (seq,))[0]

    def in_state(self, *states: str) -> list[Handin]:
        return self._rows(f"state IN ({', '.join('?' * len(states))})", states)

    def of(self, student: str, assignment: str) -> list[Handin]:
        return self._rows("student = ? AND assignment = ?", (student, assignment))

    def since(self, moment: float) -> list[Handin]:
        """Hand-ins that reached a final state, or were graded, at or after ``moment``."""
        return self._rows("seq IN (SELECT handin FROM events WHERE at >= ? AND kind IN (?, ?, ?, ?, ?, ?))",
                          (moment, GRADED, RELEASED, LIMITED, HELD, REFUSED, SUPERSEDED))

    def last_note(self, seq: int, kind: str) -> str:
        """The detail of hand-in ``seq``'s last event of ``kind`` (``""`` without one)."""
        row = self.db.execute("SELECT detail FROM events WHERE handin = ? AND kind = ? ORDER BY seq DESC LIMIT 1",
                              (seq, kind)).fetchone()
        return row[0] if row else ""

    def events(self, kind: str | None = None) -> list[tuple[int, float, int, str, str]]:
        """``(seq, at, handin, kind, detail)`` of every event (of ``kind``), in order."""
        if kind is None:
            return self.db.execute("SELECT seq, at, handin, kind, detail FROM events ORDER BY seq").fetchall()
        return self.db.execute("SELECT seq, at, handin, kind, detail FROM events WHERE kind = ? ORDER BY seq", (kind,)).fetchall()
