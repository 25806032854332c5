"""Delegation (`nested`, `handoff`; `agents_of(ctx)`): the desk as an agno `Team` whose members are the delegates."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import AgentSpec, agents_of, own_tools

from .tools import MAX_TOOL_CALLS, function_for


def routed_team(ctx: LegContext) -> bool:
    """Whether the delegates are handed the conversation (`via: handoff`, agno's route mode) rather than reached as
    tools (coordinate mode); agno's Team has one mode, so delegates reached both ways are refused."""
    vias = {a.via for a in agents_of(ctx)}
    if len(vias) > 1:
        raise ValueError("an agno Team has one mode: its members are all delegated to (coordinate) or all routed "
                         "to (route), not both")
    return vias == {"handoff"}


def build_team(ctx: LegContext, model: Any, db: Any, routed: bool) -> Any:
    """The desk as an agno `Team` whose members are the delegates, each an `Agent` holding its own tools (its
    gated ones `requires_confirmation`), all on the one SqliteDb, as agno's team HITL cookbook builds it
    (cookbook/03_teams/20_human_in_the_loop/confirmation_required.py). The leader holds no harness tool: it
    reaches a member only through agno's own `delegate_task_to_member(member_id, task)`. Every member's id is its
    AgentSpec name (agno's member id, what the leader passes as `member_id`). Mode: `TeamMode.coordinate` (the
    leader's tool call runs the member and reads its answer as the tool's result: the agent called as a tool)
    when the delegates are reached as tools, `TeamMode.route` with `determine_input_for_members=False` (agno's
    documented router: the member gets the user's message verbatim and its reply ends the run) when they are
    handed the conversation; agno's Team has one mode, so delegates reached both ways are refused."""
    from agno.agent import Agent
    from agno.team import Team, TeamMode

    members: list[Agent | Team] = [
        Agent(
            id=a.name,
            name=a.name,
            role=a.description,
            model=model,
            instructions=a.instructions,
            tools=[function_for(spec, ctx) for spec in own_tools(ctx, a.name)],
            db=db,
            telemetry=False,
            retries=0,
            tool_call_limit=MAX_TOOL_CALLS,
        )
        for a in agents_of(ctx)
    ]
    return Team(
        # a fixed id (agno derives none from a missing name but a random one): the Team a new process builds
        # is the team whose session and runs the db holds
        id="desk",
        name="desk",
        model=model,
        members=members,
        mode=TeamMode.route if routed else TeamMode.coordinate,
        # route: the user's message goes to the member verbatim (agno's "Router" pattern)
        determine_input_for_members=not routed,
        instructions=ctx.instructions,
        tools=[function_for(spec, ctx) for spec in own_tools(ctx, None)],
        db=db,
        telemetry=False,
        retries=0,
        tool_call_limit=MAX_TOOL_CALLS,
    )
