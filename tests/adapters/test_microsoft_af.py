"""Microsoft Agent Framework adapter: tool approval (always_require) -> user_input_requests -> AgentSession.

What every adapter shares (its declared info, how each item of its runs ends, its tool calls equal to
vanilla's, a gated pause on the gated call, durable_state across a restart) is test_conformance.py's;
this file holds what is the framework's own, on the same runs."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.microsoft_af import REJECTED_RESULT, MicrosoftAFAdapter  # noqa: E402
from arena.model.script import text_of  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.conftest import normalised  # noqa: E402

APPROVAL = "request_approval"
ITEMS = {i.id: i for i in catalog.load_arena("human_in_the_loop").items}
# What the scripted model writes after reading the framework's fixed rejection text as the approval
# result: `_reason()` finds no "rejected: <reason>" in it, so it quotes the whole text.
REJECTED_AS_REASON = REJECTED_RESULT.strip().rstrip(".")


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("microsoft_af").wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell("microsoft_af", profile="scripted-eager").wire


def _tool_results_by_item(requests) -> dict[str, dict[str, list[str]]]:
    """item input -> tool name -> every distinct tool result the model was sent for that tool."""
    seen: dict[str, dict[str, list[str]]] = {}
    for body in requests:
        messages = body["messages"]
        user = next(text_of(m.get("content")) for m in messages if m.get("role") == "user")
        names = {tc["id"]: tc["function"]["name"] for m in messages for tc in m.get("tool_calls") or []}
        per_tool = seen.setdefault(user, {})
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in names:
                results = per_tool.setdefault(names[m["tool_call_id"]], [])
                if text_of(m.get("content")) not in results:
                    results.append(text_of(m.get("content")))
    return seen


def _expected_deny_trace(vanilla_trace: list[dict], item_id: str) -> list[dict]:
    """Vanilla's trace with the final text the model writes when the reason never reached it."""
    reason = ITEMS[item_id].resume_with[0].text
    expected = [dict(e) for e in vanilla_trace]
    final = expected[-1]
    assert final["type"] == "final" and f"({reason})" in final["text"]
    final["text"] = final["text"].replace(f"({reason})", f"({REJECTED_AS_REASON})")
    return expected


def test_the_fixed_rejection_text_is_declared():
    # deny_reason is False (test_conformance.py): the approval response is a bool; the rejection text is fixed
    assert REJECTED_RESULT in MicrosoftAFAdapter.info.carries("ask").notes


def test_rejection_text_is_the_installed_frameworks():
    """The pinned rejection text is the one this release writes (guards a silent upstream change)."""
    import inspect

    from agent_framework import _tools

    assert f'result="{REJECTED_RESULT}"' in inspect.getsource(_tools._replace_approval_contents_with_results)


def test_scripted_denied_items_pass_decision_reached_model_as_declared(scripted):
    results, _ = scripted
    # every item passes (test_conformance.py); decision_reached_model passes on denied items only
    # because the adapter declares deny_reason=False:
    # the denial itself reaches the model (as the fixed rejection text), the reason does not.
    for r in results:
        check = next(c for c in r.checks if c.name == "decision_reached_model")
        dropped = "deny reason not carried, as declared (deny_reason=false)"
        assert (dropped in check.reason) == (not ITEMS[r.item_id].resume_with[0].approved), (r.item_id, check.reason)


def test_scripted_traces_vs_vanilla(scripted, vanilla):
    """Approved items: identical to vanilla. Denied items: identical except the final text.

    The framework answers a rejected approval with its own fixed tool result
    ("Error: Tool call invocation was rejected by user.") and has no field for a reason, so the
    model's final answer quotes that text where vanilla's quotes the human's reason.
    """
    results, _ = scripted
    for r in results:
        expected = normalised(vanilla[r.item_id])
        if not ITEMS[r.item_id].resume_with[0].approved:
            expected = _expected_deny_trace(expected, r.item_id)
        assert normalised(r) == expected, r.item_id


