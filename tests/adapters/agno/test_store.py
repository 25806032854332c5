"""Where agno keeps the paused run: its SqliteDb file (the leg state is JSON naming it, resumed by a fresh adapter
and across a worker restart), or its PostgresDb / RedisDb on `--store postgres|redis`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("agno")

from arena import catalog  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import DecisionKind  # noqa: E402
from tests.adapters.agno.conftest import HITL, NAME, adapter_module, leg_context  # noqa: E402


def test_state_is_json_pointing_at_agnos_db_and_resumes_in_a_fresh_adapter(server, tmp_path):
    """Leg 0's state is JSON: agno's SqliteDb file under the item's work dir, which holds the paused run, and
    the requirements as agno serialises them. A second adapter (nothing shared in memory) resumes it."""
    recorder = TraceRecorder()
    ctx = leg_context(HITL, "hitl-02", str(tmp_path), recorder, server)  # a denied item
    module = adapter_module()

    async def legs():
        first = module.AgnoAdapter()
        try:
            leg0 = await first.start(ctx)
        finally:
            await first.aclose()
        assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
        wire = json.dumps(leg0.state)  # what a durable store would keep
        state = json.loads(wire)
        assert Path(state["db_file"]).parent == tmp_path and Path(state["db_file"]).exists()
        assert state["call_ids"] == [leg0.pending.call_id]
        # agno's own store holds the run, paused on that call
        from agno.db.sqlite import SqliteDb
        from agno.run.base import RunStatus

        db = SqliteDb(db_file=state["db_file"])
        session = db.get_session(session_id=state["session_id"], session_type=_agent_session_type())
        run = next(r for r in session.runs if r.run_id == state["run_id"])
        assert run.status == RunStatus.paused
        assert [r.tool_execution.tool_call_id for r in run.active_requirements] == [leg0.pending.call_id]
        db.db_engine.dispose()
        second = module.AgnoAdapter()
        try:
            return await second.resume(state, ctx.item.resume_with[0], ctx)
        finally:
            await second.aclose()

    leg1 = asyncio.run(legs())
    decision = ctx.item.resume_with[0]
    assert decision.kind is DecisionKind.deny
    assert leg1.status == "finished" and f"({decision.text})" in leg1.final_text
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms"]


def _agent_session_type():
    from agno.db.base import SessionType

    return SessionType.AGENT


# --- durable_state: each leg in a fresh worker process ---------------------------------------------


def test_durable_state_denial_reaches_the_model_after_the_restart(cell):
    """The worker is restarted between legs (run_durable_pair asserts the two pids differ): leg 1 has only the
    JSON state and agno reads the run back from its SqliteDb; the deny reason still reaches the model."""
    results = cell(NAME, "durable_state").results
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert results[1].status == "passed"
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


# --- --store postgres|redis: the paused run in agno's own PostgresDb / RedisDb -------------------------------------


def _evaluate(arena: str, kind: str, items: list[str], out: Path):
    from arena import evaluate

    run = evaluate(arena, [NAME], items=items, store=kind, out=out, timeout=120)[0]
    return {r.item_id: r for r in run.results}


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_durable_state_on_the_store_passes_across_a_new_process_and_a_server_restart(kind, tmp_path):
    """durable_state on agno's PostgresDb / RedisDb, every leg in a new process: an approval, a denial, and
    durable-11, whose server is stopped and restarted during the pause (agno's db, built per leg, connects anew)."""
    results = _evaluate("durable_state", kind, ["durable-01", "durable-02", "durable-11"], tmp_path)
    assert {i: r.status for i, r in results.items()} == dict.fromkeys(results, "passed"), {
        i: [c.reason for c in r.checks if not c.passed] for i, r in results.items()}
    assert len(results) == 3


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_crash_recovery_on_the_store_is_what_agno_does_on_sqlite(kind, tmp_path):
    """crash_recovery on the store: resuming again with the decision recovers (cr-01, to the gold bookings, though
    the run continued from the pause asks the model again for the booking, which its re-ask checks report; cr-12
    across a restart of the store's server), and the `continue` way fails as on SqliteDb: agno never persisted the
    decision, the db still holds the pause, and agno refuses the unanswered external call (cr-14)."""
    results = _evaluate("crash_recovery", kind, ["cr-01", "cr-12", "cr-14"], tmp_path)
    reasked = {c.name for c in results["cr-01"].checks if not c.passed}
    assert "not_reasked_after_crash" in reasked and reasked <= {
        "not_reasked_after_crash", "call_id_stable_after_crash", "answer_matches_ledger"}, reasked
    assert results["cr-12"].status == "passed", [c.reason for c in results["cr-12"].checks if not c.passed]
    failed = {c.name: c.reason for c in results["cr-14"].checks if not c.passed}
    assert set(failed) == {"recovered", "completed", "final_from_model"}
    assert "requires external execution, cannot continue run" in failed["recovered"]


def _paused_on(kind: str, server, tmp_path, inspect):
    """hitl-02 (a denial) with its own store on `kind`'s server, as an item gets it: leg 0 in one adapter, then
    `inspect(store, state)` while the item's store exists, then the resume in a fresh adapter. Returns leg 1."""
    from arena.stores import item_store

    module = adapter_module()
    with item_store(kind, "hitl-02") as own:
        ctx = leg_context(HITL, "hitl-02", str(tmp_path), server=server).model_copy(update={"store": own.store})

        async def legs():
            first = module.AgnoAdapter()
            try:
                leg0 = await first.start(ctx)
            finally:
                await first.aclose()
            assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
            state = json.loads(json.dumps(leg0.state))  # the leg state is JSON: names, no connection
            inspect(own.store, state)
            second = module.AgnoAdapter()
            try:
                return await second.resume(state, ctx.item.resume_with[0], ctx)
            finally:
                await second.aclose()

        leg1 = asyncio.run(legs())
    assert not any(tmp_path.iterdir()), "nothing may be written to the work directory (no SqliteDb file)"
    assert leg1.status == "finished" and f"({ctx.item.resume_with[0].text})" in leg1.final_text
    return leg1


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_keeps_agnos_tables_in_the_items_own_database(server, tmp_path):
    """agno's PostgresDb creates its schema and tables in the item's own database, where the session holds the
    paused run; the server's shared database gets none of it."""
    import psycopg

    def inspect(store, state):
        assert state["db"] == "postgres" and "db_file" not in state
        with psycopg.connect(store.url) as conn:
            tables = {r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'ai'")}
            assert {"agno_sessions", "agno_runs"} <= tables, tables
            sessions = conn.execute("SELECT session_type FROM ai.agno_sessions WHERE session_id = %s",
                                    (state["session_id"],)).fetchall()
            runs = conn.execute("SELECT session_id, status FROM ai.agno_runs WHERE run_id = %s",
                                (state["run_id"],)).fetchall()
        assert sessions == [("agent",)]
        assert runs == [(state["session_id"], "PAUSED")]
        shared = store.url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(shared) as conn:
            assert conn.execute("SELECT to_regclass('ai.agno_sessions')").fetchone()[0] is None

    _paused_on("postgres", server, tmp_path, inspect)


@pytest.mark.usefixtures("store_servers")
def test_redis_store_writes_every_agno_key_under_the_items_prefix(server, tmp_path):
    """agno's RedisDb with the item's prefix as `db_prefix`: the session holding the paused run is a key under the
    prefix, and no key on the server that names the session or the run lies outside it."""
    import redis

    def inspect(store, state):
        assert state["db"] == "redis" and store.prefix.startswith(state["db_prefix"])
        client = redis.Redis.from_url(store.url, decode_responses=True)
        try:
            # agno's keys: <db_prefix>:<table type>:<id>, and its indexes beside them
            own = set(client.scan_iter(match=f"{store.prefix}*"))
            session_key, run_key = f"{store.prefix}sessions:{state['session_id']}", f"{store.prefix}runs:{state['run_id']}"
            assert {session_key, run_key} <= own, own
            session, run = json.loads(client.get(session_key)), json.loads(client.get(run_key))
            naming = {k for k in client.scan_iter(match="*")
                      if state["session_id"] in k or state["run_id"] in k}
        finally:
            client.close()
        assert session["session_id"] == state["session_id"] and run["status"] == "PAUSED"
        assert naming and all(k.startswith(store.prefix) for k in naming), naming

    _paused_on("redis", server, tmp_path, inspect)
