"""pydantic_ai_dbos: the paused state as a pointer into DBOS's system database (`store.py`): a SQLite file under
the item's work directory or, with `--store postgres`, the item's own database; a resume in a new process; a
resume as an idempotent workflow id; nothing of DBOS left running after a leg; no Redis system database."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

from arena import catalog, evaluate  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import Decision, LegContext  # noqa: E402

NAME = "pydantic_ai_dbos"


def _steps(db: str, workflow_id: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT function_name FROM operation_outputs WHERE workflow_uuid = ? ORDER BY function_id",
                            (workflow_id,)).fetchall()
    return [r[0] for r in rows]


def _status(db: str, workflow_id: str) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status FROM workflow_status WHERE workflow_uuid = ?", (workflow_id,)).fetchone()
    return row[0] if row else None


def test_durable_state_resumes_in_a_new_process_and_the_reason_reaches_the_model(cell):
    """durable_state: each leg in a fresh worker (run_durable_pair asserts both pass, in two processes); leg 1
    has only the JSON state (the SQLite file and the paused workflow's id) and DBOS's store behind it, and the
    deny reason still comes back to the model."""
    results = cell(NAME, "durable_state").results
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text
    pids = {e.pid for e in results[1].trace if e.type in ("suspended", "final")}
    assert len(pids) == 2


# --- the state, DBOS's store, and a resume as an idempotent workflow id -------------------------------------


def _ctx(server, recorder, workdir: Path, arena: str = "human_in_the_loop", item_id: str = "hitl-03"):
    spec = catalog.load_arena(arena)
    item = next(i for i in spec.items if i.id == item_id)
    return item, LegContext(
        item=item,
        instructions=spec.instructions,
        model=server.open_item(recorder, "scripted").model,
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)),
        workdir=str(workdir),
    )


def _dbos_threads() -> list[str]:
    names = ("dbos", "queue", "_run_event_loop", "notification_listener", "dynamic_scheduler_loop")
    return [t.name for t in threading.enumerate() if any(n in t.name for n in names)]


def test_state_points_at_dbos_store_and_a_second_resume_returns_the_first_ones_result(server, tmp_path):
    """The paused state is JSON pointing at DBOS's SQLite store (no message history of its own); the paused
    workflow is recorded there with its steps (model requests and tool calls); a fresh adapter resumes it as
    the workflow `<paused id>/resume`. Resuming the same state again, even with another decision, reaches that
    workflow id: DBOS returns its recorded result and nothing runs again (no tool call, no model request).
    After every leg, nothing of DBOS is left running."""
    import dbos._dbos as dbos_module

    recorder = TraceRecorder()
    item, ctx = _ctx(server, recorder, tmp_path)
    cls = catalog.builtin_adapters()[NAME].load()

    async def leg(run):
        adapter = cls()
        try:
            return await run(adapter), adapter
        finally:
            await adapter.aclose()

    leg0, first = asyncio.run(leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
    assert first._agent.instrument is False
    state = json.loads(json.dumps(leg0.state))  # JSON, as a durable store keeps it
    assert set(state) == {"db", "workflow_id", "call_id", "kind"} and state["kind"] == "question"
    db = state["db"]
    assert Path(db).is_relative_to(tmp_path) and Path(db).exists()
    assert _status(db, state["workflow_id"]) == "SUCCESS"  # the pause is the workflow's return, it does not block
    steps = _steps(db, state["workflow_id"])
    assert "arena_agent__model.request" in steps and "tool.search_rooms" in steps
    assert dbos_module._dbos_global_instance is None and _dbos_threads() == []

    decision = item.resume_with[0]
    assert decision.approved
    leg1, _ = asyncio.run(leg(lambda a: a.resume(json.loads(json.dumps(state)), decision, ctx)))
    assert leg1.status == "finished" and leg1.final_text.startswith("Done: BOOKED R201")
    resumed = state["workflow_id"] + "/resume"
    assert _status(db, resumed) == "SUCCESS" and "tool.book_room" in _steps(db, resumed)
    assert dbos_module._dbos_global_instance is None and _dbos_threads() == []
    calls = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert calls == ["search_rooms", "book_room"]
    models = len([e for e in recorder.events if e.type == "model_call"])

    # the same pause again, denied this time: DBOS answers from the recorded workflow, nothing runs
    again, _ = asyncio.run(leg(lambda a: a.resume(state, Decision(kind="deny", text="changed my mind"), ctx)))
    assert again.status == "finished" and again.final_text == leg1.final_text
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == calls
    assert len([e for e in recorder.events if e.type == "model_call"]) == models


# --- --store postgres: DBOS's own PostgreSQL system database; no Redis one --------------------------------------


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_durable_state_and_crash_recovery_pass_on_dboss_postgres_system_database(tmp_path):
    """durable_state (an approval, a denial, durable-11 whose server restarts during the pause) and crash_recovery
    (cr-01 resumed, cr-12 across a restart, cr-14 continued: DBOS.launch() recovers the PENDING workflow from
    PostgreSQL) with DBOS's system database on the item's own PostgreSQL database."""
    results = {}
    for arena, items in (("durable_state", ["durable-01", "durable-02", "durable-11"]),
                         ("crash_recovery", ["cr-01", "cr-12", "cr-14"])):
        run = evaluate(arena, [NAME], items=items, store="postgres", out=tmp_path / arena, timeout=120)[0]
        assert run.meta["store"]["kind"] == "postgres" and "system_database_url" in run.meta["store"]["mechanism"]
        results.update({r.item_id: r for r in run.results})
    assert {i: r.status for i, r in results.items()} == dict.fromkeys(results, "passed"), {
        i: [c.reason for c in r.checks if not c.passed] or r.error for i, r in results.items()}
    assert len(results) == 6


@pytest.mark.usefixtures("store_servers")
def test_redis_store_is_declined_dbos_has_no_redis_system_database(tmp_path):
    runs = evaluate("durable_state", [NAME], store="redis", out=tmp_path)
    assert list(runs) == []
    assert "DBOS has no Redis system database" in runs.declined[NAME]


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_state_names_no_file_and_dbos_tables_are_in_the_items_own_database(server, tmp_path):
    """The paused state is the workflow id (no SQLite path, nothing written to the work directory); the paused and
    the resume workflows are recorded in schema `dbos` of the item's database, which DBOS.launch() created there."""
    import psycopg

    from arena.stores import item_store

    item, ctx = _ctx(server, TraceRecorder(), tmp_path)
    cls = catalog.builtin_adapters()[NAME].load()

    async def leg(run):
        adapter = cls()
        try:
            return await run(adapter)
        finally:
            await adapter.aclose()

    with item_store("postgres", "hitl-03") as own:
        ctx = ctx.model_copy(update={"store": own.store})
        leg0 = asyncio.run(leg(lambda a: a.start(ctx)))
        assert leg0.status == "suspended"
        state = json.loads(json.dumps(leg0.state))
        assert set(state) == {"system_database", "workflow_id", "call_id", "kind"}
        assert state["system_database"] == "postgres"
        leg1 = asyncio.run(leg(lambda a: a.resume(state, item.resume_with[0], ctx)))
        assert leg1.status == "finished" and leg1.final_text.startswith("Done: BOOKED R201")
        with psycopg.connect(own.store.url) as conn:
            statuses = dict(conn.execute("SELECT workflow_uuid, status FROM dbos.workflow_status").fetchall())
            steps = [r[0] for r in conn.execute(
                "SELECT function_name FROM dbos.operation_outputs WHERE workflow_uuid = %s ORDER BY function_id",
                (state["workflow_id"] + "/resume",))]
        with psycopg.connect(own.store.url.rsplit("/", 1)[0] + "/postgres") as conn:
            assert conn.execute("SELECT to_regclass('dbos.workflow_status')").fetchone()[0] is None
    assert statuses == {state["workflow_id"]: "SUCCESS", state["workflow_id"] + "/resume": "SUCCESS"}
    assert "tool.book_room" in steps
    assert not any(tmp_path.iterdir())
