"""llama_index adapter: a tool awaits Context.wait_for_event(HumanResponseEvent); the pause is the workflow idle on it.

What every adapter shares is test_conformance.py's; this file holds what is llama-index's own, on the same
cells (tests/adapters/conftest.py): the offline switches, the decision as the waiting tool's result, a
pause resumed in a new process from the saved Context.to_dict() alone (and the memory that to_dict skips),
the sibling call run before the pause, and the waiting step replayed on resume."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

from arena import catalog  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "llama_index"
ROOT = Path(__file__).resolve().parents[2]
HITL = catalog.load_arena("human_in_the_loop")
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}
CL100K = hashlib.sha1(b"https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken").hexdigest()




# --- offline ------------------------------------------------------------------------------------------

_OFFLINE_PROBE = """
import json, os, socket, sys
refused = []
real = socket.socket.connect
def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1", "localhost"):
        refused.append(repr(address))
        raise OSError("offline")
    return real(self, address)
socket.socket.connect = connect
real_lookup = socket.getaddrinfo
def getaddrinfo(host, *a, **k):
    if host not in (None, "127.0.0.1", "::1", "localhost"):
        refused.append("lookup " + str(host))
        raise socket.gaierror("offline")
    return real_lookup(host, *a, **k)
socket.getaddrinfo = getaddrinfo
for key in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "LITELLM_MODE", "OTEL_SDK_DISABLED",
            "TIKTOKEN_CACHE_DIR"):
    os.environ.pop(key, None)
from arena_builtins.adapters import llama_index as adapter
before = "litellm" in sys.modules or "llama_index.core" in sys.modules
adapter._import()
import litellm
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.llms import ChatMessage
# the chat memory counts tokens with llama-index's global tokenizer (tiktoken): it must load offline
memory = ChatMemoryBuffer.from_defaults(chat_history=[ChatMessage(role="user", content="hello there")])
memory.get()
import llama_index.core
from llama_index.core.utils import get_tokenizer
tokens = len(get_tokenizer()("hello there"))
print(json.dumps({
    "tokens": tokens,
    "bundled_tiktoken_cache": os.path.join(os.path.dirname(llama_index.core.__file__), "_static", "tiktoken_cache"),
    "imported_before": before,
    "env": {k: os.environ.get(k) for k in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "LITELLM_MODE",
                                          "OTEL_SDK_DISABLED")},
    "tiktoken_cache": os.environ.get("TIKTOKEN_CACHE_DIR"),
    "callbacks": [len(getattr(litellm, n)) for n in ("callbacks", "success_callback", "failure_callback",
                                                     "input_callback", "service_callback",
                                                     "_async_success_callback", "_async_failure_callback")],
    "telemetry": litellm.telemetry,
    "refused": refused,
}))
"""


@pytest.fixture(scope="module")
def offline_probe() -> dict:
    """A fresh process with none of the switches set and every non-loopback connection refused: import
    through the adapter, then count tokens as the agent's chat memory does."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", _OFFLINE_PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_offline_switches_are_on_after_the_adapter_imports_the_framework(offline_probe):
    assert offline_probe["imported_before"] is False  # importing the adapter's module imports no framework
    assert offline_probe["env"] == {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
                                    "LITELLM_MODE": "PRODUCTION", "OTEL_SDK_DISABLED": "true"}
    assert offline_probe["callbacks"] == [0] * 7  # no LiteLLM logging/observability callbacks
    assert offline_probe["telemetry"] is False


def test_the_tokenizer_loads_from_a_bundled_cache_without_any_connection(offline_probe):
    """The chat memory's tokenizer (tiktoken cl100k_base) loads from a bundled cache: TIKTOKEN_CACHE_DIR when
    set (LiteLLM points it at its own bundled tokenizers once its encoding module is imported), else the one
    llama-index-core ships and points to while it loads. The file must be there, or tiktoken would download it."""
    cache = offline_probe["tiktoken_cache"] or offline_probe["bundled_tiktoken_cache"]
    assert os.path.isfile(os.path.join(cache, CL100K)), cache
    assert offline_probe["tokens"] > 0  # the memory counted tokens, and nothing left loopback meanwhile
    assert offline_probe["refused"] == []


def test_the_runs_stay_on_loopback(cell):
    assert cell(NAME).refused == []
    assert cell(NAME, "approval_gate", "reckless").refused == []


