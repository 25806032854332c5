"""A leg's run: `agent.run(...)`, or in a streamed leg `agent.run_stream_events(...)` read to its end, each event
told to the harness (`ctx.told`)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit


async def run_agent(agent: Any, ctx: LegContext, **run: Any) -> Any:
    """`agent.run(...)`, or in a streamed leg `agent.run_stream_events(...)` read to its end, handing over each
    tool call, each tool's return and each deferred (paused) call its events tell; the run's result."""
    if not ctx.stream:
        return await agent.run(**run)
    from pydantic_ai import AgentRunResultEvent

    result = None
    async with agent.run_stream_events(**run) as events:
        async for event in events:
            if isinstance(event, AgentRunResultEvent):
                result = event.result
            else:
                tell(ctx, event)
    if result is None:
        raise RuntimeError("the event stream ended without the run's result (AgentRunResultEvent)")
    return result


def tell(ctx: LegContext, event: Any) -> None:
    """Hand over what one of pydantic-ai's stream events tells: a tool call, a tool's return, the paused calls."""
    from pydantic_ai import DeferredToolRequestsEvent, FunctionToolCallEvent, FunctionToolResultEvent
    from pydantic_ai.messages import ToolReturnPart

    if isinstance(event, FunctionToolCallEvent):
        kit.tell_call(ctx, event.part.tool_name, event.part.tool_call_id)
    elif isinstance(event, FunctionToolResultEvent) and isinstance(event.part, ToolReturnPart):
        kit.tell_result(ctx, event.part.tool_name, event.part.model_response_str(), event.part.tool_call_id)
    elif isinstance(event, DeferredToolRequestsEvent):
        for part in [*event.requests.calls, *event.requests.approvals]:
            kit.tell_pause(ctx, part.tool_name, part.tool_call_id)
