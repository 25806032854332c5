"""How a smolagents run ends as a leg: its final answer; for the emulated adapter, the pause it makes itself (an
`ActionStep` step callback that sees the request_approval call and calls `agent.interrupt()`, and `agent.run`'s
`AgentError("Agent interrupted.")` taken as that pause, the live agent its state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext, LegResult, PendingRequest, ToolKind, kit

from .tools import PENDING

if TYPE_CHECKING:
    from .adapter import SmolagentsEmulatedAdapter


def final_text(output: Any) -> str:
    return "" if output is None else str(output)


@dataclass
class Interrupted:
    """In-memory state of an interrupted run: the agent (its AgentMemory) and the step to answer."""

    agent: Any
    step: Any  # the smolagents ActionStep holding the request_approval call
    call_id: str


def step_callbacks(adapter: SmolagentsEmulatedAdapter, ctx: LegContext) -> dict[Any, Any]:
    """The step callbacks: after the step that called request_approval, interrupt the run."""
    from smolagents import ActionStep

    approval = {s.name for s in kit.tools_by_kind(ctx, ToolKind.approval)}

    def interrupt_on_approval(step: Any, agent: Any) -> None:
        call = next((c for c in step.tool_calls or [] if c.name in approval), None)
        if call is not None and step.observations and PENDING in step.observations:
            adapter._interrupted = Interrupted(agent=agent, step=step, call_id=call.id)
            agent.interrupt()  # takes effect when the next step would start

    return {ActionStep: interrupt_on_approval}


def suspended(paused: Interrupted) -> LegResult:
    """The interrupted run as a pause: the request_approval call it holds; the state is the live agent."""
    call = next(c for c in paused.step.tool_calls if c.id == paused.call_id)
    args = call.arguments if isinstance(call.arguments, dict) else {"_raw": call.arguments}
    pending = PendingRequest(tool=call.name, args=args, call_id=call.id)
    return LegResult.suspended(pending, paused)
