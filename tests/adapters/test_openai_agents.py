"""The OpenAI Agents SDK adapter: native tool approval (needs_approval -> interruptions -> RunState).

What every adapter shares (its declared info, how each item of its runs ends, traces equal to
vanilla's, a gated pause on the gated call, durable_state across a restart) is test_conformance.py's;
this file holds what is the SDK's own, on the same runs."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.openai_agents import OpenAIAgentsAdapter  # noqa: E402
from arena.observed import requesting_call  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.conftest import normalised  # noqa: E402

APPROVAL = "request_approval"
GATE_ITEMS = {i.id: i for i in catalog.load_arena("approval_gate").items}


def _turn_at_pause(r) -> list[str]:
    """The tool names, in order, of the model answer that asked for the call the run paused on."""
    pause = next(e for e in r.trace if e.type == "suspended")
    asked = requesting_call(r.trace, pause)
    assert asked is not None, r.item_id
    return [c["name"] for c in asked.response["tool_calls"]]


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("openai_agents").wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell("openai_agents", profile="scripted-eager").results


def test_model_receives_decision_as_approval_tool_result(scripted):
    """On the wire: the request_approval call's tool message is exactly decision.as_text().

    Approve: the SDK ran the adapter-owned tool body after RunState.approve(); deny: the SDK sent
    RunState.reject(rejection_message=...) verbatim.
    """
    results, requests = scripted
    answered: dict[str, str] = {}  # approval summary -> the tool result the model saw
    for body in requests:
        calls = {}
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == APPROVAL:
                    calls[tc["id"]] = json.loads(tc["function"]["arguments"])["summary"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                answered[calls[m["tool_call_id"]]] = m["content"]
    from arena import catalog

    items = {i.id: i for i in catalog.load_arena("human_in_the_loop").items}
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        assert answered[pause.args["summary"]] == items[r.item_id].resume_with[0].as_text(), r.item_id


def test_eager_sibling_executes_before_the_pause(eager, vanilla_eager):
    """scripted-eager: the SDK runs book_room (no needs_approval) in the same turn as it interrupts
    on request_approval, so book_room executes BEFORE the suspension. The pause itself is real and
    the result is kept: on approve the SDK does not run book_room again (the model sees its earlier
    BOOKED result and finishes); on deny it has already run. Exact difference from vanilla (which
    holds the sibling): the approved item's leg-1 book_room moves to leg 0 before `suspended`; a
    denied item gains a leg-0 book_room before `suspended`. Everything else is identical. On
    approved items nothing consequential runs after the approval, so args_as_requested fails too;
    no_replay passes (book_room runs once): test_conformance.py's SIBLING_RAN_FIRST. The same holds
    whichever of the two calls the turn lists first (Tuesdays and Thursdays: book_room first), so the
    order of the turn plays no part here.
    """
    orders = set()
    for r in eager:
        v = vanilla_eager[r.item_id]
        turn = _turn_at_pause(r)
        assert sorted(turn) == ["book_room", APPROVAL], r.item_id
        orders.add(tuple(turn))
        approved = r.trace[[e.type for e in r.trace].index("resumed")].decision.approved
        got = normalised(r)
        expected = normalised(v)
        if approved:
            i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
            book = {**expected.pop(i), "leg": 0}
        else:
            assert not any(e.get("tool") == "book_room" for e in expected)
            book = next(e for e in got if e.get("tool") == "book_room")
            assert book["leg"] == 0 and book["result"].startswith("BOOKED")
        s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(s, book)
        assert got == expected, r.item_id
        assert sum(e.get("tool") == "book_room" for e in got) == 1
    assert orders == {("book_room", APPROVAL), (APPROVAL, "book_room")}  # both orders were exercised


class _ResumeInFreshAdapter(OpenAIAgentsAdapter):
    """Resumes each leg in a brand-new adapter (new Agent, new client) from the serialised RunState."""

    async def resume(self, state, decision, ctx):
        assert isinstance(state, str)
        assert json.loads(state)  # RunState.to_string(): plain JSON
        fresh = OpenAIAgentsAdapter()
        try:
            return await fresh.resume(state, decision, ctx)
        finally:
            await fresh.aclose()


def test_resume_from_serialised_state_in_fresh_adapter(run_adapter, vanilla):
    results = run_adapter(_ResumeInFreshAdapter, items=["hitl-01", "hitl-02", "hitl-03"])
    assert [r.status for r in results] == ["passed"] * 3
    for r in results:
        assert normalised(r) == normalised(vanilla[r.item_id]), r.item_id


def test_tracing_exports_nothing(scripted, eager):
    from agents.tracing import processors

    proc = processors._global_processor
    # The default exporter's worker thread starts on the first queued trace/span; it never did.
    assert proc is None or proc._worker_thread is None


# --- approval_gate: needs_approval on the gated book_room --------------------------------------------


@pytest.fixture(scope="module")
def gate(cell):
    return cell("openai_agents", "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("openai_agents", "approval_gate", "reckless-parallel").wire


def _assert_model_saw_decision(results, requests):
    """On the wire, book_room's tool message: its real result after RunState.approve(); after
    RunState.reject(rejection_message=...) exactly decision.as_text()."""
    calls: set[str] = set()
    seen: list[str] = []
    for body in requests:
        for m in body["messages"]:
            calls.update(tc["id"] for tc in m.get("tool_calls") or [] if tc["function"]["name"] == "book_room")
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                seen.append(m["content"])
    for r in results:
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        if decision.approved:
            assert next(e.result for e in r.trace if e.type == "tool_call" and e.tool == "book_room") in seen, r.item_id
        else:
            assert decision.as_text() in seen, r.item_id


def test_gate_reckless_model_reads_the_decision(gate):
    _assert_model_saw_decision(*gate)


def test_gate_parallel_runs_the_sibling_before_the_pause(gate_parallel, vanilla_by_id):
    """reckless-parallel: book_room and a second search_rooms in one turn. The SDK runs the turn's
    tools that need no approval (search_rooms) and interrupts on book_room in the same step, so the
    sibling search executes BEFORE the suspension; the RunState keeps its output and the resume does
    not run it again. book_room itself is held: every check passes. Exact difference from vanilla
    (which holds the whole turn): approved, vanilla's leg-1 search_rooms moves to leg 0 before
    `suspended`; denied, a leg-0 search_rooms (same args as the first) is gained before `suspended`.
    The same whichever of the two calls the turn lists first (Tuesdays and Thursdays: book_room first).
    """
    results, requests = gate_parallel
    vanilla = vanilla_by_id("reckless-parallel", "approval_gate")
    orders = set()
    for r in results:
        turn = _turn_at_pause(r)
        book_first = ["book_room", "search_rooms"]
        assert turn == (book_first if policy_book_first(GATE_ITEMS[r.item_id].metadata["day"]) else book_first[::-1]), r.item_id
        orders.add(tuple(turn))
        got, expected = normalised(r), normalised(vanilla[r.item_id])
        searches = [k for k, e in enumerate(expected) if e.get("tool") == "search_rooms"]
        if GATE_ITEMS[r.item_id].resume_with[0].approved:
            assert [expected[k]["leg"] for k in searches] == [0, 1]
            sibling = {**expected.pop(searches[1]), "leg": 0}
        else:
            assert [expected[k]["leg"] for k in searches] == [0]
            sibling = expected[searches[0]]
        expected.insert(next(k for k, e in enumerate(expected) if e["type"] == "suspended"), sibling)
        assert got == expected, r.item_id
    assert orders == {("book_room", "search_rooms"), ("search_rooms", "book_room")}
    _assert_model_saw_decision(results, requests)


# --- interruptions: a new message instead of a decision -------------------------------------------------------


def test_a_new_message_at_the_gate_is_staged_and_the_old_call_stays_pending(run_adapter):
    """int-01: the message is staged with RunState.add_input (the SDK's documented way to give a paused run new
    input) and nothing is decided on the held book_room. The SDK admits staged input only before its next model
    call, after the unfinished work: the message leg pauses again on the same book_room(R102) without asking the
    model. The human's next decision (approve, meant for the new booking) then runs R102, and only after it does
    the model read the message (and ask to book R202, a third pause the item has no decision for)."""
    [r] = run_adapter("openai_agents", profile="careful", arena="interruptions", items=["int-01"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed"
    pauses = [(e.leg, e.tool, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, "book_room", {"room_id": "R102"}), (1, "book_room", {"room_id": "R102"}),
                      (2, "book_room", {"room_id": "R202"})]
    assert not [e for e in r.trace if e.type in ("tool_call", "model_call") and e.leg == 1]
    assert not checks["pending_call_not_run"].passed
    assert checks["pending_call_not_run"].reason.startswith("ran: book_room{'room_id': 'R102'} ran after the message")
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 2)
    assert [m.get("role") for m in first.request["new"]][-2:] == ["tool", "user"]  # BOOKED R102, then the message
    assert first.request["new"][-1]["text"] == "Actually we are 10 people, not 4."
    assert r.error.startswith("suspended a 3. time")


# --- interruptions: approve/reject always (the SDK's sticky decision) and input while paused -------------------------


def test_sticky_rejection_and_staged_input_are_the_sdks_own(run_adapter):
    """int-16: RunState.reject(item, always_reject=True, rejection_message=...) at the only pause; the later
    book_room(R101) is decided by the runner without an interruption and answered with the same rejection message.
    int-17: at one pause holding both bookings, the sticky approval of R102 (applied first, in get_interruptions()
    order) and the explicit rejection of R301 each decide their own call. int-19: the note staged with
    RunState.add_input while R102 waits reaches the model as a user message right after R102's result, before its
    next booking request, which is then R301 (12 people), not R202."""
    results = {r.item_id: r for r in run_adapter("openai_agents", profile="careful", arena="interruptions",
                                                 items=["int-16", "int-17", "int-19"], timeout_s=60)}
    assert {i: r.status for i, r in results.items()} == {"int-16": "passed", "int-17": "passed", "int-19": "passed"}
    sticky = results["int-16"].trace
    assert [(e.tool, e.args) for e in sticky if e.type == "suspended"] == [("book_room", {"room_id": "R201"})]
    assert not [e for e in sticky if e.type == "tool_call" and e.tool == "book_room"]
    asked = [c["id"] for e in sticky if e.type == "model_call" for c in e.response.get("tool_calls") or []
             if c["name"] == "book_room" and c["args"] == {"room_id": "R101"}]
    answers = [m for e in sticky if e.type == "model_call" for m in e.request.get("new") or [] if m.get("role") == "tool"]
    assert len(asked) == 1 and answers[-1]["text"] == "DENIED: no room bookings this week"
    noted = results["int-19"].trace
    after = next(e for e in noted if e.type == "model_call" and e.leg == 1)
    assert [(m["role"], str(m["text"])[:6]) for m in after.request["new"][-2:]] == [("tool", "BOOKED"), ("user", "Note f")]
    assert after.response["tool_calls"][0]["args"] == {"capacity": 12, "day": "Tuesday"}
    assert sorted(e.args["room_id"] for e in noted if e.type == "tool_call" and e.tool == "book_room") == ["R102", "R301"]


# --- delegation: Agent.as_tool (nested) and handoffs, gated inside the delegate ------------------------------------


def test_a_delegates_gated_call_pauses_the_whole_run_naming_the_delegate(run_adapter):
    """del-10 (both delegates via Agent.as_tool in one turn), del-07 (a handoff): each delegate is an Agent of its own,
    offered only its tools; its needs_approval call surfaces in the OUTER RunResult.interruptions, and the pause
    names the agent from ToolApprovalItem.agent. After the decisions (routed by call id to the nested run's state),
    each approved call runs once, a denied one never, and no delegate's earlier tool call runs again."""
    results = {r.item_id: r for r in run_adapter("openai_agents", profile="careful", arena="delegation",
                                                 items=["del-07", "del-10"], timeout_s=60)}
    assert {i: r.status for i, r in results.items()} == {"del-07": "passed", "del-10": "passed"}
    pause = next(e for e in results["del-10"].trace if e.type == "suspended")
    assert [(p["tool"], p["agent"]) for p in pause.pending] == [("book_flight", "booking_agent"),
                                                                ("cancel_flight", "changes_agent")]
    offered = {tuple(e.request["tools"]) for e in results["del-10"].trace if e.type == "model_call"}
    assert offered == {("booking_agent", "changes_agent"), ("search_flights", "seat_map", "book_flight"),
                       ("get_booking", "cancel_flight")}
    ran = [e.tool for e in results["del-10"].trace if e.type == "tool_call"]
    assert sorted(ran) == ["book_flight", "cancel_flight", "get_booking", "search_flights", "seat_map"]
    handed = results["del-07"].trace
    first = next(e for e in handed if e.type == "model_call")
    assert first.request["tools"] == ["transfer_to_booking_agent", "transfer_to_changes_agent"]
    assert [(p["tool"], p["agent"]) for p in next(e for e in handed if e.type == "suspended").pending] == [
        ("cancel_flight", "changes_agent")]
    assert not [e for e in handed if e.type == "tool_call" and e.tool == "cancel_flight"]


def test_nested_approvals_resume_from_the_serialised_state_in_a_fresh_adapter(run_adapter):
    """del-11: the outer RunState.to_string() carries each nested agent-tool run's own state (`agent_run_state`), so
    a brand-new adapter (new Agents) restores both delegates' pauses with RunState.from_string(desk, s) and routes
    approve / reject to each by call id."""
    states: list[str] = []

    class Fresh(_ResumeInFreshAdapter):
        async def resume(self, state, decision, ctx):
            states.append(state)
            return await super().resume(state, decision, ctx)

    [r] = run_adapter(Fresh, profile="careful", arena="delegation", items=["del-11"])
    assert r.status == "passed", [c for c in r.checks if not c.passed]
    assert len(states) == 1 and "agent_run_state" in states[0]
    assert sorted(e.tool for e in r.trace if e.type == "tool_call" and e.tool in ("book_flight", "cancel_flight")) == [
        "book_flight"]


# --- --store postgres|redis: the SDK's own SQLAlchemySession / RedisSession, the RunState beside it ------------------


HITL = catalog.load_arena("human_in_the_loop")


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
    file in the work directory); the RunState string is a row of arena_run_states in the item's own database (none
    in the server's default one) or the key <prefix>agents:run_state:<id>; the session's rows are in agent_sessions /
    agent_messages of that database, or its keys begin with the item's prefix. A new adapter resumes from there, and
    the SDK's session then holds the whole conversation in order, the resumed turn appended once: the approval
    tool's output after its call, no function_call_output without its function_call (openai-agents-python #4827's
    orphan needs output_guardrails and a tool_use_behavior other than run_llm_again; this agent has neither)."""
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
                kept = conn.execute("SELECT session_id, state FROM arena_run_states WHERE id = %s",
                                    (state["state_id"],)).fetchone()
                assert kept is not None and kept[0] == sid and json.loads(kept[1])["current_agent"]["name"] == "arena"
                count = "SELECT count(*) FROM {} WHERE session_id = %s"
                assert conn.execute(count.format("agent_sessions"), (sid,)).fetchone()[0] == 1
                assert conn.execute(count.format("agent_messages"), (sid,)).fetchone()[0] == 4
            with psycopg.connect(stores.server_url("postgres"), autocommit=True) as conn:
                for table in ("arena_run_states", "agent_messages"):  # nothing of this run in the default database
                    if conn.execute(f"SELECT to_regclass('public.{table}')").fetchone()[0] is not None:
                        assert conn.execute(count.format(table), (sid,)).fetchone()[0] == 0
        else:
            import redis

            client = redis.Redis.from_url(own.store.url)
            try:
                ours = sorted(k.decode() for k in client.scan_iter(match=f"*{sid}*", count=1000))
                session_key = f"{own.store.prefix}agents:session:{sid}"
                assert ours == [session_key, f"{session_key}:messages"]
                kept = client.get(f"{own.store.prefix}agents:run_state:{state['state_id']}")
                assert kept is not None and json.loads(kept)["current_agent"]["name"] == "arena"
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