# --- human_in_the_loop: the decision is the waiting approval tool's result ------------------------------


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The HumanResponseEvent's decision text is what request_approval returns: once per item, a deny
    reason and an approve note included."""
    results, requests = scripted
    assert [r.status for r in results] == ["passed"] * len(HITL.items)
    expected = {i.input: i.resume_with[0].as_text() for i in HITL.items}
    assert any(text.startswith("DENIED: ") and len(text) > len("DENIED: ") for text in expected.values())
    assert sorted(tool_messages(requests, "request_approval")) == sorted(expected.items())


# --- scripted-eager: a sibling book_room in the pausing turn ------------------------------------------
# FunctionAgent sends each tool call of the turn as its own ToolCall event and runs them at once; only the
# waiting body is held, so book_room executes in leg 0, before the workflow goes idle, and its result stays
# in the serialised context: never executed again on resume.


def test_eager_book_room_runs_before_the_pause_and_never_again(eager):
    results, requests = eager
    for r in results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1 and books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
        failed = {c.name for c in r.checks if not c.passed}
        assert "no_tool_before_suspend" in failed, r.item_id
    # on resume the model is sent the decision and the booking already made
    bookings = dict(tool_messages(requests, "book_room"))
    assert set(bookings) == {i.input for i in HITL.items}
    assert all(text.startswith("BOOKED ") for text in bookings.values())


# --- approval_gate: the gated tool's body waits before it acts ----------------------------------------


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


def test_gate_denial_reaches_model_as_book_room_result(gate):
    """Denied: book_room never runs and returns decision.as_text() ("DENIED: reason"); approved: its
    real result, from the one harness call the replayed step made after the wait."""
    results, requests = gate
    expected = []
    for r in results:
        assert r.status == "passed", (r.item_id, [c for c in r.checks if not c.passed])
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        if decision.approved:
            assert [b.leg for b in books] == [1], r.item_id
            expected.append((GATE_ITEMS[r.item_id].input, books[0].result))
        else:
            assert books == [] and decision.as_text().startswith("DENIED: ")
            expected.append((GATE_ITEMS[r.item_id].input, decision.as_text()))
    assert sorted(tool_messages(requests, "book_room")) == sorted(expected)


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


# --- flight_booking: the waiting step is replayed in full -----------------------------------------------
# purchase_hold's body prepares, waits, then commits or aborts. llama-index re-runs a waiting step from the top
# when its Context is restored (it waits again) and once more when the event arrives: the prepare above the wait
# runs once in the pausing leg and twice in the resuming one, and the commit uses the last prepare's intent.


def test_body_pause_prepare_runs_again_twice_on_resume(cell):
    results = cell(NAME, "flight_booking", "careful").results
    checked = 0
    for r in results:
        pauses = [e for e in r.trace if e.type == "suspended" and e.tool == "purchase_hold"]
        if not pauses:
            continue
        leg = pauses[0].leg
        prepares = [e.leg for e in r.trace if e.type == "tool_call" and e.tool == "purchase_hold.prepare"]
        assert prepares.count(leg) == 1 and prepares.count(leg + 1) == 2, (r.item_id, prepares)
        ends = [e for e in r.trace if e.type == "tool_call" and e.tool in ("purchase_hold.commit", "purchase_hold.abort")]
        assert [e.leg for e in ends] == [leg + 1], r.item_id  # one commit or abort, after the decision
        last = [e for e in r.trace if e.type == "tool_call" and e.tool == "purchase_hold.prepare"][-1]
        assert ends[0].args == {"intent": json.loads(last.result)["intent"]}, r.item_id
        checked += 1
    assert checked >= 3


# --- resume_safety: several held calls, and a saved Context resumed twice -------------------------------
# Each gated call waits under its own waiter id; a call without a decision gets no event and keeps waiting,
# so the run goes idle again and the leg suspends on it. A Context.to_dict() snapshot carries no record of
# having been resumed: llama-index resumes it again and the replayed step books again.


@pytest.fixture(scope="module")
def hostile(cell):
    return cell(NAME, "resume_safety", "retrying").by_id


def test_a_held_call_without_a_decision_keeps_waiting(hostile):
    r = hostile["rs-fewer"]
    pauses = [(e.leg, e.tool, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, "book_room", {"room_id": "R101"}), (1, "book_room", {"room_id": "R202"})]
    books = [(e.leg, e.args["room_id"]) for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    assert books == [(1, "R101")]  # the decided call ran, the other did not
    # no decision at all: nothing is sent, the same call is still held
    empty = hostile["rs-empty-one"]
    assert [(e.leg, e.tool) for e in empty.trace if e.type == "suspended"] == [(0, "book_room"), (1, "book_room")]
    assert not [e for e in empty.trace if e.type == "tool_call" and e.tool == "book_room"]


def test_a_saved_context_resumed_twice_books_twice(hostile):
    r = hostile["rs-double"]
    books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    assert len(books) == 2 and books[0].args == books[1].args
    assert {c.name: c.passed for c in r.checks}["executed_at_most_once"] is False


# --- a streamed run: the same stream_events(), read as a UI reads it ---------------------------------------------


def test_a_streamed_run_tells_the_calls_the_wait_and_the_replayed_step(server):
    """human_in_the_loop streamed: the leg reads the stream it always drives and tells what it says. The wait is
    told once, from its InputRequiredEvent, in the leg that stops there; in the resumed leg the waiting step is
    replayed (at the restore and again when the decision arrives), so its ToolCall is told twice before its
    result, the decision text. The items end as in a plain run and every claim holds against the tool log."""
    from arena.runner import run_items

    entry = catalog.adapters()[NAME]
    items = [HITL.item("hitl-01"), HITL.item("hitl-02")]
    results = run_items(entry.load(), HITL, items, server=server, model="scripted", timeout_s=180, stream=True)
    for r, item in zip(results, items):
        assert r.status == "passed" and {c.name: c.passed for c in r.checks}["stream_matches_run"]
        asked = [(e.leg, e.text, e.result) for e in r.trace if e.type == "streamed" and e.tool == "request_approval"]
        assert asked == [(0, "tool_call", None), (0, "pause", None), (1, "tool_call", None), (1, "tool_call", None),
                         (1, "tool_result", item.resume_with[0].as_text())]


# --- interruptions: a new message at the gate is the waiting call's HumanResponseEvent -------------------------


def test_a_message_at_the_gate_is_the_held_calls_result(server):
    """int-01: R102 waits at the gate and the human types "Actually we are 10 people, not 4." instead of deciding.
    The message is sent as the waiting call's HumanResponseEvent (llama-index's one input for a waiting run): the
    gated body does not run and returns the text as book_room's result, which the model reads as the human's words:
    it searches again and asks for R202, which is approved and booked."""
    from arena.runner import run_items

    spec = catalog.load_arena("interruptions")
    item = spec.item("int-01")
    [r] = run_items(catalog.adapters()[NAME].load(), spec, [item], server=server, model="careful", timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert checks["pending_call_not_run"].reason.startswith(
        "cancelled: the model was sent a result for book_room{'room_id': 'R102'} without it running: "
        "'Actually we are 10 people, not 4.'")
    assert checks["decision_reached_model"].passed
    assert [(e.leg, (e.args or {}).get("room_id")) for e in r.trace if e.type == "suspended"] == [(0, "R102"), (1, "R202")]
    assert [(e.args or {}).get("room_id") for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == ["R202"]
    assert r.status == "passed", [c for c in r.checks if not c.passed]


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


# --- delegation: a handoff inside one AgentWorkflow pauses; an agent called as a tool never does -------------------

DELEGATION = catalog.load_arena("delegation")


def test_a_handoff_delegates_gated_call_pauses_the_run_with_the_agent_named(server):
    """del-06 (approve) and del-07 (deny): the desk calls AgentWorkflow's own handoff tool, `handoff(to_agent,
    reason)` (the one name llama-index gives it); the delegate's gated call waits in the same workflow, so the run
    pauses on it, the pause names the delegate (the store's current_agent_name) and the decision reaches it."""
    from arena.runner import run_items

    items = [DELEGATION.item("del-06"), DELEGATION.item("del-07")]
    results = run_items(catalog.adapters()[NAME].load(), DELEGATION, items, server=server, model="careful",
                        timeout_s=120)
    for r, (agent, tool) in zip(results, [("booking_agent", "book_flight"), ("changes_agent", "cancel_flight")]):
        assert r.status == "passed", (r.item_id, [c for c in r.checks if not c.passed])
        offered = [e.request["tools"] for e in r.trace if e.type == "model_call"]
        assert offered[0] == ["handoff"] and tool in offered[1]  # the desk's request, then the delegate's
        [pause] = [e for e in r.trace if e.type == "suspended"]
        assert [(p["tool"], p["agent"]) for p in pause.pending] == [(tool, agent)]


def test_a_gated_call_inside_an_agent_called_as_a_tool_never_pauses_the_run(server):
    """del-01, run although the `nested` channel is declared unsupported: the booking agent, called through the
    Orchestrator pattern's tool (its body awaits sub_agent.run()), reaches book_flight, whose wait pauses only that
    inner workflow; the outer run never goes idle, so the leg neither suspends nor ends (the item times out) and
    book_flight never runs."""
    from arena.runner import run_items

    entry = catalog.adapters()[NAME]
    assert {c.name: c.kind for c in entry.load().info.channels}["nested"] == "unsupported"
    [r] = run_items(entry.load(), DELEGATION, [DELEGATION.item("del-01")], server=server, model="careful",
                    timeout_s=25)
    asked = [c["name"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []]
    assert asked == ["booking_agent", "search_flights", "seat_map", "book_flight"]
    assert not [e for e in r.trace if e.type in ("suspended", "final")]
    assert "book_flight" not in [e.tool for e in r.trace if e.type == "tool_call"]
    assert any("timed out" in (e.text or "") for e in r.trace if e.type == "error")


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
