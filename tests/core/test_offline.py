from __future__ import annotations

import socket

import pytest


def test_the_suite_refuses_non_loopback_connections(no_network):
    before = list(no_network)
    with pytest.raises(OSError, match="offline"):
        socket.create_connection(("192.0.2.1", 443), timeout=1)
    with pytest.raises(OSError, match="offline"):
        socket.getaddrinfo("example.invalid", 443)
    # these attempts were the test's own: take them back so the session's guard stays meaningful
    del no_network[len(before):]


def test_loopback_is_allowed(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass


def test_a_proxy_in_the_environment_never_takes_the_loopback_model_requests(monkeypatch, tmp_path):
    """An adapter's client built on `arena.http.async_client()` talks to the harness's loopback server directly,
    whatever proxy the environment names (a proxy on the discard port would fail every request)."""
    import arena

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    runs = arena.evaluate("human_in_the_loop", ["vanilla"], items=["hitl-01"], out=tmp_path / "runs")
    assert [r.status for r in runs[0].results] == ["passed"], runs[0].results[0].error
