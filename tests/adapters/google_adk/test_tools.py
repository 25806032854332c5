"""The harness's tools as ADK tools: declared by their JSON schema, their results in ADK's envelope, and the
gated ones as FunctionTool(require_confirmation=True) (approval_gate, both adapters)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena_builtins.arenas._rooms.policy import next_turn  # noqa: E402
from tests.adapters.google_adk.conftest import (  # noqa: E402
    APPROVAL,
    GATE_ITEMS,
    REJECTED_TEXT,
    SPEC,
    _rejected_final,
)
from tests.conftest import normalised  # noqa: E402


# --- precondition: the scripted model reads ADK's tool-result envelope ---------------------------------


def test_scripted_model_reads_through_adks_result_envelope():
    """ADK gives the model a tool's plain return value as {"result": value} (LiteLLM sends that JSON
    as the tool message). The scripted policy must read through it, as a model does; without that
    core support nothing below can pass (the room search result would not parse)."""
    rooms = json.dumps({"day": "Monday", "rooms": [{"room_id": "R102", "name": "Maple", "capacity": 6}]})
    messages = [
        {"role": "user", "content": "Book a meeting room for 3 people on Monday."},
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "search_rooms", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps({"result": rooms})},
    ]
    turn = next_turn(messages)
    assert [c.name for c in turn.tool_calls] == [APPROVAL]


def test_tools_are_declared_by_their_json_schema(lro):
    """The model sees each tool with the spec's JSON schema; LongRunningFunctionTool appends its
    long-running NOTE to request_approval's description."""
    _, requests = lro
    offered = {t["function"]["name"]: t["function"] for t in requests[0]["tools"]}
    assert set(offered) == {s.name for s in SPEC.tools}
    for spec in SPEC.tools:
        fn = offered[spec.name]
        assert fn["parameters"] == spec.parameters, spec.name
        if spec.name == APPROVAL:
            assert fn["description"].startswith(spec.description) and "long-running operation" in fn["description"]
        else:
            assert fn["description"] == spec.description
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and SPEC.instructions in system["content"]


# --- approval_gate: book_room gated by ADK's tool confirmation (both adapters) -----------------------------
# A spec with `requires_approval` becomes FunctionTool(require_confirmation=True) around the one harness
# call: ADK answers the model's call with its placeholder, emits adk_request_confirmation and stops;
# confirmed, ADK runs the held call itself (the harness logs it in leg 1); rejected, it never runs and
# the model reads ADK's fixed rejection result.


@pytest.mark.parametrize("name", ["google_adk", "google_adk_confirm"])
def test_gate_reckless_trace_vs_vanilla(gate, vanilla_gate, name):
    """Approved: identical to vanilla. Denied: the final answer quotes ADK's fixed rejection result
    where vanilla's quotes the human's reason (ADK carries no reason on a rejected confirmation)."""
    results, _ = gate[name]
    for r in results:
        expected = normalised(vanilla_gate[r.item_id])
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        if not decision.approved:
            _rejected_final(expected, decision.text)
        assert normalised(r) == expected, (name, r.item_id)


def test_gate_model_reads_tool_result_or_fixed_rejection(gate):
    """On the wire, book_room's only tool result is the harness's own (in ADK's envelope) when
    confirmed, and ADK's fixed rejection when rejected; ADK's placeholder never reaches the model."""
    for name, (results, requests) in gate.items():
        seen: dict[str, list[str]] = {}
        for body in requests:
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
            ids = {
                tc["id"]
                for m in body["messages"]
                for tc in m.get("tool_calls") or []
                if tc["function"]["name"] == "book_room"
            }
            for m in body["messages"]:
                if (
                    m.get("role") == "tool"
                    and m["tool_call_id"] in ids
                    and m["content"] not in seen.setdefault(user, [])
                ):
                    seen[user].append(m["content"])
        for r in results:
            item = GATE_ITEMS[r.item_id]
            if item.resume_with[0].approved:
                book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
                assert seen[item.input] == [json.dumps({"result": book.result})], (name, r.item_id)
            else:
                assert seen[item.input] == [REJECTED_TEXT], (name, r.item_id)
        assert "requires confirmation" not in json.dumps(requests)
