"""Delegation (`LegContext.agents`, the delegation arena; nothing of this runs elsewhere): each delegate is an
`Agent` of its own holding its tools, its gated ones `FunctionTool(needs_approval=True)`; the run's agent reaches a
`via: tool` delegate through `Agent.as_tool` (the `nested` channel), a `via: handoff` one through `handoff()` (the
`handoff` channel); a delegate's own delegates, two levels deep, the same way (`deep_nested`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import delegates_of, desk_name, own_tools

from .client import AGENT_NAME
from .stream import nested_stream
from .tools import function_tools

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


def delegating_agent(adapter: OpenAIAgentsAdapter, ctx: LegContext, model: Any) -> Any:
    from agents import Agent

    # the run's Agent takes the item's name where it gives one (`shared_name`: a delegate's name too)
    own = function_tools(adapter, own_tools(ctx, None), ctx)
    tools, handoffs = reaching(adapter, ctx, model, None)
    return Agent(name=desk_name(ctx, AGENT_NAME), instructions=ctx.instructions, model=model, tools=[*own, *tools],
                 handoffs=handoffs)


def reaching(adapter: OpenAIAgentsAdapter, ctx: LegContext, model: Any, parent: str | None) -> tuple[list[Any], list[Any]]:
    """The tools and handoffs by which one agent (the run's own, `parent` None, or a delegate) reaches its delegates.
    Each delegate is an Agent of its own holding its tools (its gated ones needs_approval=True) and, two levels deep
    (`deep_nested`), its own delegates as tools. A `via: tool` delegate is reached through Agent.as_tool (named after
    it: its one argument is the SDK's `input`), a `via: handoff` one through handoff() (the SDK's default tool name,
    `transfer_to_<name>`). In a streamed leg, as_tool(on_stream=...) streams the delegate's own run."""
    from agents import Agent, handoff

    tools, handoffs = [], []
    for spec in delegates_of(ctx, parent):
        held = function_tools(adapter, own_tools(ctx, spec.name), ctx)
        inner, _ = reaching(adapter, ctx, model, spec.name)
        delegate = Agent(name=spec.name, instructions=spec.instructions, model=model, tools=[*held, *inner])
        if spec.via == "tool":
            tools.append(delegate.as_tool(tool_name=spec.name, tool_description=spec.description,
                                          on_stream=nested_stream(adapter) if ctx.stream else None))
        else:
            handoffs.append(handoff(delegate, tool_description_override=spec.description))
    return tools, handoffs
