"""A user's words at a LangGraph pause (interruptions): a new message instead of a decision (a plain input on the
thread), and input added while paused (the resume Command's update)."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.checkpoint.sqlite")

from arena_builtins.adapters.langgraph import LangGraphAdapter  # noqa: E402

# --- interruptions: a new message instead of a decision ---------------------------------------------------------


def test_a_new_message_at_the_gate_starts_a_new_run_leaving_the_held_call_unanswered(run_adapter):
    """int-01: at the middleware's interrupt on book_room(R102) the human types "Actually we are 10 people". The
    adapter invokes the paused thread with a plain user turn (no Command): LangGraph discards the interrupted task and
    runs from START, so the model gets the old AIMessage with its book_room call and then the user's message, with no
    tool result for that call in between (the real OpenAI API refuses such a request; the scripted model does not).
    The old call never runs; the new call (R202) pauses on its own, is approved and booked."""
    [r] = run_adapter("langgraph", profile="careful", arena="interruptions", items=["int-01"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed"
    assert checks["pending_call_not_run"].reason.startswith("unanswered: no result for book_room{'room_id': 'R102'}")
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    sent = [(m.get("role"), m.get("text")) for m in first.request["new"]]
    assert sent[-1] == ("user", "Actually we are 10 people, not 4.")
    assert all(role != "tool" for role, _ in sent)
    pauses = [(e.leg, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, {"room_id": "R102"}), (1, {"room_id": "R202"})]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R202"}]


def test_input_while_paused_rides_the_resume_as_a_command_update(run_adapter):
    """int-19: while book_room(R102) waits at the middleware's interrupt, Sam's note is added (`add_input`: kept with
    the paused state). The approval resumes with one Command(resume=..., update={'messages': [note]}): LangGraph
    appends the note as it resumes, so the model's next request carries it between the held AIMessage and the
    call's result (the real OpenAI API refuses a user message there; the scripted model does not), and the Tuesday
    booking is R301 (12 people), not R202. LangGraph has no approve/reject always: the channel says so."""
    [r] = run_adapter("langgraph", profile="careful", arena="interruptions", items=["int-19"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed" and checks["midrun_input_seen"].passed
    assert [e.result for e in r.trace if e.type == "input"] == ["added"]
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    sent = [(m.get("role"), m.get("text")) for m in first.request["new"]]
    assert [role for role, _ in sent] == ["assistant", "user", "tool"]
    assert sent[1][1] == "Note from Sam: the Tuesday meeting is now 12 people."
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [
        {"room_id": "R102"}, {"room_id": "R301"}]
    assert LangGraphAdapter.info.kind("always") == "unsupported"
