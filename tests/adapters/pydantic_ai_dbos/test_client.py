"""pydantic_ai_dbos: DBOS imported through the adapter (`client.py`) with its offline switches set: no cloud mode,
no OpenTelemetry export, no Conductor, no socket.

What every adapter shares is test_conformance.py's; what the agent does (its deferred tools) is pydantic_ai's
and tested there (tests/adapters/pydantic_ai/). This package holds what DBOS adds or changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

NAME = "pydantic_ai_dbos"
ROOT = Path(__file__).resolve().parents[3]


# --- offline ------------------------------------------------------------------------------------------------

_OFFLINE = """
import json, socket, sys
sys.path.insert(0, sys.argv[2])
refused = []
def audit(event, args):
    if event == "socket.connect" and args[0].family in (socket.AF_INET, socket.AF_INET6):
        refused.append(repr(args[1]))
    elif event == "socket.getaddrinfo" and args[0] not in (None, "localhost", "127.0.0.1", "::1"):
        refused.append(repr(args[0]))
sys.addaudithook(audit)
import os
from arena_builtins.adapters.pydantic_ai_dbos import client as m
before = "dbos" in sys.modules
m.load_dbos()
from pydantic_ai.durable_exec.dbos import DBOSDurability  # what the adapter imports to build its agent
from dbos import DBOS
from dbos._utils import GlobalParams
from dbos._tracer import dbos_tracer
from dbos._logger import dbos_logger
import dbos._dbos as d
DBOS(config=m.dbos_config(sys.argv[1]))
DBOS.launch()
inst = d._dbos_global_instance
out = {
    "imported_before": before,
    "env": {k: os.environ.get(k) for k in ("DBOS__CLOUD", "OTEL_SDK_DISABLED")},
    "dbos_cloud": GlobalParams.dbos_cloud,
    "disable_otlp": dbos_tracer.disable_otlp,
    "conductor": [inst.conductor_key, inst.conductor_url, inst.conductor_websocket],
    "exporters": sorted(n for n in sys.modules if n.startswith("opentelemetry.exporter")),
    "log_handlers": sorted(type(h).__name__ for h in dbos_logger.handlers),
}
DBOS.destroy()
out["refused"] = refused
print(json.dumps(out, default=repr))
"""


def test_offline_switches_are_off_after_the_adapter_imports_dbos(tmp_path):
    """In a fresh process whose environment sets none of them: importing dbos through the adapter sets its cloud
    mode and OpenTelemetry off, the config it launches with exports nothing (no OTLP exporter is even imported),
    connects to no Conductor, and nothing in import, launch and destroy opens a socket or looks a name up."""
    env = {k: v for k, v in os.environ.items() if k not in ("DBOS__CLOUD", "OTEL_SDK_DISABLED")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", _OFFLINE, str(tmp_path / "dbos.sqlite"), str(ROOT)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["imported_before"] is False  # the adapter's module imports no dbos by itself
    assert out["env"] == {"DBOS__CLOUD": "false", "OTEL_SDK_DISABLED": "true"}
    assert out["dbos_cloud"] is False
    assert out["disable_otlp"] is True
    assert out["conductor"] == [None, None, None]
    assert out["exporters"] == []
    assert out["log_handlers"] == ["StreamHandler"]  # the console only, no OTLP log handler
    assert out["refused"] == []
    assert (tmp_path / "dbos.sqlite").exists()  # the system database is the local file, nothing else