def test_model_receives_decision_through_the_framework(scripted):
    """On the wire, the request_approval call's tool message is:
    approve -> decision.as_text() (the framework ran the adapter-owned approval body);
    deny -> the framework's fixed rejection text, and the deny reason is sent nowhere."""
    results, requests = scripted
    seen = _tool_results_by_item(requests)
    for r in results:
        item = ITEMS[r.item_id]
        decision = item.resume_with[0]
        results_for_approval = seen[item.input][APPROVAL]
        if decision.approved:
            assert results_for_approval == [decision.as_text()], r.item_id
        else:
            assert results_for_approval == [REJECTED_RESULT], r.item_id
            bodies = [json.dumps(b) for b in requests if item.input in json.dumps(b)]
            assert bodies and not any(decision.text in b for b in bodies), r.item_id
    # A note on approve does reach the model (hitl-03 carries one).
    assert "APPROVED: go ahead, and ask facilities for a projector" in seen[ITEMS["hitl-03"].input][APPROVAL]


def test_eager_sibling_held_then_run_whatever_the_decision(eager, vanilla_eager):
    """scripted-eager: the framework holds the sibling book_room during the pause (it is stored in the
    session as an "already approved" request of the approval batch) and runs it when the batch
    resumes, even when the approval was REJECTED. So: nothing runs before the suspension; approved
    items equal vanilla; denied items execute book_room in leg 1 (tool_not_used fails on every denied
    item, and so does denied_not_executed: it ran after the human denied the request) and the final text
    carries the fixed rejection text as in the scripted profile.
    The model's call order varies by item (book_room first on Tuesdays and Thursdays): both hold in
    both orders, for approved and for denied items.
    """
    results, requests = eager
    seen = _tool_results_by_item(requests)
    for r in results:  # how each ends (the checks denied items fail): test_conformance.py's SIBLING_RUN_ON_DENIAL
        item = ITEMS[r.item_id]
        decision = item.resume_with[0]
        v = vanilla_eager[r.item_id]
        got = normalised(r)
        expected = normalised(v)
        if decision.approved:
            assert got == expected, r.item_id
        else:
            expected = _expected_deny_trace(expected, r.item_id)
            book = next(e for e in got if e["type"] == "tool_call" and e["tool"] == "book_room")
            assert book["leg"] == 1 and book["args"] == {"room_id": item.metadata["expected_room"]}
            assert book["result"].startswith("BOOKED")
            expected.insert(len(expected) - 1, book)  # right after `resumed`, before the final answer
            assert got == expected, r.item_id
            # The model is told both: the approval was rejected, and the room was booked anyway.
            assert seen[item.input][APPROVAL] == [REJECTED_RESULT]
            assert seen[item.input]["book_room"] == [book["result"]]
        assert sum(e.get("tool") == "book_room" for e in got) == 1, r.item_id


class _ResumeInFreshAdapter(MicrosoftAFAdapter):
    """Resumes each leg in a brand-new adapter (new Agent, new client) from the state as JSON text."""

    async def resume(self, state, decision, ctx):
        text = json.dumps(state)  # AgentSession.to_dict() + Content.to_dict(): plain JSON
        fresh = MicrosoftAFAdapter()
        try:
            return await fresh.resume(json.loads(text), decision, ctx)
        finally:
            await fresh.aclose()


def test_resume_from_serialised_session_in_fresh_adapter(run_adapter, vanilla):
    ids = ["hitl-01", "hitl-02", "hitl-03"]
    results = run_adapter(_ResumeInFreshAdapter, items=ids)
    assert [r.status for r in results] == ["passed"] * 3
    for r in results:
        expected = normalised(vanilla[r.item_id])
        if not ITEMS[r.item_id].resume_with[0].approved:
            expected = _expected_deny_trace(expected, r.item_id)
        assert normalised(r) == expected, r.item_id


