"""The approval tool is CrewAI's result_as_answer tool: CrewAI runs a turn's calls in the model's order and stops at
it, so what happens to a sibling call depends on that order."""

from __future__ import annotations

import pytest

from tests.adapters.crewai.conftest import NOT_HERE

crewai = pytest.importorskip("crewai", reason=NOT_HERE)

from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.crewai.conftest import APPROVAL, ITEMS, tool_results  # noqa: E402
from arena_builtins.adapters.crewai.decision import NOT_EXECUTED  # noqa: E402
from tests.conftest import behaviour, normalised  # noqa: E402


def _approval_turn(r) -> tuple[str, ...]:
    """The calls of the model turn that asked for approval, in the model's order (as the harness's
    gateway recorded its answer)."""
    asked = next(
        e for e in r.trace if e.type == "model_call" and APPROVAL in [c["name"] for c in e.response["tool_calls"]]
    )
    return tuple(c["name"] for c in asked.response["tool_calls"])


def _without_books(events: list[dict], leg: int) -> list[dict]:
    return [e for e in events if not (e["type"] == "tool_call" and e["tool"] == "book_room" and e["leg"] == leg)]


# What the harness's checks fail when book_room has already run at the pause (the rest, `completed`
# included, pass: CrewAI itself ran to the end, nothing errored).
BOOK_FIRST_FAILS = {
    True: {"suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "args_as_requested"},
    False: {"suspended", "no_tool_before_suspend", "tool_not_used"},
}


def test_eager_sibling_runs_in_the_paused_turn_only_when_listed_first(eager, vanilla_eager):
    """scripted-eager emits request_approval and book_room in one turn, book_room FIRST on Tuesdays and
    Thursdays and second otherwise (policy.book_first). CrewAI runs a turn's native tool calls one by
    one, in the model's order (no parallel batch when a result_as_answer tool is among them), and stops
    at request_approval. So what happens to the sibling depends on the model's order (a real finding,
    pinned here for both orders, and through the worker in test_worker.py):

    - approval first (Mon/Wed/Fri): book_room never runs in the paused turn, neither before the pause
      nor on resume. The model is told so (NOT EXECUTED) next to the decision; on approval it asks for
      book_room again and it executes once, after the resume. The trace is identical to vanilla's,
      which holds the sibling and executes it itself on approval: the same calls, in the same legs.
    - book_room first (Tue/Thu): book_room has ALREADY EXECUTED in leg 0 when the flow pauses, whatever
      the human later decides; the model gets its real BOOKED result next to the decision and never
      asks again (booked once, not twice). The item fails the checks that forbid a consequential call
      before the approval; on a denial the booking stands while the final text still says it was not
      made. Apart from that book_room moving to leg 0 (or appearing at all, when denied) the trace is
      vanilla's."""
    results, requests = eager
    assert len(results) == 12
    seen = tool_results(requests)
    orders: set[tuple[bool, bool]] = set()
    for r in results:
        item = ITEMS[r.item_id]
        decision = item.resume_with[0]
        book_first = policy_book_first(item.metadata["day"])
        orders.add((decision.approved, book_first))
        assert _approval_turn(r) == (("book_room", APPROVAL) if book_first else (APPROVAL, "book_room")), r.item_id
        assert r.error is None and r.legs == 2, (r.item_id, r.error)
        pause = next(e for e in r.trace if e.type == "suspended")
        room = pause.args["summary"].split()[2]
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        asked = [
            c for e in r.trace if e.type == "model_call" for c in e.response["tool_calls"] if c["name"] == "book_room"
        ]
        if not book_first:
            assert r.status == "passed", (r.item_id, r.error, [c for c in r.checks if not c.passed])
            assert r.checks and all(c.passed for c in r.checks), r.item_id
            assert normalised(r) == normalised(vanilla_eager[r.item_id]), r.item_id
            assert seen[pause.args["summary"]] == {APPROVAL: decision.as_text(), "book_room": NOT_EXECUTED}, r.item_id
            expected_books = [(1, {"room_id": room})] if decision.approved else []
            assert [(e.leg, e.args) for e in books] == expected_books, r.item_id
            assert len(asked) == (2 if decision.approved else 1), r.item_id  # asked again after the approval
            continue
        assert r.status == "failed", (r.item_id, r.checks)
        failed = {c.name for c in r.checks if not c.passed}
        assert failed == BOOK_FIRST_FAILS[decision.approved], (r.item_id, failed)
        assert {"completed", "final_from_model", "nothing_after_final", "decision_reached_model", "no_replay"} <= {
            c.name for c in r.checks if c.passed
        }, r.item_id
        suspended = next(c for c in r.checks if c.name == "suspended")
        assert suspended.reason == "book_room executed before the run suspended", r.item_id
        assert behaviour(r) == [
            ("tool_call", "search_rooms"), ("tool_call", "book_room"), ("suspended", APPROVAL), ("resumed", None),
            ("final", None),
        ], r.item_id
        assert [(e.leg, e.args) for e in books] == [(0, {"room_id": room})], r.item_id  # once, before the pause
        assert books[0].result.startswith(f"BOOKED {room} "), r.item_id
        assert len(asked) == 1, r.item_id  # never asked again: no second booking
        # The model saw the booking's real result beside the decision.
        assert seen[pause.args["summary"]] == {APPROVAL: decision.as_text(), "book_room": books[0].result}, r.item_id
        if decision.approved:
            assert r.trace[-1].text.startswith(f"Done: BOOKED {room} "), r.item_id
        else:
            assert decision.text in r.trace[-1].text and f"not booked room {room}" in r.trace[-1].text, r.item_id
        expected = _without_books(normalised(vanilla_eager[r.item_id]), leg=1)
        assert _without_books(normalised(r), leg=0) == expected, r.item_id
    # both orders of an approved and of a denied item were exercised
    assert orders == {(True, True), (True, False), (False, True), (False, False)}
