"""The human's decision as strands' resume input: a list of interruptResponse's, one per decision, each under the
interrupt id of the call it names; and back, a held call's decision from its interrupt's response."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet


def responses(state: dict[str, Any], decision: Decision | DecisionSet) -> list[dict[str, Any]]:
    """The interruptResponse's a resume sends: each decision under the interrupt id of the call it names (a
    DecisionSet's by call id; a decision for a call the pause does not hold under that call id, a decision without
    one and a single decision under the first held interrupt)."""
    held: dict[str, dict[str, Any]] = state["interrupts"]  # interrupt id -> {"kind", "call_id"}
    by_call = {v["call_id"]: k for k, v in held.items()}
    first = next(iter(held))
    if isinstance(decision, DecisionSet):
        pairs = [(by_call.get(d.call_id, d.call_id) if d.call_id is not None else first, d)
                 for d in decision.decisions]
    else:
        pairs = [(first, decision)]
    return [{"interruptResponse": {"interruptId": iid, "response": response(held.get(iid, {}).get("kind"), d)}}
            for iid, d in pairs]


def response(kind: str | None, decision: Decision) -> Any:
    """The interrupt's response: the decision's text for the approval tool, the decision as JSON for a held
    call; a null decision is None (strands reads None as no response)."""
    if decision.kind is DecisionKind.null:
        return None
    if kind == "ask":
        return decision.as_text()
    return decision.model_dump(mode="json")


def decision_of(response: Any) -> Decision:
    """A held call's decision from its interrupt response (the JSON `response` sent)."""
    if isinstance(response, dict):
        return Decision.model_validate(response)
    return Decision(kind=DecisionKind.deny, text=str(response))
