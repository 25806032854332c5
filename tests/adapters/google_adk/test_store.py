"""Where the paused session is kept: resumed in a new process from the SQLite session, and ADK's own postgres
and redis session services."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena_builtins.adapters.google_adk import GoogleADKAdapter, GoogleADKConfirmAdapter  # noqa: E402
from arena_builtins.adapters.google_adk.outcome import CONFIRMATION_CALL  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.google_adk.conftest import APPROVAL, ITEMS, ROOT, SPEC  # noqa: E402


# --- resume from the persisted session, in a new process ------------------------------------------------

_RESUME_IN_NEW_PROCESS = """
import asyncio, json, os, sys
from arena import catalog
from arena_builtins.adapters.google_adk import GoogleADKAdapter, GoogleADKConfirmAdapter
from arena.tools.box import RemoteToolBox
from arena.types import Decision, LegContext, ModelConfig

spec = catalog.load_arena("human_in_the_loop")
classes = {"google_adk": GoogleADKAdapter, "google_adk_confirm": GoogleADKConfirmAdapter}

async def resume(req):
    ctx = LegContext(
        item=spec.item(req["item"]), instructions=spec.instructions,
        model=ModelConfig(name=req["profile"], base_url=req["base_url"], api_key="arena-local"),
        tools=RemoteToolBox(req["endpoint"], spec.tools), workdir=req["workdir"],
    )
    return await classes[req["adapter"]]().resume(req["state"], Decision.model_validate(req["decision"]), ctx)

out = [asyncio.run(resume(req)).model_dump(mode="json") for req in json.loads(sys.argv[1])]
print(json.dumps({"pid": os.getpid(), "results": out}))
"""

NEW_PROCESS_CASES = [
    ("google_adk", "hitl-02", "scripted"),
    ("google_adk", "hitl-03", "scripted"),
    ("google_adk", "hitl-05", "scripted-eager"),  # Thursday: the model asks for book_room first
    ("google_adk", "hitl-07", "scripted-eager"),  # Monday: request_approval first
    ("google_adk_confirm", "hitl-04", "scripted"),
    ("google_adk_confirm", "hitl-07", "scripted"),
]
CLASSES = {"google_adk": GoogleADKAdapter, "google_adk_confirm": GoogleADKConfirmAdapter}


def _tools(events) -> list[tuple]:
    """(type, tool) of a slice of a recorder's events but model calls (`behaviour` for a bare list)."""
    return [(e.type, e.tool) for e in events if e.type != "model_call"]


async def _stored_events(state):
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    service = SqliteSessionService(state["db"])
    try:
        session = await service.get_session(app_name=state["app"], user_id=state["user"], session_id=state["session"])
    finally:
        await service.close()
    return session.events


@pytest.fixture(scope="module")
def new_process(server, tmp_path_factory):
    """Leg 0 of each case in this process; leg 1 of all of them in ONE fresh Python process given
    only the JSON state. Returns {(adapter, item): (first LegResult, stored session events at the
    pause, resumed result, leg-0 trace, leg-1 trace)}."""
    cases = {}
    requests = []
    endpoints = []
    for name, item_id, profile in NEW_PROCESS_CASES:
        item = ITEMS[item_id]
        recorder = TraceRecorder()
        executor = ToolExecutor(SPEC.tools, SPEC.functions, recorder)
        workdir = str(tmp_path_factory.mktemp(f"{name}-{item_id}"))
        model = server.open_item(recorder, profile).model
        ctx = LegContext(
            item=item, instructions=SPEC.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
        )
        first = asyncio.run(CLASSES[name]().start(ctx))
        assert first.status == "suspended", (name, item_id, first)
        state = json.loads(json.dumps(first.state))  # plain JSON: all the new process gets
        assert set(state) == {"db", "app", "user", "session", "invocation", "call_id", "call_name", "model_call_id"}
        assert Path(state["db"]).is_file() and Path(state["db"]).parent == Path(workdir)
        endpoint = server.register(executor)
        endpoints.append(endpoint)
        requests.append(
            {
                "adapter": name,
                "item": item_id,
                "profile": profile,
                "base_url": model.base_url,
                "endpoint": endpoint,
                "workdir": workdir,
                "state": state,
                "decision": item.resume_with[0].model_dump(mode="json"),
            }
        )
        cases[(name, item_id)] = (first, asyncio.run(_stored_events(state)), recorder, len(recorder.events))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RESUME_IN_NEW_PROCESS, json.dumps(requests)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for endpoint in endpoints:
            server.unregister(endpoint)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pid"] != os.getpid()
    return {
        key: (first, stored, result, recorder.events[:n], recorder.events[n:])
        for (key, (first, stored, recorder, n)), result in zip(cases.items(), out["results"])
    }


