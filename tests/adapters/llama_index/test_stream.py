"""llama_index streamed legs: the same stream_events() the leg drives, told as a UI reads it
(adapters/llama_index/outcome.py's tell)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

from arena import catalog  # noqa: E402

NAME = "llama_index"
HITL = catalog.load_arena("human_in_the_loop")


# --- a streamed run: the same stream_events(), read as a UI reads it ---------------------------------------------


def test_a_streamed_run_tells_the_calls_the_wait_and_the_replayed_step(server):
    """human_in_the_loop streamed: the leg reads the stream it always drives and tells what it says. The wait is
    told once, from its InputRequiredEvent, in the leg that stops there; in the resumed leg the waiting step is
    replayed (at the restore and again when the decision arrives), so its ToolCall is told twice before its
    result, the decision text. The items end as in a plain run and every claim holds against the tool log."""
    from arena.runner import run_items

    entry = catalog.adapters()[NAME]
    items = [HITL.item("hitl-01"), HITL.item("hitl-02")]
    results = run_items(entry.load(), HITL, items, server=server, model="scripted", timeout_s=180, stream=True)
    for r, item in zip(results, items):
        assert r.status == "passed" and {c.name: c.passed for c in r.checks}["stream_matches_run"]
        asked = [(e.leg, e.text, e.result) for e in r.trace if e.type == "streamed" and e.tool == "request_approval"]
        assert asked == [(0, "tool_call", None), (0, "pause", None), (1, "tool_call", None), (1, "tool_call", None),
                         (1, "tool_result", item.resume_with[0].as_text())]
