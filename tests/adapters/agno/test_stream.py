"""A streamed run: arun / acontinue_run with stream=True, read as agno's event stream."""

from __future__ import annotations

import pytest

pytest.importorskip("agno")

from tests.adapters.agno.conftest import HITL, adapter_module  # noqa: E402


def test_a_streamed_run_with_the_tool_batch_checkpoint_never_pauses(server):
    """Pins what agno 3.1.10 does with `stream=True` on an agent with `checkpoint="tool-batch"` (this adapter's
    agent): the model asks for request_approval, agno holds the call, but the checkpoint after that tool batch
    copies the streaming loop's empty tool executions over the run's tools, so agno finds no paused tool and ends
    the run COMPLETED with no answer; the held call is never answered. What the stream told (the search, its
    result) still matches the tool log. If this fails, agno has changed it: update the adapter's docstring."""
    from arena.runner import run_items

    [r] = run_items(adapter_module().AgnoAdapter, HITL, [HITL.item("hitl-01")], server=server, model="scripted",
                    timeout_s=120, stream=True)
    asked = [c["name"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []]
    assert asked == ["search_rooms", "request_approval"]
    assert [(e.type, e.text) for e in r.trace if e.type in ("streamed", "suspended", "final")] == [
        ("streamed", "tool_call"), ("streamed", "tool_result"), ("final", "")]
    checks = {c.name: c.passed for c in r.checks}
    assert r.status == "failed" and not checks["suspended"] and checks["stream_matches_run"]
