"""The human's decision as CrewAI's resume input: the flow's feedback (`decision.as_text()`), which the router after
the agent step appends to the conversation as the approval call's tool result."""

from __future__ import annotations

from typing import Any

NOT_EXECUTED = "NOT EXECUTED: the run paused for approval before this call ran"


def apply_feedback(state: Any, result: Any) -> str:
    """The router after the agent step (the flow's `apply_decision`): nothing to apply when the agent finished;
    otherwise the feedback is the approval call's tool result, each sibling CrewAI did not run is answered NOT
    EXECUTED (a chat-completions transcript must answer every call), and the agent goes on."""
    from crewai.flow import HumanFeedbackResult

    pending = state.pending
    if pending is None:
        return "done"
    if not isinstance(result, HumanFeedbackResult):
        raise TypeError(f"expected the step's HumanFeedbackResult, got {type(result).__name__}")
    feedback = result.feedback
    state.conversation.append(
        {"role": "tool", "tool_call_id": pending["id"], "name": pending["name"], "content": feedback}
    )
    for sibling in pending["siblings"]:
        state.conversation.append(
            {"role": "tool", "tool_call_id": sibling["id"], "name": sibling["name"], "content": NOT_EXECUTED}
        )
    state.pending = None
    return "continue_agent"
