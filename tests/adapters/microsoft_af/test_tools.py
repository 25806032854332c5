"""Microsoft Agent Framework tools: the approval tool and the gated tools are `always_require` FunctionTools; a
sibling call of the approval turn is held and run when the batch resumes, whatever the decision
(adapters/microsoft_af/tools.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.microsoft_af.info import REJECTED_RESULT  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.microsoft_af.conftest import (  # noqa: E402
    APPROVAL,
    ITEMS,
    REJECTED_AS_REASON,
    _expected_deny_trace,
    _tool_results_by_item,
)
from tests.conftest import normalised  # noqa: E402


@pytest.fixture(scope="module")
def eager(cell):
    return cell("microsoft_af", profile="scripted-eager").wire


def test_eager_sibling_held_then_run_whatever_the_decision(eager, vanilla_eager):
    """scripted-eager: the framework holds the sibling book_room during the pause (it is stored in the
    session as an "already approved" request of the approval batch) and runs it when the batch
    resumes, even when the approval was REJECTED. So: nothing runs before the suspension; approved
    items equal vanilla; denied items execute book_room in leg 1 (tool_not_used fails on every denied
    item, and so does denied_not_executed: it ran after the human denied the request) and the final text
    carries the fixed rejection text as in the scripted profile.
    The model's call order varies by item (book_room first on Tuesdays and Thursdays): both hold in
    both orders, for approved and for denied items.
    """
    results, requests = eager
    seen = _tool_results_by_item(requests)
    for r in results:  # how each ends (the checks denied items fail): test_conformance.py's SIBLING_RUN_ON_DENIAL
        item = ITEMS[r.item_id]
        decision = item.resume_with[0]
        v = vanilla_eager[r.item_id]
        got = normalised(r)
        expected = normalised(v)
        if decision.approved:
            assert got == expected, r.item_id
        else:
            expected = _expected_deny_trace(expected, r.item_id)
            book = next(e for e in got if e["type"] == "tool_call" and e["tool"] == "book_room")
            assert book["leg"] == 1 and book["args"] == {"room_id": item.metadata["expected_room"]}
            assert book["result"].startswith("BOOKED")
            expected.insert(len(expected) - 1, book)  # right after `resumed`, before the final answer
            assert got == expected, r.item_id
            # The model is told both: the approval was rejected, and the room was booked anyway.
            assert seen[item.input][APPROVAL] == [REJECTED_RESULT]
            assert seen[item.input]["book_room"] == [book["result"]]
        assert sum(e.get("tool") == "book_room" for e in got) == 1, r.item_id


# --- approval_gate: book_room gated by the framework's own tool approval ---------------------------
# book_room is a FunctionTool with approval_mode="always_require" whose body is one harness call.
# The run stops with a function_approval_request for it; resume sends
# to_function_approval_response(approved). Approved: the framework runs the body. Denied: it never
# runs and the framework writes its fixed rejection text as book_room's result (the response is a
# bool, so the reason cannot reach the model: the final answer quotes that fixed text instead).

GATE_ITEMS = {i.id: i for i in catalog.load_arena("approval_gate").items}


@pytest.fixture(scope="module")
def gate(cell):
    return cell("microsoft_af", "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("microsoft_af", "approval_gate", "reckless-parallel").wire


@pytest.fixture(scope="module")
def vanilla_gate(vanilla_by_id):
    return vanilla_by_id("reckless", "approval_gate")


@pytest.fixture(scope="module")
def vanilla_gate_parallel(vanilla_by_id):
    return vanilla_by_id("reckless-parallel", "approval_gate")


def _expected_gate_deny_trace(vanilla_trace: list[dict], item_id: str) -> list[dict]:
    reason = GATE_ITEMS[item_id].resume_with[0].text
    expected = [dict(e) for e in vanilla_trace]
    final = expected[-1]
    assert final["type"] == "final" and f"({reason})" in final["text"]
    final["text"] = final["text"].replace(f"({reason})", f"({REJECTED_AS_REASON})")
    return expected


def test_gate_reckless_traces_vs_vanilla(gate, vanilla_gate):
    """Approved: identical to vanilla. Denied: identical except the final text, which quotes the
    framework's fixed rejection text where vanilla's quotes the human's reason."""
    for r in gate[0]:
        expected = normalised(vanilla_gate[r.item_id])
        if not GATE_ITEMS[r.item_id].resume_with[0].approved:
            expected = _expected_gate_deny_trace(expected, r.item_id)
        assert normalised(r) == expected, r.item_id


