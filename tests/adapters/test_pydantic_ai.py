"""pydantic_ai adapter: CallDeferred on request_approval, resumed with DeferredToolResults(calls=...).

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs
ends, traces equal to vanilla's, a gated pause on the gated call, durable_state across a restart) is
test_conformance.py's; this file holds what is pydantic-ai's own, on the same runs."""

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
from tests.conftest import normalised  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "pydantic_ai"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire




def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() as the request_approval call's result, once per item."""
    results, requests = scripted
    spec = catalog.load_arena("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    seen = tool_messages(requests, "request_approval")
    assert sorted(seen) == sorted(expected.items())


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


# --- scripted-eager -----------------------------------------------------------------------------
# pydantic-ai runs every ordinary function tool of a model turn and only collects the deferred one:
# with request_approval + book_room in the same turn, book_room EXECUTES in leg 0, before the run
# ends with DeferredToolRequests. Its return is kept in the message history, so on resume it is not
# executed again; the model is sent the decision AND the already-made booking. The trace is vanilla's
# with the book_room call moved (approved items) or added (denied items) just before the suspension.
# This does not depend on the order of the two calls (book_room comes first on Tuesdays and Thursdays).
# How each item ends (no error, two legs, the checks it fails): test_conformance.py's SIBLING_RAN_FIRST.


def test_eager_book_room_runs_before_the_pause_on_every_item(eager):
    results, _ = eager
    for r in results:
        checks = {c.name: c for c in r.checks}
        assert "ran before the suspension" in checks["no_tool_before_suspend"].reason
        assert "executed before the run suspended" in checks["suspended"].reason
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1, r.item_id  # executed once, never re-executed on resume
        assert books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
        assert "request_approval" not in [e.tool for e in r.trace if e.type == "tool_call"]  # still intercepted


def test_eager_trace_is_vanilla_with_book_room_before_the_pause(eager, vanilla_eager):
    results, _ = eager
    spec = catalog.load_arena("human_in_the_loop")
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
    spec = catalog.load_arena("human_in_the_loop")
    decisions = dict(tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in spec.items}
    bookings = dict(tool_messages(requests, "book_room"))
    assert set(bookings) == set(decisions)
    assert all(text.startswith("BOOKED ") for text in bookings.values())


# --- approval_gate: book_room gated by pydantic-ai's own tool-level approval --------------------
# book_room is a `Tool` with `requires_approval=True`: pydantic-ai never calls its function on the
# model's call, it ends the run with `DeferredToolRequests.approvals`. Resume passes
# `DeferredToolResults(approvals={id: True})` (pydantic-ai then executes the held call itself) or
# `{id: ToolDenied(message=decision.as_text())}` (never executed; the message is the call's result).

GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell(NAME, "approval_gate", "reckless-parallel").wire


@pytest.fixture(scope="module")
def vanilla_gate_parallel(vanilla_by_id):
    return vanilla_by_id("reckless-parallel", "approval_gate")


def test_gate_denial_reaches_model_as_book_room_result(gate):
    """Denied: the model reads ToolDenied's message, decision.as_text() ("DENIED: reason"), as book_room's
    result; approved: book_room's real result (pydantic-ai ran it). One tool message per item."""
    results, requests = gate
    seen = tool_messages(requests, "book_room")
    expected = []
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            expected.append((item.input, book.result))
        else:
            assert decision.as_text().startswith("DENIED: ")
            expected.append((item.input, decision.as_text()))
            assert f"({decision.text})" in r.trace[-1].text  # the reason itself came back to the model
    assert sorted(seen) == sorted(expected)


def test_gate_reckless_parallel_sibling_search_runs_before_the_pause(gate_parallel, vanilla_gate_parallel):
    """reckless-parallel emits book_room + a second search_rooms in one turn. pydantic-ai executes the
    ordinary sibling (search_rooms) in that turn and only holds the gated call, so the second search
    runs in leg 0 before the suspension, whatever the decision. Vanilla holds the sibling: it runs it
    after book_room on approve and never on deny. So the trace is vanilla's with that search moved
    (approved) or added (denied) just before the suspension; all checks still pass (a read tool)."""
    for r in gate_parallel[0]:
        item = GATE_ITEMS[r.item_id]
        v = normalised(vanilla_gate_parallel[r.item_id])
        first_search = v[0]
        assert first_search["type"] == "tool_call" and first_search["tool"] == "search_rooms"
        expected = [e for e in v if not (e["type"] == "tool_call" and e["tool"] == "search_rooms" and e["leg"] == 1)]
        if item.resume_with[0].approved:
            assert len(expected) == len(v) - 1, r.item_id  # vanilla ran it after the approval
        else:
            assert expected == v, r.item_id  # vanilla never ran it
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {**first_search, "leg": 0})
        assert normalised(r) == expected, r.item_id


