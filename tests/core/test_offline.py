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
