"""Microsoft Agent Framework client: agent_framework's telemetry off (adapters/microsoft_af/client.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("agent_framework")
pytest.importorskip("agent_framework_openai")


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("microsoft_af").wire


def test_instrumentation_is_off(scripted):
    from agent_framework.observability import OBSERVABILITY_SETTINGS

    assert not OBSERVABILITY_SETTINGS.ENABLED
    assert not OBSERVABILITY_SETTINGS.enable_sensitive_data
