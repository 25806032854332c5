"""The LangGraph adapter's tools as create_agent runs them: the approval tool's interrupt() and its result (the
decision as text), sibling tool calls sent to the `tools` node as tasks of their own, and the gated book_room
behind HumanInTheLoopMiddleware (approval_gate), read off the wire."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.checkpoint.sqlite")

from arena import catalog  # noqa: E402
from arena.observed import requesting_call  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.conftest import normalised  # noqa: E402

APPROVAL = "request_approval"
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("langgraph").wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell("langgraph", profile="scripted-eager").wire


def _turn_at_pause(r) -> list[str]:
    """The tool names, in order, of the model answer that asked for the call the run paused on."""
    pause = next(e for e in r.trace if e.type == "suspended")
    asked = requesting_call(r.trace, pause)
    assert asked is not None, r.item_id
    return [c["name"] for c in asked.response["tool_calls"]]


def _approval_results(requests) -> dict[str, tuple[str, str]]:
    """approval summary -> (tool_call_id, the tool result the model saw), read off the wire."""
    calls: dict[str, str] = {}
    answered: dict[str, tuple[str, str]] = {}
    for body in requests:
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == APPROVAL:
                    calls[tc["id"]] = json.loads(tc["function"]["arguments"])["summary"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                answered[calls[m["tool_call_id"]]] = (m["tool_call_id"], m["content"])
    return answered


def test_model_receives_decision_as_approval_tool_result(scripted):
    """On the wire: the request_approval call's tool message is exactly decision.as_text(): the resume
    value came out of interrupt() in the re-run approval tool, which returned it as its result."""
    results, requests = scripted
    answered = _approval_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        _, content = answered[pause.args["summary"]]
        assert content == ITEMS[r.item_id].resume_with[0].as_text(), r.item_id


def test_eager_sibling_executes_before_the_pause_and_is_not_rerun(eager, vanilla_eager):
    """scripted-eager: create_agent sends each tool call of the turn to the `tools` node as its own
    task (Send), in one superstep. book_room's task completes while request_approval's task raises
    the interrupt, so book_room executes BEFORE the suspension. Its ToolMessage is kept in the
    checkpoint as a pending write of that superstep; on resume LangGraph re-runs only the
    interrupted task (request_approval), so book_room is NOT executed again (once in all), and the
    model sees its earlier BOOKED result — also on denied items, where the final answer then says
    it did not book although it did. Exact difference from vanilla (which holds the sibling): the
    approved item's leg-1 book_room moves to leg 0 before `suspended`; a denied item gains a leg-0
    book_room before `suspended`. Everything else is identical. On approved items nothing
    consequential runs after the approval, so args_as_requested fails too; no_replay passes
    (book_room runs once): test_conformance.py's SIBLING_RAN_FIRST. The same holds whichever of the
    two calls the turn lists first (Tuesdays and Thursdays: book_room first), so the order of the turn
    plays no part here.
    """
    results, requests = eager
    answered = _approval_results(requests)
    orders = set()
    for r in results:
        v = vanilla_eager[r.item_id]
        turn = _turn_at_pause(r)
        assert sorted(turn) == ["book_room", APPROVAL], r.item_id
        orders.add(tuple(turn))
        decision = ITEMS[r.item_id].resume_with[0]
        got = normalised(r)
        expected = normalised(v)
        if decision.approved:
            i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
            book = {**expected.pop(i), "leg": 0}
        else:
            assert not any(e.get("tool") == "book_room" for e in expected)
            book = next(e for e in got if e.get("tool") == "book_room")
            assert book["leg"] == 0 and book["result"].startswith("BOOKED")
        s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(s, book)
        assert got == expected, r.item_id
        assert sum(e.get("tool") == "book_room" for e in got) == 1, r.item_id
        # The decision still reaches the model as request_approval's result.
        pause = next(e for e in r.trace if e.type == "suspended")
        assert answered[pause.args["summary"]][1] == decision.as_text(), r.item_id
    assert orders == {("book_room", APPROVAL), (APPROVAL, "book_room")}  # both orders were exercised


# --- approval_gate: HumanInTheLoopMiddleware on the gated book_room ---------------------------------


@pytest.fixture(scope="module")
def gate(cell):
    return cell("langgraph", "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("langgraph", "approval_gate", "reckless-parallel").wire


def _book_room_results(requests) -> dict[str, str]:
    """book_room tool_call_id -> the tool message the model saw for it, read off the wire."""
    calls: set[str] = set()
    seen: dict[str, str] = {}
    for body in requests:
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == "book_room":
                    calls.add(tc["id"])
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                seen[m["tool_call_id"]] = m["content"]
    return seen


def _assert_model_saw_middleware_decision(results, requests):
    """On the wire, book_room's tool message: its real result after an approval; after a denial the
    middleware's own rejection ToolMessage, carrying decision.as_text() as the reason."""
    seen = list(_book_room_results(requests).values())
    for r in results:
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        if decision.approved:
            booked = next(e.result for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert booked in seen, r.item_id
        else:
            expected = f"User rejected the tool call for `book_room` with reason: {decision.as_text()}"
            assert expected in seen, r.item_id


def test_gate_reckless_model_reads_the_middleware_decision(gate):
    _assert_model_saw_middleware_decision(*gate)


def test_gate_parallel_holds_the_sibling_but_runs_it_after_a_rejection(gate_parallel, vanilla_by_id):
    """reckless-parallel: book_room and a second search_rooms in one turn. The middleware's batched
    interrupt sits in `after_model`, before the `tools` node, so NEITHER call runs before the pause
    (as in vanilla). On approve both run after the resume, in the order the model's turn lists them
    (the `tools` node gets one task per call, in turn order); vanilla instead runs the approved call
    first and then the held sibling. So the order matters (a real finding): with book_room first in
    the turn (Tuesdays and Thursdays) traces equal vanilla's; with book_room second, leg 1 runs
    search_rooms before book_room, the reverse of vanilla's leg 1. On reject the middleware only
    replaces book_room with its rejection message; the un-gated sibling search_rooms is
    auto-approved and executes in leg 1, where vanilla never runs held calls of a denied turn.
    Exact difference on the 6 denied items: one leg-1 search_rooms (same args as the leg-0 one)
    between `resumed` and `final`. All checks still pass (no_replay allows the held sibling).
    """
    results, requests = gate_parallel
    vanilla = vanilla_by_id("reckless-parallel", "approval_gate")
    orders = set()
    for r in results:
        item = GATE_ITEMS[r.item_id]
        turn = _turn_at_pause(r)
        book_first = ["book_room", "search_rooms"]
        assert turn == (book_first if policy_book_first(item.metadata["day"]) else book_first[::-1]), r.item_id
        orders.add(tuple(turn))
        got, expected = normalised(r), normalised(vanilla[r.item_id])
        after = [(e["tool"], e["leg"]) for e in got if e["type"] == "tool_call" and e["leg"] == 1]
        if item.resume_with[0].approved:
            assert after == [(name, 1) for name in turn], r.item_id  # the model's order, both orders
            leg1 = [k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["leg"] == 1]
            # vanilla: the approved call first, then the held sibling, whatever the turn's order
            assert [expected[k]["tool"] for k in leg1] == book_first, r.item_id
            in_turn_order = sorted((expected[k] for k in leg1), key=lambda e: turn.index(e["tool"]))
            for k, e in zip(leg1, in_turn_order):
                expected[k] = e
        else:
            assert after == [("search_rooms", 1)], r.item_id
            search = next(e for e in expected if e.get("tool") == "search_rooms")
            final = next(k for k, e in enumerate(expected) if e["type"] == "final")
            expected.insert(final, {**search, "leg": 1})
        assert got == expected, r.item_id
    assert orders == {("book_room", "search_rooms"), ("search_rooms", "book_room")}
    _assert_model_saw_middleware_decision(results, requests)
