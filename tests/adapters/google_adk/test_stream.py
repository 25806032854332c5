"""Streamed legs: ADK's SSE mode, only the aggregated events told and read."""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena import catalog  # noqa: E402


@pytest.mark.parametrize("adapter", ["google_adk", "google_adk_confirm"])
def test_streamed_legs_end_as_the_plain_ones_and_tell_each_call_once(adapter, cell, server):
    """SSE mode repeats every call in partial events (one per argument chunk, the long-running flag already
    set); only the aggregated events are told and read, so each leg tells each call id once, the stream
    check holds, and every item ends as in the plain run (scripted-eager: a sibling runs before the pause)."""
    from arena.checks import STREAM_CHECK
    from arena.runner import run_items

    spec = catalog.load_arena("human_in_the_loop")
    plain = cell(adapter, profile="scripted-eager").by_id
    entry = catalog.adapters()[adapter]
    streamed = run_items(entry.load(), spec, spec.items, server=server, model="scripted-eager", stream=True)
    for result in streamed:
        checks = {c.name: c.passed for c in result.checks}
        assert checks.pop(STREAM_CHECK), result.item_id
        assert (result.status, checks) == (plain[result.item_id].status,
                                           {c.name: c.passed for c in plain[result.item_id].checks})
        told = [(e.leg, e.call_id) for e in result.trace if e.type == "streamed" and e.text == "tool_call"]
        assert told and len(told) == len(set(told)), result.item_id
