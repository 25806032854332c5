"""Issue 53: a request whose messages the real API refuses (a tool call without its result, a result without its
call) is refused by the gateway the same way, recorded in the item's trace, and fails `requests_well_formed`."""

from __future__ import annotations

import openai
import pytest

from arena import catalog
from arena.checks import UNIVERSAL, requests_well_formed
from arena.for_arenas import Scoring
from arena.model.pairing import refusal
from arena.trace import TraceRecorder
from arena.types import EvalItem

SYSTEM = {"role": "system", "content": "be brief"}
TASK = {"role": "user", "content": "Book a meeting room for 8 people on Tuesday."}


def _asks(*ids: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "search_rooms", "arguments": "{}"}} for i in ids]}


def _result(call_id: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


@pytest.mark.parametrize("messages", [
    [SYSTEM, TASK],
    [SYSTEM, TASK, _asks("a"), _result("a")],
    [SYSTEM, TASK, _asks("a", "b"), _result("b"), _result("a"), {"role": "assistant", "content": "done"}, TASK],
    [TASK, _asks("a"), _result("a"), _asks("b"), _result("b"), {"role": "user", "content": "and then?"}],
], ids=["no calls", "one pair", "two calls answered in any order", "two turns"])
def test_messages_that_pair_every_call_and_result_pass(messages):
    assert refusal(messages) is None


@pytest.mark.parametrize(("messages", "words", "param"), [
    ([SYSTEM, TASK, _result("a")], "messages with role 'tool' must be a response to a preceeding message with "
                                   "'tool_calls'", "messages.[2].role"),
    ([TASK, _asks("a"), _result("a"), TASK, _result("a")], "must be a response to a preceeding message",
     "messages.[4].role"),
    ([TASK, _asks("a"), _result("b")], "'tool_call_id' of 'b' not found in 'tool_calls' of previous message",
     "messages.[2].tool_call_id"),
    ([TASK, _asks("a", "b"), _result("a"), {"role": "user", "content": "stop"}],
     "did not have response messages: b", "messages.[1].role"),
    ([TASK, _asks("a")], "did not have response messages: a", "messages.[1].role"),
], ids=["an orphan result", "a result after a new turn", "a result for a call not asked", "a call left unanswered",
        "a call that ends the list"])
def test_a_broken_pair_is_refused_in_the_apis_words(messages, words, param):
    refused = refusal(messages)
    assert refused is not None and words in refused.message and refused.param == param


def test_the_gateway_refuses_a_broken_pair_as_the_api_does_and_records_it(server):
    recorder = TraceRecorder()
    client = openai.OpenAI(base_url=server.open_item(recorder, "scripted").base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="scripted", messages=[SYSTEM, TASK, _result("call_1")])
    assert raised.value.status_code == 400
    error = raised.value.body
    assert error["type"] == "invalid_request_error" and error["param"] == "messages.[2].role", error
    assert "must be a response to a preceeding message with 'tool_calls'" in error["message"]
    (event,) = recorder.events
    assert event.type == "model_call" and event.response["status"] == 400
    assert event.response["malformed"] == "messages.[2].role"
    assert event.response["error"] == error["message"]


def test_requests_well_formed_fails_on_the_refused_request_and_passes_otherwise(server):
    recorder = TraceRecorder()
    client = openai.OpenAI(base_url=server.open_item(recorder, "scripted").base_url, api_key="k", max_retries=0)
    client.chat.completions.create(model="scripted", messages=[SYSTEM, TASK])
    spec = catalog.load_arena("human_in_the_loop")
    scoring = Scoring(item=EvalItem(id="x", input="go"), trace=list(recorder.events), arena=spec)
    assert requests_well_formed(scoring).passed
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="scripted", messages=[SYSTEM, TASK, _asks("a"), TASK])
    scoring = Scoring(item=EvalItem(id="x", input="go"), trace=list(recorder.events), arena=spec)
    result = requests_well_formed(scoring)
    assert not result.passed
    assert result.reason.startswith("model request 2 (leg 0) was refused as the API refuses it (HTTP 400, "
                                    "messages.[2].role): An assistant message with 'tool_calls' must be followed"), \
        result.reason
    assert "requests_well_formed" in UNIVERSAL
