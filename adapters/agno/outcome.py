"""agno's RunOutput (an Agent's or a Team's) as a LegResult: finished, errored, or suspended on the paused run's
active requirements, each a PendingRequest, with the leg state as JSON."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, LegResult
from arena_builtins.arenas.delegation.channel import held_call

from .store import db_ref


def outcome(result: Any, ctx: LegContext) -> LegResult:
    from agno.run.base import RunStatus

    if result.status == RunStatus.completed:
        content = result.content  # the model's last answer, as agno kept it
        return LegResult.finished(content if isinstance(content, str) else str(content or ""))
    if result.status != RunStatus.paused:  # ERROR (e.g. the model endpoint failed), CANCELLED, ...
        return LegResult.errored(f"agno run ended with status {result.status.value}: {result.content}")
    active = [r for r in result.active_requirements if r.tool_execution is not None]
    if not active:
        return LegResult.errored("agno paused the run with no active requirement")
    # a Team's pause on a member's call names the member (agno's `RunRequirement.member_agent_name`, set where
    # the member's pause is propagated to the team run); an Agent's own requirements have none
    pending = [held_call(r.tool_execution.tool_name, dict(r.tool_execution.tool_args or {}),
                         r.tool_execution.tool_call_id, r.member_agent_name) for r in active]
    state = {
        **db_ref(ctx),
        "session_id": result.session_id,
        "run_id": result.run_id,
        # agno's own serialisation of the pause's requirements (plain JSON)
        "requirements": [r.to_dict() for r in result.requirements or []],
        "call_ids": [p.call_id for p in pending],
    }
    gated = set(ctx.gated_tools)
    if len(pending) > 1 and not all(p.tool in gated for p in pending):
        names = [p.tool for p in pending]
        return LegResult.errored(f"agno paused on several calls that are not all gated tools: {names}")
    return LegResult.suspended(pending if len(pending) > 1 else pending[0], state)

