"""Microsoft Agent Framework input at a pause: a new message is a new run on the session, an "always" approval a
standing rule, and input added while paused is queued on the session."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena.model.script import text_of  # noqa: E402


# --- interruptions: a new message instead of a decision ---------------------------------------------------------


def test_a_new_message_at_the_gate_is_a_new_run_on_the_session_leaving_the_held_call_unanswered(run_adapter, server):
    """int-01: at the pause on book_room(R102) the human types "Actually we are 10 people". The adapter runs the agent
    again on the restored session with that text and no approval response (the framework's new agent run). The
    framework hides the unanswered approval batch from that run's model input (`_tools._resolve_approval_responses`:
    "With no new decision, hide any still-pending batch"), so the model sees the message but not the R102 call; when
    the next pause (R202) is approved, the R102 call is back in the history the model is sent, still without a
    result: the request the real OpenAI API refuses (HTTP 400), and so does the gateway, so the run ends in that
    error after R202 was booked. R102 never runs."""
    from tests.conftest import wire_slice

    [r], requests = wire_slice(server, lambda: run_adapter("microsoft_af", profile="careful", arena="interruptions",
                                                           items=["int-01"], timeout_s=60))
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed" and not checks["requests_well_formed"].passed
    assert checks["pending_call_not_run"].passed
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
    held = next(c["id"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []
                if c["name"] == "book_room" and c["args"] == {"room_id": "R102"})
    refused = [e for e in r.trace if e.type == "model_call" and e.response["status"] == 400]
    assert len(refused) == 1 and refused[0].leg == 2 and refused[0].response["malformed"]
    assert f"did not have response messages: {held}" in refused[0].response["error"]


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
