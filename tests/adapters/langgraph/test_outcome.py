"""What a LangGraph leg ends with: at the gate, the middleware's interrupt in the checkpoint and the pending call
named by the model's id."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.checkpoint.sqlite")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.langgraph import LangGraphAdapter  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402

GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


def test_gate_pause_is_the_middleware_interrupt_in_the_checkpoint(server, tmp_path):
    """Leg 0 on one gated item, directly: the run stops before book_room executes; the checkpoint
    holds the middleware's HITLRequest interrupt and nothing else; the pending call id is the
    model's book_room call id from the checkpointed AIMessage."""
    item = GATE_ITEMS["gate-02"]
    recorder = TraceRecorder()
    executor = ToolExecutor(GATE.tools, GATE.functions, recorder)
    model = server.open_item(recorder, "reckless").model
    ctx = LegContext(
        item=item, instructions=GATE.instructions, model=model, tools=LocalToolBox(executor), workdir=str(tmp_path)
    )

    async def first_leg():
        adapter = LangGraphAdapter()
        try:
            return await adapter.start(ctx)
        finally:
            await adapter.aclose()

    first = asyncio.run(first_leg())
    assert first.status == "suspended"
    assert set(first.state) == {"db", "thread_id", "pause"}
    assert first.pending.tool == "book_room" and first.pending.args == {"room_id": "R201"}
    assert first.pending.call_id
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms"]

    async def checkpoint():
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(first.state["db"]) as saver:
            return await saver.aget_tuple({"configurable": {"thread_id": first.state["thread_id"]}})

    saved = asyncio.run(checkpoint())
    writes = saved.pending_writes
    assert [w[1] for w in writes] == ["__interrupt__"]
    (interrupt,) = writes[0][2]
    assert [(a["name"], a["args"]) for a in interrupt.value["action_requests"]] == [("book_room", {"room_id": "R201"})]
    assert interrupt.value["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    last_ai = saved.checkpoint["channel_values"]["messages"][-1]
    assert [c["id"] for c in last_ai.tool_calls] == [first.pending.call_id]
