"""Text from the human at a pause: a new message (a new invocation on the paused session) and input while paused
(a user text Event appended to the stored session)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")


# --- interruptions: a new message instead of a decision at the gate ----------------------------------------
# The message is a new invocation on the paused session (text, no invocation_id); the adapter answers nothing.

PLACEHOLDER = {"error": "This tool call requires confirmation, please approve or reject."}  # ADK's, at the pause


def test_message_at_the_gate_is_a_new_turn_after_adks_placeholder(run_adapter):
    """int-01: book_room(R102) waits at ADK's confirmation and the human writes "Actually we are 10 people, not 4."
    ADK 2.13 sends the model the held call answered with the placeholder result it wrote at the pause, then the
    text as the user's turn; the model books R202, which is approved. R102 never runs (`cancelled`, by that
    placeholder). Pins ADK's outcome: a change shows here."""
    (r,) = run_adapter("google_adk", profile="careful", arena="interruptions", items=["int-01"])
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    fate = next(c.reason for c in r.checks if c.name == "pending_call_not_run")
    assert fate.startswith("cancelled: ") and json.dumps(PLACEHOLDER) in fate, fate
    after = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    assert [(m["role"], m.get("text")) for m in after.request["new"]] == [
        ("assistant", ""), ("tool", json.dumps(PLACEHOLDER)), ("user", "Actually we are 10 people, not 4.")]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R202"}]


def test_input_while_paused_is_left_out_of_the_first_request_after_the_resume(run_adapter):
    """int-19: while book_room(R102) waits, "Note from Sam: the Tuesday meeting is now 12 people." is appended to the
    stored session (a user text Event, `add_input`), then R102 is approved. ADK 2.13's contents builder drops every
    event between the paused call and its result from the first request after the resume
    (`rearrange_events_for_latest_function_response`), so the model first searches for 8 people; the note shows from
    the next request on, the model searches again for 12 and books R301: seen one request late, before the booking.
    Pins ADK's outcome, not the adapter's."""
    (r,) = run_adapter("google_adk", profile="careful", arena="interruptions", items=["int-19"])
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed", [c for c in r.checks if not c.passed]
    note = next(e.text for e in r.trace if e.type == "input" and e.result == "added")
    sent = [[m.get("text") for m in e.request["new"] if m["role"] == "user"] for e in r.trace
            if e.type == "model_call" and e.leg == 1]
    assert sent[:2] == [[], [note]]  # not in the request right after the resume; in the next one
    searched = [e.args for e in r.trace if e.type == "tool_call" and e.tool == "search_rooms" and e.leg == 1]
    assert searched == [{"capacity": 8, "day": "Tuesday"}, {"capacity": 12, "day": "Tuesday"}]
    assert checks["booked_as_expected"].reason == "booked R102, R301, as expected"
