"""llama_index client: the offline switches set before the framework's first import, the tokenizer's bundled
cache, and runs that stay on loopback (adapters/llama_index/client.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

NAME = "llama_index"
ROOT = Path(__file__).resolve().parents[3]
CL100K = hashlib.sha1(b"https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken").hexdigest()


# --- offline ------------------------------------------------------------------------------------------

_OFFLINE_PROBE = """
import json, os, socket, sys
refused = []
real = socket.socket.connect
def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1", "localhost"):
        refused.append(repr(address))
        raise OSError("offline")
    return real(self, address)
socket.socket.connect = connect
real_lookup = socket.getaddrinfo
def getaddrinfo(host, *a, **k):
    if host not in (None, "127.0.0.1", "::1", "localhost"):
        refused.append("lookup " + str(host))
        raise socket.gaierror("offline")
    return real_lookup(host, *a, **k)
socket.getaddrinfo = getaddrinfo
for key in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "LITELLM_MODE", "OTEL_SDK_DISABLED",
            "TIKTOKEN_CACHE_DIR"):
    os.environ.pop(key, None)
from arena_builtins.adapters import llama_index as adapter
before = "litellm" in sys.modules or "llama_index.core" in sys.modules
adapter.client.import_framework()
import litellm
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.llms import ChatMessage
# the chat memory counts tokens with llama-index's global tokenizer (tiktoken): it must load offline
memory = ChatMemoryBuffer.from_defaults(chat_history=[ChatMessage(role="user", content="hello there")])
memory.get()
import llama_index.core
from llama_index.core.utils import get_tokenizer
tokens = len(get_tokenizer()("hello there"))
print(json.dumps({
    "tokens": tokens,
    "bundled_tiktoken_cache": os.path.join(os.path.dirname(llama_index.core.__file__), "_static", "tiktoken_cache"),
    "imported_before": before,
    "env": {k: os.environ.get(k) for k in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "LITELLM_MODE",
                                          "OTEL_SDK_DISABLED")},
    "tiktoken_cache": os.environ.get("TIKTOKEN_CACHE_DIR"),
    "callbacks": [len(getattr(litellm, n)) for n in ("callbacks", "success_callback", "failure_callback",
                                                     "input_callback", "service_callback",
                                                     "_async_success_callback", "_async_failure_callback")],
    "telemetry": litellm.telemetry,
    "refused": refused,
}))
"""


@pytest.fixture(scope="module")
def offline_probe() -> dict:
    """A fresh process with none of the switches set and every non-loopback connection refused: import
    through the adapter, then count tokens as the agent's chat memory does."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", _OFFLINE_PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_offline_switches_are_on_after_the_adapter_imports_the_framework(offline_probe):
    assert offline_probe["imported_before"] is False  # importing the adapter's module imports no framework
    assert offline_probe["env"] == {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
                                    "LITELLM_MODE": "PRODUCTION", "OTEL_SDK_DISABLED": "true"}
    assert offline_probe["callbacks"] == [0] * 7  # no LiteLLM logging/observability callbacks
    assert offline_probe["telemetry"] is False


def test_the_tokenizer_loads_from_a_bundled_cache_without_any_connection(offline_probe):
    """The chat memory's tokenizer (tiktoken cl100k_base) loads from a bundled cache: TIKTOKEN_CACHE_DIR when
    set (LiteLLM points it at its own bundled tokenizers once its encoding module is imported), else the one
    llama-index-core ships and points to while it loads. The file must be there, or tiktoken would download it."""
    cache = offline_probe["tiktoken_cache"] or offline_probe["bundled_tiktoken_cache"]
    assert os.path.isfile(os.path.join(cache, CL100K)), cache
    assert offline_probe["tokens"] > 0  # the memory counted tokens, and nothing left loopback meanwhile
    assert offline_probe["refused"] == []


def test_the_runs_stay_on_loopback(cell):
    assert cell(NAME).refused == []
    assert cell(NAME, "approval_gate", "reckless").refused == []
