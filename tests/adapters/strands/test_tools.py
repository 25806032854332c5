"""strands tools: the approval tool's body interrupts and returns the decision, a gated call is held by the
BeforeToolCallEvent hook, a body-pausing tool prepares again when strands re-runs its body, and a sibling call of the
turn runs before the pause (adapters/strands/tools.py)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("strands")

from arena import catalog  # noqa: E402
from arena.types import Decision, DecisionKind, DecisionSet  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402
from tests.adapters.strands.conftest import NAME, _ctx, _leg  # noqa: E402


# --- human_in_the_loop: the decision is the request_approval body's return -----------------------------


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The interrupt's response, decision.as_text(), is what the re-run body returns: the model reads it as
    request_approval's result, once per item (approve notes, deny reasons)."""
    results, requests = scripted
    spec = catalog.load_arena("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    seen = tool_messages(requests, "request_approval")
    assert sorted(seen) == sorted(expected.items())
    assert any(text.startswith("DENIED: ") and len(text) > len("DENIED: ") for _, text in seen)


# --- scripted-eager: the sibling book_room runs in leg 0 --------------------------------------------------
# strands' ConcurrentToolExecutor runs every call of the turn; only request_approval interrupts. The sibling
# book_room executes before the run stops; its result is kept in the paused tool execution and is not run
# again on resume. How each item ends: test_conformance.py's SIBLING_RAN_FIRST.


def test_eager_book_room_runs_once_before_the_pause(eager):
    results, requests = eager
    spec = catalog.load_arena("human_in_the_loop")
    for r in results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1, r.item_id  # never re-executed on resume
        assert books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
    bookings = dict(tool_messages(requests, "book_room"))
    decisions = dict(tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in spec.items}
    assert set(bookings) == set(decisions) and all(t.startswith("BOOKED ") for t in bookings.values())


# --- approval_gate: the BeforeToolCallEvent hook --------------------------------------------------------

GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


def test_gate_denial_reason_reaches_model_as_cancel_tool_text(gate):
    """Denied: `event.cancel_tool = decision.as_text()` is book_room's tool result, verbatim ("DENIED: reason");
    approved: book_room's own result (strands ran it after the hook returned)."""
    results, requests = gate
    seen = tool_messages(requests, "book_room")
    expected = []
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            expected.append((item.input, book.result))
        else:
            assert decision.as_text().startswith("DENIED: ")
            expected.append((item.input, decision.as_text()))
            assert f"({decision.text})" in r.trace[-1].text  # the reason itself came back to the model
    assert sorted(seen) == sorted(expected)


def test_gate_edit_runs_the_call_with_the_humans_arguments(server, tmp_path):
    """An edit rewrites `event.tool_use` in the hook: strands runs book_room with the human's arguments."""
    item = next(i for i in GATE.items if i.resume_with[0].approved)
    _, recorder, ctx = _ctx(server, "approval_gate", item.id, tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended" and leg0.pending.tool == "book_room"
    other = "R999" if leg0.pending.args.get("room_id") != "R999" else "R998"
    edit = Decision(kind=DecisionKind.edit, args={"room_id": other}, call_id=leg0.pending.call_id)
    asyncio.run(_leg(lambda a: a.resume(leg0.state, DecisionSet(decisions=[edit]), ctx)))
    books = [e for e in recorder.events if e.type == "tool_call" and e.tool == "book_room"]
    assert [b.args for b in books] == [{"room_id": other}]


# --- flight_booking: purchase_hold pauses inside its body; strands re-runs the body from the top -------------


def test_body_pause_runs_prepare_again_on_resume(run_adapter):
    """fb-10: the body prepares (PI4) and interrupts; on resume strands runs it again from the top, so prepare
    runs a second time (PI5) in the resumed leg before the commit: the orphaned first intent is what fails
    final_state. Measured, not hidden."""
    [r] = run_adapter(NAME, profile="careful", arena="flight_booking", items=["fb-10"], timeout_s=120)
    calls = [(e.leg, e.tool) for e in r.trace if e.type == "tool_call" and e.tool.startswith("purchase_hold")]
    pause = [e for e in r.trace if e.type == "suspended" and e.tool == "purchase_hold"]
    assert len(pause) == 1 and pause[0].args["amount"] == 178
    assert calls == [(1, "purchase_hold.prepare"), (2, "purchase_hold.prepare"), (2, "purchase_hold.commit")]
    failed = {c.name for c in r.checks if not c.passed}
    assert failed == {"final_state"}
