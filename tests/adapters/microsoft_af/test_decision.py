"""Microsoft Agent Framework decisions: the approval response is a bool; approve and answer run the adapter-owned
approval body with the decision text, a denial is the framework's fixed rejection text (adapters/microsoft_af/
decision.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena_builtins.adapters.microsoft_af import MicrosoftAFAdapter  # noqa: E402
from arena_builtins.adapters.microsoft_af.info import REJECTED_RESULT  # noqa: E402
from tests.adapters.microsoft_af.conftest import (  # noqa: E402
    APPROVAL,
    ITEMS,
    _expected_deny_trace,
    _tool_results_by_item,
)
from tests.conftest import normalised  # noqa: E402


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("microsoft_af").wire


def test_the_fixed_rejection_text_is_declared():
    # deny_reason is False (test_conformance.py): the approval response is a bool; the rejection text is fixed
    assert REJECTED_RESULT in MicrosoftAFAdapter.info.carries("ask").notes


def test_rejection_text_is_the_installed_frameworks():
    """The pinned rejection text is the one this release writes (guards a silent upstream change)."""
    import inspect

    from agent_framework import _tools

    assert f'result="{REJECTED_RESULT}"' in inspect.getsource(_tools._replace_approval_contents_with_results)


def test_scripted_denied_items_pass_decision_reached_model_as_declared(scripted):
    results, _ = scripted
    # every item passes (test_conformance.py); decision_reached_model passes on denied items only
    # because the adapter declares deny_reason=False:
    # the denial itself reaches the model (as the fixed rejection text), the reason does not.
    for r in results:
        check = next(c for c in r.checks if c.name == "decision_reached_model")
        dropped = "deny reason not carried, as declared (deny_reason=false)"
        assert (dropped in check.reason) == (not ITEMS[r.item_id].resume_with[0].approved), (r.item_id, check.reason)


def test_scripted_traces_vs_vanilla(scripted, vanilla):
    """Approved items: identical to vanilla. Denied items: identical except the final text.

    The framework answers a rejected approval with its own fixed tool result
    ("Error: Tool call invocation was rejected by user.") and has no field for a reason, so the
    model's final answer quotes that text where vanilla's quotes the human's reason.
    """
    results, _ = scripted
    for r in results:
        expected = normalised(vanilla[r.item_id])
        if not ITEMS[r.item_id].resume_with[0].approved:
            expected = _expected_deny_trace(expected, r.item_id)
        assert normalised(r) == expected, r.item_id


def test_model_receives_decision_through_the_framework(scripted):
    """On the wire, the request_approval call's tool message is:
    approve -> decision.as_text() (the framework ran the adapter-owned approval body);
    deny -> the framework's fixed rejection text, and the deny reason is sent nowhere."""
    results, requests = scripted
    seen = _tool_results_by_item(requests)
    for r in results:
        item = ITEMS[r.item_id]
        decision = item.resume_with[0]
        results_for_approval = seen[item.input][APPROVAL]
        if decision.approved:
            assert results_for_approval == [decision.as_text()], r.item_id
        else:
            assert results_for_approval == [REJECTED_RESULT], r.item_id
            bodies = [json.dumps(b) for b in requests if item.input in json.dumps(b)]
            assert bodies and not any(decision.text in b for b in bodies), r.item_id
    # A note on approve does reach the model (hitl-03 carries one).
    assert "APPROVED: go ahead, and ask facilities for a projector" in seen[ITEMS["hitl-03"].input][APPROVAL]
