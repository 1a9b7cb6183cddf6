"""The course secret: where the hidden tests' random cases come from.

Created in the course folder on the first grading (``grading_secret``, readable by
its owner only, git-ignored), it is in no committed file, no release and no
package, and the sandboxed kernel cannot read it. The same secret always draws the
same cases, so a regrade is identical; a course graded on several machines copies
this one file to each of them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .commands import grader_command

SECRET_FILE = "grading_secret"
SECRET_BYTES = 32


class SecretError(RuntimeError):
    """The secret file is missing where it must exist, or is not a secret this course wrote."""


def read_secret(path: Path) -> bytes:
    """The secret stored at ``path`` (hex text); raises ``SecretError`` if it is missing or malformed."""
    try:
        text = path.read_text(encoding="ascii").strip()
        secret = bytes.fromhex(text)
    except FileNotFoundError:
        raise SecretError(f"no course secret at {path}: grade with `{grader_command()} grade`, which creates it") from None
    except (UnicodeDecodeError, ValueError):
        raise SecretError(f"{path} does not hold a course secret (hex text)") from None
    if len(secret) < 16:
        raise SecretError(f"{path} holds a secret of {len(secret)} bytes; at least 16 are needed")
    return secret


def load_or_create_secret(course_root: Path) -> bytes:
    """The course's secret, created (owner-only, never replaced) on first use."""
    path = course_root / SECRET_FILE
    if not path.exists():
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass  # another grader created it a moment ago
        else:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(secrets.token_hex(SECRET_BYTES) + "\n")
    if path.is_symlink() or not path.is_file():
        raise SecretError(f"{path} must be a plain file holding the course secret")
    return read_secret(path)
