"""ADK's events -> LegResult: the pause is a long-running call left unanswered when the stream ended by itself.

The adapter consumes every event; it reports a suspension only when the stream ended by itself with the
long-running call unanswered and no model output after it (the approval tool's own call, or ADK's
adk_request_confirmation for a confirmed, gated or body-pausing tool).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext, LegResult, PendingRequest, kit
from arena_builtins.arenas.delegation.channel import agents_of

from .client import AGENT_NAME
from .store import where

if TYPE_CHECKING:
    from .adapter import ADKBase

CONFIRMATION_CALL = "adk_request_confirmation"  # google.adk.utils._function_call_names


def outcome(adapter: ADKBase, ctx: LegContext, state: dict[str, Any], events: list[Any]) -> LegResult:
    """How the leg's run stopped: suspended on the unanswered pause call(s), finished with its final text, or
    errored."""
    authors = {AGENT_NAME, *(a.name for a in agents_of(ctx))}  # the run's agents (the desk and its delegates)
    answered = {fr.id for e in events for fr in e.get_function_responses() if fr.id}
    pause: tuple[int, Any, Any, PendingRequest] | None = None
    for index, event in enumerate(events):
        for call, pending in _pause_calls(adapter, ctx, event):
            if call.id not in answered:
                pause = (index, event, call, pending)
    # the events that hold the pause: the pause call's own; with delegates, every event of the leg (each
    # delegate of the desk's turn asks on an event of its own, authored by it)
    holding = ([e for e in events] if agents_of(ctx) else [pause[1]]) if pause else []
    held = [(call, pending) for e in holding for call, pending in _pause_calls(adapter, ctx, e)
            if call.id not in answered and call.name == CONFIRMATION_CALL and pending.tool in ctx.gated_tools]
    if agents_of(ctx):  # whose call it is: the author of the event that asks (ADK names the agent that ran the tool)
        asking = {call.id: e.author for e in holding for call, _ in _pause_calls(adapter, ctx, e)}
        held = [(call, pending.model_copy(update={"agent": asking[call.id]})) for call, pending in held]
        if pause is not None:
            pause = (*pause[:3], pause[3].model_copy(update={"agent": pause[1].author}))
    if pause is not None and len(held) > 1:  # several gated calls of one turn, each with its confirmation
        index, event = pause[0], pause[1]
        went_on = any(_went_on(ctx, events, i) for i, e in enumerate(events)
                      if any(c.id in {h.id for h, _ in held} for c in e.get_function_calls()))
        if not went_on:
            paused = {**where(state), "invocation": event.invocation_id,
                      "call_id": held[0][0].id, "call_name": CONFIRMATION_CALL,
                      "calls": [{"confirm_id": c.id, "call_id": p.call_id} for c, p in held]}
            return LegResult.suspended([p for _, p in held], paused)
    if pause is not None:
        index, event, call, pending = pause
        # Did the framework go on after the pause call? Any later model output (text or calls)
        # means it did not stop there, whatever the event flags say.
        went_on = _went_on(ctx, events, index)
        if not went_on:
            paused = {
                **where(state),
                "invocation": event.invocation_id,
                "call_id": call.id,
                "call_name": call.name,
                "model_call_id": pending.call_id,  # the id the model gave the paused call
            }
            return LegResult.suspended(pending, paused)
    finals = [e for e in events if e.author in authors and _text(e) and not e.partial]
    if finals:
        return LegResult.finished(_text(finals[-1]))
    if pause is not None:
        return LegResult.errored("the run went on after the pause call but gave no final answer")
    return LegResult.errored("the run ended with neither a final answer nor a pending approval")


def _pause_calls(adapter: ADKBase, ctx: LegContext, event: Any) -> list[tuple[Any, PendingRequest]]:
    """(call to answer, the request it stands for) for each pause call on this event."""
    approval = kit.approval_tool_name(ctx)
    out = adapter.lro_pauses(event, approval)
    confirmed = adapter.confirmed_tools(ctx) | {s.name for s in ctx.body_pause_tools}
    ids = event.long_running_tool_ids or set()
    for fc in event.get_function_calls():
        if fc.id in ids and fc.name == CONFIRMATION_CALL:
            original = (fc.args or {}).get("originalFunctionCall") or {}
            if original.get("name") in confirmed:
                args = dict(original.get("args") or {})
                shown = ((fc.args or {}).get("toolConfirmation") or {}).get("payload")
                if isinstance(shown, dict) and "amount" in shown:  # what a paused tool body will charge
                    args["amount"] = shown["amount"]
                out.append((fc, PendingRequest(tool=original["name"], args=args, call_id=original.get("id"))))
    return out


def _went_on(ctx: LegContext, events: list[Any], index: int) -> bool:
    """Whether the run went on after the pause call on `events[index]`: any later model output (text or calls),
    whatever the event flags say. With delegates, only the asking delegate's own and the desk's output count: a
    sibling delegate of the same desk turn still runs its own branch to its own gate (ADK runs them at once)."""
    asking = events[index].author
    own = {AGENT_NAME, asking} if agents_of(ctx) else {AGENT_NAME}
    return any(e.author in own and (_text(e) or e.get_function_calls()) for e in events[index + 1 :])


def _parts(event: Any) -> list[Any]:
    return list(event.content.parts or []) if event.content is not None else []


def _text(event: Any) -> str:
    return "".join(p.text for p in _parts(event) if p.text and not p.thought)