def test_gate_denial_reaches_model_as_fixed_rejection(gate):
    """On the wire, book_room's tool message is its real result (approved) or the framework's fixed
    rejection text (denied); the deny reason is sent nowhere."""
    results, requests = gate
    seen = _tool_results_by_item(requests)
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert seen[item.input]["book_room"] == [book.result], r.item_id
        else:
            assert seen[item.input]["book_room"] == [REJECTED_RESULT], r.item_id
            bodies = [json.dumps(b) for b in requests if item.input in json.dumps(b)]
            assert bodies and not any(decision.text in b for b in bodies), r.item_id


def _requested_at_pause(result) -> list[str]:
    """The tools of the model answer the run paused on, in the model's order (from the gateway's record)."""
    pause = next(e for e in result.trace if e.type == "suspended")
    asked = [e for e in result.trace if e.type == "model_call" and e.seq < pause.seq][-1]
    return [c["name"] for c in asked.response["tool_calls"]]


def test_gate_reckless_parallel_sibling_held_then_run_whatever_the_decision(gate_parallel, vanilla_gate_parallel):
    """reckless-parallel emits book_room + a second search_rooms in one turn, book_room first on Tuesdays
    and Thursdays and second otherwise. The framework holds the sibling during the pause and runs it
    when the approval batch resumes, even when book_room was REJECTED (as with scripted-eager's sibling
    in human_in_the_loop). All checks still pass: the sibling is a read tool.

    Approved: the framework runs the resumed batch in the MODEL'S order, vanilla always runs the approved
    call first and the held sibling after it. So with book_room first the trace is identical to vanilla;
    with search_rooms first the two leg-1 calls come in the other order (search_rooms, then book_room).
    That order dependence is a real finding, pinned here for both orders.
    Denied: vanilla never runs the sibling; here it runs in leg 1 right after `resumed`, and the final
    text quotes the fixed rejection text, whichever call the model listed first."""
    orders: set[tuple[bool, bool]] = set()
    for r in gate_parallel[0]:
        item = GATE_ITEMS[r.item_id]
        approved = item.resume_with[0].approved
        book_first = policy_book_first(item.metadata["day"])
        assert _requested_at_pause(r) == (["book_room", "search_rooms"] if book_first else ["search_rooms", "book_room"])
        orders.add((approved, book_first))
        expected = normalised(vanilla_gate_parallel[r.item_id])
        first_search = expected[0]
        assert first_search["type"] == "tool_call" and first_search["tool"] == "search_rooms"
        if approved:
            leg1 = [i for i, e in enumerate(expected) if e["type"] == "tool_call" and e["leg"] == 1]
            # vanilla: the approved call, then the held sibling, whatever the model's order
            assert [expected[i]["tool"] for i in leg1] == ["book_room", "search_rooms"], r.item_id
            if not book_first:  # the framework keeps the model's order: the sibling runs first
                a, b = leg1
                expected[a], expected[b] = expected[b], expected[a]
        else:
            expected = _expected_gate_deny_trace(expected, r.item_id)
            assert [e["type"] for e in expected[-2:]] == ["resumed", "final"]
            expected.insert(len(expected) - 1, {**first_search, "leg": 1})
        assert normalised(r) == expected, r.item_id
    # both orders of an approved and of a denied batch were exercised
    assert orders == {(True, True), (True, False), (False, True), (False, False)}
