"""pydantic_ai: the agent's tools call the tool box of the leg that runs (`tools.py`, `LegTools`)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

NAME = "pydantic_ai"


# --- resume_safety: the resumed leg's own tool box -----------------------------------------------------------


def test_a_resumed_leg_calls_its_own_tool_box_so_a_concurrent_second_resume_overlaps_the_first(tmp_path):
    """The agent is built once per adapter instance; its tools must call the tool box of the leg that runs,
    not the first leg's. rs-double-concurrent holds the first resume's book_room in its own tool box until
    the second resume has ended: both resumes come before any booking (with the first leg's tool box, the
    first resume booked and finished before the second began)."""
    from arena import evaluate

    run = evaluate("resume_safety", [NAME], items=["rs-double-concurrent"], out=tmp_path, timeout=120)[0]
    r = run.results[0]
    resumes = [e.seq for e in r.trace if e.type == "resumed"]
    books = [e.seq for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    replayed = next(e.seq for e in r.trace if e.type == "replayed")
    assert len(resumes) == 2 and len(books) == 2
    assert max(resumes) < min(books) and replayed < max(books), [(e.seq, e.type, e.tool) for e in r.trace]
