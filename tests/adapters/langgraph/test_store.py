"""Where the LangGraph adapter keeps a paused thread: the AsyncSqliteSaver file a new process resumes from (the
checkpoint's pending writes), and with `--store` LangGraph's AsyncPostgresSaver on the item's own database (no
Redis checkpointer for this server)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

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

APPROVAL = "request_approval"
ROOT = Path(__file__).resolve().parents[3]
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}


def _tools(events) -> list[tuple]:
    """(type, tool) of a leg's recorded events but the model calls."""
    return [(e.type, e.tool) for e in events if e.type != "model_call"]


# --- resume from the persisted checkpoint, in a new process ------------------------------------------

_RESUME_IN_NEW_PROCESS = """
import asyncio, json, os, sys
from arena import catalog
from arena_builtins.adapters.langgraph import LangGraphAdapter
from arena.tools.box import RemoteToolBox
from arena.types import Decision, LegContext, ModelConfig

spec = catalog.load_arena("human_in_the_loop")

async def resume(req):
    ctx = LegContext(
        item=spec.item(req["item"]), instructions=spec.instructions,
        model=ModelConfig(name=req["profile"], base_url=req["base_url"], api_key="arena-local"),
        tools=RemoteToolBox(req["endpoint"], spec.tools), workdir=req["workdir"],
    )
    adapter = LangGraphAdapter()
    try:
        return await adapter.resume(req["state"], Decision.model_validate(req["decision"]), ctx)
    finally:
        await adapter.aclose()

out = [asyncio.run(resume(req)).model_dump(mode="json") for req in json.loads(sys.argv[1])]
print(json.dumps({"pid": os.getpid(), "results": out}))
"""


# The eager cases: hitl-05 (Thursday) gets book_room first in the turn, hitl-07 (Monday) second.
NEW_PROCESS_CASES = [
    ("hitl-02", "scripted"), ("hitl-03", "scripted"), ("hitl-05", "scripted-eager"), ("hitl-07", "scripted-eager"),
]


async def _pending_writes(state):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(state["db"]) as saver:
        saved = await saver.aget_tuple({"configurable": {"thread_id": state["thread_id"]}})
    assert saved is not None
    return saved.pending_writes


@pytest.fixture(scope="module")
def new_process(server, tmp_path_factory):
    """Leg 0 of each case in this process; leg 1 in ONE fresh Python process given only JSON state.

    Returns {item_id: (first LegResult, checkpoint pending writes, resumed result, leg-0 events,
    leg-1 events)}; the events are all the item's recorder saw, model calls included.
    """
    cases = {}
    requests = []
    endpoints = []
    for item_id, profile in NEW_PROCESS_CASES:
        item = ITEMS[item_id]
        recorder = TraceRecorder()
        executor = ToolExecutor(SPEC.tools, SPEC.functions, recorder)
        workdir = str(tmp_path_factory.mktemp(f"lg-{item_id}"))
        model = server.open_item(recorder, profile).model
        ctx = LegContext(
            item=item, instructions=SPEC.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
        )

        async def first_leg(ctx=ctx):
            adapter = LangGraphAdapter()
            try:
                return await adapter.start(ctx)
            finally:
                await adapter.aclose()

        first = asyncio.run(first_leg())
        assert first.status == "suspended", (item_id, first)
        state = json.loads(json.dumps(first.state))  # plain JSON: all the new process gets
        assert set(state) == {"db", "thread_id", "pause"}
        assert Path(state["db"]).is_file() and Path(state["db"]).parent == Path(workdir)
        endpoint = server.register(executor)
        endpoints.append(endpoint)
        requests.append({
            "item": item_id, "profile": profile, "base_url": model.base_url, "endpoint": endpoint,
            "workdir": workdir, "state": state, "decision": item.resume_with[0].model_dump(mode="json"),
        })
        cases[item_id] = (first, asyncio.run(_pending_writes(state)), recorder, len(recorder.events))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RESUME_IN_NEW_PROCESS, json.dumps(requests)],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for endpoint in endpoints:
            server.unregister(endpoint)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pid"] != os.getpid()
    return {
        item_id: (first, writes, result, recorder.events[:n], recorder.events[n:])
        for (item_id, (first, writes, recorder, n)), result in zip(cases.items(), out["results"])
    }


@pytest.mark.parametrize("item_id", ["hitl-02", "hitl-03"])
def test_resume_in_new_process_from_sqlite_checkpoint(new_process, item_id):
    first, pending_writes, result, leg0, leg1 = new_process[item_id]
    assert first.pending.tool == APPROVAL and first.pending.call_id
    # The checkpoint holds the interrupt, and nothing else from the approval turn.
    assert [w[1] for w in pending_writes] == ["__interrupt__"]
    assert _tools(leg0) == [("tool_call", "search_rooms")]
    assert result["status"] == "finished"
    decision = ITEMS[item_id].resume_with[0]
    # The new process talked to the model on the item's own route: the decision was its first new input.
    resumed_calls = [e for e in leg1 if e.type == "model_call"]
    assert resumed_calls and resumed_calls[0].request["new"][-1]["text"] == decision.as_text()
    executed = [e for e in leg1 if e.type == "tool_call"]
    if decision.approved:
        assert [(e.tool, e.result.split(" ")[0]) for e in executed] == [("book_room", "BOOKED")]
        assert result["final_text"].startswith("Done: BOOKED")
    else:
        assert executed == []
        assert "denied" in result["final_text"] and decision.text in result["final_text"]


