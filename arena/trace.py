"""The per-item trace recorder: one ordered log that every leg, tool call and model request writes into.

Because legs append to the same recorder, the merged trace is simply its events in `seq` order.
After the item is sealed (its last leg ended and it went quiet), anything that still arrives for it
is a *late* event: kept, flagged, and handed to `on_late` so the run directory records it at once.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from arena.types import TraceEvent

ACTIVITY = ("tool_call", "model_call")  # what a run does, as opposed to how its legs ended


class TraceRecorder:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[TraceEvent] = []
        self.leg = 0
        self.sealed = False
        self.on_late: Callable[[TraceEvent], None] | None = None
        self.last_activity = time.monotonic()
        # called with every event as it is recorded, in the recording thread (a director's crash point)
        self._watchers: tuple[Callable[[TraceEvent], None], ...] = ()

    def watch(self, fn: Callable[[TraceEvent], None]) -> Callable[[], None]:
        """Call `fn` with each event from now on, right after it is recorded and before the code that
        recorded it goes on (a model request is not answered, a tool's result not returned, until `fn`
        returns); returns what stops it. For a director that acts at a moment of the run."""
        with self._lock:
            self._watchers += (fn,)

        def stop() -> None:
            with self._lock:
                self._watchers = tuple(w for w in self._watchers if w is not fn)
        return stop

    def record(self, type: str, *, leg: int | None = None, pid: int | None = None, **fields: Any) -> TraceEvent:
        with self._lock:
            event = TraceEvent(
                seq=len(self._events),
                leg=self.leg if leg is None else leg,
                type=type,  # type: ignore[arg-type]
                pid=os.getpid() if pid is None else pid,
                ts=time.time(),
                late=True if self.sealed else None,
                **fields,
            )
            self._events.append(event)
            if type in ACTIVITY:
                self.last_activity = time.monotonic()
            hook = self.on_late if self.sealed else None
            watchers = self._watchers
        if hook is not None:
            hook(event)
        for watcher in watchers:
            watcher(event)
        return event

    def seal(self) -> None:
        """From now on every event is late: the item's result has been scored."""
        with self._lock:
            self.sealed = True

    @property
    def events(self) -> list[TraceEvent]:
        with self._lock:
            return list(self._events)

    def late_events(self) -> list[TraceEvent]:
        return [e for e in self.events if e.late]

    def tool_calls(self, name: str | None = None) -> list[TraceEvent]:
        return [e for e in self.events if e.type == "tool_call" and (name is None or e.tool == name)]
