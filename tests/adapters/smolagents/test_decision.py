"""The decision as smolagents' resume input: the text that replaces the placeholder observation of the
request_approval step in the agent's memory."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("smolagents")

from arena_builtins.adapters.smolagents.tools import PENDING  # noqa: E402
from tests.adapters.smolagents.conftest import APPROVAL, ITEMS, _text  # noqa: E402
from tests.adapters.smolagents.history import needs_text_history  # noqa: E402


@needs_text_history
def test_emulated_decision_is_the_approval_observation(emulated):
    """On the wire: the user message answering the request_approval step is "Observation:\\n" + the
    decision text, followed by the task again (run(task, reset=False) appends a TaskStep). The
    placeholder observation never reaches the model: the interrupt stops the run before the next call."""
    results, requests = emulated
    answered: dict[str, str] = {}  # approval summary -> the observation the model saw
    for body in requests:
        messages = body["messages"]
        assert PENDING not in json.dumps(body)
        for m, nxt in zip(messages, messages[1:]):
            text = _text(m)
            if m["role"] == "assistant" and f"'name': '{APPROVAL}'" in text:
                summary = text.split("'summary': '", 1)[1].split("'}", 1)[0]
                answered[summary] = _text(nxt)
    for r in results:
        item = ITEMS[r.item_id]
        pause = next(e for e in r.trace if e.type == "suspended")
        expected = f"Observation:\n{item.resume_with[0].as_text()}\nNew task:\n{item.input}"
        assert answered[pause.args["summary"]] == expected, r.item_id
