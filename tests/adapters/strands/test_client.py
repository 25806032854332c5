"""strands client: the network switches set before strands' first import, and the Agent's model, an OpenAIModel on
the harness endpoint (adapters/strands/client.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("strands")

from tests.adapters.strands.conftest import _cls, _ctx  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


# --- offline ----------------------------------------------------------------------------------------

_SWITCHES = """
import json, os, sys
for var in ("AWS_EC2_METADATA_DISABLED", "OTEL_SDK_DISABLED"):
    os.environ.pop(var, None)
from arena_builtins.adapters import strands as adapter
before = "strands" in sys.modules
adapter.client.import_strands()
from opentelemetry import trace
from arena.types import ModelConfig
provider = type(trace.get_tracer_provider()).__module__ + "." + type(trace.get_tracer_provider()).__name__
print(json.dumps({"before": before, "ec2": os.environ.get("AWS_EC2_METADATA_DISABLED"),
                  "otel": os.environ.get("OTEL_SDK_DISABLED"), "provider": provider,
                  "boto": [m for m in ("boto3", "botocore") if m in sys.modules]}))
"""


def test_network_switches_are_off_after_the_adapter_imports_strands():
    """In a fresh process with neither switch set: importing the adapter's module imports no strands; its
    `client.import_strands()` turns off the EC2 metadata lookup and the OpenTelemetry SDK before strands loads, and
    strands' tracer is left on OpenTelemetry's no-op (proxy) provider: nothing is exported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("AWS_EC2_METADATA_DISABLED", None)
    env.pop("OTEL_SDK_DISABLED", None)
    proc = subprocess.run([sys.executable, "-c", _SWITCHES], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["before"] is False
    assert out["ec2"] == "true"
    assert out["otel"] == "true"
    assert "sdk" not in out["provider"], out["provider"]  # no SDK tracer provider: no exporter at all


def test_the_agent_uses_the_openai_model_on_the_harness_endpoint_not_bedrock(server, tmp_path):
    """`model=` is always passed: an Agent without it builds a BedrockModel (boto3, EC2 metadata); no printing."""
    _, _, ctx = _ctx(server, "human_in_the_loop", "hitl-01", tmp_path)
    adapter = _cls()()
    agent = adapter._agent(ctx, "s-test", str(tmp_path / "strands"))
    from strands.models.openai import OpenAIModel

    assert isinstance(agent.model, OpenAIModel)
    assert str(adapter._client.base_url).rstrip("/") == ctx.model.base_url.rstrip("/")
    assert adapter._client.max_retries == 0
    from strands.handlers.callback_handler import null_callback_handler

    assert agent.callback_handler is null_callback_handler  # callback_handler=None: nothing printed
    asyncio.run(adapter.aclose())
