"""Decision / DecisionSet -> ADK's resume input: one user message of FunctionResponses, sent with the paused
invocation_id (a ToolConfirmation to adk_request_confirmation, or the long-running call's own response)."""

from __future__ import annotations

from typing import Any, Callable

from arena.for_adapters import Decision, DecisionKind, DecisionSet, kit

from .client import adk
from .outcome import CONFIRMATION_CALL


def decision_message(state: dict[str, Any], decision: Decision | DecisionSet,
                     lro_response: Callable[[Decision], dict[str, Any]]) -> Any:
    """The message that answers the paused call(s) with the human's decision; `lro_response` is the adapter's
    answer to its long-running approval call."""
    types = adk()["types"]
    if isinstance(decision, DecisionSet):
        # One ToolConfirmation per decision, all in one message. It carries a bool to the framework: a
        # denial and an edit (ADK checks that the confirmed call's arguments are the stored ones) are both
        # rejections, which the model reads as ADK's fixed text.
        # A held call without a decision gets no confirmation; a null decision confirms None; a decision naming
        # a call that is not held is sent under that id. What ADK does then is what resume_safety measures.
        parts = []
        held_calls = state.get("calls") or [{"confirm_id": state["call_id"], "call_id": state.get("model_call_id")}]
        known = {h["call_id"]: h["confirm_id"] for h in held_calls}
        for d in decision.decisions:
            confirmed = None if kit.is_null(d) else d.kind is DecisionKind.approve
            answer = {"confirmed": confirmed, "payload": d.as_text() or None}
            parts.append(types.Part(function_response=types.FunctionResponse(
                id=known.get(d.call_id, d.call_id), name=CONFIRMATION_CALL, response=answer)))
        return types.Content(role="user", parts=parts)
    if state["call_name"] == CONFIRMATION_CALL:
        # A ToolConfirmation. An answer confirms (its text is what the approval tool returns);
        # only a denial rejects.
        answer = {"confirmed": decision.kind is not DecisionKind.deny, "payload": decision.as_text()}
    else:
        answer = lro_response(decision)
    response = types.FunctionResponse(id=state["call_id"], name=state["call_name"], response=answer)
    return types.Content(role="user", parts=[types.Part(function_response=response)])
