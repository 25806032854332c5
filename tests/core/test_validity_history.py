"""Issue 53: the faults behind regressions users reported are caught by the checks that must catch them; the
reference adapter passes the same items."""

from __future__ import annotations

from arena import catalog
from arena.runner import run_items
from arena_builtins.adapters.vanilla import VanillaAdapter
from tests.history_faults import CutsTheCall


def _run(server, adapter, arena: str, items: tuple[str, ...]):
    spec = catalog.load_arena(arena)
    chosen = [i for i in spec.items if i.id in items]
    assert [i.id for i in chosen] == list(items)
    return {r.item_id: r for r in run_items(adapter, spec, chosen, server=server, model=spec.profiles[0],
                                            timeout_s=60, concurrency=1)}


def _check(result, name: str):
    return next(c for c in result.checks if c.name == name)


def test_a_resumed_history_that_lost_the_call_is_refused_and_caught(server):
    """hitl-01 approves the paused call: its result goes back to the model without the assistant message that asked
    for it (an orphan tool result), which the API refuses (HTTP 400); the run errors, and requests_well_formed names
    the refused request."""
    (faulty,) = _run(server, CutsTheCall, "human_in_the_loop", ("hitl-01",)).values()
    found = _check(faulty, "requests_well_formed")
    assert not found.passed and faulty.status in ("failed", "errored"), faulty
    assert "(leg 1) was refused as the API refuses it (HTTP 400, messages.[" in found.reason, found.reason
    # hitl-01 searched first: the result follows the search's call and result, so the API names the unknown id
    assert "not found in 'tool_calls' of previous message" in found.reason, found.reason
    (reference,) = _run(server, VanillaAdapter, "human_in_the_loop", ("hitl-01",)).values()
    assert _check(reference, "requests_well_formed").passed and reference.status == "passed", reference
