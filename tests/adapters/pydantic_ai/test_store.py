"""pydantic_ai: the paused state (`store.py`): pydantic-ai's own JSON message history, resumed in a fresh adapter
or a new process, and on a server (`--store postgres|redis`) a row or a hash of the item's own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from arena import catalog  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402

NAME = "pydantic_ai"
ROOT = Path(__file__).resolve().parents[3]


def test_state_is_json_and_resumes_in_a_fresh_adapter(server):
    """The suspended state is plain JSON (pydantic-ai's own message history + call id); a new adapter resumes it."""
    spec = catalog.load_arena("human_in_the_loop")
    item = next(i for i in spec.items if i.id == "hitl-03")
    recorder = TraceRecorder()
    ctx = LegContext(
        item=item,
        instructions=spec.instructions,
        model=server.open_item(recorder, "scripted").model,
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)),
        workdir=str(ROOT),
    )
    cls = catalog.builtin_adapters()[NAME].load()

    async def legs():
        first = cls()
        try:
            leg0 = await first.start(ctx)
        finally:
            await first.aclose()
        assert leg0.status == "suspended"
        assert leg0.pending.tool == "request_approval" and leg0.pending.call_id == leg0.state["call_id"]
        wire = json.dumps(leg0.state)  # what a durable store would keep
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        history = ModelMessagesTypeAdapter.validate_json(json.loads(wire)["messages"])
        assert history[-1].parts[-1].tool_name == "request_approval"  # the run ended on the pending call
        second = cls()
        try:
            return await second.resume(json.loads(wire), item.resume_with[0], ctx)
        finally:
            await second.aclose()

    leg1 = asyncio.run(legs())
    assert leg1.status == "finished"
    assert leg1.final_text.startswith("Done: BOOKED R201")
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms", "book_room"]


# --- durable_state: each leg in a fresh worker process --------------------------------------------


def test_durable_state_denial_reaches_the_model_after_the_restart(cell):
    """The worker is restarted between legs (test_conformance.py): leg 1 has only the JSON state
    (pydantic-ai's serialised message history + the deferred call id) and rebuilds the run from it;
    the deny reason still comes back to the model."""
    results = cell(NAME, "durable_state").results
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


def _evaluate_on(kind: str, arena: str, items: list[str], out: Path) -> dict:
    from arena import evaluate

    run = evaluate(arena, [NAME], items=items, store=kind, out=out, timeout=120)[0]
    assert run.meta["store"]["kind"] == kind and "ModelMessagesTypeAdapter JSON" in run.meta["store"]["mechanism"]
    return {r.item_id: r for r in run.results}


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_store_durable_state_and_crash_recovery_pass_across_new_processes_and_a_server_restart(kind, tmp_path):
    """durable_state (an approval, a denial, durable-11 whose server is stopped and restarted during the pause) and
    crash_recovery (cr-01; cr-12 across a restart) with the paused history on the server: every leg is a new process
    that reads the history back by the id its state holds, over a connection of its own."""
    results = {**_evaluate_on(kind, "durable_state", ["durable-01", "durable-02", "durable-11"], tmp_path / "ds"),
               **_evaluate_on(kind, "crash_recovery", ["cr-01", "cr-12"], tmp_path / "cr")}
    # cr-01's recovery runs the history stored at the pause again: the model is asked again for the booking (a new
    # call id; the airline refuses the second booking, the seat being taken), which its re-ask checks report
    reasked = {c.name for c in results.pop("cr-01").checks if not c.passed}
    assert "not_reasked_after_crash" in reasked and reasked <= {
        "not_reasked_after_crash", "call_id_stable_after_crash", "answer_matches_ledger"}, reasked
    assert {i: r.status for i, r in results.items()} == dict.fromkeys(results, "passed"), {
        i: [c.reason for c in r.checks if not c.passed] or r.error for i, r in results.items()}
    assert len(results) == 4
    assert {i for i, r in results.items() if any(e.type == "store" for e in r.trace)} == {"durable-11", "cr-12"}


def _paused_on(kind: str, server, tmp_path, inspect):
    """hitl-03 with its own store on `kind`'s server, as an item gets it: leg 0 in one adapter, `inspect(store,
    state)`, the resume in a fresh adapter. Nothing may be written to the work directory."""
    from tests.adapters.on_store import fresh_leg, item_on_store

    spec = catalog.load_arena("human_in_the_loop")
    item = next(i for i in spec.items if i.id == "hitl-03")
    cls = catalog.builtin_adapters()[NAME].load()
    with item_on_store(server, spec, item, kind, tmp_path) as (ctx, own):
        leg0 = asyncio.run(fresh_leg(cls, ctx))
        assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
        state = json.loads(json.dumps(leg0.state))
        assert set(state) == {"paused_run", "store"} and state["store"] == kind  # only the id: no history
        inspect(own.store, state, leg0.pending.call_id)
        leg1 = asyncio.run(fresh_leg(cls, ctx, state))
    assert not any(tmp_path.iterdir())
    assert leg1.status == "finished" and leg1.final_text.startswith("Done: BOOKED R201")


def _history_ends_on_the_pending_call(messages: str | bytes) -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    history = ModelMessagesTypeAdapter.validate_json(messages)
    assert history[-1].parts[-1].tool_name == "request_approval"


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_keeps_the_history_in_a_table_of_the_items_own_database(server, tmp_path):
    """The history (ModelMessagesTypeAdapter JSON) and the held call's id are a record (`KeptRecords`), a row of
    pydantic_ai_paused_runs in the item's database, created there; the server's shared database gets no such table."""
    import psycopg

    def inspect(store, state, call_id):
        with psycopg.connect(store.url) as conn:
            rows = conn.execute("SELECT fields->>'messages', fields->>'state' FROM pydantic_ai_paused_runs "
                                "WHERE id = %s",
                                (state["paused_run"],)).fetchall()
        assert len(rows) == 1
        _history_ends_on_the_pending_call(rows[0][0])
        assert json.loads(rows[0][1]) == {"call_id": call_id, "kind": "question"}
        with psycopg.connect(store.url.rsplit("/", 1)[0] + "/postgres") as conn:
            assert conn.execute("SELECT to_regclass('pydantic_ai_paused_runs')").fetchone()[0] is None

    _paused_on("postgres", server, tmp_path, inspect)


@pytest.mark.usefixtures("store_servers")
def test_redis_store_keeps_the_history_under_the_items_prefix(server, tmp_path):
    """The history is a hash under the item's key prefix; no key on the server names the pause outside it."""
    import redis

    def inspect(store, state, call_id):
        client = redis.Redis.from_url(store.url, decode_responses=True)
        try:
            key = f"{store.prefix}pydantic_ai:paused_run:{state['paused_run']}"
            assert set(client.scan_iter(match=f"{store.prefix}*")) == {key}
            assert [k for k in client.scan_iter(match=f"*{state['paused_run']}*")] == [key]
            kept = client.hgetall(key)
        finally:
            client.close()
        _history_ends_on_the_pending_call(kept["messages"])
        assert json.loads(kept["state"]) == {"call_id": call_id, "kind": "question"}

    _paused_on("redis", server, tmp_path, inspect)
