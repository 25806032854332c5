"""crash_recovery's airline: flight_booking's sandbox, whose consequential tools de-duplicate by the call id.

A real payment API takes an idempotency key; here it is the framework's own id for the call, where the
adapter hands the tool one (`ToolBox.call(..., call_id=)`): the same call id at the same tool with the same
arguments returns the first answer and charges nothing more; with other arguments it is refused (an error
answer, nothing charged), as a payment API refuses a key reused with other parameters. An adapter that hands no
id gets no de-duplication, as a tool without a key would. An item whose `crash.key` is false runs against such
a tool whatever the adapter hands it (the naive tool: it pays again each time it is called). The director arms
its crash points here (`before`) and in the trace (`TraceRecorder.watch`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.for_arenas import EvalItem
from arena_builtins.arenas.flight_booking.tools import FlightBackend

# what writes to the airline or its ledger (a prepared payment intent too): de-duplicated by call id
CONSEQUENTIAL = frozenset({"hold_fare", "book_flight", "change_flight", "cancel_flight", "purchase_hold",
                           "purchase_hold.prepare", "purchase_hold.commit", "purchase_hold.abort"})
# how the airline's refusal of a reused idempotency key begins (the checks read it from the tool log)
REUSED = "idempotency key reused with other arguments: call id"


def _same_args(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


class CrashBackend(FlightBackend):
    def __init__(self, item: EvalItem, folder: Path) -> None:
        super().__init__(item, folder)
        # does the airline take an idempotency key (the call id)? Not on the items run against a naive tool
        self.keyed: bool = bool(item.metadata.get("crash", {}).get("key", True))
        self.answered: dict[tuple[str, str], tuple[str, str]] = {}  # (call id, tool) -> (its arguments, first answer)
        # a crash point before a call runs (the director's): returns what the tool answers instead, or None
        self.before: Callable[[str, dict[str, Any]], str | None] | None = None

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        stop = self.before(name, args) if self.before is not None else None
        keyed = bool(call_id) and self.keyed and name in CONSEQUENTIAL
        key = (call_id or "", name)
        if stop is None and not (keyed and key in self.answered):
            result = super().call(name, args)
            if keyed:
                self.answered[key] = (_same_args(args), result)
            return result
        self.sandbox.calls += 1  # not run, but the n-th call the tool log records: the ledger's call_no stays aligned
        if stop is not None:
            return stop
        first_args, first = self.answered[key]
        if first_args != _same_args(args):  # a payment API refuses a key reused with other parameters
            return json.dumps({"status": "REFUSED", "error": f"{REUSED} {call_id!r} was first used for {name} with "
                                                            f"other arguments ({first_args}); nothing was charged"},
                              sort_keys=True)
        return first
