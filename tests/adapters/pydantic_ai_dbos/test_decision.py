"""pydantic_ai_dbos: the decision reaches the model through the resumed workflow's `DeferredToolResults`, as in
pydantic_ai: the approval tool's result, a gated call's `ToolDenied.message`."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

from arena import catalog  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "pydantic_ai_dbos"


# --- the cells (shared with test_conformance.py) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() (a deny reason too) as request_approval's result, once per item: the
    resumed workflow's DeferredToolResults.calls, as in pydantic_ai."""
    _, requests = scripted
    spec = catalog.load_arena("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    assert sorted(tool_messages(requests, "request_approval")) == sorted(expected.items())
    assert any(text.startswith("DENIED: ") for text in expected.values())


GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


def test_gate_denial_reaches_model_as_book_room_result(cell):
    """approval_gate: denied, the model reads ToolDenied's message (decision.as_text(), with the reason) as
    book_room's result; approved, book_room's real result (pydantic-ai ran it inside the resumed workflow)."""
    results, requests = cell(NAME, "approval_gate", "reckless").wire
    expected = []
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert book.leg == 1
            expected.append((item.input, book.result))
        else:
            expected.append((item.input, decision.as_text()))
            assert f"({decision.text})" in r.trace[-1].text  # the reason itself came back to the model
    assert sorted(tool_messages(requests, "book_room")) == sorted(expected)
