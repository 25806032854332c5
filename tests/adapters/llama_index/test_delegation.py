"""llama_index delegation: a handoff inside one AgentWorkflow pauses; an agent called as a tool never does
(adapters/llama_index/delegation.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

from arena import catalog  # noqa: E402

NAME = "llama_index"

# --- delegation: a handoff inside one AgentWorkflow pauses; an agent called as a tool never does -------------------

DELEGATION = catalog.load_arena("delegation")


def test_a_handoff_delegates_gated_call_pauses_the_run_with_the_agent_named(server):
    """del-06 (approve) and del-07 (deny): the desk calls AgentWorkflow's own handoff tool, `handoff(to_agent,
    reason)` (the one name llama-index gives it); the delegate's gated call waits in the same workflow, so the run
    pauses on it, the pause names the delegate (the store's current_agent_name) and the decision reaches it."""
    from arena.runner import run_items

    items = [DELEGATION.item("del-06"), DELEGATION.item("del-07")]
    results = run_items(catalog.adapters()[NAME].load(), DELEGATION, items, server=server, model="careful",
                        timeout_s=120)
    for r, (agent, tool) in zip(results, [("booking_agent", "book_flight"), ("changes_agent", "cancel_flight")]):
        assert r.status == "passed", (r.item_id, [c for c in r.checks if not c.passed])
        offered = [e.request["tools"] for e in r.trace if e.type == "model_call"]
        assert offered[0] == ["handoff"] and tool in offered[1]  # the desk's request, then the delegate's
        [pause] = [e for e in r.trace if e.type == "suspended"]
        assert [(p["tool"], p["agent"]) for p in pause.pending] == [(tool, agent)]


def test_a_gated_call_inside_an_agent_called_as_a_tool_never_pauses_the_run(server):
    """del-01, run although the `nested` channel is declared unsupported: the booking agent, called through the
    Orchestrator pattern's tool (its body awaits sub_agent.run()), reaches book_flight, whose wait pauses only that
    inner workflow; the outer run never goes idle, so the leg neither suspends nor ends (the item times out) and
    book_flight never runs."""
    from arena.runner import run_items

    entry = catalog.adapters()[NAME]
    assert {c.name: c.kind for c in entry.load().info.channels}["nested"] == "unsupported"
    [r] = run_items(entry.load(), DELEGATION, [DELEGATION.item("del-01")], server=server, model="careful",
                    timeout_s=25)
    asked = [c["name"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []]
    assert asked == ["booking_agent", "search_flights", "seat_map", "book_flight"]
    assert not [e for e in r.trace if e.type in ("suspended", "final")]
    assert "book_flight" not in [e.tool for e in r.trace if e.type == "tool_call"]
    assert any("timed out" in (e.text or "") for e in r.trace if e.type == "error")
