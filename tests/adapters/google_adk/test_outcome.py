"""Where ADK itself stops: the long-running call unanswered at the end of a resumable App's stream (siblings of
the same turn run first), and what it does without the None-returning function or without resumability."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena_builtins.adapters.google_adk import GoogleADKAdapter  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.google_adk.conftest import (  # noqa: E402
    APPROVAL,
    GATE_ITEMS,
    ITEMS,
    _approval_results,
    _rejected_final,
)
from tests.conftest import behaviour, normalised, wire_slice  # noqa: E402


def _turn_order(r) -> tuple[str, ...]:
    """The calls of the first model turn that asked for book_room, in the model's order (as the
    harness's gateway recorded its answer)."""
    asked = next(
        e for e in r.trace if e.type == "model_call" and "book_room" in [c["name"] for c in e.response["tool_calls"]]
    )
    return tuple(c["name"] for c in asked.response["tool_calls"])


def _assert_both_orders(results, items, sibling: str) -> None:
    """The scripted model's two-call turn (book_room + `sibling`) puts book_room first on Tuesdays and
    Thursdays, second otherwise. Pins that order per item, and that the results cover both,
    so whatever the caller asserts on every item holds whichever call the model put first."""
    firsts = set()
    for r in results:
        book_first = policy_book_first(items[r.item_id].metadata["day"])
        firsts.add(book_first)
        assert _turn_order(r) == (("book_room", sibling) if book_first else (sibling, "book_room")), r.item_id
    assert firsts == {True, False}


def test_lro_eager_sibling_executes_before_the_pause(lro_eager, vanilla_eager):
    """scripted-eager: ADK runs every call of the model turn; book_room is an ordinary tool, so it
    executes (once) in the same step in which request_approval goes long-running, and only then
    does the resumable invocation pause (decide_step_resume: the long-running call is unanswered).
    It is not run again on resume, and the model sees its BOOKED result, also on denied items.
    Exact difference from vanilla (which holds the sibling): the approved item's leg-1 book_room
    moves to leg 0 before `suspended`; a denied item gains a leg-0 book_room before `suspended`.
    The same whichever call the model put first (both orders are pinned): ADK does not look at the
    order of a turn's calls before running the ordinary ones. (The checks each item fails:
    test_conformance.py's SIBLING_RAN_FIRST.)"""
    results, requests = lro_eager
    _assert_both_orders(results, ITEMS, APPROVAL)
    seen = _approval_results(requests)
    for r in results:
        decision = ITEMS[r.item_id].resume_with[0]
        assert normalised(r) == _eager_expected(r, vanilla_eager[r.item_id]), r.item_id
        pause = next(e for e in r.trace if e.type == "suspended")
        assert seen[pause.args["summary"]] == [json.dumps({"result": decision.as_text()})], r.item_id


def _eager_expected(r, v) -> list[dict]:
    got = normalised(r)
    expected = normalised(v)
    if ITEMS[r.item_id].resume_with[0].approved:
        i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
        book = {**expected.pop(i), "leg": 0}
    else:
        assert not any(e.get("tool") == "book_room" for e in expected)
        book = next(e for e in got if e.get("tool") == "book_room")
        assert book["leg"] == 0 and book["result"].startswith("BOOKED")
    s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
    expected.insert(s, book)
    assert sum(e.get("tool") == "book_room" for e in got) == 1
    return expected


# --- what ADK does without the None-returning function / without resumability --------------------------


class _PendingStatus(GoogleADKAdapter):
    """The long-running function returns a pending status, as in ADK's own LongRunningFunctionTool docs."""

    interim_result: ClassVar[dict] = {"status": "pending"}


class _PendingStatusNotResumable(_PendingStatus):
    resumable = False


class _NotResumable(GoogleADKAdapter):
    resumable = False


