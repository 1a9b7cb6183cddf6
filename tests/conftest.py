"""Helpers shared by the test files."""

import hashlib
from pathlib import Path


def tree_digest(folder: Path) -> str:
    """A hash of every path and file content under ``folder`` (to prove nothing changed)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()
