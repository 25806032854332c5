"""How a decision reaches agno: the approval tool's external-execution result, a gated call's confirm() /
reject(note=), and a DecisionSet handed to the held requirements as given."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("agno")

from arena.types import Decision, DecisionSet  # noqa: E402
from arena_builtins.adapters.agno.decision import apply as apply_decision  # noqa: E402
from tests.adapters.agno.conftest import (  # noqa: E402
    GATE,
    GATE_ITEMS,
    HITL,
    Recorder,
    Stop,
    adapter_module,
    leg_context,
    paused_state,
    requirement,
)
from tests.adapters.conftest import tool_messages  # noqa: E402


# --- ask: external execution, the decision is the tool result ----------------------------------------


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() ("APPROVED", "DENIED: reason") as request_approval's tool message:
    set_external_execution_result's text, once per item."""
    results, requests = scripted
    expected = {i.input: i.resume_with[0].as_text() for i in HITL.items}
    assert any(text.startswith("DENIED: ") for text in expected.values())
    assert sorted(tool_messages(requests, "request_approval")) == sorted(expected.items())


# --- approval_gate: requires_confirmation, confirm() / reject(note=) ---------------------------------


def test_gate_denial_note_reaches_model_as_book_room_result(gate):
    """Denied: agno sends reject(note=decision.as_text()) as book_room's tool message, so the reason itself
    reaches the model; approved: book_room's real result (agno ran the held call after confirm())."""
    results, requests = gate
    expected = []
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert book.leg == 1
            expected.append((item.input, book.result))
        else:
            expected.append((item.input, decision.as_text()))
            assert f"({decision.text})" in r.trace[-1].text
    assert any(not GATE_ITEMS[r.item_id].resume_with[0].approved for r in results)
    assert sorted(tool_messages(requests, "book_room")) == sorted(expected)


# --- how a decision is handed to agno's requirements ------------------------------------------------


def test_decisions_map_onto_agnos_requirement_methods():
    apply = apply_decision
    ask = requirement(external_execution_required=True)
    apply(ask, Decision(kind="answer", text="Tuesday instead"))
    assert ask.external_execution_result == "Tuesday instead" and ask.is_resolved()
    approved = requirement(requires_confirmation=True)
    apply(approved, Decision(kind="approve", text="go ahead"))
    assert approved.confirmation is True and approved.tool_execution.confirmed is True
    denied = requirement(requires_confirmation=True)
    apply(denied, Decision(kind="deny", text="too big"))
    assert denied.confirmation is False and denied.tool_execution.confirmation_note == "DENIED: too big"
    # confirm() takes no arguments: an edit is a rejection carrying the human's edit, never run as edited
    edited = requirement(requires_confirmation=True)
    decision = Decision(kind="edit", args={"room_id": "R2"})
    apply(edited, decision)
    assert edited.confirmation is False and edited.tool_execution.confirmation_note == decision.as_text()
    assert edited.tool_execution.tool_args == {"room_id": "R1"}


@pytest.mark.parametrize("decisions, expected", [
    ([], {"c1": None, "c2": None}),  # none given: both passed on unresolved (agno decides)
    ([Decision(kind="approve", call_id="c1")], {"c1": True, "c2": None}),  # fewer: the other gets no answer
    ([Decision(kind="approve", call_id="c1"), Decision(kind="approve", call_id="nope")], {"c1": True, "c2": None}),
    ([Decision(kind="null", call_id="c1"), Decision(kind="deny", text="no", call_id="c2")], {"c1": None, "c2": False}),
])
def test_hostile_decision_sets_are_passed_on_as_given(decisions, expected, tmp_path):
    """An unknown call id has no requirement to act on; a null decision and a missing one leave the
    requirement unresolved; nothing is filled in. Every requirement of the pause is handed to acontinue_run."""
    module = adapter_module()
    adapter = module.AgnoAdapter()
    adapter._agent = Recorder()
    with pytest.raises(Stop):
        asyncio.run(adapter.resume(paused_state(), DecisionSet(decisions=decisions), leg_context(GATE, GATE.items[0].id,
                                                                                            str(tmp_path))))
    (call,) = adapter._agent.calls
    assert (call["run_id"], call["session_id"]) == ("r", "s")
    given = {r.tool_execution.tool_call_id: r.confirmation for r in call["requirements"]}
    assert given == expected
