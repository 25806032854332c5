"""Delegation (`LegContext.agents`, the delegation arena; nothing of this runs elsewhere): each delegate is an
`Agent` of its own holding its tools, its gated ones `FunctionTool(needs_approval=True)`; the run's agent reaches a
`via: tool` delegate through `Agent.as_tool` (the `nested` channel), a `via: handoff` one through `handoff()` (the
`handoff` channel)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import agents_of, desk_name, own_tools

from .client import AGENT_NAME
from .stream import nested_stream
from .tools import function_tools

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


def delegating_agent(adapter: OpenAIAgentsAdapter, ctx: LegContext, model: Any) -> Any:
    from agents import Agent, handoff

    # Delegation: each delegate is an Agent of its own holding its tools (its gated ones needs_approval=True).
    # The run's agent reaches a `via: tool` delegate through Agent.as_tool (named after it: its one argument is
    # the SDK's `input`), a `via: handoff` one through handoff() (the SDK's default tool name,
    # `transfer_to_<name>`). In a streamed leg, as_tool(on_stream=...) streams the delegate's own run.
    tools = function_tools(adapter, own_tools(ctx, None), ctx)
    handoffs = []
    for spec in agents_of(ctx):
        delegate = Agent(name=spec.name, instructions=spec.instructions, model=model,
                         tools=function_tools(adapter, own_tools(ctx, spec.name), ctx))
        if spec.via == "tool":
            tools.append(delegate.as_tool(tool_name=spec.name, tool_description=spec.description,
                                          on_stream=nested_stream(adapter) if ctx.stream else None))
        else:
            handoffs.append(handoff(delegate, tool_description_override=spec.description))
    # the run's Agent takes the item's name where it gives one (`shared_name`: a delegate's name too)
    return Agent(name=desk_name(ctx, AGENT_NAME), instructions=ctx.instructions, model=model, tools=tools,
                 handoffs=handoffs)
