"""strands decisions: each an interruptResponse under the interrupt id of the call it names; a decision for a call not
held is refused by strands, a held call without one pauses again (adapters/strands/decision.py)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("strands")

from arena import catalog  # noqa: E402
from arena.types import Decision, DecisionKind, DecisionSet  # noqa: E402
from tests.adapters.strands.conftest import _ctx, _leg  # noqa: E402

GATE = catalog.load_arena("approval_gate")


def test_a_decision_for_a_call_not_held_is_refused_by_strands(server, tmp_path):
    """A decision naming a call the pause does not hold goes as that id's interruptResponse: strands refuses it
    (KeyError: no interrupt found) and nothing runs."""
    item = next(i for i in GATE.items if i.resume_with[0].approved)
    _, recorder, ctx = _ctx(server, "approval_gate", item.id, tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    stray = DecisionSet(decisions=[Decision(kind=DecisionKind.approve, call_id="call_not_pending")])
    with pytest.raises(KeyError, match="no interrupt found"):
        asyncio.run(_leg(lambda a: a.resume(leg0.state, stray, ctx)))
    assert [e.tool for e in recorder.events if e.type == "tool_call" and e.tool == "book_room"] == []


def test_a_held_call_without_a_decision_pauses_again(server, tmp_path):
    """No response for the held call: strands runs the hook again, whose interrupt has no response, and stops
    on the same interrupt; the call never runs."""
    item = next(i for i in GATE.items if i.resume_with[0].approved)
    _, recorder, ctx = _ctx(server, "approval_gate", item.id, tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    null = DecisionSet(decisions=[Decision(kind=DecisionKind.null, call_id=leg0.pending.call_id)])
    leg1 = asyncio.run(_leg(lambda a: a.resume(leg0.state, null, ctx)))
    assert leg1.status == "suspended"
    assert leg1.pending.call_id == leg0.pending.call_id and leg1.state["interrupts"] == leg0.state["interrupts"]
    assert [e.tool for e in recorder.events if e.type == "tool_call" and e.tool == "book_room"] == []
