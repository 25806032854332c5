"""Scoring an item: its checks over the merged trace, its status, and scoring it again when late events arrive.

Item status: `passed`; `failed` when a check fails, including `completed` when the adapter raised,
crashed, hung or broke the pause protocol (a measured fault of the adapter or its framework); and
`errored` only when the harness could not measure the item (the model endpoint failed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from arena.checks import run_checks
from arena.results import ItemResult
from arena.spec import ArenaSpec
from arena.trace import TraceRecorder
from arena.types import Capabilities, EvalItem, StoreKind, TraceEvent


def infrastructure_failure(trace: list[TraceEvent]) -> str | None:
    """A model request the endpoint (not the framework) failed, or one still unanswered."""
    for e in trace:
        if e.type != "model_call" or e.late or not e.response:
            continue
        if e.response.get("harness"):  # the scripted model itself could not answer (its policy raised)
            return f"the harness's scripted model failed (HTTP {e.response.get('status')}): {e.response.get('error')}"
        if e.response.get("infrastructure") or e.response.get("injected"):
            return f"the model endpoint failed: {e.response.get('error') or e.response.get('status')}"
        if e.response.get("pending"):
            return "a model request was still unanswered"
    return None


def declared_of(adapter: Any, arena: ArenaSpec) -> Capabilities:
    """What the adapter (an instance, or its class when none was built) declares its pause channel carries in this
    arena (Capabilities() if it says nothing, or there is no adapter to ask)."""
    from arena.adapter import Adapter

    if isinstance(adapter, Adapter) or (isinstance(adapter, type) and issubclass(adapter, Adapter)):
        return arena.capabilities_of(adapter.info)
    return Capabilities()


def score(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec, declared: Capabilities, *,
          fault: str | None, infrastructure: str | None, duration_s: float, stream: bool = False,
          store: StoreKind = "sqlite") -> ItemResult:
    checks = run_checks(item, trace, arena, declared, stream=stream, store=store)
    status: Literal["passed", "failed", "errored"]
    error: str | None
    if infrastructure:
        status, error = "errored", infrastructure
    else:
        status, error = ("passed" if all(c.passed for c in checks) else "failed"), fault
    return ItemResult(
        item_id=item.id,
        status=status,
        checks=checks,
        error=error,
        legs=max((e.leg for e in trace if not e.late), default=0) + 1,
        duration_s=duration_s,
        trace=trace,
    )


@dataclass
class Scored:
    """An item in flight or done: what rescoring it after a late event needs."""

    item: EvalItem
    recorder: TraceRecorder
    declared: Capabilities
    fault: str | None
    infrastructure: str | None
    duration_s: float
    channel: Any
    epoch: int = 1
    traceback: str | None = None  # the adapter's exception, formatted (ItemResult.traceback)
    stream: bool = False  # a streamed run: its streamed events are checked too
    store: StoreKind = "sqlite"  # a run on a server store: what the harness saw of the store is checked too


def rescore(arena: ArenaSpec, done: Scored, trace: list[TraceEvent]) -> ItemResult:
    """The item's result over `trace` (its trace as sealed, or with the late events that arrived since)."""
    result = score(done.item, trace, arena, done.declared, fault=done.fault, infrastructure=done.infrastructure,
                   duration_s=done.duration_s, stream=done.stream, store=done.store)
    result.epoch = done.epoch
    result.traceback = done.traceback
    return result
