"""What a leg ended with, as the harness reads it: the graph's final message, or the interrupts it stopped on (the
approval tool's, the middleware's batched HITLRequest or its per-call requests) as PendingRequests, with what the
paused state records of the pause so that a resume answers it as it was asked."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegResult, PendingRequest

from .store import handle


def values_and_interrupts(output: Any) -> tuple[Any, Any]:
    """The graph's state values and its interrupts, from what `ainvoke(..., version="v2")` (or a streamed leg) gave."""
    if hasattr(output, "interrupts"):
        values, interrupts = output.value, output.interrupts
    else:  # langgraph before 1.1 (`-a langgraph@1.0.10`): the state dict, its interrupts under "__interrupt__"
        values, interrupts = output, output.get("__interrupt__", ())
    return values, interrupts


def leg_result(state: dict[str, Any], interrupts: Any, messages: list[Any]) -> LegResult:
    """The leg of a single agent: suspended on its interrupts (every gated call it holds, when several), else finished
    with its last message."""
    if interrupts:
        paused = handle(state, _pause_of(interrupts, messages))
        several = _gated_calls(interrupts, messages)
        if len(several) > 1:
            return LegResult.suspended(several, paused)
        return LegResult.suspended(_pending(interrupts[0].value, messages), paused)
    return LegResult.finished(text_of(messages[-1].content) if messages else "")


def _pause_of(interrupts: Any, messages: list[Any]) -> dict[str, Any]:
    """What the paused state records of its pause, so that a resume answers THIS pause as it was asked:
    which kind of interrupt it is, each interrupt's id, and the held calls' ids (the model's)."""
    values = [i.value for i in interrupts]
    if values and all(is_call_request(v) for v in values):
        return {"mode": "per_call", "interrupts": {v["tool_call_id"]: i.id for i, v in zip(interrupts, values)},
                "names": {v["tool_call_id"]: v["name"] for v in values}}
    if len(values) == 1 and is_gate_request(values[0]):
        calls = _gated_calls(interrupts, messages) or [_pending(values[0], messages)]
        return {"mode": "batched", "calls": [c.call_id for c in calls], "names": {c.call_id: c.tool for c in calls}}
    return {"mode": "value"}


def is_gate_request(value: Any) -> bool:
    """The middleware's batched HITLRequest (tool gate), rather than our approval tool's interrupt."""
    return isinstance(value, dict) and "action_requests" in value


def is_call_request(value: Any) -> bool:
    """The middleware's per-call ToolApprovalRequest (interrupt_mode="per_call"): one interrupt per gated call."""
    return isinstance(value, dict) and value.get("type") == "tool_approval"


def last_calls(messages: list[Any]) -> list[dict[str, Any]]:
    return next((m.tool_calls for m in reversed(messages) if getattr(m, "tool_calls", None)), [])


def _gated_calls(interrupts: Any, messages: list[Any]) -> list[PendingRequest]:
    """Every gated call the pause holds, with the id the model gave it.

    Per-call mode: one interrupt per call, each naming its tool_call_id. Batched mode: one interrupt
    whose action requests carry no ids; they are the gated calls of the last AIMessage, in its order.
    """
    values = [i.value for i in interrupts]
    if values and all(is_call_request(v) for v in values):
        return [PendingRequest(tool=v["name"], args=v["args"], call_id=v["tool_call_id"]) for v in values]
    if len(values) == 1 and is_gate_request(values[0]):
        asked = [(a["name"], a["args"]) for a in values[0]["action_requests"]]
        gated = [c for c in last_calls(messages) if (c["name"], c["args"]) in asked]
        if [(c["name"], c["args"]) for c in gated] == asked:
            return [PendingRequest(tool=c["name"], args=c["args"], call_id=c["id"]) for c in gated]
    return []


def _pending(value: dict[str, Any], messages: list[Any]) -> PendingRequest:
    if is_call_request(value):
        return PendingRequest(tool=value["name"], args=value["args"], call_id=value["tool_call_id"])
    if is_gate_request(value):
        # HumanInTheLoopMiddleware's HITLRequest: the gated calls of one model turn (the harness is
        # shown the first). An action request carries name and args; the call id is read from the
        # checkpointed AIMessage that made the call.
        action = value["action_requests"][0]
        calls: list[Any] = next((m.tool_calls for m in reversed(messages) if getattr(m, "tool_calls", None)), [])
        call_id = next((c["id"] for c in calls if c["name"] == action["name"] and c["args"] == action["args"]), None)
        return PendingRequest(tool=action["name"], args=action["args"], call_id=call_id)
    return PendingRequest(tool=value["tool"], args=value["args"], call_id=value.get("call_id"))


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content or "")
