"""The harness's temporary folders: named after the process that made them, so that what a killed
harness left behind (an item's work directory, its backend's state, a fork server's socket) is
removed by the next one (`sweep`), and never what a live harness still uses."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from arena.rundir import alive

PREFIX = "arena-"
_OWNED = re.compile(rf"^{PREFIX}p(\d+)-")


def prefix(what: str) -> str:
    """A mkdtemp prefix for this process: `arena-p<pid>-<what>-`."""
    return f"{PREFIX}p{os.getpid()}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', what)[:60]}-"


def sweep() -> list[Path]:
    """Remove the temporary folders of harness processes that are gone; return what was removed."""
    removed: list[Path] = []
    root = Path(tempfile.gettempdir())
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _OWNED.match(entry.name)
        if not match or not entry.is_dir() or alive(int(match.group(1))):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed
