"""Retry parity: every adapter's model client makes exactly one attempt per request (no client retries).

An endpoint fault must not change the framework comparison (one framework retrying through it while
another fails), so no adapter's client retries: the gateway answers every request of the item with
HTTP 500 and counts what arrives. See docs/adapters.md ("Model clients").
"""

from __future__ import annotations

import pytest

from arena import catalog
from arena.catalog import builtin_adapters
from arena.runner import run_items
from tests.adapters.conftest import isolated_factory

HITL = catalog.load_arena("human_in_the_loop")


@pytest.mark.parametrize("name", list(builtin_adapters()))
def test_a_failing_endpoint_is_asked_once(name, server):
    entry = builtin_adapters()[name]
    if not entry.available:
        pytest.skip(f"{entry.framework} is not installed")
    cls = entry.load()
    factory = isolated_factory(server, entry) if entry.isolated else cls
    server.gateway.fault = lambda channel, index: 500
    try:
        (result,) = run_items(factory, HITL, [HITL.item("hitl-01")], server=server, model="scripted", timeout_s=120)
    finally:
        server.gateway.fault = None
    calls = [e for e in result.trace if e.type == "model_call"]
    assert len(calls) == 1, f"{name} asked the failing endpoint {len(calls)} times"
    assert calls[0].response["injected"] is True
    # the harness could not measure this item: it is an infrastructure error, not the adapter's failure
    assert result.status == "errored" and "the model endpoint failed" in result.error
