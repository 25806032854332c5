"""CrewAI's results as the adapter's: the agent's output as the flow step's result (the approval call it stopped
at, kept in the flow state, or its final answer), and the flow's result as a LegResult (suspended on CrewAI's
`HumanFeedbackPending`)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegResult, PendingRequest, parse_args

from .client import crewai_classes


def step_outcome(state: Any, output: Any, approval: str | None) -> dict[str, Any]:
    """The agent step's result from the agent's output: the approval call it stopped at (the flow state keeps the
    conversation without the placeholder result, and the call the flow pauses on), or its final answer."""
    messages = [dict(m) for m in output.messages]
    # CrewAI rebuilds its system prompt and wraps the request on every kickoff: keep the turns
    # after the wrapped request, behind the plain request.
    first_user = next(i for i, m in enumerate(messages) if m.get("role") == "user")
    turns = messages[first_user + 1 :]
    last = turns[-1] if turns else {}
    if last.get("role") == "tool" and last.get("name") == approval:
        turns.pop()  # the placeholder result; the human's decision takes its place on resume
        call_msg = next(m for m in reversed(turns) if m.get("role") == "assistant" and m.get("tool_calls"))
        answered = {m.get("tool_call_id") for m in turns if m.get("role") == "tool"}
        calls = call_msg["tool_calls"]
        call = next(c for c in calls if c["id"] == last["tool_call_id"])
        siblings = [
            {"id": c["id"], "name": c["function"]["name"]}
            for c in calls
            if c is not call and c["id"] not in answered
        ]
        state.conversation = [state.conversation[0], *turns]
        state.pending = {"id": call["id"], "name": approval, "siblings": siblings}
        return {
            "status": "approval",
            "call": {"id": call["id"], "name": approval, "args": parse_args(call["function"]["arguments"])},
        }
    state.conversation = [state.conversation[0], *turns]
    state.final = output.raw
    return {"status": "finished", "text": output.raw}


def leg_result(flow: Any, result: Any, db: str) -> LegResult:
    """Suspended only when the flow itself returned CrewAI's pending-feedback object."""
    if isinstance(result, crewai_classes()["Pending"]):
        call = result.context.method_output["call"]
        pending = PendingRequest(tool=call["name"], args=call["args"], call_id=call["id"])
        # JSON only: the database file (relative to ctx.workdir) and the flow id CrewAI keyed it by.
        return LegResult.suspended(pending, {"db": db, "flow_id": result.context.flow_id})
    if flow.state.final is None:
        return LegResult.errored(f"the flow ended without a final answer: {result!r}"[:300])
    return LegResult.finished(flow.state.final)
