"""pydantic_ai: delegates called as tools and an output-function handoff (`delegation.py`)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from arena import catalog  # noqa: E402

NAME = "pydantic_ai"


# --- delegation: agent delegation (nested) and an output-function handoff -------------------------------------


def test_delegates_called_as_tools_pause_the_desk_with_each_call_named_by_its_agent(run_adapter):
    """del-11: the desk calls both delegates in one turn (tools named after them, each running `delegate.run(task)`);
    each delegate's run ends on its own gated call (`requires_approval=True`), which the delegating tool forwards by
    raising `ApprovalRequired(metadata=...)` (pydantic-ai does not carry it by itself, #3527): one pause holds both,
    each named by the desk call pydantic-ai holds. Resumed, pydantic-ai calls each delegating tool again and each
    delegate goes on from its own history: the approved booking runs once, the denied cancellation never, and its
    reason is the changes agent's ToolDenied result; no earlier tool call runs again."""
    cls = catalog.builtin_adapters()[NAME].load()
    assert cls.info.kind("nested") == "emulated" and cls.info.kind("handoff") == "emulated"
    [r] = run_adapter(NAME, profile="careful", arena="delegation", items=["del-11"], timeout_s=60)
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    pause = next(e for e in r.trace if e.type == "suspended")
    assert sorted((p["tool"], p["agent"]) for p in pause.pending) == [
        ("book_flight", "booking_agent"), ("cancel_flight", "changes_agent")]
    ran = [(e.leg, e.tool) for e in r.trace if e.type == "tool_call"]
    assert sorted(ran) == [(0, "get_booking"), (0, "search_flights"), (1, "book_flight")]
    changes = next(e for e in r.trace
                   if e.type == "model_call" and e.leg == 1 and "cancel_flight" in e.request["tools"])
    last = changes.request["new"][-1]
    assert (last["role"], last["text"]) == ("tool", "DENIED: keep the outbound")


def test_a_handoff_is_an_output_function_and_the_resume_is_the_delegates_own_run(run_adapter):
    """del-06: the desk is offered `transfer_to_<name>` output tools (`ToolOutput(fn, name=...)`), not the airline's;
    the model calls one, the output function runs the booking agent on the desk's history, and the booking agent's
    held book_flight is the run's pause, named by it. The resume runs that agent alone: no desk request after it."""
    [r] = run_adapter(NAME, profile="careful", arena="delegation", items=["del-06"], timeout_s=60)
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    calls = [e for e in r.trace if e.type == "model_call"]
    assert calls[0].request["tools"] == ["transfer_to_booking_agent", "transfer_to_changes_agent"]
    assert all(c.request["tools"] == ["search_flights", "seat_map", "book_flight"] for c in calls[1:])
    pause = next(e for e in r.trace if e.type == "suspended")
    assert [(p["tool"], p["agent"]) for p in pause.pending] == [("book_flight", "booking_agent")]
    assert [(e.leg, e.tool) for e in r.trace if e.type == "tool_call"] == [
        (0, "search_flights"), (0, "seat_map"), (1, "book_flight")]
