"""pydantic_ai: a new message instead of a decision, and input while paused (`input.py`)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from arena import catalog  # noqa: E402

NAME = "pydantic_ai"


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
