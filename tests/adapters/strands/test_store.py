"""strands store: the paused run in a FileSessionManager session under the item's work directory, the leg's state JSON
pointing at it; no PostgreSQL or Redis session manager (adapters/strands/store.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("strands")

from arena import catalog  # noqa: E402
from tests.adapters.strands.conftest import NAME, _ctx, _leg  # noqa: E402


def test_state_is_json_pointing_at_the_session_and_resumes_in_a_fresh_adapter(server, tmp_path):
    """The state is JSON: the FileSessionManager session under the item's work directory and the interrupt ids.
    strands itself wrote the pause into the session's agent.json (interrupt state activated, the held id); a new
    adapter (a new Agent) restores it from there and finishes."""
    item, recorder, ctx = _ctx(server, "human_in_the_loop", "hitl-03", tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended"
    wire = json.dumps(leg0.state)
    state = json.loads(wire)
    assert state["storage_dir"].startswith(str(tmp_path))
    [(interrupt_id, held)] = state["interrupts"].items()
    assert held == {"kind": "ask", "call_id": leg0.pending.call_id}
    [agent_json] = list(Path(state["storage_dir"]).rglob("agent.json"))
    persisted = json.loads(agent_json.read_text())["_internal_state"]["interrupt_state"]
    assert persisted["activated"] is True
    assert list(persisted["interrupts"]) == [interrupt_id]
    leg1 = asyncio.run(_leg(lambda a: a.resume(state, item.resume_with[0], ctx)))
    assert leg1.status == "finished"
    assert leg1.final_text.startswith("Done: BOOKED R201")
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms", "book_room"]
    # strands moved its session on: the pause is over, and it says so if resumed again (no second booking)
    persisted = json.loads(agent_json.read_text())["_internal_state"]["interrupt_state"]
    assert persisted["activated"] is False
    with pytest.raises(ValueError, match="not in interrupt state"):
        asyncio.run(_leg(lambda a: a.resume(state, item.resume_with[0], ctx)))
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms", "book_room"]


# --- durable_state: each leg in a fresh worker process --------------------------------------------------------


def test_durable_state_denial_reaches_the_model_after_the_restart(cell):
    """The worker is restarted between legs (test_conformance.py): leg 1 has only the JSON state, rebuilds the
    agent on the FileSessionManager session and the deny reason still comes back to the model."""
    results = cell(NAME, "durable_state").results
    assert [r.status for r in results] == ["passed", "passed"]
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize(("store", "why"), [
    ("postgres", "strands-agents 1.62.0 has no PostgreSQL session manager"),
    ("redis", "no key prefix option) and needs RedisJSON (JSON.GET)"),
])
def test_a_store_run_is_declined_strands_has_no_session_manager_there(tmp_path, store, why):
    """strands ships file, S3 and snapshot session managers only: the run on PostgreSQL or Redis is not measured,
    with that reason, and nothing runs on its FileSessionManager instead."""
    from arena import evaluate
    from arena_builtins.adapters.strands import StrandsAdapter

    done = evaluate("durable_state", [NAME], items=["durable-01"], store=store, out=tmp_path)
    assert not list(done) and not done.failed
    channel = StrandsAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert done.declined[NAME] == f"{NAME} has no {store} store: {channel.mechanism}"
    assert why in channel.mechanism
