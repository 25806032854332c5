"""Scaffolding every adapter needs, written once: the model client, reading a decision, finding tools by kind,
telling the stream.

Each helper is framework-neutral; an adapter uses it from inside its own framework's terms (its tool type, its
resume input). Adapters share code through this module (exported by `arena.for_adapters`), never through a
sibling adapter's private names.
"""

from __future__ import annotations

from typing import Any

from arena.http import async_client
from arena.types import Decision, DecisionKind, DecisionSet, LegContext, ToolKind, ToolSpec


LOOPBACK_CONNECT_S = 60.0  # the bound on connecting to the harness's loopback endpoint (the SDK's default is 5 s)


def openai_client(ctx: LegContext) -> Any:
    """The leg's official `AsyncOpenAI` client (imported here, lazily) on the harness's model endpoint and HTTP client,
    with the SDK's own retries off (its default is 2): every adapter's model client makes the same number of attempts,
    so an endpoint fault cannot change the framework comparison. A framework's own retries are the adapter's to turn
    off.

    The connect bound is `LOOPBACK_CONNECT_S`, not the SDK's 5 s: a loopback connection is made at once, and what
    passed 5 s in CI was an item's event loop not scheduled on a loaded machine (agno's hitl-11 ended in "Request
    timed out."), a failure of the harness's load charged to the framework. The read bound stays the SDK's."""
    from openai import AsyncOpenAI, Timeout

    return AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                       timeout=Timeout(600.0, connect=LOOPBACK_CONNECT_S), http_client=async_client())


def decisions_of(decision: Decision | DecisionSet) -> list[Decision]:
    """Every decision a resume carries: the one decision, or each of a DecisionSet's."""
    return list(decision.decisions) if isinstance(decision, DecisionSet) else [decision]


def decision_for(decision: Decision | DecisionSet, call_id: str | None) -> Decision | None:
    """The decision for one pending call: a DecisionSet's routed to that call id (None when it has none), or the
    one decision a single-call pause was given."""
    return decision.for_call(call_id) if isinstance(decision, DecisionSet) else decision


def first_decision(decision: Decision | DecisionSet) -> Decision:
    """The one decision of a pause that holds one call; a null decision when a DecisionSet is empty."""
    if isinstance(decision, DecisionSet):
        return decision.decisions[0] if decision.decisions else Decision(kind=DecisionKind.null)
    return decision


def is_null(decision: Decision | None) -> bool:
    """No typed decision at all (resume_safety's wrong-type resume): it approves nothing."""
    return decision is None or decision.kind is DecisionKind.null


def approval_tool_name(ctx: LegContext) -> str | None:
    """The arena's interrupt-point tool, or None where the arena gates tools instead."""
    return next((s.name for s in specs_of(ctx) if s.kind is ToolKind.approval), None)


def specs_of(ctx: LegContext) -> list[ToolSpec]:
    """The harness tools of the leg, as the model sees them."""
    specs: list[ToolSpec] = ctx.tools.specs
    return specs


def tools_by_kind(ctx: LegContext, kind: ToolKind) -> list[ToolSpec]:
    return [s for s in specs_of(ctx) if s.kind is kind]


def tell_call(ctx: LegContext, tool: str, call_id: Any = None) -> None:
    """A streamed leg: the framework's stream said the model called `tool`."""
    ctx.told("tool_call", tool, call_id=call_id)


def tell_result(ctx: LegContext, tool: str, result: Any, call_id: Any = None) -> None:
    """A streamed leg: the framework's stream said `tool` ran and returned `result`."""
    ctx.told("tool_result", tool, call_id=call_id, result=result)


def tell_pause(ctx: LegContext, tool: str, call_id: Any = None) -> None:
    """A streamed leg: the framework's stream said the run waits for a human on `tool`'s call."""
    ctx.told("pause", tool, call_id=call_id)
