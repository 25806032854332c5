"""The run's event stream -> LegResult: read `handler.stream_events(expose_internal=True)` until the run stops (its
answer) or goes idle on waits (the suspension: a PendingRequest per InputRequiredEvent); a resume's decisions are
sent once the restored run is idle. A streamed leg (`stream`) tells what the same stream says, as a UI reads it."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, LegResult, PendingRequest, kit
from arena_builtins.arenas.delegation.channel import agents_of, held_call

from .client import import_framework
from .store import snapshot


def tell(li: dict[str, Any], event: Any, ctx: LegContext) -> None:
    """Hand over what one event of a streamed leg tells, as a UI reads the agent's stream: a ToolCall (the model's
    call, written as its step starts), a ToolCallResult (the tool's output), an InputRequiredEvent (a tool waits
    for a human on its call)."""
    if isinstance(event, li["ToolCall"]):
        kit.tell_call(ctx, event.tool_name, event.tool_id)
    elif isinstance(event, li["ToolCallResult"]):
        kit.tell_result(ctx, event.tool_name, str(event.tool_output.content), event.tool_id)
    elif isinstance(event, li["InputRequiredEvent"]):
        kit.tell_pause(ctx, str(event.get("tool")), event.get("call_id"))


async def drive(handler: Any, ctx: LegContext, held: list[PendingRequest],
                deliver: list[Any] | None = None) -> LegResult:
    """Read the run's events until it stops (its answer) or goes idle on waits (the suspension).

    A resume (`deliver`: the decisions' events) sends them once the restored run reports it is idle: restoring
    re-runs every step that was waiting (they wait again), and events sent while that re-run is under way were
    delivered out of order (a step run twice, another never: observed in doc_review, see the docstring). The
    calls still held at the next idle are those not answered, plus any new wait of this leg."""
    li = import_framework()
    asked: dict[Any, PendingRequest] = {p.call_id: p for p in held}  # call id -> what it asks, in order
    answered: set[Any] = set()
    delivered = deliver is None

    async def suspend_waiting() -> LegResult:
        waiting = [p for call_id, p in asked.items() if call_id not in answered]
        if not waiting:
            await handler.cancel_run()
            return LegResult.errored("the workflow went idle waiting for an event nothing asked for")
        return await suspend(handler, waiting, ctx)

    async for event in handler.stream_events(expose_internal=True):
        if ctx.stream:
            tell(li, event, ctx)
        if isinstance(event, li["InputRequiredEvent"]):
            call_id = event.get("call_id")
            if call_id not in asked:
                # delegation: the agent whose tool waits is the AgentWorkflow's current agent (its own record,
                # `current_agent_name` in the run's store: the agent handed the conversation)
                agent = await handler.ctx.store.get("current_agent_name", default=None) if agents_of(ctx) else None
                asked[call_id] = held_call(event.get("tool"), dict(event.get("args") or {}), call_id, agent)
        elif isinstance(event, li["WorkflowIdleEvent"]) or (
                isinstance(event, li["UnhandledEvent"]) and event.idle and delivered):
            if delivered:
                return await suspend_waiting()
            delivered = True
            assert deliver is not None
            if not deliver:  # an empty decision set: nothing to send, the run keeps waiting
                return await suspend_waiting()
            for sent in deliver:
                answered.add(sent.get("call_id"))
                handler.ctx.send_event(sent)
        elif isinstance(event, li["StopEvent"]):
            break
    result = await handler
    response = getattr(result, "response", None)
    return LegResult.finished(response.content if response is not None and response.content else str(result))


async def suspend(handler: Any, pending: list[PendingRequest], ctx: LegContext) -> LegResult:
    """Save llama-index's own serialisation of the run (a new file per pause, so an older state still
    points at its own snapshot) and the chat memory it leaves out, then end the run."""
    path = await snapshot(handler, ctx)
    await handler.cancel_run()
    state = {"context": path, "pending": [p.model_dump(mode="json") for p in pending]}
    return LegResult.suspended(pending if len(pending) > 1 else pending[0], state)
