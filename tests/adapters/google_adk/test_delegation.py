"""Delegation: single_turn sub_agents (nested) and transfer_to_agent (handoff), gated inside the delegate; the
two-delegate race declared; AgentTool, which cannot resume a paused delegate."""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.google_adk import GoogleADKAdapter, GoogleADKConfirmAdapter  # noqa: E402
from tests.conftest import wire_slice  # noqa: E402


# --- delegation: single_turn sub_agents (nested) and transfer_to_agent (handoff), gated inside the delegate ----------


def _offered(result) -> set[tuple[str, ...]]:
    return {tuple(e.request["tools"]) for e in result.trace if e.type == "model_call"}


@pytest.mark.parametrize("adapter", ["google_adk", "google_adk_confirm"])
def test_a_delegates_confirmation_pauses_the_run_naming_the_delegate(run_adapter, adapter):
    """del-01: the booking agent is a `mode="single_turn"` sub-agent, which ADK offers the desk as a tool of its
    name; del-06: a `mode="chat"` sub-agent the desk reaches with ADK's transfer_to_agent. Either way the
    delegate's require_confirmation call stops the resumable App with adk_request_confirmation, authored by the
    delegate (PendingRequest.agent), and the confirmation resumes it: book_flight runs once, nothing before."""
    results = {r.item_id: r for r in run_adapter(adapter, profile="careful", arena="delegation",
                                                 items=["del-01", "del-06"], timeout_s=60)}
    assert {i: r.status for i, r in results.items()} == {"del-01": "passed", "del-06": "passed"}
    for r in results.values():
        pause = next(e for e in r.trace if e.type == "suspended")
        assert [(p["tool"], p["agent"]) for p in pause.pending] == [("book_flight", "booking_agent")]
        booked = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_flight"]
        assert len(booked) == 1 and booked[0].leg == 1
    # the single_turn delegate is offered ADK's transfer_to_agent too (measured), besides its own tools
    assert _offered(results["del-01"]) == {("booking_agent", "changes_agent"),
                                           ("transfer_to_agent", "search_flights", "seat_map", "book_flight")}
    assert ("transfer_to_agent",) in _offered(results["del-06"])


def test_two_delegates_in_one_turn_are_not_measured_the_race_declared():
    """Two single_turn delegates in one desk turn run at once in ADK 2.13; the first to ask ends the desk's step and
    ADK cancels the other, before or after its own ask, so what a resume does varies from run to run (the module
    docstring lists the outcomes seen). The adapter declares that as its `multi_nested` channel, unsupported: the
    two-delegate items are not measured on it, and say why; every other delegation item is."""
    spec = catalog.load_arena("delegation")
    for adapter in (GoogleADKAdapter, GoogleADKConfirmAdapter):
        info = adapter.info
        assert info.kind("multi_nested") == "unsupported" and "a race" in info.mechanism("multi_nested")
        items, why = spec.items_for(info, spec.items)
        two = {i.id for i in spec.items if isinstance(i.resume_with[0], list)}
        assert two and two <= set(why) and all("cannot hold two delegates' calls" in why[i] for i in two)
        # del-05: an edit; del-17 to del-20: a desk named after a delegate, and two levels deep (channels not written)
        later = {"del-17", "del-18", "del-19", "del-20"}
        assert later <= set(why) and all("channel" in why[i] for i in later)
        assert {i.id for i in items} == {i.id for i in spec.items} - two - {"del-05"} - later


class _AgentToolDelegates(GoogleADKConfirmAdapter):
    agent_tool = True


def test_agent_tool_cannot_resume_a_paused_delegate(run_adapter, server):
    """The same delegate wrapped in AgentTool(agent=...): it runs in a nested Runner over an InMemorySessionService
    that AgentTool discards, so its confirmation never reaches the run. The desk's model reads ADK's
    "... which AgentTool cannot resume." as the tool's result, the run does not pause and book_flight never runs."""
    [r], requests = wire_slice(server, lambda: run_adapter(_AgentToolDelegates, profile="careful", arena="delegation",
                                                          items=["del-01"], timeout_s=60))
    assert r.legs == 1 and not [e for e in r.trace if e.type == "suspended"]
    assert "book_flight" not in [e.tool for e in r.trace if e.type == "tool_call"]
    desk = [body for body in requests if [t["function"]["name"] for t in body.get("tools") or []] == [
        "booking_agent", "changes_agent"]]
    assert any(m.get("role") == "tool" and "AgentTool cannot resume" in str(m.get("content"))
               for m in desk[-1]["messages"])
