"""Input while paused (RunState.add_input): a new message instead of a decision, and input staged before the
decision; the SDK's sticky decision (approve / reject always) at the same pauses."""

from __future__ import annotations

import pytest

pytest.importorskip("agents")


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
