"""pydantic_ai: how a run ends with its deferred calls (`outcome.py`): an ordinary sibling call of the turn runs
before the pause, only the deferred one is held."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from arena import catalog  # noqa: E402
from tests.conftest import normalised  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "pydantic_ai"


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


# --- scripted-eager -----------------------------------------------------------------------------
# pydantic-ai runs every ordinary function tool of a model turn and only collects the deferred one:
# with request_approval + book_room in the same turn, book_room EXECUTES in leg 0, before the run
# ends with DeferredToolRequests. Its return is kept in the message history, so on resume it is not
# executed again; the model is sent the decision AND the already-made booking. The trace is vanilla's
# with the book_room call moved (approved items) or added (denied items) just before the suspension.
# This does not depend on the order of the two calls (book_room comes first on Tuesdays and Thursdays).
# How each item ends (no error, two legs, the checks it fails): test_conformance.py's SIBLING_RAN_FIRST.


def test_eager_book_room_runs_before_the_pause_on_every_item(eager):
    results, _ = eager
    for r in results:
        checks = {c.name: c for c in r.checks}
        assert "ran before the suspension" in checks["no_tool_before_suspend"].reason
        assert "executed before the run suspended" in checks["suspended"].reason
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1, r.item_id  # executed once, never re-executed on resume
        assert books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
        assert "request_approval" not in [e.tool for e in r.trace if e.type == "tool_call"]  # still intercepted


def test_eager_trace_is_vanilla_with_book_room_before_the_pause(eager, vanilla_eager):
    results, _ = eager
    spec = catalog.load_arena("human_in_the_loop")
    for r in results:
        vanilla_events = normalised(vanilla_eager[r.item_id])
        expected = [e for e in vanilla_events if not (e["type"] == "tool_call" and e["tool"] == "book_room")]
        room = next(i for i in spec.items if i.id == r.item_id).metadata["expected_room"]
        booked = {
            "leg": 0,
            "type": "tool_call",
            "tool": "book_room",
            "args": {"room_id": room},
            "result": spec.functions["book_room"](room_id=room),
        }
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, booked)
        assert normalised(r) == expected, r.item_id


def test_eager_resume_replays_the_executed_booking_to_the_model(eager):
    """On resume the model gets the decision for request_approval and the stored book_room result."""
    results, requests = eager
    spec = catalog.load_arena("human_in_the_loop")
    decisions = dict(tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in spec.items}
    bookings = dict(tool_messages(requests, "book_room"))
    assert set(bookings) == set(decisions)
    assert all(text.startswith("BOOKED ") for text in bookings.values())


GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell(NAME, "approval_gate", "reckless-parallel").wire


@pytest.fixture(scope="module")
def vanilla_gate_parallel(vanilla_by_id):
    return vanilla_by_id("reckless-parallel", "approval_gate")


def test_gate_reckless_parallel_sibling_search_runs_before_the_pause(gate_parallel, vanilla_gate_parallel):
    """reckless-parallel emits book_room + a second search_rooms in one turn. pydantic-ai executes the
    ordinary sibling (search_rooms) in that turn and only holds the gated call, so the second search
    runs in leg 0 before the suspension, whatever the decision. Vanilla holds the sibling: it runs it
    after book_room on approve and never on deny. So the trace is vanilla's with that search moved
    (approved) or added (denied) just before the suspension; all checks still pass (a read tool)."""
    for r in gate_parallel[0]:
        item = GATE_ITEMS[r.item_id]
        v = normalised(vanilla_gate_parallel[r.item_id])
        first_search = v[0]
        assert first_search["type"] == "tool_call" and first_search["tool"] == "search_rooms"
        expected = [e for e in v if not (e["type"] == "tool_call" and e["tool"] == "search_rooms" and e["leg"] == 1)]
        if item.resume_with[0].approved:
            assert len(expected) == len(v) - 1, r.item_id  # vanilla ran it after the approval
        else:
            assert expected == v, r.item_id  # vanilla never ran it
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {**first_search, "leg": 0})
        assert normalised(r) == expected, r.item_id