@pytest.mark.parametrize(
    "key",
    [
        ("google_adk", "hitl-02"),
        ("google_adk", "hitl-03"),
        ("google_adk_confirm", "hitl-04"),
        ("google_adk_confirm", "hitl-07"),
    ],
)
def test_resume_in_new_process_from_sqlite_session(new_process, key):
    first, stored, result, leg0, leg1 = new_process[key]
    name, item_id = key
    assert first.pending.tool == APPROVAL and first.pending.call_id
    assert _tools(leg0) == [("tool_call", "search_rooms")]
    # The paused leg's last request to the model is the one whose answer asked for the approval.
    assert leg0[-1].type == "model_call" and [c["name"] for c in leg0[-1].response["tool_calls"]] == [APPROVAL]
    # The stored session ends on the pause call, flagged long-running and unanswered.
    last = stored[-1]
    (call,) = last.get_function_calls()
    assert call.id == first.state["call_id"] and call.id in last.long_running_tool_ids
    assert last.invocation_id == first.state["invocation"]
    assert not any(fr.id == call.id for e in stored for fr in e.get_function_responses())
    if name == "google_adk":
        assert call.name == APPROVAL and call.id == first.pending.call_id
    else:
        # ADK first stored its placeholder result for request_approval (with the confirmation
        # request in its actions), then the adk_request_confirmation call that points back at it.
        assert call.name == CONFIRMATION_CALL
        assert call.args["originalFunctionCall"]["id"] == first.pending.call_id
        (placeholder,) = stored[-2].get_function_responses()
        assert placeholder.id == first.pending.call_id
        assert placeholder.response == {"error": "This tool call requires confirmation, please approve or reject."}
        assert first.pending.call_id in stored[-2].actions.requested_tool_confirmations
    assert result["status"] == "finished"
    decision = ITEMS[item_id].resume_with[0]
    # The new process's model requests reach the item's endpoint (recorded here): one that reads the
    # decision and, when approved, one more that reads the booking.
    assert sum(e.type == "model_call" for e in leg1) == (2 if decision.approved else 1)
    if decision.approved:
        assert _tools(leg1) == [("tool_call", "book_room")]
        assert [e.result.split(" ")[0] for e in leg1 if e.type == "tool_call"] == ["BOOKED"]
        assert result["final_text"].startswith("Done: BOOKED")
    else:
        assert _tools(leg1) == []
        assert "denied" in result["final_text"]
        assert (decision.text in result["final_text"]) is (name == "google_adk")


@pytest.mark.parametrize("item_id", ["hitl-05", "hitl-07"])
def test_eager_session_holds_the_executed_sibling(new_process, item_id):
    """The mechanism behind the eager trace: at the pause the stored session already holds
    book_room's FunctionResponse; the new process resumes without running it again. The same
    whichever call the model put first (hitl-05: book_room first; hitl-07: request_approval first)."""
    _, stored, result, leg0, leg1 = new_process[("google_adk", item_id)]
    book_first = policy_book_first(ITEMS[item_id].metadata["day"])
    asked = [e for e in leg0 if e.type == "model_call"][-1]
    order = ["book_room", APPROVAL] if book_first else [APPROVAL, "book_room"]
    assert [c["name"] for c in asked.response["tool_calls"]] == order
    assert _tools(leg0) == [("tool_call", "search_rooms"), ("tool_call", "book_room")]
    responses = [fr for e in stored for fr in e.get_function_responses()]
    assert [fr.name for fr in responses] == ["search_rooms", "book_room"]
    assert responses[-1].response["result"].startswith("BOOKED")
    assert _tools(leg1) == []
    assert result["status"] == "finished" and result["final_text"].startswith("Done: BOOKED")