@pytest.mark.parametrize("item_id, turn", [
    ("hitl-05", ["book_room", APPROVAL]),
    ("hitl-07", [APPROVAL, "book_room"]),
])
def test_eager_checkpoint_keeps_executed_sibling_as_pending_write(new_process, item_id, turn):
    """The mechanism behind the eager trace: after the interrupt the checkpoint already holds
    book_room's ToolMessage as a pending write; the new process resumes from it without re-running
    book_room, so the tool log shows it exactly once, before the pause. The same whichever of the
    two calls the model's turn lists first."""
    first, pending_writes, result, leg0, leg1 = new_process[item_id]
    asked = [e for e in leg0 if e.type == "model_call"][-1]
    assert [c["name"] for c in asked.response["tool_calls"]] == turn
    assert _tools(leg0) == [("tool_call", "search_rooms"), ("tool_call", "book_room")]
    messages = [m for _, channel, value in pending_writes if channel == "messages" for m in value]
    assert [(m.name, m.content.split(" ")[0]) for m in messages] == [("book_room", "BOOKED")]
    assert "__interrupt__" in [w[1] for w in pending_writes]
    assert _tools(leg1) == []  # nothing executed on resume
    assert [e for e in leg1 if e.type == "model_call"]  # only the model was asked again
    assert result["status"] == "finished" and result["final_text"].startswith("Done: BOOKED")


# --- stores: LangGraph's own AsyncPostgresSaver (`--store postgres`); no Redis checkpointer for this server ------


@pytest.mark.usefixtures("store_servers")
def test_store_postgres_durable_state_passes_on_async_postgres_saver(tmp_path):
    """durable_state on PostgreSQL: every leg in a new process reopens the thread from LangGraph's AsyncPostgresSaver
    on the item's own database (durable-11 with that server stopped and restarted during the pause); all pass."""
    import arena

    (run,) = arena.evaluate("durable_state", ["langgraph"], store="postgres", out=tmp_path)
    assert run.summary is not None and run.summary.passed == run.summary.items == 12, \
        [(r.item_id, [c.reason for c in r.checks if not c.passed]) for r in run.results if r.status != "passed"]
    assert run.meta["arena"] == "durable_state@postgres"
    assert run.meta["store"]["kind"] == "postgres"
    assert "AsyncPostgresSaver" in run.meta["store"]["mechanism"]


@pytest.mark.usefixtures("store_servers")
def test_store_redis_is_declined_for_want_of_the_redis_modules(tmp_path):
    """langgraph-checkpoint-redis needs RedisJSON and RediSearch, which the Redis here lacks: not measured, and
    nothing is run on SQLite instead."""
    import arena

    runs = arena.evaluate("durable_state", ["langgraph"], store="redis", out=tmp_path)
    assert list(runs) == []
    reason = runs.declined["langgraph"]
    assert "langgraph-checkpoint-redis" in reason and "RedisJSON and RediSearch" in reason
    assert "unknown command 'FT.INFO'" in reason


@pytest.mark.usefixtures("store_servers")
def test_store_postgres_checkpoint_rows_are_in_the_items_own_database(server, tmp_path):
    """hitl-03 (approved), directly, with a postgres store: the paused state is only the thread id and the pause (no
    file); the thread's checkpoints, the approval tool's interrupt among their pending writes, are in the item's own
    database (not in the server's default one, nor in a SQLite file); a new adapter resumes the thread from there,
    and the approved booking runs once, the search before the pause not again."""
    import psycopg

    from arena import stores
    from tests.adapters.on_store import fresh_leg, item_on_store

    recorder = TraceRecorder()
    with item_on_store(server, SPEC, ITEMS["hitl-03"], "postgres", tmp_path, recorder) as (ctx, own):
        first = asyncio.run(fresh_leg(LangGraphAdapter, ctx))
        assert first.status == "suspended" and first.pending.tool == APPROVAL
        state = json.loads(json.dumps(first.state))
        assert set(state) == {"thread_id", "pause"}
        with psycopg.connect(own.store.url, autocommit=True) as conn:
            rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                                (state["thread_id"],)).fetchone()
            writes = conn.execute("SELECT channel FROM checkpoint_writes WHERE thread_id = %s",
                                  (state["thread_id"],)).fetchall()
        assert rows[0] > 0 and ("__interrupt__",) in writes
        with psycopg.connect(stores.server_url("postgres"), autocommit=True) as conn:
            shared = conn.execute("SELECT to_regclass('public.checkpoints')").fetchone()[0]
            if shared is not None:
                assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                                    (state["thread_id"],)).fetchone()[0] == 0
        assert list(tmp_path.iterdir()) == []  # no SQLite file
        done = asyncio.run(fresh_leg(LangGraphAdapter, ctx, state))
    assert done.status == "finished", (done.status, done.error)
    ran = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert ran.count("book_room") == 1 and ran.count("search_rooms") == 1, ran
