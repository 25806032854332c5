"""llama_index store: the paused run saved as llama-index's own Context.to_dict() (and the chat memory it skips),
resumed in a new process or twice, a note added to the saved memory while paused, and no postgres or redis
store for it (adapters/llama_index/store.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

from arena import catalog  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402

NAME = "llama_index"
HITL = catalog.load_arena("human_in_the_loop")


# --- durable_state: each leg in a fresh worker process ------------------------------------------------


def test_durable_state_resumes_in_a_new_process(cell):
    """Leg 1 runs in a new worker with only the JSON state (the path of the saved Context.to_dict() and the
    memory beside it); the denial's reason still reaches the model."""
    results = cell(NAME, "durable_state").results
    for r in results:
        assert r.status == "passed", (r.item_id, [c for c in r.checks if not c.passed])
        assert {c.name: c.passed for c in r.checks}.get("resumed_in_new_process") is True
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


def _ctx(server, item, recorder, workdir):
    return LegContext(item=item, instructions=HITL.instructions, model=server.open_item(recorder, "scripted").model,
                      tools=LocalToolBox(ToolExecutor(HITL.tools, HITL.functions, recorder)), workdir=str(workdir))


def test_the_saved_context_is_llama_index_own_and_lacks_the_memory(server, tmp_path):
    """The state points at a file holding Context.to_dict() (llama-index's JSON) and the chat memory's
    messages, which to_dict leaves out; a new adapter resumes from it with the memory put back."""
    item = HITL.item("hitl-03")
    recorder = TraceRecorder()
    ctx = _ctx(server, item, recorder, tmp_path)
    cls = catalog.builtin_adapters()[NAME].load()

    async def legs():
        first = cls()
        leg0 = await first.start(ctx)
        await first.aclose()
        assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
        # the ids are the model's (llama-index's ToolCall.tool_id, handed to the tool body by the agent's step):
        # the pause's, and the one a harness tool is called with
        model_ids = {tc["name"]: tc["id"] for e in recorder.events if e.type == "model_call"
                     for tc in (e.response or {}).get("tool_calls") or []}
        assert leg0.pending.call_id == model_ids["request_approval"]
        search = next(e for e in recorder.events if e.type == "tool_call" and e.tool == "search_rooms")
        assert search.call_id == model_ids["search_rooms"]
        state = json.loads(json.dumps(leg0.state))  # JSON only
        saved = json.loads(Path(state["context"]).read_text())
        assert Path(state["context"]).parent == tmp_path
        data = saved["context"]["state"]["state_data"]["_data"]  # llama-index's DictState, serialised
        assert "scratchpad" in data and "user_msg_str" in data
        assert "memory" not in data  # to_dict() skips the ChatMemoryBuffer (UnserializableKeyWarning)
        assert [m["role"] for m in saved["memory"]][0] == "user"
        second = cls()
        try:
            return await second.resume(state, item.resume_with[0], ctx)
        finally:
            await second.aclose()

    leg1 = asyncio.run(legs())
    assert leg1.status == "finished"
    assert leg1.final_text.startswith("Done: BOOKED R201")
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms", "book_room"]


# --- resume_safety: a saved Context resumed twice -----------------------------------------------------------
# A Context.to_dict() snapshot carries no record of having been resumed: llama-index resumes it again and the
# replayed step books again.


@pytest.fixture(scope="module")
def hostile(cell):
    return cell(NAME, "resume_safety", "retrying").by_id


def test_a_saved_context_resumed_twice_books_twice(hostile):
    r = hostile["rs-double"]
    books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    assert len(books) == 2 and books[0].args == books[1].args
    assert {c.name: c.passed for c in r.checks}["executed_at_most_once"] is False


# --- interruptions: no "always"; a note added while paused goes into the saved chat memory -----------------------


def test_a_note_added_while_paused_reaches_the_model_from_the_chat_memory_and_always_is_unsupported(server):
    """int-19: while R102 waits, "Note from Sam: the Tuesday meeting is now 12 people." is added (add_input, emulated:
    a user ChatMessage appended to the snapshot's saved chat memory). The agent's next LLM call reads memory, then the
    scratchpad, so the note reaches the model ahead of the held turn (first among the new messages, before the
    assistant's book_room call and its result), and the Tuesday booking is R301 Oak, not R202. llama-index has no
    approve/reject-always: the channel is declared unsupported (int-15..17 not measured)."""
    from arena.runner import run_items

    entry = catalog.adapters()[NAME]
    channels = {c.name: c.kind for c in entry.load().info.channels}
    assert channels["always"] == "unsupported" and channels["input"] == "emulated"
    spec = catalog.load_arena("interruptions")
    [r] = run_items(entry.load(), spec, [spec.item("int-19")], server=server, model="careful", timeout_s=60)
    assert r.status == "passed", [c for c in r.checks if not c.passed]
    note = next(e for e in r.trace if e.type == "input")
    assert note.result == "added"
    after = next(e for e in r.trace if e.type == "model_call" and e.seq > note.seq)
    assert [m["role"] for m in after.request["new"]] == ["user", "assistant", "tool"]
    assert after.request["new"][0]["text"] == note.text
    assert sorted(e.args["room_id"] for e in r.trace if e.type == "tool_call" and e.tool == "book_room") == ["R102", "R301"]


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize(("store", "why"), [
    ("postgres", "(PostgresWorkflowStore of llama-agents-server 0.8.0, DBOSRuntime of llama-agents-dbos 0.7.0) are "
                 "not in .venv"),
    ("redis", "has no Redis store for it"),
])
def test_a_store_run_is_declined_no_llama_index_store_holds_the_context_there(tmp_path, store, why):
    """The paused run is the serialised Context (Context.to_dict()), which llama-index keeps in no PostgreSQL or
    Redis store available here: the run on either server is not measured, with that reason, never on a file."""
    from arena import evaluate
    from arena_builtins.adapters.llama_index import LlamaIndexAdapter

    done = evaluate("durable_state", [NAME], items=["durable-01"], store=store, out=tmp_path)
    assert not list(done) and not done.failed
    channel = LlamaIndexAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert done.declined[NAME] == f"{NAME} has no {store} store: {channel.mechanism}"
    assert why in channel.mechanism and "Context.to_dict()" in channel.mechanism
