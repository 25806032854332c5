"""Google ADK: LongRunningFunctionTool (google_adk) and tool confirmation (google_adk_confirm), both
in a resumable App over LiteLlm, with a SqliteSessionService session store.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs
ends, traces or tool calls equal to vanilla's, a gated pause on the gated call) is
test_conformance.py's; this folder holds what is ADK's own, on the same runs, a file per concern of the
adapter's package. This conftest holds what those files share: the arenas, the cells' fixtures and the
wire helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import catalog
from arena_builtins.adapters.google_adk.info import REJECTED_RESULT

APPROVAL = "request_approval"
ROOT = Path(__file__).resolve().parents[3]
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}
REJECTED_TEXT = json.dumps(REJECTED_RESULT)  # how LiteLLM serialises ADK's rejection on the wire
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def lro(cell):
    return cell("google_adk").wire


@pytest.fixture(scope="module")
def lro_eager(cell):
    return cell("google_adk", profile="scripted-eager").wire


@pytest.fixture(scope="module")
def confirm(cell):
    return cell("google_adk_confirm").wire


@pytest.fixture(scope="module")
def confirm_eager(cell):
    return cell("google_adk_confirm", profile="scripted-eager").wire


@pytest.fixture(scope="module")
def gate(cell):
    return {name: cell(name, "approval_gate", "reckless").wire for name in ("google_adk", "google_adk_confirm")}


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("google_adk", "approval_gate", "reckless-parallel").results


@pytest.fixture(scope="module")
def vanilla_gate(vanilla_by_id):
    return vanilla_by_id("reckless", "approval_gate")


@pytest.fixture(scope="module")
def vanilla_gate_parallel(vanilla_by_id):
    return vanilla_by_id("reckless-parallel", "approval_gate")


def _approval_results(requests) -> dict[str, list[str]]:
    """approval summary -> every tool message the model saw for that request_approval call."""
    calls: dict[str, str] = {}
    seen: dict[str, list[str]] = {}
    for body in requests:
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == APPROVAL:
                    calls[tc["id"]] = json.loads(tc["function"]["arguments"])["summary"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                contents = seen.setdefault(calls[m["tool_call_id"]], [])
                if m["content"] not in contents:
                    contents.append(m["content"])
    return seen


def _rejected_final(expected: list[dict], reason: str) -> None:
    """Vanilla's final answer quotes the deny reason; under ADK confirmation the model quotes ADK's
    fixed rejection result instead (the reason never reaches it)."""
    final = next(e for e in expected if e["type"] == "final")
    assert f"({reason})" in final["text"]
    final["text"] = final["text"].replace(f"({reason})", f"({REJECTED_TEXT})")
