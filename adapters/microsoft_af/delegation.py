"""Delegation (`agents_of(ctx)`, the delegation arena): the desk, holding each delegate called as a tool through the
framework's agent-as-tool API (`Agent.as_tool()`), and which delegate holds a pending call."""

from __future__ import annotations

from typing import Any, Callable

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import agents_of, own_tools

from .stream import teller
from .tools import call_id_middleware, tool


def desk(af: Any, ctx: LegContext, client: Any, grant: Callable[[], str | None]) -> Any:
    """The run's agent of a delegation run: its own tools (none in the delegation arena) and, for each delegate
    called as a tool, the framework's `Agent.as_tool()` of that delegate's own Agent (its instructions and the
    tools it holds). A delegate reached by a handoff gets nothing: the `handoff` channel is unsupported."""
    middleware = [af.function_middleware(call_id_middleware)]
    tools = [tool(af, spec, ctx, grant) for spec in own_tools(ctx, None)]
    for spec in agents_of(ctx):
        if spec.via != "tool":
            continue
        delegate = af.Agent(client=client, instructions=spec.instructions, name=spec.name,
                            description=spec.description,
                            tools=[tool(af, t, ctx, grant) for t in own_tools(ctx, spec.name)],
                            middleware=[af.function_middleware(call_id_middleware)])
        tools.append(delegate.as_tool(name=spec.name, description=spec.description,
                                      stream_callback=teller(ctx) if ctx.stream else None))
    return af.Agent(client=client, instructions=ctx.instructions, name="travel_desk", tools=tools,
                    middleware=middleware)


def holder(ctx: LegContext, tool: str) -> str | None:
    """The delegate whose tool a pending call is (a delegation run), derived from the tools each agent holds: the
    framework's approval request names no agent. None: the run's own agent, or no delegation."""
    return next((a.name for a in agents_of(ctx) if tool in a.tools), None)
