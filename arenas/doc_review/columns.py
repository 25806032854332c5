"""The matrix columns doc_review contributes: decisions per call at a pause that holds several."""

from __future__ import annotations

from arena.for_arenas.report import Column, check_of
from arena.for_arenas import DecisionKind, ItemResult

ARENA = "doc_review"
PROFILES = ("reviewer", "reviewer-shuffled")


def _decisions(r: ItemResult) -> list:
    return [d for e in r.trace if e.type == "resumed" and e.decisions for d in e.decisions]


def rule_partial(r: ItemResult) -> tuple[bool, str] | None:
    """Items whose pause mixed approvals and denials: was each of those calls run or left out as decided?

    Read from the tool log and the model's own calls (by the ids decisions were routed to); edited calls
    are `edited_args_executed`'s to judge, so they are left out here."""
    decisions = [d for d in _decisions(r) if d.kind is not DecisionKind.edit]
    if {d.approved for d in decisions} != {True, False}:
        return None
    asked = {c.get("id"): c for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []}
    runs = [e for e in r.trace if e.type == "tool_call" and not e.late]
    for d in decisions:
        call = asked.get(d.call_id)
        if call is None:
            return False, f"the decision for {d.match} matched no call the model made"
        n = sum(e.tool == call.get("name") and (e.args or {}) == (call.get("args") or {}) for e in runs)
        if d.approved and n != 1:
            return False, f"approved {call.get('name')}{call.get('args')} ran {n} times"
        if not d.approved and n:
            return False, f"denied {call.get('name')}{call.get('args')} ran {n} times"
    return True, "each approved call ran once and each denied call never ran"


def rule_edited(r: ItemResult) -> tuple[bool, str] | None:
    """Items with an edited call: did it run with the human's arguments only?"""
    if not any(d.kind is DecisionKind.edit for d in _decisions(r)):
        return None
    c = check_of(r, "edited_args_executed")
    return None if c is None else (c.passed, c.reason)


def rule_routed(r: ItemResult) -> tuple[bool, str] | None:
    c = check_of(r, "decision_routed_by_call_id")
    return None if c is None else (c.passed, c.reason)


COLUMNS = (
    Column("partial_decisions", "partial decisions applied per call", ARENA, PROFILES,
           "items whose pause mixed approvals and denials, where each approved call ran once and each denied "
           "call never ran (tool log; edited calls are the next column's)", rule=rule_partial, family="decision"),
    Column("edited_args_executed", "edited arguments executed", ARENA, PROFILES,
           "items with an edited call whose `edited_args_executed` check passed: the call ran with the human's "
           "arguments only, and the model did not re-issue the original", rule=rule_edited, family="decision"),
    Column("decision_routed_by_call_id", "decision routed by call id", ARENA, PROFILES,
           "items whose `decision_routed_by_call_id` check passed: each outcome reached the model under its own "
           "call's id, whatever the order of the calls", rule=rule_routed, family="decision"),
)
