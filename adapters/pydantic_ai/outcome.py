"""How a pydantic-ai run ended, as a `LegResult`: its output, or its `DeferredToolRequests` read as a pause
(the approval tool's question, held gated calls, a pausing body, delegates' forwarded calls) with the paused
state, pydantic-ai's own JSON message history plus the held call ids and kinds."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, LegResult, PendingRequest, ToolKind, kit
from arena_builtins.arenas.delegation.channel import agents_of, held_call


class HandedOver:
    """What a handoff's output function returns: the delegate the run was handed to and its run's result (its output
    is the run's output; the adapter keeps whose run it is, to resume that delegate on its own history)."""

    def __init__(self, agent: str, result: Any) -> None:
        self.agent = agent
        self.result = result

    def __str__(self) -> str:
        return str(self.result.output)


def outcome(result: Any, ctx: LegContext, agent: str | None = None) -> LegResult:
    """How the run ended. `agent`: the delegate whose run it is (after a handoff), named in its pending calls."""
    from pydantic_ai import DeferredToolRequests

    output = result.output
    if isinstance(output, HandedOver):  # the desk handed the run over: its outcome is the delegate's run's
        return outcome(output.result, ctx, output.agent)
    if not isinstance(output, DeferredToolRequests):
        return LegResult.finished(output if isinstance(output, str) else str(output))
    if agents_of(ctx) and agent is None:
        nested = nested_outcome(result, output, ctx)
        if nested is not None:
            return nested
    if agent is not None:
        paused = paused_outcome(result, output, ctx)
        if paused.status == "suspended":  # the delegate's own pause: its calls name it, its history is the state
            paused.state["agent"] = agent
            calls = [p.model_copy(update={"agent": agent}) for p in paused.all_pending]
            return LegResult.suspended(calls, paused.state)
        return paused
    return paused_outcome(result, output, ctx)


def nested_outcome(result: Any, output: Any, ctx: LegContext) -> LegResult | None:
    """The desk's run ended on its calls of delegates (agents called as tools) that forwarded their held calls
    (`ApprovalRequired` metadata): one pause holding every delegate's held call. Each pending call's agent is the
    delegate whose tool call pydantic-ai holds (`DeferredToolRequests.approvals[i].tool_name`, the delegate's
    name). None when the desk's run ended on something else."""
    delegated = {a.name for a in agents_of(ctx) if a.via == "tool"}
    calls = [c for c in output.approvals if c.tool_name in delegated]
    if not calls:
        return None
    others = [c.tool_name for c in [*output.calls, *output.approvals] if c not in calls]
    held: dict[str, Any] = {c.tool_call_id: (output.metadata or {}).get(c.tool_call_id) for c in calls}
    if others or any(not isinstance(m, dict) or not m.get("calls") for m in held.values()):
        names = [c.tool_name for c in [*output.calls, *output.approvals]]
        return LegResult.errored(f"run ended with unexpected deferred tool requests: {names}")
    pending = [held_call(i["tool"], i["args"], i["call_id"], c.tool_name)
               for c in calls for i in held[c.tool_call_id]["calls"]]
    state = {"messages": result.all_messages_json().decode(), "kind": "nested", "call_id": pending[0].call_id,
             "delegated": held}
    return LegResult.suspended(pending, state)


def paused_outcome(result: Any, output: Any, ctx: LegContext) -> LegResult:
    """A run that ended with its own deferred calls (a single agent's, or a delegate's after a handoff)."""
    approval_tools = {s.name for s in kit.tools_by_kind(ctx, ToolKind.approval)}
    gated = set(ctx.gated_tools)
    questions = [c for c in output.calls
                 if c.tool_name in approval_tools and deferred_kind(output, c.tool_call_id) == "question"]
    bodies = {s.name for s in ctx.body_pause_tools}
    approvals = [c for c in output.approvals if c.tool_name in gated or c.tool_name in bodies]
    unexpected = [c.tool_name for c in [*output.calls, *output.approvals] if c not in questions and c not in approvals]
    if not unexpected and not questions and len(approvals) > 1 and all(c.tool_name in gated for c in approvals):
        # several gated calls of one turn, all held: one pause, one decision per call (by tool_call_id)
        state = {"messages": result.all_messages_json().decode(), "call_id": approvals[0].tool_call_id,
                 "kind": "approval", "call_ids": [c.tool_call_id for c in approvals]}
        return LegResult.suspended([PendingRequest(tool=c.tool_name, args=c.args_as_dict(), call_id=c.tool_call_id)
                                    for c in approvals], state)
    if unexpected or len(questions) + len(approvals) != 1:
        # Only request_approval (a question) or one gated call (an approval) defers per turn; anything
        # else is not a pause we can answer with one decision.
        names = [c.tool_name for c in [*output.calls, *output.approvals]]
        return LegResult.errored(f"run ended with unexpected deferred tool requests: {names}")
    call = (questions or approvals)[0]
    kind = deferred_kind(output, call.tool_call_id)  # 'question' or 'approval'
    # Plain JSON text, so the state can cross a process boundary (durable_state).
    state = {"messages": result.all_messages_json().decode(), "call_id": call.tool_call_id, "kind": kind}
    args = call.args_as_dict()
    shown = (output.metadata or {}).get(call.tool_call_id) or {}
    if call.tool_name in bodies and "amount" in shown:  # what the paused body will charge
        args = {**args, "amount": shown["amount"]}
    pending = PendingRequest(tool=call.tool_name, args=args, call_id=call.tool_call_id)
    return LegResult.suspended(pending, state)


def deferred_kind(output: Any, call_id: str) -> str:
    """'question' or 'approval'. Before 2.68 (`-a pydantic_ai@2.66.0`) requests had no kinds: a held gated
    call was an approval, any other deferred call the external kind the approval tool's question is."""
    if hasattr(output, "kind"):
        return output.kind(call_id)
    return "approval" if any(c.tool_call_id == call_id for c in output.approvals) else "question"
