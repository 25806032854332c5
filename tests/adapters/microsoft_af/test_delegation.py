"""Microsoft Agent Framework delegation: a delegate called through `Agent.as_tool()` fails closed on its gated call
in the installed release (adapters/microsoft_af/delegation.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena_builtins.adapters.microsoft_af import MicrosoftAFAdapter  # noqa: E402


# --- delegation: a delegate called with Agent.as_tool(); no handoff in agent-framework-core -------------------------


def test_as_tool_fails_closed_on_a_delegates_gated_call_in_the_installed_release():
    """The installed `as_tool` raises on a sub-agent's unresolved function approval instead of propagating it
    (microsoft/agent-framework#4963, resolved by PR #8527 "fail closed"; #8442, which resumed it, was not merged),
    and the handoff builder is not part of agent-framework-core (no handoff channel until its package is installed)."""
    import importlib.util
    import inspect

    from agent_framework import Agent

    source = inspect.getsource(Agent.as_tool)
    assert "cannot continue because its sub-agent requested approval" in source
    assert "raise ToolExecutionException(approval_error)" in source
    assert importlib.util.find_spec("agent_framework_orchestrations") is None
    info = MicrosoftAFAdapter.info
    assert info.kind("nested") == "native" and "Agent.as_tool" in info.mechanism("nested")
    assert info.channel("handoff") is None


def test_a_delegates_gated_call_does_not_pause_the_run_and_never_runs(run_adapter):
    """del-02 (one delegate), del-10 (both in one turn): each delegate's own Agent, reached through `as_tool`, is
    offered its own tools and calls its gated tool; the framework holds that call (it never runs) but does not pause
    the run: the wrapper raises, and the desk is sent "Error: Function failed." as each delegate's result and
    finishes. Nothing is there to decide."""
    results = {r.item_id: r for r in run_adapter("microsoft_af", profile="careful", arena="delegation",
                                                 items=["del-02", "del-10"], timeout_s=60)}
    for item_id, gated in (("del-02", {"book_flight"}), ("del-10", {"book_flight", "cancel_flight"})):
        trace = results[item_id].trace
        assert not any(e.type == "suspended" for e in trace) and trace[-1].type in ("final", "state"), item_id
        assert not [e.tool for e in trace if e.type == "tool_call" and e.tool in ("book_flight", "cancel_flight")]
        models = [e for e in trace if e.type == "model_call"]
        offered = [tuple(e.request["tools"]) for e in models]
        desk = ("booking_agent", "changes_agent")
        assert offered[0] == offered[-1] == desk  # the desk offers no airline tool; each delegate only its own
        assert set(offered) <= {desk, ("search_flights", "seat_map", "book_flight"), ("get_booking", "cancel_flight")}
        asked = {c["name"] for e in models for c in (e.response or {}).get("tool_calls") or []}
        assert gated <= asked, item_id  # each delegate's model asked for its gated call
        desk_results = [m.get("text") for m in models[-1].request["new"] if m.get("role") == "tool"]
        assert desk_results == ["Error: Function failed."] * len(gated), item_id
