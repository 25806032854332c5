"""How the runner watches: the dwell a decision is held for at each pause, and the quiet an item must keep
before it is sealed (and a run before its results are written).

Measured in bench/pause_dwell.py: on a loaded 2-core machine activity that a framework leaves running
shows within a few ms; see docs/methodology.md.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from arena.trace import TraceRecorder

# How long a decision is held after a suspension, and how long an item must stay quiet before it is sealed.
PAUSE_DWELL_S = 0.1
QUIET_S = 0.1
QUIET_MAX_S = 2.0


@dataclass(frozen=True)
class Watch:
    """How the runner watches a pause and the end of an item."""

    dwell_s: float = PAUSE_DWELL_S
    quiet_s: float = QUIET_S
    quiet_max_s: float = QUIET_MAX_S


def left_to_wait(last_activity: float, start: float, quiet_s: float, max_s: float) -> float:
    """Seconds still to wait for `quiet_s` without activity since `start` (time.monotonic()); 0: quiet, or
    `max_s` is up."""
    now = time.monotonic()
    idle = now - max(last_activity, start)
    return 0.0 if idle >= quiet_s or now - start >= max_s else quiet_s - idle


async def quiesce(recorder: TraceRecorder, quiet_s: float, max_s: float) -> None:
    """Wait until the item has done nothing for `quiet_s` (at most `max_s`), letting its tasks run."""
    start = time.monotonic()
    while (left := left_to_wait(recorder.last_activity, start, quiet_s, max_s)) > 0:
        await asyncio.sleep(left)
