"""The pause is CrewAI's own pending feedback, persisted by CrewAI in SQLiteFlowPersistence: the leg state is a JSON
handle to it, a new process resumes from it, and no other store is offered (`--store postgres|redis` declined)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.crewai.conftest import NOT_HERE

crewai = pytest.importorskip("crewai", reason=NOT_HERE)

from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402
from arena_builtins.adapters.crewai import CrewAIAdapter  # noqa: E402
from arena_builtins.adapters.crewai.client import OFFLINE_ENV  # noqa: E402
from arena_builtins.adapters.crewai.store import DB_NAME  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.crewai.conftest import APPROVAL, ITEMS, SPEC  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def _context(item_id: str, profile: str, server, workdir: str) -> tuple[LegContext, TraceRecorder, ToolExecutor]:
    recorder = TraceRecorder()
    executor = ToolExecutor(SPEC.tools, SPEC.functions, recorder)
    model = server.open_item(recorder, profile).model
    ctx = LegContext(
        item=ITEMS[item_id], instructions=SPEC.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
    )
    return ctx, recorder, executor


def _pending_row(workdir: str, flow_id: str):
    from crewai.flow.persistence import SQLiteFlowPersistence

    return SQLiteFlowPersistence(os.path.join(workdir, DB_NAME)).load_pending_feedback(flow_id)


def test_suspended_state_is_a_json_handle_to_crewais_pending_feedback(server, tmp_path):
    # hitl-03 is a Wednesday: the model lists request_approval before book_room, so nothing ran yet
    assert not policy_book_first(ITEMS["hitl-03"].metadata["day"])
    ctx, recorder, _ = _context("hitl-03", "scripted-eager", server, str(tmp_path))
    first = asyncio.run(CrewAIAdapter().start(ctx))
    assert first.status == "suspended", first
    assert first.pending.tool == APPROVAL and first.pending.call_id
    state = json.loads(json.dumps(first.state))
    assert state == {"db": DB_NAME, "flow_id": state["flow_id"]}
    row = _pending_row(str(tmp_path), state["flow_id"])
    assert row is not None, "CrewAI saved no pending feedback for the flow"
    flow_state, context = row
    assert context.method_name == "agent_step"
    assert context.method_output["call"] == {"id": first.pending.call_id, "name": APPROVAL, "args": first.pending.args}
    # The persisted conversation ends on the approval turn: neither the approval nor book_room has a result.
    last = flow_state["conversation"][-1]
    assert last["role"] == "assistant"
    assert [c["function"]["name"] for c in last["tool_calls"]] == [APPROVAL, "book_room"]
    assert [(e.type, e.tool) for e in recorder.events if e.type != "model_call"] == [("tool_call", "search_rooms")]
    # ...and the model was asked exactly twice: the search turn, then the approval turn persisted above
    turns = [[c["name"] for c in e.response["tool_calls"]] for e in recorder.events if e.type == "model_call"]
    assert turns == [["search_rooms"], [APPROVAL, "book_room"]]


_RESUME_IN_NEW_PROCESS = """
import asyncio, json, os, sys
from arena import catalog
from arena_builtins.adapters.crewai import CrewAIAdapter
from arena.tools.box import RemoteToolBox
from arena.types import Decision, LegContext, ModelConfig

spec = catalog.load_arena("human_in_the_loop")

def resume(req):
    ctx = LegContext(
        item=spec.item(req["item"]), instructions=spec.instructions,
        model=ModelConfig(name=req["profile"], base_url=req["base_url"], api_key="arena-local"),
        tools=RemoteToolBox(req["endpoint"], spec.tools), workdir=req["workdir"],
    )
    return asyncio.run(CrewAIAdapter().resume(req["state"], Decision.model_validate(req["decision"]), ctx))

out = [resume(req).model_dump(mode="json") for req in json.loads(sys.argv[1])]
print(json.dumps({"pid": os.getpid(), "results": out}))
"""

NEW_PROCESS_CASES = [("hitl-02", "scripted"), ("hitl-03", "scripted-eager")]


@pytest.fixture(scope="module")
def new_process(server, tmp_path_factory):
    """Leg 0 of each case here; leg 1 in ONE fresh Python process given only the JSON state."""
    cases, requests, endpoints = {}, [], []
    for item_id, profile in NEW_PROCESS_CASES:
        workdir = str(tmp_path_factory.mktemp(f"crewai-{item_id}"))
        ctx, recorder, executor = _context(item_id, profile, server, workdir)
        first = asyncio.run(CrewAIAdapter().start(ctx))
        assert first.status == "suspended", (item_id, first)
        endpoint = server.register(executor)
        endpoints.append(endpoint)
        requests.append({
            "item": item_id, "profile": profile, "base_url": ctx.model.base_url, "endpoint": endpoint,
            "workdir": workdir, "state": json.loads(json.dumps(first.state)),
            "decision": ITEMS[item_id].resume_with[0].model_dump(mode="json"),
        })
        cases[item_id] = (first, recorder, len(recorder.events), workdir)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RESUME_IN_NEW_PROCESS, json.dumps(requests)],
            cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, **OFFLINE_ENV, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for endpoint in endpoints:
            server.unregister(endpoint)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pid"] != os.getpid()
    return {
        item_id: (first, result, recorder.events[:n], recorder.events[n:], workdir)
        for (item_id, (first, recorder, n, workdir)), result in zip(cases.items(), out["results"])
    }


@pytest.mark.parametrize("item_id", [case[0] for case in NEW_PROCESS_CASES])
def test_resume_in_new_process_from_crewai_persistence(new_process, item_id):
    first, result, leg0, leg1, workdir = new_process[item_id]
    decision = ITEMS[item_id].resume_with[0]
    assert [(e.type, e.tool) for e in leg0 if e.type != "model_call"] == [("tool_call", "search_rooms")]
    # leg 1's model calls went to this item's own endpoint on the gateway, from the new process
    assert [e for e in leg1 if e.type == "model_call"], "the resumed flow never called the model"
    leg1 = [e for e in leg1 if e.type != "model_call"]
    assert result["status"] == "finished", result
    room = first.pending.args["summary"].split()[2]
    if decision.approved:
        assert [(e.tool, e.args) for e in leg1] == [("book_room", {"room_id": room})]
        assert result["final_text"].startswith("Done: BOOKED " + room)
    else:
        assert leg1 == []
        assert decision.text in result["final_text"] and room in result["final_text"]
    # CrewAI's resume consumed the pending feedback it had saved.
    assert _pending_row(workdir, first.state["flow_id"]) is None


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("store", ["postgres", "redis"])
def test_a_store_run_is_declined_crewai_persists_flows_in_sqlite_only(store):
    """CrewAI's one FlowPersistence is SQLiteFlowPersistence: a run on PostgreSQL or Redis is not measured, with that
    reason (never run on SQLite instead). Asked of `stores.why_not_kept`, the rule `arena.evaluate` declines by:
    evaluate itself cannot run here, crewai's environment has no store drivers (psycopg, redis) to reach the server
    with; `arena run durable_state -a crewai --store postgres` from the main environment shows the same reason."""
    from arena import stores

    channel = CrewAIAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert stores.why_not_kept(CrewAIAdapter.info, store) == f"crewai has no {store} store: {channel.mechanism}"
    assert "crewai 1.15.30" in channel.mechanism and "SQLiteFlowPersistence" in channel.mechanism
    assert channel.mechanism.endswith(f"no {'PostgreSQL' if store == 'postgres' else 'Redis'} flow persistence")
