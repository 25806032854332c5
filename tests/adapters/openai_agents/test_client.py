"""The SDK's client: tracing off globally and per run, so nothing is exported."""

from __future__ import annotations

import pytest

pytest.importorskip("agents")


def test_tracing_exports_nothing(scripted, eager):
    from agents.tracing import processors

    proc = processors._global_processor
    # The default exporter's worker thread starts on the first queued trace/span; it never did.
    assert proc is None or proc._worker_thread is None
