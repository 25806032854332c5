"""Where a run writes: a directory checked before anything runs, so a bad path is one clear line."""

from __future__ import annotations

import os
from pathlib import Path

from arena.errors import UserError


def writable_dir(path: Path, what: str = "--out") -> Path:
    """`path` as a directory the run can write into (created if missing), or one clear UserError."""
    try:
        text = str(path)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(f"{what} must be a UTF-8 path")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if any(len(part.encode()) > 255 for part in path.parts):
        raise UserError(f"{what} {shown!r} has a name longer than 255 bytes")
    try:
        if path.exists() and not path.is_dir():
            raise UserError(f"{what} {shown!r} is a file, not a directory")
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:
        raise UserError(f"{what} {shown!r} cannot be used: {exc.strerror if isinstance(exc, OSError) else exc}")
    if resolved.parts[1:2] in (("proc",), ("sys",), ("dev",)):
        raise UserError(f"{what} {shown!r} is under /{resolved.parts[1]}, not a place for run directories")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".arena-write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UserError(f"{what} {shown!r} is not writable: {exc.strerror or exc}")
    return path
