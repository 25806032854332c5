"""The adapters' shared scaffolding (arena/adapter_kit.py): the model client every adapter on the official `openai`
client gets."""

from __future__ import annotations

import asyncio

from arena.adapter_kit import LOOPBACK_CONNECT_S, openai_client
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import EvalItem, LegContext, ModelConfig


def test_the_model_client_makes_one_attempt_on_the_items_endpoint_with_a_loopback_connect_bound(tmp_path):
    """One attempt (no SDK retries), the item's URL and key, and a connect bound a loaded machine cannot pass (the
    SDK's own, 5 s, failed an item in CI: its event loop was not scheduled in time)."""
    ctx = LegContext(item=EvalItem(id="i", input="go"), instructions="",
                     model=ModelConfig(name="scripted", base_url="http://127.0.0.1:1/items/t/v1", api_key="k"),
                     tools=LocalToolBox(ToolExecutor([], {}, TraceRecorder())), workdir=str(tmp_path))
    client = openai_client(ctx)
    try:
        assert client.max_retries == 0 and str(client.base_url) == "http://127.0.0.1:1/items/t/v1/"
        assert client.api_key == "k"
        assert client.timeout.connect == LOOPBACK_CONNECT_S == 60.0 and client.timeout.read == 600.0
    finally:
        asyncio.run(client.close())
