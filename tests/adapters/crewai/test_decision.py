"""The decision is the flow's feedback: request_approval's tool message, on the wire, is decision.as_text()."""

from __future__ import annotations

import pytest

from tests.adapters.crewai.conftest import NOT_HERE

crewai = pytest.importorskip("crewai", reason=NOT_HERE)

from tests.adapters.crewai.conftest import APPROVAL, ITEMS, tool_results  # noqa: E402


def test_model_receives_decision_as_approval_tool_result(scripted):
    """On the wire: request_approval's tool message is exactly decision.as_text(), the flow's feedback."""
    results, requests = scripted
    seen = tool_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        assert seen[pause.args["summary"]] == {APPROVAL: ITEMS[r.item_id].resume_with[0].as_text()}, r.item_id
