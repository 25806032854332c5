"""llama_index tools: the decision as the waiting tool's result (approval tool, gated tool), the sibling call
run before the pause, and the body-pause step replayed on resume (adapters/llama_index/tools.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

from arena import catalog  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "llama_index"
HITL = catalog.load_arena("human_in_the_loop")
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


# --- human_in_the_loop: the decision is the waiting approval tool's result ------------------------------


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The HumanResponseEvent's decision text is what request_approval returns: once per item, a deny
    reason and an approve note included."""
    results, requests = scripted
    assert [r.status for r in results] == ["passed"] * len(HITL.items)
    expected = {i.input: i.resume_with[0].as_text() for i in HITL.items}
    assert any(text.startswith("DENIED: ") and len(text) > len("DENIED: ") for text in expected.values())
    assert sorted(tool_messages(requests, "request_approval")) == sorted(expected.items())


# --- scripted-eager: a sibling book_room in the pausing turn ------------------------------------------
# FunctionAgent sends each tool call of the turn as its own ToolCall event and runs them at once; only the
# waiting body is held, so book_room executes in leg 0, before the workflow goes idle, and its result stays
# in the serialised context: never executed again on resume.


def test_eager_book_room_runs_before_the_pause_and_never_again(eager):
    results, requests = eager
    for r in results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1 and books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
        failed = {c.name for c in r.checks if not c.passed}
        assert "no_tool_before_suspend" in failed, r.item_id
    # on resume the model is sent the decision and the booking already made
    bookings = dict(tool_messages(requests, "book_room"))
    assert set(bookings) == {i.input for i in HITL.items}
    assert all(text.startswith("BOOKED ") for text in bookings.values())


# --- approval_gate: the gated tool's body waits before it acts ----------------------------------------


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


def test_gate_denial_reaches_model_as_book_room_result(gate):
    """Denied: book_room never runs and returns decision.as_text() ("DENIED: reason"); approved: its
    real result, from the one harness call the replayed step made after the wait."""
    results, requests = gate
    expected = []
    for r in results:
        assert r.status == "passed", (r.item_id, [c for c in r.checks if not c.passed])
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        if decision.approved:
            assert [b.leg for b in books] == [1], r.item_id
            expected.append((GATE_ITEMS[r.item_id].input, books[0].result))
        else:
            assert books == [] and decision.as_text().startswith("DENIED: ")
            expected.append((GATE_ITEMS[r.item_id].input, decision.as_text()))
    assert sorted(tool_messages(requests, "book_room")) == sorted(expected)


# --- flight_booking: the waiting step is replayed in full -----------------------------------------------
# purchase_hold's body prepares, waits, then commits or aborts. llama-index re-runs a waiting step from the top
# when its Context is restored (it waits again) and once more when the event arrives: the prepare above the wait
# runs once in the pausing leg and twice in the resuming one, and the commit uses the last prepare's intent.


def test_body_pause_prepare_runs_again_twice_on_resume(cell):
    results = cell(NAME, "flight_booking", "careful").results
    checked = 0
    for r in results:
        pauses = [e for e in r.trace if e.type == "suspended" and e.tool == "purchase_hold"]
        if not pauses:
            continue
        leg = pauses[0].leg
        prepares = [e.leg for e in r.trace if e.type == "tool_call" and e.tool == "purchase_hold.prepare"]
        assert prepares.count(leg) == 1 and prepares.count(leg + 1) == 2, (r.item_id, prepares)
        ends = [e for e in r.trace if e.type == "tool_call" and e.tool in ("purchase_hold.commit", "purchase_hold.abort")]
        assert [e.leg for e in ends] == [leg + 1], r.item_id  # one commit or abort, after the decision
        last = [e for e in r.trace if e.type == "tool_call" and e.tool == "purchase_hold.prepare"][-1]
        assert ends[0].args == {"intent": json.loads(last.result)["intent"]}, r.item_id
        checked += 1
    assert checked >= 3