def test_instrumentation_is_off(scripted):
    from agent_framework.observability import OBSERVABILITY_SETTINGS

    assert not OBSERVABILITY_SETTINGS.ENABLED
    assert not OBSERVABILITY_SETTINGS.enable_sensitive_data


# --- approval_gate: book_room gated by the framework's own tool approval ---------------------------
# book_room is a FunctionTool with approval_mode="always_require" whose body is one harness call.
# The run stops with a function_approval_request for it; resume sends
# to_function_approval_response(approved). Approved: the framework runs the body. Denied: it never
# runs and the framework writes its fixed rejection text as book_room's result (the response is a
# bool, so the reason cannot reach the model: the final answer quotes that fixed text instead).

GATE_ITEMS = {i.id: i for i in catalog.load_arena("approval_gate").items}


@pytest.fixture(scope="module")
def gate(cell):
    return cell("microsoft_af", "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("microsoft_af", "approval_gate", "reckless-parallel").wire


@pytest.fixture(scope="module")
def vanilla_gate(vanilla_by_id):
    return vanilla_by_id("reckless", "approval_gate")


@pytest.fixture(scope="module")
def vanilla_gate_parallel(vanilla_by_id):
    return vanilla_by_id("reckless-parallel", "approval_gate")


def _expected_gate_deny_trace(vanilla_trace: list[dict], item_id: str) -> list[dict]:
    reason = GATE_ITEMS[item_id].resume_with[0].text
    expected = [dict(e) for e in vanilla_trace]
    final = expected[-1]
    assert final["type"] == "final" and f"({reason})" in final["text"]
    final["text"] = final["text"].replace(f"({reason})", f"({REJECTED_AS_REASON})")
    return expected


def test_gate_reckless_traces_vs_vanilla(gate, vanilla_gate):
    """Approved: identical to vanilla. Denied: identical except the final text, which quotes the
    framework's fixed rejection text where vanilla's quotes the human's reason."""
    for r in gate[0]:
        expected = normalised(vanilla_gate[r.item_id])
        if not GATE_ITEMS[r.item_id].resume_with[0].approved:
            expected = _expected_gate_deny_trace(expected, r.item_id)
        assert normalised(r) == expected, r.item_id


def test_gate_denial_reaches_model_as_fixed_rejection(gate):
    """On the wire, book_room's tool message is its real result (approved) or the framework's fixed
    rejection text (denied); the deny reason is sent nowhere."""
    results, requests = gate
    seen = _tool_results_by_item(requests)
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert seen[item.input]["book_room"] == [book.result], r.item_id
        else:
            assert seen[item.input]["book_room"] == [REJECTED_RESULT], r.item_id
            bodies = [json.dumps(b) for b in requests if item.input in json.dumps(b)]
            assert bodies and not any(decision.text in b for b in bodies), r.item_id


def _requested_at_pause(result) -> list[str]:
    """The tools of the model answer the run paused on, in the model's order (from the gateway's record)."""
    pause = next(e for e in result.trace if e.type == "suspended")
    asked = [e for e in result.trace if e.type == "model_call" and e.seq < pause.seq][-1]
    return [c["name"] for c in asked.response["tool_calls"]]


def test_gate_reckless_parallel_sibling_held_then_run_whatever_the_decision(gate_parallel, vanilla_gate_parallel):
    """reckless-parallel emits book_room + a second search_rooms in one turn, book_room first on Tuesdays
    and Thursdays and second otherwise. The framework holds the sibling during the pause and runs it
    when the approval batch resumes, even when book_room was REJECTED (as with scripted-eager's sibling
    in human_in_the_loop). All checks still pass: the sibling is a read tool.

    Approved: the framework runs the resumed batch in the MODEL'S order, vanilla always runs the approved
    call first and the held sibling after it. So with book_room first the trace is identical to vanilla;
    with search_rooms first the two leg-1 calls come in the other order (search_rooms, then book_room).
    That order dependence is a real finding, pinned here for both orders.
    Denied: vanilla never runs the sibling; here it runs in leg 1 right after `resumed`, and the final
    text quotes the fixed rejection text, whichever call the model listed first."""
    orders: set[tuple[bool, bool]] = set()
    for r in gate_parallel[0]:
        item = GATE_ITEMS[r.item_id]
        approved = item.resume_with[0].approved
        book_first = policy_book_first(item.metadata["day"])
        assert _requested_at_pause(r) == (["book_room", "search_rooms"] if book_first else ["search_rooms", "book_room"])
        orders.add((approved, book_first))
        expected = normalised(vanilla_gate_parallel[r.item_id])
        first_search = expected[0]
        assert first_search["type"] == "tool_call" and first_search["tool"] == "search_rooms"
        if approved:
            leg1 = [i for i, e in enumerate(expected) if e["type"] == "tool_call" and e["leg"] == 1]
            # vanilla: the approved call, then the held sibling, whatever the model's order
            assert [expected[i]["tool"] for i in leg1] == ["book_room", "search_rooms"], r.item_id
            if not book_first:  # the framework keeps the model's order: the sibling runs first
                a, b = leg1
                expected[a], expected[b] = expected[b], expected[a]
        else:
            expected = _expected_gate_deny_trace(expected, r.item_id)
            assert [e["type"] for e in expected[-2:]] == ["resumed", "final"]
            expected.insert(len(expected) - 1, {**first_search, "leg": 1})
        assert normalised(r) == expected, r.item_id
    # both orders of an approved and of a denied batch were exercised
    assert orders == {(True, True), (True, False), (False, True), (False, False)}


# --- durable_state: each leg in a fresh worker process --------------------------------------------


def test_durable_state_drops_the_deny_reason_after_the_restart_too(cell):
    """The worker is restarted between legs (test_conformance.py): leg 1 has only the JSON state
    (AgentSession.to_dict() + the approval requests' Content.to_dict()) and restores the session with
    AgentSession.from_dict."""
    results = cell("microsoft_af", "durable_state").results
    # Denied: the reason is dropped here too (fixed rejection text), and the item still passes.
    assert f"({REJECTED_AS_REASON})" in results[1].trace[-1].text


def test_streamed_legs_end_as_the_plain_ones_and_name_every_result(cell, server):
    """A streamed call arrives as chunks under one call id (told once); a result carries only the call id, and
    a resume's results answer calls of the paused leg (the held sibling too), named from the session's history.
    Every item ends as in the plain run and the stream check holds."""
    from arena.checks import STREAM_CHECK
    from arena.runner import run_items

    spec = catalog.load_arena("human_in_the_loop")
    plain = cell("microsoft_af", profile="scripted-eager").by_id
    streamed = run_items(MicrosoftAFAdapter, spec, spec.items, server=server, model="scripted-eager", stream=True)
    for result in streamed:
        checks = {c.name: c.passed for c in result.checks}
        assert checks.pop(STREAM_CHECK), result.item_id
        assert (result.status, checks) == (plain[result.item_id].status,
                                           {c.name: c.passed for c in plain[result.item_id].checks})
        told = [e for e in result.trace if e.type == "streamed"]
        calls = [(e.leg, e.call_id) for e in told if e.text == "tool_call"]
        assert calls and len(calls) == len(set(calls)), result.item_id
        assert all(e.tool for e in told), result.item_id
        assert any(e.text == "pause" for e in told), result.item_id


# --- interruptions: a new message instead of a decision ---------------------------------------------------------


def test_a_new_message_at_the_gate_is_a_new_run_on_the_session_leaving_the_held_call_unanswered(run_adapter, server):
    """int-01: at the pause on book_room(R102) the human types "Actually we are 10 people". The adapter runs the agent
    again on the restored session with that text and no approval response (the framework's new agent run). The
    framework hides the unanswered approval batch from that run's model input (`_tools._resolve_approval_responses`:
    "With no new decision, hide any still-pending batch"), so the model sees the message but not the R102 call; when
    the next pause (R202) is approved, the R102 call is back in the history the model is sent, still without a
    result (the real OpenAI API refuses such a request; the scripted model does not). R102 never runs."""
    from tests.conftest import wire_slice

    [r], requests = wire_slice(server, lambda: run_adapter("microsoft_af", profile="careful", arena="interruptions",
                                                           items=["int-01"], timeout_s=60))
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed"
    assert checks["pending_call_not_run"].reason.startswith("unanswered: no result for book_room{'room_id': 'R102'}")
    pauses = [(e.leg, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, {"room_id": "R102"}), (1, {"room_id": "R202"})]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R202"}]

    def book_calls(body):  # (call id, room) of each book_room call a request holds; the ids a tool message answers
        calls = [(tc["id"], json.loads(tc["function"]["arguments"])["room_id"]) for m in body["messages"]
                 for tc in m.get("tool_calls") or [] if tc["function"]["name"] == "book_room"]
        return calls, {m.get("tool_call_id") for m in body["messages"] if m.get("role") == "tool"}

    text = "Actually we are 10 people, not 4."
    message = next(b for b in requests if text_of(b["messages"][-1].get("content")) == text)
    assert book_calls(message)[0] == []  # the held call is hidden from the run the message started
    calls, answered = book_calls(requests[-1])
    held = next(call_id for call_id, room in calls if room == "R102")
    assert [room for _, room in calls] == ["R102", "R202"] and held not in answered


def test_always_approve_is_a_standing_rule_and_input_is_queued_on_the_session(run_adapter):
    """int-15: approve-always is create_always_approve_tool_response + ToolApprovalMiddleware: the Tuesday booking
    runs in the same leg without a pause. int-16: the framework has no standing rejection, so a deny marked always
    denies its call alone and the Thursday booking asks again (the item has no second decision). int-17: both
    bookings held at one pause (the middleware is not on yet); the explicit denial of R301 wins. int-19: the note
    queued with enqueue_messages reaches the model call right after the held call's result, and only that one (the
    plain Agent does not persist the drained message), so the Tuesday booking ends up for the 8 people the model
    still sees."""
    results = {r.item_id: r for r in run_adapter("microsoft_af", profile="careful", arena="interruptions",
                                                 items=["int-15", "int-16", "int-17", "int-19"], timeout_s=60)}
    checks = {i: {c.name: c for c in r.checks} for i, r in results.items()}
    assert [(e.leg, e.args) for e in results["int-15"].trace if e.type == "tool_call" and e.tool == "book_room"] == \
        [(1, {"room_id": "R102"}), (1, {"room_id": "R202"})]
    assert results["int-15"].status == results["int-17"].status == "passed"
    # int-19: the note reached the model (midrun_input_seen), but only that one call: the next request no longer has
    # it, so the model books for the 8 people it still sees (a search for 8 after the one for 12)
    assert checks["int-19"]["midrun_input_seen"].passed
    assert checks["int-19"]["booked_as_expected"].reason == "booked R102, R202; expected R102, R301"
    searched = [e.args for e in results["int-19"].trace if e.type == "tool_call" and e.tool == "search_rooms"]
    assert searched[1:] == [{"capacity": 12, "day": "Tuesday"}, {"capacity": 8, "day": "Tuesday"}]
    assert checks["int-16"]["sticky_approval_scoped"].reason.startswith(
        "paused 2 time(s), booked nothing: paused again on book_room{'room_id': 'R101'}")
    assert checks["int-17"]["sticky_approval_scoped"].reason == "paused 1 time(s), booked R102"
    note = "Note from Sam: the Tuesday meeting is now 12 people."
    first = next(e for e in results["int-19"].trace if e.type == "model_call" and e.leg == 1)
    assert [m.get("role") for m in first.request["new"]][-2:] == ["tool", "user"] and \
        first.request["new"][-1].get("text") == note  # after book_room(R102)'s result
    counts = [e.request["messages"] for e in results["int-19"].trace if e.type == "model_call"]
    assert counts[:4] == [2, 4, 7, 8]  # the note is in the 7, gone from the next request of the run


# --- delegation: a delegate called with Agent.as_tool(); no handoff in agent-framework-core -------------------------


def test_as_tool_fails_closed_on_a_delegates_gated_call_in_the_installed_release():
    """The installed `as_tool` raises on a sub-agent's unresolved function approval instead of propagating it
    (microsoft/agent-framework#4963, resolved by PR #8527 "fail closed"; #8442, which resumed it, was not merged),
    and the handoff builder is not part of agent-framework-core (no handoff channel until its package is installed)."""
    import importlib.util
    import inspect

    from agent_framework import Agent

    source = inspect.getsource(Agent.as_tool)
    assert "cannot continue because its sub-agent requested approval" in source
    assert "raise ToolExecutionException(approval_error)" in source
    assert importlib.util.find_spec("agent_framework_orchestrations") is None
    info = MicrosoftAFAdapter.info
    assert info.kind("nested") == "native" and "Agent.as_tool" in info.mechanism("nested")
    assert info.channel("handoff") is None


def test_a_delegates_gated_call_does_not_pause_the_run_and_never_runs(run_adapter):
    """del-02 (one delegate), del-10 (both in one turn): each delegate's own Agent, reached through `as_tool`, is
    offered its own tools and calls its gated tool; the framework holds that call (it never runs) but does not pause
    the run: the wrapper raises, and the desk is sent "Error: Function failed." as each delegate's result and
    finishes. Nothing is there to decide."""
    results = {r.item_id: r for r in run_adapter("microsoft_af", profile="careful", arena="delegation",
                                                 items=["del-02", "del-10"], timeout_s=60)}
    for item_id, gated in (("del-02", {"book_flight"}), ("del-10", {"book_flight", "cancel_flight"})):
        trace = results[item_id].trace
        assert not any(e.type == "suspended" for e in trace) and trace[-1].type in ("final", "state"), item_id
        assert not [e.tool for e in trace if e.type == "tool_call" and e.tool in ("book_flight", "cancel_flight")]
        models = [e for e in trace if e.type == "model_call"]
        offered = [tuple(e.request["tools"]) for e in models]
        desk = ("booking_agent", "changes_agent")
        assert offered[0] == offered[-1] == desk  # the desk offers no airline tool; each delegate only its own
        assert set(offered) <= {desk, ("search_flights", "seat_map", "book_flight"), ("get_booking", "cancel_flight")}
        asked = {c["name"] for e in models for c in (e.response or {}).get("tool_calls") or []}
        assert gated <= asked, item_id  # each delegate's model asked for its gated call
        desk_results = [m.get("text") for m in models[-1].request["new"] if m.get("role") == "tool"]
        assert desk_results == ["Error: Function failed."] * len(gated), item_id


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize(("store", "why"), [
    ("postgres", "agent-framework-postgres 1.0.0a261015 is only a pgvector vector store"),
    ("redis", "agent-framework-redis 1.0.0b261022 (not in .venv: it pins redis<7.2.1"),
])
def test_a_store_run_is_declined_the_framework_has_no_store_there(tmp_path, store, why):
    """agent-framework keeps the paused AgentSession in no PostgreSQL or Redis store of its own: the run on either
    server is not measured, with that reason, and nothing runs on SQLite instead."""
    from arena import evaluate

    done = evaluate("durable_state", ["microsoft_af"], items=["durable-01"], store=store, out=tmp_path)
    assert not list(done) and not done.failed
    channel = MicrosoftAFAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert done.declined["microsoft_af"] == f"microsoft_af has no {store} store: {channel.mechanism}"
    assert why in channel.mechanism and "session.state['tool_approval']" in channel.mechanism
