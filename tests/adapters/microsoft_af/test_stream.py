"""Microsoft Agent Framework streamed legs: `agent.run(..., stream=True)` read to its end, its updates told
(adapters/microsoft_af/stream.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.microsoft_af import MicrosoftAFAdapter  # noqa: E402


def test_streamed_legs_end_as_the_plain_ones_and_name_every_result(cell, server):
    """A streamed call arrives as chunks under one call id (told once); a result carries only the call id, and
    a resume's results answer calls of the paused leg (the held sibling too), named from the session's history.
    Every item ends as in the plain run and the stream check holds."""
    from arena.checks import STREAM_CHECK
    from arena.runner import run_items

    spec = catalog.load_arena("human_in_the_loop")
    plain = cell("microsoft_af", profile="scripted-eager").by_id
    streamed = run_items(MicrosoftAFAdapter, spec, spec.items, server=server, model="scripted-eager", stream=True)
    for result in streamed:
        checks = {c.name: c.passed for c in result.checks}
        assert checks.pop(STREAM_CHECK), result.item_id
        assert (result.status, checks) == (plain[result.item_id].status,
                                           {c.name: c.passed for c in plain[result.item_id].checks})
        told = [e for e in result.trace if e.type == "streamed"]
        calls = [(e.leg, e.call_id) for e in told if e.text == "tool_call"]
        assert calls and len(calls) == len(set(calls)), result.item_id
        assert all(e.tool for e in told), result.item_id
        assert any(e.text == "pause" for e in told), result.item_id
