"""The per-item trace recorder: one ordered log that every leg, and every tool call, writes into.

Because legs append to the same recorder, the merged trace is simply its events in `seq` order.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from arena.types import TraceEvent


class TraceRecorder:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[TraceEvent] = []
        self.leg = 0

    def record(self, type: str, *, leg: int | None = None, pid: int | None = None, **fields: Any) -> TraceEvent:
        with self._lock:
            event = TraceEvent(
                seq=len(self._events),
                leg=self.leg if leg is None else leg,
                type=type,  # type: ignore[arg-type]
                pid=os.getpid() if pid is None else pid,
                ts=time.time(),
                **fields,
            )
            self._events.append(event)
            return event

    @property
    def events(self) -> list[TraceEvent]:
        with self._lock:
            return list(self._events)

    def tool_calls(self, name: str | None = None) -> list[TraceEvent]:
        return [e for e in self.events if e.type == "tool_call" and (name is None or e.tool == name)]
