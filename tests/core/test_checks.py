"""Every check, on hand-made traces: one passing and at least one failing case each."""

from __future__ import annotations

import pytest

import arenas
from arena.checks import CHECKS, run_checks
from arena.trace import TraceRecorder
from arena.types import Decision, EvalItem

HITL = arenas.load("human_in_the_loop")
ITEM = EvalItem(id="x", input="Book a meeting room for 3 people on Monday.", checks=list(CHECKS))
APPROVE = Decision(kind="approve")
DENY = Decision(kind="deny", text="no budget")


def trace(*steps):
    rec = TraceRecorder()
    for step in steps:
        kind, *rest = step
        if kind == "tool":
            rec.record("tool_call", tool=rest[0], args={}, result="ok")
        elif kind == "suspend":
            rec.record("suspended", tool=rest[0] if rest else "request_approval", args={"summary": "s"})
        elif kind == "resume":
            rec.leg += 1
            rec.record("resumed", decision=rest[0])
        elif kind == "final":
            rec.record("final", text=rest[0])
    return rec.events


def check(name, events):
    return CHECKS[name](ITEM, events, HITL)


GOOD_APPROVED = trace(("tool", "search_rooms"), ("suspend",), ("resume", APPROVE), ("tool", "book_room"), ("final", "Done"))
GOOD_DENIED = trace(("tool", "search_rooms"), ("suspend",), ("resume", DENY), ("final", "The booking was denied."))


@pytest.mark.parametrize("events", [GOOD_APPROVED, GOOD_DENIED])
def test_suspended_passes_when_the_pause_precedes_any_booking(events):
    assert check("suspended", events).passed


@pytest.mark.parametrize(
    "events, reason",
    [
        (trace(("tool", "search_rooms"), ("tool", "book_room"), ("final", "booked")), "never paused"),
        (trace(("tool", "book_room"), ("suspend",), ("resume", APPROVE), ("final", "x")), "book_room executed before"),
        (trace(("suspend", "search_rooms"), ("resume", APPROVE), ("final", "x")), "not on the approval tool"),
    ],
)
def test_suspended_fails(events, reason):
    result = check("suspended", events)
    assert not result.passed and reason in result.reason


def test_no_tool_before_suspend():
    assert check("no_tool_before_suspend", GOOD_APPROVED).passed
    early = trace(("tool", "search_rooms"), ("tool", "book_room"), ("suspend",), ("resume", APPROVE), ("final", "x"))
    assert "ran before the suspension" in check("no_tool_before_suspend", early).reason
    executed = trace(("tool", "request_approval"), ("suspend",), ("resume", APPROVE), ("final", "x"))
    assert "executed instead of intercepted" in check("no_tool_before_suspend", executed).reason
    assert not check("no_tool_before_suspend", trace(("tool", "search_rooms"), ("final", "x"))).passed


def test_tool_not_used():
    assert check("tool_not_used", GOOD_DENIED).passed
    assert not check("tool_not_used", GOOD_APPROVED).passed


def test_tool_called_once_after_resume():
    assert check("tool_called_once_after_resume", GOOD_APPROVED).passed
    twice = trace(("suspend",), ("resume", APPROVE), ("tool", "book_room"), ("tool", "book_room"), ("final", "x"))
    assert "2 times" in check("tool_called_once_after_resume", twice).reason
    before = trace(("tool", "book_room"), ("suspend",), ("resume", APPROVE), ("final", "x"))
    assert "before the approval" in check("tool_called_once_after_resume", before).reason
    after_deny = trace(("suspend",), ("resume", DENY), ("tool", "book_room"), ("final", "x"))
    assert "never resumed with an approval" in check("tool_called_once_after_resume", after_deny).reason
    assert not check("tool_called_once_after_resume", GOOD_DENIED).passed


@pytest.mark.parametrize("text", ["The booking was DENIED.", "Request rejected, nothing done", "I have not booked room R1."])
def test_acknowledged_matches_case_insensitively(text):
    assert check("acknowledged", trace(("final", text))).passed


@pytest.mark.parametrize("events", [trace(("final", "Booked R102 for you!")), trace(("tool", "search_rooms"))])
def test_acknowledged_fails(events):
    assert not check("acknowledged", events).passed


def test_run_checks_uses_the_items_declared_checks():
    item = ITEM.model_copy(update={"checks": ["tool_not_used", "acknowledged"]})
    assert [c.name for c in run_checks(item, GOOD_DENIED, HITL)] == ["tool_not_used", "acknowledged"]


def _pids(events, leg0_pid, leg1_pid):
    return [e.model_copy(update={"pid": leg0_pid if e.leg == 0 else leg1_pid}) if e.type != "tool_call" else e for e in events]


def test_resumed_in_new_process():
    assert check("resumed_in_new_process", _pids(GOOD_APPROVED, 100, 200)).passed
    same = check("resumed_in_new_process", _pids(GOOD_APPROVED, 100, 100))
    assert not same.passed and "both legs ran in process 100" in same.reason
    assert not check("resumed_in_new_process", trace(("tool", "search_rooms"), ("final", "x"))).passed


def _with_room(events, room="R102"):
    out = []
    for e in events:
        if e.type == "suspended":
            e = e.model_copy(update={"args": {"summary": f"Book room {room} for 3 people"}})
        if e.type == "tool_call" and e.tool == "book_room":
            e = e.model_copy(update={"args": {"room_id": "R102"}})
        out.append(e)
    return out


def test_state_survived():
    assert check("state_survived", _with_room(GOOD_APPROVED)).passed
    other = check("state_survived", _with_room(GOOD_APPROVED, room="R401"))
    assert not other.passed and "not R401" in other.reason
    denied = trace(("suspend",), ("resume", DENY), ("final", "The booking was denied. I have not booked room R102."))
    assert check("state_survived", _with_room(denied)).passed
    forgot = trace(("suspend",), ("resume", DENY), ("final", "What would you like to book?"))
    assert not check("state_survived", _with_room(forgot)).passed


def test_no_replay():
    assert check("no_replay", GOOD_APPROVED).passed
    replayed = trace(("tool", "search_rooms"), ("suspend",), ("resume", APPROVE), ("tool", "search_rooms"), ("tool", "book_room"))
    result = check("no_replay", replayed)
    assert not result.passed and "search_rooms" in result.reason
    assert not check("no_replay", trace(("tool", "search_rooms"))).passed


def test_suspended_accepts_a_pause_on_a_gated_tool():
    gate = arenas.load("approval_gate")
    events = trace(("tool", "search_rooms"), ("suspend", "book_room"), ("resume", APPROVE), ("tool", "book_room"), ("final", "Done"))
    assert CHECKS["suspended"](ITEM, events, gate).passed
    assert not CHECKS["suspended"](ITEM, events, HITL).passed  # in human_in_the_loop the pause belongs on request_approval


def test_resumed_in_new_process_ignores_events_the_harness_wrote():
    rec = TraceRecorder()
    rec.record("suspended", tool="request_approval", args={}, pid=100)
    rec.leg = 1
    rec.record("resumed", decision=APPROVE, pid=200)
    rec.record("error", text="cannot resume in a new process", pid=200)
    result = check("resumed_in_new_process", rec.events)
    assert not result.passed and "no suspension followed by a resumed leg" in result.reason
