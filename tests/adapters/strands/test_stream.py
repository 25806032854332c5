"""strands streamed legs: stream_async read to its end, its events told (adapters/strands/stream.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("strands")

from arena import catalog  # noqa: E402
from tests.adapters.strands.conftest import _cls  # noqa: E402


# --- a streamed run: stream_async on every leg ---------------------------------------------------------------


def test_a_streamed_run_tells_the_calls_the_pause_and_the_results(server):
    """approval_gate streamed: every leg reads `agent.stream_async(...)`. The items end as in a plain run, and what
    the stream told holds against the tool log: the model's calls from its messages, the gated call's pause from
    its tool_interrupt_event, and in the resumed leg the held call's result (the tool's own, or the denial)."""
    from arena.runner import run_items

    spec = catalog.load_arena("approval_gate")
    items = [spec.item("gate-01"), spec.item("gate-02")]
    results = run_items(_cls(), spec, items, server=server, model="reckless", timeout_s=120, stream=True)
    told = {r.item_id: [(e.leg, e.text, e.tool, e.result) for e in r.trace if e.type == "streamed"] for r in results}
    for r in results:
        assert r.status == "passed" and {c.name: c.passed for c in r.checks}["stream_matches_run"]
        assert [t[:3] for t in told[r.item_id]] == [
            (0, "tool_call", "search_rooms"), (0, "tool_result", "search_rooms"), (0, "tool_call", "book_room"),
            (0, "pause", "book_room"), (1, "tool_result", "book_room")]
    assert told["gate-01"][-1][3].startswith("BOOKED")
    assert told["gate-02"][-1][3] == spec.item("gate-02").resume_with[0].as_text()
