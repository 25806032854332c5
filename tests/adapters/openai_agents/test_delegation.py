"""Delegation: Agent.as_tool (nested) and handoffs, gated inside the delegate."""

from __future__ import annotations

import pytest

pytest.importorskip("agents")

from tests.adapters.openai_agents.conftest import _ResumeInFreshAdapter  # noqa: E402


# --- delegation: Agent.as_tool (nested) and handoffs, gated inside the delegate ------------------------------------


def test_a_delegates_gated_call_pauses_the_whole_run_naming_the_delegate(run_adapter):
    """del-10 (both delegates via Agent.as_tool in one turn), del-07 (a handoff): each delegate is an Agent of its own,
    offered only its tools; its needs_approval call surfaces in the OUTER RunResult.interruptions, and the pause
    names the agent from ToolApprovalItem.agent. After the decisions (routed by call id to the nested run's state),
    each approved call runs once, a denied one never, and no delegate's earlier tool call runs again."""
    results = {r.item_id: r for r in run_adapter("openai_agents", profile="careful", arena="delegation",
                                                 items=["del-07", "del-10"], timeout_s=60)}
    assert {i: r.status for i, r in results.items()} == {"del-07": "passed", "del-10": "passed"}
    pause = next(e for e in results["del-10"].trace if e.type == "suspended")
    assert [(p["tool"], p["agent"]) for p in pause.pending] == [("book_flight", "booking_agent"),
                                                                ("cancel_flight", "changes_agent")]
    offered = {tuple(e.request["tools"]) for e in results["del-10"].trace if e.type == "model_call"}
    assert offered == {("booking_agent", "changes_agent"), ("search_flights", "seat_map", "book_flight"),
                       ("get_booking", "cancel_flight")}
    ran = [e.tool for e in results["del-10"].trace if e.type == "tool_call"]
    assert sorted(ran) == ["book_flight", "cancel_flight", "get_booking", "search_flights", "seat_map"]
    handed = results["del-07"].trace
    first = next(e for e in handed if e.type == "model_call")
    assert first.request["tools"] == ["transfer_to_booking_agent", "transfer_to_changes_agent"]
    assert [(p["tool"], p["agent"]) for p in next(e for e in handed if e.type == "suspended").pending] == [
        ("cancel_flight", "changes_agent")]
    assert not [e for e in handed if e.type == "tool_call" and e.tool == "cancel_flight"]


def test_nested_approvals_resume_from_the_serialised_state_in_a_fresh_adapter(run_adapter):
    """del-11: the outer RunState.to_string() carries each nested agent-tool run's own state (`agent_run_state`), so
    a brand-new adapter (new Agents) restores both delegates' pauses with RunState.from_string(desk, s) and routes
    approve / reject to each by call id."""
    states: list[str] = []

    class Fresh(_ResumeInFreshAdapter):
        async def resume(self, state, decision, ctx):
            states.append(state)
            return await super().resume(state, decision, ctx)

    [r] = run_adapter(Fresh, profile="careful", arena="delegation", items=["del-11"])
    assert r.status == "passed", [c for c in r.checks if not c.passed]
    assert len(states) == 1 and "agent_run_state" in states[0]
    assert sorted(e.tool for e in r.trace if e.type == "tool_call" and e.tool in ("book_flight", "cancel_flight")) == [
        "book_flight"]
