"""--store postgres|redis: smolagents keeps no run anywhere, so both adapters decline."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from arena_builtins.adapters.smolagents import SmolagentsEmulatedAdapter  # noqa: E402


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("store", ["postgres", "redis"])
def test_a_store_run_is_declined_smolagents_persists_no_run(tmp_path, store):
    """smolagents keeps no run anywhere (its to_dict()/save() are the agent's definition): both adapters' runs on
    PostgreSQL or Redis are not measured, with that reason."""
    from arena import evaluate
    from arena_builtins.adapters.smolagents import SmolagentsAdapter

    done = evaluate("durable_state", ["smolagents", "smolagents_emulated"], items=["durable-01"], store=store,
                    out=tmp_path)
    assert not list(done) and not done.failed
    for name, info in (("smolagents", SmolagentsAdapter.info), ("smolagents_emulated", SmolagentsEmulatedAdapter.info)):
        channel = info.channel(store)
        assert channel is not None and channel.kind == "unsupported"
        assert done.declined[name] == f"{name} has no {store} store: {channel.mechanism}"
        assert "smolagents 1.26.0 cannot persist a run" in channel.mechanism
