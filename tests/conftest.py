from __future__ import annotations

import os

import pytest

import arenas
from adapters import REGISTRY
from arena.results import ItemResult
from arena.runner import run_items
from arena.server import HarnessServer
from arena.types import ModelConfig

# No test may reach the internet: every framework's telemetry is off before anything imports it.
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def server():
    with HarnessServer() as srv:
        yield srv


@pytest.fixture(scope="session")
def run_adapter(server):
    """run_adapter(name_or_class, profile="scripted", arena="human_in_the_loop", items=None) -> results"""

    def run(adapter, profile: str = "scripted", arena: str = "human_in_the_loop", items=None, timeout_s: float = 60.0) -> list[ItemResult]:
        spec = arenas.load(arena)
        if isinstance(adapter, str):
            entry = REGISTRY[adapter]
            if not entry.available:
                pytest.skip(f"{entry.framework} is not installed")
            adapter = entry.load()
        chosen = [i for i in spec.items if items is None or i.id in items]
        model = ModelConfig(name=profile, base_url=server.base_url, api_key="arena-local")
        return run_items(adapter, spec, chosen, model, timeout_s)

    return run


def normalised(result: ItemResult) -> list[dict]:
    return [e.normalised() for e in result.trace]
