"""The digest a hand-in's hidden cases are drawn from: everything it holds, encoded without ambiguity.

A student's cases come from the course secret, the student, the function and this digest
(``checks.draws.case_generator``). The digest covers every byte of every notebook the student
handed in, as handed in: every cell whatever its type, source, outputs, attachments, ids and
metadata (a tag such as ``skip-execution`` decides which cells run), and the notebook's own
metadata. So two hand-ins that differ in anything draw different cases, and the answers a failed
case shows in feedback are no use to any other hand-in (attack round 12: the digest was of the
code cells' sources joined by ``\\0``; cells ``"A\\0B"`` and ``"A"``, ``"B"`` collided, and a
``skip-execution`` tag, outside the digest, chose which cells ran: a second hand-in with the same
digest answered its cases from a table of the first one's feedback).

The same bytes keep the same cases: a regrade (and ``explain``) is identical, and handing in the
same file again cannot fish for new cases. Each part is length-prefixed, so no two lists of parts
encode alike.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

_LABEL = b"perceptron-course hand-in v2"


def length_prefixed(label: bytes, parts: Iterable[bytes]) -> str:
    """SHA-256 of ``label`` and each part preceded by its length: distinct lists of parts never collide."""
    digest = hashlib.sha256(len(label).to_bytes(8, "big") + label)
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def hand_in_digest(notebooks: dict[str, bytes]) -> str:
    """The digest of a hand-in: each notebook's name (as graded) and its bytes (as handed in)."""
    return length_prefixed(_LABEL, (part for name in sorted(notebooks) for part in (name.encode("utf-8"), notebooks[name])))


def notebook_digest(notebook: Any) -> str:
    """The digest of a notebook held in memory (an nbformat node or plain JSON data), for a run without a hand-in's bytes.

    Its canonical JSON: keys sorted, every non-ASCII character escaped (a lone surrogate too), so
    equal notebooks give equal text and different ones different text.
    """
    text = json.dumps(notebook, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=True)
    return length_prefixed(_LABEL, [b"in memory", text.encode("ascii")])
