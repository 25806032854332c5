"""Microsoft Agent Framework store: the leg's state is the serialised AgentSession and requests, plain JSON, resumed
in a fresh adapter or process; no PostgreSQL or Redis store of the framework's own."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena_builtins.adapters.microsoft_af import MicrosoftAFAdapter  # noqa: E402
from tests.adapters.microsoft_af.conftest import ITEMS, REJECTED_AS_REASON, _expected_deny_trace  # noqa: E402
from tests.conftest import normalised  # noqa: E402


class _ResumeInFreshAdapter(MicrosoftAFAdapter):
    """Resumes each leg in a brand-new adapter (new Agent, new client) from the state as JSON text."""

    async def resume(self, state, decision, ctx):
        text = json.dumps(state)  # AgentSession.to_dict() + Content.to_dict(): plain JSON
        fresh = MicrosoftAFAdapter()
        try:
            return await fresh.resume(json.loads(text), decision, ctx)
        finally:
            await fresh.aclose()


def test_resume_from_serialised_session_in_fresh_adapter(run_adapter, vanilla):
    ids = ["hitl-01", "hitl-02", "hitl-03"]
    results = run_adapter(_ResumeInFreshAdapter, items=ids)
    assert [r.status for r in results] == ["passed"] * 3
    for r in results:
        expected = normalised(vanilla[r.item_id])
        if not ITEMS[r.item_id].resume_with[0].approved:
            expected = _expected_deny_trace(expected, r.item_id)
        assert normalised(r) == expected, r.item_id


# --- durable_state: each leg in a fresh worker process --------------------------------------------


def test_durable_state_drops_the_deny_reason_after_the_restart_too(cell):
    """The worker is restarted between legs (test_conformance.py): leg 1 has only the JSON state
    (AgentSession.to_dict() + the approval requests' Content.to_dict()) and restores the session with
    AgentSession.from_dict."""
    results = cell("microsoft_af", "durable_state").results
    # Denied: the reason is dropped here too (fixed rejection text), and the item still passes.
    assert f"({REJECTED_AS_REASON})" in results[1].trace[-1].text


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize(("store", "why"), [
    ("postgres", "agent-framework-postgres 1.0.0a261015 is only a pgvector vector store"),
    ("redis", "agent-framework-redis 1.0.0b261022 (not in .venv: it pins redis<7.2.1"),
])
def test_a_store_run_is_declined_the_framework_has_no_store_there(tmp_path, store, why):
    """agent-framework keeps the paused AgentSession in no PostgreSQL or Redis store of its own: the run on either
    server is not measured, with that reason, and nothing runs on SQLite instead."""
    from arena import evaluate

    done = evaluate("durable_state", ["microsoft_af"], items=["durable-01"], store=store, out=tmp_path)
    assert not list(done) and not done.failed
    channel = MicrosoftAFAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert done.declined["microsoft_af"] == f"microsoft_af has no {store} store: {channel.mechanism}"
    assert why in channel.mechanism and "session.state['tool_approval']" in channel.mechanism
