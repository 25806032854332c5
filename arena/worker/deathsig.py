"""A worker dies with the process that started it, even when that process is killed with SIGKILL.

Linux's parent-death signal (prctl PR_SET_PDEATHSIG): the kernel sends SIGKILL to this process when
its parent thread exits. Set first thing in every fork server and worker, so a harness killed by -9
leaves no fork server or worker behind; elsewhere (no prctl) it does nothing. It is not inherited by
what a worker's framework starts (a child's own fork or exec, not ours, would have to set it), so
those processes are ended by the harness's reaper instead (`reaper.py`: their leg cgroups, or their
environment marker).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import signal

PR_SET_PDEATHSIG = 1


@functools.cache
def libc() -> ctypes.CDLL:
    """Found once per process tree: `find_library` runs `ldconfig -p` in a subprocess, and a fork server's
    children (a worker per leg) inherit the server's."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def die_with_parent(expected_parent: int | None = None) -> bool:
    """Ask for SIGKILL when the parent exits; if it already has (or is not `expected_parent`), exit now."""
    try:
        found = libc()
        if found.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if expected_parent is not None and os.getppid() != expected_parent:  # it died before the prctl took effect
        os._exit(1)
    return True