# --- stores: ADK's own DatabaseSessionService (`--store postgres`) and RedisSessionService (`--store redis`) ---------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind,service", [("postgres", "DatabaseSessionService"), ("redis", "RedisSessionService")])
def test_store_durable_state_passes_on_adks_session_service(tmp_path, kind, service):
    """durable_state with the session in ADK's own store for the server, every leg in a new process: both adapters
    pass all 12 items (durable-11 with that server stopped and restarted during the pause), as on SQLite."""
    import arena

    runs = arena.evaluate("durable_state", ["google_adk", "google_adk_confirm"], store=kind, out=tmp_path)
    assert not runs.declined and not runs.failed and len(runs) == 2
    for run in runs:
        assert run.summary is not None and run.summary.passed == run.summary.items == 12, \
            [(r.item_id, [c.reason for c in r.checks if not c.passed]) for r in run.results if r.status != "passed"]
        assert run.meta["arena"] == f"durable_state@{kind}"
        assert run.meta["store"]["kind"] == kind and service in run.meta["store"]["mechanism"]
        restarted = {r.item_id for r in run.results for e in r.trace if e.type == "store"}
        assert restarted == {"durable-11"}


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_store_session_is_in_the_items_own_store_and_resumes_from_it(server, tmp_path, kind):
    """hitl-03 (approved), directly: with a postgres or redis store the paused state holds no path, only the store's
    kind and ADK's ids; the session, ending on the unanswered long-running call, is in the item's own database (ADK's
    `sessions`/`events` tables) or under the item's key prefix (one ADK session key, nothing outside the prefix), no
    file is written; a new adapter resumes it from there and the approved booking runs once, the search not again."""
    from tests.adapters.on_store import item_on_store

    item = ITEMS["hitl-03"]
    recorder = TraceRecorder()
    with item_on_store(server, SPEC, item, kind, tmp_path, recorder) as (ctx, own):
        first = asyncio.run(GoogleADKAdapter().start(ctx))
        assert first.status == "suspended" and first.pending.tool == APPROVAL
        state = json.loads(json.dumps(first.state))
        assert set(state) == {"store", "app", "user", "session", "invocation", "call_id", "call_name", "model_call_id"}
        assert state["store"] == kind
        if kind == "postgres":
            import psycopg

            with psycopg.connect(own.store.url, autocommit=True) as conn:
                sessions = conn.execute("SELECT id FROM sessions").fetchall()
                events = [json.loads(row[0]) if isinstance(row[0], str) else row[0] for row in conn.execute(
                    "SELECT event_data FROM events WHERE session_id = %s ORDER BY timestamp", (state["session"],))]
            assert sessions == [(state["session"],)]
            last = events[-1]
        else:
            import redis

            client = redis.Redis.from_url(own.store.url, decode_responses=True)
            try:
                mine = sorted(client.scan_iter(match=own.store.prefix + "*"))
                session_key = f"{own.store.prefix}adk:session:{state['app']}:{state['user']}:{state['session']}"
                assert mine == [session_key]
                assert not [k for k in client.scan_iter(match="*" + state["session"] + "*") if k != session_key]
                assert 0 < client.ttl(session_key) <= 7 * 24 * 3600  # ADK's default ttl_seconds
                last = json.loads(client.get(session_key))["events"][-1]
            finally:
                client.close()
        assert state["call_id"] in last["long_running_tool_ids"]
        assert list(tmp_path.iterdir()) == []  # no SQLite file
        done = asyncio.run(GoogleADKAdapter().resume(state, item.resume_with[0], ctx))
    assert done.status == "finished", (done.status, done.error)
    ran = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert ran.count("book_room") == 1 and ran.count("search_rooms") == 1, ran


def test_store_channels_name_adks_own_session_services():
    """Both adapters declare postgres and redis as native, naming ADK's own session service for each server."""
    for adapter in (GoogleADKAdapter, GoogleADKConfirmAdapter):
        info = adapter.info
        assert info.kind("postgres") == "native" and "DatabaseSessionService" in info.mechanism("postgres")
        assert info.kind("redis") == "native" and "RedisSessionService" in info.mechanism("redis")
        assert "key_prefix" in info.mechanism("redis")
