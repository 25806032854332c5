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
    tool result for that call in between: the request the real OpenAI API refuses (HTTP 400), and so does the
    gateway. The leg ends in that error; the old call never runs, and nothing is booked."""
    [r] = run_adapter("langgraph", profile="careful", arena="interruptions", items=["int-01"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed" and not checks["completed"].passed
    assert checks["pending_call_not_run"].passed and checks["pending_call_not_run"].reason.startswith("refused: ")
    assert not checks["requests_well_formed"].passed
    assert "did not have response messages" in checks["requests_well_formed"].reason
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    sent = [(m.get("role"), m.get("text")) for m in first.request["new"]]
    assert sent[-1] == ("user", "Actually we are 10 people, not 4.") and first.response["status"] == 400
    assert all(role != "tool" for role, _ in sent)
    assert [(e.leg, e.args) for e in r.trace if e.type == "suspended"] == [(0, {"room_id": "R102"})]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == []


def test_input_while_paused_rides_the_resume_as_a_command_update(run_adapter):
    """int-19: while book_room(R102) waits at the middleware's interrupt, Sam's note is added (`add_input`: kept with
    the paused state). The approval resumes with one Command(resume=..., update={'messages': [note]}): LangGraph
    appends the note as it resumes, so the model's next request carries it between the held AIMessage and the
    call's result: a user message there is what the real OpenAI API refuses (HTTP 400), and so does the gateway. The
    approved R102 booking ran; the leg ends in that error before the Tuesday booking. LangGraph has no
    approve/reject always: the channel says so."""
    [r] = run_adapter("langgraph", profile="careful", arena="interruptions", items=["int-19"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed" and not checks["requests_well_formed"].passed
    assert [e.result for e in r.trace if e.type == "input"] == ["added"]
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    sent = [(m.get("role"), m.get("text")) for m in first.request["new"]]
    assert [role for role, _ in sent] == ["assistant", "user", "tool"] and first.response["status"] == 400
    assert sent[1][1] == "Note from Sam: the Tuesday meeting is now 12 people."
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R102"}]
    assert LangGraphAdapter.info.kind("always") == "unsupported"
