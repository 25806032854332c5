"""Where the paused state is kept: the RunState string itself (restored in a fresh adapter), or on PostgreSQL /
Redis the SDK's own SQLAlchemySession / RedisSession with the RunState beside it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents")

from arena_builtins.adapters.openai_agents import OpenAIAgentsAdapter  # noqa: E402
from tests.adapters.openai_agents.conftest import APPROVAL, HITL, _ResumeInFreshAdapter  # noqa: E402
from tests.conftest import normalised  # noqa: E402


def test_resume_from_serialised_state_in_fresh_adapter(run_adapter, vanilla):
    results = run_adapter(_ResumeInFreshAdapter, items=["hitl-01", "hitl-02", "hitl-03"])
    assert [r.status for r in results] == ["passed"] * 3
    for r in results:
        assert normalised(r) == normalised(vanilla[r.item_id]), r.item_id


# --- --store postgres|redis: the SDK's own SQLAlchemySession / RedisSession, the RunState beside it ------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize(("kind", "session_class"), [("postgres", "SQLAlchemySession"), ("redis", "RedisSession")])
def test_store_durable_state_passes_on_the_sdks_session_store(kind, session_class, tmp_path):
    """durable_state on PostgreSQL / Redis, every leg in a new process: the run's session is the SDK's own class for
    that server, the paused RunState is kept on the same server, and the leg state holds only their ids; all 12 pass,
    durable-11 too (its server stopped and restarted during the pause: each leg opens its own connections)."""
    import arena

    (run,) = arena.evaluate("durable_state", ["openai_agents"], store=kind, out=tmp_path)
    assert run.summary is not None and run.summary.passed == run.summary.items == 12, \
        [(r.item_id, [c.reason for c in r.checks if not c.passed]) for r in run.results if r.status != "passed"]
    assert run.meta["arena"] == f"durable_state@{kind}"
    assert run.meta["store"]["kind"] == kind and session_class in run.meta["store"]["mechanism"]
    restarted = next(r for r in run.results if r.item_id == "durable-11")
    assert [e.text for e in restarted.trace if e.type == "store"] == [
        f"{kind} server stopped and restarted during the pause"]


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_store_crash_recovery_resumes_the_kept_run_state(kind, tmp_path):
    """crash_recovery on the store, the `resume` way (the RunState row / key saved at the pause, restored in a new
    process): a kill after the booking's effect (cr-01), before the next model request (cr-06), and during the pause
    with the store's server restarted (cr-12) all recover to the gold bookings, each payment made once. The RunState
    saved at the pause holds nothing of the resumed turn, so cr-01 and cr-06's recoveries ask the model again for
    the booking (a new call id: the airline refuses the second booking, the seat being taken), which their
    re-ask checks report."""
    import arena

    (run,) = arena.evaluate("crash_recovery", ["openai_agents"], items=["cr-01", "cr-06", "cr-12"], store=kind,
                            out=tmp_path, timeout=120)
    failed = {r.item_id: {c.name for c in r.checks if not c.passed} for r in run.results}
    assert failed["cr-12"] == set(), [(r.item_id, r.error) for r in run.results]
    for item in ("cr-01", "cr-06"):
        assert "not_reasked_after_crash" in failed[item] and failed[item] <= {
            "not_reasked_after_crash", "call_id_stable_after_crash", "answer_matches_ledger"}, failed


def _session(kind: str, store, session_id: str):
    """The SDK's own session class for the server, opened on the item's place the way the adapter names it."""
    if kind == "postgres":
        from agents.extensions.memory import SQLAlchemySession

        return SQLAlchemySession.from_url(session_id, url=store.sqlalchemy_url("asyncpg"))
    from agents.extensions.memory import RedisSession

    return RedisSession.from_url(session_id, url=store.url, key_prefix=f"{store.prefix}agents:session")


async def _session_items(kind: str, store, session_id: str) -> list[dict]:
    session = _session(kind, store, session_id)
    try:
        return await session.get_items()
    finally:
        await (session.engine.dispose() if kind == "postgres" else session.close())


def _shape(items: list[dict]) -> list[tuple]:
    return [(i.get("type") or i.get("role"), i.get("name") or str(i.get("output", ""))[:8]) for i in items]


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_store_session_and_run_state_are_in_the_items_own_place(kind, server, tmp_path):
    """hitl-01 (an approval), directly, on the item's own store: the leg state is only {session_id, state_id} (no
    file in the work directory); the RunState string is a record (`KeptRecords`): a row of arena_run_states in the
    item's own database (none in the server's default one) or the hash <prefix>agents:run_state:<id>; the session's
    rows are in agent_sessions / agent_messages of that database, or its keys begin with the item's prefix. A new
    adapter resumes from there, and the SDK's session then holds the whole conversation in order, the resumed turn
    appended once: the approval tool's output after its call, no function_call_output without its function_call
    (openai-agents-python #4827's orphan needs output_guardrails and a tool_use_behavior other than run_llm_again; this
    agent has neither)."""
    import asyncio

    from arena import stores
    from arena.trace import TraceRecorder
    from tests.adapters.on_store import fresh_leg, item_on_store

    recorder = TraceRecorder()
    with item_on_store(server, HITL, HITL.item("hitl-01"), kind, tmp_path, recorder) as (ctx, own):
        first = asyncio.run(fresh_leg(OpenAIAgentsAdapter, ctx))
        assert first.status == "suspended" and first.pending.tool == APPROVAL
        state = json.loads(json.dumps(first.state))
        assert set(state) == {"session_id", "state_id"}
        sid = state["session_id"]
        if kind == "postgres":
            import psycopg

            with psycopg.connect(own.store.url, autocommit=True) as conn:
                tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
                assert tables == {"agent_sessions", "agent_messages", "arena_run_states"}
                kept = conn.execute("SELECT fields->>'session_id', fields->>'state' FROM arena_run_states "
                                    "WHERE id = %s",
                                    (state["state_id"],)).fetchone()
                assert kept is not None and kept[0] == sid and json.loads(kept[1])["current_agent"]["name"] == "arena"
                count = "SELECT count(*) FROM {} WHERE session_id = %s"
                assert conn.execute(count.format("agent_sessions"), (sid,)).fetchone()[0] == 1
                assert conn.execute(count.format("agent_messages"), (sid,)).fetchone()[0] == 4
            with psycopg.connect(stores.server_url("postgres"), autocommit=True) as conn:
                for table, column in (("arena_run_states", "fields->>'session_id'"), ("agent_messages", "session_id")):
                    if conn.execute(f"SELECT to_regclass('public.{table}')").fetchone()[0] is not None:
                        # nothing of this run in the server's default database
                        where = f"SELECT count(*) FROM {table} WHERE {column} = %s"
                        assert conn.execute(where, (sid,)).fetchone()[0] == 0
        else:
            import redis

            client = redis.Redis.from_url(own.store.url)
            try:
                ours = sorted(k.decode() for k in client.scan_iter(match=f"*{sid}*", count=1000))
                session_key = f"{own.store.prefix}agents:session:{sid}"
                assert ours == [session_key, f"{session_key}:messages"]
                kept = client.hgetall(f"{own.store.prefix}agents:run_state:{state['state_id']}")
                assert kept[b"session_id"].decode() == sid
                assert json.loads(kept[b"state"])["current_agent"]["name"] == "arena"
                assert [k.decode() for k in client.scan_iter(match=f"*{state['state_id']}*", count=1000)] == [
                    f"{own.store.prefix}agents:run_state:{state['state_id']}"]
            finally:
                client.close()
        assert list(tmp_path.iterdir()) == []  # nothing in a file
        paused = asyncio.run(_session_items(kind, own.store, sid))
        assert _shape(paused) == [("user", ""), ("function_call", "search_rooms"), ("function_call_output", '{"day": '),
                                  ("function_call", APPROVAL)]
        done = asyncio.run(fresh_leg(OpenAIAgentsAdapter, ctx, state))
        assert done.status == "finished" and done.final_text.startswith("Done: BOOKED R102"), (done.status, done.error)
        items = asyncio.run(_session_items(kind, own.store, sid))
    assert items[:4] == paused
    assert _shape(items[4:]) == [("function_call_output", "APPROVED"), ("function_call", "book_room"),
                                 ("function_call_output", "BOOKED R"), ("message", "")]
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert outputs == calls  # each call answered once, after it, in order: no orphan, no duplicate
