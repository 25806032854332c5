"""Recovery way `continue`: agno's acontinue_run by run id alone, no requirements (crash_recovery on the stores is
test_store.py's)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("agno")

from tests.adapters.agno.conftest import GATE, Recorder, Stop, adapter_module, leg_context, paused_state  # noqa: E402


def test_continue_run_hands_agno_no_requirements(tmp_path):
    """Recovery way `continue`: acontinue_run by run id alone; agno continues from what it persisted."""
    adapter = adapter_module().AgnoAdapter()
    adapter._agent = Recorder()
    with pytest.raises(Stop):
        asyncio.run(adapter.continue_run(paused_state(), leg_context(GATE, GATE.items[0].id, str(tmp_path))))
    assert adapter._agent.calls == [{"run_id": "r", "session_id": "s"}]
