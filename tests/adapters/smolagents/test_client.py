"""smolagents' real OpenAIServerModel on the wire: its history as text, independent of the policy."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from tests.adapters.smolagents.conftest import APPROVAL, _text  # noqa: E402


# -- what goes over the wire (independent of the policy) ---------------------------------------------


@pytest.mark.parametrize("which", ["emulated", "unsupported"])
def test_wire_format_is_text_history(which, request):
    """smolagents' real OpenAIServerModel: list-of-text-parts content, tool_choice "required", a final_answer
    tool, stop sequences, and tool history as text only (no assistant tool_calls, no role "tool").
    A policy that follows that history ends each run through the final_answer tool; one that could not
    would make every run hit max_steps=20 and end with smolagents' tool-less final-answer request."""
    _, requests = request.getfixturevalue(which)
    assert requests
    saw_text_calls = saw_observation = False
    for body in requests:
        if "tools" in body:
            assert body["tool_choice"] == "required"
            assert {t["function"]["name"] for t in body["tools"]} == {"search_rooms", APPROVAL, "book_room", "final_answer"}
            assert body["stop"] == ["Observation:", "Calling tools:"]
        else:  # only after max_steps: smolagents' provide_final_answer asks for a plain-text answer
            assert "Based on the above, please provide an answer" in _text(body["messages"][-1])
        for m in body["messages"]:
            assert m["role"] in ("system", "user", "assistant")
            assert "tool_calls" not in m
            assert isinstance(m["content"], list) and all(p["type"] == "text" for p in m["content"])
            text = _text(m)
            saw_text_calls |= m["role"] == "assistant" and text.startswith("Calling tools:\n[{'id': ")
            saw_observation |= m["role"] == "user" and text.startswith("Observation:\n")
    assert saw_text_calls and saw_observation
