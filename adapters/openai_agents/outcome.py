"""A `RunResult` as the leg's outcome: its `interruptions` (`ToolApprovalItem`s) a pause whose state is the SDK's
serialised RunState, `result.to_state().to_string()`; otherwise the final output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext, LegResult, PendingRequest, parse_args
from arena_builtins.arenas.delegation.channel import agents_of, held_call

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


def outcome(adapter: OpenAIAgentsAdapter, result: Any, ctx: LegContext) -> LegResult:
    interruptions = list(result.interruptions or [])
    gated = [i for i in interruptions if i.name in adapter._gated]
    if interruptions:  # the SDK stopped and holds the pending call(s); its serialised RunState is the leg state
        state = result.to_state().to_string()
        adapter._live.paused(state, result)  # the live result too, for a second live state of it (live_twin)
        if len(gated) > 1 and len(gated) == len(interruptions):  # several gated calls of one turn, held together
            return LegResult.suspended([pending(i, ctx) for i in gated], state)
        return LegResult.suspended(pending(approval_item(adapter, interruptions), ctx), state)
    output = result.final_output
    return LegResult.finished(output if isinstance(output, str) else str(output or ""))


def approval_item(adapter: OpenAIAgentsAdapter, interruptions: list[Any]) -> Any:
    """The pending call on a tool declared with needs_approval (the approval tool or a gated tool)."""
    return next((i for i in interruptions if i.name in adapter._pause_names), interruptions[0])


def pending(item: Any, ctx: LegContext) -> PendingRequest:
    """A ToolApprovalItem as the pause's request; where the run has delegates, the agent is the SDK's own
    `ToolApprovalItem.agent` (the agent whose tool call it holds, a delegate's in a nested run or after a handoff)."""
    agent = getattr(getattr(item, "agent", None), "name", None) if agents_of(ctx) else None
    return held_call(item.name or "", parse_args(item.arguments), item.call_id, agent)
