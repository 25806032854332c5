"""A streamed leg (ctx.stream), as a UI runs the graph: `astream` read to its end, handing over what its updates tell
(each tool call, each tool's result, each interrupt), then the thread's state as checkpointed."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit
from arena_builtins.arenas.delegation.channel import agents_of

from .context import run_kwargs
from .outcome import is_call_request, is_gate_request, text_of
from .store import DURABILITY


async def run_streamed(agent: Any, graph_input: Any, config: dict[str, Any], ctx: LegContext) -> Any:
    """The leg streamed to its end, then the thread's state as checkpointed (its values and its interrupts)."""
    # with delegates, subgraphs=True: the delegates' own updates (their calls, results, interrupts)
    await _tell(agent.astream(graph_input, config, stream_mode=["updates", "messages"], durability=DURABILITY,
                              **({"subgraphs": True} if agents_of(ctx) else {}), **run_kwargs(ctx)), ctx)
    snapshot = await agent.aget_state(config)
    return {**snapshot.values, "__interrupt__": snapshot.interrupts}


async def _tell(stream: Any, ctx: LegContext) -> None:
    """Read a streamed leg to its end, handing over what its updates tell: each AIMessage's tool calls, each
    ToolMessage (a tool's result), each interrupt of the '__interrupt__' update (the call it waits on). The
    'messages' mode (the model's tokens) is read too, as a UI shows them, and tells nothing of tools."""
    async for part in stream:
        mode, chunk = part[-2:]  # (namespace, mode, chunk) with subgraphs=True
        if mode != "updates" or not isinstance(chunk, dict):
            continue
        for node, update in chunk.items():
            if node == "__interrupt__":
                for interrupt in update or ():
                    for tool, call_id in _waits_on(interrupt.value):
                        kit.tell_pause(ctx, tool, call_id)
                continue
            messages = update.get("messages") if isinstance(update, dict) else None
            for message in messages if isinstance(messages, list) else ():
                for call in getattr(message, "tool_calls", None) or ():
                    kit.tell_call(ctx, call["name"], call.get("id"))
                if getattr(message, "type", None) == "tool":
                    kit.tell_result(ctx, str(message.name), text_of(message.content), message.tool_call_id)


def _waits_on(value: Any) -> list[tuple[str, str | None]]:
    """(tool, call id) of each call an interrupt's value says the run waits on."""
    if is_call_request(value):
        return [(value["name"], value.get("tool_call_id"))]
    if is_gate_request(value):  # the batched request names no call ids
        return [(a["name"], None) for a in value["action_requests"]]
    if isinstance(value, dict) and "tool" in value:
        return [(value["tool"], value.get("call_id"))]
    return []
