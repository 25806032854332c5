"""pydantic_ai_dbos: each harness call a DBOS step (`tools.py`); a sibling call of the approval request runs as a
step of the first workflow, before the pause, and never again."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

NAME = "pydantic_ai_dbos"


def test_eager_sibling_booking_runs_before_the_pause_as_in_pydantic_ai(cell):
    """DBOS changes nothing about a sibling call: scripted-eager's book_room, emitted beside request_approval,
    runs in leg 0 (a DBOS step of the first workflow) before the pause, and is never run again."""
    for r in cell(NAME, profile="scripted-eager").results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1 and books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
