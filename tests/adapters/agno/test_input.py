"""The message and input channels (interruptions): a new user message at a pause, and a note added to the paused
run with no decision."""

from __future__ import annotations

import pytest

pytest.importorskip("agno")

from arena import catalog  # noqa: E402
from arena.types import DecisionKind  # noqa: E402
from tests.adapters.agno.conftest import adapter_module  # noqa: E402


# --- message: a new user message instead of a decision (interruptions) ------------------------------------------


def test_a_new_message_at_a_pause_is_a_new_run_that_leaves_the_held_call_unanswered(server):
    """Pins what agno 3.1.10 does with the `message` channel's `arun(text, session_id=..., add_history_to_context=
    True)` on int-01: agno leaves the paused run out of the session's history, so the new run's model is sent the
    system prompt and the message alone; book_room(R102), held at the pause, never runs and no result for it
    reaches the model (`unanswered`), and with no request to act on the model books nothing (R202 expected).
    If this fails, agno has changed it: update the adapter's docstring and the findings."""
    from arena.runner import run_items

    spec = catalog.load_arena("interruptions")
    [r] = run_items(adapter_module().AgnoAdapter, spec, [spec.item("int-01")], server=server, model="careful",
                    timeout_s=120)
    message = next(e for e in r.trace if e.type == "resumed")
    assert message.decision.kind is DecisionKind.message
    sent = next(e for e in r.trace if e.type == "model_call" and e.seq > message.seq).request
    assert sent["messages"] == 2 and [m["role"] for m in sent["new"]] == ["user"]  # the system prompt, unchanged
    assert sent["new"][0]["text"] == message.decision.text
    assert not [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    checks = {c.name: c for c in r.checks}
    assert checks["pending_call_not_run"].passed
    assert checks["pending_call_not_run"].reason.startswith("unanswered: no result for book_room{'room_id': 'R102'}")
    assert checks["decision_reached_model"].passed
    assert r.status == "failed" and not checks["booked_as_expected"].passed
    assert checks["booked_as_expected"].reason == "booked nothing; expected R202"


# --- input: a note added to the paused run, no decision (interruptions) ---------------------------------------


def test_input_while_paused_reaches_the_model_between_the_held_call_and_its_result(server):
    """Pins what agno 3.1.10 does with the `input` channel on int-19: the note kept by `add_input` goes to agno as
    `acontinue_run(requirements=..., input=note)`, which appends it as a user message before it answers the held
    call: the request's order is book_room's call, the note, then book_room's result, which the real OpenAI API
    refuses (HTTP 400: a call must be followed by its result), and so does the gateway; agno ends the run in an
    error. If this fails, agno has changed it: update the adapter's docstring and the `input` channel's
    mechanism."""
    from arena.runner import run_items

    spec = catalog.load_arena("interruptions")
    [r] = run_items(adapter_module().AgnoAdapter, spec, [spec.item("int-19")], server=server, model="careful",
                    timeout_s=120)
    note = next(e for e in r.trace if e.type == "input")
    assert note.result == "added"
    refused = next(e for e in r.trace if e.type == "model_call" and e.seq > note.seq)
    sent = refused.request["new"]
    assert [m["role"] for m in sent] == ["assistant", "user", "tool"] and refused.response["status"] == 400
    assert sent[1]["text"] == note.text and sent[2]["text"].startswith("BOOKED R102")
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed" and not checks["requests_well_formed"].passed
    assert checks["booked_as_expected"].reason == "booked R102; expected R102, R301"
