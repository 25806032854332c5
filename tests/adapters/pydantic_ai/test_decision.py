"""pydantic_ai: the decision reaches the model as the deferred call's result (`DeferredToolResults.calls`), and a
gated call's denial as `ToolDenied.message` (`decision.py`).

What every adapter shares is test_conformance.py's; this package holds what is pydantic-ai's own, on the same runs."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from arena import catalog  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "pydantic_ai"


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() as the request_approval call's result, once per item."""
    results, requests = scripted
    spec = catalog.load_arena("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    seen = tool_messages(requests, "request_approval")
    assert sorted(seen) == sorted(expected.items())


# --- approval_gate: book_room gated by pydantic-ai's own tool-level approval --------------------
# book_room is a `Tool` with `requires_approval=True`: pydantic-ai never calls its function on the
# model's call, it ends the run with `DeferredToolRequests.approvals`. Resume passes
# `DeferredToolResults(approvals={id: True})` (pydantic-ai then executes the held call itself) or
# `{id: ToolDenied(message=decision.as_text())}` (never executed; the message is the call's result).

GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


def test_gate_denial_reaches_model_as_book_room_result(gate):
    """Denied: the model reads ToolDenied's message, decision.as_text() ("DENIED: reason"), as book_room's
    result; approved: book_room's real result (pydantic-ai ran it). One tool message per item."""
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
