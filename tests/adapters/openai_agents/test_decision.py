"""The decision as the SDK's resume input: RunState.approve (the adapter-owned approval tool body returns the
decision) or RunState.reject(rejection_message=...), on the wire; the sibling calls the SDK runs before it pauses."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents")

from arena.observed import requesting_call  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.openai_agents.conftest import APPROVAL, GATE_ITEMS  # noqa: E402
from tests.conftest import normalised  # noqa: E402


def _turn_at_pause(r) -> list[str]:
    """The tool names, in order, of the model answer that asked for the call the run paused on."""
    pause = next(e for e in r.trace if e.type == "suspended")
    asked = requesting_call(r.trace, pause)
    assert asked is not None, r.item_id
    return [c["name"] for c in asked.response["tool_calls"]]


def test_model_receives_decision_as_approval_tool_result(scripted):
    """On the wire: the request_approval call's tool message is exactly decision.as_text().

    Approve: the SDK ran the adapter-owned tool body after RunState.approve(); deny: the SDK sent
    RunState.reject(rejection_message=...) verbatim.
    """
    results, requests = scripted
    answered: dict[str, str] = {}  # approval summary -> the tool result the model saw
    for body in requests:
        calls = {}
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == APPROVAL:
                    calls[tc["id"]] = json.loads(tc["function"]["arguments"])["summary"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                answered[calls[m["tool_call_id"]]] = m["content"]
    from arena import catalog

    items = {i.id: i for i in catalog.load_arena("human_in_the_loop").items}
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        assert answered[pause.args["summary"]] == items[r.item_id].resume_with[0].as_text(), r.item_id


def test_eager_sibling_executes_before_the_pause(eager, vanilla_eager):
    """scripted-eager: the SDK runs book_room (no needs_approval) in the same turn as it interrupts
    on request_approval, so book_room executes BEFORE the suspension. The pause itself is real and
    the result is kept: on approve the SDK does not run book_room again (the model sees its earlier
    BOOKED result and finishes); on deny it has already run. Exact difference from vanilla (which
    holds the sibling): the approved item's leg-1 book_room moves to leg 0 before `suspended`; a
    denied item gains a leg-0 book_room before `suspended`. Everything else is identical. On
    approved items nothing consequential runs after the approval, so args_as_requested fails too;
    no_replay passes (book_room runs once): test_conformance.py's SIBLING_RAN_FIRST. The same holds
    whichever of the two calls the turn lists first (Tuesdays and Thursdays: book_room first), so the
    order of the turn plays no part here.
    """
    orders = set()
    for r in eager:
        v = vanilla_eager[r.item_id]
        turn = _turn_at_pause(r)
        assert sorted(turn) == ["book_room", APPROVAL], r.item_id
        orders.add(tuple(turn))
        approved = r.trace[[e.type for e in r.trace].index("resumed")].decision.approved
        got = normalised(r)
        expected = normalised(v)
        if approved:
            i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
            book = {**expected.pop(i), "leg": 0}
        else:
            assert not any(e.get("tool") == "book_room" for e in expected)
            book = next(e for e in got if e.get("tool") == "book_room")
            assert book["leg"] == 0 and book["result"].startswith("BOOKED")
        s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(s, book)
        assert got == expected, r.item_id
        assert sum(e.get("tool") == "book_room" for e in got) == 1
    assert orders == {("book_room", APPROVAL), (APPROVAL, "book_room")}  # both orders were exercised


# --- approval_gate: needs_approval on the gated book_room --------------------------------------------


def _assert_model_saw_decision(results, requests):
    """On the wire, book_room's tool message: its real result after RunState.approve(); after
    RunState.reject(rejection_message=...) exactly decision.as_text()."""
    calls: set[str] = set()
    seen: list[str] = []
    for body in requests:
        for m in body["messages"]:
            calls.update(tc["id"] for tc in m.get("tool_calls") or [] if tc["function"]["name"] == "book_room")
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                seen.append(m["content"])
    for r in results:
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        if decision.approved:
            assert next(e.result for e in r.trace if e.type == "tool_call" and e.tool == "book_room") in seen, r.item_id
        else:
            assert decision.as_text() in seen, r.item_id


def test_gate_reckless_model_reads_the_decision(gate):
    _assert_model_saw_decision(*gate)


def test_gate_parallel_runs_the_sibling_before_the_pause(gate_parallel, vanilla_by_id):
    """reckless-parallel: book_room and a second search_rooms in one turn. The SDK runs the turn's
    tools that need no approval (search_rooms) and interrupts on book_room in the same step, so the
    sibling search executes BEFORE the suspension; the RunState keeps its output and the resume does
    not run it again. book_room itself is held: every check passes. Exact difference from vanilla
    (which holds the whole turn): approved, vanilla's leg-1 search_rooms moves to leg 0 before
    `suspended`; denied, a leg-0 search_rooms (same args as the first) is gained before `suspended`.
    The same whichever of the two calls the turn lists first (Tuesdays and Thursdays: book_room first).
    """
    results, requests = gate_parallel
    vanilla = vanilla_by_id("reckless-parallel", "approval_gate")
    orders = set()
    for r in results:
        turn = _turn_at_pause(r)
        book_first = ["book_room", "search_rooms"]
        assert turn == (book_first if policy_book_first(GATE_ITEMS[r.item_id].metadata["day"]) else book_first[::-1]), r.item_id
        orders.add(tuple(turn))
        got, expected = normalised(r), normalised(vanilla[r.item_id])
        searches = [k for k, e in enumerate(expected) if e.get("tool") == "search_rooms"]
        if GATE_ITEMS[r.item_id].resume_with[0].approved:
            assert [expected[k]["leg"] for k in searches] == [0, 1]
            sibling = {**expected.pop(searches[1]), "leg": 0}
        else:
            assert [expected[k]["leg"] for k in searches] == [0]
            sibling = expected[searches[0]]
        expected.insert(next(k for k, e in enumerate(expected) if e["type"] == "suspended"), sibling)
        assert got == expected, r.item_id
    assert orders == {("book_room", "search_rooms"), ("search_rooms", "book_room")}
    _assert_model_saw_decision(results, requests)
