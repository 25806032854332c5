"""The decision as ADK's resume input: the long-running call's FunctionResponse (google_adk), or a
ToolConfirmation whose rejection is ADK's fixed result (google_adk_confirm)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena_builtins.adapters.google_adk import GoogleADKConfirmAdapter  # noqa: E402
from arena_builtins.adapters.google_adk.info import REJECTED_RESULT  # noqa: E402
from arena_builtins.adapters.google_adk.outcome import CONFIRMATION_CALL  # noqa: E402
from tests.adapters.google_adk.conftest import ITEMS, REJECTED_TEXT, _approval_results, _rejected_final  # noqa: E402
from tests.conftest import normalised  # noqa: E402


def test_confirm_declares_the_fixed_rejection_result():
    # deny_reason is False (test_conformance.py): a rejected confirmation carries no reason
    assert str(REJECTED_RESULT) in GoogleADKConfirmAdapter.info.carries("ask").notes


def test_rejection_text_is_the_installed_frameworks():
    """The pinned rejection result is the one this ADK release writes (guards a silent change)."""
    import inspect

    from google.adk.tools.function_tool import FunctionTool

    assert f'return {{"error": "{REJECTED_RESULT["error"]}"}}' in inspect.getsource(FunctionTool.run_async)


# --- google_adk: LongRunningFunctionTool ----------------------------------------------------------------


def test_lro_model_sees_only_the_decision_and_is_not_called_while_paused(lro):
    """On the wire: request_approval's one and only tool result is {"result": decision.as_text()}
    (ADK's envelope); no interim/pending result was ever sent, i.e. the model was not called
    between the long-running call and the resume."""
    results, requests = lro
    seen = _approval_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        decision = ITEMS[r.item_id].resume_with[0]
        assert seen[pause.args["summary"]] == [json.dumps({"result": decision.as_text()})], r.item_id
    # Per item: search -> approval (pause) -> [book] -> final: 4 requests approved, 3 denied.
    approved = sum(ITEMS[r.item_id].resume_with[0].approved for r in results)
    assert len(requests) == 4 * approved + 3 * (12 - approved)


# --- google_adk_confirm: tool confirmation --------------------------------------------------------------


def test_confirm_traces_vs_vanilla(confirm, vanilla):
    """Approved items: identical to vanilla. Denied items: identical except the final answer, which
    quotes ADK's fixed rejection result where vanilla's quotes the human's reason."""
    results, _ = confirm
    for r in results:
        expected = normalised(vanilla[r.item_id])
        decision = ITEMS[r.item_id].resume_with[0]
        if not decision.approved:
            _rejected_final(expected, decision.text)
        assert normalised(r) == expected, r.item_id


def test_confirm_model_sees_payload_on_confirm_and_fixed_rejection_on_reject(confirm):
    """On confirm ADK runs the adapter-owned body, which returns the ToolConfirmation payload
    (decision.as_text()); on reject the body never runs and the model sees ADK's fixed result. The
    placeholder 'requires confirmation' result ADK stores before the pause never reaches the model,
    nor does the adk_request_confirmation call."""
    results, requests = confirm
    seen = _approval_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        decision = ITEMS[r.item_id].resume_with[0]
        expected = json.dumps({"result": decision.as_text()}) if decision.approved else REJECTED_TEXT
        assert seen[pause.args["summary"]] == [expected], r.item_id
        if not decision.approved:
            assert decision.text not in json.dumps([b["messages"] for b in requests])
    wire = json.dumps(requests)
    assert "requires confirmation" not in wire and CONFIRMATION_CALL not in wire
