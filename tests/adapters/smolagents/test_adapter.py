"""SmolagentsAdapter (`unsupported`): request_approval is just a tool, the run goes to completion in one leg."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.adapters.smolagents.conftest import APPROVAL, ITEMS, NOT_APPROVED  # noqa: E402
from tests.adapters.smolagents.history import needs_text_history  # noqa: E402
from tests.conftest import behaviour, normalised  # noqa: E402


# -- unsupported: never pauses ------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["unsupported", "unsupported_eager"])
def test_unsupported_never_suspends(which, request):
    """Every item fails, in one leg, never errored (test_conformance.py's NEVER_PAUSES): no pause at all."""
    results = request.getfixturevalue(which)
    results = results[0] if isinstance(results, tuple) else results
    for r in results:
        assert not any(e.type in ("suspended", "resumed") for e in r.trace), r.item_id
        checks = {c.name: c for c in r.checks}
        assert checks["suspended"].reason == "no suspended state was observed: the run never paused"


@needs_text_history
def test_unsupported_trace_and_checks(unsupported, vanilla):
    """request_approval is executed by the harness ("NOT APPROVED: ..."), the model reads that as a
    denial and finishes: no booking on any item, so approved items fail tool_called_once_after_resume
    and denied items still pass tool_not_used and acknowledged. With no pause and no resume, every
    check about the pause and the decision fails too (args_as_requested on approved items,
    decision_reached_model and no_replay on all); the universal checks pass (those sets:
    test_conformance.py's NEVER_PAUSES)."""
    results, _ = unsupported
    for r in results:
        v = normalised(vanilla[r.item_id])
        got = normalised(r)
        summary = next(e for e in v if e["type"] == "suspended")["args"]["summary"]
        assert got[0] == v[0] and got[0]["tool"] == "search_rooms", r.item_id
        assert got[1] == {
            "leg": 0,
            "type": "tool_call",
            "tool": APPROVAL,
            "args": {"summary": summary},
            "result": f"{NOT_APPROVED} ({summary})",
        }
        assert got[2]["type"] == "final" and got[2]["text"].startswith("Understood: the booking was denied (")
        assert len(got) == 3


@needs_text_history
def test_unsupported_eager_books_alongside_the_approval_call(unsupported_eager, vanilla_eager):
    """scripted-eager: smolagents runs every call of a step, one after the other in the model's order
    (the adapter sets max_tool_threads=1), so every item books: denied items now fail tool_not_used as
    well. The model asks for book_room first on Tuesdays and Thursdays and second otherwise, and the
    executed order follows it: book_room runs right before or right after the (executed)
    request_approval. Both orders are pinned. With no pause and no resume, args_as_requested (approved),
    decision_reached_model and no_replay fail too; tool_called_once_after_resume fails on approved items
    because nothing was ever approved, although book_room did run once (those sets:
    test_conformance.py's NEVER_PAUSES_AND_BOOKS)."""
    for r in unsupported_eager:
        got = normalised(r)
        book_first = policy_book_first(ITEMS[r.item_id].metadata["day"])
        step = ["book_room", APPROVAL] if book_first else [APPROVAL, "book_room"]
        assert behaviour(r) == [
            ("tool_call", "search_rooms"),
            *(("tool_call", tool) for tool in step),
            ("final", None),
        ], r.item_id
        asked = [e for e in r.trace if e.type == "model_call"][1]
        assert [c["name"] for c in asked.response["tool_calls"]] == step, r.item_id
        assert got[0] == normalised(vanilla_eager[r.item_id])[0]
        approval, book = (got[2], got[1]) if book_first else (got[1], got[2])
        assert approval["result"].startswith(NOT_APPROVED) and book["result"].startswith("BOOKED ")


def test_cli_reports_unsupported_and_still_runs_every_item(tmp_path):
    import json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", "human_in_the_loop", "--adapter", "smolagents", "--json", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["pause_kind"] == "unsupported" and summary["items"] == 12 and summary["errors"] == 0
    assert summary["checks"]["suspended"] == {"passed": 0, "total": 12}
    assert "has no pause primitive (pause kind unsupported)" in r.stderr
