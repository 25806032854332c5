"""ADK's model client: the pydantic models the fork server completes are this release's, and nothing leaves the
machine (LiteLLM offline, no callbacks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena_builtins.adapters.google_adk import GoogleADKAdapter  # noqa: E402
from tests.adapters.google_adk.conftest import ROOT  # noqa: E402


def test_the_models_its_fork_server_completes_are_pydantic_models_of_the_installed_release():
    """Each name in `complete` (what a forked worker would build at its first call) names a model of this release:
    a renamed one would make the list silently useless (the fork server skips what it cannot find)."""
    import importlib

    from pydantic import BaseModel

    for name in GoogleADKAdapter.complete:
        module, _, attr = name.rpartition(".")
        model = getattr(importlib.import_module(module), attr)
        assert issubclass(model, BaseModel), name


# --- offline ------------------------------------------------------------------------------------------

_OFFLINE_RUN = """
import json, os, socket, sys

attempts = []
LOCAL = {"127.0.0.1", "localhost", "::1"}
real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

def connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in LOCAL:
        attempts.append(("connect", str(address)))
        raise OSError("network disabled in this test")
    return real_connect(self, address)

def getaddrinfo(host, *args, **kwargs):
    if host not in LOCAL and host is not None:
        attempts.append(("getaddrinfo", str(host)))
        raise socket.gaierror("network disabled in this test")
    return real_getaddrinfo(host, *args, **kwargs)

socket.socket.connect = connect
socket.getaddrinfo = getaddrinfo

from arena import catalog
from arena.catalog import builtin_adapters
from arena.runner import run_items
from arena.server import HarnessServer

spec = catalog.load_arena("human_in_the_loop")
items = [spec.item("hitl-01"), spec.item("hitl-02")]
out = {}
with HarnessServer() as srv:
    for name in ("google_adk", "google_adk_confirm"):
        out[name] = [r.status for r in run_items(builtin_adapters()[name].load(), spec, items, server=srv, model="scripted", timeout_s=120)]
env = {k: os.environ.get(k) for k in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "OTEL_SDK_DISABLED")}
import litellm
print(json.dumps({"results": out, "attempts": attempts, "env": env, "litellm_callbacks": len(litellm.callbacks)}))
"""


def test_nothing_touches_the_network():
    """In a fresh process with every non-loopback connect and DNS lookup refused and recorded, and
    without the offline variables that tests/conftest.py sets: both adapters pass, nothing tried to
    leave the machine, and the adapter itself set LiteLLM's offline switches. (Control, checked by
    hand: with LITELLM_LOCAL_MODEL_COST_MAP=False the same script records LiteLLM's model-cost-map
    fetch from raw.githubusercontent.com; the items still pass on LiteLLM's local fallback, which is
    why this asserts on the attempts and not on the results alone.)"""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "OTEL_SDK_DISABLED")
    }
    proc = subprocess.run(
        [sys.executable, "-c", _OFFLINE_RUN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**env, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["results"] == {"google_adk": ["passed", "passed"], "google_adk_confirm": ["passed", "passed"]}
    assert out["attempts"] == []
    assert out["env"] == {
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_OFFLINE_MODE": "true",
        "OTEL_SDK_DISABLED": "true",
    }
    assert out["litellm_callbacks"] == 0
