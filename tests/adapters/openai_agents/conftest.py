"""The OpenAI Agents SDK adapter: native tool approval (needs_approval -> interruptions -> RunState).

What every adapter shares (its declared info, how each item of its runs ends, traces equal to
vanilla's, a gated pause on the gated call, durable_state across a restart) is test_conformance.py's;
this folder holds what is the SDK's own, on the same runs, a file per concern of the adapter's package. This
conftest holds what those files share: the arenas, the cells' fixtures and a resume in a fresh adapter."""

from __future__ import annotations

import json

import pytest

from arena import catalog
from arena_builtins.adapters.openai_agents import OpenAIAgentsAdapter

APPROVAL = "request_approval"
GATE_ITEMS = {i.id: i for i in catalog.load_arena("approval_gate").items}
HITL = catalog.load_arena("human_in_the_loop")


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("openai_agents").wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell("openai_agents", profile="scripted-eager").results


@pytest.fixture(scope="module")
def gate(cell):
    return cell("openai_agents", "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("openai_agents", "approval_gate", "reckless-parallel").wire


class _ResumeInFreshAdapter(OpenAIAgentsAdapter):
    """Resumes each leg in a brand-new adapter (new Agent, new client) from the serialised RunState."""

    async def resume(self, state, decision, ctx):
        assert isinstance(state, str)
        assert json.loads(state)  # RunState.to_string(): plain JSON
        fresh = OpenAIAgentsAdapter()
        try:
            return await fresh.resume(state, decision, ctx)
        finally:
            await fresh.aclose()
