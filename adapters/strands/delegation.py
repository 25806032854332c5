"""Delegation (`agents_of(ctx)`, the delegation arena): each delegate a strands Agent of its own, given to the desk as
`delegate.as_tool(...)` (`nested`), or a `strands.multiagent.Swarm` of the desk and the delegates it hands off to
(`handoff`)."""

from __future__ import annotations

import os
from typing import Any, Callable

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import AgentSpec, agents_of, own_tools

from .client import import_strands
from .tools import gate, tool

DESK = "travel_desk"  # the desk's node name in a handoff Swarm


def desk_tools(strands: Any, ctx: LegContext, model: Callable[[LegContext], Any]) -> list[Any]:
    """The desk's tools when delegates are called as tools: its own, then each delegate (via tool) as
    `Agent.as_tool(name=, description=)`."""
    tools = [tool(strands, spec, ctx) for spec in own_tools(ctx, None)]
    tools += [delegate(ctx, a, model).as_tool(name=a.name, description=a.description)
              for a in agents_of(ctx) if a.via == "tool"]
    return tools


def delegate(ctx: LegContext, spec: AgentSpec, model: Callable[[LegContext], Any], name: str | None = None) -> Any:
    """A delegate (`AgentSpec`) as a strands Agent: its instructions, the tools it holds, the same gate hook
    (its gated calls interrupt in its own BeforeToolCallEvent). No session manager: strands refuses one on an
    `as_tool()` agent that does not preserve its context, and on a Swarm node; the caller (the desk's session,
    the Swarm's) keeps its interrupted turn."""
    strands = import_strands()
    return strands.Agent(
        model=model(ctx),
        tools=[tool(strands, s, ctx) for s in own_tools(ctx, spec.name)],
        system_prompt=spec.instructions,
        hooks=[gate(ctx)],
        name=name or spec.name,
        description=spec.description,
        callback_handler=None,
    )


def swarm(ctx: LegContext, session_id: str, storage_dir: str, model: Callable[[LegContext], Any],
          agent_id: str) -> Any:
    """The handoff run: a `strands.multiagent.Swarm` of the desk (its entry point) and the delegates it hands
    off to, persisted by a FileSessionManager on the Swarm (strands' multi-agent session: `multi_agent.json`
    holds the Swarm's state and its interrupt state, with the interrupted node's messages and interrupt
    state). `agent_id`: the Swarm's id in the session."""
    strands = import_strands()
    from strands.multiagent.swarm import Swarm
    from strands.session.file_session_manager import FileSessionManager

    desk = strands.Agent(model=model(ctx), tools=[tool(strands, s, ctx) for s in own_tools(ctx, None)],
                         system_prompt=ctx.instructions, hooks=[gate(ctx)], name=DESK,
                         description="The travel desk", callback_handler=None)
    nodes = [desk, *(delegate(ctx, a, model) for a in agents_of(ctx) if a.via == "handoff")]
    os.makedirs(storage_dir, exist_ok=True)
    return Swarm(nodes, entry_point=desk, id=agent_id,
                 session_manager=FileSessionManager(session_id=session_id, storage_dir=storage_dir))
