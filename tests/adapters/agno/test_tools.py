"""The harness's tools as agno Functions: the approval tool never executed (agno holds an external call), every
tool given the model's call id, and the unflagged siblings of a held call run in the turn that pauses."""

from __future__ import annotations

import pytest

pytest.importorskip("agno")

from tests.adapters.agno.conftest import HITL  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402
from tests.conftest import normalised  # noqa: E402


def test_approval_tool_is_never_executed_and_tools_get_the_models_call_id(scripted):
    """request_approval never reaches the harness (agno holds an external call); every tool that ran got agno's
    FunctionCall.call_id, which is the id the model gave the call."""
    results, _ = scripted
    for r in results:
        calls = [e for e in r.trace if e.type == "tool_call"]
        assert "request_approval" not in [e.tool for e in calls], r.item_id
        given = {c["id"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []}
        assert calls and all(e.call_id in given for e in calls), r.item_id


# --- scripted-eager: agno runs the consequential sibling before it pauses ----------------------------
# agno gathers every call of the turn that has no HITL flag and holds only the flagged one: book_room,
# emitted beside request_approval, executes in leg 0 before the run pauses, and never again on resume.
# How each item ends is test_conformance.py's SIBLING_RAN_FIRST.


def test_eager_book_room_runs_before_the_pause_once(eager, vanilla_eager):
    results, requests = eager
    for r in results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert pause.tool == "request_approval", r.item_id
        assert len(books) == 1 and books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        # otherwise vanilla's trace: book_room moved (approved) or added (denied) before the pause
        room = HITL.item(r.item_id).metadata["expected_room"]
        expected = [e for e in normalised(vanilla_eager[r.item_id]) if not (e["type"] == "tool_call"
                                                                          and e["tool"] == "book_room")]
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {"leg": 0, "type": "tool_call", "tool": "book_room", "args": {"room_id": room},
                             "result": HITL.functions["book_room"](room_id=room)})
        assert normalised(r) == expected, r.item_id
    # on resume the model gets the decision and the booking's stored result, sent again, not re-executed
    decisions = dict(tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in HITL.items}
    assert all(text.startswith("BOOKED ") for text in dict(tool_messages(requests, "book_room")).values())


def test_gate_reckless_parallel_sibling_search_runs_before_the_pause(gate_parallel, vanilla_by_id):
    """book_room + a second search_rooms in one turn: agno runs the unflagged sibling in that turn and holds
    only book_room, so the search runs in leg 0 whatever the decision (vanilla holds it with the gated call)."""
    vanilla = vanilla_by_id("reckless-parallel", "approval_gate")
    for r in gate_parallel[0]:
        v = normalised(vanilla[r.item_id])
        first_search = v[0]
        expected = [e for e in v if not (e["type"] == "tool_call" and e["tool"] == "search_rooms" and e["leg"] == 1)]
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {**first_search, "leg": 0})
        assert normalised(r) == expected, r.item_id
