"""pydantic_ai adapter: CallDeferred on request_approval, resumed with DeferredToolResults(calls=...)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

import arenas  # noqa: E402
from adapters import REGISTRY  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext, ModelConfig  # noqa: E402
from tests.conftest import normalised  # noqa: E402

NAME = "pydantic_ai"
ROOT = Path(__file__).resolve().parents[2]


def _chat_requests_during(server, run):
    """Run `run()` and return the chat-completions request bodies the scripted model answered meanwhile."""
    before = len(server.chat.requests)
    results = run()
    return results, server.chat.requests[before:]


@pytest.fixture(scope="module")
def scripted(run_adapter, server):
    return _chat_requests_during(server, lambda: run_adapter(NAME))


@pytest.fixture(scope="module")
def eager(run_adapter, server):
    return _chat_requests_during(server, lambda: run_adapter(NAME, profile="scripted-eager"))


@pytest.fixture(scope="module")
def vanilla(run_adapter):
    return {r.item_id: r for r in run_adapter("vanilla")}


@pytest.fixture(scope="module")
def vanilla_eager(run_adapter):
    return {r.item_id: r for r in run_adapter("vanilla", profile="scripted-eager")}


def _tool_messages(requests, call_name):
    """(user input, tool-message content) for every tool message answering a call named `call_name`."""
    seen = set()
    out = []
    for body in requests:
        messages = body["messages"]
        names = {
            tc["id"]: tc["function"]["name"]
            for m in messages
            if m.get("role") == "assistant"
            for tc in m.get("tool_calls") or []
        }
        user = next(m["content"] for m in messages if m.get("role") == "user")
        for m in messages:
            if m.get("role") == "tool" and names.get(m.get("tool_call_id")) == call_name:
                key = (user, m["tool_call_id"], m["content"])
                if key not in seen:
                    seen.add(key)
                    out.append((user, m["content"]))
    return out


def test_info():
    cls = REGISTRY[NAME].load()
    assert cls.info.name == NAME
    assert cls.info.pause_kind == "native"
    assert cls.info.framework == "pydantic-ai-slim"
    assert REGISTRY[NAME].version == metadata.version("pydantic-ai-slim")
    assert cls.info.capabilities.deny_reason and cls.info.capabilities.approve_note and cls.info.capabilities.free_text


def test_framework_is_imported_lazily():
    code = "import sys, adapters.pydantic_ai; assert 'pydantic_ai' not in sys.modules, 'imported eagerly'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_scripted_all_items_pass(scripted):
    results, _ = scripted
    assert len(results) == 12
    for r in results:
        assert r.status == "passed", (r.item_id, r.error, [c for c in r.checks if not c.passed])
        assert r.checks and all(c.passed for c in r.checks), r.item_id
        assert r.legs == 2, r.item_id


def test_scripted_traces_equal_vanilla(scripted, vanilla):
    results, _ = scripted
    for r in results:
        assert normalised(r) == normalised(vanilla[r.item_id]), r.item_id


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() as the request_approval call's result, once per item."""
    results, requests = scripted
    spec = arenas.load("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    seen = _tool_messages(requests, "request_approval")
    assert sorted(seen) == sorted(expected.items())


def test_state_is_json_and_resumes_in_a_fresh_adapter(server):
    """The suspended state is plain JSON (pydantic-ai's own message history + call id); a new adapter resumes it."""
    spec = arenas.load("human_in_the_loop")
    item = next(i for i in spec.items if i.id == "hitl-03")
    recorder = TraceRecorder()
    ctx = LegContext(
        item=item,
        instructions=spec.instructions,
        model=ModelConfig(name="scripted", base_url=server.base_url, api_key="arena-local"),
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)),
        workdir=str(ROOT),
    )
    cls = REGISTRY[NAME].load()

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


# --- scripted-eager -----------------------------------------------------------------------------
# pydantic-ai runs every ordinary function tool of a model turn and only collects the deferred one:
# with request_approval + book_room in the same turn, book_room EXECUTES in leg 0, before the run
# ends with DeferredToolRequests. Its return is kept in the message history, so on resume it is not
# executed again; the model is sent the decision AND the already-made booking. The trace is vanilla's
# with the book_room call moved (approved items) or added (denied items) just before the suspension.


def test_eager_runs_without_errors(eager):
    results, _ = eager
    assert len(results) == 12
    for r in results:
        assert r.status != "errored", (r.item_id, r.error)
        assert r.legs == 2, r.item_id


def test_eager_book_room_runs_before_the_pause_on_every_item(eager):
    results, _ = eager
    for r in results:
        checks = {c.name: c for c in r.checks}
        assert r.status == "failed", r.item_id
        assert not checks["no_tool_before_suspend"].passed, r.item_id
        assert "ran before the suspension" in checks["no_tool_before_suspend"].reason
        assert not checks["suspended"].passed and "executed before the run suspended" in checks["suspended"].reason
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1, r.item_id  # executed once, never re-executed on resume
        assert books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
        assert "request_approval" not in [e.tool for e in r.trace if e.type == "tool_call"]  # still intercepted


def test_eager_trace_is_vanilla_with_book_room_before_the_pause(eager, vanilla_eager):
    results, _ = eager
    spec = arenas.load("human_in_the_loop")
    for r in results:
        vanilla_events = normalised(vanilla_eager[r.item_id])
        expected = [e for e in vanilla_events if not (e["type"] == "tool_call" and e["tool"] == "book_room")]
        room = next(i for i in spec.items if i.id == r.item_id).metadata["expected_room"]
        booked = {
            "leg": 0,
            "type": "tool_call",
            "tool": "book_room",
            "args": {"room_id": room},
            "result": spec.functions["book_room"](room_id=room),
        }
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, booked)
        assert normalised(r) == expected, r.item_id


def test_eager_resume_replays_the_executed_booking_to_the_model(eager):
    """On resume the model gets the decision for request_approval and the stored book_room result."""
    results, requests = eager
    spec = arenas.load("human_in_the_loop")
    decisions = dict(_tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in spec.items}
    bookings = dict(_tool_messages(requests, "book_room"))
    assert set(bookings) == set(decisions)
    assert all(text.startswith("BOOKED ") for text in bookings.values())
