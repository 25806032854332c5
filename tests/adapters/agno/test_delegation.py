"""Delegation: a Team whose members hold the gated tools (coordinate mode for `via: tool`, route for `via: handoff`)."""

from __future__ import annotations

import asyncio
import os

import pytest

pytest.importorskip("agno")

from arena import catalog  # noqa: E402
from tests.adapters.agno.conftest import adapter_module, leg_context  # noqa: E402


def test_members_gated_calls_pause_the_team_run_naming_each_member(server):
    """del-11 (both delegates in one turn, the booking approved and the cancellation denied): the leader is offered
    agno's delegate_task_to_member alone, each member its own tools; both members' gated calls pause the one Team
    run together, each pending call named by agno's `RunRequirement.member_agent_name`; the resume routes each
    decision to its member (book_flight runs once, cancel_flight never, the denial's note reaches the changes
    agent) and the leader is sent the members' results."""
    from arena.runner import run_items

    spec = catalog.load_arena("delegation")
    [r] = run_items(adapter_module().AgnoAdapter, spec, [spec.item("del-11")], server=server, model="careful",
                    timeout_s=120)
    offered = [sorted(e.request["tools"]) for e in r.trace if e.type == "model_call"]
    assert ["delegate_task_to_member"] in offered
    assert all("book_flight" not in t or "cancel_flight" not in t for t in offered)  # each member its own tools
    [pause] = [e for e in r.trace if e.type == "suspended"]
    assert sorted((p["tool"], p["agent"]) for p in pause.pending) == [
        ("book_flight", "booking_agent"), ("cancel_flight", "changes_agent")]
    ran = [e.tool for e in r.trace if e.type == "tool_call" and e.tool in ("book_flight", "cancel_flight")]
    assert ran == ["book_flight"]
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed", {n: c.reason for n, c in checks.items() if not c.passed}
    assert checks["denial_reached_inner"].passed and checks["outer_learned_outcome"].passed


def test_handoff_items_build_a_route_mode_team_and_tool_items_a_coordinate_one(tmp_path):
    """`via: handoff` is agno's router (TeamMode.route, the user's message verbatim to the member), `via: tool` its
    default coordinate mode; every member's agno id is its AgentSpec name, the leader holds no harness tool, and the
    gated tools are requires_confirmation on the member that holds them."""
    from agno.team import TeamMode

    spec = catalog.load_arena("delegation")
    for item_id, mode in (("del-06", TeamMode.route), ("del-01", TeamMode.coordinate)):
        item = spec.item(item_id)
        ctx = leg_context(spec, item_id, str(tmp_path / item_id)).model_copy(update={"extra": spec.leg_context(item)})
        os.makedirs(ctx.workdir)
        adapter = adapter_module().AgnoAdapter()
        team = adapter._build(ctx)
        assert team.mode is mode and team.determine_input_for_members is (mode is TeamMode.coordinate)
        assert not team.tools
        held = {m.id: {f.name: bool(f.requires_confirmation) for f in m.tools} for m in team.members}
        assert held == {"booking_agent": {"search_flights": False, "seat_map": False, "book_flight": True},
                        "changes_agent": {"get_booking": False, "cancel_flight": True}}
        asyncio.run(adapter.aclose())
