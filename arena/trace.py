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

from arena import channels
from arena.types import CORE_EVENTS, TraceEvent
from arena.errors import ArenaError

ACTIVITY = ("tool_call", "model_call")  # what a run does, as opposed to how its legs ended


class ModelClock:
    """How long an item waited for its model: the union of the intervals in which at least one of its model requests
    was in flight at the gateway (from the request's receipt to the end of its answer). The item's timeout does not
    count it: a slow endpoint is the world's time, not the framework's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[int] = set()
        self._next = 0
        self._since = 0.0  # when the current union interval began (while `_open` is not empty)
        self._closed = 0.0  # seconds of the intervals already over

    def begin(self) -> int:
        """A request is in flight from now; returns what `end` takes."""
        with self._lock:
            if not self._open:
                self._since = time.monotonic()
            handle, self._next = self._next, self._next + 1
            self._open.add(handle)
            return handle

    def end(self, handle: int) -> None:
        """That request's answer is over (once; a second call does nothing)."""
        with self._lock:
            if handle not in self._open:
                return
            self._open.discard(handle)
            if not self._open:
                self._closed += time.monotonic() - self._since

    def waited(self) -> float:
        """Seconds so far with a request in flight (the interval under way included)."""
        with self._lock:
            return self._closed + (time.monotonic() - self._since if self._open else 0.0)


class TraceError(ArenaError, ValueError):
    """An event of a type neither the core nor a registered channel records."""


class TraceRecorder:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[TraceEvent] = []
        self.model_clock = ModelClock()  # the item's time waiting for its model (not the framework's)
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
        if type not in CORE_EVENTS and type not in channels.events():
            raise TraceError(f"unknown trace event type {type!r}: not one of the core's ({', '.join(CORE_EVENTS)}) nor "
                             "one a registered channel lists (ChannelSpec.events)")
        for decision in [*([fields["decision"]] if fields.get("decision") is not None else []),
                         *(fields.get("decisions") or [])]:
            if decision.kind_name not in channels.decisions():
                raise TraceError(f"a decision of unknown kind {decision.kind_name!r}: not one a registered channel "
                                 "uses (ChannelSpec.decisions)")
        with self._lock:
            event = TraceEvent(
                seq=len(self._events),
                leg=self.leg if leg is None else leg,
                type=type,
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

    def amend(self, event: TraceEvent, **fields: Any) -> TraceEvent:
        """What the harness learned of an event after recording it, added to it in its place (the survivors of the
        worker a run was handed over from, listed once that worker closed, on the run's `resumed` event)."""
        with self._lock:
            amended = event.model_copy(update=fields)
            self._events[event.seq] = amended
        return amended

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
