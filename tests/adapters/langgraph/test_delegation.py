"""Delegation on LangGraph: delegates as create_agent graphs, called inside a tool (nested) or as handoff nodes; a
delegate's interrupt stops the whole graph and names its agent."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.checkpoint.sqlite")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.langgraph import LangGraphAdapter  # noqa: E402
from arena.model.script import Draw, bind  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402

# --- delegation: delegates as create_agent graphs, called inside a tool (nested) or as handoff nodes -----------------


DELEGATION = catalog.load_arena("delegation")
DEL_ITEMS = {i.id: i for i in DELEGATION.items}


def _delegation_first_leg(server, tmp_path, item_id: str, adapter_cls=LangGraphAdapter):
    """Leg 0 of a delegation item, directly: the leg's result, what ran, and the checkpointer's namespaces."""
    item = DEL_ITEMS[item_id]
    recorder = TraceRecorder()
    (tmp_path / "state").mkdir()
    backend = DELEGATION.backend(item, tmp_path / "state")
    executor = ToolExecutor(DELEGATION.tools, DELEGATION.functions, recorder, backend)
    model = server.open_item(recorder, "careful", bind(DELEGATION.all_policies, Draw(item.id, 1, 0))).model
    ctx = LegContext(item=item, instructions=DELEGATION.instructions, model=model, tools=LocalToolBox(executor),
                     workdir=str(tmp_path), extra=DELEGATION.leg_context(item))

    async def leg():
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        adapter = adapter_cls()
        try:
            result = await adapter.start(ctx)
        finally:
            await adapter.aclose()
        assert result.status == "suspended", (result.status, result.error, result.final_text)
        async with AsyncSqliteSaver.from_conn_string(result.state["db"]) as saver:
            spaces = {t.config["configurable"]["checkpoint_ns"]
                      async for t in saver.alist({"configurable": {"thread_id": result.state["thread_id"]}})}
        return result, spaces

    result, spaces = asyncio.run(leg())
    return result, [e.tool for e in recorder.events if e.type == "tool_call"], spaces


def test_nested_delegates_gates_pause_the_whole_graph_each_named(server, tmp_path):
    """del-10: the desk calls both delegates as tools in one turn; each delegate's graph, run inside its tool, reaches
    its own HumanInTheLoopMiddleware interrupt, and the top graph stops with both (one interrupt each, resumed by
    id). Their namespaces are the desk's `tools` tasks (they do not name the agent): the agent is the `name`
    create_agent put on the AIMessage that asked. No gated call ran."""
    result, ran, spaces = _delegation_first_leg(server, tmp_path, "del-10")
    assert result.status == "suspended"
    assert sorted((p.tool, p.agent) for p in result.all_pending) == [
        ("book_flight", "booking_agent"), ("cancel_flight", "changes_agent")]
    assert all(p.call_id for p in result.all_pending)
    held = result.state["pause"]["interrupts"]
    assert result.state["pause"]["mode"] == "delegated" and len(held) == 2
    assert all(h["ns"].startswith("tools:") and h["kind"] == "batched" for h in held.values())
    assert {h["ns"] for h in held.values()} <= spaces
    assert "book_flight" not in ran and "cancel_flight" not in ran


def test_handoff_delegates_gate_pauses_the_parent_graph_in_its_node(server, tmp_path):
    """del-06: the desk's transfer_to_booking_agent returns Command(goto=..., graph=Command.PARENT); the booking
    agent's node (its create_agent subgraph) reaches its gate, and the parent graph stops there: the interrupt's
    namespace is that node's, which names the agent."""
    result, ran, _ = _delegation_first_leg(server, tmp_path, "del-06")
    assert result.status == "suspended"
    assert (result.pending.tool, result.pending.agent) == ("book_flight", "booking_agent")
    (held,) = result.state["pause"]["interrupts"].values()
    assert held["ns"].startswith("booking_agent:")
    assert ran == ["search_flights", "seat_map"]


def test_delegation_items_pass_with_the_delegates_resumed_from_their_checkpoints(run_adapter):
    """del-10 (nested, both approved) and del-07 (handoff, denied): each decision reached its
    own delegate's call, and resuming did not re-run any earlier step of a delegate: LangGraph re-runs the desk's
    tool (or re-enters the handoff node) from its start, and the delegate's graph goes on from its checkpoint."""
    results = run_adapter("langgraph", profile="careful", arena="delegation", items=["del-10", "del-07"],
                          timeout_s=90)
    for r in results:
        checks = {c.name: c for c in r.checks}
        assert r.status == "passed", (r.item_id, [c.reason for c in r.checks if not c.passed])
        assert checks["inner_rerun_on_resume"].passed and checks["nested_decision_routed"].passed
