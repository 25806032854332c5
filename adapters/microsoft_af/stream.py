"""A leg's run: `agent.run`, or in a streamed leg (`ctx.stream`) `agent.run(..., stream=True)` read to its end,
telling what its updates say (the calls, their results, the pause); a delegate's updates through `as_tool`'s
stream callback."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext

from .client import framework


async def run(agent: Any, message: Any, session: Any, ctx: LegContext) -> Any:
    """`agent.run`, or in a streamed leg `agent.run(..., stream=True)` read to its end, handing over what its
    updates tell, then the stream's own final response (`get_final_response()`: the updates assembled by
    `AgentResponse.from_updates`, and the session's history stored, as `agent.run` does)."""
    if not ctx.stream:
        return await agent.run(message, session=session)
    names = await call_names(session)
    told_calls: set[str] = set()
    stream = agent.run(message, stream=True, session=session)
    async for update in stream:
        for content in update.contents:
            tell(ctx, content, names, told_calls)
    return await stream.get_final_response()


async def call_names(session: Any) -> dict[str, str]:
    """call id -> tool of the calls already in the session's history. A function result names its call by id
    only, and a resume's results answer calls of an earlier leg (the held ones, and the siblings the framework
    held with them), as a UI reopening the conversation reads them from its history."""
    af = framework()
    history = af.InMemoryHistoryProvider()
    messages = await history.get_messages(session.session_id,
                                          state=session.state.get(history.source_id))
    return {c.call_id: c.name for m in messages for c in m.contents if c.type == "function_call" and c.name}


def tell(ctx: LegContext, content: Any, names: dict[str, str], told_calls: set[str]) -> None:
    """Hand over what one content of a streamed update tells. A function call streams as chunks (the first with
    its call id and name, then argument deltas under the same id), so it is told once per call id; a function
    result names its call by id only."""
    if content.type == "function_call":
        if content.call_id and content.name and content.call_id not in told_calls:
            told_calls.add(content.call_id)
            names[content.call_id] = content.name
            ctx.told("tool_call", content.name, content.call_id)
    elif content.type == "function_result":
        result = content.result if isinstance(content.result, str) else str(content.result)
        ctx.told("tool_result", names.get(content.call_id, ""), content.call_id, result)
    elif content.type == "function_approval_request":
        ctx.told("pause", content.function_call.name, content.function_call.call_id)


def teller(ctx: LegContext) -> Any:
    """`as_tool(stream_callback=)` for a streamed leg: the delegate's own updates, told as they stream."""
    names: dict[str, str] = {}
    told_calls: set[str] = set()

    def told(update: Any) -> None:
        for content in update.contents:
            tell(ctx, content, names, told_calls)

    return told
