"""OpenAI Agents, streamed: the SDK streams no event for an approval ("approvals represent interruptions, not
streamed items"); the adapter tells the pause from the streamed result's `interruptions` once the stream ends,
before the leg returns, so `stream_matches_run` finds every suspension announced, on the gated tool (issue 50 §4)."""

from __future__ import annotations

import pytest

pytest.importorskip("agents")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.openai_agents import OpenAIAgentsAdapter  # noqa: E402


def test_a_streamed_run_announces_the_pause_the_sdk_reports_on_its_result(server):
    from arena.runner import run_items

    spec = catalog.load_arena("approval_gate")
    items = [spec.item("gate-01"), spec.item("gate-02")]
    results = run_items(OpenAIAgentsAdapter, spec, items, server=server, model="reckless", timeout_s=120, stream=True)
    for r in results:
        check = next(c for c in r.checks if c.name == "stream_matches_run")
        assert r.status == "passed" and check.passed, check.reason
        told = [(e.leg, e.text, e.tool) for e in r.trace if e.type == "streamed"]
        stop = next(e for e in r.trace if e.type == "suspended")
        assert (0, "pause", "book_room") in told and stop.tool == "book_room"
        pause = next(e for e in r.trace if e.type == "streamed" and e.text == "pause")
        assert pause.seq < stop.seq
