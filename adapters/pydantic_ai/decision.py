"""The human's `Decision` / `DecisionSet` as pydantic-ai's resume input, `DeferredToolResults`: for the run's own
deferred calls, and for the calls held inside delegates called as tools (their verdicts carried in the desk's
`DeferredToolResults.metadata`, read back by the delegating tool)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet, kit


def deferred_results(state: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """The `DeferredToolResults` that answer the paused run's deferred call(s) with the decision."""
    from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied

    call_id = state["call_id"]
    if isinstance(decision, DecisionSet):
        # One answer per decision, keyed by the call id it names, as given: a held call without one gets
        # none, a decision naming a call that is not held is passed on, and a null decision is None.
        # What pydantic-ai does with an incomplete or malformed set is what resume_safety measures.
        verdicts: dict[str, Any] = {}
        for d in decision.decisions:
            key = d.call_id if d.call_id is not None else call_id
            if d.kind is DecisionKind.edit and d.args is not None:
                verdicts[key] = ToolApproved(override_args=d.args)
            elif d.kind is DecisionKind.null:
                verdicts[key] = None
            else:
                verdicts[key] = True if d.approved else ToolDenied(message=d.as_text())
        results = DeferredToolResults(approvals=verdicts)
    elif state.get("kind", "question") == "approval":
        # A gated tool call: approved, pydantic-ai itself executes the held call; otherwise it never
        # runs and ToolDenied's message becomes its tool result (what the model reads).
        verdict = True if decision.approved else ToolDenied(message=decision.as_text())
        results = DeferredToolResults(approvals={call_id: verdict})
    else:  # the approval tool: the decision is its result
        results = DeferredToolResults(calls={call_id: decision.as_text()})
    return results


def as_verdict(decision: Decision | None) -> dict[str, Any] | None:
    """A human's decision on one of a delegate's held calls, as JSON (it travels in `DeferredToolResults.metadata`)."""
    if decision is None:
        return None
    return {"kind": decision.kind_name, "approved": decision.approved, "text": decision.as_text(),
            "args": decision.args if decision.kind is DecisionKind.edit else None}


def nested_results(state: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """The desk's `DeferredToolResults` at a pause inside delegates: each desk call of a delegate approved (the glue that
    makes pydantic-ai call the delegating tool again), with the human's verdicts on that delegate's own held calls in
    `metadata[desk call id]`, which the tool reads as `ctx.tool_call_metadata`. A held call the decisions leave out
    gets no verdict (what pydantic-ai then does with the delegate's run is what the arena records)."""
    from pydantic_ai import DeferredToolResults

    approvals: dict[str, Any] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for outer, held in state["delegated"].items():
        verdicts = {}
        for call in held["calls"]:
            mine = kit.decision_for(decision, call["call_id"])
            if mine is not None:
                verdicts[call["call_id"]] = as_verdict(mine)
        approvals[outer] = True
        metadata[outer] = {**held, "decisions": verdicts}
    return DeferredToolResults(approvals=approvals, metadata=metadata)


def delegate_results(held: dict[str, Any]) -> Any:
    """A delegate's own `DeferredToolResults` from the verdicts its delegating call carried: a gated call approved
    (`True`, or `ToolApproved(override_args=...)` for an edit) or `ToolDenied(message=decision text)`; an approval
    tool's question (a deferred call) answered with the decision text."""
    from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied

    approvals: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    kinds = {c["call_id"]: c.get("kind", "approval") for c in held["calls"]}
    for call_id, v in (held.get("decisions") or {}).items():
        if kinds.get(call_id) == "question":
            calls[call_id] = v["text"] if v is not None else None
        elif v is None or v["kind"] == DecisionKind.null.value:
            approvals[call_id] = None
        elif v["args"] is not None:
            approvals[call_id] = ToolApproved(override_args=v["args"])
        else:
            approvals[call_id] = True if v["approved"] else ToolDenied(message=v["text"])
    return DeferredToolResults(approvals=approvals, calls=calls)
