"""The human's Decision (or DecisionSet) as LangGraph's resume input: `Command(resume=...)` for the pause the state
recorded (the approval tool's decision, the middleware's `{"decisions": [...]}` in batched mode, one answer per
interrupt id in per-call mode or among delegates), with input added while paused as the Command's `update`."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet, kit


def _gate_answer(decision: Decision, name: str | None) -> dict[str, Any] | None:
    """One decision as HumanInTheLoopMiddleware reads it; a null decision is None, passed on as it is."""
    if kit.is_null(decision):
        return None
    if decision.kind is DecisionKind.edit and decision.args is not None:
        return {"type": "edit", "edited_action": {"name": name, "args": decision.args}}
    if decision.approved:
        return {"type": "approve"}  # the middleware's approve carries no message
    # a deny; an answer is not a decision the gate knows, so it rejects too, with the text
    return {"type": "reject", "message": decision.as_text()}


def resume_command(pause: dict[str, Any], decision: Decision | DecisionSet,
                   notes: list[dict[str, str]] | None = None) -> Any:
    """The resume for the pause the state recorded (`_resume_value`); input added while paused (`notes`, user
    messages) goes in the same Command as its `update`, which LangGraph applies to the thread as it resumes."""
    from langgraph.types import Command

    if notes:
        return Command(resume=_resume_value(pause, decision), update={"messages": list(notes)})
    return Command(resume=_resume_value(pause, decision))


def _resume_value(pause: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """The resume value for the pause the state recorded, built from the decisions as given.

    Per-call interrupts are answered by their interrupt ids, which the state kept (a decision naming a
    call the pause did not hold goes under that call id); the batched interrupt by its `decisions` list
    in the held calls' order (a held call without a decision leaves a gap: the list is shorter, and a
    decision for a call not held is appended). Nothing is checked against the checkpoint first: what
    LangGraph does with a malformed, repeated or stale resume is what resume_safety measures.
    """
    mode = pause.get("mode", "value")
    names = pause.get("names", {})
    if mode == "delegated":  # each delegate's interrupt answered by its id (a dict of interrupt ids: a resume map)
        return {iid: answer for iid, held in pause["interrupts"].items()
                if (answer := _delegated_answer(held, decision)) is not None or held["kind"] == "value"}
    if mode == "per_call":
        ids = pause["interrupts"]
        if isinstance(decision, DecisionSet):
            return {ids.get(d.call_id, d.call_id): _gate_answer(d, names.get(d.call_id)) for d in decision.decisions}
        return {i: _gate_answer(decision, names.get(c)) for c, i in ids.items()}
    if mode == "batched":
        if isinstance(decision, DecisionSet):
            ordered = [d for c in pause["calls"] if (d := decision.for_call(c)) is not None]
            ordered += [d for d in decision.decisions if d.call_id not in pause["calls"]]
            return {"decisions": [_gate_answer(d, names.get(d.call_id)) for d in ordered]}
        return {"decisions": [_gate_answer(decision, names.get(c)) for c in pause["calls"]]}
    # not a gate: the one decision, as the approval tool reads it
    decision = kit.first_decision(decision)
    return None if kit.is_null(decision) else decision.model_dump(mode="json")


def _delegated_answer(held: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """One delegate's interrupt answered: the decision for each call it holds (a DecisionSet's by call id)."""
    def pick(call_id: str | None) -> Decision | None:
        return kit.decision_for(decision, call_id)

    calls, names = held["calls"], held["names"]
    if held["kind"] == "per_call":
        d = pick(calls[0])
        return None if d is None else _gate_answer(d, names.get(calls[0]))
    if held["kind"] == "batched":
        decided = [(c, d) for c in calls if (d := pick(c)) is not None]
        return {"decisions": [_gate_answer(d, names.get(c)) for c, d in decided]} if decided else None
    d = pick(calls[0])
    return None if d is None or d.kind is DecisionKind.null else d.model_dump(mode="json")