# --- durable_state: each leg in a fresh worker process --------------------------------------------


def test_durable_state_denial_reaches_the_model_after_the_restart(cell):
    """The worker is restarted between legs (test_conformance.py): leg 1 has only the JSON state
    (pydantic-ai's serialised message history + the deferred call id) and rebuilds the run from it;
    the deny reason still comes back to the model."""
    results = cell(NAME, "durable_state").results
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


# --- resume_safety: the resumed leg's own tool box -----------------------------------------------------------


def test_a_resumed_leg_calls_its_own_tool_box_so_a_concurrent_second_resume_overlaps_the_first(tmp_path):
    """The agent is built once per adapter instance; its tools must call the tool box of the leg that runs,
    not the first leg's. rs-double-concurrent holds the first resume's book_room in its own tool box until
    the second resume has ended: both resumes come before any booking (with the first leg's tool box, the
    first resume booked and finished before the second began)."""
    from arena import evaluate

    run = evaluate("resume_safety", [NAME], items=["rs-double-concurrent"], out=tmp_path, timeout=120)[0]
    r = run.results[0]
    resumes = [e.seq for e in r.trace if e.type == "resumed"]
    books = [e.seq for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    replayed = next(e.seq for e in r.trace if e.type == "replayed")
    assert len(resumes) == 2 and len(books) == 2
    assert max(resumes) < min(books) and replayed < max(books), [(e.seq, e.type, e.tool) for e in r.trace]


# --- interruptions: a new message instead of a decision -------------------------------------------------------


def test_a_new_message_at_the_gate_is_a_new_prompt_on_the_repaired_history(run_adapter):
    """int-01: at the pause on book_room(R102) the human types "Actually we are 10 people". The adapter runs the agent
    with that text as the prompt on the paused history passed through `repair_messages` (what pydantic-ai documents
    for a new prompt on a history with unanswered calls, which Agent.run refuses). pydantic-ai closes the held call
    with its synthesized 'interrupted' result, sent to the model before the message; R102 never runs, and the
    approval of the next pause books R202."""
    [r] = run_adapter(NAME, profile="careful", arena="interruptions", items=["int-01"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    assert checks["pending_call_not_run"].reason.startswith(
        "cancelled: the model was sent a result for book_room{'room_id': 'R102'} without it running: "
        "'The tool call was interrupted before a result was produced.'")
    pauses = [(e.leg, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, {"room_id": "R102"}), (1, {"room_id": "R202"})]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R202"}]
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    assert [m.get("role") for m in first.request["new"]][-2:] == ["tool", "user"]  # the synthesized result, the message
    assert first.request["new"][-1]["text"] == "Actually we are 10 people, not 4."


# --- interruptions: input while paused (the `input` channel); no "approve always" ------------------------------


def test_input_while_paused_is_the_user_prompt_alongside_the_deferred_results(run_adapter):
    """int-19: while book_room(R102) waits, Sam's note is added (`add_input`, no decision). pydantic-ai keeps no paused
    run, so the note waits in the state and the approval's resume sends it as `user_prompt` alongside
    `deferred_tool_results` (docs/deferred-tools.md): the model reads it right after R102's result, before it searches
    for Tuesday again, and books R301 (12 seats). "Approve always" has no pydantic-ai counterpart: declared unsupported,
    so int-15..17 are not measured."""
    cls = catalog.builtin_adapters()[NAME].load()
    assert cls.info.kind("always") == "unsupported" and cls.info.kind("input") == "native"
    [r] = run_adapter(NAME, profile="careful", arena="interruptions", items=["int-19"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    assert checks["midrun_input_seen"].reason == "1 input(s) added and seen by the model before its next booking request"
    assert [e.result for e in r.trace if e.type == "input"] == ["added"]
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    assert [(m.get("role"), m.get("text")) for m in first.request["new"]][-2:] == [
        ("tool", next(e.result for e in r.trace if e.type == "tool_call" and e.args == {"room_id": "R102"})),
        ("user", "Note from Sam: the Tuesday meeting is now 12 people.")]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [
        {"room_id": "R102"}, {"room_id": "R301"}]


# --- delegation: agent delegation (nested) and an output-function handoff -------------------------------------


def test_delegates_called_as_tools_pause_the_desk_with_each_call_named_by_its_agent(run_adapter):
    """del-11: the desk calls both delegates in one turn (tools named after them, each running `delegate.run(task)`);
    each delegate's run ends on its own gated call (`requires_approval=True`), which the delegating tool forwards by
    raising `ApprovalRequired(metadata=...)` (pydantic-ai does not carry it by itself, #3527): one pause holds both,
    each named by the desk call pydantic-ai holds. Resumed, pydantic-ai calls each delegating tool again and each
    delegate goes on from its own history: the approved booking runs once, the denied cancellation never, and its
    reason is the changes agent's ToolDenied result; no earlier tool call runs again."""
    cls = catalog.builtin_adapters()[NAME].load()
    assert cls.info.kind("nested") == "emulated" and cls.info.kind("handoff") == "emulated"
    [r] = run_adapter(NAME, profile="careful", arena="delegation", items=["del-11"], timeout_s=60)
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    pause = next(e for e in r.trace if e.type == "suspended")
    assert sorted((p["tool"], p["agent"]) for p in pause.pending) == [
        ("book_flight", "booking_agent"), ("cancel_flight", "changes_agent")]
    ran = [(e.leg, e.tool) for e in r.trace if e.type == "tool_call"]
    assert sorted(ran) == [(0, "get_booking"), (0, "search_flights"), (1, "book_flight")]
    changes = next(e for e in r.trace
                   if e.type == "model_call" and e.leg == 1 and "cancel_flight" in e.request["tools"])
    last = changes.request["new"][-1]
    assert (last["role"], last["text"]) == ("tool", "DENIED: keep the outbound")


def test_a_handoff_is_an_output_function_and_the_resume_is_the_delegates_own_run(run_adapter):
    """del-06: the desk is offered `transfer_to_<name>` output tools (`ToolOutput(fn, name=...)`), not the airline's;
    the model calls one, the output function runs the booking agent on the desk's history, and the booking agent's
    held book_flight is the run's pause, named by it. The resume runs that agent alone: no desk request after it."""
    [r] = run_adapter(NAME, profile="careful", arena="delegation", items=["del-06"], timeout_s=60)
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    calls = [e for e in r.trace if e.type == "model_call"]
    assert calls[0].request["tools"] == ["transfer_to_booking_agent", "transfer_to_changes_agent"]
    assert all(c.request["tools"] == ["search_flights", "seat_map", "book_flight"] for c in calls[1:])
    pause = next(e for e in r.trace if e.type == "suspended")
    assert [(p["tool"], p["agent"]) for p in pause.pending] == [("book_flight", "booking_agent")]
    assert [(e.leg, e.tool) for e in r.trace if e.type == "tool_call"] == [
        (0, "search_flights"), (0, "seat_map"), (1, "book_flight")]


# --- --store postgres|redis: the message history JSON on the item's server ---------------------------------------


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
    """The history (ModelMessagesTypeAdapter JSON) and the held call's id are a row of pydantic_ai_paused_runs in the
    item's database, created there; the server's shared database gets no such table."""
    import psycopg

    def inspect(store, state, call_id):
        with psycopg.connect(store.url) as conn:
            rows = conn.execute("SELECT messages::text, state::text FROM pydantic_ai_paused_runs WHERE id = %s",
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