@pytest.mark.parametrize("adapter", [_PendingStatus, _PendingStatusNotResumable])
def test_pending_status_does_not_pause_adk_calls_the_model_again(run_adapter, server, adapter):
    """With an interim result ADK emits it as the call's FunctionResponse and the agent loop calls the
    model again straight away (resumable App or not): no pause. The model answers from the pending
    status; the run finishes in leg 0 and the item fails on `suspended`."""
    results, requests = wire_slice(server, lambda: run_adapter(adapter, items=["hitl-01", "hitl-02"]))
    for r in results:
        assert r.status == "failed" and r.legs == 1, r.item_id
        assert behaviour(r) == [("tool_call", "search_rooms"), ("final", None)], r.item_id
        # search, approval, and the extra call with the pending status, all in the one leg
        assert [e.leg for e in r.trace if e.type == "model_call"] == [0, 0, 0], r.item_id
        assert "did not receive a clear approval" in r.trace[-1].text
        assert not next(c for c in r.checks if c.name == "suspended").passed
    assert len(requests) == 6  # per item: search, approval, and the extra call with the pending status
    assert all(v == [json.dumps({"status": "pending"})] for v in _approval_results(requests).values())


def test_not_resumable_pauses_alone_but_goes_on_after_a_sibling(run_adapter, server):
    """Without resumability a lone long-running call still ends the run (its event is the step's
    final response); with a sibling in the same turn the sibling's response is the step's last event,
    so ADK calls the model again, filling the unanswered call with an error: no pause. The same
    whichever call the model put first: hitl-05 (Thursday) gets book_room first, hitl-07 (Monday)
    request_approval first."""
    (alone,) = run_adapter(_NotResumable, items=["hitl-01"])
    assert alone.status == "passed"
    eager, requests = wire_slice(
        server, lambda: run_adapter(_NotResumable, profile="scripted-eager", items=["hitl-05", "hitl-07"])
    )
    assert len(eager) == 2
    _assert_both_orders(eager, ITEMS, APPROVAL)
    for r in eager:
        assert r.legs == 1 and behaviour(r) == [
            ("tool_call", "search_rooms"),
            ("tool_call", "book_room"),
            ("final", None),
        ], r.item_id
        assert "did not receive a clear approval" in r.trace[-1].text, r.item_id
    seen = _approval_results(requests)
    assert len(seen) == 2
    for results in seen.values():
        assert len(results) == 1 and "Missing tool result" in results[0]


def test_confirm_eager_sibling_executes_before_the_pause(confirm_eager, vanilla_eager):
    """As with the long-running tool: ADK executes book_room in the same step in which
    request_approval asks for confirmation, then stops. Same pinned difference from vanilla, plus
    the rejection text in denied items' final answers (and the same checks failed: SIBLING_RAN_FIRST)."""
    results, _ = confirm_eager
    _assert_both_orders(results, ITEMS, APPROVAL)  # the same in both orders, as with the long-running tool
    for r in results:
        decision = ITEMS[r.item_id].resume_with[0]
        expected = _eager_expected(r, vanilla_eager[r.item_id])
        if not decision.approved:
            _rejected_final(expected, decision.text)
        assert normalised(r) == expected, r.item_id


def test_gate_reckless_parallel_sibling_search_runs_before_the_pause(gate_parallel, vanilla_gate_parallel):
    """reckless-parallel emits book_room + a second search_rooms in one turn. ADK runs the ordinary
    sibling (search_rooms) in that step and only holds the gated call, so the second search runs in
    leg 0 before the suspension, whatever the decision. Vanilla holds the sibling: it runs it after
    book_room on approve and never on deny. So the trace is vanilla's with that search moved
    (approved) or added (denied) just before the suspension (and the rejection text on denied
    items); all checks still pass (a read tool). The same whichever call the model put first (book_room
    comes first on gate-01/05/11, all approved; second on the rest)."""
    _assert_both_orders(gate_parallel, GATE_ITEMS, "search_rooms")
    for r in gate_parallel:
        item = GATE_ITEMS[r.item_id]
        v = normalised(vanilla_gate_parallel[r.item_id])
        first_search = v[0]
        assert first_search["type"] == "tool_call" and first_search["tool"] == "search_rooms"
        expected = [e for e in v if not (e["type"] == "tool_call" and e["tool"] == "search_rooms" and e["leg"] == 1)]
        if item.resume_with[0].approved:
            assert len(expected) == len(v) - 1, r.item_id  # vanilla ran it after the approval
        else:
            assert expected == v, r.item_id  # vanilla never ran it
            _rejected_final(expected, item.resume_with[0].text)
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {**first_search, "leg": 0})
        assert normalised(r) == expected, r.item_id
