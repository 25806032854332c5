"""The human's decision as the framework's resume input: one approval response per held request (a bool, or an
"always approve" rule), sent in a new user message on the restored session, and the texts the adapter-owned
approval body returns for the approved requests."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet, LegContext


def answers(af: Any, state: dict[str, Any], requests: list[Any], decision: Decision | DecisionSet,
            ctx: LegContext) -> tuple[list[str], list[Any]]:
    """The approval body's granted texts (one per approved request of the approval tool) and the responses to the
    held requests."""
    if isinstance(decision, DecisionSet):
        # One response per held call, by the model's call id. The response is a bool: an edit (the framework
        # re-binds the approved call to the stored one) and a denial are both a rejection with its fixed text.
        responses = []
        # A held call without a decision gets no response; a null decision is a response whose `approved`
        # is None; a decision naming a call that is not held has no request to answer. What the framework
        # does with that is what resume_safety measures.
        for r in requests:
            d = decision.for_call(r.function_call.call_id)
            if d is None:
                continue
            responses.append(answer(af, r, d) if d.kind is not DecisionKind.null
                             else r.to_function_approval_response(None))
        return [], responses
    if state.get("pending") in ctx.gated_tools:
        # A gated tool: only an approval lets the framework run it (a free answer is not one, as in
        # vanilla). The response is a bool: a denial becomes the framework's fixed rejection text.
        approved = decision.approved
        grants: list[str] = []
    else:  # the approval tool: approve and answer both run the adapter-owned body with the text
        approved = decision.kind is not DecisionKind.deny
        grants = [decision.as_text() for _ in requests] if approved else []
    if state.get("pending") in ctx.gated_tools and decision.always and approved:
        # "approve always": the framework's standing rule for the tool, recorded by ToolApprovalMiddleware
        responses = [answer(af, r, decision) if r.function_call.name == state["pending"]
                     else r.to_function_approval_response(approved) for r in requests]
    else:
        responses = [r.to_function_approval_response(approved) for r in requests]
    return grants, responses


def holds_rule(session: Any) -> bool:
    """Whether the session holds an "always approve" rule of ToolApprovalMiddleware (its `tool_approval` state)."""
    state = session.state.get("tool_approval")
    return bool(isinstance(state, dict) and state.get("rules"))


def answer(af: Any, request: Any, decision: Decision) -> Any:
    """The framework's response to one approval request: an approve marked `always` is
    `create_always_approve_tool_response` (a standing rule for the whole tool, any arguments); anything else the
    plain bool response. The framework has no standing rejection: a deny marked `always` is a plain denial."""
    if decision.always and decision.kind is DecisionKind.approve:
        return af.create_always_approve_tool_response(request, reason=decision.text or None)
    return request.to_function_approval_response(decision.kind is DecisionKind.approve)
