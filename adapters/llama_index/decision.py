"""A Decision / DecisionSet as llama-index's resume input: one HumanResponseEvent per decision, keyed by the call id
it answers (the waiter's requirement), and the decision a waiting tool body reads back from the event."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet, PendingRequest


def decision_of(event: Any) -> Decision:
    raw = event.get("decision")
    return Decision.model_validate(raw) if raw else Decision(kind=DecisionKind.null)


def response_events(li: dict[str, Any], decision: Decision | DecisionSet, pending: list[PendingRequest]) -> list[Any]:
    """The HumanResponseEvents a resume sends once the restored run is idle: exactly the decisions given."""
    if isinstance(decision, DecisionSet):
        # exactly the decisions given, each under the call id it names (one the pause does not hold too)
        given = [(d.call_id if d.call_id is not None else pending[0].call_id, d) for d in decision.decisions]
    else:
        given = [(pending[0].call_id, decision)]
    return [li["HumanResponseEvent"](response=d.as_text(), call_id=call_id, decision=d.model_dump(mode="json"))
            for call_id, d in given]
