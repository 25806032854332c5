"""Streamed legs (`ctx.stream`): agno's run read as its event stream to its end, what the events tell handed over."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit

# a streamed leg: agno's events (not only the content), and the run's RunOutput as the stream's last item
STREAMED = {"stream": True, "stream_events": True, "yield_run_output": True}


async def streamed(agent: Any, events: Any, ctx: LegContext) -> Any:
    """Read a streamed run to its end, handing over what its events tell: each tool agno starts (the model's
    call) and each that completes (its result), each active requirement of a RunPausedEvent (the pause). The
    run's RunOutput is the stream's last item; a run that failed ends on a RunErrorEvent instead, and is read
    back from the session as agno stored it."""
    from agno.run import agent as agent_events
    from agno.run import team as team_events
    from agno.team import Team

    # A Team's stream carries its own events and, from inside `delegate_task_to_member`, its members' (agno's
    # `stream_member_events`, on by default): tool calls and results of both; the run's pause is the team's
    # RunPausedEvent (a member's own pause event precedes it, and is the same held call).
    final = (team_events.TeamRunOutput,) if isinstance(agent, Team) else (agent_events.RunOutput,)
    started = (agent_events.ToolCallStartedEvent, team_events.ToolCallStartedEvent)
    completed = (agent_events.ToolCallCompletedEvent, team_events.ToolCallCompletedEvent)
    paused = team_events.RunPausedEvent if isinstance(agent, Team) else agent_events.RunPausedEvent

    output, last = None, None
    async for event in events:
        if isinstance(event, final):
            output = event
            continue
        if not isinstance(agent, Team) or isinstance(event, team_events.BaseTeamRunEvent):
            last = event  # the run's own event (a member's names the member's run)
        if isinstance(event, started) and event.tool is not None:
            kit.tell_call(ctx, str(event.tool.tool_name), event.tool.tool_call_id)
        elif isinstance(event, completed) and event.tool is not None:
            kit.tell_result(ctx, str(event.tool.tool_name), str(event.tool.result), event.tool.tool_call_id)
        elif isinstance(event, paused):
            for held in (r.tool_execution for r in event.active_requirements if r.tool_execution is not None):
                kit.tell_pause(ctx, str(held.tool_name), held.tool_call_id)
    if output is None and last is not None and last.run_id is not None:
        output = await agent.aget_run_output(run_id=last.run_id, session_id=last.session_id)
    if output is None:
        raise RuntimeError("agno's event stream ended without the run's output")
    return output
