"""crash_recovery's airline: flight_booking's sandbox, whose consequential tools de-duplicate by the call id.

A real payment API takes an idempotency key; here it is the framework's own id for the call, where the
adapter hands the tool one (`ToolBox.call(..., call_id=)`): the same call id at the same tool returns the
first answer and charges nothing more. An adapter that hands no id gets no de-duplication, as a tool
without a key would. The director arms its crash points here (`before`) and in the trace (`TraceRecorder.watch`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.types import EvalItem
from arena_builtins.arenas.flight_booking.tools import FlightBackend

# what writes to the airline or its ledger (a prepared payment intent too): de-duplicated by call id
CONSEQUENTIAL = frozenset({"hold_fare", "book_flight", "change_flight", "cancel_flight", "purchase_hold",
                           "purchase_hold.prepare", "purchase_hold.commit", "purchase_hold.abort"})


class CrashBackend(FlightBackend):
    def __init__(self, item: EvalItem, folder: Path) -> None:
        super().__init__(item, folder)
        self.answered: dict[tuple[str, str], str] = {}  # (call id, tool) -> its first answer
        # a crash point before a call runs (the director's): returns what the tool answers instead, or None
        self.before: Callable[[str, dict[str, Any]], str | None] | None = None

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        stop = self.before(name, args) if self.before is not None else None
        key = (call_id or "", name)
        if stop is None and not (call_id and name in CONSEQUENTIAL and key in self.answered):
            result = super().call(name, args)
            if call_id and name in CONSEQUENTIAL:
                self.answered[key] = result
            return result
        self.sandbox.calls += 1  # not run, but the n-th call the tool log records: the ledger's call_no stays aligned
        return stop if stop is not None else self.answered[key]
