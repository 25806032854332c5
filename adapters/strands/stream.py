"""A leg's run: `invoke_async`, or in a streamed leg (`ctx.stream`) `stream_async` read to its end, telling what
its events say (the model's calls, the tools' results, the pause)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import agents_of


async def invoke(agent: Any, ctx: LegContext, *prompt: Any) -> Any:
    """`agent.invoke_async(...)`, or in a streamed leg `agent.stream_async(...)` read to its end, handing over what
    its events tell; the run's AgentResult (the stream's last event, as invoke_async reads it)."""
    if not ctx.stream:
        return await agent.invoke_async(*prompt)
    # a call made in an earlier leg: a resumed stream replays its toolUse without a 'message' event
    names = tool_names(agent.messages) if hasattr(agent, "messages") else {}
    if agents_of(ctx):  # a delegate's held call: in the interrupted turn its caller keeps (the desk's, the Swarm's)
        names.update(held_names(agent._interrupt_state.to_dict()))
    event: dict[str, Any] = {}
    async for event in agent.stream_async(*prompt):
        tell(event, names, ctx)
    return event["result"]


def tell(event: dict[str, Any], names: dict[str, str], ctx: LegContext) -> None:
    """Hand over what one event of `stream_async` tells: the model's message (its toolUse blocks), the tools'
    results message (each toolResult, named by its toolUse), an interrupted tool (the pause). A delegate's own
    events come wrapped: an `as_tool()` agent's in its caller's `tool_stream_event` (AgentAsToolStreamEvent), a
    Swarm node's in `multiagent_node_stream`; what they tell is told the same way."""
    inner = event.get("tool_stream_event")
    if isinstance(inner, dict) and isinstance(inner.get("data"), dict):
        tell(inner["data"], names, ctx)
        return
    if event.get("type") == "multiagent_node_stream" and isinstance(event.get("event"), dict):
        tell(event["event"], names, ctx)
        return
    interrupted = event.get("tool_interrupt_event")
    if interrupted is not None:
        use = interrupted["tool_use"]
        ctx.told("pause", use["name"], use["toolUseId"])
        return
    message = event.get("message")
    if not isinstance(message, dict):
        return
    names.update(tool_names([message]))
    for block in message.get("content") or ():
        if "toolUse" in block:
            ctx.told("tool_call", block["toolUse"]["name"], block["toolUse"]["toolUseId"])
        elif "toolResult" in block:
            result = block["toolResult"]
            text = "".join(str(c["text"]) for c in result.get("content") or () if "text" in c)
            ctx.told("tool_result", names.get(result["toolUseId"], "?"), result["toolUseId"], text)


def tool_names(messages: list[Any]) -> dict[str, str]:
    """toolUseId -> tool name, from the toolUse blocks of `messages`."""
    return {b["toolUse"]["toolUseId"]: b["toolUse"]["name"]
            for m in messages for b in m.get("content") or () if isinstance(b, dict) and "toolUse" in b}


def held_names(data: Any) -> dict[str, str]:
    """toolUseId -> tool name, from every toolUse block anywhere in `data` (an interrupt state as JSON)."""
    found: dict[str, str] = {}
    if isinstance(data, dict):
        use = data.get("toolUse")
        if isinstance(use, dict) and "toolUseId" in use and "name" in use:
            found[str(use["toolUseId"])] = str(use["name"])
        for value in data.values():
            found.update(held_names(value))
    elif isinstance(data, list):
        for value in data:
            found.update(held_names(value))
    return found
