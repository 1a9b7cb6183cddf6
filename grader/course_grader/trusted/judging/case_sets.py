"""Ids of what a grade was decided on, that never reveal the course secret.

A grade depends on the cases drawn for each check (from the course secret, the student and
their code) and on the checker that judged them (the check, the comparison, the reference).
``ResilientExecute`` records, for every check it judged, a ``case_set_id`` and a
``checker_id``; the replay record (``records.py``) keeps them, and ``explain`` compares them
with a regrade's:

- ``case_set_id`` is an HMAC keyed by the secret over the cases and the reference's answers:
  a changed secret, a changed way of drawing cases, or a changed reference changes it, and
  nothing about the secret or the cases can be read back from it;
- ``checker_id`` hashes the source files of the check's functions (its assignment's hidden_checks.py,
  the shared framework, the reference's module, or the source notebook a solution reference comes
  from), so an edited checker shows even where the cases stay;
- ``secret_id`` names the secret itself (an HMAC of a fixed label), so that ``explain`` can
  say "the course secret changed" rather than only "the cases changed".
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import inspect
import os
import re
from typing import Any

import numpy as np

from .checks.cases import Check
from .checks.judge import PreparedCases

#: Where ``ResilientExecute`` records them, inside the notebook metadata ``grading_metadata.GRADING_METADATA``:
#: ``{function: {"case_set": case_set_id, "checker": checker_id}}`` of every check it judged.
CASE_SETS_KEY = "case_sets"
#: Hex digits kept of each id: 96 bits, plenty to tell two case sets apart, short enough to read.
ID_HEX_DIGITS = 24
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_CASES_LABEL = b"perceptron-course case set v1\0"
_SECRET_LABEL = b"perceptron-course secret id v1\0"
_COMBINED_LABEL = b"perceptron-course case sets of a submission v1\0"


def secret_id(secret: bytes) -> str:
    """A public name of the course secret: equal for the same secret, different for another, revealing nothing of it."""
    return hmac.new(secret, _SECRET_LABEL, hashlib.sha256).hexdigest()[:ID_HEX_DIGITS]


def case_set_id(secret: bytes, function: str, prepared: PreparedCases) -> str:
    """The id of the cases a check drew for one submission (and of the reference's answers to them)."""
    mac = hmac.new(secret, _CASES_LABEL + function.encode("utf-8") + b"\0", hashlib.sha256)
    for index, case in enumerate(prepared.cases):
        _feed(mac, ("case", index, case.behaviour, case.args, sorted(case.kwargs.items())))
        if prepared.expected is not None and index < len(prepared.expected):
            _feed(mac, ("expected", prepared.expected[index]))
    return mac.hexdigest()[:ID_HEX_DIGITS]


def combined_case_set_id(secret_name: str, case_sets: dict[str, str]) -> str:
    """One id for every check of a submission together (``case_sets``: function -> ``case_set_id``)."""
    digest = hashlib.sha256(_COMBINED_LABEL + secret_name.encode())
    for function in sorted(case_sets):
        digest.update(f"\0{function}={case_sets[function]}".encode("utf-8", "backslashreplace"))
    return digest.hexdigest()[:ID_HEX_DIGITS]


def checker_id(check: Check) -> str:
    """A hash of the source files that define ``check``'s behaviour (cases, reference, comparison, judge)."""
    functions = [part for part in (check.cases, check.reference, check.compare, check.judge) if part is not None]
    files = sorted({path for path in map(_source_file, functions) if path} | {_source_file(case_set_id)})
    digest = hashlib.sha256(check.function.encode())
    for path in files:
        digest.update(b"\0" + os.path.basename(path).encode() + b"\0" + _file_digest(path).encode())
    return digest.hexdigest()[:ID_HEX_DIGITS]


def _source_file(function: Any) -> str:
    try:
        return inspect.getsourcefile(inspect.unwrap(function)) or ""
    except (TypeError, ValueError):  # a builtin or a C function: its library's version is in the environment
        return ""


_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_digest(path: str) -> str:
    """SHA-256 of a file's bytes, cached while its size and modification time stay the same."""
    try:
        info = os.stat(path)
    except OSError:
        return "missing"
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _FILE_DIGESTS:
        with open(path, "rb") as handle:
            _FILE_DIGESTS[key] = hashlib.sha256(handle.read()).hexdigest()
    return _FILE_DIGESTS[key]


def _feed(mac, value: Any) -> None:
    """Feed a canonical, unambiguous encoding of ``value`` (arrays, numbers, strings, containers) into ``mac``."""
    pending = [value]
    while pending:  # an explicit stack: no recursion limit on nested containers
        item = pending.pop()
        if isinstance(item, np.ndarray):
            data = np.ascontiguousarray(item)
            header = f"A{data.dtype.str}{data.shape}"
            mac.update(header.encode() + b"\0")
            mac.update(data.tobytes() if data.dtype.kind != "O" else repr(data.tolist()).encode())
        elif isinstance(item, (list, tuple)):
            mac.update(f"{'L' if isinstance(item, list) else 'T'}{len(item)}\0".encode())
            pending.extend(reversed(item))
        elif isinstance(item, dict):
            mac.update(f"D{len(item)}\0".encode())
            pending.extend(reversed([(repr(key), item[key]) for key in sorted(item, key=repr)]))
        elif isinstance(item, (str, bytes)):
            data = item.encode("utf-8", "surrogatepass") if isinstance(item, str) else item
            mac.update(f"{'S' if isinstance(item, str) else 'B'}{len(data)}\0".encode() + data)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):  # a result object of the reference
            mac.update(f"O{type(item).__qualname__}\0".encode())
            pending.append({field.name: getattr(item, field.name) for field in dataclasses.fields(item)})
        else:  # numbers, bools, None, NumPy scalars: their type and exact value (a NumPy scalar as Python's repr)
            plain = item.item() if isinstance(item, np.generic) else item
            text = _ADDRESS.sub("", repr(plain))  # an object's default repr holds its address, different in every run
            mac.update(f"{type(item).__name__}:{text}\0".encode("utf-8", "backslashreplace"))


def recorded_case_sets(grading_metadata: Any) -> dict[str, dict]:
    """The ids ``ResilientExecute`` recorded in a graded notebook's metadata (``{}`` when absent or malformed).

    Read from what the grader wrote over whatever the submission held there (see ``limits_hit``). A check
    that dropped cases its reference could not answer (``PreparedCases.dropped``) also has ``"dropped"``,
    the behaviours of those cases: the replay record keeps them for the TA.
    """
    recorded = grading_metadata.get(CASE_SETS_KEY) if isinstance(grading_metadata, dict) else None
    if not isinstance(recorded, dict):
        return {}
    found: dict[str, dict] = {}
    for function, ids in recorded.items():
        if not (isinstance(function, str) and isinstance(ids, dict)
                and isinstance(ids.get("case_set"), str) and isinstance(ids.get("checker"), str)):
            continue
        found[function] = {"case_set": ids["case_set"], "checker": ids["checker"]}
        dropped = ids.get("dropped")
        if isinstance(dropped, list) and dropped and all(isinstance(item, str) for item in dropped):
            found[function]["dropped"] = list(dropped)
    return found
